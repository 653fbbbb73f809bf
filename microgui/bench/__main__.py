"""``python -m microgui.bench`` (see :mod:`microgui.bench`)."""

import sys

from microgui.bench.cli import main

sys.exit(main())
