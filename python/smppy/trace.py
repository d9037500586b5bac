"""``smppy.trace``, the old path of ``smppy.analysis.trace``: the same module object."""

import sys

from smppy.analysis import trace as _moved

sys.modules[__name__] = _moved
