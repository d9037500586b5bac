"""Where the analysis commands read traces from: a local path (file or directory), or
``s3://bucket/prefix``, mirrored into a local cache first (``smppy.s3_cache``, docs/S3.md)."""

from __future__ import annotations

from pathlib import Path


def resolve_input(location: str) -> Path:
    """The local file or directory holding the traces named by ``location``.

    Raises FileNotFoundError, or ValueError (``smppy.s3.S3Error``) for S3 problems."""
    if location.startswith("s3://"):
        from smppy.s3 import S3Uri
        from smppy.s3_cache import mirror

        return mirror(S3Uri.parse(location))
    path = Path(location)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {location}")
    return path
