"""A watchdog of the GUI thread's stalls (issue 30: none above 100 ms), opt-in.

``MICROGUI_STALL_WATCH=1`` (or a threshold in ms, e.g. ``=80``) makes the main window start a
:class:`StallWatch`: a 10 ms :class:`QTimer` in the GUI thread stamps a heartbeat, and a daemon
thread looks at it every few ms; while the heartbeat is older than the threshold it samples the
GUI thread's Python stack (:func:`sys._current_frames`) and, once the stall ends, logs its length
with the distinct stacks seen (innermost frames of the project first) at WARNING on the
``microgui.stall`` logger. Python's cyclic collections are timed too (:data:`gc.callbacks`): one
that took longer than the threshold is logged with its generation.

A stall spent in C with the GIL held (a numba cache load, a pandas call in a worker) cannot be
sampled from Python while it lasts: the watchdog then sees the stack once the GIL comes back, and
the record says whether the GUI thread's stack changed meanwhile. ``py-spy dump --native`` is the
tool for those. The watchdog costs one wake-up every :data:`POLL_S` in a thread that holds the
GIL for microseconds; the records carry code locations only, never data.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Stall", "StallWatch", "watch_from_environment", "ENV"]

ENV = "MICROGUI_STALL_WATCH"
#: How often the watchdog thread looks at the heartbeat (seconds).
POLL_S = 0.02
log = logging.getLogger("microgui.stall")


@dataclass
class Stall:
    """One stall: ``ms`` long, ending ``at`` (perf_counter seconds), with the GUI thread's
    stacks sampled during it (each a list of "file:line function" lines, innermost last) and
    the collections (generation, ms) that ran in it."""

    ms: float
    at: float
    stacks: list[list[str]] = field(default_factory=list)
    collections: list[tuple[int, float]] = field(default_factory=list)
    #: the other threads' innermost frames while it lasted (name → distinct "file:line func")
    others: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        """The stall in a few lines: length, collections, the stacks' innermost frames."""
        lines = [f"GUI thread stalled {self.ms:.0f} ms"]
        if self.collections:
            lines.append(
                "  garbage collections: "
                + ", ".join(f"gen {g} {ms:.0f} ms" for g, ms in self.collections)
            )
        for stack in self.stacks:
            lines.append("  stack (innermost last):")
            lines.extend(f"    {frame}" for frame in stack[-12:])
        for name, frames in self.others.items():
            lines.append(f"  thread {name}: " + " ; ".join(frames[-6:]))
        return "\n".join(lines)


def _stack(frame: Any) -> list[str]:
    return [
        f"{os.path.relpath(f.filename) if 'microgui' in f.filename else f.filename}:{f.lineno} "
        f"{f.name}"
        for f in traceback.extract_stack(frame)
    ]


class StallWatch:
    """Watch the GUI thread (create and :meth:`start` it there)."""

    def __init__(self, threshold_ms: float = 100.0, *, log_stalls: bool = True) -> None:
        from PySide6.QtCore import QTimer

        self.threshold_s = threshold_ms / 1000.0
        self.log_stalls = log_stalls
        self.stalls: list[Stall] = []
        self.collections: list[tuple[int, float, float]] = []  # generation, ms, ended at
        self._gui = threading.get_ident()
        self._beat = time.perf_counter()
        self._timer = QTimer(interval=10)
        self._timer.timeout.connect(self._tick)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._current: list[list[str]] = []
        self._others: dict[str, list[str]] = {}
        self._gc_start = 0.0

    # GUI thread -------------------------------------------------------------------------
    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self._beat
        self._beat = now
        if gap > self.threshold_s:
            stall = Stall(
                ms=gap * 1000,
                at=now,
                stacks=self._current,
                others=self._others,
                collections=[(g, ms) for g, ms, end in self.collections if end >= now - gap],
            )
            self.stalls.append(stall)
            if self.log_stalls:
                log.warning("%s", stall.summary())
        self._current = []
        self._others = {}

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if threading.get_ident() != self._gui:
            return
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            now = time.perf_counter()
            self.collections.append((int(info["generation"]), (now - self._gc_start) * 1000, now))
            del self.collections[:-200]

    # watchdog thread --------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            if time.perf_counter() - self._beat <= self.threshold_s:
                continue
            frames = sys._current_frames()
            frame = frames.pop(self._gui, None)
            if frame is None:
                continue
            stack = _stack(frame)
            names = {t.ident: t.name for t in threading.enumerate()}
            mine = threading.get_ident()
            for ident, other in frames.items():
                if ident == mine:
                    continue
                inner = " < ".join(reversed(_stack(other)[-3:]))
                seen = self._others.setdefault(names.get(ident, str(ident)), [])
                if inner not in seen:
                    seen.append(inner)
            del frame, frames
            if not self._current or self._current[-1] != stack:
                self._current.append(stack)

    # control ----------------------------------------------------------------------------
    def start(self) -> StallWatch:
        """Start watching (from the GUI thread); returns self."""
        self._beat = time.perf_counter()
        self._timer.start()
        gc.callbacks.append(self._gc)
        self._thread = threading.Thread(target=self._watch, name="stall-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; the records stay."""
        self._timer.stop()
        self._stop.set()
        if self._gc in gc.callbacks:
            gc.callbacks.remove(self._gc)
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def longest(self) -> Stall | None:
        """The longest stall seen, or None."""
        return max(self.stalls, key=lambda s: s.ms, default=None)


def watch_from_environment() -> StallWatch | None:
    """A started :class:`StallWatch` when ``MICROGUI_STALL_WATCH`` is set (``1``: 100 ms; a
    number: that threshold in ms), else None."""
    value = os.environ.get(ENV, "").strip()
    if not value or value == "0":
        return None
    try:
        threshold = float(value) if value != "1" else 100.0
    except ValueError:
        threshold = 100.0
    if not logging.getLogger().handlers and not log.handlers:
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    return StallWatch(threshold).start()
