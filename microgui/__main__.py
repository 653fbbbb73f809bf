"""``python -m microgui``: the same as the ``microgui`` command."""

import sys

from microgui.cli import main

if __name__ == "__main__":
    sys.exit(main())
