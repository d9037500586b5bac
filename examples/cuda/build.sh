#!/usr/bin/env bash
# Installs libsmprof from BUILD_DIR into OUT_DIR/prefix and builds the CUDA
# example against it into OUT_DIR/build (find_package(smprof), as a user would).
#   bash examples/cuda/build.sh BUILD_DIR OUT_DIR [CUDA_ARCHITECTURES]
# CUDA_ARCHITECTURES defaults to "native" (the GPU of this machine); a
# compile-only check on a machine without a GPU passes one, e.g. 90.
# SMPROF_CUBLAS_ROOT: cuBLAS from a pip wheel (examples/cuda/CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="$(realpath "${1:?usage: build.sh BUILD_DIR OUT_DIR [CUDA_ARCHITECTURES]}")"
out="$(realpath -m "${2:?usage: build.sh BUILD_DIR OUT_DIR [CUDA_ARCHITECTURES]}")"
archs="${3:-native}"
mkdir -p "$out"
cmake --install "$build_dir" --prefix "$out/prefix" > "$out/install.log" 2>&1 ||
  { cat "$out/install.log" >&2; exit 1; }
generator=()
if command -v ninja > /dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S "$root/examples/cuda" -B "$out/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$out/prefix" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DSMPROF_CUBLAS_ROOT="${SMPROF_CUBLAS_ROOT:-}" > "$out/configure.log" 2>&1 ||
  { cat "$out/configure.log" >&2; exit 1; }
cmake --build "$out/build" > "$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
echo "$out/build/cuda_app"
