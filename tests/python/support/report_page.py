"""What a report page (``smprof report``) carries: the JSON of its data element."""

from __future__ import annotations

import json
import re
from typing import Any


def embedded_payload(page: str) -> dict[str, Any]:
    """The page's data: ``summary``, ``findings`` and ``report`` (smppy/report/__init__.py)."""
    match = re.search(r'<script type="application/json" id="smprof-data">(.*?)</script>', page, re.S)
    assert match, "the page carries its data"
    return json.loads(match.group(1))
