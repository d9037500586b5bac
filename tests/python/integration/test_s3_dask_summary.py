"""An ``s3://`` job summarized on a Dask cluster whose workers read the objects themselves
(docs/S3.md, "On a Dask cluster"): a real loopback S3 server (moto) and a real
``dask.distributed`` scheduler with two worker processes. The summary is the same bytes as
the summary of the local mirror, and the client reads only the objects' ends."""

from __future__ import annotations

import os
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest
import s3_server as fixtures
import synthetic_trace as st
from gpu_job import synthetic_gpu_job
from s3_server import S3Server
from smppy import _smppy, cli
from smppy.analysis import _parallel_summary
from smppy.storage import _s3_streams
from smppy.storage.s3 import SHA256_METADATA, S3Error, S3Uri
from smprof_command import smprof

pytestmark = [pytest.mark.s3, pytest.mark.dask]

distributed = pytest.importorskip("distributed")

_module_s3_server = fixtures._module_s3_server
s3_server = fixtures.s3_server

BUCKET = "traces"
LOCATION = f"s3://{BUCKET}/runs"
OPTIONS = {"step_pattern": "", "top_k": 3, "max_buckets": 50, "reorder_window_ns": 5_000_000_000}
MIB = 1024 * 1024


def aligned_padded_rank(path: Path) -> None:
    """A rank of its own host, 2 MiB of incompressible strings, whose header (a long argv) is
    longer than the client's first read and whose footer carries a clock alignment round (its
    correction is in the summary only if the footer is read) and a last write error that makes
    it longer than the client's first tail read."""
    header = st.header(host="host-9", rank=9, world_size=10, monotonic_ns=1_000, realtime_ns=10**18, pid=909)
    header.argv.extend(["train.py", "--note", "a" * (_s3_streams.HEAD_BYTES + 1000)])
    frame = st.pb().Frame(sequence=0)
    st.add_annotations(frame, [(2_000 + i, 10, "step", 7, 0) for i in range(3)])
    for _ in range(2 * 1024):
        frame.strings.append(os.urandom(512).hex().encode())
    footer = st.pb().Footer(frames_written=1, annotations_written=3)
    footer.last_write_error = b"E" * (_s3_streams.TAIL_BYTES + 4096)
    round_ = footer.clock_alignments.add(phase="start", reference_rank=0, reference_host="host-0")
    round_.reference_clock_offset_ns = 10**18 + 5_000_000
    round_.samples.add(
        local_send_ns=1_000, reference_receive_ns=1_700, reference_send_ns=1_800, local_receive_ns=1_300
    )
    st.write_trace(path, header, [frame], footer, compression_level=0)


@pytest.fixture
def uploaded(s3_server: S3Server, tmp_path: Path) -> Path:
    """A multi-rank job (rotated and damaged files, an unreadable header, a 2 MiB rank with a
    long footer) uploaded to LOCATION; returns its local directory."""
    job = synthetic_gpu_job(tmp_path / "job")
    aligned_padded_rank(job / "host-9" / "rank9.smprof")
    s3_server.client().create_bucket(Bucket=BUCKET)
    # smprof upload skips incomplete files (all but rank 9's): they go up as they are, unchecked.
    assert cli.main(["upload", str(job), LOCATION, "--no-progress"]) == 0
    client = s3_server.client()
    uploaded_keys = {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET)["Contents"]}
    for path in sorted(job.rglob("*.smprof")):
        key = f"runs/job-1/{path.parent.name}/{path.name}"
        if key not in uploaded_keys:
            client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())
    return job


