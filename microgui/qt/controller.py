"""The app's state and its one source of signals (STYLE.md §5).

:class:`AppController` owns the dataset, its roles, the current run and the private run pool.
Panels call its methods and listen to its signals; they never talk to each other. Every run has an
id; signals of a superseded run are dropped, so a late result never paints over newer parameters.

A sweep (:func:`microgui.core.sweep.run_sweep`) runs in the same one-thread run pool, as one job:
each finished point becomes a history entry as it arrives. A sweep point keeps the run report
and measures, not the protected table; opening it re-runs its spec with the seed it used (same
seed, same partition) in the worker, and the entry is completed in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QObject, QThreadPool, Signal, Slot

from microgui.core.dataset import Dataset, prepare_qi
from microgui.core.dependency import DEFAULT_BINS, DependencyTree, dependency_tree_of_qi
from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.export import ExportCheck, check_export, export_run
from microgui.core.layout import MstLayout, TreeLayout, dependency_tree_layout, mst_layout
from microgui.core.methods.base import Method, available_methods
from microgui.core.metrics.utility import correlation_change, paired_numeric, regression_change
from microgui.core.progress import ProgressFn, RunCancelled, sub_progress
from microgui.core.project_file import Project, save_project, write_autosave
from microgui.core.projection import QIProjection, all_category_transitions, qi_projection
from microgui.core.roles import AttributeKind, AttributeRole, RoleMap
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.sweep import SweepPoint, run_sweep
from microgui.qt.hierarchies import HierarchyAttachments
from microgui.qt.workers import Job, RunSignals, RunWorker, SweepSignals, make_run_pool

__all__ = [
    "AppController",
    "RunOutcome",
    "HistoryEntry",
    "Measures",
    "MeasureInfo",
    "measures_of",
    "measure_catalog",
    "FALLBACK_MEASURES",
    "MAX_COMPARED",
    "DependencyTreeOutcome",
    "CorrelationOutcome",
    "RegressionOutcome",
    "correlation_job",
    "regression_job",
    "protect_job",
    "sweep_job",
    "dependency_tree_job",
    "category_values",
    "report_path_for",
]

#: k proposed for a freshly opened table (the demo's default too).
DEFAULT_K = 5

#: The most runs the comparison view puts side by side.
MAX_COMPARED = 4

#: A run's measures: flat keys as ``microgui.core.metrics.evaluate`` returns them.
Measures = Mapping[str, float | int | None]
#: (label, unit, direction "lower is better"/"higher is better", group "utility"/"risk").
MeasureInfo = tuple[str, str, str, str]

#: The measures a run's own report carries, used while ``evaluate`` is not available.
FALLBACK_MEASURES: dict[str, MeasureInfo] = {
    "information_loss_all_qi": (
        "IL, all QIs (100·SSE/SST)",
        "%",
        "lower is better",
        "utility",
    ),
    "information_loss": ("SSE/SST, continuous QIs (z-scores)", "%", "lower is better", "utility"),
    "generalization_il": ("Generalization IL", "", "lower is better", "utility"),
    "k_anonymity": ("k-anonymity level", "records", "higher is better", "risk"),
}


def measure_catalog() -> dict[str, MeasureInfo]:
    """Every known measure: ``evaluate.MEASURES`` when the module is there, else the report's
    own figures (imported lazily: the measures module may be absent in older installations)."""
    catalog = dict(FALLBACK_MEASURES)
    try:
        from microgui.core.metrics.evaluate import readable_measures
    except ImportError:
        return catalog
    # evaluate's order first (utility, then risk), then the report's own extras.
    merged: dict[str, MeasureInfo] = dict(readable_measures())
    merged.update({k: v for k, v in catalog.items() if k not in merged})
    return merged


def measures_of(
    dataset: Dataset, result: RunResult, progress: ProgressFn | None = None
) -> tuple[dict[str, float | int | None], str]:
    """The measures of a finished run and a note ("" when all went well).

    The report's own figures always; everything ``evaluate`` computes on top when it is
    installed. A failure of ``evaluate`` is noted, not raised: the run itself is sound.
    Call it in the worker, never in the GUI thread (it can take seconds).
    """
    report = result.report
    measures: dict[str, float | int | None] = {
        key: report.get(key) for key in FALLBACK_MEASURES if key in report
    }
    try:
        from microgui.core.metrics.evaluate import evaluate
    except ImportError:
        return measures, "only the run's own figures (the measures module is not installed)"
    kwargs: dict[str, Any] = {"labels": result.labels, "k": result.spec.k}
    if progress is not None:
        kwargs["progress"] = progress
    try:
        extra = evaluate(dataset, result.protected, **kwargs)
    except RunCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - a measure that fails must not lose the run
        return measures, f"measures not computed: {type(exc).__name__}: {exc}"
    # numbers only: the per-attribute breakdown stays in the run report
    # evaluate has no generalization IL without hierarchies: the run's own figure stays
    measures.update(
        {
            str(k): v
            for k, v in extra.items()
            if not isinstance(v, Mapping) and (v is not None or k not in measures)
        }
    )
    return measures, ""


@dataclass(frozen=True)
class RunOutcome:
    """What the run worker hands back: the core result and what its views draw, all computed in
    the worker: the PCA projection, the dependency tree's layout (``ama`` runs) and the tree
    edges to draw (``mst`` and ``mstk`` runs)."""

    result: RunResult
    projection: QIProjection | None
    tree_layout: TreeLayout | None = None
    mst_layout: MstLayout | None = None
    #: Utility and risk measures (``evaluate``'s flat keys), computed in the worker.
    measures: Mapping[str, float | int | None] = field(default_factory=dict)
    #: Why some measures are missing ("" when none is).
    measures_note: str = ""
    #: Per ordinal or nominal quasi-identifier, the counts of records by original and released
    #: category (``core.projection.category_transitions``), for the transitions view.
    transitions: Mapping[str, pd.DataFrame] = field(default_factory=dict)


def protect_job(dataset: Dataset, spec: RunSpec) -> Job:
    """The worker's job for one run: protect, measure, then lay out the views (all in core)."""

    def job(progress: ProgressFn) -> RunOutcome:
        result = run_protection(dataset, spec, sub_progress(progress, 0.0, 0.8))
        progress(0.8, "measuring utility and risk")
        measures, note = measures_of(dataset, result, sub_progress(progress, 0.8, 0.97))
        progress(0.97, "projecting for the plot")
        projection = qi_projection(result)
        tree = result.artifacts.get("dependency_tree")
        layout = dependency_tree_layout(tree) if isinstance(tree, DependencyTree) else None
        mst = mst_layout(result)
        transitions = all_category_transitions(result)
        progress(1.0, "done")
        return RunOutcome(result, projection, layout, mst, measures, note, transitions)

    return job


