#!/usr/bin/env bash
# Checks that an installed libsmprof works for a CMake consumer:
#   1. builds the project (configuring it first if the build dir is new),
#   2. installs it into a temporary prefix with `cmake --install`,
#   3. configures and builds examples/cpp against that prefix only
#      (find_package(smprof) + smprof::smprof, via CMAKE_PREFIX_PATH),
#   4. runs the C++ and C examples and checks that their trace files exist
#      and start with the smprof magic.
#
# Usage: tests/cmake_consumer/run.sh [BUILD_DIR]   (default: $SMPROF_BUILD_DIR or ./build)
# Set SMPROF_KEEP_TMP=1 to keep the temporary directory for inspection.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-${SMPROF_BUILD_DIR:-$root/build}}"
case "$build_dir" in /*) ;; *) build_dir="$PWD/$build_dir" ;; esac

tmp="$(mktemp -d "${TMPDIR:-/tmp}/smprof-consumer-XXXXXX")"
cleanup() {
  if [ "${SMPROF_KEEP_TMP:-0}" = "1" ]; then
    echo "cmake_consumer: kept $tmp"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

fail() {
  echo "cmake_consumer: FAIL: $*" >&2
  exit 1
}
step() { echo "cmake_consumer: $*"; }

generator=()
if command -v ninja > /dev/null 2>&1; then generator=(-G Ninja); fi

# 1. Build (configure only when the directory has never been configured).
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  step "configuring $build_dir"
  cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log" >&2; fail "configuring the project failed"; }
fi
step "building $build_dir"
cmake --build "$build_dir" > "$tmp/build.log" 2>&1 || { tail -50 "$tmp/build.log" >&2; fail "building the project failed"; }

# 2. Install into a fresh prefix.
prefix="$tmp/prefix"
step "installing into $prefix"
cmake --install "$build_dir" --prefix "$prefix" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
config_file="$(find "$prefix" -name smprofConfig.cmake -print -quit)"
[ -n "$config_file" ] || fail "no smprofConfig.cmake under $prefix (is SMPROF_INSTALL off in $build_dir?)"
[ -f "$prefix/include/smprof/smprof.h" ] || fail "headers were not installed under $prefix/include/smprof"
[ -f "$prefix/include/smprof/smprof_c.h" ] || fail "smprof_c.h was not installed"

# 3. Build the examples against the installed package only.
step "building examples/cpp against the install"
cmake -S "$root/examples/cpp" -B "$tmp/example-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/example-configure.log" 2>&1 ||
  { cat "$tmp/example-configure.log" >&2; fail "configuring examples/cpp with find_package(smprof) failed"; }
cmake --build "$tmp/example-build" > "$tmp/example-build.log" 2>&1 ||
  { cat "$tmp/example-build.log" >&2; fail "building examples/cpp failed"; }

app="$tmp/example-build/app"
c_app="$tmp/example-build/c_app"
[ -x "$app" ] && [ -x "$c_app" ] || fail "example executables missing"
if command -v ldd > /dev/null 2>&1; then
  resolved="$(ldd "$app" | awk '/libsmprof/ {print $3}')"
  case "$resolved" in
    "$prefix"/*) ;;
    *) fail "app loads libsmprof from '$resolved', not from the install prefix $prefix" ;;
  esac
fi

# 4. Run them; each must leave a trace file that starts with the magic.
check_trace() {  # path, what
  [ -s "$1" ] || fail "$2: trace file '$1' is missing or empty"
  [ "$(head -c 6 "$1")" = "SMPROF" ] || fail "$2: '$1' does not start with the smprof magic"
}
run_dir="$tmp/run"
mkdir -p "$run_dir"

step "running app"
(cd "$run_dir" && env -u SMP_DISABLE "$app" "$run_dir/traces/app_%p.smprof") > "$tmp/app.out" 2>&1 ||
  { cat "$tmp/app.out" >&2; fail "app exited with an error"; }
cat "$tmp/app.out"
trace="$(sed -n 's/^trace: //p' "$tmp/app.out")"
[ -n "$trace" ] || fail "app did not print its trace path"
check_trace "$trace" "app"
grep -q "^0 annotations written" "$tmp/app.out" && fail "app wrote no annotations"

step "running app with its default RecordFile"
(cd "$run_dir" && env -u SMP_DISABLE "$app") > "$tmp/app-default.out" 2>&1 ||
  { cat "$tmp/app-default.out" >&2; fail "app (default RecordFile) exited with an error"; }
trace="$(sed -n 's/^trace: //p' "$tmp/app-default.out")"
case "$trace" in /*) ;; *) trace="$run_dir/$trace" ;; esac
check_trace "$trace" "app (default RecordFile)"

step "running c_app"
(cd "$run_dir" && env -u SMP_DISABLE "$c_app" "$run_dir/c_app.smprof") > "$tmp/c_app.out" 2>&1 ||
  { cat "$tmp/c_app.out" >&2; fail "c_app exited with an error"; }
cat "$tmp/c_app.out"
grep -q "BucketCnt" "$tmp/c_app.out" || fail "c_app's bad key error did not name the key"
check_trace "$run_dir/c_app.smprof" "c_app"

step "OK"
