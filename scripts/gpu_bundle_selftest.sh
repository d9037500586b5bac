#!/usr/bin/env bash
# Checks, on this CPU machine, that a bundle from scripts/gpu_bundle.sh stands
# on its own, as it must on a GPU machine with only a driver, Python and torch:
#   bash scripts/gpu_bundle_selftest.sh BUNDLE
#
# A copy of the bundle in a fresh directory is used from a mount namespace
# (unshare -m, as root) in which the source tree, the build trees and this
# machine's protobuf, zstd and libpfm libraries are hidden. There, in a fresh
# venv (--system-site-packages, for torch), smppy imports from the bundle and
# profiles a short CPU training loop whose trace is read back; every other
# Python the bundle was built for imports it; bin/cuda_app finds libsmprof; and scripts/gpu_check.sh
# --bundle exits 2 with "no GPU here". Exit status 0 when all of that holds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bundle="$(realpath "${1:?usage: gpu_bundle_selftest.sh BUNDLE}")"
[ "$(id -u)" = 0 ] && command -v unshare > /dev/null || { echo "gpu_bundle_selftest: needs root and unshare"; exit 1; }
tmp="$(mktemp -d -t smprof-bundle-selftest-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$bundle" "$tmp/bundle"
python3 -m venv --system-site-packages "$tmp/venv"
mkdir "$tmp/empty"

hide=("$root" "$bundle")
for library in $(ldconfig -p | awk '/(libprotobuf-lite|libzstd|libpfm)\.so/ {print $NF}'); do
  hide+=("$(realpath "$library")")
done
mounts=""
for path in $(printf '%s\n' "${hide[@]}" | sort -ru); do  # inner paths first
  if [ -d "$path" ]; then
    mounts+="mount --bind $tmp/empty $path && "
  else
    mounts+="mount --bind /dev/null $path && "
  fi
done

cat > "$tmp/cpu_loop.py" << 'EOF'
import sys
from pathlib import Path

import smppy
import torch
from smppy.trace import annotation_events, find_trace_files, open_trace

bundle, traces = Path(sys.argv[1]), Path(sys.argv[2])
assert Path(smppy.__file__).is_relative_to(bundle), f"smppy from {smppy.__file__}, not the bundle"
config = smppy.Config()
config.profiler = {"RecordFile": str(traces / "cpu_%p.smprof")}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
profiler.start_profiling()
model = torch.nn.Linear(64, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    with smppy.annotate("step"):
        optimizer.zero_grad()
        model(torch.randn(32, 64)).sum().backward()
        optimizer.step()
profiler.stop_profiling()
steps = [e for f in find_trace_files(traces) for e in annotation_events(open_trace(f)) if e["name"] == "step"]
assert len(steps) == 10, f"{len(steps)} steps in the trace"
print(f"gpu_bundle_selftest: smppy from the bundle profiled {len(steps)} steps on the CPU")
EOF

others=""
for python in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[123].*/bin/python3.1[123]; do
  tag="$("$python" -c 'import sys; print(sys.implementation.cache_tag)' 2> /dev/null)" || continue
  ls "$tmp"/bundle/python/smppy/_smppy.*"${tag#cpython-}"*.so > /dev/null 2>&1 || continue
  others+="PYTHONPATH=$tmp/bundle/python $python -c 'import smppy, smppy._smppy; print(\"gpu_bundle_selftest: imports in\", \"$tag\")' && "
done

mkdir "$tmp/traces" "$tmp/out"
set +e
# bin/cuda_app finds libsmprof in the bundle (its CUDA libraries come from torch's wheels there).
app_libs="if ldd $tmp/bundle/bin/cuda_app | grep 'libsmprof.*not found'; then echo 'gpu_bundle_selftest: cuda_app cannot load libsmprof'; exit 1; fi"
unshare -m sh -c "$mounts cd $tmp && $app_libs && $others \
  PYTHONPATH=$tmp/bundle/python $tmp/venv/bin/python $tmp/cpu_loop.py $tmp/bundle $tmp/traces && \
  { OUT=$tmp/out bash $tmp/bundle/scripts/gpu_check.sh --bundle $tmp/bundle; status=\$?; \
    [ \$status = 2 ] || { echo \"gpu_bundle_selftest: gpu_check.sh exited \$status, not 2\"; exit 1; }; }"
status=$?
set -e
[ $status = 0 ] && echo "gpu_bundle_selftest: PASS" || echo "gpu_bundle_selftest: FAIL"
exit $status
