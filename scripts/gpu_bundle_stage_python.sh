#!/usr/bin/env bash
# Copies the Python packages of the source tree into a bundle's python/
# folder, for scripts/gpu_bundle.sh:
#   bash scripts/gpu_bundle_stage_python.sh DEST
#
# Every file of python/smppy (its subpackages and data files too: analysis/,
# cli/, report/assets/, _run_site/, ...) and python/smprof, without built
# libraries (*.so, *.so.N: gpu_bundle.sh puts the ones it built there) and
# without __pycache__.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$(realpath -m "${1:?usage: gpu_bundle_stage_python.sh DEST}")"
mkdir -p "$dest"
cd "$root/python"
find smppy smprof -type f ! -name '*.so' ! -name '*.so.*' ! -path '*/__pycache__/*' -print0 |
  xargs -0 cp --parents -t "$dest"
