#!/usr/bin/env bash
# The main job: install everything, run a real profiled PyTorch training run
# on 2 ranks (torchrun, gloo, CPU), then print where the traces are and a
# short summary of them.
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
echo "== summary (smprof info $out/$job)"
smprof info "$out/$job"