def sweep_job(
    dataset: Dataset,
    specs: Sequence[RunSpec],
    workers: int | None,
    on_point: Callable[[SweepPoint], object],
) -> Job:
    """The worker's job for a sweep: ``run_sweep`` with the worker's progress (which raises
    :class:`RunCancelled` on Cancel; the points finished so far were already handed to
    ``on_point``, called in the worker thread)."""
    specs = list(specs)

    def job(progress: ProgressFn) -> list[SweepPoint]:
        return run_sweep(dataset, specs, workers=workers, progress=progress, on_result=on_point)

    return job


@dataclass(frozen=True)
class HistoryEntry:
    """A finished run kept in the history: its outcome, the table it was computed from (for
    re-running and reports) and when it finished.

    A point of a sweep has ``point`` set and, until it is opened, no ``outcome``: a sweep keeps
    each run's report and measures, not its protected table. Opening it re-runs
    :attr:`reproducible_spec` (same seed, same result) and fills ``outcome`` in.
    """

    run_id: int
    outcome: RunOutcome | None
    dataset: Dataset
    finished_at: datetime
    point: SweepPoint | None = None

    @property
    def has_table(self) -> bool:
        """False for a sweep point not opened yet (its report and measures only)."""
        return self.outcome is not None

    @property
    def from_sweep(self) -> bool:
        return self.point is not None

    @property
    def result(self) -> RunResult:
        if self.outcome is None:
            raise LookupError(
                f"{self.name} is a sweep point kept as its measures only; open it to re-compute it"
            )
        return self.outcome.result

    @property
    def report(self) -> Mapping[str, Any]:
        if self.outcome is not None:
            return self.outcome.result.report
        assert self.point is not None and self.point.report is not None
        return self.point.report

    @property
    def spec(self) -> RunSpec:
        if self.outcome is not None:
            return self.outcome.result.spec
        assert self.point is not None
        return self.point.spec

    @property
    def measures(self) -> Mapping[str, float | int | None]:
        if self.outcome is not None:
            return self.outcome.measures
        assert self.point is not None
        return self.point.measures

    @property
    def measures_note(self) -> str:
        """Why some measures are missing ("" when none is)."""
        if self.outcome is not None:
            return self.outcome.measures_note
        return self.point.error or "" if self.point is not None else ""

    @property
    def seconds(self) -> float:
        """Wall time of the run itself (as its report says)."""
        value = self.report.get("seconds")
        return float(value) if value is not None else 0.0

    @property
    def seed(self) -> int | None:
        """The seed the run used (the spec's, or the fresh one its report recorded)."""
        seed = self.report.get("seed", self.spec.seed)
        return None if seed is None else int(seed)

    @property
    def reproducible_spec(self) -> RunSpec:
        """The spec with the seed actually used: re-running it gives the same result."""
        return replace(self.spec, seed=self.seed)

    @property
    def name(self) -> str:
        """'#3 mdav k=5': how the run is called in tables, legends and reports."""
        return f"#{self.run_id} {self.spec.method} k={self.spec.k}"


@dataclass(frozen=True)
class DependencyTreeOutcome:
    """A dependency tree of the current quasi-identifiers and its drawing layout."""

    tree: DependencyTree
    layout: TreeLayout


def dependency_tree_job(dataset: Dataset, bins: int) -> Job:
    """The worker's job for the dependency tree view: the best dependency tree of the table's
    quasi-identifiers (``000`` Algorithm 1, as an ``ama`` run computes it) and its layout."""

    def job(progress: ProgressFn) -> DependencyTreeOutcome:
        progress(0.0, "preparing the quasi-identifiers")
        qi = prepare_qi(dataset)
        names = list(dataset.roles.quasi_identifiers)
        tree = dependency_tree_of_qi(
            qi, names, bins=bins, progress=sub_progress(progress, 0.05, 0.95)
        )
        layout = dependency_tree_layout(tree)
        progress(1.0, "done")
        return DependencyTreeOutcome(tree, layout)

    return job


@dataclass(frozen=True)
class CorrelationOutcome:
    """Correlations of a run, original vs protected, and the columns a regression can use.

    ``table`` is :func:`~microgui.core.metrics.utility.correlation_change` over ``columns`` (the
    continuous quasi-identifiers and the numeric confidential columns that are numbers in both
    tables; empty with fewer than two); ``original`` and ``protected`` are the same correlations
    as matrices (for the heatmaps). ``numeric_columns``: every non-identifier column numeric in
    the original (regression candidates); ``skipped``: why a column is not compared.
    """

    run_id: int
    columns: tuple[str, ...]
    table: pd.DataFrame
    original: np.ndarray
    protected: np.ndarray
    numeric_columns: tuple[str, ...]
    skipped: Mapping[str, str]
    dropped_rows: int
    n_records: int


@dataclass(frozen=True)
class RegressionOutcome:
    """An OLS model fitted on the original and on the protected table of a run."""

    run_id: int
    y: str
    xs: tuple[str, ...]
    #: :func:`~microgui.core.metrics.utility.regression_change` (R² in its ``attrs``).
    table: pd.DataFrame
    n_records: int
    dropped_rows: int

    @property
    def r_squared(self) -> tuple[float, float]:
        """R² of the fit on the original and on the protected table."""
        attrs = self.table.attrs
        return float(attrs["r_squared_original"]), float(attrs["r_squared_protected"])


def _association_columns(dataset: Dataset, result: RunResult) -> tuple[list[str], list[str]]:
    """(columns whose correlations are compared, candidate columns of a regression)."""
    roles = result.roles
    continuous = roles.qi_of_kind(AttributeKind.CONTINUOUS)
    confidential = roles.confidential
    candidates = [
        str(c)
        for c in dataset.frame.columns
        if str(c) not in roles.identifiers and str(c) in result.protected.columns
    ]
    return [*continuous, *(c for c in confidential if c not in continuous)], candidates


