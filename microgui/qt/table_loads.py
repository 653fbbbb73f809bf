"""Reading a table in the background (a large Excel sheet takes a while) for the controller.

The loads have a one-thread pool of their own, so that opening a table never waits behind a
run. A load's context is (the path, the project to apply to the table or None), so a newer load
drops an older one's project. The ends are the controller's signals (``load_progress``,
``load_failed``, ``load_cancelled``); a table read becomes the controller's dataset, and the
project it was opened for is applied to it (:func:`~microgui.qt.project_restore.apply_project`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Slot

from microgui.core.runs.project_file import Project
from microgui.core.table.dataset import Dataset
from microgui.qt.project_restore import apply_project
from microgui.qt.workers import TaskSlot, make_run_pool

#: The window's :class:`~microgui.qt.controller.AppController` (not imported: it imports this
#: module, and the package has no import cycle, type-only ones included).
AppController = Any

__all__ = ["TableLoads"]


class TableLoads(QObject):
    """The table being read for one controller (at most one: a newer load supersedes)."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller)
        self._controller = controller
        self.pool: QThreadPool = make_run_pool(controller)
        self.slot = TaskSlot(self.pool, self)
        self.slot.progress.connect(
            lambda i, f, s: controller.load_progress.emit(self.slot.context(i)[0], f, s)
        )
        self.slot.finished.connect(self._on_loaded)
        self.slot.failed.connect(lambda _i, m, d, ctx: controller.load_failed.emit(ctx[0], m, d))
        self.slot.cancelled.connect(lambda _load_id, ctx: controller.load_cancelled.emit(ctx[0]))

    def start(self, path: Path, project: Project | None) -> int:
        """Start reading ``path`` (for ``project``, or None); returns the load's id."""
        from microgui.core.io import read_table

        job = lambda progress: read_table(path, progress=progress)  # noqa: E731
        return self.slot.start(job, (path, project))

    def start_demo(self) -> int:
        """Start reading the bundled demo table with its roles
        (:func:`~microgui.core.demo.load_demo`); returns the load's id. The app opens it so at
        start-up: reading it and explaining its roles held the GUI thread 150-250 ms before
        the window could paint (issue 30, session 46)."""
        from microgui.core.demo import demo_path, load_demo

        return self.slot.start(lambda _progress: load_demo(), (demo_path(), None))

    @Slot(int, object, object)
    def _on_loaded(self, _load_id: int, dataset: Any, context: Any) -> None:
        assert isinstance(dataset, Dataset)
        self._controller.set_dataset(dataset)
        if context[1] is not None:  # the project whose table this is
            apply_project(self._controller, context[1], dataset)
