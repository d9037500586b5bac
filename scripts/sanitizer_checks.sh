#!/usr/bin/env bash
# The GoogleTest suite under AddressSanitizer + UndefinedBehaviorSanitizer, then
# the trace reader fuzzer (tests/fuzz) for a bounded time, both from one clang
# build (docs/TESTING.md records what they ran and found).
#   bash scripts/sanitizer_checks.sh [BUILD_DIR] [FUZZ_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/sanitize}
fuzz_seconds=${2:-60}
flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DSMPROF_BUILD_BENCHMARKS=OFF -DSMPROF_INSTALL=OFF -DSMPROF_BUILD_FUZZERS=ON >/dev/null
ninja -C "$build" -j 2

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizers/lsan.supp
echo "== GoogleTest under ASan+UBSan"
# Left out, each for a reason of the sanitizer runtime, not of smprof (docs/TESTING.md):
# - ForkDuringSession: clang 14's ASan allocator takes no lock around fork, so a
#   child forked while another thread allocates can hang in its first malloc;
# - host_libraries_consumer: libsmprof's static libstdc++ allocates std::string
#   with its own operator new (malloc underneath), which ASan's operator delete
#   in the program reports as a malloc/delete mismatch.
# Both run in the regular build of scripts/test.sh. The decoder tests that load
# the real libcupti (.../Libcupti) run apart, with ASan and UBSan but without
# LeakSanitizer, whose tracer thread crashes at exit in a process that loaded
# libcupti, by stack layout alone (the length of the working directory's path
# turns it on or off).
ctest --test-dir "$build" --output-on-failure -j 2 -E '^(ForkDuringSession\.|host_libraries_consumer$)|/Libcupti$'
ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
  ctest --test-dir "$build" --output-on-failure -j 2 -R '/Libcupti$'

echo "== trace reader fuzzer, ${fuzz_seconds} s"
seeds=$build/fuzz-seeds
corpus=$build/fuzz-corpus
rm -rf "$seeds"  # made anew: a second run in the same tree must not find the old seeds
python3 tests/fuzz/make_seed_corpus.py "$seeds"
mkdir -p "$corpus"
"$build/tests/fuzz/trace_reader_fuzzer" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$build/" "$corpus" "$seeds"
