"""Hierarchy files attached to quasi-identifiers in the app (issue 13).

A column's hierarchy file (ARX format, :func:`microgui.core.table.hierarchy.load_hierarchy`) is read and
matched against the column's values (:func:`microgui.core.table.hierarchy.hierarchy_coverage`) in the
controller's analysis pool, never in the GUI thread: a hierarchy may list millions of values.
:class:`HierarchyAttachments` keeps what was attached, by column, and emits ``changed``;
``failed`` carries a file that could not be read, with the core's message naming the file.

Runs get the files, not the read hierarchies: :meth:`HierarchyAttachments.files_for` gives the
``RunSpec.hierarchies`` of a method, the attached files of its quasi-identifiers when the method
uses hierarchies (``mstk``) and none otherwise, so a run of another method is never refused for
them. The run reads the files again, as ``microgui protect --hierarchy`` does, and refuses data
values missing from a hierarchy with the same message; the app shows those values as soon as the
file is attached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal, Slot

from microgui.core.methods.base import Method
from microgui.core.progress import ProgressFn
from microgui.core.table.dataset import Dataset
from microgui.core.table.hierarchy import (
    Hierarchy,
    HierarchyCoverage,
    hierarchy_coverage,
    load_hierarchy,
)
from microgui.core.table.roles import AttributeRole, RoleMap
from microgui.qt.workers import Job, RunSignals, RunWorker

__all__ = ["AttachedHierarchy", "HierarchyAttachments", "attach_job"]


@dataclass(frozen=True)
class AttachedHierarchy:
    """A hierarchy file attached to a column: the file, the hierarchy read from it and how the
    column's values meet it (``coverage.missing``: values a run would refuse)."""

    column: str
    path: Path
    hierarchy: Hierarchy
    coverage: HierarchyCoverage

    @property
    def complete(self) -> bool:
        return self.coverage.complete

    def short_text(self) -> str:
        """What the roles table shows: ✓ and the file name, or ⚠ and how many of the column's
        values the file misses (a run refuses them; the tooltip names the file)."""
        missing = len(self.coverage.missing)
        if missing:
            return f"⚠ {missing:,} value{'s' if missing != 1 else ''} missing"
        return f"✓ {self.path.name}"


def attach_job(dataset: Dataset, column: str, path: Path) -> Job:
    """The worker's job: read the file and match the column's values against it."""
    values = dataset.frame[column]

    def job(progress: ProgressFn) -> AttachedHierarchy:
        progress(0.0, f"reading hierarchy {path.name}")
        hierarchy = load_hierarchy(path)
        _ = hierarchy.levels  # computed (and cached) here, not when the dialog shows them
        progress(0.5, "matching the column's values")
        coverage = hierarchy_coverage(hierarchy, values, column)
        progress(1.0, "done")
        return AttachedHierarchy(column, path, hierarchy, coverage)

    return job


