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

__all__ = ["first_needed", "preparation_list", "lower_priority", "main"]

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
