"""``smppy.parquet_export``, the old path of ``smppy.export.parquet``: the same module object."""

import sys

from smppy.export import parquet as _moved

sys.modules[__name__] = _moved
