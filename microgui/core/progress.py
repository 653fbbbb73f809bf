"""Progress reporting and cancellation for long computations.

A progress function takes a fraction in [0, 1] and an optional short status text. The caller's
callback raises :class:`RunCancelled` when the user cancels; algorithms simply let it propagate.
Algorithms call it at natural checkpoints, about 100 times per run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["ProgressFn", "RunCancelled", "no_progress", "sub_progress", "Throttle"]


class ProgressFn(Protocol):
    def __call__(self, fraction: float, status: str = "", /) -> None: ...


class RunCancelled(Exception):
    """Raised by a progress callback to stop the computation that called it."""


def no_progress(fraction: float, status: str = "", /) -> None:
    """A progress function that does nothing."""


def sub_progress(progress: ProgressFn, start: float, stop: float) -> ProgressFn:
    """Map a stage's [0, 1] onto [start, stop] of the parent's progress."""
    span = stop - start

    def inner(fraction: float, status: str = "", /) -> None:
        progress(start + span * min(max(fraction, 0.0), 1.0), status)

    return inner


class Throttle:
    """Call ``progress`` only when the whole percent changes (cheap to call in a loop).

    Cancellation is still checked at every call that passes through, so a loop calling a
    ``Throttle`` every iteration stops within one percent of its work.
    """

    def __init__(self, progress: ProgressFn, status: str = "") -> None:
        self._progress: Callable[..., None] = progress
        self._status = status
        self._last = -1

    def __call__(self, fraction: float) -> None:
        pct = int(fraction * 100)
        if pct != self._last:
            self._last = pct
            self._progress(fraction, self._status)
