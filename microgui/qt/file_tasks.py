"""Files written off the GUI thread: the window's file task (an export, a report).

Writing a release or a report takes seconds at a million records, so it runs in a one-thread
pool of its own, one at a time: a second one is refused while the first is written, and a file
being written is never cancelled half-way (its rename makes it whole or absent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QStatusBar

from microgui.qt.workers import TaskSlot, make_run_pool

__all__ = ["FileTasks"]


class FileTasks(QObject):
    """The one file task of a window. ``written`` carries the value of a job once its ``done``
    ran; a failure is shown with ``show_error(message, details, title=...)``; what is written
    shows in ``status_bar``."""

    written = Signal(object)

    def __init__(
        self,
        parent: QObject,
        show_error: Callable[..., Any],
        status_bar: QStatusBar,
    ) -> None:
        super().__init__(parent)
        self._show_error = show_error
        self._status_bar = status_bar
        self.pool: QThreadPool = make_run_pool(self)
        self._slot = TaskSlot(self.pool, self)
        self._slot.finished.connect(self._finished)
        self._slot.failed.connect(self._failed)
        self._name = ""

    @property
    def busy(self) -> bool:
        return self._slot.busy

    def start(
        self,
        name: str,
        job: Callable[[], Any],
        done: Callable[[Any], None],
        failure_title: str = "Cannot write",
    ) -> bool:
        """Write files in the file task's worker thread (an export, a report: seconds at a
        million records); ``done(value)`` runs in the GUI thread after. One at a time: a second
        one is refused while the first is written (it is never cancelled half-way)."""
        if self._slot.busy:
            self._show_error(
                f"Still writing {self._name}; try again when it is done.",
                title="Busy writing",
            )
            return False
        self._name = name
        self._status_bar.showMessage(f"Writing {name}…")
        self._slot.start(lambda _progress: job(), (done, failure_title))
        return True

    def _finished(self, _task_id: int, value: Any, context: Any) -> None:
        done, _title = context
        done(value)
        self.written.emit(value)

    def _failed(self, _task_id: int, message: str, details: str, context: Any) -> None:
        _done, title = context
        self._status_bar.clearMessage()
        self._show_error(message, details, title=title)