@pytest.fixture
def cluster(s3_server: S3Server):
    """Two worker processes started after the AWS environment points at the loopback S3."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as local_cluster:
        yield local_cluster


class RecordingClient:
    """The client's S3 client, recording what it reads."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.bytes_read: dict[str, int] = {}

    def get_object(self, **request: Any) -> dict[str, Any]:
        response = self._client.get_object(**request)
        body = response["Body"].read()
        assert "Range" in request, "the client reads whole objects"
        self.bytes_read[request["Key"]] = self.bytes_read.get(request["Key"], 0) + len(body)
        response["Body"] = _Body(body)
        return response

    def download_file(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the client downloads objects")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self) -> bytes:
        return self._data


def mirrored_text() -> bytes:
    streams, warnings = _s3_streams.mirrored_streams(S3Uri.parse(LOCATION))
    return _parallel_summary.streams_summary_text(
        streams, warnings, OPTIONS, jobs=1, scheduler=None, progress=None
    )


def test_workers_read_the_objects_and_the_summary_is_the_mirrors(
    uploaded: Path, cluster, s3_server: S3Server, tmp_path: Path, monkeypatch
) -> None:
    recording = RecordingClient(_s3_streams.make_client())
    monkeypatch.setattr(_s3_streams, "make_client", lambda: recording)
    on_dask = _parallel_summary.s3_summary_text(
        LOCATION, OPTIONS, jobs=None, scheduler=cluster.scheduler_address, progress=None
    )
    assert not (tmp_path / "cache").exists(), "the client mirrored the objects"
    big = "runs/job-1/host-9/rank9.smprof"
    size = s3_server.client().head_object(Bucket=BUCKET, Key=big)["ContentLength"]
    header_end = _smppy.header_chunk_end((uploaded / "host-9" / "rank9.smprof").read_bytes())
    assert header_end > _s3_streams.HEAD_BYTES
    # The first bytes, then through the long header; the last bytes, then more for the long footer.
    ends = _s3_streams.HEAD_BYTES + header_end + _s3_streams.TAIL_BYTES + _s3_streams.LONG_TAIL_BYTES
    assert recording.bytes_read[big] == ends < size

    assert on_dask == mirrored_text()
    text = on_dask.decode()
    assert f'"path":"{LOCATION}/job-1/host-9/rank9.smprof"' in text
    assert f"{LOCATION}/job-1/host-1/rank3_s0.smprof: truncated" in text  # a damaged file, by its S3 name
    skipped = f"{LOCATION}/job-1/host-0/not-a-trace.smprof"
    assert f"{skipped}: skipped: '{skipped}' has trace format version 9" in text

    # The mirror's summary is the local one but for the files' names.
    bucket_dir = tmp_path / "cache" / BUCKET
    local = _parallel_summary.summary_text([str(bucket_dir)], OPTIONS, jobs=1, scheduler=None, progress=None)
    assert local.replace(f"{bucket_dir}/".encode(), f"s3://{BUCKET}/".encode()) == on_dask


def test_the_footers_clock_rounds_are_read_from_the_objects_tails(uploaded: Path, cluster) -> None:
    streams, _, _ = _s3_streams.job_streams(S3Uri.parse(LOCATION))
    (padded,) = [s for s in streams if s.rank == 9]
    assert padded.files == [f"{LOCATION}/job-1/host-9/rank9.smprof"]
    from smppy import analysis

    summary = analysis.summarize(LOCATION, scheduler=cluster.scheduler_address)
    (process,) = [p for p in summary["job"]["processes"] if p["rank"] == 9]
    assert process["clock_correction_ns"] != 0


def test_cli_summary_on_the_cluster_prints_the_mirrors_json(uploaded: Path, cluster) -> None:
    on_dask = smprof("summary", "--json", "--scheduler", cluster.scheduler_address, LOCATION)
    assert on_dask.returncode == 0, on_dask.stderr
    mirrored = smprof("summary", "--json", LOCATION)
    assert mirrored.returncode == 0, mirrored.stderr
    assert on_dask.stdout == mirrored.stdout


def test_a_worker_refuses_an_object_that_changed_or_does_not_match_its_checksum(
    uploaded: Path, s3_server: S3Server
) -> None:
    streams, _, etags = _s3_streams.job_streams(S3Uri.parse(LOCATION))
    (stream,) = [s for s in streams if s.rank == 9]  # uploaded by smprof upload: it has smprof-sha256
    stream_etags = [etags[name] for name in stream.files]
    assert _s3_streams.stream_partial(stream, stream_etags, OPTIONS)

    key = stream.files[0].removeprefix(f"s3://{BUCKET}/")
    client = s3_server.client()
    original = client.get_object(Bucket=BUCKET, Key=key)
    changed = original["Body"].read() + b"x"
    client.put_object(Bucket=BUCKET, Key=key, Body=changed, Metadata=original["Metadata"])
    with pytest.raises(S3Error, match="do not match the object's size or SHA-256"):
        _s3_streams.stream_partial(stream, stream_etags, OPTIONS)
    client.put_object(
        Bucket=BUCKET, Key=key, Body=changed, Metadata={SHA256_METADATA: sha256(changed).hexdigest()}
    )
    with pytest.raises(S3Error, match="changed after it was listed"):
        _s3_streams.stream_partial(stream, stream_etags, OPTIONS)


def test_workers_without_the_s3_environment_fail_with_a_clear_error(
    uploaded: Path, s3_server: S3Server, monkeypatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")  # the workers' own: nothing listens
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as elsewhere:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server.url)
        with pytest.raises(S3Error, match="cannot reach the S3 endpoint"):
            _parallel_summary.s3_summary_text(
                LOCATION, OPTIONS, jobs=None, scheduler=elsewhere.scheduler_address, progress=None
            )
