#!/usr/bin/env bash
# GPU collection, checked end to end on a machine with an NVIDIA GPU:
#   bash scripts/gpu_check.sh [WORK_DIR]      (default: build-gpu-check)
#
# 1. builds libsmprof, _smppy and the benchmarks (all cores), stages smppy;
# 2. builds examples/cuda against an install of it and runs it: known kernels
#    on two streams, copies, memsets, syncs, cuBLAS GEMMs, under annotations,
#    with its own ground truth (counts, cudaEvent timings) as JSON;
# 3. runs a short PyTorch CUDA training loop under smppy (when torch has CUDA);
# 4. checks the traces against the truth (scripts/gpu_check_trace.py) and
#    prints a PASS/FAIL table; measures the real CUPTI push/pop cost.
# Exit status: 0 all passed, 1 a check failed, 2 no GPU here (nothing checked).
# Takes about 2-4 minutes, most of it the build.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work="$(realpath -m "${1:-build-gpu-check}")"

if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "gpu_check: no GPU (nvidia-smi lists none): nothing checked"
  exit 2
fi
nvidia-smi -L
step() { echo "gpu_check: $* ($(date -u +%T))"; }

for tool in cmake ninja protoc nvcc; do
  command -v "$tool" > /dev/null 2>&1 || {
    step "$tool missing: running scripts/install_deps.sh"
    bash scripts/install_deps.sh || { echo "gpu_check: FAIL: dependencies could not be installed"; exit 1; }
    break
  }
done

step "building libsmprof and _smppy in $work/smprof"
mkdir -p "$work"
build="$work/smprof"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMPROF_BUILD_PYTHON=ON \
  -DSMPROF_BUILD_TESTS=OFF -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; echo "gpu_check: FAIL: configure"; exit 1; }
grep -q "CUDA collector built" "$work/configure.log" ||
  { echo "gpu_check: FAIL: the CUPTI headers were not found: the CUDA collector is not built"; exit 1; }
ninja -C "$build" > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; echo "gpu_check: FAIL: build"; exit 1; }
stage="$build/python"
rm -rf "$stage" && mkdir -p "$stage/smppy"
for f in python/smppy/*; do ln -s "$root/$f" "$stage/smppy/"; done
ln -s "$root/python/smprof" "$stage/smprof"
ln -s "$build"/_smppy*.so "$build/libsmprof.so" "$stage/smppy/"
export PYTHONPATH="$stage${PYTHONPATH:+:$PYTHONPATH}"

step "building examples/cuda"
app="$(bash examples/cuda/build.sh "$build" "$work/cuda" native)" || { echo "gpu_check: FAIL: examples/cuda"; exit 1; }

traces="$work/traces"
rm -rf "$traces" && mkdir -p "$traces"
step "running examples/cuda"
"$app" "$traces/cuda_app_%p.smprof" > "$work/truth.json" 2> "$work/cuda_app.err"
app_status=$?
cat "$work/cuda_app.err"
[ $app_status -eq 0 ] || { echo "gpu_check: FAIL: cuda_app exited with $app_status"; exit 1; }

torch_args=()
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" > /dev/null 2>&1; then
  step "running a PyTorch CUDA training loop under smppy"
  SMP_ENABLE_CUDA=1 timeout 120 python3 scripts/gpu_check_trace.py train "$traces/torch_%p.smprof" \
    > "$work/torch.out" 2>&1 || { cat "$work/torch.out"; echo "gpu_check: FAIL: the PyTorch loop failed"; exit 1; }
  cat "$work/torch.out"
  torch_args=(--torch "$(ls "$traces"/torch_*.smprof | head -1)")
else
  echo "gpu_check: torch with CUDA not available: the PyTorch rows are skipped"
fi

step "checking the traces"
python3 scripts/gpu_check_trace.py check "$work/truth.json" "${torch_args[@]}"
status=$?

if [ -x "$build/bench/correlation_benchmark" ]; then
  step "annotation push/pop with the real CUPTI"
  "$build/bench/correlation_benchmark" --quick
fi
exit $status
