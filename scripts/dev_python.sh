#!/usr/bin/env bash
# Builds the C++ library, its tests, the _smppy extension and the test-only
# _smprof_testing in BUILD_DIR and stages an importable smppy package there,
# without installing anything, so several checkouts or build trees can be tried
# side by side:
#   eval "$(bash scripts/dev_python.sh build-dev)"   # sets PYTHONPATH and SMPROF_TESTING_MODULE_DIR
#   python3 -m pytest tests/python/unit/test_cli.py
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: dev_python.sh BUILD_DIR}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMPROF_BUILD_PYTHON=ON \
  -DSMPROF_BUILD_TESTING_MODULE=ON -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null
ninja -C "$build" -j 2 >&2
stage=$(realpath "$build")/python
rm -rf "$stage"
mkdir -p "$stage/smppy"
for f in python/smppy/*; do ln -s "$(realpath "$f")" "$stage/smppy/"; done
ln -s "$(realpath python/smprof)" "$stage/smprof"
ln -s "$(realpath "$build")"/_smppy*.so "$stage/smppy/"
ln -s "$(realpath "$build")/libsmprof.so" "$stage/smppy/libsmprof.so"  # smprof run: LD_PRELOAD
echo "export PYTHONPATH=$stage\${PYTHONPATH:+:\$PYTHONPATH}"
# bench/synthetic_trace.py (tests, benchmarks) imports the test-only extension from here.
echo "export SMPROF_TESTING_MODULE_DIR=$(realpath "$build")/testing"
