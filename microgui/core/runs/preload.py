"""Loading a command's kernels from numba's cache while it reads its input (issue 33).

``microgui protect`` of 100,000 x 10 spent 0.5-0.9 s (under load) inside its kernel's time
loading the kernels from numba's on-disk cache (:mod:`microgui.core.methods.jit_cache`): numba's
registry, the imports it pulls in (scipy.linalg's among them) and each kernel's machine code.
None of it depends on the table, so :func:`preload_kernels` does it in a thread of its own from
the moment the command's options are checked, beside the reading of the CSV (pyarrow's reader
releases the GIL). It never compiles: a compile belongs to the run, which says so.
"""

from __future__ import annotations

import threading
from contextlib import suppress

__all__ = ["PRELOAD_PRUNED_MIN_BYTES", "preload_kernels"]

#: :func:`preload_kernels` loads the pruned search's kernels for an input file of at least this
#: many bytes: about 30,000 records of 10 numbers as programs write them (17 digits), where
#: MDAV's ``search="auto"`` takes the pruned search (``spatial.PRUNED_MIN_N``); below, the
#: passes, whose kernel is another.
PRELOAD_PRUNED_MIN_BYTES = 5 * 2**20

#: The methods whose partition the pruned MDAV kernels compute (``mdav-generic`` with
#: categorical attributes too: the same kernels, the same argument types).
_PRUNED_MDAV = ("mdav", "mdav-generic")


class _CompileAhead(Exception):
    """A kernel the preload would load is not in the cache: it would compile it instead."""


def _refuse_compile(_module: str, _name: str) -> None:
    raise _CompileAhead


def preload_kernels(method: str | None, input_bytes: int) -> threading.Thread:
    """Load from numba's on-disk cache, in a thread of its own, the kernels a command's run
    will call, while the command reads its input (issue 33: loading them, numba's registry and
    the imports it pulls in, scipy.linalg's among them, took 0.5-0.9 s of the 100,000 x 10
    ``microgui protect``, inside its kernel's time). Returns the started thread (a daemon; the
    caller joins it before leaving, so that it never outlives the command's work).

    Loaded: the optimal univariate partition's kernel (every run's IL lower bound,
    :mod:`microgui.core.methods.bound`), and for ``mdav``/``mdav-generic`` on an input of at
    least :data:`PRELOAD_PRUNED_MIN_BYTES` the pruned search's kernels. Nothing is ever
    compiled here: a kernel missing from the cache (the first run after installing) stops the
    preload before its compile begins (:func:`~microgui.core.methods.jit_cache.watching_compiles`),
    and the run compiles it as before, saying so. numba's compiler lock makes a run that calls a
    kernel being loaded wait for it, then use it: the release is the same either way."""
    pruned = method in _PRUNED_MDAV and input_bytes >= PRELOAD_PRUNED_MIN_BYTES

    def load() -> None:
        import numpy as np

        from microgui.core.methods.jit_cache import watching_compiles
        from microgui.core.methods.threads import using_threads

        # one thread: the parallel kernels' pieces are a dozen records here
        with suppress(Exception), watching_compiles(_refuse_compile), using_threads(1):
            from microgui.core.methods.univariate import hansen_mukherjee_sse

            hansen_mukherjee_sse(np.arange(4, dtype=np.float64), 2)
            if pruned:
                from microgui.core.methods.mdav import mdav

                # as mdav's warm-up calls it: the same argument types as any run's
                mdav(np.random.default_rng(0).normal(size=(12, 2)), 2, search="pruned")

    thread = threading.Thread(target=load, name="microgui-preload", daemon=True)
    thread.start()
    return thread
