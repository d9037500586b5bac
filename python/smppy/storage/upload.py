"""``smprof upload DIR s3://bucket/prefix``: every complete trace file under DIR to S3.

Only files with a footer are uploaded (a closed file is final); a file still being written, or
damaged, is skipped and listed. Objects go to ``<prefix>/<job>/<host>/<file name>``. A rerun
uploads only what is missing or different (size, SHA-256 and S3's own checksum: ``smppy.s3``),
so it is safe to run again after a failure. docs/S3.md has the details.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from smppy.s3 import (
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
    make_client,
    object_key,
    upload_part_size,
)
from smppy.trace import find_trace_files, open_trace


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
        trace = open_trace(path)
        for _ in trace.frames():
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
        header = open_trace(path).header
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


class Progress:
    """Bytes and files done, on stderr: a redrawn bar on a terminal, else a line per file."""

    def __init__(self, total_bytes: int, total_files: int, stream: TextIO, enabled: bool = True) -> None:
        self.total_bytes, self.total_files = max(total_bytes, 1), total_files
        self.bytes = self.files = 0
        self.stream = stream
        self.enabled = enabled
        self.tty = enabled and stream.isatty()
        self._lock = threading.Lock()
        self._drawn = 0.0

    def add_bytes(self, n: int) -> None:
        with self._lock:
            self.bytes += n
            if self.tty and time.monotonic() - self._drawn > 0.1:
                self._draw()

    def file_done(self) -> None:
        with self._lock:
            self.files += 1
            if self.tty:
                self._draw()
            elif self.enabled:
                print(f"upload: {self._text()}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=self.stream, flush=True)

    def _text(self) -> str:
        done = min(self.bytes, self.total_bytes)
        return (
            f"{100 * done // self.total_bytes:3d}% {done / 2**20:.1f} of {self.total_bytes / 2**20:.1f} MiB, "
            f"{self.files} of {self.total_files} files"
        )

    def _draw(self) -> None:
        self._drawn = time.monotonic()
        filled = 30 * min(self.bytes, self.total_bytes) // self.total_bytes
        print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self._text()}", end="", file=self.stream, flush=True)


def upload_directory(
    directory: Path,
    uri: S3Uri,
    client: Any,
    options: TransferOptions = TransferOptions(),
    delete_after_upload: bool = False,
    jobs: int = 4,
    progress: Progress | None = None,
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


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(|k|kib|m|mib|g|gib)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30}


def parse_size(text: str) -> int:
    """``8MiB``, ``512KiB``, ``1GiB`` or a number of bytes."""
    match = _SIZE.match(text)
    if match is None or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 8MiB, 512KiB, 1048576)")
    return int(float(match[1]) * _UNITS[match[2].lower()])


def cmd_upload(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    if not directory.exists():
        raise FileNotFoundError(f"no such file or directory: {args.dir}")
    try:
        uri = S3Uri.parse(args.uri)
        client = make_client(args.endpoint_url, max_attempts=args.max_attempts)
        progress = Progress(0, 0, sys.stderr, enabled=not args.no_progress)
        options = TransferOptions(args.multipart_threshold, args.part_size, args.concurrency)
        outcomes = upload_directory(
            directory, uri, client, options, args.delete_after_upload, args.jobs, progress
        )
    except S3Error as e:
        print(f"smprof: error: {e}", file=sys.stderr)
        return 2
    progress.close()
    for o in outcomes:
        where = f"s3://{uri.bucket}/{o.key}"
        if o.action in ("uploaded", "reuploaded", "unchanged"):
            note = f" ({o.detail})" if o.detail else ""
            gone = ", local file deleted" if o.deleted else ""
            print(f"{o.action:<10} {o.path} -> {where} ({o.size} bytes){note}{gone}")
        elif o.action == "incomplete":
            print(f"skipped    {o.path}: not complete ({o.detail})")
        else:
            print(f"failed     {o.path}: {o.detail}", file=sys.stderr)
    counts = {a: sum(o.action == a for o in outcomes) for a in ("uploaded", "reuploaded", "unchanged")}
    skipped = sum(o.action == "incomplete" for o in outcomes)
    failed = sum(o.action == "failed" for o in outcomes)
    print(
        f"{counts['uploaded']} uploaded, {counts['reuploaded']} re-uploaded, "
        f"{counts['unchanged']} already there, {skipped} skipped (incomplete), {failed} failed"
    )
    if failed:
        print("smprof: error: some files were not uploaded; run the same command again", file=sys.stderr)
    return 1 if failed else 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "upload",
        help="upload complete trace files to S3 (<prefix>/<job>/<host>/<file>), skipping what is there",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", help="a directory of trace files (searched recursively), or one file")
    p.add_argument("uri", help="s3://bucket or s3://bucket/prefix")
    p.add_argument(
        "--endpoint-url",
        help="an S3-compatible endpoint (default: AWS, or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)",
    )
    p.add_argument(
        "--delete-after-upload",
        action="store_true",
        help="delete each local file once its object is verified (size and SHA-256)",
    )
    p.add_argument("--jobs", type=int, default=4, help="files uploaded at once (default 4)")
    p.add_argument("--concurrency", type=int, default=4, help="parts in flight per file (default 4)")
    p.add_argument(
        "--multipart-threshold",
        type=parse_size,
        default=DEFAULT_MULTIPART_THRESHOLD,
        help="files this large or larger go in parts (default 64MiB)",
    )
    p.add_argument(
        "--part-size",
        type=parse_size,
        default=DEFAULT_PART_SIZE,
        help="bytes per part (default 16MiB; min 5MiB)",
    )
    p.add_argument(
        "--max-attempts",
        type=int,
        default=5,
        help="tries per request, with exponential backoff (default 5)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_upload)
