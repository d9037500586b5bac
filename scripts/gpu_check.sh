#!/usr/bin/env bash
# GPU collection, checked end to end on a machine with an NVIDIA GPU:
#   bash scripts/gpu_check.sh --bundle BUNDLE   a bundle from scripts/gpu_bundle.sh:
#                                               needs only a driver, Python and torch
#   bash scripts/gpu_check.sh [WORK_DIR]        builds here first (cmake, ninja, nvcc;
#                                               default WORK_DIR build-gpu-check)
#
# 1. runs examples/cuda: known kernels on two streams, copies, memsets, syncs,
#    cuBLAS GEMMs, under annotations, with its own ground truth (counts,
#    cudaEvent timings) as JSON;
# 2. runs PyTorch on the GPU under smppy (scripts/gpu_check_trace.py train,
#    its SCENARIOS, each in a fresh process): sessions after GPU idle, CUDA
#    graphs, a stop with kernels queued, a training loop started after .cuda(),
#    no cuInit by smprof, torch.profiler in three orders, a stop during another
#    thread's graph capture, and a stop bounded by CudaSyncTimeoutMs;
# 3. checks the traces against the truth and prints a PASS/FAIL table;
#    building here, also measures the real CUPTI push/pop cost.
# Artifacts (traces, truth, logs) go to $OUT (default: a new temp dir).
# PYTHON names the interpreter with torch (default: python3).
# Exit status: 0 all passed, 1 a check failed, 2 no GPU here (nothing checked).
# With a bundle it takes about 20 s (an H200, 2026-12-04; docs/GPU.md), and
# at most about 7 minutes: each run has a time limit (150 s for examples/cuda,
# 200 s for PyTorch, 60 s for the check). Building first adds 2-4 minutes.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
step() { echo "gpu_check: $* ($(date -u +%T))"; }
fail() { echo "gpu_check: FAIL: $*"; exit 1; }

bundle=""
if [ "${1:-}" = "--bundle" ]; then
  bundle="$(realpath -m "${2:?usage: gpu_check.sh --bundle BUNDLE}")"
  [ -f "$bundle/BUNDLE.txt" ] || fail "$bundle is not a bundle from scripts/gpu_bundle.sh (no BUNDLE.txt)"
fi
if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "gpu_check: no GPU here (nvidia-smi is missing or lists no GPU): nothing checked"
  exit 2
fi
nvidia-smi -L
out="${OUT:-$(mktemp -d -t smprof-gpu-check-XXXXXX)}"
mkdir -p "$out"
out="$(realpath "$out")"
python="${PYTHON:-python3}"
step "artifacts in $out; Python $python"
"$python" -c "import torch" > /dev/null 2>&1 || fail "$python cannot import torch: set PYTHON to the Python that has it"

if [ -n "$bundle" ]; then
  cat "$bundle/BUNDLE.txt"
  checker="$bundle/scripts/gpu_check_trace.py"
  export PYTHONPATH="$bundle/python${PYTHONPATH:+:$PYTHONPATH}"
  tag="$("$python" -c 'import sys; print(sys.implementation.cache_tag)')" || fail "$python does not run"
  ls "$bundle"/python/smppy/_smppy.*"${tag#cpython-}"*.so > /dev/null 2>&1 ||
    fail "the bundle has no _smppy for $python ($tag): $(ls "$bundle"/python/smppy/ | grep _smppy)"
  app="$bundle/bin/cuda_app"
  # cuda_app takes libcudart and cuBLAS from PyTorch's CUDA wheels, if it has them.
  wheel_libs="$("$python" -c "import glob, os, nvidia
print(':'.join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + '/*/lib/libcu*.so.*')})))" \
    2> /dev/null)"
  app_env=(env "LD_LIBRARY_PATH=${wheel_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
else
  root="$(cd "$here/.." && pwd)"
  cd "$root"
  work="$(realpath -m "${1:-build-gpu-check}")"
  for tool in cmake ninja protoc nvcc; do
    command -v "$tool" > /dev/null 2>&1 || {
      step "$tool missing: running scripts/install_deps.sh"
      bash scripts/install_deps.sh || fail "dependencies could not be installed"
      break
    }
  done
  step "building libsmprof and _smppy in $work/smprof"
  mkdir -p "$work"
  build="$work/smprof"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMPROF_BUILD_PYTHON=ON \
    -DSMPROF_BUILD_TESTS=OFF -Dpybind11_DIR="$("$python" -m pybind11 --cmakedir)" > "$out/configure.log" 2>&1 ||
    { cat "$out/configure.log"; fail "configure"; }
  grep -q "CUDA collector built" "$out/configure.log" || fail "the CUPTI headers were not found: the CUDA collector is not built"
  ninja -C "$build" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; fail "build"; }
  stage="$build/python"
  rm -rf "$stage" && mkdir -p "$stage/smppy"
  for f in python/smppy/*; do ln -s "$root/$f" "$stage/smppy/"; done
  ln -s "$root/python/smprof" "$stage/smprof"
  ln -s "$build"/_smppy*.so "$build/libsmprof.so" "$stage/smppy/"
  export PYTHONPATH="$stage${PYTHONPATH:+:$PYTHONPATH}"
  checker="$root/scripts/gpu_check_trace.py"
  step "building examples/cuda"
  app="$(bash examples/cuda/build.sh "$build" "$work/cuda" native)" || fail "examples/cuda"
  app_env=()
fi

traces="$out/traces"
rm -rf "$traces" && mkdir -p "$traces"
step "running examples/cuda"
"${app_env[@]}" timeout 150 "$app" "$traces/cuda_app_%p.smprof" > "$out/truth.json" 2> "$out/cuda_app.err"
app_status=$?
cat "$out/cuda_app.err"
truth="$out/truth.json"
if [ $app_status -ne 0 ]; then
  # Go on to the PyTorch part: the table gets one failing cuda_app row instead.
  echo "gpu_check: FAIL: cuda_app exited with $app_status; going on to the PyTorch part"
  truth="cuda_app exited with $app_status"
fi

step "running PyTorch on the GPU under smppy"
# Each scenario in its own process, all within 190 s; a run cut short leaves FAIL rows, not no table.
SMP_ENABLE_CUDA=1 timeout -k 5 200 "$python" "$checker" train "$traces" --budget 190 > "$out/torch.out" 2>&1 ||
  echo "gpu_check: FAIL: the PyTorch run exited with $?; checking what it left"
cat "$out/torch.out"

step "checking the traces"
timeout -k 5 60 "$python" "$checker" check "$truth" --torch "$traces" | tee "$out/table.txt"
status="${PIPESTATUS[0]}"

if [ -z "$bundle" ] && [ -x "$build/bench/correlation_benchmark" ]; then
  step "annotation push/pop with the real CUPTI"
  "$build/bench/correlation_benchmark" --quick
fi
exit "$status"
