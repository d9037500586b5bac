#!/usr/bin/env bash
# Set-up time of the main job as a new user meets it (README command 1): a fresh clone of HEAD
# into an empty virtual environment (no Python package installed, no compiler cache), the
# main job's Debian packages and their libraries downloaded and installed again, then
# `bash scripts/run_example.sh`. Prints the seconds of each phase (the "== " lines of the
# scripts) and the total against the 4-minute goal (docs/BENCHMARKS.md "Set-up time").
# Needs root (apt-get) and leaves the system's packages as they were.
#   bash bench/setup_time.sh [WORK_DIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(realpath -m "${1:-$(mktemp -d "${TMPDIR:-/tmp}/smprof-setup-XXXXXX")}")"
mkdir -p "$work"
rm -rf "$work/clone" "$work/venv"
git clone -q "$repo" "$work/clone"
python3 -m venv "$work/venv"
apt_packages=$(bash "$repo/scripts/install_deps.sh" --list | sed -n 's/^debian //p' | tr '\n' ' ')
# What those packages pull in that a fresh Debian machine lacks (the runtime libraries).
apt_libraries=(libprotobuf32 libprotobuf-lite32 libprotoc32 libpfm4)
apt-get clean

start=$(date +%s.%N)
{
  echo "== Debian packages: $apt_packages ${apt_libraries[*]}"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install --reinstall -y -qq $apt_packages "${apt_libraries[@]}" > /dev/null
  # shellcheck disable=SC1091
  (source "$work/venv/bin/activate" && cd "$work/clone" && CCACHE_DISABLE=1 PYTHONUNBUFFERED=1 bash scripts/run_example.sh)
} 2>&1 | while IFS= read -r line; do
  printf '%8.1f %s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$line"
done > "$work/setup.log"
total=$(echo "$(date +%s.%N) - $start" | bc)

echo "set-up of the main job from a fresh clone ($work/setup.log):"
awk '/ == / { if (name) printf "  %6.1f s  %s\n", $1 - since, name; since = $1; sub(/^ *[0-9.]+ == /, ""); name = $0 }
     END { printf "  %6.1f s  %s\n", $1 - since, name }' "$work/setup.log"
printf '  %6.1f s  in all: %.2fx the 4-minute goal\n' "$total" "$(echo "$total / 240" | bc -l)"
