"""``smppy.keras``, the old path of ``smppy.integrations.keras``: the same module object."""

import sys

from smppy.integrations import keras as _moved

sys.modules[__name__] = _moved
