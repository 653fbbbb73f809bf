"""What is computed around a run, for the command line, the sweeps and the app alike.

- :func:`measure_run`: the measures of a finished run (its report's own figures, then everything
  :func:`~microgui.core.metrics.evaluate.evaluate` computes), the one definition the app's runs
  and every sweep point use; :func:`measure_catalog` names them.
- :func:`analyse_run`: protect, measure, then lay out what the app's views draw (PCA projection,
  dependency tree, MST edges, category transitions); :class:`RunOutcome` holds it all.
- :func:`dependency_tree_outcome`: the dependency tree view's tree and layout.
- :func:`correlation_outcome`, :func:`regression_outcome`: the correlations view's figures
  (:mod:`microgui.core.metrics.association` defines the columns and the missing-value rule).
- :func:`proposed_spec`: the run proposed for a freshly opened table.
- :func:`record_mask`: a selection of records as a mask. (The default order of a column made
  ordinal is :func:`microgui.core.table.dataset.category_values`.)

Plain Python: no Qt here; ``microgui.qt`` runs these functions in its worker threads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from microgui.core.io import json_number
from microgui.core.metrics.association import (
    Correlations,
    Regression,
    correlations,
    fit_regression,
)
from microgui.core.metrics.utility import paired_numeric
from microgui.core.progress import ProgressFn, RunCancelled, no_progress, sub_progress
from microgui.core.runs.spec import RunResult, RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, RoleMap

if TYPE_CHECKING:  # the views' types; their modules are imported when a run is laid out
    from microgui.core.methods.base import Method
    from microgui.core.table.dependency import DependencyTree
    from microgui.core.views.layout import MstLayout, TreeLayout
    from microgui.core.views.projection import QIProjection

__all__ = [
    "Measures",
    "MeasureInfo",
    "REPORT_MEASURES",
    "measure_catalog",
    "measure_run",
    "one_line",
    "RunOutcome",
    "analyse_run",
    "DependencyTreeOutcome",
    "dependency_tree_outcome",
    "CorrelationOutcome",
    "correlation_outcome",
    "RegressionOutcome",
    "regression_outcome",
    "record_mask",
    "mask_rows",
    "DEFAULT_K",
    "proposed_spec",
]

#: A run's measures: flat keys as ``microgui.core.metrics.evaluate`` returns them.
Measures = Mapping[str, float | int | None]
#: (label, unit, direction "lower is better"/"higher is better", group "utility"/"risk").
MeasureInfo = tuple[str, str, str, str]

#: The measures a run's own report carries, used while ``evaluate`` is not available.
REPORT_MEASURES: dict[str, MeasureInfo] = {
    "information_loss_all_qi": (
        "IL, all QIs (100·SSE/SST)",
        "%",
        "lower is better",
        "utility",
    ),
    "information_loss": ("SSE/SST, continuous QIs (z-scores)", "%", "lower is better", "utility"),
    # a property of the data and k, not a score of the run: no direction, not an R-U axis
    "il_lower_bound_best": ("Proven lower bound on SSE/SST, continuous QIs", "%", "", "bound"),
    "generalization_il": ("Generalization IL", "", "lower is better", "utility"),
    "k_anonymity": ("k-anonymity level", "records", "higher is better", "risk"),
}


def measure_catalog() -> dict[str, MeasureInfo]:
    """Every known measure: ``evaluate.MEASURES`` when the module is there, else the report's
    own figures (imported lazily: the measures module may be absent in older installations)."""
    catalog = dict(REPORT_MEASURES)
    try:
        from microgui.core.metrics.evaluate import readable_measures
    except ImportError:
        return catalog
    # evaluate's order first (utility, then risk), then the report's own extras.
    merged: dict[str, MeasureInfo] = dict(readable_measures())
    merged.update({k: v for k, v in catalog.items() if k not in merged})
    return merged


def one_line(exc: BaseException) -> str:
    """An exception as one line for the user (a microgui error as its message, any other one
    with its type first)."""
    from microgui.core.errors import MicroguiError

    text = " ".join(str(exc).split())
    if isinstance(exc, MicroguiError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def measure_run(
    dataset: Dataset, result: RunResult, progress: ProgressFn = no_progress
) -> tuple[dict[str, float | int | None], str]:
    """The measures of a finished run (JSON-ready numbers: NaN and infinities as None) and a
    note ("" when all went well).

    The report's own figures always; everything ``evaluate`` computes on top when it is
    installed (numbers only: the per-attribute breakdown stays in the run report; the run's own
    generalization IL stays when ``evaluate`` has none, without hierarchies). A failure of
    ``evaluate`` is noted, not raised: the run itself is sound. It can take seconds.
    """
    report = result.report
    measures: dict[str, float | int | None] = {
        key: json_number(report[key]) for key in REPORT_MEASURES if key in report
    }
    try:
        from microgui.core.metrics.evaluate import evaluate
    except ImportError:
        return measures, "only the run's own figures (the measures module is not installed)"
    try:
        # CAVG is relative to the run's k
        extra = evaluate(
            dataset,
            result.protected,
            labels=result.labels,
            k=result.spec.k,
            progress=progress,
            groups=result.groups,  # the run's k and attribute disclosure: not computed again
        )
    except RunCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - a measure that fails must not lose the run
        return measures, f"measures not computed: {one_line(exc)}"
    measures.update(
        {
            str(k): json_number(v)
            for k, v in extra.items()
            if not isinstance(v, Mapping) and (v is not None or k not in measures)
        }
    )
    return measures, ""


@dataclass(frozen=True)
class RunOutcome:
    """A run and what its views draw, all computed off the GUI thread: the PCA projection, the
    dependency tree's layout (``ama`` runs) and the tree edges to draw (``mst`` and ``mstk``
    runs)."""

    result: RunResult
    projection: QIProjection | None
    tree_layout: TreeLayout | None = None
    mst_layout: MstLayout | None = None
    #: Utility and risk measures (:func:`measure_run`).
    measures: Mapping[str, float | int | None] = field(default_factory=dict)
    #: Why some measures are missing ("" when none is).
    measures_note: str = ""
    #: Per ordinal or nominal quasi-identifier, the counts of records by original and released
    #: category (``core.projection.category_transitions``), for the transitions view.
    transitions: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    #: The measures of the unprotected table (``core.views.ru_frame.unprotected_reference``):
    #: the R-U map's reference point. Empty from :func:`analyse_run`: the app measures it in a
    #: view task after the run is shown (issue 30: a full ``evaluate`` of the raw table takes
    #: ~10 s on Adult and must not delay the first run's result).
    unprotected: Mapping[str, float | None] = field(default_factory=dict)


def analyse_run(dataset: Dataset, spec: RunSpec, progress: ProgressFn = no_progress) -> RunOutcome:
    """Protect, measure, then lay out the views: one run as the app shows it."""
    from microgui.core.methods.artifacts import DEPENDENCY_TREE
    from microgui.core.runs.plan import run_spec  # a plan run is a run (issue 31)
    from microgui.core.views.layout import dependency_tree_layout, mst_layout
    from microgui.core.views.moves import plot_projection
    from microgui.core.views.projection import all_category_transitions

    result = run_spec(dataset, spec, sub_progress(progress, 0.0, 0.8))
    progress(0.8, "measuring utility and risk")
    measures, note = measure_run(dataset, result, sub_progress(progress, 0.8, 0.97))
    progress(0.97, "projecting for the plot")
    projection = plot_projection(result)
    tree = DEPENDENCY_TREE.of(result.artifacts)
    layout = dependency_tree_layout(tree) if tree is not None else None
    mst = mst_layout(result)
    transitions = all_category_transitions(result)
    progress(1.0, "done")
    return RunOutcome(result, projection, layout, mst, measures, note, transitions)


@dataclass(frozen=True)
class DependencyTreeOutcome:
    """A dependency tree of the current quasi-identifiers and its drawing layout."""

    tree: DependencyTree
    layout: TreeLayout


def dependency_tree_outcome(
    dataset: Dataset, bins: int, progress: ProgressFn = no_progress
) -> DependencyTreeOutcome:
    """The best dependency tree of the table's quasi-identifiers (``000`` Algorithm 1, as an
    ``ama`` run computes it) and its layout."""
    from microgui.core.table.dataset import prepare_qi
    from microgui.core.table.dependency import dependency_tree_of_qi
    from microgui.core.views.layout import dependency_tree_layout

    progress(0.0, "preparing the quasi-identifiers")
    qi = prepare_qi(dataset)
    names = list(dataset.roles.quasi_identifiers)
    tree = dependency_tree_of_qi(qi, names, bins=bins, progress=sub_progress(progress, 0.05, 0.95))
    layout = dependency_tree_layout(tree)
    progress(1.0, "done")
    return DependencyTreeOutcome(tree, layout)


@dataclass(frozen=True)
class CorrelationOutcome:
    """Correlations of a run, original vs protected, and the columns a regression can use.

    ``table``, ``original``, ``protected``, ``columns``, ``skipped``, ``dropped_rows`` and
    ``n_records`` are :func:`~microgui.core.metrics.association.correlations` (the continuous
    quasi-identifiers and the confidential columns numeric in both tables, on the records
    complete in both). ``numeric_columns``: every non-identifier column numeric in the original
    (regression candidates).
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


