#!/usr/bin/env bash
# The whole test suite: style checks, the C++ build with its GoogleTest suite,
# the find_package consumer test, then the Python tests (real PyTorch runs,
# torchrun, the CLI, benchmark smoke runs).
#   bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh --tests
# The suite compiles the same sources in several trees: ccache shares the objects.
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD"

echo "== style: clang-format and ruff; include layers"
git ls-files -z -- '*.cc' '*.h' '*.c' | xargs -0 -r clang-format --dry-run --Werror
ruff check python tests bench examples
ruff format --check python tests bench examples
python3 scripts/check_include_layers.py

echo "== C++: build and GoogleTest"
build=build/test
# With _smprof_testing, the test-only extension the Python tests and benchmarks write synthetic
# traces with (src/testing/), for the python3 that runs them; the wheel never carries it.
python=$(python3 -c 'import sys; print(sys.executable)')
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMPROF_BUILD_TESTING_MODULE=ON \
  -DPython_EXECUTABLE="$python" -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null
ninja -C "$build"
# bench/synthetic_trace.py imports it from here (the fuzzer's seed corpus, the benchmarks, pytest).
export SMPROF_TESTING_MODULE_DIR="$PWD/$build/testing"
ctest --test-dir "$build" --output-on-failure -j 2

echo "== C++: benchmark smoke run (numbers are not checked)"
"$build/bench/annotate_benchmark" --quick >/dev/null
"$build/bench/cpu_sampler_benchmark" --quick >/dev/null
"$build/bench/reader_benchmark" --quick >/dev/null
"$build/bench/context_switch_benchmark" --quick >/dev/null 2>&1
"$build/bench/perf_read_cost" --quick >/dev/null
"$build/bench/perfetto_encoding_benchmark" --quick >/dev/null  # fails if the two encodings' packets differ
"$build/bench/partial_codec_benchmark" --quick >/dev/null      # fails if a codec does not give the state back
if [ -x "$build/bench/gpu_records_benchmark" ]; then  # built where the CUPTI headers are
  "$build/bench/gpu_records_benchmark" --quick >/dev/null
fi

echo "== C++: GoogleTest under ASan+UBSan, then the trace reader fuzzer for 60 s (docs/TESTING.md)"
bash scripts/sanitizer_checks.sh build/sanitize 60

echo "== C++: find_package(smprof) consumer"
bash tests/cmake_consumer/run.sh "$build"

if command -v nvcc > /dev/null 2>&1; then
  echo "== CUDA example: compile only (examples/cuda; scripts/gpu_check.sh runs it on a GPU)"
  bash examples/cuda/build.sh "$build" "$build/cuda-example" 90 > /dev/null
fi

echo "== Python"
python3 bench/export_benchmark.py --quick >/dev/null
python3 bench/report_benchmark.py --quick >/dev/null
python3 bench/partial_summary_benchmark.py --quick >/dev/null  # fails if partials differ from the direct summary
python3 bench/distinct_names_benchmark.py --quick >/dev/null
python3 -m pytest tests/python -q --durations=25
