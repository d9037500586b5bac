"""Reading traces from ``s3://``: the objects under a prefix, mirrored into a local cache.

The cache is ``$SMPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/smprof/s3``, else
``~/.cache/smprof/s3``; ``s3://bucket/a/b`` lands in ``<cache>/bucket/a/b/``. A downloaded file is
checked against the object's size and SHA-256 (``smprof-sha256`` metadata, written by
``smprof upload``) before it is used. An index beside the files remembers each object's ETag, size
and SHA-256, so a rerun downloads only objects that changed (and re-hashes the local copies to catch
local damage). Trace files that disappeared from the prefix disappear from the mirror.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from smppy.s3 import SHA256_METADATA, S3Error, S3Uri, check_bucket, digest_file, explain, head, make_client
from smppy.trace import TRACE_SUFFIX

INDEX_NAME = ".smprof-s3-index.json"


def cache_root() -> Path:
    if explicit := os.environ.get("SMPROF_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "smprof" / "s3"


def _list(client: Any, uri: S3Uri) -> dict[str, dict[str, Any]]:
    """The trace objects under ``uri`` by key (a prefix naming one object lists just it)."""
    if uri.prefix.endswith(TRACE_SUFFIX):
        found = head(client, uri.bucket, uri.prefix)
        return {} if found is None else {uri.prefix: {"ETag": found["ETag"], "Size": found["ContentLength"]}}
    objects = {}
    pages = client.get_paginator("list_objects_v2").paginate(
        Bucket=uri.bucket, Prefix=f"{uri.prefix}/" if uri.prefix else ""
    )
    for page in pages:
        for obj in page.get("Contents", []):
            if obj["Key"].endswith(TRACE_SUFFIX):
                objects[obj["Key"]] = obj
    return objects


def mirror(uri: S3Uri, client: Any = None, root: Path | None = None) -> Path:
    """Brings ``<root>/<bucket>/<prefix>`` up to date with the trace objects under ``uri`` and
    returns it. Raises FileNotFoundError if there are none, ``smppy.s3.S3Error`` on S3 problems
    or when a download does not match its object's checksum."""
    root = root or cache_root()
    client = client or make_client()
    bucket_dir = root / uri.bucket
    try:
        check_bucket(client, uri)
        objects = _list(client, uri)
    except Exception as e:
        raise explain(e, uri) from None
    if not objects:
        raise FileNotFoundError(f"no trace files (*{TRACE_SUFFIX}) under {uri}")
    index_path = bucket_dir / INDEX_NAME
    try:
        index: dict[str, dict[str, Any]] = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}

    for key, obj in sorted(objects.items()):
        local = bucket_dir / key
        known = index.get(key)
        if (
            known is not None
            and known["etag"] == obj["ETag"]
            and local.is_file()
            and local.stat().st_size == obj["Size"]
            and digest_file(local, 0).sha256 == known["sha256"]
        ):
            continue
        index[key] = _download(client, uri, key, local)
        _save(index_path, index)

    target = bucket_dir / uri.prefix
    if target.is_dir():
        wanted = {bucket_dir / key for key in objects}
        for stale in target.rglob(f"*{TRACE_SUFFIX}"):
            if stale not in wanted:
                stale.unlink()
                index.pop(stale.relative_to(bucket_dir).as_posix(), None)
        _save(index_path, index)
    return target


def _download(client: Any, uri: S3Uri, key: str, local: Path) -> dict[str, Any]:
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