def correlation_job(dataset: Dataset, result: RunResult, run_id: int) -> Job:
    """The worker's job of the correlations view: the correlations of the run's continuous
    quasi-identifiers and numeric confidential columns, original vs protected."""

    def job(progress: ProgressFn) -> CorrelationOutcome:
        progress(0.0, "correlations")
        wanted, candidates = _association_columns(dataset, result)
        numeric = paired_numeric(dataset.frame, result.protected, candidates)
        # Keep the regression candidates that are numbers in the original, generalized or not:
        # fitting one that was generalized says why it cannot be fitted.
        usable = tuple(
            c
            for c in candidates
            if c in numeric.columns or "generalized" in numeric.skipped.get(c, "")
        )
        pair = paired_numeric(dataset.frame, result.protected, wanted)
        names = pair.columns
        p = len(names)
        ro, rp = np.eye(p), np.eye(p)
        if p >= 2 and len(pair.original) >= 2:
            table = correlation_change(pair.original, pair.protected, names)
            index = {c: i for i, c in enumerate(names)}
            for row in table.itertuples():
                i, j = index[str(row.column_a)], index[str(row.column_b)]
                ro[i, j] = ro[j, i] = float(row.original)
                rp[i, j] = rp[j, i] = float(row.protected)
        else:
            table = pd.DataFrame(
                columns=["column_a", "column_b", "original", "protected", "difference"]
            )
        progress(1.0, "done")
        return CorrelationOutcome(
            run_id,
            tuple(names),
            table,
            ro,
            rp,
            usable,
            {c: why for c, why in pair.skipped.items() if c in wanted},
            pair.dropped_rows,
            len(pair.original),
        )

    return job


def regression_job(
    dataset: Dataset, result: RunResult, run_id: int, y: str, xs: Sequence[str]
) -> Job:
    """The worker's job of the regression view: OLS of ``y`` on ``xs`` (with intercept) on the
    original and on the protected table, on the rows complete in both.

    Raises :class:`InvalidParameter` naming the column when a model cannot be fitted (a
    generalized release, too few records, collinear explanatory variables).
    """
    xs = [str(x) for x in xs]

    def job(progress: ProgressFn) -> RegressionOutcome:
        progress(0.0, "fitting")
        if not xs:
            raise InvalidParameter("tick at least one explanatory variable")
        if y in xs:
            raise InvalidParameter(
                f"{y!r} is the dependent variable: it cannot also be an explanatory one"
            )
        pair = paired_numeric(dataset.frame, result.protected, [y, *xs])
        if pair.skipped:
            column, why = next(iter(pair.skipped.items()))
            raise InvalidParameter(
                f"the regression cannot be fitted: {column!r} is {why}; a linear regression "
                "needs numbers in both tables (a run that microaggregates, e.g. mdav, keeps them)"
            )
        n = len(pair.original)
        if n <= len(xs) + 1:
            raise InvalidParameter(
                f"only {n} record(s) have a value in every column of the model: too few to fit "
                f"{len(xs) + 1} coefficients"
            )
        for side, frame in (("original", pair.original), ("protected", pair.protected)):
            design = np.column_stack([np.ones(n), frame[xs].to_numpy(dtype=np.float64)])
            if np.linalg.matrix_rank(design) < design.shape[1]:
                raise InvalidParameter(
                    f"the explanatory variables {', '.join(xs)} are collinear (or one is "
                    f"constant) in the {side} table: the coefficients are not determined; "
                    "leave one out"
                )
        table = regression_change(pair.original, pair.protected, y, xs)
        progress(1.0, "done")
        return RegressionOutcome(run_id, y, tuple(xs), table, n, pair.dropped_rows)

    return job


def report_path_for(csv_path: Path) -> Path:
    """The JSON report written beside an exported CSV: ``name.csv`` → ``name.report.json``."""
    return csv_path.with_name(csv_path.stem + ".report.json")


def category_values(series: pd.Series) -> list[str]:
    """The distinct values of a column as the text an ordinal order uses (3.0 → "3"), numbers in
    numeric order and text in alphabetical order: the starting point of the order editor."""
    values = series.dropna().unique()
    numeric = pd.to_numeric(
        pd.Series(values, dtype=object).astype("string").str.strip(), errors="coerce"
    )
    if len(values) and bool(numeric.notna().all()):
        out: list[str] = []
        for v in np.sort(numeric.to_numpy(dtype=np.float64)):
            out.append(str(int(v)) if float(v).is_integer() else str(float(v)))
        return list(dict.fromkeys(out))
    return sorted({str(v) for v in values})