def correlation_outcome(
    dataset: Dataset, result: RunResult, run_id: int, progress: ProgressFn = no_progress
) -> CorrelationOutcome:
    """The correlations view of a run: its correlations and the regression candidates."""
    progress(0.0, "correlations")
    roles = result.roles
    candidates = [
        str(c)
        for c in dataset.frame.columns
        if str(c) not in roles.identifiers and str(c) in result.protected.columns
    ]
    numeric = paired_numeric(dataset.frame, result.protected, candidates)
    # Keep the regression candidates that are numbers in the original, generalized or not:
    # fitting one that was generalized says why it cannot be fitted.
    usable = tuple(
        c for c in candidates if c in numeric.columns or "generalized" in numeric.skipped.get(c, "")
    )
    found: Correlations = correlations(dataset.frame, result.protected, roles)
    progress(1.0, "done")
    return CorrelationOutcome(
        run_id,
        found.columns,
        found.table,
        found.original,
        found.protected,
        usable,
        found.skipped,
        found.dropped_rows,
        found.n_records,
    )


@dataclass(frozen=True)
class RegressionOutcome(Regression):
    """A run's :class:`~microgui.core.metrics.association.Regression`, for the app's view."""

    run_id: int


def regression_outcome(
    dataset: Dataset,
    result: RunResult,
    run_id: int,
    y: str,
    xs: Sequence[str],
    progress: ProgressFn = no_progress,
) -> RegressionOutcome:
    """The regression view of a run: :func:`~microgui.core.metrics.association.fit_regression`
    of ``y`` on ``xs`` on the run's original and protected tables."""
    progress(0.0, "fitting")
    fit: Regression = fit_regression(dataset.frame, result.protected, y, xs)
    progress(1.0, "done")
    return RegressionOutcome(fit.y, fit.xs, fit.table, fit.n_records, fit.dropped_rows, run_id)


