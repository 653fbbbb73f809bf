"""Python's cyclic garbage collector during a command's start-up (issue 33).

``microgui protect`` of 100,000 x 10 imports pandas, pyarrow, numba (whose kernels' loading
pulls in scipy.linalg) and the run's modules before its kernel starts: hundreds of thousands of
long-lived objects. Python's automatic collector ran meanwhile, about 370 young and 3 full
collections, each full one scanning every object of the process while holding the GIL (in the
main thread or in the kernel preload's): 0.19-0.44 s of the command (counted with
:data:`gc.callbacks`, a loaded 2-core machine), and the garbage those passes found was a few
thousand small objects (the parser's help formatters, import leftovers; no array).

So a command that ends its process when it returns (the console script) holds automatic
collection from its start (:func:`hold`) to the moment its imports are done and its table is
read (:func:`release`): then it freezes what exists (:func:`gc.freeze`: the start-up's objects
leave the collector's reach, so later full collections scan only what came after) and collects
automatically again, for the run, its report and its release, whose garbage is freed as before.
The cost: the start-up's few cyclic leftovers are never freed (a bounded amount, as
:mod:`microgui.qt.gui_gc` accepts after the app's start-up). A command that never calls
:func:`release` has it called when it returns (:func:`microgui.cli.main`).
"""

from __future__ import annotations

import gc

__all__ = ["hold", "release", "held"]

_held = False


def hold() -> None:
    """Stop automatic collection for the start-up of a command whose process ends with it
    (nothing when collection is already off: someone else holds it)."""
    global _held
    if not _held and gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """End the hold of :func:`hold`: freeze the objects made so far and collect automatically
    again. Nothing without a hold (a command run by a caller, e.g. the tests' ``main(argv)``)."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def held() -> bool:
    """Whether automatic collection is held by :func:`hold` now."""
    return _held