@dataclass
class _ComparisonRestore:
    """A project's comparison being restored: which sweep re-computes its runs, which of them
    (by index in the project) were compared, and their history ids as they arrive."""

    sweep_id: int
    wanted: tuple[int, ...]
    by_index: dict[int, int] = field(default_factory=dict)
    run_ids: list[int] = field(default_factory=list)
    to_open: list[int] = field(default_factory=list)
    waiting: int | None = None


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
        self._pending_project: Project | None = None
        self._restore: _ComparisonRestore | None = None
        #: the release check of a result, kept so that the export does not repeat it
        self._export_check: tuple[RunResult, ExportCheck] | None = None
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
        self._next_id = 1
        self._current: int | None = None
        self._workers: dict[int, RunWorker] = {}
        self._run_datasets: dict[int, Dataset] = {}
        # Reading a file is a job too (a large Excel sheet takes a while): its own one-thread
        # pool, so that opening a table never waits behind a run.
        self.load_pool: QThreadPool = make_run_pool(self)
        self._next_load_id = 1
        self._current_load: int | None = None
        self._loaders: dict[int, tuple[RunWorker, Path]] = {}
        # The dependency tree view's computations: a pool of their own, so that they never wait
        # behind a run, and ids, so that a superseded tree never paints over a newer one.
        self.analysis_pool: QThreadPool = make_run_pool(self)
        #: Hierarchy files attached to columns (issue 13), read in the analysis pool.
        self.hierarchies = HierarchyAttachments(self.analysis_pool, self)
        self._next_tree_id = 1
        self._current_tree: int | None = None
        self._tree_workers: dict[int, RunWorker] = {}
        # Correlations and regressions of the run shown: the analysis pool too, one current
        # request per kind ("correlations", "regression"); a superseded one is ignored.
        self._next_analysis_id = 1
        self._analysis_workers: dict[int, tuple[str, RunWorker]] = {}
        self._current_analysis: dict[str, int] = {}
        #: Every finished run of this table, oldest first (STYLE.md §3: specs are re-runnable).
        self.history: list[HistoryEntry] = []
        #: The history run shown in the views (None before the first run).
        self.shown_run_id: int | None = None
        #: False while the roles are microgui's suggestion, not yet confirmed by the user.
        self.roles_reviewed = True
        #: The runs of the comparison view (2 to MAX_COMPARED ids, or empty).
        self.compared: tuple[int, ...] = ()
        self.measures: Mapping[str, float | int | None] = {}
        # Sweeps share the run pool (one job at a time) but have ids of their own.
        self._next_sweep_id = 1
        self._current_sweep: int | None = None
        self._sweep_workers: dict[int, RunWorker] = {}
        self._sweep_datasets: dict[int, Dataset] = {}
        self._sweep_points: dict[int, list[SweepPoint]] = {}
        #: Re-runs that open a sweep point: re-run id -> the history entry they complete.
        self._opening: dict[int, int] = {}
        #: A sweep point the user opened while a sweep was running: opened when it ends.
        self._queued_open: int | None = None

    # dataset and roles --------------------------------------------------------------------
    def load_file(self, path: str | Path) -> Dataset:
        """Read a table (raises :class:`MicroguiError` with a message for the user)."""
        from microgui.core.io import read_table

        dataset = read_table(Path(path))
        self.set_dataset(dataset)
        return dataset

    def open_file(self, path: str | Path) -> int:
        """Read a table in the background; ``dataset_loaded`` or ``load_failed`` follows.

        Returns the load's id. A newer ``open_file`` supersedes an older one still reading.
        """
        from microgui.core.io import read_table

        path = Path(path)
        load_id = self._next_load_id
        self._next_load_id += 1
        signals = RunSignals()
        signals.finished.connect(self._on_loaded)
        signals.failed.connect(self._on_load_failed)
        signals.cancelled.connect(self._on_load_cancelled)
        signals.progress.connect(self._on_load_progress)
        worker = RunWorker(load_id, lambda progress: read_table(path, progress=progress), signals)
        self._loaders[load_id] = (worker, path)
        self._current_load = load_id
        self.load_started.emit(path)
        self.load_pool.start(worker)
        return load_id

    @property
    def is_loading(self) -> bool:
        return self._current_load is not None

    @Slot(int, object)
    def _on_loaded(self, load_id: int, dataset: Any) -> None:
        self._loaders.pop(load_id, None)
        if load_id != self._current_load:
            return
        self._current_load = None
        assert isinstance(dataset, Dataset)
        self.set_dataset(dataset)
        pending, self._pending_project = self._pending_project, None
        if pending is not None:
            self._apply_project(pending, dataset)

    @Slot(int, str, str)
    def _on_load_failed(self, load_id: int, message: str, details: str) -> None:
        _worker, path = self._loaders.pop(load_id, (None, Path()))
        if load_id != self._current_load:
            return
        self._current_load = None
        self._pending_project = None
        self.load_failed.emit(path, message, details)

    @Slot(int)
    def _on_load_cancelled(self, load_id: int) -> None:
        _worker, path = self._loaders.pop(load_id, (None, Path()))
        if load_id == self._current_load:
            self._current_load = None
            self.load_cancelled.emit(path)

    @Slot(int, float, str)
    def _on_load_progress(self, load_id: int, fraction: float, status: str) -> None:
        loader = self._loaders.get(load_id)
        if load_id == self._current_load and loader is not None:
            self.load_progress.emit(loader[1], fraction, status)

    def cancel_load(self) -> None:
        """Ask the file being read to stop; ``load_cancelled`` follows (the table stays)."""
        loader = self._loaders.get(self._current_load) if self._current_load else None
        if loader is not None:
            loader[0].cancel()

    # project files (issue 7) ----------------------------------------------------------------
    def project(self) -> Project | None:
        """The session as a :class:`~microgui.core.project_file.Project` (no data values), or
        None without a table. Runs are the history's reproducible specs (seeds kept)."""
        if self.dataset is None:
            return None
        specs = [entry.reproducible_spec for entry in self.history]
        ids = [entry.run_id for entry in self.history]
        return Project(
            data_path=str(self.dataset.source) if self.dataset.source else None,
            columns=tuple(str(c) for c in self.dataset.frame.columns),
            roles=self.dataset.roles,
            runs=tuple(specs),
            comparison=tuple(ids.index(i) for i in self.compared if i in ids),
            hierarchies=tuple(sorted(self.hierarchies.paths().items())),
        )

    def save_project(self, path: str | Path) -> None:
        """Write the project file (atomically); raises :class:`MicroguiError` with a message."""
        project = self.project()
        if project is None:
            raise InvalidRoles("open a table first: a project holds a table's roles and runs")
        save_project(project, path)

    def open_project(self, project: Project, folder: Path | None = None) -> int:
        """Open a read project (:func:`~microgui.core.project_file.load_project`; ``folder``:
        the project file's, for a relative data path): read its table in the background, then
        apply its roles and re-run its runs (same seeds: same results) as a sweep. Returns the
        load's id. Raises :class:`MicroguiError` when the table is gone."""
        data = project.resolved_data_path(folder)
        if data is None:
            raise InvalidInput("the project names no table (it was saved from the demo data?)")
        if not data.is_file():
            raise InvalidInput(
                f"the project's table {str(data)!r} is not there; move it back, or open the table "
                "and tag it again"
            )
        load_id = self.open_file(data)
        # hierarchy files (attached, and the runs') relative to the project file, as the table
        attached = project.resolved_hierarchies(folder)
        self._pending_project = replace(
            project,
            runs=project.resolved_runs(folder),
            hierarchies=tuple((c, str(p)) for c, p in attached.items()),
        )
        return load_id

    def _apply_project(self, project: Project, dataset: Dataset) -> None:
        columns = [str(c) for c in dataset.frame.columns]
        if project.columns and list(project.columns) != columns:
            missing = [c for c in project.columns if c not in columns]
            what = f"column {missing[0]!r} is gone" if missing else "its columns changed"
            self.load_failed.emit(
                Path(str(dataset.source)),
                f"the table changed since the project was saved ({what}); roles were not applied",
                "",
            )
            return
        roles = RoleMap(tuple((c, project.roles.get(c, dataset.roles[c])) for c in columns))
        self.set_roles(roles)
        # read in the background; a file that is gone is said by ``hierarchies.failed``
        self.hierarchies.attach_all(dataset, dict(project.hierarchies))
        self.confirm_roles()  # the project's roles are the user's, saved
        if project.runs:
            sweep_id = self.start_sweep(list(project.runs), workers=1)
            if len(project.comparison) >= 2:
                self._restore = _ComparisonRestore(sweep_id, project.comparison)

    def _restore_step(self) -> None:
        """Re-compute the project's compared runs one by one (sweep points keep no table), then
        compare them: the comparison view shows what was compared when the project was saved."""
        restore = self._restore
        if restore is None:
            return
        while restore.to_open:
            run_id = restore.to_open[0]
            if any(e.run_id == run_id for e in self.history) and not self.entry(run_id).has_table:
                restore.waiting = run_id
                self.open_point(run_id)
                return
            restore.to_open.pop(0)
        self._restore = None
        ids = [i for i in restore.run_ids if any(e.run_id == i for e in self.history)]
        if len(ids) >= 2:
            self.set_comparison(ids)

    def autosave(self) -> Path | None:
        """Save the session for crash recovery (nothing without a table)."""
        project = self.project()
        if project is None:
            return None
        return write_autosave(project)

    def load_demo(self) -> Dataset:
        """Open the bundled demo table with its tagged roles."""
        from microgui.core.demo import load_demo

        dataset = load_demo()
        self.set_dataset(dataset)
        return dataset

    def set_dataset(self, dataset: Dataset) -> None:
        """Replace the table: any run in progress is superseded and the last result dropped."""
        was_running = self.is_running
        self._cancel_current()
        self._cancel_sweep()
        self._queued_open = None
        if was_running:
            self.busy_changed.emit(False)
        self._cancel_tree()
        self.hierarchies.clear()  # they were attached to the columns of the previous table
        self.dataset = dataset
        self.result = None
        self.projection = None
        self.tree_layout = None
        self.mst_layout = None
        self.result_dataset = None
        self.measures = {}
        # Runs of another table cannot be compared with the new one's, nor shown over it.
        had_history = bool(self.history)
        self._restore = None
        self.history = []
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
        from microgui.core.dataset import explain_roles

        if self.dataset is None:
            raise InvalidRoles("open a table first")
        explained = explain_roles(self.dataset.frame)
        roles = RoleMap.from_dict({s.name: s.spec for s in explained})
        reasons = {s.name: s.reason for s in explained}
        self.dataset = replace(self.dataset, roles=roles, role_reasons=reasons)
        self.roles_changed.emit(roles)
        self._set_reviewed(False)

    def set_missing_as_category(self, column: str, flag: bool) -> None:
        """Treat the missing cells of a nominal/ordinal quasi-identifier as a category."""
        roles = self._require_roles()
        self._replace_roles(roles.replace(column, roles[column].with_missing_as_category(flag)))

    @property
    def roles(self) -> RoleMap | None:
        return self.dataset.roles if self.dataset is not None else None

    def _replace_roles(self, roles: RoleMap) -> None:
        if self.dataset is None:
            raise InvalidRoles("open a table first")
        self.dataset = self.dataset.with_roles(roles)
        self.roles_changed.emit(roles)

    def set_roles(self, roles: RoleMap) -> None:
        """Replace all tags at once (same columns as the table)."""
        if self.dataset is None:
            raise InvalidRoles("open a table first")
        if list(roles) != list(self.dataset.roles):
            raise InvalidRoles("the roles do not name the columns of the open table")
        self._replace_roles(roles)

    def set_role(self, column: str, role: AttributeRole) -> None:
        """Tag a column with a role (its kind and order are kept for when it is a QI again)."""
        roles = self._require_roles()
        spec = roles[column].with_role(AttributeRole(role))
        self._replace_roles(roles.replace(column, spec))

    def set_kind(self, column: str, kind: AttributeKind) -> None:
        """Set a column's kind; a column made ordinal gets its values in their natural order."""
        roles = self._require_roles()
        kind = AttributeKind(kind)
        spec = roles[column]
        if kind is spec.kind:
            return
        order: list[str] | None = None
        if kind is AttributeKind.ORDINAL:
            assert self.dataset is not None
            order = list(spec.order) if spec.order else category_values(self.dataset.frame[column])
        self._replace_roles(roles.replace(column, spec.with_kind(kind, order)))

    def set_order(self, column: str, order: Sequence[str]) -> None:
        """Set the category order (lowest first) of an ordinal column."""
        roles = self._require_roles()
        spec = roles[column]
        if len(set(order)) != len(order):
            raise InvalidRoles(f"the order of {column!r} lists a category twice")
        self._replace_roles(
            roles.replace(column, spec.with_kind(AttributeKind.ORDINAL, list(order)))
        )

    def _require_roles(self) -> RoleMap:
        if self.dataset is None:
            raise InvalidRoles("open a table first")
        return self.dataset.roles

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

    def default_spec(self) -> RunSpec:
        """The run proposed for the current table: MDAV on purely continuous quasi-identifiers,
        MDAV-generic when ordinal or nominal ones are present (the demo), k = 5."""
        methods = {m.name: m for m in self.methods()}
        kinds: set[AttributeKind] = set()
        n = 0
        if self.dataset is not None:
            roles = self.dataset.roles
            kinds = {roles[c].kind for c in roles.quasi_identifiers}
            n = self.dataset.n_records
        name: str | None = next(
            (
                m
                for m in ("mdav", "mdav-generic")
                if m in methods and kinds and kinds <= methods[m].kinds
            ),
            None,
        )
        if name is None:
            fitting = [m.name for m in methods.values() if kinds and kinds <= m.kinds]
            name = "mdav-generic" if "mdav-generic" in methods else (fitting or sorted(methods))[0]
        k = DEFAULT_K if n == 0 else max(2, min(DEFAULT_K, n))
        return RunSpec.make(name, k, seed=0)

    # runs ---------------------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        """A run or a sweep is in progress."""
        return self._current is not None or self._current_sweep is not None

    @property
    def is_sweeping(self) -> bool:
        return self._current_sweep is not None

    @property
    def current_run_id(self) -> int | None:
        return self._current

    @property
    def live_runs(self) -> int:
        """Runs started whose last signal has not been handled yet (superseded ones included)."""
        return len(self._workers)

    def start_run(self, spec: RunSpec) -> int:
        """Start a run of ``spec`` on the current dataset; returns its id.

        A run already in progress is cancelled and superseded: its late signals are ignored.
        """
        if self.dataset is None:
            raise InvalidRoles("open a table before running a method")
        run_id = self.start_job(protect_job(self.dataset, spec), spec, self.dataset)
        self.confirm_roles()  # running on the roles is accepting them
        return run_id

    def start_job(self, job: Job, spec: RunSpec, dataset: Dataset) -> int:
        """Start any job returning a :class:`RunOutcome` (the tests use slow or failing jobs)."""
        was_running = self.is_running
        self._cancel_current()
        # A run supersedes a sweep too (its finished points stay in the history).
        self._cancel_sweep()
        run_id = self._next_id
        self._next_id += 1
        signals = RunSignals()  # made here, in the GUI thread
        signals.progress.connect(self._on_progress)
        signals.finished.connect(self._on_finished)
        signals.failed.connect(self._on_failed)
        signals.cancelled.connect(self._on_cancelled)
        worker = RunWorker(run_id, job, signals)
        self._workers[run_id] = worker
        self._run_datasets[run_id] = dataset
        self._current = run_id
        self.run_started.emit(run_id, spec)
        if not was_running:
            self.busy_changed.emit(True)
        if self.pool.activeThreadCount() >= self.pool.maxThreadCount():
            # an abandoned run still holds the one run thread (e.g. inside a kernel compile):
            # say why nothing moves yet
            self.run_progress.emit(run_id, 0.0, "waiting for the cancelled run to stop")
        self.pool.start(worker)
        return run_id

    def cancel_run(self) -> None:
        """Stop the current run (or sweep). A run is abandoned at once: ``run_cancelled`` and
        the window's idle state follow immediately, even when the worker is inside a step that
        cannot look at the cancel flag (compiling a kernel on a first run took 25 s); the worker
        stops at its next check and its late signals are ignored (issue 15). A sweep:
        ``sweep_cancelled`` follows when its processes have stopped."""
        run_id = self._current
        if run_id is not None:
            self._cancel_current()  # asks the worker to stop and supersedes it
            self.busy_changed.emit(False)
            self.run_cancelled.emit(run_id)
        self.cancel_sweep()
        self.cancel_load()

    def _cancel_current(self) -> bool:
        """Supersede the current run: it is cancelled and from now on ignored. True if there was one."""
        if self._current is None:
            return False
        worker = self._workers.get(self._current)
        if worker is not None:
            worker.cancel()
        self._current = None
        return True

    def _release(self, run_id: int) -> None:
        self._workers.pop(run_id, None)
        self._run_datasets.pop(run_id, None)
        self._opening.pop(run_id, None)

    def _end_current(self, run_id: int) -> bool:
        """Release a finished worker; True when it was the current run (whose signal counts)."""
        self._release(run_id)
        if run_id != self._current:
            return False
        self._current = None
        return True

    @Slot(int, float, str)
    def _on_progress(self, run_id: int, fraction: float, status: str) -> None:
        if run_id == self._current:
            self.run_progress.emit(run_id, fraction, status)

    @Slot(int, object)
    def _on_finished(self, run_id: int, outcome: Any) -> None:
        dataset = self._run_datasets.get(run_id)
        target = self._opening.get(run_id)
        if not self._end_current(run_id):
            return
        assert isinstance(outcome, RunOutcome)
        assert dataset is not None
        self.busy_changed.emit(False)
        row = next((i for i, e in enumerate(self.history) if e.run_id == target), -1)
        if row >= 0:
            # A sweep point opened: the same history entry, now with its table.
            self.history[row] = replace(self.history[row], outcome=outcome)
            self.history_changed.emit()
            self._show(self.history[row].run_id)
            return
        self.history.append(HistoryEntry(run_id, outcome, dataset, datetime.now()))
        self.history_changed.emit()
        self._show(run_id)

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
        if self._restore is not None and self._restore.waiting == run_id:
            self._restore.waiting = None
            self._restore_step()
        if had_selection:
            self.selection_changed.emit(None)

    # history ------------------------------------------------------------------------------
    def entry(self, run_id: int) -> HistoryEntry:
        """The history entry of a run (KeyError when it is not, or no longer, in the history)."""
        for entry in self.history:
            if entry.run_id == run_id:
                return entry
        raise KeyError(f"run #{run_id} is not in the history")

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
        seed = "a fresh seed" if entry.seed is None else f"seed {entry.seed}"
        if self._current_sweep is not None:
            self._queued_open = run_id
            self.point_opening.emit(
                run_id,
                f"{entry.name} is a sweep point (measures only): it will be re-computed with "
                f"{seed} to show it when the sweep ends.",
            )
            return None
        if run_id in self._opening.values() and self.is_running:
            return None
        spec = entry.reproducible_spec
        rerun_id = self.start_job(protect_job(entry.dataset, spec), spec, entry.dataset)
        self._opening[rerun_id] = run_id
        self.point_opening.emit(
            run_id,
            f"{entry.name} is a sweep point (measures only): re-running it with {seed} to show "
            "it (same spec and seed, same result)…",
        )
        return rerun_id

    # sweeps -------------------------------------------------------------------------------
    @property
    def current_sweep_id(self) -> int | None:
        return self._current_sweep

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
        self._cancel_current()
        self._cancel_sweep()
        sweep_id = self._next_sweep_id
        self._next_sweep_id += 1
        signals = SweepSignals()  # made here, in the GUI thread
        signals.progress.connect(self._on_sweep_progress)
        signals.point.connect(self._on_sweep_point)
        signals.finished.connect(self._on_sweep_finished)
        signals.failed.connect(self._on_sweep_failed)
        signals.cancelled.connect(self._on_sweep_cancelled)
        job = sweep_job(
            self.dataset, specs, workers, lambda point: signals.point.emit(sweep_id, point)
        )
        worker = RunWorker(sweep_id, job, signals)
        self._sweep_workers[sweep_id] = worker
        self._sweep_datasets[sweep_id] = self.dataset
        self._sweep_points[sweep_id] = []
        self._current_sweep = sweep_id
        self.sweep_started.emit(sweep_id, len(specs))
        if not was_running:
            self.busy_changed.emit(True)
        self.pool.start(worker)
        return sweep_id

    def cancel_sweep(self) -> None:
        """Ask the sweep to stop; ``sweep_cancelled`` follows with the points kept."""
        if self._current_sweep is not None:
            worker = self._sweep_workers.get(self._current_sweep)
            if worker is not None:
                worker.cancel()

    def _cancel_sweep(self) -> bool:
        """Supersede the current sweep: cancelled, and its later signals ignored."""
        if self._current_sweep is None:
            return False
        worker = self._sweep_workers.get(self._current_sweep)
        if worker is not None:
            worker.cancel()
        self._current_sweep = None
        return True

    def _end_sweep(self, sweep_id: int) -> tuple[bool, list[SweepPoint]]:
        """Release a finished sweep worker: (was it the current sweep, its points so far)."""
        self._sweep_workers.pop(sweep_id, None)
        self._sweep_datasets.pop(sweep_id, None)
        points = self._sweep_points.pop(sweep_id, [])
        if sweep_id != self._current_sweep:
            return False, points
        self._current_sweep = None
        return True, points

    def _after_sweep(self) -> None:
        if not self.is_running:
            self.busy_changed.emit(False)
        queued, self._queued_open = self._queued_open, None
        if queued is not None and any(e.run_id == queued for e in self.history):
            self.open_point(queued)

    @Slot(int, float, str)
    def _on_sweep_progress(self, sweep_id: int, fraction: float, status: str) -> None:
        if sweep_id == self._current_sweep:
            self.sweep_progress.emit(sweep_id, fraction, status)

    @Slot(int, object)
    def _on_sweep_point(self, sweep_id: int, point: Any) -> None:
        if sweep_id != self._current_sweep:
            return
        assert isinstance(point, SweepPoint)
        self._sweep_points[sweep_id].append(point)
        run_id = -1
        if point.report is not None:
            run_id = self._next_id
            self._next_id += 1
            dataset = self._sweep_datasets[sweep_id]
            self.history.append(HistoryEntry(run_id, None, dataset, datetime.now(), point))
            self.history_changed.emit()
            if self._restore is not None and self._restore.sweep_id == sweep_id:
                self._restore.by_index[point.index] = run_id
        self.sweep_point_finished.emit(sweep_id, point, run_id)

    @Slot(int, object)
    def _on_sweep_finished(self, sweep_id: int, points: Any) -> None:
        current, _received = self._end_sweep(sweep_id)
        if not current:
            return
        self.sweep_finished.emit(sweep_id, list(points))
        self._after_sweep()
        restore = self._restore
        if restore is not None and restore.sweep_id == sweep_id:
            restore.run_ids = [restore.by_index[i] for i in restore.wanted if i in restore.by_index]
            restore.to_open = list(restore.run_ids)
            self._restore_step()

    @Slot(int)
    def _on_sweep_cancelled(self, sweep_id: int) -> None:
        current, received = self._end_sweep(sweep_id)
        if not current:
            return
        self.sweep_cancelled.emit(sweep_id, sorted(received, key=lambda p: p.index))
        self._after_sweep()

    @Slot(int, str, str)
    def _on_sweep_failed(self, sweep_id: int, message: str, details: str) -> None:
        current, _received = self._end_sweep(sweep_id)
        if not current:
            return
        self.sweep_failed.emit(sweep_id, message, details)
        self._after_sweep()

    def rerun(self, run_id: int) -> int:
        """Run a history entry again from its spec, with the seed it used, on the table it was
        computed from; returns the new run's id (a new history entry follows)."""
        entry = self.entry(run_id)
        spec = entry.reproducible_spec
        return self.start_job(protect_job(entry.dataset, spec), spec, entry.dataset)

    def remove_run(self, run_id: int) -> None:
        """Drop a run from the history (and from the comparison). The views keep showing it
        when it was the run shown, until another one is shown."""
        entry = self.entry(run_id)
        self.history.remove(entry)
        if self.shown_run_id == run_id:
            self.shown_run_id = None
        self.history_changed.emit()
        if run_id in self.compared:
            rest = tuple(i for i in self.compared if i != run_id)
            self.compared = rest if len(rest) >= 2 else ()
            self.comparison_changed.emit(self.compared)

    def set_comparison(self, run_ids: Sequence[int]) -> None:
        """Compare 2 to :data:`MAX_COMPARED` history runs side by side (empty: none)."""
        ids = tuple(dict.fromkeys(int(i) for i in run_ids))
        if ids and not 2 <= len(ids) <= MAX_COMPARED:
            raise InvalidParameter(f"choose 2 to {MAX_COMPARED} runs to compare, not {len(ids)}")
        unopened = [self.entry(i).name for i in ids if not self.entry(i).has_table]
        if unopened:
            raise InvalidParameter(
                f"{', '.join(unopened)}: sweep point(s) kept as measures only; select each one "
                "first to re-compute its table (same seed, same result), then compare"
            )
        self.compared = ids
        self.comparison_changed.emit(ids)

    @Slot(int, str, str)
    def _on_failed(self, run_id: int, message: str, details: str) -> None:
        if not self._end_current(run_id):
            return
        self.busy_changed.emit(False)
        self.run_failed.emit(run_id, message, details)

    @Slot(int)
    def _on_cancelled(self, run_id: int) -> None:
        if not self._end_current(run_id):
            return
        self.busy_changed.emit(False)
        self.run_cancelled.emit(run_id)

    # selection ----------------------------------------------------------------------------
    def set_selection(self, rows: np.ndarray | Sequence[int] | None) -> None:
        """Select records: row numbers or a bool mask over the table's rows (None or no row:
        nothing selected). ``selection_changed`` carries the mask (or None)."""
        n = self.dataset.n_records if self.dataset is not None else 0
        mask: np.ndarray | None = None
        if rows is not None:
            array = np.asarray(rows)
            if array.dtype == bool:
                if array.shape != (n,):
                    raise ValueError(f"a selection mask needs {n} values, not {array.shape}")
                mask = array.copy()
            else:
                mask = np.zeros(n, dtype=bool)
                mask[array.astype(np.int64).reshape(-1)] = True
            if not mask.any():
                mask = None
        if mask is None and self.selection is None:
            return
        self.selection = mask
        self.selection_changed.emit(mask)

    def clear_selection(self) -> None:
        self.set_selection(None)

    @property
    def selected_rows(self) -> np.ndarray:
        """Row numbers of the selected records (increasing; empty when nothing is selected)."""
        if self.selection is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.selection)

    # dependency tree ----------------------------------------------------------------------
    def compute_dependency_tree(self, bins: int = DEFAULT_BINS) -> int:
        """Compute the dependency tree of the current quasi-identifiers in the background.

        Returns the request's id; ``dependency_tree_computed`` or ``dependency_tree_failed``
        follows with it. A newer request supersedes (cancels and ignores) an older one.
        """
        if self.dataset is None:
            raise InvalidRoles("open a table first")
        self._cancel_tree()
        tree_id = self._next_tree_id
        self._next_tree_id += 1
        signals = RunSignals()
        signals.finished.connect(self._on_tree_finished)
        signals.failed.connect(self._on_tree_failed)
        signals.cancelled.connect(self._on_tree_cancelled)
        worker = RunWorker(tree_id, dependency_tree_job(self.dataset, int(bins)), signals)
        self._tree_workers[tree_id] = worker
        self._current_tree = tree_id
        self.analysis_pool.start(worker)
        return tree_id

    @property
    def is_computing_tree(self) -> bool:
        return self._current_tree is not None

    def _cancel_tree(self) -> None:
        if self._current_tree is not None:
            worker = self._tree_workers.get(self._current_tree)
            if worker is not None:
                worker.cancel()
            self._current_tree = None

    def _end_tree(self, tree_id: int) -> bool:
        self._tree_workers.pop(tree_id, None)
        if tree_id != self._current_tree:
            return False
        self._current_tree = None
        return True

    @Slot(int, object)
    def _on_tree_finished(self, tree_id: int, outcome: Any) -> None:
        if self._end_tree(tree_id):
            self.dependency_tree_computed.emit(tree_id, outcome)

    @Slot(int, str, str)
    def _on_tree_failed(self, tree_id: int, message: str, details: str) -> None:
        if self._end_tree(tree_id):
            self.dependency_tree_failed.emit(tree_id, message, details)

    @Slot(int)
    def _on_tree_cancelled(self, tree_id: int) -> None:
        self._end_tree(tree_id)

    # correlations and regression (issue 5) ----------------------------------------------
    def compute_correlations(self) -> int:
        """Correlations of the run shown, original vs protected, computed in the background.

        Returns the request's id; ``correlations_computed`` or ``correlations_failed`` follows.
        """
        if self.result is None or self.result_dataset is None or self.shown_run_id is None:
            raise InvalidRoles("run a method first: the correlations compare a run with its table")
        job = correlation_job(self.result_dataset, self.result, self.shown_run_id)
        return self._start_analysis("correlations", job)

    def fit_regression(self, y: str, xs: Sequence[str]) -> int:
        """Fit ``y ~ xs`` (OLS with intercept) on the original and protected tables of the run
        shown, in the background; ``regression_fitted`` or ``regression_failed`` follows."""
        if self.result is None or self.result_dataset is None or self.shown_run_id is None:
            raise InvalidRoles("run a method first: the regression compares a run with its table")
        job = regression_job(self.result_dataset, self.result, self.shown_run_id, y, xs)
        return self._start_analysis("regression", job)

    def _start_analysis(self, kind: str, job: Job) -> int:
        previous = self._current_analysis.pop(kind, None)
        if previous is not None and previous in self._analysis_workers:
            self._analysis_workers[previous][1].cancel()
        analysis_id = self._next_analysis_id
        self._next_analysis_id += 1
        signals = RunSignals()  # made here, in the GUI thread
        signals.finished.connect(self._on_analysis_finished)
        signals.failed.connect(self._on_analysis_failed)
        signals.cancelled.connect(self._on_analysis_cancelled)
        worker = RunWorker(analysis_id, job, signals)
        self._analysis_workers[analysis_id] = (kind, worker)
        self._current_analysis[kind] = analysis_id
        self.analysis_pool.start(worker)
        return analysis_id

    def _end_analysis(self, analysis_id: int) -> str | None:
        """Release a finished analysis worker; its kind when it is still the current request."""
        kind, _worker = self._analysis_workers.pop(analysis_id, ("", None))
        if not kind or self._current_analysis.get(kind) != analysis_id:
            return None
        del self._current_analysis[kind]
        return kind

    @Slot(int, object)
    def _on_analysis_finished(self, analysis_id: int, outcome: Any) -> None:
        kind = self._end_analysis(analysis_id)
        if kind == "correlations":
            self.correlations_computed.emit(analysis_id, outcome)
        elif kind == "regression":
            self.regression_fitted.emit(analysis_id, outcome)

    @Slot(int, str, str)
    def _on_analysis_failed(self, analysis_id: int, message: str, details: str) -> None:
        kind = self._end_analysis(analysis_id)
        if kind == "correlations":
            self.correlations_failed.emit(analysis_id, message, details)
        elif kind == "regression":
            self.regression_failed.emit(analysis_id, message, details)

    @Slot(int)
    def _on_analysis_cancelled(self, analysis_id: int) -> None:
        self._end_analysis(analysis_id)

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel every run and wait for the pools (called when the window closes).

        A file being read stops at its next progress call (CSV: every 8,192 records); its
        result is dropped.
        """
        for worker in self._workers.values():
            worker.cancel()
        for worker, _path in self._loaders.values():
            worker.cancel()
        for worker in self._tree_workers.values():
            worker.cancel()
        for worker in self._sweep_workers.values():
            worker.cancel()
        for _kind, worker in self._analysis_workers.values():
            worker.cancel()
        self.hierarchies.cancel_all()
        pools = (self.pool, self.load_pool, self.analysis_pool)
        for pool in pools:
            pool.clear()
        done = all([pool.waitForDone(timeout_ms) for pool in pools])
        self._current_load = None
        self._loaders.clear()
        self._current_tree = None
        self._tree_workers.clear()
        self._analysis_workers.clear()
        self._current_analysis.clear()
        was_running = self.is_running
        self._current = None
        self._current_sweep = None
        self._queued_open = None
        if was_running:
            self.busy_changed.emit(False)
        self._workers.clear()
        self._run_datasets.clear()
        self._opening.clear()
        self._sweep_workers.clear()
        self._sweep_datasets.clear()
        self._sweep_points.clear()
        return bool(done)

    # export -------------------------------------------------------------------------------
    def check_current_export(self) -> ExportCheck:
        """The release check of the current result (no file written)."""
        if self.result is None:
            raise InvalidRoles("run a method before exporting")
        if self._export_check is None or self._export_check[0] is not self.result:
            self._export_check = (self.result, check_export(self.result))
        return self._export_check[1]

    def export(self, csv_path: str | Path, override: str | None = None) -> dict[str, Any]:
        """Write the protected CSV and its report beside it; returns the report.

        Raises :class:`ExportRefused` (check failed without ``override``, or a target is the input).
        """
        if self.result is None or self.result_dataset is None:
            raise InvalidRoles("run a method before exporting")
        csv_path = Path(csv_path)
        return export_run(
            self.result_dataset,
            self.result,
            csv_path,
            report_path_for(csv_path),
            override=override or None,
            check=self.check_current_export(),
            # attached hierarchy files are inputs too, whatever the run used (issue 13 review)
            also_protect=[Path(p) for p in self.hierarchies.paths().values()],
        )
