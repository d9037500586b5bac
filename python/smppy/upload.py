"""``smppy.upload``, the old path of ``smppy.storage.upload``: the same module object."""

import sys

from smppy.storage import upload as _moved

sys.modules[__name__] = _moved
