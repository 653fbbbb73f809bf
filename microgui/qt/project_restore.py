"""Project files in the window (issue 7): the session saved as one (:func:`save_session`, the
crash-recovery :func:`autosave_session`); restoring one, its roles, hierarchy files, runs and
comparison, on the freshly read table; and comparing runs that are sweep points (issue 15).

A project of before issue 30 (no run reports) has its runs re-computed as one sweep (same seeds,
same results). Sweep points keep no table, so the runs that were compared are then re-computed
one by one (each "opened" as a sweep point) and compared. A project that kept its runs' reports
and partitions is restored at once (:func:`apply_project`): each run is rebuilt from its
partition in the worker when it is opened, without running its method. :class:`ProjectRestore` follows the controller's signals to do that; the
controller itself knows nothing of it. :func:`compare_runs` does the same for the runs the user
chooses to compare in the history: after reopening a project every run is such a sweep point,
and Compare refused them ("sweep point(s) kept as measures only").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Slot

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.runs.project_file import Project, save_project, session_files, write_autosave
from microgui.core.table.dataset import Dataset
from microgui.qt.history import (
    HistoryEntry,
    comparison_ids,
    find_entry,
    project_of,
    project_roles,
    restored_entries,
)

#: The window's :class:`~microgui.qt.controller.AppController` (not imported: it imports this
#: module, and the package has no import cycle, type-only ones included).
AppController = Any

__all__ = [
    "ComparisonRestore",
    "ProjectRestore",
    "apply_project",
    "autosave_session",
    "compare_runs",
    "save_session",
    "session_project",
    "session_read_files",
]


@dataclass
class ComparisonRestore:
    """A project's comparison being restored: which sweep re-computes its runs, which of them
    (by index in the project) were compared, and their history ids as they arrive. Sweep points
    keep no table: the compared ones are re-computed one by one (:meth:`next_to_open`), then
    compared."""

    sweep_id: int
    wanted: tuple[int, ...]
    by_index: dict[int, int] = field(default_factory=dict)
    run_ids: list[int] = field(default_factory=list)
    to_open: list[int] = field(default_factory=list)
    waiting: int | None = None
    #: the run to show once compared (a reopened project's shown run, issue 30)
    then_show: int | None = None

    def sweep_done(self) -> None:
        """The sweep has re-computed every run: the compared ones are known."""
        self.run_ids = [self.by_index[i] for i in self.wanted if i in self.by_index]
        self.to_open = list(self.run_ids)

    def next_to_open(self, history: Sequence[HistoryEntry]) -> int | None:
        """The next compared run to re-compute (now :attr:`waiting`), None when all have their
        table."""
        while self.to_open:
            run_id = self.to_open[0]
            if any(e.run_id == run_id and not e.has_table for e in history):
                self.waiting = run_id
                return run_id
            self.to_open.pop(0)
        return None

    def step(self, controller: AppController) -> list[int] | None:
        """Re-compute the next compared run that has no table (None: one is on its way), or,
        when all have theirs, the runs to compare (those still in the history)."""
        run_id = self.next_to_open(controller.history)
        if run_id is not None:
            controller.open_point(run_id)
            # what the window's status bar says (after open_point's own note)
            controller.point_opening.emit(run_id, self.note(controller, run_id))
            return None
        return [i for i in self.run_ids if any(e.run_id == i for e in controller.history)]

    def note(self, controller: AppController, run_id: int) -> str:
        """'Comparing #3 and #5: re-computing #5 mdav k=5 (2 of 2) …' for the status bar."""
        names = " and ".join(f"#{i}" for i in self.run_ids)
        entry = find_entry(controller.history, run_id)
        seed = "a fresh seed" if entry.seed is None else f"seed {entry.seed}"
        done = len(self.run_ids) - len(self.to_open) + 1
        if entry.partition is not None:  # rebuilt from its kept partition (issue 30)
            return (
                f"To compare {names}: rebuilding {entry.name} ({done} of {len(self.run_ids)}) "
                "from the partition the project kept…"
            )
        return (
            f"To compare {names}: re-computing the sweep point {entry.name} ({done} of "
            f"{len(self.run_ids)}) with {seed}: same seed, same result…"
        )


class ProjectRestore(QObject):
    """Restores a comparison by following the controller's signals: the sweep's points (their
    history ids), the sweep's end, then each compared run shown once re-computed (a project's;
    :func:`compare_runs` starts one at the re-computing step). A new table (``dataset_loaded``),
    a re-computation that fails or is cancelled, or another run started meanwhile ends it."""

    def __init__(self, controller: AppController, state: ComparisonRestore) -> None:
        super().__init__(controller)
        self.controller = controller
        self.state = state
        self._opening = False  # inside our own open_point (its run_started is ours)
        controller.sweep_point_finished.connect(self._on_point)
        # queued: the controller finishes its own end of the sweep (idle state, a point the
        # user opened meanwhile) before the compared runs are re-computed
        controller.sweep_finished.connect(self._on_sweep_finished, Qt.QueuedConnection)
        controller.run_shown.connect(self._on_shown)
        controller.run_started.connect(self._on_started)
        controller.run_failed.connect(self._on_run_ended)
        controller.run_cancelled.connect(self._on_run_ended)
        controller.dataset_loaded.connect(self.stop)
        controller.history_changed.connect(self._on_history)
        self._stopped = False

    @Slot()
    def _on_history(self) -> None:
        """The run being re-computed was removed from the history: cancel it, and the
        comparison is off (adversarial review: it came back under a new id)."""
        waiting = self.state.waiting
        if waiting is not None and not any(e.run_id == waiting for e in self.controller.history):
            self.stop()
            self.controller.cancel_run()

    @Slot(int, object, int)
    def _on_point(self, sweep_id: int, point: Any, run_id: int) -> None:
        if sweep_id == self.state.sweep_id and run_id >= 0:
            self.state.by_index[point.index] = run_id

    @Slot(int, object)
    def _on_sweep_finished(self, sweep_id: int, _points: Any) -> None:
        if sweep_id == self.state.sweep_id:
            self.state.sweep_done()
            self._step()

    @Slot(int)
    def _on_shown(self, run_id: int) -> None:
        if self.state.waiting == run_id:
            self.state.waiting = None
            self._step()

    @Slot(int, object)
    def _on_started(self, _run_id: int, _spec: Any) -> None:
        if self.state.waiting is not None and not self._opening:
            self.stop()  # another run superseded the re-computation: the comparison is off

    def _on_run_ended(self, *_args: Any) -> None:  # run_failed (3 values), run_cancelled (1)
        if self.state.waiting is not None:
            self.stop()

    def _step(self) -> None:
        """Re-compute the next compared run, or compare them all when each has its table."""
        self._opening = True
        try:
            ids = self.state.step(self.controller)
        finally:
            self._opening = False
        if ids is not None:
            self.stop()
            if len(ids) >= 2:
                self.controller.set_comparison(ids)
                _show_after(self.controller, self.state.then_show)

    @Slot()
    def stop(self) -> None:
        """Stop following the controller (done, or another table was opened)."""
        if self._stopped:
            return
        self._stopped = True
        c = self.controller
        for signal, slot in (
            (c.sweep_point_finished, self._on_point),
            (c.sweep_finished, self._on_sweep_finished),
            (c.run_shown, self._on_shown),
            (c.run_started, self._on_started),
            (c.run_failed, self._on_run_ended),
            (c.run_cancelled, self._on_run_ended),
            (c.dataset_loaded, self.stop),
            (c.history_changed, self._on_history),
        ):
            signal.disconnect(slot)
        self.setParent(None)
        self.deleteLater()


def _show_after(controller: AppController, run_id: int | None) -> None:
    """Show ``run_id`` (rebuilt first when it has no table and can be; a run that must be
    re-computed waits to be opened), if it is still in the history."""
    if run_id is None or run_id == controller.shown_run_id:
        return
    entry = next((e for e in controller.history if e.run_id == run_id), None)
    if entry is not None and (entry.has_table or entry.rebuildable):
        controller.show_run(run_id)


def apply_project(controller: AppController, project: Project, dataset: Dataset) -> None:
    """Apply a project to its freshly read table: its roles (confirmed: they are the user's),
    its hierarchy files (read in the background), its runs re-computed as a sweep (same seeds,
    same results), then its comparison (:class:`ProjectRestore`). A table whose columns changed
    since is said by ``load_failed`` (nothing applied)."""
    roles = project_roles(project, dataset)
    if isinstance(roles, str):
        controller.load_failed.emit(Path(str(dataset.source)), roles, "")
        return
    controller.set_roles(roles)
    # a file that is gone is said by ``hierarchies.failed``
    controller.hierarchies.attach_all(dataset, dict(project.hierarchies))
    controller.confirm_roles()
    if not project.runs:
        return
    # issue 30: the runs as they were, with their numbers, reports and measures, at once; each
    # rebuilt from its kept partition in the worker when opened (no method run), the compared
    # ones first, else the last run; a run without a partition (an older file) is re-computed
    # (same seed) only when opened
    # the table with the project's roles (``dataset`` has the roles suggested when it was read):
    # the runs were made on those, and are rebuilt or re-computed on them
    entries = restored_entries(project, controller.dataset)
    if entries:
        # three turns of the event loop, each well under 100 ms (issue 30: the table, the
        # roles, the history, the R-U map and the shown run in one turn held the GUI thread
        # for 0.2-0.7 s): the table and its roles now, the history next, the run after it
        frame = controller.dataset.frame
        QTimer.singleShot(0, controller, lambda: _restore_runs(controller, project, frame, entries))
        return
    sweep_id = controller.start_sweep(list(project.runs), workers=1)
    if len(project.comparison) >= 2:
        ProjectRestore(controller, ComparisonRestore(sweep_id, project.comparison))


def _same_table(controller: AppController, frame: Any) -> bool:
    """Whether the controller still holds the table read (its roles may have changed)."""
    return controller.dataset is not None and controller.dataset.frame is frame


def _restore_runs(
    controller: AppController, project: Project, frame: Any, entries: list[HistoryEntry]
) -> None:
    """The second turn of :func:`apply_project`: the runs into the history; the compared ones
    (or the last run) shown in the next turn. Nothing when another table came in between."""
    if not _same_table(controller, frame):
        return
    # issue 30: the exports of each run, with the seeds of their record order, kept for the
    # next save (before the history: its signal may save an autosave)
    controller.run_exports = {
        e.run_id: tuple(dict(x) for x in project.exports_of(e.run_id))
        for e in entries
        if project.exports_of(e.run_id)
    }
    controller.restore_history(entries)
    QTimer.singleShot(0, controller, lambda: _show_restored(controller, project, frame, entries))


def _show_restored(
    controller: AppController, project: Project, frame: Any, entries: list[HistoryEntry]
) -> None:
    if not _same_table(controller, frame) or controller.is_running:
        # another table came in, or the user already started something between the turns
        # (shown a run, run a method): theirs wins, nothing is shown over it
        return
    compared = [entries[i].run_id for i in project.comparison]
    # the run shown when the project was saved (issue 30); a file without it: the last run,
    # or the last compared one (as before)
    ids = [e.run_id for e in entries]
    shown = project.shown_run if project.shown_run in ids else None
    if len(compared) >= 2:
        compare_runs(controller, compared, then_show=shown)
    elif find_entry(entries, shown or ids[-1]).rebuildable:
        controller.show_run(shown or ids[-1])


def compare_runs(
    controller: AppController, run_ids: Sequence[int], *, then_show: int | None = None
) -> str:
    """Compare 2 to 4 history runs (what the history's Compare does). Sweep points kept as
    measures only (every run of a reopened project) are re-computed first, one by one, with
    the seeds they used (same seed, same result), then compared: returns what is being done
    ("" when compared at once). :class:`InvalidParameter`: the wrong number of runs, or points to
    re-compute while a run or sweep holds the run thread (re-computing would supersede it).
    ``then_show``: a run to show once they are compared (a reopened project's shown run)."""
    ids = comparison_ids(run_ids)
    unopened = [i for i in ids if not find_entry(controller.history, i).has_table]
    if not unopened:
        controller.set_comparison(ids)
        _show_after(controller, then_show)
        return ""
    names = ", ".join(find_entry(controller.history, i).name for i in unopened)
    if controller.is_running:
        raise InvalidParameter(
            f"{names}: sweep point(s) to re-compute before comparing; wait for the run or sweep "
            "in progress to end (or cancel it), then press Compare again"
        )
    state = ComparisonRestore(-1, (), run_ids=list(ids), to_open=list(ids), then_show=then_show)
    ProjectRestore(controller, state)._step()
    return (
        f"Re-computing {len(unopened)} sweep point(s) ({names}) with their seeds (same seed, "
        "same result), then comparing…"
    )


def session_project(controller: AppController) -> Project | None:
    """The controller's session as a :class:`~microgui.core.runs.project_file.Project` (no data
    values), or None without a table. Runs are the history's reproducible specs (seeds kept)."""
    ctl = controller
    if ctl.dataset is None:
        return None
    project = project_of(ctl.dataset, ctl.history, ctl.compared, ctl.hierarchies.paths())
    plans = getattr(ctl, "plans", ())  # issue 31: the plan editor's plan
    # issue 31: the export option "Keep the input order" is the session's, saved with it
    keep = bool(ctl.export_options.keep_order)
    # issue 30: each run's exports with the seed of their record order (the project is the one
    # place it is kept), and the run shown (reopening shows it again)
    exports = tuple(tuple(ctl.run_exports.get(run_id, ())) for run_id in project.ids)
    shown = ctl.shown_run_id if ctl.shown_run_id in project.ids else None
    return dataclasses.replace(
        project,
        plans=tuple(plans),
        keep_order=keep,
        run_exports=exports if any(exports) else (),
        shown_run=shown,
    )


def save_session(controller: AppController, path: str | Path) -> None:
    """Write the session's project file (atomically); raises :class:`MicroguiError` with a
    message. Never over a file the session read (:func:`session_read_files`), the project file
    it was opened from excepted: saving over it is what Save means."""
    project = session_project(controller)
    if project is None:
        raise InvalidRoles("open a table first: a project holds a table's roles and runs")
    read = [p for p in session_read_files(controller) if p != controller.project_file]
    save_project(project, path, also_protect=read)


def autosave_session(controller: AppController) -> Path | None:
    """Save the session for crash recovery (nothing without a table); never over a file the
    session read (:func:`session_read_files`)."""
    project = session_project(controller)
    if project is None:
        return None
    return write_autosave(project, also_protect=session_read_files(controller))


def session_read_files(controller: AppController) -> list[Path]:
    """Every file the session read and works from (:func:`session_files`): the table of the
    current dataset, of the current result and of each run of the history (with the files each
    dataset carries), the hierarchy files attached and those of the runs, and the project file
    opened. The one list every writer of the app (export, report, project, autosave) refuses
    as targets."""
    ctl = controller
    datasets = (ctl.dataset, ctl.result_dataset, *(e.dataset for e in ctl.history))
    hierarchies = [*ctl.hierarchies.paths().values()]
    hierarchies += [p for e in ctl.history for _column, p in e.spec.hierarchies]
    return session_files(datasets, hierarchies, ctl.project_file)
