"""Where numba caches the compiled kernels: one folder per version of *all* the kernel sources.

numba's on-disk cache (``cache=True``) is keyed on the source file of each jitted function only.
A cached function embeds the code of the jitted functions it calls, and numba does not notice
when a callee defined in another file changes (numba documentation, "Cache invalidation fails to
recognize changes in functions defined in a different file"; numba issue #1833). Our kernels call
across files (tfrp → cbfs → mdav, tcloseness → mdav, …). Here it was not theoretical: after kernel
files had changed, stale cache entries in ``__pycache__`` gave a TFRP partition that differed from
the pure-Python reference (EIA, k = 10: IL 2.6644 instead of 2.6636, depending on which method had
run first in the process) and a t-closeness release whose merged groups were not t-close.

So before any kernel is compiled, :func:`configure` points numba's cache at a folder named after
microgui's version and a hash of every ``.py`` file of this package: any change to any kernel
source gives a new folder, and every kernel is compiled afresh once. The folder is under
``NUMBA_CACHE_DIR`` when the user (or the frozen app's entry script) set one, else under the user's
cache folder (``$XDG_CACHE_HOME``/``~/.cache``, ``%LOCALAPPDATA%`` on Windows); it is never the
source tree, which may not be writable. Folders of older hashes unused for an hour are removed. If none of this can
be written, numba falls back to compiling at every start (the kernels still run).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import numba

from microgui._version import __version__

__all__ = ["configure", "cache_folder", "source_hash", "njit"]

_PREFIX = "kernels-"
_configured: Path | None = None


def njit(fn: Callable[..., Any]) -> Any:
    """``numba.njit(cache=True, nogil=True)``: every kernel of the methods.

    ``nogil``: the kernels touch no Python object, so they release the GIL while they run; the
    app's GUI thread then keeps its event loop going during a run (measured: the longest stall
    during a 60,000-record MDAV run fell from 1.24 s to 47 ms). Without a cache location for the
    source file (a frozen application shipped without ``.py`` sources) numba refuses
    ``cache=True``; the kernel is then compiled at first use.
    """
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True)(fn)


def source_hash() -> str:
    """A short hash of every ``.py`` file of ``microgui.core.methods`` (names and contents)."""
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _base() -> Path:
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user)
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "microgui" / "numba"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "microgui" / "numba"


def cache_folder() -> Path:
    """The cache folder of this version of the kernel sources."""
    return _base() / f"{_PREFIX}{__version__}-{source_hash()}"


def configure() -> Path | None:
    """Point numba's cache at :func:`cache_folder` (once per process); returns the folder, or
    None when it cannot be created (numba then keeps its default behaviour)."""
    global _configured
    if _configured is not None:
        return _configured
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    # numba.config creates its settings at run time (from the environment), so no stub knows them
    numba.config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    _configured = folder
    now = time.time()
    for old in folder.parent.glob(f"{_PREFIX}*"):
        # a stale version's kernels; not one touched in the last hour, which another process
        # (of another checkout or version) may still be using
        with suppress(OSError):
            if old != folder and old.is_dir() and now - old.stat().st_mtime > 3600:
                shutil.rmtree(old, ignore_errors=True)
    return folder


configure()  # at import: the package imports this module before any kernel module
