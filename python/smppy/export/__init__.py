"""What ``smprof export`` writes, as functions (docs/EXPORT.md): the timeline
(``export_timeline``: Chrome JSON or Perfetto, ``timeline.py``) and the tables as Parquet datasets
(``export_parquet``, ``parquet.py``)."""

from smppy.export.parquet import DEFAULT_BATCH_ROWS, export_parquet
from smppy.export.timeline import TIMELINE_FORMATS, export_timeline, parse_int_ranges, time_arg

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "TIMELINE_FORMATS",
    "export_parquet",
    "export_timeline",
    "parse_int_ranges",
    "time_arg",
]
