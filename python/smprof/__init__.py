"""``import smprof`` is ``import smppy``: the same module object."""

import sys

import smppy

sys.modules[__name__] = smppy