def record_mask(rows: np.ndarray | Sequence[int] | None, n_records: int) -> np.ndarray | None:
    """Selected records as a bool mask over ``n_records`` rows: from row numbers or a mask
    (copied); None when nothing is selected. ``ValueError`` for a mask of another length."""
    if rows is None:
        return None
    array = np.asarray(rows)
    if array.dtype == bool:
        if array.shape != (n_records,):
            raise ValueError(f"a selection mask needs {n_records} values, not {array.shape}")
        mask = array.copy()
    else:
        mask = np.zeros(n_records, dtype=bool)
        mask[array.astype(np.int64).reshape(-1)] = True
    return mask if mask.any() else None


def mask_rows(mask: np.ndarray | None) -> np.ndarray:
    """Row numbers of a record mask (increasing; empty for None)."""
    return np.zeros(0, dtype=np.int64) if mask is None else np.flatnonzero(mask)


#: k proposed for a freshly opened table (the demo's default too).
DEFAULT_K = 5


def proposed_spec(methods: Sequence[Method], roles: RoleMap | None, n_records: int) -> RunSpec:
    """The run proposed for a table: MDAV on purely continuous quasi-identifiers, MDAV-generic
    when ordinal or nominal ones are present (the demo), k = 5 (at most the records)."""
    by_name = {m.name: m for m in methods}
    kinds: set[AttributeKind] = set()
    if roles is not None:
        kinds = {roles[c].kind for c in roles.quasi_identifiers}
    name: str | None = next(
        (
            m
            for m in ("mdav", "mdav-generic")
            if m in by_name and kinds and kinds <= by_name[m].kinds
        ),
        None,
    )
    if name is None:
        fitting = [m.name for m in by_name.values() if kinds and kinds <= m.kinds]
        name = "mdav-generic" if "mdav-generic" in by_name else (fitting or sorted(by_name))[0]
    k = DEFAULT_K if n_records == 0 else max(2, min(DEFAULT_K, n_records))
    return RunSpec.make(name, k, seed=0)
