#!/usr/bin/env bash
# Builds, on this CPU machine, what scripts/gpu_check.sh --bundle needs on a
# GPU machine that has only a driver, Python and PyTorch (no compiler, no
# package registry):
#   bash scripts/gpu_bundle.sh OUT
#
#   OUT/python/smppy, OUT/python/smprof   the package: libsmprof, one _smppy
#       per Python (3.12, 3.11, 3.13: SMPROF_BUNDLE_PYTHONS), and the shared
#       libraries a bare machine may lack (protobuf-lite, zstd, libpfm), all
#       with RPATH $ORIGIN
#   OUT/bin/cuda_app    examples/cuda as a fat binary for sm_80 and sm_90
#       (RPATH to the package); it loads libcudart and cuBLAS from PyTorch's
#       CUDA wheels there
#   OUT/scripts/        gpu_check.sh, gpu_check_trace.py, gpu_probe.py (issue 33's
#       scenarios) and gpu_device_run.sh (the probe and the check in one
#       device call: bash OUT/scripts/gpu_device_run.sh)
#   OUT/BUNDLE.txt      what was built, from which commit
#
# Needs the CUDA toolkit (nvcc, CUPTI headers) and the Pythons' headers: each
# Python is found as pythonX.Y on PATH or under pyenv's versions. cuBLAS,
# when the toolkit lacks it, comes from the nvidia-cublas wheel of the
# toolkit's CUDA version (pip download, about 420 MiB, kept in the build
# directory; only its headers and libraries are unpacked, for linking: the
# GPU machine has its own in PyTorch's wheels), or from SMPROF_CUBLAS_ROOT.
# Build trees go to SMPROF_BUNDLE_BUILD (default build-bundle/); reruns are
# incremental.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(realpath -m "${1:?usage: gpu_bundle.sh OUT}")"
work="$(realpath -m "${SMPROF_BUNDLE_BUILD:-$root/build-bundle}")"
pythons=(${SMPROF_BUNDLE_PYTHONS:-3.12 3.11 3.13})
jobs="${SMPROF_BUNDLE_JOBS:-2}"
step() { echo "gpu_bundle: $*" >&2; }

find_python() {  # pythonX.Y that runs, from PATH or pyenv
  local version="$1" candidate
  for candidate in "python$version" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version"; do
    if "$candidate" -c "import sys" > /dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

pybind11_dir="$(python3 -m pybind11 --cmakedir)"
rm -rf "$out"
mkdir -p "$out/python/smppy" "$out/bin" "$out/scripts" "$work"
first_build=""
built=()
for version in "${pythons[@]}"; do
  python="$(find_python "$version")" || { step "no Python $version here: no _smppy for it"; continue; }
  build="$work/py$version"
  step "building libsmprof and _smppy for $python in $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSMPROF_BUILD_PYTHON=ON \
    -DSMPROF_BUILD_TESTS=OFF -DSMPROF_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE="$python" \
    -Dpybind11_DIR="$pybind11_dir" > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
  grep -q "CUDA collector built" "$build.configure.log" ||
    { cat "$build.configure.log" >&2; step "the CUPTI headers were not found"; exit 1; }
  ninja -C "$build" -j "$jobs" smprof _smppy > "$build.build.log" 2>&1 || { tail -40 "$build.build.log" >&2; exit 1; }
  cp "$build"/_smppy*.so "$out/python/smppy/"
  built+=("$version")
  [ -n "$first_build" ] || first_build="$build"
done
[ -n "$first_build" ] || { step "no Python found for ${pythons[*]}"; exit 1; }

step "staging the package"
cp "$first_build/libsmprof.so" "$out/python/smppy/"
# ... and under its soname, which bin/cuda_app needs (NEEDED libsmprof.so.0).
soname="$(readelf -d "$first_build/libsmprof.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ -z "$soname" ] || [ "$soname" = libsmprof.so ] || cp "$first_build/libsmprof.so" "$out/python/smppy/$soname"
# The whole package tree: its subpackages (analysis/, cli/, ...) and data files too.
bash "$root/scripts/gpu_bundle_stage_python.sh" "$out/python"
# What the libraries need beyond glibc, the C++ runtime and zlib, which every
# machine with Python has.
for library in $(ldd "$out"/python/smppy/*.so | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$library")" in
    libprotobuf-lite.so.* | libzstd.so.* | libpfm.so.*) cp -L "$library" "$out/python/smppy/$(basename "$library")" ;;
  esac
done
for library in "$out"/python/smppy/*.so*; do
  strip --strip-unneeded "$library"
  patchelf --set-rpath '$ORIGIN' "$library"
done

cuda_version="$(nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')"
if [ -z "${SMPROF_CUBLAS_ROOT:-}" ] && ! ls "$(dirname "$(command -v nvcc)")"/../lib*/libcublas.so* > /dev/null 2>&1; then
  case "$cuda_version" in
    13.*) wheel="nvidia-cublas==$cuda_version.*" layout=cu13 ;;
    12.*) wheel="nvidia-cublas-cu12==$cuda_version.*" layout=cublas ;;
    *) wheel="" ;;
  esac
  if [ -n "$wheel" ]; then
    step "no cuBLAS in the toolkit: unpacking $wheel's headers and libraries into $work/cublas"
    if [ ! -d "$work/cublas/nvidia/$layout/lib" ]; then
      rm -rf "$work/cublas" && mkdir -p "$work/cublas"
      python3 -m pip download --quiet --no-deps "$wheel" -d "$work/cublas" >&2
      python3 - "$work"/cublas/*.whl "$work/cublas" << 'EOF'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if "/include/" in n or "/lib/libcublas" in n])
EOF
    fi
    export SMPROF_CUBLAS_ROOT="$work/cublas/nvidia/$layout"
  fi
fi
step "building examples/cuda for sm_80 and sm_90 (CUDA $cuda_version)"
app="$(bash "$root/examples/cuda/build.sh" "$first_build" "$work/cuda" "80;90")"
cp "$app" "$out/bin/cuda_app"
patchelf --set-rpath '$ORIGIN/../python/smppy' "$out/bin/cuda_app"

cp "$root/scripts/gpu_check.sh" "$root/scripts/gpu_check_trace.py" "$root/scripts/gpu_probe.py" \
  "$root/scripts/gpu_device_run.sh" "$out/scripts/"
{
  echo "commit: $(git -C "$root" rev-parse HEAD 2> /dev/null || echo unknown)"
  echo "built: $(date -u +%FT%TZ) on $(uname -m)"
  echo "pythons: ${built[*]}"
  echo "cuda_app: CUDA $cuda_version, sm_80 sm_90, $(grep -q "cuBLAS not found" "$work/cuda/configure.log" && echo "no cuBLAS" || echo cuBLAS)"
} > "$out/BUNDLE.txt"
step "bundle in $out ($(du -sh "$out" | cut -f1)): $(tr '\n' ';' < "$out/BUNDLE.txt")"
echo "$out"