class HierarchyAttachments(QObject):
    """The hierarchy files attached to the columns of the open table.

    ``changed`` follows every attach, removal and clear; ``attached(column)`` follows a file
    read and matched; ``failed(column, path, message)`` a file that could not be read (the
    previous attachment of the column, if any, stays). Requests are superseded per column, and
    all at once by :meth:`clear` (another table): a late result never lands on the wrong table.
    """

    changed = Signal()
    attached = Signal(str)  # column
    failed = Signal(str, str, str)  # column, path, message

    def __init__(self, pool: QThreadPool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = pool
        self._items: dict[str, AttachedHierarchy] = {}
        self._next_id = 1
        #: request id -> (column, file, worker); only the latest request of a column counts
        self._workers: dict[int, tuple[str, Path, RunWorker]] = {}
        self._latest: dict[str, int] = {}

    # state ------------------------------------------------------------------------------
    def __contains__(self, column: object) -> bool:
        return column in self._items

    def get(self, column: str) -> AttachedHierarchy | None:
        return self._items.get(column)

    def items(self) -> dict[str, AttachedHierarchy]:
        """The attached hierarchies by column (a copy)."""
        return dict(self._items)

    def paths(self) -> dict[str, str]:
        """column -> file path, every attached hierarchy (what a project keeps)."""
        return {c: str(a.path) for c, a in self._items.items()}

    @property
    def pending(self) -> bool:
        """A file is being read."""
        return bool(self._latest)

    def files_for(self, method: Method | None, roles: RoleMap | None) -> dict[str, str]:
        """The ``RunSpec.hierarchies`` of a run of ``method``: the attached files of the
        quasi-identifiers when the method uses hierarchies, else none (a hierarchy of a column
        that is no longer a quasi-identifier stays attached but is not given)."""
        if method is None or not method.uses_hierarchies or roles is None:
            return {}
        return {
            c: str(a.path)
            for c, a in self._items.items()
            if c in roles and roles[c].role is AttributeRole.QUASI_IDENTIFIER
        }

    # changes ----------------------------------------------------------------------------
    def attach(self, dataset: Dataset, column: str, path: str | Path) -> int:
        """Read ``path`` as the hierarchy of ``column`` in the background; ``attached`` or
        ``failed`` follows. Returns the request's id."""
        if column not in dataset.frame.columns:
            raise KeyError(f"the table has no column {column!r}")
        path = Path(path).expanduser().absolute()
        previous = self._latest.get(column)
        if previous is not None and previous in self._workers:
            self._workers[previous][2].cancel()
        request = self._next_id
        self._next_id += 1
        signals = RunSignals()  # made here, in the GUI thread
        signals.finished.connect(self._on_finished)
        signals.failed.connect(self._on_failed)
        signals.cancelled.connect(self._on_cancelled)
        worker = RunWorker(request, attach_job(dataset, column, path), signals)
        self._workers[request] = (column, path, worker)
        self._latest[column] = request
        self._pool.start(worker)
        return request

    def attach_all(self, dataset: Dataset, files: Mapping[str, str | Path]) -> list[int]:
        """Attach several files (a project being opened); one request per column."""
        return [
            self.attach(dataset, column, path)
            for column, path in files.items()
            if column in dataset.frame.columns
        ]

    def remove(self, column: str) -> bool:
        """Detach the hierarchy of ``column`` (and drop a file still being read for it)."""
        request = self._latest.pop(column, None)
        if request is not None and request in self._workers:
            self._workers[request][2].cancel()
        if self._items.pop(column, None) is None:
            return False
        self.changed.emit()
        return True

    def clear(self) -> None:
        """Forget every attachment and pending request (another table was opened)."""
        for _column, _path, worker in self._workers.values():
            worker.cancel()
        self._latest.clear()
        had = bool(self._items)
        self._items.clear()
        if had:
            self.changed.emit()

    def cancel_all(self) -> None:
        """Ask every pending request to stop (the window closes)."""
        for _column, _path, worker in self._workers.values():
            worker.cancel()
        self._latest.clear()

    # worker signals ----------------------------------------------------------------------
    def _end(self, request: int) -> tuple[str, Path] | None:
        """Release a finished request; its column and file when it is still the latest."""
        column, path, _worker = self._workers.pop(request, ("", Path(), None))
        if not column or self._latest.get(column) != request:
            return None
        del self._latest[column]
        return column, path

    @Slot(int, object)
    def _on_finished(self, request: int, outcome: Any) -> None:
        ended = self._end(request)
        if ended is None:
            return
        column = ended[0]
        assert isinstance(outcome, AttachedHierarchy)
        self._items[column] = outcome
        self.changed.emit()
        self.attached.emit(column)

    @Slot(int, str, str)
    def _on_failed(self, request: int, message: str, _details: str) -> None:
        ended = self._end(request)
        if ended is not None:
            self.failed.emit(ended[0], str(ended[1]), message)

    @Slot(int)
    def _on_cancelled(self, request: int) -> None:
        self._end(request)
