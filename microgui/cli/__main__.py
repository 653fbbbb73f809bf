"""``python -m microgui.cli``: the same as the ``microgui`` command (as when cli was a module)."""

import sys

from microgui.cli import main

if __name__ == "__main__":
    sys.exit(main())
