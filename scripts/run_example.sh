#!/usr/bin/env bash
# The main job: install everything, profile an unmodified PyTorch training run
# on 2 ranks (torchrun, gloo, CPU, spawned DataLoader workers) with smprof run,
# which prints where the traces are and their summary, then write the HTML
# dashboard and the timeline exports.
#   bash scripts/run_example.sh [--steps N]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

job="example-$(date -u +%Y%m%dT%H%M%SZ)"
out="smprof-out"
echo "== training on 2 ranks under smprof run (job $job): examples/plain_train.py has no profiler code"
# smprof run prints where the traces are and their summary (steps, input-pipeline wait, workers).
OMP_NUM_THREADS=1 smprof run -o "$out/$job" -- \
  python3 -m torch.distributed.run --standalone --nproc-per-node 2 examples/plain_train.py "$@"
echo
echo "== dashboard and timeline"
smprof report "$out/$job" -o "$out/$job/report.html"
smprof export "$out/$job" --format chrome -o "$out/$job/timeline.json.gz"
smprof export "$out/$job" --format perfetto -o "$out/$job/timeline.perfetto-trace"
echo
echo "open $out/$job/report.html in a browser (it works offline); load either timeline file in"
echo "ui.perfetto.dev or chrome://tracing"
