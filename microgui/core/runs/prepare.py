"""Filling the on-disk kernel cache in a child process (issue 30): ``python -m microgui.core.runs.prepare``.

The app's background preparation (:class:`microgui.qt.kernel_prep.KernelPrep`) used to compile
every kernel in the app's own process: numba's type inference and LLVM calls hold the GIL, so the
GUI thread stood still up to 438 ms at a time (idle measurement of session 41, empty cache). This
module runs the same warm-ups in a process of its own, at low priority (``os.nice``; below normal
on Windows), with the same cache folder (:func:`microgui.core.methods.jit_cache.configure`: same
version, same source hash, same ``NUMBA_CACHE_DIR``); the app then only loads the kernels, when a
run first calls them. numba writes each cache file to a temporary name and renames it
(``numba.core.caching._CacheFileImpl._open_for_write``), and :mod:`jit_cache` locks the index
files, so a child killed mid-compile (the window closed) or compiling the kernel a run compiles
at the same moment leaves no broken entry.

Protocol (stdout, one line each, flushed): ``total N`` first, then for each method in
:func:`preparation_list`'s order ``ready I NAME`` or ``failed I NAME``, where I counts the methods
done so far; a line ``compiled`` before the first kernel compile (a cache that was empty, as
opposed to one that only loads). Exit status 0 when the list went through (failed warm-ups
included: those methods compile at their first run).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from contextlib import suppress

__all__ = [
    "first_needed",
    "preparation_list",
    "lower_priority",
    "preload_kernels",
    "PRELOAD_PRUNED_MIN_BYTES",
    "main",
]

#: A warm-up: compiles (or loads) a method's kernels, returns the seconds it took.
WarmUp = Callable[[], float]


def first_needed(warm_up: WarmUp | None) -> int:
    """The preparation's order (here and in the app's in-process preparation): MDAV's kernels
    (the proposed run's), then the optimal univariate partition's (every run's lower bound
    compiles it: a run started later then finds it ready), then the others in the registry's
    order; a method without kernels first (nothing to wait for)."""
    if warm_up is None:  # no kernels: ready at once
        return -1
    module = warm_up.__module__
    return 0 if module.endswith(".mdav") else 1 if module.endswith(".univariate") else 2


def preparation_list() -> list[tuple[str, WarmUp | None]]:
    """Every (name, warm-up) pair the preparation goes through: the registry's methods, the
    refinement any partitioning method may end with, a plan's local suppression step."""
    from microgui.core.methods import available_methods
    from microgui.core.methods.local_suppression import warm_up as suppression_warm_up
    from microgui.core.methods.refine import warm_up as refine_warm_up

    methods: list[tuple[str, WarmUp | None]] = [(m.name, m.warm_up) for m in available_methods()]
    methods.append(("refinement", refine_warm_up))
    methods.append(("local suppression", suppression_warm_up))
    return methods


def lower_priority() -> None:
    """This process at the lowest priority: a run of the app gets the processors first."""
    try:
        if os.name == "nt":  # pragma: no cover - Windows only
            import ctypes

            below_normal = 0x4000
            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
            kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), below_normal)
        else:
            os.nice(19)
    except (OSError, AttributeError):
        pass


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


def main() -> int:
    lower_priority()
    from microgui.core.methods.jit_cache import on_first_compile

    said = threading.Event()

    def compiled(_kernel: str) -> None:
        if not said.is_set():
            said.set()
            print("compiled", flush=True)

    on_first_compile(compiled)
    methods = preparation_list()
    print(f"total {len(methods)}", flush=True)
    # MDAV's kernels first (the proposed run's), then the lower bound's; a warm-up shared by
    # several names runs once
    order = sorted(range(len(methods)), key=lambda i: first_needed(methods[i][1]))
    done: dict[WarmUp, bool] = {}
    for count, i in enumerate(order, 1):
        name, warm_up = methods[i]
        ok = True
        if warm_up is not None:
            if warm_up not in done:
                try:
                    warm_up()
                    done[warm_up] = True
                except Exception as exc:  # noqa: BLE001 - that method compiles at its first run
                    done[warm_up] = False
                    print(f"error {name}: {type(exc).__name__}", file=sys.stderr, flush=True)
            ok = done[warm_up]
        print(f"{'ready' if ok else 'failed'} {count} {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
