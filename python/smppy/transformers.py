"""``smppy.transformers``, the old path of ``smppy.integrations.transformers``: the same module object."""

import sys

from smppy.integrations import transformers as _moved

sys.modules[__name__] = _moved
