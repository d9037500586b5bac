#!/usr/bin/env bash
# One call on a lent GPU machine: scripts/gpu_probe.py and scripts/gpu_check.sh
# --bundle, from a bundle of scripts/gpu_bundle.sh, within a fixed time:
#   set -o pipefail; bash BUNDLE/scripts/gpu_device_run.sh 2>&1 | tee $OUT/log
#
# Prints the machine's versions (nvidia-smi, the CUDA wheels next to torch),
# then runs the probe (PROBE_BUDGET seconds, default 215; each scenario in its
# own process with its own limit) and the check (CHECK_LIMIT, default 160),
# each under `timeout`, so a hang in one leaves the other its time: about
# 400 s in all. Work files go to WORK (default /tmp/smprof-gpu-run); what
# comes back goes to $OUT (few files, as the device tool wants them):
# probe.json, check_table.txt and artifacts.tgz (every trace and log).
# PYTHON names the interpreter with torch (default python3).
set -uo pipefail
bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$(mktemp -d -t smprof-gpu-run-out-XXXXXX)}"
work="${WORK:-/tmp/smprof-gpu-run}"
python="${PYTHON:-python3}"
probe_budget="${PROBE_BUDGET:-215}"
check_limit="${CHECK_LIMIT:-160}"
rm -rf "$work" && mkdir -p "$work" "$out"

echo "== $(date -u +%FT%TZ) bundle $bundle"
cat "$bundle/BUNDLE.txt"
nvidia-smi || true
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
"$python" -c 'import sys; print(sys.executable, sys.version)' || true
"$python" -m pip list 2> /dev/null | grep -i -E '^(torch|nvidia-cuda-cupti|nvidia-cuda-runtime|nvidia-cuda-nvrtc)(-cu1[23])? ' || true
ls -d /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* 2> /dev/null || true

echo "== probe ($(date -u +%T))"
PYTHONPATH="$bundle/python" PYTHONUNBUFFERED=1 timeout -k 5 $((probe_budget + 10)) \
  "$python" "$bundle/scripts/gpu_probe.py" --out "$work/probe" --budget "$probe_budget"
echo "== probe exit $? ($(date -u +%T))"

echo "== gpu_check ($(date -u +%T))"
OUT="$work/check" PYTHON="$python" PYTHONUNBUFFERED=1 timeout -k 5 "$check_limit" \
  bash "$bundle/scripts/gpu_check.sh" --bundle "$bundle"
echo "== gpu_check exit $? ($(date -u +%T))"

cp "$work/probe/probe.json" "$out/" 2> /dev/null
cp "$work/check/table.txt" "$out/check_table.txt" 2> /dev/null
tar -czf "$out/artifacts.tgz" -C "$work" . 2> /dev/null
if [ "$(stat -c %s "$out/artifacts.tgz" 2> /dev/null || echo 0)" -gt 15000000 ]; then
  echo "== artifacts.tgz over 15 MB: not returned"
  rm -f "$out/artifacts.tgz"
fi
echo "== end $(date -u +%T)"
