#!/usr/bin/env bash
# The main job: install everything, run a real profiled PyTorch training run
# on 2 ranks (torchrun, gloo, CPU), then print where the traces are, their
# summary, and the paths of the HTML dashboard and the timeline exports.
#   bash scripts/run_example.sh [--steps N]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

job="example-$(date -u +%Y%m%dT%H%M%SZ)"
out="smprof-out"
echo "== training on 2 ranks (job $job)"
SMP_JOB_NAME="$job" OMP_NUM_THREADS=1 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
  examples/pytorch_train.py --out "$out" "$@"

echo
echo "== traces written to: $out/$job"
find "$out/$job" -name '*.smprof' | sort | sed 's/^/   /'
echo
echo "== summary (smprof summary $out/$job)"
smprof summary "$out/$job"
echo
echo "== dashboard and timeline"
smprof report "$out/$job" -o "$out/$job/report.html"
smprof export "$out/$job" --format chrome -o "$out/$job/timeline.json.gz"
smprof export "$out/$job" --format perfetto -o "$out/$job/timeline.perfetto-trace"
echo
echo "open $out/$job/report.html in a browser (it works offline); load either timeline file in"
echo "ui.perfetto.dev or chrome://tracing"
