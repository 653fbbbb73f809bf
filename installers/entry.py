"""Entry script of the frozen app (PyInstaller): the same as the ``microgui`` command.

``multiprocessing.freeze_support()`` must run first: sweeps and blocked runs start worker
processes, which in a frozen app re-enter this script. numba cannot cache compiled kernels next to
the (absent) source files of a frozen app, so the cache goes to a user folder instead.
"""

import multiprocessing
import os
import sys
from pathlib import Path

if __name__ == "__main__":
    multiprocessing.freeze_support()
    if getattr(sys, "frozen", False) and "NUMBA_CACHE_DIR" not in os.environ:
        base = os.environ.get("LOCALAPPDATA") or os.environ.get("XDG_CACHE_HOME")
        cache = Path(base) if base else Path.home() / ".cache"
        os.environ["NUMBA_CACHE_DIR"] = str(cache / "microgui" / "numba")

    from microgui.cli import main

    sys.exit(main())
