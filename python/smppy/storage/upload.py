"""Trace files to S3: the upload engine of ``smprof upload DIR s3://bucket/prefix`` (the command is
``smppy.cli.upload``) and of the background upload during a run (``_background_upload.py``).

Only files with a footer are uploaded (a closed file is final); a file still being written, or
damaged, is skipped and listed. Objects go to ``<prefix>/<job>/<host>/<file name>``. A rerun
uploads only what is missing or different (size, SHA-256 and S3's own checksum: ``smppy.storage.s3``),
so it is safe to run again after a failure. docs/S3.md has the details.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from smppy import _smppy
from smppy.storage.s3 import (
    DEFAULT_MULTIPART_THRESHOLD,
    DEFAULT_PART_SIZE,
    PART_SIZE_METADATA,
    SHA256_METADATA,
    S3Error,
    S3Uri,
    check_bucket,
    compare,
    digest_file,
    explain,
    head,
    object_key,
    upload_part_size,
)
from smppy.storage.trace_files import find_trace_files


class UploadProgress(Protocol):
    """What ``upload_directory`` reports to (the command's ``Progress``): totals once the files are
    listed, then bytes as they go and each file as it is done."""

    total_bytes: int
    total_files: int

    def add_bytes(self, n: int) -> None: ...

    def file_done(self) -> None: ...


@dataclass(frozen=True)
class TransferOptions:
    multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD  # bytes; smaller files go in one PUT
    part_size: int = DEFAULT_PART_SIZE  # bytes per part (S3's minimum of 5 MiB applies)
    max_concurrency: int = 4  # parts in flight per file
    use_threads: bool = True  # False: parts one after another on the calling thread


@dataclass
class FileOutcome:
    path: Path
    action: str  # uploaded, reuploaded, unchanged, incomplete, failed
    key: str = ""
    size: int = 0
    detail: str = ""  # why incomplete or failed, or what was wrong with the object
    deleted: bool = False


def complete_header(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The header of a complete trace file (read to its footer), or None and why not."""
    try:
        trace = _smppy.TraceFile(os.fspath(path))
        while trace.next_frame() is not None:
            pass
    except (ValueError, RuntimeError, OSError) as e:
        return None, str(e)
    if trace.footer is None:
        return None, trace.problem or "no footer: still being written, or its process was killed"
    if trace.problem:
        return None, trace.problem
    return trace.header, ""


def upload_file(
    client: Any,
    path: Path,
    uri: S3Uri,
    options: TransferOptions = TransferOptions(),
    delete_after_upload: bool = False,
    on_bytes: Callable[[int], None] | None = None,
    known_complete: bool = False,
) -> FileOutcome:
    """Uploads one trace file unless an identical object is there; verifies the object (HEAD:
    size, SHA-256 metadata, S3 checksum) before deleting the file. A file is read to its footer
    only when it is to be uploaded (an identical object proves it was complete): without one it
    is ``incomplete`` and stays. ``known_complete``: the caller knows the footer is there (libsmprof
    closed the file), so the file is not decoded (which would hold the GIL). Raises S3Error."""
    from boto3.s3.transfer import TransferConfig

    try:
        header = _smppy.TraceFile(os.fspath(path)).header
    except (ValueError, OSError) as e:
        return FileOutcome(path, "incomplete", detail=str(e))
    key = object_key(uri, header["job"], header["host"], path.name)
    target = f"s3://{uri.bucket}/{key}"
    try:
        size = path.stat().st_size
        digest = digest_file(path, upload_part_size(size, options.multipart_threshold, options.part_size))
        before = compare(head(client, uri.bucket, key), digest, path)
        outcome = FileOutcome(path, "unchanged", key, size)
        if before != "same":
            if not known_complete:
                complete, why = complete_header(path)
                if complete is None:
                    return FileOutcome(path, "incomplete", key, size, why)
            config = TransferConfig(
                multipart_threshold=options.multipart_threshold,
                multipart_chunksize=options.part_size,
                max_concurrency=options.max_concurrency,
                use_threads=options.use_threads,
            )
            extra = {
                "Metadata": {SHA256_METADATA: digest.sha256, PART_SIZE_METADATA: str(digest.part_size)},
                "ChecksumAlgorithm": "SHA256",
            }
            client.upload_file(str(path), uri.bucket, key, ExtraArgs=extra, Config=config, Callback=on_bytes)
            after = compare(head(client, uri.bucket, key), digest, path)
            if after != "same":
                raise S3Error(f"{target}: the uploaded object does not match the file ({after})")
            outcome.action = "reuploaded" if before == "corrupt" else "uploaded"
            if before == "corrupt":
                outcome.detail = "the object's bytes did not match its checksum"
        elif on_bytes is not None:
            on_bytes(size)
    except Exception as e:
        raise explain(e, target) from None
    if delete_after_upload:
        path.unlink()
        outcome.deleted = True
    return outcome


def upload_directory(
    directory: Path,
    uri: S3Uri,
    client: Any,
    options: TransferOptions = TransferOptions(),
    delete_after_upload: bool = False,
    jobs: int = 4,
    progress: UploadProgress | None = None,
    on_bytes: Callable[[Path, int], None] | None = None,
) -> list[FileOutcome]:
    """Uploads every complete trace file under ``directory``, ``jobs`` files at a time, in
    ``find_trace_files`` order. Per-file errors become ``failed`` outcomes, files without a
    footer ``incomplete`` ones; a missing bucket raises S3Error first."""
    check_bucket(client, uri)

    files = find_trace_files(directory)
    if progress is not None:
        progress.total_bytes = max(sum(p.stat().st_size for p in files), 1)
        progress.total_files = len(files)

    def one(path: Path) -> FileOutcome:
        def count(n: int) -> None:
            if progress is not None:
                progress.add_bytes(n)
            if on_bytes is not None:
                on_bytes(path, n)

        try:
            return upload_file(client, path, uri, options, delete_after_upload, count)
        except S3Error as e:
            return FileOutcome(path, "failed", detail=str(e))
        finally:
            if progress is not None:
                progress.file_done()

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, files))
