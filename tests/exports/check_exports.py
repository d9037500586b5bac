"""Checks a shipped binary's exported dynamic symbols against its allow-list.

    python3 tests/exports/check_exports.py BINARY ALLOWLIST

Exports are what `nm -D --defined-only` lists, demangled; the allow-list holds one per line
(`#` comments). Exits 1 naming every symbol exported but not allowed (a protobuf, zstd, libpfm or
std:: symbol a host process could bind to or override) and every allowed one that is missing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def exported_symbols(binary: Path) -> set[str]:
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", "--demangle", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    # "ADDRESS TYPE NAME", where a demangled NAME may hold spaces.
    return {line.split(maxsplit=2)[2] for line in listing.splitlines() if len(line.split(maxsplit=2)) == 3}


def allowed_symbols(allowlist: Path) -> set[str]:
    lines = (line.strip() for line in allowlist.read_text().splitlines())
    return {line for line in lines if line and not line.startswith("#")}


def main() -> int:
    binary, allowlist = Path(sys.argv[1]), Path(sys.argv[2])
    exported, allowed = exported_symbols(binary), allowed_symbols(allowlist)
    unexpected, missing = sorted(exported - allowed), sorted(allowed - exported)
    for name in unexpected:
        print(f"{binary.name} exports {name}, which {allowlist.name} does not allow")
    for name in missing:
        print(f"{binary.name} does not export {name}, which {allowlist.name} lists")
    if not unexpected and not missing:
        print(f"{binary.name}: its {len(exported)} exported symbols are those of {allowlist.name}")
    return 1 if unexpected or missing else 0


if __name__ == "__main__":
    sys.exit(main())
