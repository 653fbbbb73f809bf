"""The app's state and its one source of signals (STYLE.md §5).

:class:`AppController` owns the dataset, its roles, the current run and the private run pool.
Panels call its methods and listen to its signals; they never talk to each other. Every run has an
id; signals of a superseded run are dropped, so a late result never paints over newer parameters.

A sweep (:func:`microgui.core.runs.sweep.run_sweep`) runs in the same one-thread run pool, as one job:
each finished point becomes a history entry as it arrives. A sweep point keeps the run report
and measures, not the protected table; opening it re-runs its spec with the seed it used (same
seed, same partition) in the worker, and the entry is completed in place.

What is computed lives in the core (:mod:`microgui.core.runs.analysis`: run and measure, correlations,
regressions, the dependency tree view); each kind of background task is a
:class:`~microgui.qt.workers.TaskSlot`: the run and the sweep here, the file being read in
:class:`~microgui.qt.table_loads.TableLoads`, the dependency tree, the correlations and the
regression in :class:`~microgui.qt.view_analyses.ViewAnalyses`. The run history's entries are
:class:`~microgui.qt.history.HistoryEntry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal, Slot

from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import Method, available_methods
from microgui.core.release.check import ExportCheck
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import (
    RunOutcome,
    analyse_run,
    mask_rows,
    proposed_spec,
    record_mask,
)
from microgui.core.runs.project_file import MAX_RUN_EXPORTS, Project, export_record
from microgui.core.runs.sweep import SweepPoint, run_sweep
from microgui.core.table.dataset import Dataset
from microgui.core.table.dependency import DEFAULT_BINS
from microgui.core.table.roles import AttributeKind, AttributeRole, RoleMap
from microgui.core.views.layout import MstLayout, TreeLayout
from microgui.core.views.projection import QIProjection
from microgui.qt.export_options import ExportOptions
from microgui.qt.hierarchies import HierarchyAttachments
from microgui.qt.history import (
    ExportLedger,
    HistoryEntry,
    checked_comparison,
    comparison_without,
    find_entry,
    resolved_project,
    restore_job,
    with_partition,
)
from microgui.qt.kernel_prep import after_kernels
from microgui.qt.project_restore import (
    autosave_session,
    save_session,
    session_project,
    session_read_files,
)
from microgui.qt.table_loads import TableLoads
from microgui.qt.view_analyses import ViewAnalyses
from microgui.qt.workers import Job, TaskSlot, make_run_pool, stop_tasks

__all__ = ["AppController"]


class _RunNumbers:
    """The numbers of a table's runs: 1, 2, 3... in the order they end in the history, each a
    run's id for life (the history, the reports, the project file, ``protect --run N``).

    A number is taken when a run starts (the run thread's signals carry it); a run that fails or
    is cancelled gives it back once its worker is gone, so the history has no gaps. Numbers never
    go back below one the history has held (a run removed keeps its number to itself)."""

    def __init__(self, controller: AppController) -> None:
        self._controller = controller
        self._highest = 0

    def __iter__(self) -> _RunNumbers:
        return self

    def __next__(self) -> int:
        ctl = self._controller
        live = list(ctl._runs._workers) if hasattr(ctl, "_runs") else []
        kept = [e.run_id for e in ctl.history]
        number = max([self._highest, *kept, *live], default=0) + 1
        return number

    def keep(self, numbers: Sequence[int]) -> None:
        """Numbers the history holds now (a reopened project's)."""
        self._highest = max([self._highest, *numbers])

    def reset(self) -> None:
        """A new table: its runs start at 1."""
        self._highest = 0


#: Milliseconds after a run is shown before the unprotected table's measuring starts.
REFERENCE_DELAY_MS = 300


class AppController(QObject):
    """Dataset, roles, runs and results of one window, as signals."""

    dataset_loaded = Signal(object)  # Dataset
    roles_changed = Signal(object)  # RoleMap
    #: the roles were (not) reviewed: suggested roles are "not yet reviewed" until the user
    #: confirms them or runs (issue 13)
    roles_review_changed = Signal(bool)
    run_started = Signal(int, object)  # run id, RunSpec
    run_progress = Signal(int, float, str)  # run id, fraction, status
    run_finished = Signal(int, object)  # run id, RunResult
    run_failed = Signal(int, str, str)  # run id, message, details
    run_cancelled = Signal(int)  # run id
    busy_changed = Signal(bool)  # a run is (not) in progress
    load_started = Signal(object)  # Path being read
    load_failed = Signal(object, str, str)  # Path, message, details
    load_progress = Signal(object, float, str)  # Path being read, fraction, status
    load_cancelled = Signal(object)  # Path whose reading the user cancelled
    selection_changed = Signal(object)  # bool mask over the table's rows, or None (nothing)
    dependency_tree_computed = Signal(int, object)  # request id, DependencyTreeOutcome
    dependency_tree_failed = Signal(int, str, str)  # request id, message, details
    correlations_computed = Signal(int, object)  # request id, CorrelationOutcome
    correlations_failed = Signal(int, str, str)  # request id, message, details
    regression_fitted = Signal(int, object)  # request id, RegressionOutcome
    regression_failed = Signal(int, str, str)  # request id, message, details
    history_changed = Signal()  # a run was added to or removed from the history
    run_shown = Signal(int)  # id of the history run now shown in the views (after run_finished)
    comparison_changed = Signal(object)  # tuple of the run ids compared (empty: none)
    plans_restored = Signal(object)  # tuple of plan JSON objects a project opened held
    #: the session was saved to (or opened from) a project file, or an export changed what
    #: saving would write (issue 30: the window's title and its "*")
    project_changed = Signal()
    sweep_started = Signal(int, int)  # sweep id, number of runs
    sweep_progress = Signal(int, float, str)  # sweep id, fraction of runs done, status
    #: sweep id, the SweepPoint, its history run id (-1: the run failed, not in the history)
    sweep_point_finished = Signal(int, object, int)
    sweep_finished = Signal(int, object)  # sweep id, list of every SweepPoint (spec order)
    sweep_cancelled = Signal(int, object)  # sweep id, list of the SweepPoints finished before
    sweep_failed = Signal(int, str, str)  # sweep id, message, details
    #: history run id of a sweep point, what happens to it ("re-computing…", "after the sweep")
    point_opening = Signal(int, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the release check of the current result and the report of each export
        self._exports = ExportLedger()
        #: CSV format and pseudonyms of every export (File → Export options…, issue 18)
        self.export_options = ExportOptions()
        self.pool: QThreadPool = make_run_pool(self)
        self.dataset: Dataset | None = None
        self.result: RunResult | None = None
        self.projection: QIProjection | None = None
        self.tree_layout: TreeLayout | None = None
        self.mst_layout: MstLayout | None = None
        #: The dataset exactly as the current result was computed from (roles included).
        self.result_dataset: Dataset | None = None
        #: Selected records (bool mask over the table's rows), or None.
        self.selection: np.ndarray | None = None
        #: The project file this session was opened from (None: a table opened on its own).
        self.project_file: Path | None = None
        #: the session's protection plans (issue 31), each its JSON; the plan editor keeps
        #: them here, the project file saves them
        self.plans: tuple[dict[str, Any], ...] = ()
        # Runs and sweeps share the one-thread run pool (one job at a time). Run ids number the
        # history: a sweep's points take theirs from the same counter. A run's context is (the
        # table it runs on, the sweep point it re-computes or None).
        self._run_ids = _RunNumbers(self)
        self._runs = TaskSlot(self.pool, self, self._run_ids).forward(progress=self.run_progress)
        self._runs.finished.connect(self._on_finished)
        for end in (self._runs.failed, self._runs.cancelled):  # idle first, then the news
            end.connect(lambda *_: self.busy_changed.emit(False))
        self._runs.forward(failed=self.run_failed, cancelled=self.run_cancelled)
        # A sweep's context: (its table, its points so far).
        self._sweeps = TaskSlot(self.pool, self).forward(progress=self.sweep_progress)
        self._sweeps.partial.connect(self._on_sweep_point)
        self._sweeps.finished.connect(self._on_sweep_finished)
        self._sweeps.forward(failed=self.sweep_failed)
        self._sweeps.failed.connect(lambda *_: self._after_sweep())
        self._sweeps.cancelled.connect(self._on_sweep_cancelled)
        # Reading a file is a job too (a large Excel sheet takes a while), in a pool of its own
        # (:class:`TableLoads`), so that opening a table never waits behind a run.
        self.loads = TableLoads(self)
        self.load_pool: QThreadPool = self.loads.pool
        # The dependency tree, correlations and regressions of the views: a pool of their own,
        # so that they never wait behind a run; one current request per kind.
        # Below the GUI thread's priority: the views' analyses must not take its CPU (issue 29).
        self.analysis_pool: QThreadPool = make_run_pool(self, background=True)
        # The dependency tree is computed when its tab is shown, for the user looking at it:
        # a lane of its own (issue 29/30: in the analysis pool it waited ~4.6 s behind the
        # run's reference measures for a computation of ≤ 0.17 s on Adult). Nothing is started
        # there for a hidden tab (DependencyTreePanel computes on show).
        self.tree_pool: QThreadPool = make_run_pool(self, background=True)
        # The unprotected table's reference measures (the R-U map's star; a full evaluate, ~10 s
        # on Adult), asked for by no view the user looks at: a lane of their own, so that the Risk,
        # Utility and Correlations views shown meanwhile do not queue behind them (issue 29/30).
        self.reference_pool: QThreadPool = make_run_pool(self, background=True)
        # started REFERENCE_DELAY_MS after a run is shown (_show), stopped by shutdown
        self._shut_down = False  # shutdown() was called: the window is closing
        self._reference_timer = QTimer(self)
        self._reference_timer.setSingleShot(True)
        self._reference_timer.timeout.connect(self._measure_reference)
        self._reference_dataset: Dataset | None = None
        #: Hierarchy files attached to columns (issue 13), read in the analysis pool.
        self.hierarchies = HierarchyAttachments(self.analysis_pool, self)
        self.analyses = ViewAnalyses(
            self.analysis_pool, self, tree_pool=self.tree_pool, reference_pool=self.reference_pool
        )
        #: Every finished run of this table, oldest first (STYLE.md §3: specs are re-runnable).
        self.history: list[HistoryEntry] = []
        #: The runs saved in (or reopened from) a project file: the others are unsaved.
        self.saved_run_ids: set[int] = set()
        #: Each run's exports from the app (:func:`~microgui.core.runs.project_file.export_record`,
        #: with the seed of its record order: issue 30), by run id, for the project file only
        self.run_exports: dict[int, tuple[dict[str, Any], ...]] = {}
        #: exports recorded since the project file was last saved or opened
        self.unsaved_exports = 0
        #: True while :meth:`restore_history` emits ``history_changed`` (see there)
        self.restoring_history = False
        #: The history run shown in the views (None before the first run).
        self.shown_run_id: int | None = None
        #: False while the roles are microgui's suggestion, not yet confirmed by the user.
        self.roles_reviewed = True
        #: The runs of the comparison view (2 to MAX_COMPARED ids, or empty).
        self.compared: tuple[int, ...] = ()
        self.measures: Mapping[str, float | int | None] = {}
        #: A sweep point the user opened while a sweep was running: opened when it ends.
        self._queued_open: int | None = None
        #: A finished run whose views are drawn in the next turn of the event loop (see
        #: :meth:`_on_finished`); the run counts as running until then.
        self._pending_show: int | None = None
        self._slots = (self._runs, self._sweeps, self.loads.slot, *self.analyses.slots)

    # dataset and roles --------------------------------------------------------------------
    def load_file(self, path: str | Path) -> Dataset:
        """Read a table (raises :class:`MicroguiError` with a message for the user)."""
        from microgui.core.io import read_table

        return self.set_dataset(read_table(Path(path)))

    def open_file(self, path: str | Path, project: Project | None = None) -> int:
        """Read a table in the background; ``dataset_loaded`` or ``load_failed`` follows.

        Returns the load's id. A newer ``open_file`` supersedes an older one still reading
        (and the ``project`` it was to apply, :meth:`open_project`).
        """
        path = Path(path)
        if project is None:  # a table on its own: no project file behind the session now
            self.project_file = None
        load_id = self.loads.start(path, project)
        self.load_started.emit(path)
        return load_id

    def open_demo(self) -> int:
        """Read the bundled demo table (with its roles) in the background, as :meth:`open_file`
        reads a table; returns the load's id (:meth:`load_demo` reads it at once)."""
        from microgui.core.demo import demo_path

        self.project_file = None
        load_id = self.loads.start_demo()
        self.load_started.emit(demo_path())
        return load_id

    @property
    def is_loading(self) -> bool:
        return self.loads.slot.busy

    def cancel_load(self) -> None:
        """Ask the file being read to stop; ``load_cancelled`` follows (the table stays)."""
        self.loads.slot.cancel()

    # project files (issue 7) ----------------------------------------------------------------
    def project(self) -> Project | None:
        """The session as a :class:`~microgui.core.runs.project_file.Project` (no data values), or
        None without a table. Runs are the history's reproducible specs (seeds kept)."""
        return session_project(self)

    def save_project(self, path: str | Path) -> None:
        """Write the project file (atomically); raises :class:`MicroguiError` with a message.
        Never over a file the session read (:meth:`read_files`), the project file it was
        opened from excepted: saving over it is what Save means."""
        save_session(self, path)
        self.saved_run_ids = {e.run_id for e in self.history}
        self.unsaved_exports = 0
        # the session's project file now (issue 30: the title names it; Save writes over it,
        # no export may)
        self.project_file = Path(path)
        self.project_changed.emit()

    @property
    def unsaved_runs(self) -> list[int]:
        """The history's runs that no project file holds (opening another table drops them)."""
        return [e.run_id for e in self.history if e.run_id not in self.saved_run_ids]

    @property
    def is_modified(self) -> bool:
        """Whether saving would keep something no project file holds yet: a run
        (:attr:`unsaved_runs`) or an export's record order (the window's title shows a "*")."""
        return bool(self.unsaved_runs) or self.unsaved_exports > 0

    def open_project(
        self, project: Project, folder: Path | None = None, *, source: Path | None = None
    ) -> int:
        """Open a read project (:func:`~microgui.core.runs.project_file.load_project`; ``folder``:
        the project file's, for a relative data path; ``source``: the project file, which the
        session then counts as read): read its table in the background, then apply its roles
        and re-run its runs (same seeds: same results) as a sweep. Returns the load's id.
        Raises :class:`MicroguiError` when the table is gone."""
        data, resolved = resolved_project(project, folder)
        load_id = self.open_file(data, resolved)
        self.project_file = source
        # the project's record order (issue 31): its exports keep the input order, or not
        self.export_options = replace(self.export_options, keep_order=project.keep_order)
        self.plans = project.resolved_plans(folder)  # side files absolute again
        self.plans_restored.emit(self.plans)
        self.project_changed.emit()
        return load_id

    def autosave(self) -> Path | None:
        """Save the session for crash recovery (nothing without a table); never over a file
        the session read (:meth:`read_files`)."""
        return autosave_session(self)

    def read_files(self) -> list[Path]:
        """Every file this session read and works from: the table of the current dataset, of
        the current result and of each run of the history (with the files each dataset
        carries, :attr:`~microgui.core.table.dataset.Dataset.read_files`), the hierarchy files
        attached and those of the runs, and the project file opened. The one list every
        writer of the app (export, report, project, autosave) refuses as targets."""
        return session_read_files(self)

    def load_demo(self) -> Dataset:
        """Open the bundled demo table with its tagged roles."""
        from microgui.core.demo import load_demo

        return self.set_dataset(load_demo())

    def set_dataset(self, dataset: Dataset) -> Dataset:
        """Replace the table (returned): any run in progress is superseded and the last result
        dropped."""
        was_running = self.is_running
        self._runs.supersede()
        self._sweeps.supersede()
        self._queued_open = None
        self._pending_show = None
        if was_running:
            self.busy_changed.emit(False)
        self.analyses.trees.supersede()
        self.hierarchies.clear()  # they were attached to the columns of the previous table
        self.export_options = self.export_options.for_new_table()
        self.dataset = dataset
        self.result = None
        self.projection = None
        self.tree_layout = None
        self.mst_layout = None
        self.result_dataset = None
        self.measures = {}
        # Runs of another table cannot be compared with the new one's, nor shown over it; its
        # runs are numbered from 1 again (issue 30: numbers carried over between tables)
        had_history = bool(self.history)
        self.history = []
        self._run_ids.reset()
        self.saved_run_ids = set()
        self.run_exports = {}
        self.unsaved_exports = 0
        self.shown_run_id = None
        had_comparison = bool(self.compared)
        self.compared = ()
        had_selection = self.selection is not None
        self.selection = None
        self.dataset_loaded.emit(dataset)
        if had_history:
            self.history_changed.emit()
        if had_comparison:
            self.comparison_changed.emit(())
        self.roles_changed.emit(dataset.roles)
        self._set_reviewed(not dataset.role_reasons)
        if had_selection:
            self.selection_changed.emit(None)
        return dataset

    @property
    def role_reasons(self) -> Mapping[str, str]:
        """Why each suggested column got its role (empty for roles the user gave)."""
        return self.dataset.role_reasons if self.dataset is not None else {}

    def confirm_roles(self) -> None:
        """The user has reviewed the roles (also implied by a run)."""
        self._set_reviewed(True)

    def _set_reviewed(self, reviewed: bool) -> None:
        if reviewed != self.roles_reviewed:
            self.roles_reviewed = reviewed
            self.roles_review_changed.emit(reviewed)

    def suggest_roles(self) -> None:
        """Replace every tag by microgui's suggestion (:func:`explain_roles`), with reasons;
        the roles are then not yet reviewed."""
        self.dataset = self._require_dataset().with_suggested_roles()
        self.roles_changed.emit(self.dataset.roles)
        self._set_reviewed(False)

    def set_missing_as_category(self, column: str, flag: bool) -> None:
        """Treat the missing cells of a nominal/ordinal quasi-identifier as a category."""
        self._edit_roles(column, missing_as_category=flag)

    @property
    def roles(self) -> RoleMap | None:
        return self.dataset.roles if self.dataset is not None else None

    def _require_dataset(self) -> Dataset:
        if self.dataset is None:
            raise InvalidRoles("open a table first")
        return self.dataset

    def _replace_roles(self, roles: RoleMap) -> None:
        self.dataset = self._require_dataset().with_roles(roles)
        self.roles_changed.emit(roles)

    def _edit_roles(self, column: str, **change: Any) -> None:
        """One column's tag changed by :meth:`Dataset.edited_roles` (the rules live there)."""
        roles = self._require_dataset().edited_roles(column, **change)
        if roles is not self.roles:
            self._replace_roles(roles)

    def set_roles(self, roles: RoleMap) -> None:
        """Replace all tags at once (same columns as the table)."""
        if list(roles) != list(self._require_dataset().roles):
            raise InvalidRoles("the roles do not name the columns of the open table")
        self._replace_roles(roles)

    def set_role(self, column: str, role: AttributeRole) -> None:
        """Tag a column with a role (its kind and order are kept for when it is a QI again)."""
        self._edit_roles(column, role=role)

    def set_kind(self, column: str, kind: AttributeKind) -> None:
        """Set a column's kind; a column made ordinal gets its values in their natural order."""
        self._edit_roles(column, kind=kind)

    def set_order(self, column: str, order: Sequence[str]) -> None:
        """Set the category order (lowest first) of an ordinal column."""
        self._edit_roles(column, order=list(order))

    @property
    def result_is_stale(self) -> bool:
        """True when the roles were changed after the current result was computed."""
        return (
            self.result is not None
            and self.dataset is not None
            and self.result_dataset is not None
            and self.dataset.roles != self.result_dataset.roles
        )

    # methods ------------------------------------------------------------------------------
    @staticmethod
    def methods() -> list[Method]:
        return available_methods()

    def recommended_measures(self) -> list[str]:
        """The measure keys to show first for the table's quasi-identifier kinds
        (:func:`microgui.core.metrics.recommended.recommended_measures`; issue 29)."""
        from microgui.core.metrics.recommended import recommended_measures

        if self.dataset is None:
            return []
        roles = self.dataset.roles
        return recommended_measures({c: roles[c].kind for c in roles.quasi_identifiers})

    def default_spec(self) -> RunSpec:
        """The run proposed for the current table (:func:`~microgui.core.runs.analysis.proposed_spec`:
        MDAV, or MDAV-generic when ordinal or nominal quasi-identifiers are present; k = 5)."""
        n = self.dataset.n_records if self.dataset is not None else 0
        return proposed_spec(self.methods(), self.roles, n)

    # runs ---------------------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        """A run or a sweep is in progress."""
        return self._runs.busy or self._sweeps.busy or self._pending_show is not None

    @property
    def is_sweeping(self) -> bool:
        return self._sweeps.busy

    @property
    def current_run_id(self) -> int | None:
        return self._runs.current

    @property
    def live_runs(self) -> int:
        """Runs started whose last signal has not been handled yet (superseded ones included)."""
        return self._runs.live

    def start_run(self, spec: RunSpec) -> int:
        """Start a run of ``spec`` on the current dataset; returns its id.

        A run already in progress is cancelled and superseded: its late signals are ignored.
        """
        if self.dataset is None:
            raise InvalidRoles("open a table before running a method")
        run_id = self.start_job(partial(analyse_run, self.dataset, spec), spec, self.dataset)
        self.confirm_roles()  # running on the roles is accepting them
        return run_id

    def start_plan(self, plan: Any) -> int:
        """Start a run of a protection plan (:class:`~microgui.core.runs.plan.Plan`) on the
        current dataset; returns its id (issue 31: a plan run is a run). It goes the way of a
        method run (:meth:`start_job`: the kernels' status, the history with its number, the
        views, the R-U map, the comparison, the project file); its spec is
        :func:`~microgui.core.runs.plan.plan_spec` (method "plan", the plan in ``plan``); a plan
        of one microaggregation over every key is that method's run."""
        from microgui.core.runs.plan import plan_spec

        if self.dataset is None:
            raise InvalidRoles("open a table before running a plan")
        # k is checked with the plan in the worker (a plan without a k-step is refused there)
        spec = plan_spec(plan, plan.k if plan.k is not None else 2, plan.seed)
        run_id = self.start_job(partial(analyse_run, self.dataset, spec), spec, self.dataset)
        self.confirm_roles()
        return run_id

    def start_job(
        self,
        job: Job,
        spec: RunSpec,
        dataset: Dataset,
        opening: int | None = None,
        *,
        kernels: bool = True,
    ) -> int:
        """Start any job returning a :class:`RunOutcome` (the tests use slow or failing jobs);
        ``opening``: the history entry (a sweep point) the outcome completes; ``kernels``:
        whether it runs the method (it then waits for its kernels while they are prepared; a
        run rebuilt from its kept partition does not). Its partition is encoded in the worker
        for the project file (:func:`~microgui.qt.history.with_partition`)."""
        was_running = self.is_running
        # A run supersedes a sweep too (its finished points stay in the history).
        self._sweeps.supersede()
        # an abandoned run still holds the one run thread (e.g. inside a kernel compile)
        waiting = self.pool.activeThreadCount() >= self.pool.maxThreadCount()
        job = with_partition(after_kernels(job, spec) if kernels else job, dataset)
        run_id = self._runs.start(job, (dataset, opening))
        self.run_started.emit(run_id, spec)
        if not was_running:
            self.busy_changed.emit(True)
        if waiting:  # say why nothing moves yet
            self.run_progress.emit(run_id, 0.0, "waiting for the cancelled run to stop")
        return run_id

    def cancel_run(self) -> None:
        """Stop the current run (or sweep). A run is abandoned at once: ``run_cancelled`` and
        the window's idle state follow immediately, even when the worker is inside a step that
        cannot look at the cancel flag (compiling a kernel on a first run took 25 s); the worker
        stops at its next check and its late signals are ignored (issue 15). A sweep:
        ``sweep_cancelled`` follows when its processes have stopped."""
        run_id = self._runs.supersede()  # asks the worker to stop and supersedes it
        if run_id is not None:
            self.busy_changed.emit(False)
            self.run_cancelled.emit(run_id)
        self.cancel_sweep()
        self.cancel_load()

    @Slot(int, object, object)
    def _on_finished(self, run_id: int, outcome: Any, context: Any) -> None:
        dataset, target = context
        assert isinstance(outcome, RunOutcome)
        assert dataset is not None
        row = next((i for i, e in enumerate(self.history) if e.run_id == target), -1)
        if row >= 0:  # a sweep point opened: the same history entry, now with its table
            self.history[row] = replace(self.history[row], outcome=outcome)
            run_id = target
        elif target is not None:  # the sweep point it re-computed was removed meanwhile
            self.busy_changed.emit(False)
            return
        else:
            self.history.append(HistoryEntry(run_id, outcome, dataset, datetime.now()))
            self._run_ids.keep([run_id])
        # Two turns of the event loop (issue 30: one turn drew it all, ~200 ms after an Adult
        # run): the history's row and the risk-utility map's point in this one, the views of
        # the run (run_finished) in the next. The run counts as running until it is shown.
        self._pending_show = run_id
        self.history_changed.emit()
        # a timer, not singleShot(0): Qt 6 posts that as an event, handled with this turn's
        # paint before any timer is looked at (the two turns stayed one stall)
        QTimer.singleShot(1, self, partial(self._show_finished, run_id))

    def _show_finished(self, run_id: int) -> None:
        """Show a finished run (the second turn of :meth:`_on_finished`), unless the table was
        replaced or the run removed meanwhile."""
        if self._pending_show != run_id:
            return
        self._pending_show = None
        if not self.is_running:  # (a run started meanwhile is running)
            self.busy_changed.emit(False)
        if any(e.run_id == run_id for e in self.history):
            self._show(run_id)

    def restore_history(self, entries: Sequence[HistoryEntry]) -> None:
        """Put a reopened project's runs in the history with their numbers, reports and
        measures, without computing anything (issue 30: reopening re-computed every run); each
        is rebuilt from its kept partition when opened, or re-computed (same spec and seed,
        same result) when the project kept none."""
        self.history.extend(entries)
        self._run_ids.keep([e.run_id for e in entries])
        self.saved_run_ids.update(e.run_id for e in entries)
        # ``restoring_history`` lets a view with a costly redraw (the R-U map) take it in the
        # next turn of the event loop: the history table and the map of a 14-run project in one
        # turn held the GUI thread for 60-80 ms of CPU, more with a run computing (issue 30)
        self.restoring_history = True
        try:
            self.history_changed.emit()
        finally:
            self.restoring_history = False

    def _show(self, run_id: int) -> None:
        entry = self.entry(run_id)
        outcome = entry.outcome
        self.result_dataset = entry.dataset
        self.result = outcome.result
        self.projection = outcome.projection
        self.tree_layout = outcome.tree_layout
        self.mst_layout = outcome.mst_layout
        self.measures = outcome.measures
        self.shown_run_id = run_id
        had_selection = self.selection is not None
        self.selection = None
        self.run_finished.emit(run_id, outcome.result)
        self.run_shown.emit(run_id)
        if had_selection:
            self.selection_changed.emit(None)
        # the R-U map's unprotected reference point, measured after the run is shown and
        # painted (issue 30): its worker, started at once, took the GIL from the paint
        # (one timer, stopped by shutdown: a measuring started after the window closed would run
        # on in a pool nobody waits for)
        if not self._shut_down:  # a run shown by a signal queued before the window closed
            self._reference_dataset = entry.dataset
            self._reference_timer.start(REFERENCE_DELAY_MS)

    def _measure_reference(self) -> None:
        dataset, self._reference_dataset = self._reference_dataset, None
        if dataset is not None and self.result_dataset is dataset:  # (not another table's)
            self.analyses.unprotected_reference(dataset)

    # history ------------------------------------------------------------------------------
    def entry(self, run_id: int) -> HistoryEntry:
        """The history entry of a run (KeyError when it is not, or no longer, in the history)."""
        return find_entry(self.history, run_id)

    def show_run(self, run_id: int) -> None:
        """Show a past run in the views. ``run_finished`` is emitted again for it (the views
        redraw the current result on it), then ``run_shown``. A sweep point not opened yet is
        re-computed first (:meth:`open_point`)."""
        if run_id == self.shown_run_id:
            return
        if not self.entry(run_id).has_table:
            self.open_point(run_id)
            return
        self._show(run_id)

    def open_point(self, run_id: int) -> int | None:
        """Re-compute a sweep point from its spec and seed in the worker, then show it.

        A sweep keeps each run's report and measures, not its protected table; the same spec
        with the same seed gives the same partition, so the table is re-computed rather than
        stored. Returns the re-run's id (None: it waits for the running sweep to end, or is
        already being re-computed). ``point_opening`` says what happens.
        """
        entry = self.entry(run_id)
        if entry.has_table:
            self._show(run_id)
            return None
        if self._sweeps.busy:
            self._queued_open = run_id
            self.point_opening.emit(run_id, entry.opening_note(after_sweep=True))
            return None
        if any(opening == run_id for _d, opening in self._runs.contexts()) and self.is_running:
            return None
        rerun_id = self.rerun(run_id, opening=run_id)
        self.point_opening.emit(run_id, entry.opening_note(after_sweep=False))
        return rerun_id

    # sweeps -------------------------------------------------------------------------------
    @property
    def current_sweep_id(self) -> int | None:
        return self._sweeps.current

    def start_sweep(self, specs: Sequence[RunSpec], workers: int | None = None) -> int:
        """Run every spec on the current table and measure it (``run_sweep``), in the worker.

        Each finished point is added to the history as it arrives (``sweep_point_finished``);
        then ``sweep_finished``, ``sweep_cancelled`` (the points finished so far stay in the
        history) or ``sweep_failed``. A run or sweep in progress is superseded. ``workers``: the
        processes of ``run_sweep`` (None: one per core; 1: in the worker thread itself).
        """
        if self.dataset is None:
            raise InvalidRoles("open a table before running a sweep")
        specs = list(specs)
        if not specs:
            raise InvalidParameter("the sweep has no run; choose at least one method and one k")
        was_running = self.is_running
        self._runs.supersede()
        dataset = self.dataset

        # run_sweep hands each finished point on (``send``, in the worker thread) as it goes;
        # the worker's progress raises RunCancelled on Cancel
        def job(send: Callable[[Any], None]) -> Job:
            return lambda progress: run_sweep(
                dataset, specs, workers=workers, progress=progress, on_result=send
            )

        points: list[SweepPoint] = []
        sweep_id = self._sweeps.start_partial(job, (dataset, points))
        self.sweep_started.emit(sweep_id, len(specs))
        if not was_running:
            self.busy_changed.emit(True)
        return sweep_id

    def cancel_sweep(self) -> None:
        """Ask the sweep to stop; ``sweep_cancelled`` follows with the points kept."""
        self._sweeps.cancel()

    def _after_sweep(self) -> None:
        if not self.is_running:
            self.busy_changed.emit(False)
        queued, self._queued_open = self._queued_open, None
        if queued is not None and any(e.run_id == queued for e in self.history):
            self.open_point(queued)

    @Slot(int, object)
    def _on_sweep_point(self, sweep_id: int, point: Any) -> None:
        assert isinstance(point, SweepPoint)
        dataset, points = self._sweeps.context(sweep_id)
        points.append(point)
        run_id = -1
        if point.report is not None:
            run_id = next(self._run_ids)
            self.history.append(HistoryEntry(run_id, None, dataset, datetime.now(), point))
            self._run_ids.keep([run_id])
            self.history_changed.emit()
        self.sweep_point_finished.emit(sweep_id, point, run_id)

    @Slot(int, object, object)
    def _on_sweep_finished(self, sweep_id: int, points: Any, _context: Any) -> None:
        self.sweep_finished.emit(sweep_id, list(points))
        self._after_sweep()

    @Slot(int, object)
    def _on_sweep_cancelled(self, sweep_id: int, context: Any) -> None:
        _dataset, received = context
        self.sweep_cancelled.emit(sweep_id, sorted(received, key=lambda p: p.index))
        self._after_sweep()

    def rerun(self, run_id: int, opening: int | None = None) -> int:
        """Run a history entry again from its spec, with the seed it used, on the table it was
        computed from; returns the new run's id (a new history entry follows; ``opening``: the
        sweep point whose entry the run completes instead)."""
        entry = self.entry(run_id)
        spec = entry.reproducible_spec
        if opening is not None and entry.rebuildable:  # issue 30: from the kept partition
            return self.start_job(restore_job(entry), spec, entry.dataset, opening, kernels=False)
        job = partial(analyse_run, entry.dataset, spec)
        return self.start_job(job, spec, entry.dataset, opening=opening)

    def remove_run(self, run_id: int) -> None:
        """Drop a run from the history (and from the comparison). The views keep showing it
        when it was the run shown, until another one is shown."""
        entry = self.entry(run_id)
        self.history.remove(entry)
        self.run_exports.pop(run_id, None)
        if self.shown_run_id == run_id:
            self.shown_run_id = None
        self.history_changed.emit()
        if run_id in self.compared:
            self.compared = comparison_without(self.compared, run_id)
            self.comparison_changed.emit(self.compared)

    def set_comparison(self, run_ids: Sequence[int]) -> None:
        """Compare 2 to :data:`MAX_COMPARED` history runs side by side (empty: none)."""
        ids = checked_comparison(self.history, run_ids)
        self.compared = ids
        self.comparison_changed.emit(ids)

    # selection ----------------------------------------------------------------------------
    def set_selection(self, rows: np.ndarray | Sequence[int] | None) -> None:
        """Select records: row numbers or a bool mask over the table's rows (None or no row:
        nothing selected). ``selection_changed`` carries the mask (or None)."""
        n = self.dataset.n_records if self.dataset is not None else 0
        mask = record_mask(rows, n)
        if mask is None and self.selection is None:
            return
        self.selection = mask
        self.selection_changed.emit(mask)

    def clear_selection(self) -> None:
        self.set_selection(None)

    @property
    def selected_rows(self) -> np.ndarray:
        """Row numbers of the selected records (increasing; empty when nothing is selected)."""
        return mask_rows(self.selection)

    # dependency tree ----------------------------------------------------------------------
    def compute_dependency_tree(self, bins: int = DEFAULT_BINS) -> int:
        """Compute the dependency tree of the current quasi-identifiers in the background.

        Returns the request's id; ``dependency_tree_computed`` or ``dependency_tree_failed``
        follows with it. A newer request supersedes (cancels and ignores) an older one.
        """
        return self.analyses.dependency_tree(bins)

    @property
    def is_computing_tree(self) -> bool:
        return self.analyses.trees.busy

    # correlations and regression (issue 5) ----------------------------------------------
    def compute_correlations(self) -> int:
        """Correlations of the run shown, original vs protected, computed in the background.

        Returns the request's id; ``correlations_computed`` or ``correlations_failed`` follows.
        """
        return self.analyses.correlations_of_shown()

    def fit_regression(self, y: str, xs: Sequence[str]) -> int:
        """Fit ``y ~ xs`` (OLS with intercept) on the original and protected tables of the run
        shown, in the background; ``regression_fitted`` or ``regression_failed`` follows."""
        return self.analyses.regression(y, xs)

    def add_task_slot(self, slot: TaskSlot) -> None:
        """A panel's own kind of background task (the plan editor's exports, issue 31), run in
        :attr:`pool`: cancelled and waited for by :meth:`shutdown` like the controller's."""
        self._slots = (*self._slots, slot)

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel every run and wait for the pools (called when the window closes).

        A file being read stops at its next progress call (CSV: every 8,192 records); its
        result is dropped.
        """
        was_running = self.is_running
        self._shut_down = True
        self._reference_timer.stop()
        self._reference_dataset = None
        self.hierarchies.cancel_all()
        pools = (self.pool, self.load_pool, self.analysis_pool, self.tree_pool, self.reference_pool)
        done = stop_tasks(self._slots, pools, timeout_ms)
        self._queued_open = None
        if was_running:
            self.busy_changed.emit(False)
        return done

    # export -------------------------------------------------------------------------------
    def check_current_export(self) -> ExportCheck:
        """The release check of the current result (no file written)."""
        if self.result is None:
            raise InvalidRoles("run a method before exporting")
        return self._exports.check(self.result)

    def export(self, csv_path: str | Path, override: str | None = None) -> dict[str, Any]:
        """Write the protected CSV and its report beside it; returns the report.

        Raises :class:`ExportRefused` (check failed without ``override``, or a target is the input).
        """
        order = self.export_options.release_order()
        result, job = self.export_job(csv_path, override, order=order)
        report = job()
        self.record_export(result, report, order)
        return report

    def export_job(
        self,
        csv_path: str | Path,
        override: str | None = None,
        shown: ExportCheck | None = None,
        renames: dict[str, str] | None = None,
        order: RecordOrder | None = None,
    ) -> tuple[RunResult, Callable[[], dict[str, Any]]]:
        """The current result and the export of it to ``csv_path`` as a function to call later,
        in a worker thread (the main window's file task): everything it reads is taken now, so
        a run started meanwhile does not change what is written. Raises as :meth:`export` when
        there is nothing to export. A write error is an :class:`ExportRefused` naming the file.
        ``shown``: the check the user saw before typing ``override`` (default: the current
        result's); the writer checks the table again and refuses a problem it did not list.
        ``order``: the record order (:meth:`ExportOptions.release_order`, drawn by the caller,
        which gives it to :meth:`record_export`; None: the options' order, its seed not kept)."""
        if self.result is None or self.result_dataset is None:
            raise InvalidRoles("run a method before exporting")
        result, dataset = self.result, self.result_dataset
        check = self.check_current_export() if shown is None else shown
        # every file the session read: attached hierarchy files whatever the run used (issue
        # 13 review), the project file, the tables of other runs
        also = self.read_files()
        job = self.export_options.export_job(
            dataset, result, csv_path, check=check, override=override, also_protect=also,
            renames=renames, order=order,
        )  # fmt: skip
        return result, job

    def record_export(
        self, result: RunResult, report: dict[str, Any], order: RecordOrder | None = None
    ) -> None:
        """Remember an export's report for the run's saved report (:meth:`export_report_of`)
        and, given its ``order``, the export in its run's :attr:`run_exports` with the seed of
        its record order (issue 30: the project file keeps it, so that ``protect --project P
        --run N`` writes the same file; the report never holds it)."""
        self._exports.record(result, report)
        run_id = next(
            (e.run_id for e in self.history if e.outcome is not None and e.result is result), None
        )
        if order is None or run_id is None or not (order.keep or order.origin == "session"):
            return
        when = datetime.now().isoformat(timespec="seconds")
        seed = None if order.keep else order.seed
        kept = export_record(str(report.get("output", "")), when, seed)
        earlier = self.run_exports.get(run_id, ())[-(MAX_RUN_EXPORTS - 1) :]
        self.run_exports[run_id] = (*earlier, kept)
        self.unsaved_exports += 1
        self.project_changed.emit()

    def export_report_of(self, result: Any) -> dict[str, Any] | None:
        """The report of the last export of ``result`` in this session (None if not exported):
        a saved report then gives the release file's fingerprint and the override."""
        return self._exports.report_of(result)
