"""An ``s3://`` job's process streams, for workers that read the objects themselves
(docs/S3.md, "On a Dask cluster").

The client lists the trace objects (keys, sizes, ETags) and reads only their ends by ranged GETs:
the first bytes through the header chunk and the last ``TAIL_BYTES`` (``LONG_TAIL_BYTES`` when the
footer is longer). The C++ JobReader groups the objects into process streams from those bytes
(``_smppy.job_streams_from_ends``), the same grouping as for local files; the streams name their
files ``s3://bucket/key``, as do those of the mirror (``mirrored_streams``). A worker given a
stream downloads its objects into a temporary directory, checks each like the mirror does (size,
``smprof-sha256``, and the ETag listed), computes the stream's partial summary and removes the
copies. Both ends use ``smppy.storage.s3.make_client``: the AWS chain of the process that runs them (on a
worker, the worker's environment).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from smppy import _smppy
from smppy.storage.s3 import S3Error, S3Uri, check_bucket, explain, make_client
from smppy.storage.s3_cache import cache_root, download, list_trace_objects, mirror
from smppy.storage.trace_files import TRACE_SUFFIX

HEAD_BYTES = 64 << 10
TAIL_BYTES = 64 << 10
LONG_TAIL_BYTES = 1 << 20


def object_name(bucket: str, key: str) -> str:
    return f"s3://{bucket}/{key}"


def _bucket_and_key(name: str) -> tuple[str, str]:
    bucket, _, key = name.removeprefix("s3://").partition("/")
    return bucket, key


def _read_range(client: Any, name: str, etag: str, byte_range: str) -> bytes:
    bucket, key = _bucket_and_key(name)
    response = client.get_object(Bucket=bucket, Key=key, Range=byte_range)
    if response["ETag"] != etag:
        raise S3Error(
            f"{name} changed while it was being read (its ETag differs from the listing's); run again"
        )
    return response["Body"].read()


def _ends(client: Any, name: str, size: int, etag: str) -> tuple[bytes, bytes]:
    """The object's first bytes through its header chunk and its last bytes with its footer."""
    start = _read_range(client, name, etag, f"bytes=0-{HEAD_BYTES - 1}")
    header_end = _smppy.header_chunk_end(start)
    if len(start) < header_end <= size:
        start = _read_range(client, name, etag, f"bytes=0-{header_end - 1}")
    if len(start) >= size:  # the whole object
        return start, start
    tail = _read_range(client, name, etag, f"bytes={max(0, size - TAIL_BYTES)}-{size - 1}")
    if size > TAIL_BYTES and not _smppy.footer_in_tail(start, tail):
        tail = _read_range(client, name, etag, f"bytes={max(0, size - LONG_TAIL_BYTES)}-{size - 1}")
    return start, tail


def job_streams(uri: S3Uri, client: Any = None) -> tuple[list[Any], list[str], dict[str, str]]:
    """(streams, warnings, ETag by object name) of the trace objects under ``uri``, read by their
    ends only. Raises FileNotFoundError if there are none, ``smppy.storage.s3.S3Error`` on S3 problems."""
    client = client or make_client()
    try:
        check_bucket(client, uri)
        objects = list_trace_objects(client, uri)
        names = {object_name(uri.bucket, key): obj for key, obj in sorted(objects.items())}
        files = [
            (name, obj["Size"], *_ends(client, name, obj["Size"], obj["ETag"])) for name, obj in names.items()
        ]
    except Exception as e:
        raise explain(e, uri) from None
    if not files:
        raise FileNotFoundError(
            f"no trace files under {uri} (*{TRACE_SUFFIX}, or objects that start like a trace)"
        )
    streams, warnings = _smppy.job_streams_from_ends(files)
    return streams, warnings, {name: obj["ETag"] for name, obj in names.items()}


def mirrored_streams(uri: S3Uri) -> tuple[list[Any], list[str]]:
    """(streams, warnings) of the trace objects under ``uri`` mirrored into the local cache
    (``smppy.storage.s3_cache.mirror``): read from the cache, named ``s3://bucket/key`` as by
    ``job_streams``. Raises what ``mirror`` raises."""
    bucket_dir = cache_root() / uri.bucket
    streams, warnings = _smppy.job_streams([str(mirror(uri, root=cache_root()))])

    def name(path: str) -> str:
        return object_name(uri.bucket, Path(path).relative_to(bucket_dir).as_posix())

    named = [stream.with_files([(name(path), path) for path in stream.files]) for stream in streams]
    return named, [warning.replace(f"{bucket_dir}/", f"s3://{uri.bucket}/") for warning in warnings]


def stream_partial(stream: Any, etags: list[str], options: dict[str, Any]) -> bytes:
    """The partial summary of one stream of ``s3://`` objects (``etags``: the listed ETag of each
    of its files): what a Dask worker runs. Its objects are downloaded and checked into a
    temporary directory, removed afterwards."""
    client = make_client()
    with tempfile.TemporaryDirectory(prefix="smprof-s3-stream-") as directory:
        files = []
        for index, (name, etag) in enumerate(zip(stream.files, etags, strict=True)):
            bucket, key = _bucket_and_key(name)
            local = Path(directory) / str(index)
            if download(client, S3Uri(bucket), key, local)["etag"] != etag:
                raise S3Error(f"{name} changed after it was listed (its ETag differs); run again")
            files.append((name, str(local)))
        return _smppy.partial_summary([stream.with_files(files)], **options)
