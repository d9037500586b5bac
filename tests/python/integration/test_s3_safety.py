"""Reading ``s3://`` from a bucket someone else controls, against the loopback S3 server: keys and
prefixes that would climb out of the local cache are refused by name and nothing is written or
deleted outside it; credentials written into an endpoint URL never reach an error message."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import s3_server as fixtures
import synthetic_trace as st
from s3_server import S3Server
from smppy import cli
from smppy.analysis._inputs import resolve_input
from smppy.storage.s3 import S3Error

pytestmark = [pytest.mark.s3]

# The loopback S3 server (tests/python/support/s3_server.py), as a fixture of this module.
_module_s3_server = fixtures._module_s3_server
s3_server = fixtures.s3_server

BUCKET = "evil"


def trace_bytes(tmp_path: Path) -> bytes:
    frame = st.pb().Frame()
    st.add_annotations(frame, [(1000, 10, "step", 7, 0)])
    footer = st.pb().Footer(annotations_written=1, frames_written=1)
    return st.write_trace(tmp_path / "src/rank0.smprof", st.header(), [frame], footer).read_bytes()


def put(server: S3Server, keys: list[str], body: bytes) -> None:
    client = server.client()
    client.create_bucket(Bucket=BUCKET)
    for key in keys:
        client.put_object(Bucket=BUCKET, Key=key, Body=body)


def files_outside_cache(tmp_path: Path) -> list[str]:
    cache = tmp_path / "cache"
    return sorted(
        p.relative_to(tmp_path).as_posix()
        for p in tmp_path.rglob("*")
        if p.is_file() and cache not in p.parents and p.parent.name != "src"
    )


@pytest.mark.parametrize(
    "key",
    ["runs/../../../escape.smprof", "runs/a/../../../../escape.smprof", "runs/./x.smprof", "runs//x.smprof"],
)
def test_object_key_that_leaves_the_cache_is_refused_by_name(s3_server: S3Server, tmp_path: Path, key: str):
    put(s3_server, [key, "runs/good.smprof"], trace_bytes(tmp_path))
    with pytest.raises(S3Error, match="refused") as raised:
        resolve_input(f"s3://{BUCKET}/runs")
    assert repr(key) in str(raised.value)
    assert files_outside_cache(tmp_path) == []


def test_absolute_key_at_the_bucket_root_is_refused(s3_server: S3Server, tmp_path: Path, capsys):
    key = str(tmp_path / "absolute.smprof")  # joined to the cache as is, it would be this path
    put(s3_server, [key], trace_bytes(tmp_path))
    assert cli.main(["info", f"s3://{BUCKET}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{key!r} would land outside the cache" in err, err
    assert files_outside_cache(tmp_path) == []


def test_prefix_that_climbs_out_of_the_cache_deletes_nothing(s3_server: S3Server, tmp_path: Path, capsys):
    body = trace_bytes(tmp_path)
    # A local trace the cleanup of stale mirrored files must never see: <cache>/evil/../../mine.
    mine = st.write_trace(tmp_path / "mine/kept.smprof", st.header(), [], st.pb().Footer())
    put(s3_server, ["../../mine/other.smprof"], body)
    assert cli.main(["info", f"s3://{BUCKET}/../../mine"]) == 2
    err = capsys.readouterr().err
    assert "s3://evil/../../mine: refused: '../../mine' would land outside the cache" in err, err
    assert mine.exists()
    assert not (tmp_path / "mine/other.smprof").exists()


def test_good_keys_mirror_inside_the_cache_and_traces_are_found_by_magic(s3_server: S3Server, tmp_path: Path):
    body = trace_bytes(tmp_path)
    put(s3_server, ["runs/a/rank0.smprof", "runs/b..c/rank1.smprof", "runs/c/smpfile_12_1700.raw"], body)
    s3_server.client().put_object(Bucket=BUCKET, Key="runs/c/notes.raw", Body=b"not a trace")
    local = resolve_input(f"s3://{BUCKET}/runs")
    assert local == tmp_path / "cache" / BUCKET / "runs"
    assert sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()) == [
        "a/rank0.smprof",
        "b..c/rank1.smprof",
        "c/smpfile_12_1700.raw",
    ]
    assert resolve_input(f"s3://{BUCKET}/runs/c/smpfile_12_1700.raw") == local / "c/smpfile_12_1700.raw"

    s3_server.client().delete_object(Bucket=BUCKET, Key="runs/c/smpfile_12_1700.raw")
    (local / "c/mine.raw").write_bytes(body)  # never downloaded: the cleanup leaves it
    resolve_input(f"s3://{BUCKET}/runs")
    assert not (local / "c/smpfile_12_1700.raw").exists() and (local / "c/mine.raw").exists()


KEY_IN_URL = "AKIAURLKEYNEVERPRINT"
SECRET_IN_URL = "url-secret-never-print-me"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("scheme", ["http", "htp"])  # unreachable; not a valid endpoint at all
def test_credentials_in_the_endpoint_url_never_appear_in_errors(
    s3_server: S3Server, tmp_path: Path, monkeypatch, capsys, scheme: str
):
    url = f"{scheme}://{KEY_IN_URL}:{SECRET_IN_URL}@127.0.0.1:{closed_port()}"
    traces = tmp_path / "traces"
    trace_bytes(traces)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", url)
    commands = [
        ["upload", str(traces), f"s3://{BUCKET}/p", "--max-attempts", "1", "--no-progress"],
        ["upload", str(traces), f"s3://{BUCKET}/p", "--endpoint-url", url, "--max-attempts", "1"],
        ["info", f"s3://{BUCKET}/p"],
        ["summary", f"s3://{BUCKET}/p"],
    ]
    for command in commands:
        assert cli.main(command) == 2, command
        err = capsys.readouterr().err
        assert err.startswith(f"smprof: error: s3://{BUCKET}/p") and err.count("\n") == 1, err
        assert KEY_IN_URL not in err and SECRET_IN_URL not in err, err
