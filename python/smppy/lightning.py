"""``smppy.lightning``, the old path of ``smppy.integrations.lightning``: the same module object."""

import sys

from smppy.integrations import lightning as _moved

sys.modules[__name__] = _moved
