"""Reading traces from ``s3://``: the objects under a prefix, mirrored into a local cache.

The cache is ``$SMPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/smprof/s3``, else
``~/.cache/smprof/s3``; ``s3://bucket/a/b`` lands in ``<cache>/bucket/a/b/``. A downloaded file is
checked against the object's size and SHA-256 (``smprof-sha256`` metadata, written by
``smprof upload``) before it is used. An index beside the files remembers each object's ETag, size
and SHA-256, so a rerun downloads only objects that changed (and re-hashes the local copies to catch
local damage). Trace files that disappeared from the prefix disappear from the mirror.

Keys and prefixes come from someone else's bucket: one that would land outside ``<cache>/<bucket>``
(a ``..``, ``.`` or empty component, as in ``a/../x`` or ``/etc/x``) is refused by name, and the
cleanup of stale files only removes files that the index says this cache downloaded. Trace objects
are those named ``*.smprof`` and any other that starts with the trace magic bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from smppy import _smppy
from smppy.storage.s3 import (
    SHA256_METADATA,
    S3Error,
    S3Uri,
    check_bucket,
    digest_file,
    explain,
    head,
    make_client,
)
from smppy.storage.trace_files import TRACE_SUFFIX

INDEX_NAME = ".smprof-s3-index.json"
# The first bytes of an object read to tell a trace by its magic bytes (the reader's: has_trace_magic).
MAGIC_READ_BYTES = 16


def cache_root() -> Path:
    if explicit := os.environ.get("SMPROF_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "smprof" / "s3"


def _local_path(bucket_dir: Path, key: str, what: str) -> Path:
    """Where ``key`` lives under ``bucket_dir``; S3Error if it would resolve anywhere else."""
    parts = key.split("/")
    if any(part in ("", ".", "..") or "\0" in part for part in parts):
        raise S3Error(
            f"{what}: refused: {key!r} would land outside the cache ({bucket_dir}); "
            "keys and prefixes with '..', '.' or empty components, or a leading '/', are not read"
        )
    return bucket_dir.joinpath(*parts)


def _is_trace_object(client: Any, bucket: str, key: str) -> bool:
    """True if the object starts with the trace magic bytes (one ranged GET), whatever its name:
    ``smprof upload`` keeps SageMaker Profiler's names (``smpfile_<pid>_<time>.raw``, ...)."""
    start = client.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{MAGIC_READ_BYTES - 1}")["Body"].read()
    return _smppy.has_trace_magic(start)


def list_trace_objects(client: Any, uri: S3Uri) -> dict[str, dict[str, Any]]:
    """The trace objects under ``uri`` by key (a prefix naming one object lists just it): those
    named ``*.smprof`` and any other that starts with the trace magic bytes."""
    found = head(client, uri.bucket, uri.prefix) if uri.prefix else None
    if found is not None and (
        uri.prefix.endswith(TRACE_SUFFIX) or _is_trace_object(client, uri.bucket, uri.prefix)
    ):
        return {uri.prefix: {"ETag": found["ETag"], "Size": found["ContentLength"]}}
    objects = {}
    pages = client.get_paginator("list_objects_v2").paginate(
        Bucket=uri.bucket, Prefix=f"{uri.prefix}/" if uri.prefix else ""
    )
    for page in pages:
        for obj in page.get("Contents", []):
            if obj["Key"].endswith(TRACE_SUFFIX) or _is_trace_object(client, uri.bucket, obj["Key"]):
                objects[obj["Key"]] = obj
    return objects


def mirror(uri: S3Uri, client: Any = None, root: Path | None = None) -> Path:
    """Brings ``<root>/<bucket>/<prefix>`` up to date with the trace objects under ``uri`` and
    returns it. Raises FileNotFoundError if there are none, ``smppy.storage.s3.S3Error`` on S3 problems
    or when a download does not match its object's checksum."""
    root = root or cache_root()
    client = client or make_client()
    bucket_dir = root / uri.bucket
    target = _local_path(bucket_dir, uri.prefix, str(uri)) if uri.prefix else bucket_dir
    try:
        check_bucket(client, uri)
        objects = list_trace_objects(client, uri)
    except Exception as e:
        raise explain(e, uri) from None
    if not objects:
        raise FileNotFoundError(
            f"no trace files under {uri} (*{TRACE_SUFFIX}, or objects that start like a trace)"
        )
    local_paths = {key: _local_path(bucket_dir, key, f"s3://{uri.bucket}/{key}") for key in objects}
    index_path = bucket_dir / INDEX_NAME
    try:
        index: dict[str, dict[str, Any]] = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}

    for key, obj in sorted(objects.items()):
        local = local_paths[key]
        known = index.get(key)
        if (
            known is not None
            and known["etag"] == obj["ETag"]
            and local.is_file()
            and local.stat().st_size == obj["Size"]
            and digest_file(local, 0).sha256 == known["sha256"]
        ):
            continue
        index[key] = download(client, uri, key, local)
        _save(index_path, index)

    if target.is_dir():
        # Only files this cache downloaded (the index lists them) are ever removed.
        under = f"{uri.prefix}/" if uri.prefix else ""
        for key in [k for k in index if k.startswith(under) and k not in objects]:
            _local_path(bucket_dir, key, f"s3://{uri.bucket}/{key}").unlink(missing_ok=True)
            del index[key]
        _save(index_path, index)
    return target


def download(client: Any, uri: S3Uri, key: str, local: Path) -> dict[str, Any]:
    """Downloads the object ``key`` of ``uri``'s bucket to ``local``, checked against its size and
    ``smprof-sha256``; returns its ``etag``, ``size`` and ``sha256``. Raises S3Error."""
    target = f"s3://{uri.bucket}/{key}"
    local.parent.mkdir(parents=True, exist_ok=True)
    partial = local.with_name(local.name + ".part")
    try:
        described = head(client, uri.bucket, key)
        if described is None:
            raise FileNotFoundError(f"{target} disappeared while reading")
        client.download_file(uri.bucket, key, str(partial))
    except FileNotFoundError:
        raise
    except Exception as e:
        partial.unlink(missing_ok=True)
        raise explain(e, target) from None
    sha256 = digest_file(partial, 0).sha256
    expected = described.get("Metadata", {}).get(SHA256_METADATA)
    if partial.stat().st_size != described["ContentLength"] or (expected is not None and expected != sha256):
        partial.unlink()
        raise S3Error(f"{target}: the downloaded bytes do not match the object's size or SHA-256")
    partial.replace(local)
    return {"etag": described["ETag"], "size": described["ContentLength"], "sha256": sha256}


def _save(index_path: Path, index: dict[str, Any]) -> None:
    index_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = index_path.with_name(index_path.name + ".tmp")
    tmp.write_text(json.dumps(index, indent=1, sort_keys=True))
    tmp.replace(index_path)
