"""``python -m smppy.cli``: the ``smprof`` command."""

import sys

from smppy.cli import main

sys.exit(main())
