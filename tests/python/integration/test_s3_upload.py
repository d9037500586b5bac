"""``smprof upload`` and reading ``s3://`` against a real S3-compatible server (moto) on loopback:
layout, idempotency, multipart, --delete-after-upload, faults, errors, credentials."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import s3_server as fixtures
import synthetic_trace as st
from s3_server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, S3Server
from smppy import cli
from smppy.analysis._inputs import resolve_input
from smppy.storage.s3 import S3Uri, make_client
from smppy.storage.upload import TransferOptions, upload_directory

pytestmark = [pytest.mark.s3]

# The loopback S3 servers (tests/python/support/s3_server.py), as fixtures of this module.
_module_s3_server = fixtures._module_s3_server
s3_server = fixtures.s3_server
iam_s3_server = fixtures.iam_s3_server

BUCKET = "traces"
MIB = 1024 * 1024


def rank_file(path: Path, *, job="job-1", host="host-a", rank=0, names=("step",), complete=True, pad_mib=0.0):
    """A trace file with one frame of annotations; ``pad_mib`` adds incompressible strings."""
    frame = st.pb().Frame()
    st.add_annotations(frame, [(1000 + i, 10, name, 7, 0) for i, name in enumerate(names)])
    for _ in range(int(pad_mib * 1024)):
        frame.strings.append(os.urandom(512).hex().encode())
    footer = st.pb().Footer(annotations_written=len(names), frames_written=1) if complete else None
    return st.write_trace(
        path, st.header(job=job, host=host, rank=rank), [frame], footer, compression_level=0
    )


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    rank_file(out / "job-1/host-a/rank0.smprof", rank=0)
    rank_file(out / "job-1/host-a/rank0.0001.smprof", rank=0, names=("step", "step"))
    rank_file(out / "job-1/host-b/rank1.smprof", host="host-b", rank=1)
    rank_file(out / "job-1/host-b/rank1.0001.smprof", host="host-b", rank=1, complete=False)
    return out


def upload(*args: str) -> int:
    return cli.main(["upload", *args, "--no-progress"])


def objects(client, prefix: str = "") -> dict[str, bytes]:
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {o["Key"]: client.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed}


def test_upload_layout_skips_incomplete_files_and_rerun_uploads_nothing(
    s3_server: S3Server, traces: Path, capsys
):
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    assert upload(str(traces), f"s3://{BUCKET}/runs/") == 0
    out = capsys.readouterr().out
    assert "3 uploaded, 0 re-uploaded, 0 already there, 1 skipped (incomplete), 0 failed" in out
    assert f"skipped    {traces}/job-1/host-b/rank1.0001.smprof: not complete" in out
    stored = objects(client)
    # <prefix>/<job>/<host>/<file name>, job and host from each file's header.
    assert stored == {
        "runs/job-1/host-a/rank0.smprof": (traces / "job-1/host-a/rank0.smprof").read_bytes(),
        "runs/job-1/host-a/rank0.0001.smprof": (traces / "job-1/host-a/rank0.0001.smprof").read_bytes(),
        "runs/job-1/host-b/rank1.smprof": (traces / "job-1/host-b/rank1.smprof").read_bytes(),
    }
    before = {k: client.head_object(Bucket=BUCKET, Key=k)["LastModified"] for k in stored}

    assert upload(str(traces), f"s3://{BUCKET}/runs") == 0
    assert "0 uploaded, 0 re-uploaded, 3 already there, 1 skipped" in capsys.readouterr().out
    assert {k: client.head_object(Bucket=BUCKET, Key=k)["LastModified"] for k in stored} == before


def test_changed_file_is_uploaded_again(s3_server: S3Server, traces: Path, capsys):
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    assert upload(str(traces), f"s3://{BUCKET}") == 0
    changed = traces / "job-1/host-a/rank0.smprof"
    changed.unlink()
    rank_file(changed, names=("step", "other"))
    capsys.readouterr()
    assert upload(str(traces), f"s3://{BUCKET}") == 0
    out = capsys.readouterr().out
    assert "1 uploaded, 0 re-uploaded, 2 already there" in out
    assert objects(client)["job-1/host-a/rank0.smprof"] == changed.read_bytes()


def test_large_file_goes_in_parts_and_is_verified(s3_server: S3Server, tmp_path: Path, capsys):
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    big = rank_file(tmp_path / "big/rank0.smprof", pad_mib=11)
    assert big.stat().st_size > 11 * MIB
    args = ["--multipart-threshold", "5MiB", "--part-size", "5MiB"]
    assert upload(str(tmp_path / "big"), f"s3://{BUCKET}/p", *args) == 0
    key = "p/job-1/host-a/rank0.smprof"
    head = client.head_object(Bucket=BUCKET, Key=key)
    assert head["ETag"].strip('"').endswith("-3"), head["ETag"]  # three parts: 5 + 5 + the rest
    assert client.head_object(Bucket=BUCKET, Key=key, PartNumber=1)["PartsCount"] == 3
    assert head["Metadata"]["smprof-part-size"] == str(5 * MIB)
    assert objects(client)[key] == big.read_bytes()
    assert upload(str(tmp_path / "big"), f"s3://{BUCKET}/p", *args) == 0
    assert "0 uploaded, 0 re-uploaded, 1 already there" in capsys.readouterr().out


def test_delete_after_upload_removes_only_verified_files(s3_server: S3Server, traces: Path, capsys):
    client = s3_server.client()
    # No bucket yet: nothing may be deleted.
    assert upload(str(traces), f"s3://{BUCKET}", "--delete-after-upload") == 2
    assert len(list(traces.rglob("*.smprof"))) == 4
    client.create_bucket(Bucket=BUCKET)
    assert upload(str(traces), f"s3://{BUCKET}", "--delete-after-upload") == 0
    assert "local file deleted" in capsys.readouterr().out
    assert [p.name for p in traces.rglob("*.smprof")] == ["rank1.0001.smprof"], "the incomplete file stays"
    assert len(objects(client)) == 3


def test_server_stopped_mid_upload_then_the_next_run_completes(s3_server: S3Server, tmp_path: Path):
    out = tmp_path / "out"
    files = [rank_file(out / f"rank{i}.smprof", rank=i, pad_mib=6 if i == 0 else 0) for i in range(4)]
    s3_server.client().create_bucket(Bucket=BUCKET)
    options = TransferOptions(multipart_threshold=5 * MIB, part_size=5 * MIB, max_concurrency=1)
    stopped = threading.Event()

    def stop_server_during_the_big_upload(path: Path, n: int) -> None:
        if path.name == "rank0.smprof" and not stopped.is_set():
            stopped.set()
            threading.Thread(target=s3_server.stop).start()

    uri = S3Uri.parse(f"s3://{BUCKET}/x")
    first = upload_directory(
        out, uri, make_client(max_attempts=2), options, jobs=1, on_bytes=stop_server_during_the_big_upload
    )
    assert stopped.is_set()
    failed = [o for o in first if o.action == "failed"]
    assert failed and all("cannot reach the S3 endpoint" in o.detail for o in failed), first

    s3_server.start()  # same port, same objects
    second = upload_directory(out, uri, make_client(), options, jobs=2)
    assert {o.path for o in second if o.action == "uploaded"} == {o.path for o in failed}
    assert all(o.action in ("uploaded", "unchanged") for o in second)
    stored = objects(s3_server.client(), "x/")
    assert stored == {f"x/job-1/host-a/{f.name}": f.read_bytes() for f in files}


def test_corrupt_object_is_detected_by_checksum_and_uploaded_again(s3_server: S3Server, traces: Path, capsys):
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    assert upload(str(traces), f"s3://{BUCKET}") == 0
    key = "job-1/host-b/rank1.smprof"
    good = client.get_object(Bucket=BUCKET, Key=key)
    body = bytearray(good["Body"].read())
    body[-5] ^= 0xFF  # same size, same metadata (it claims the right SHA-256), wrong bytes
    client.put_object(
        Bucket=BUCKET, Key=key, Body=bytes(body), Metadata=good["Metadata"], ChecksumAlgorithm="SHA256"
    )
    capsys.readouterr()
    assert upload(str(traces), f"s3://{BUCKET}") == 0
    out = capsys.readouterr().out
    assert "0 uploaded, 1 re-uploaded, 2 already there" in out
    assert f"reuploaded {traces}/{key}" in out and "did not match its checksum" in out
    assert objects(client)[key] == (traces / key).read_bytes()


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("traces/prefix", "bad S3 URI 'traces/prefix': expected s3://bucket or s3://bucket/prefix"),
        ("s3://", "is not a bucket name"),
        ("s3://Bad_Bucket/x", "'Bad_Bucket' is not a bucket name"),
        ("s3://no-such-bucket/x", "s3://no-such-bucket/x: bucket 'no-such-bucket' does not exist"),
    ],
)
def test_bad_uri_and_missing_bucket_are_clear_errors(s3_server: S3Server, traces: Path, capsys, uri, message):
    assert upload(str(traces), uri) == 2
    assert message in capsys.readouterr().err


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import sys; from smppy.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_denied_access_is_a_clear_error_and_credentials_are_never_printed(iam_s3_server, traces: Path):
    def no_credentials_in(proc: subprocess.CompletedProcess, env: dict[str, str]) -> None:
        for name in ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID"):
            assert env[name] not in proc.stdout + proc.stderr

    # May read the bucket, not write to it: each file fails with the reason, none is deleted.
    env = iam_s3_server.reader_env
    proc = run_cli(
        "upload", str(traces), "s3://locked/p", "--max-attempts", "1", "--delete-after-upload", env=env
    )
    assert proc.returncode == 1, proc.stderr
    assert "s3://locked/p/job-1/host-a/rank0.smprof: access denied" in proc.stderr
    assert "3 failed" in proc.stdout
    assert len(list(traces.rglob("*.smprof"))) == 4
    no_credentials_in(proc, env)

    # May do nothing: refused at the bucket, before any file.
    env = iam_s3_server.nobody_env
    proc = run_cli("upload", str(traces), "s3://locked/p", "--max-attempts", "1", env=env)
    assert proc.returncode == 2
    assert "smprof: error: s3://locked/p: access denied" in proc.stderr
    no_credentials_in(proc, env)

    env = {**env, "AWS_SECRET_ACCESS_KEY": "wrong-secret-never-print", "AWS_ACCESS_KEY_ID": "AKIAWRONGWRONG"}
    proc = run_cli("upload", str(traces), "s3://locked/p", "--max-attempts", "1", env=env)
    assert proc.returncode == 2
    assert "s3://locked/p: access denied" in proc.stderr or "credentials were rejected" in proc.stderr
    no_credentials_in(proc, env)


def test_credentials_are_never_printed(s3_server: S3Server, traces: Path):
    env = s3_server.env()
    s3_server.client().create_bucket(Bucket=BUCKET)
    runs = [
        run_cli("upload", str(traces), f"s3://{BUCKET}/p", env=env),
        run_cli("upload", str(traces), "s3://missing-bucket/p", env=env),
        run_cli("upload", str(traces), "not-a-uri", env=env),
        run_cli("info", f"s3://{BUCKET}/p/job-1", env={**env, "SMPROF_CACHE_DIR": str(traces.parent / "c")}),
    ]
    assert [r.returncode for r in runs] == [0, 2, 2, 0], [r.stderr for r in runs]
    for r in runs:
        assert SECRET_ACCESS_KEY not in r.stdout + r.stderr
        assert ACCESS_KEY_ID not in r.stdout + r.stderr


def test_s3_input_is_mirrored_once_and_verified(s3_server: S3Server, traces: Path, tmp_path: Path):
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    assert upload(str(traces), f"s3://{BUCKET}/runs") == 0
    local = resolve_input(f"s3://{BUCKET}/runs/job-1")
    assert local == tmp_path / "cache" / BUCKET / "runs/job-1"
    files = sorted(p.relative_to(local).as_posix() for p in local.rglob("*.smprof"))
    assert files == ["host-a/rank0.0001.smprof", "host-a/rank0.smprof", "host-b/rank1.smprof"]
    for f in files:
        assert (local / f).read_bytes() == (traces / "job-1" / f).read_bytes()
    stamps = {f: (local / f).stat().st_mtime_ns for f in files}

    assert resolve_input(f"s3://{BUCKET}/runs/job-1") == local
    assert {f: (local / f).stat().st_mtime_ns for f in files} == stamps, "a rerun downloads nothing"

    (local / "host-b/rank1.smprof").write_bytes(b"damaged")  # local damage is repaired
    client.delete_object(Bucket=BUCKET, Key="runs/job-1/host-a/rank0.0001.smprof")  # gone from S3
    resolve_input(f"s3://{BUCKET}/runs/job-1")
    assert (local / "host-b/rank1.smprof").read_bytes() == (traces / "job-1/host-b/rank1.smprof").read_bytes()
    assert not (local / "host-a/rank0.0001.smprof").exists()

    with pytest.raises(FileNotFoundError, match="no trace files"):
        resolve_input(f"s3://{BUCKET}/runs/other-job")
    with pytest.raises(ValueError, match="bucket 'absent-bucket' does not exist"):
        resolve_input("s3://absent-bucket/runs")
