"""The progress bar a command draws on a terminal (issue 17), and its other terminal notes."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["PROGRESS_AFTER_S", "TerminalProgress"]


def _compile_notice(_kernel: str) -> None:
    """One line on stderr when a run compiles kernels (a first run after installing)."""
    print(
        "microgui: preparing the method's compiled kernels, once after installing or updating "
        "(up to a minute); later runs start at once",
        file=sys.stderr,
        flush=True,
    )


#: A run shows its progress bar once it has lasted this long (seconds).
PROGRESS_AFTER_S = 2.0


class TerminalProgress:
    """A progress function drawing one plain-text progress bar line on a terminal (stderr), for
    runs longer than ``after_s`` (default :data:`PROGRESS_AFTER_S`): rewritten in place with ``\\r`` (at most ten times a second),
    ended with a newline by :meth:`close`. Thread-safe."""

    def __init__(
        self,
        stream: Any,
        after_s: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        self.stream = stream
        self.after_s = PROGRESS_AFTER_S if after_s is None else after_s
        self._clock = clock or time.monotonic
        self._started = self._clock()
        self._state = (0.0, "")
        self._line = ""  # what the current terminal line shows
        self._drawn_at = float("-inf")
        self._lock = threading.Lock()
        #: a bar was drawn (and so a newline ends it)
        self.drawn = False

    def __call__(self, fraction: float, status: str = "", /) -> None:
        with self._lock:
            self._state = (min(max(float(fraction), 0.0), 1.0), status)
            now = self._clock()
            if now - self._started >= self.after_s and now - self._drawn_at >= 0.1:
                self._draw(now)

    def _draw(self, now: float) -> None:
        import shutil

        fraction, status = self._state
        filled = int(fraction * 24)
        seconds = int(now - self._started)
        text = f"[{'#' * filled}{'-' * (24 - filled)}] {fraction:4.0%}  {status}  {seconds} s"
        text = "".join(ch if ch.isprintable() else " " for ch in text)
        text = text[: max(shutil.get_terminal_size((80, 24)).columns - 1, 20)]
        if text == self._line:
            return
        padding = " " * max(len(self._line) - len(text), 0)  # wipe a longer previous line
        self.stream.write(f"\r{text}{padding}")
        self.stream.flush()
        self._line, self._drawn_at, self.drawn = text, now, True

    def break_line(self) -> None:
        """End the bar's line so that another message starts on its own line (the bar goes on
        below it)."""
        with self._lock:
            if self._line:
                self.stream.write("\n")
                self.stream.flush()
                self._line = ""

    def close(self) -> None:
        """Draw the last state and end the line (nothing when no bar was drawn)."""
        with self._lock:
            if not self.drawn:
                return
            self._draw(self._clock())
            if self._line:
                self.stream.write("\n")
                self.stream.flush()
                self._line = ""


def _progress_bar_wanted(args: argparse.Namespace) -> bool:
    """A progress bar on stderr: not with ``--quiet``, and only when stderr is a terminal
    (never in a pipe, a log file or a test's captured output)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return not getattr(args, "quiet", False) and callable(isatty) and bool(isatty())
