"""Upload during the run (UploadUri): a real PyTorch training run rotating its trace every second
uploads each closed file in the background and the last at exit; reading s3:// back sees every
annotation exactly once. A failing upload leaves the files on disk with one warning."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path

import pytest
import s3_server as fixtures
from conftest import ANNOTATED_STEP, run_python
from s3_server import S3Server
from smppy.analysis import job_streams
from smppy.analysis._inputs import resolve_input
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

pytestmark = [pytest.mark.torch, pytest.mark.s3]

torch = pytest.importorskip("torch")

# The loopback S3 server (tests/python/support/s3_server.py), as fixtures of this module.
_module_s3_server = fixtures._module_s3_server
s3_server = fixtures.s3_server

BUCKET = "traces"
PHASES = ("step", "Forward", "Loss", "Backward", "Optimizer")

TRAIN = """
import json, sys, time
import boto3
import torch
import smppy

config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/rank%r.smprof", "RotateIntervalS": "1", "FlushIntervalMs": "50",
                    "UploadUri": "{uri}", "UploadExitTimeoutS": "{exit_timeout}"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(512, 32), torch.randint(0, 4, (512,))
steps = 0
uploaded_while_training = 0
profiler.start_profiling()
start = time.monotonic()
while time.monotonic() - start < {seconds}:
{train_step}
    steps += 1
    if {probe} and not uploaded_while_training and time.monotonic() - start > {seconds} - 1.5:
        listed = boto3.client("s3").list_objects_v2(Bucket="{bucket}").get("KeyCount", 0)
        uploaded_while_training = listed
json.dump({{"steps": steps, "uploaded_while_training": uploaded_while_training,
            "finite": bool(torch.isfinite(loss))}}, sys.stdout)
"""


def test_training_run_uploads_every_rotated_file_and_s3_reads_back_exactly(
    s3_server: S3Server, tmp_path: Path
):
    s3_server.client().create_bucket(Bucket=BUCKET)
    out = tmp_path / "out"
    script = TRAIN.format(
        train_step=ANNOTATED_STEP,
        out=out,
        uri=f"s3://{BUCKET}/live",
        exit_timeout=60,
        seconds=5.5,
        probe=True,
        bucket=BUCKET,
    )
    proc = run_python(script, cwd=tmp_path, env={**s3_server.env(), "SMP_JOB_NAME": "bg-job"})
    assert proc.returncode == 0, proc.stderr
    assert "background upload" not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout)
    assert result["finite"]
    assert result["uploaded_while_training"] >= 1, "rotated files arrive while training runs"

    local = find_trace_files(out)
    assert len(local) >= 4, local  # 5.5 s at one rotation per second
    host = open_trace(local[0]).header["host"]
    listed = s3_server.client().list_objects_v2(Bucket=BUCKET)["Contents"]
    assert sorted(o["Key"] for o in listed) == sorted(f"live/bg-job/{host}/{f.name}" for f in local)

    mirrored = resolve_input(f"s3://{BUCKET}/live/bg-job")
    sessions = [[Path(f) for f in s.files] for s in job_streams(mirrored).streams]
    assert len(sessions) == 1 and len(sessions[0]) == len(local)
    counts: Counter[str] = Counter()
    for path in sessions[0]:
        trace = open_trace(path)
        counts.update(e["name"] for e in annotation_events(trace))
        assert trace.footer is not None and trace.problem is None
        assert path.read_bytes() == (out / path.name).read_bytes()
    assert counts == {name: result["steps"] for name in PHASES}


def test_failed_background_upload_leaves_files_on_disk_with_one_warning(s3_server: S3Server, tmp_path: Path):
    with socket.socket() as s:  # an endpoint where nothing listens
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    out = tmp_path / "out"
    script = TRAIN.format(
        train_step=ANNOTATED_STEP,
        out=out,
        uri=f"s3://{BUCKET}/live",
        exit_timeout=3,
        seconds=2.5,
        probe=False,
        bucket=BUCKET,
    )
    proc = run_python(script, cwd=tmp_path, env={**s3_server.env(), "AWS_ENDPOINT_URL_S3": dead})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("background upload") == 1, proc.stderr
    assert "stays on disk" in proc.stderr and "smprof upload" in proc.stderr
    steps = json.loads(proc.stdout)["steps"]
    counts: Counter[str] = Counter()
    for path in find_trace_files(out):
        trace = open_trace(path)
        counts.update(e["name"] for e in annotation_events(trace))
        assert trace.footer is not None
    assert counts == {name: steps for name in PHASES}, "nothing lost"


def test_a_run_that_exits_right_after_stopping_uploads_its_only_file(s3_server: S3Server, tmp_path: Path):
    # No rotation, no boto3 imported by the script: the one file is closed by
    # stop_profiling() just before the interpreter shuts down.
    s3_server.client().create_bucket(Bucket=BUCKET)
    out = tmp_path / "out"
    script = f"""
import smppy
profiler = smppy.SMProfiler.instance()
profiler.configure({{"RecordFile": "{out}/rank%r.smprof", "UploadUri": "s3://{BUCKET}/short"}})
profiler.start_profiling()
with smppy.annotate("only-step"):
    pass
profiler.stop_profiling()
"""
    proc = run_python(script, cwd=tmp_path, env={**s3_server.env(), "SMP_JOB_NAME": "short-job"})
    assert proc.returncode == 0, proc.stderr
    assert "background upload" not in proc.stderr, proc.stderr
    (local,) = find_trace_files(out)
    host = open_trace(local).header["host"]
    listed = s3_server.client().list_objects_v2(Bucket=BUCKET).get("Contents", [])
    assert [o["Key"] for o in listed] == [f"short/short-job/{host}/{local.name}"]
