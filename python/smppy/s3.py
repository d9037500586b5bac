"""``smppy.s3`` is ``smppy.storage.s3``: the same module object (the old path of a moved module)."""

import sys

from smppy.storage import s3 as _moved

sys.modules[__name__] = _moved
