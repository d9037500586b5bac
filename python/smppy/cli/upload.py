"""``smprof upload DIR s3://bucket/prefix``: every complete trace file under DIR to S3.

Only files with a footer are uploaded (a closed file is final); a file still being written, or
damaged, is skipped and listed. Objects go to ``<prefix>/<job>/<host>/<file name>``. A rerun
uploads only what is missing or different (size, SHA-256 and S3's own checksum: ``smppy.storage.s3``),
so it is safe to run again after a failure. docs/S3.md has the details.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from smppy.storage.s3 import DEFAULT_MULTIPART_THRESHOLD, DEFAULT_PART_SIZE, S3Error, S3Uri, make_client
from smppy.storage.upload import TransferOptions, upload_directory


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
