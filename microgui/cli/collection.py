"""Python's cyclic garbage collector during a command's start-up (issue 33).

``microgui protect`` of 100,000 x 10 imports pandas, pyarrow, numba (whose kernels' loading
pulls in scipy.linalg) and the run's modules before its kernel starts: hundreds of thousands of
long-lived objects. Python's automatic collector ran meanwhile, about 370 young and 3 full
collections, each full one scanning every object of the process while holding the GIL (in the
main thread or in the kernel preload's): 0.18-0.25 s of the command at a load average of 2.3 on
2 cores, 0.19-0.44 s at 3-7 (timed with :data:`gc.callbacks`), and the garbage those passes
found was a few thousand small objects (the parser's help formatters, import leftovers; no
array). With the hold: 35 young collections and one full, 0.02-0.07 s; the command's start to
its kernel 0.08-0.10 s shorter (3 pairs at a load of 2.5; its CPU time 0.3-0.5 s less).

So a command that ends its process when it returns (the console script) holds automatic
collection from its start (:func:`hold`). Once its own imports are done (the table about to be
read) it may freeze what exists (:func:`imports_done`, :func:`gc.freeze`: modules and their
objects leave the collector's reach, with the few hundred small leftovers among them). When
the table is read (:func:`release`) one collection looks only at what came after the freeze
(0.02-0.04 s at 100,000 x 10: the table, the kernels loaded beside the read; a reader's cyclic
garbage, an Excel workbook say, is freed there, never kept), what survives is frozen too, and
collection is automatic again for the run, its report and its release, whose garbage is freed
as before (as :mod:`microgui.qt.gui_gc` settles after the app's start-up). A command that never
calls :func:`release` has it called when it returns (:func:`microgui.cli.main`).
"""

from __future__ import annotations

import gc

__all__ = ["hold", "imports_done", "release", "held"]

_held = False


def hold() -> None:
    """Stop automatic collection for the start-up of a command whose process ends with it
    (nothing when collection is already off: someone else holds it)."""
    global _held
    if not _held and gc.isenabled():
        gc.disable()
        _held = True


def imports_done() -> None:
    """Under a hold, freeze the objects made so far (the start-up's imports): the collection of
    :func:`release` does not look at them again. Nothing without a hold."""
    if _held:
        gc.freeze()


def release() -> None:
    """End the hold of :func:`hold`: collect once (what was not frozen), freeze what survives
    and collect automatically again. Nothing without a hold (a command run by a caller, e.g.
    the tests' ``main(argv)``)."""
    global _held
    if _held:
        _held = False
        gc.collect()
        gc.freeze()
        gc.enable()


def held() -> bool:
    """Whether automatic collection is held by :func:`hold` now."""
    return _held
