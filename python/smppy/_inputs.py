"""Where the analysis commands read traces from: a local path (file or directory)."""

from __future__ import annotations

from pathlib import Path


def resolve_input(location: str) -> Path:
    """The local file or directory holding the traces named by ``location``."""
    path = Path(location)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {location}")
    return path
