"""A run: :func:`run_protection` turns a :class:`~microgui.core.runs.spec.RunSpec` into a
:class:`~microgui.core.runs.spec.RunResult`.

``run_protection(dataset, spec, progress)`` executes the spec's plan (its
:attr:`~microgui.core.runs.spec.RunSpec.steps`, today always one method step: validate,
partition with the registered method, aggregate), measures and returns a frozen
:class:`RunResult` with one report. It is what the command line, the Python API, the app's
worker, sweeps and the benchmarks all call.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import secrets
import time
import weakref
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from microgui._version import __version__
from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import (
    Method,
    MethodInput,
    available_methods,
    get_method,
    resolve_params,
)
from microgui.core.methods.bound import lower_bound_report, prefetch
from microgui.core.methods.refine import run_and_refine
from microgui.core.methods.threads import current_threads, using_threads
from microgui.core.metrics import group_sizes, information_loss, sse, sst
from microgui.core.metrics.combinations import invented_combinations
from microgui.core.metrics.disclosure import (
    GroupMeasures,
    group_measures,
    release_verdict,
    verdict_json,
)
from microgui.core.metrics.file_risk import risk_section
from microgui.core.metrics.household_risk import household_codes
from microgui.core.metrics.kanonymity import Missing
from microgui.core.metrics.mixed_loss import mixed_information_loss
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.runs.scale import (
    check_scale_options,
    one_piece_message,
    resolve_block_size,
    run_scaled,
)
from microgui.core.runs.spec import (
    MethodStep,
    RunResult,
    RunSpec,
    parse_seed,
    validate_k,
)
from microgui.core.spare import droppable
from microgui.core.table.aggregate import aggregate, protected_continuous_z
from microgui.core.table.dataset import (
    Dataset,
    QIMatrix,
    is_missing,
    prepare_qi,
    rewrite_continuous,
    survey_weights,
)
from microgui.core.table.numbers import release_numbers, rounding_report
from microgui.core.table.roles import RoleMap, resolve_column, resolve_columns

__all__ = [
    "run_protection",
    "build_report",
    "release_groups",
    "kind_refusal",
    "method_refusal",
    "check_kinds",
    "risk_before_after",
    "REPORT_SUDA_MAX_RECORDS",
    "released_numbers",
    "load_hierarchies",
]


#: The report's IL bound is computed beside the method (:func:`~microgui.core.methods.bound.prefetch`)
#: up to this size of the continuous quasi-identifiers (about 400,000 records x 10); above, after
#: it, once the method's arrays are freed: the principal-axis bound holds about 1.5x the matrix
#: (its projection, written over the centred records, and a column's work; 2.5x before issue
#: 33's second pass), which on top of the method's own would make the peak of 1,000,000 x 10
#: (issue 33: the command's peak memory <= 4x its CSV). At that size the nearest-neighbour part
#: searches no axis (p = 0 at k = 5), and wherever it does (n·k·2^p <= 2^22) its distances and
#: indices hold at most 32 MB, so its query is not split. It then adds its time to the run's (seconds at this size, where
#: exact MDAV takes minutes).
PREFETCH_MAX_BYTES = 32 * 2**20


def run_protection(
    dataset: Dataset,
    spec: RunSpec,
    progress: ProgressFn = no_progress,
    *,
    threads: int | None = None,
) -> RunResult:
    """Protect ``dataset`` as ``spec`` says, executing its steps in order (today always one, the
    method step). Raises :class:`MicroguiError` subclasses for user errors and lets
    :class:`RunCancelled` from ``progress`` propagate.

    ``threads``: how many threads the exact kernels may use (None: an enclosing
    :func:`~microgui.core.methods.threads.using_threads`, else ``MICROGUI_THREADS``, else every
    core). It never changes the release; the report records it (``threads``)."""
    started = time.perf_counter()
    result: RunResult | None = None
    with using_threads(threads):
        for step in spec.steps:  # dispatch on the step's kind; issue 31 adds kinds
            if isinstance(step, MethodStep):
                result = _run_method_step(dataset, spec, step, started, progress)
            else:
                raise TypeError(f"a run cannot execute a step of kind {type(step).__name__}")
    if result is None:
        raise InvalidParameter("the run has no step to execute")
    return result


def _run_method_step(
    dataset: Dataset, spec: RunSpec, step: MethodStep, started: float, progress: ProgressFn
) -> RunResult:
    """The method step of ``spec``: partition with the registered method (on strata or blocks
    when the spec says so), aggregate, measure; its report is the run's report."""
    method: Method = get_method(step.method)
    params = resolve_params(method, step.param_dict)
    k = validate_k(step.k, dataset.n_records, dataset.name if dataset.source else "")
    if spec.strata:  # names as the user typed them: matched like every column name
        strata = tuple(resolve_columns(spec.strata, dataset.frame.columns, "--strata"))
        if strata != spec.strata:
            spec = replace(spec, strata=strata)
    check_scale_options(
        dataset,
        k,
        strata=spec.strata,
        block_size=spec.block_size,
        engine=spec.engine,
        scheduler=spec.scheduler,
        workers=spec.workers,
    )
    _check_hierarchies(step, method, dataset)
    if spec.engine == "dask" and not spec.scaled_for(dataset.n_records):
        raise InvalidParameter(one_piece_message())
    progress(0.0, "checking the data")
    qi = prepare_qi(dataset)
    check_kinds(method, dataset.roles)
    _check_weight(dataset, params)
    seed = parse_seed(spec.seed)  # a spec may come from a project file, not RunSpec.make
    seed = seed if seed is not None else secrets.randbits(63)
    if qi.continuous.nbytes <= PREFETCH_MAX_BYTES:
        prefetch(qi, k, method.aggregates)  # the report's IL bound, on the other core meanwhile
    if spec.scaled_for(dataset.n_records):
        return _run_scaled(dataset, spec, step, method, params, k, qi, seed, started, progress)
    rng = np.random.default_rng(seed)
    with _zscores_spare(qi):  # the kernel gives them back once its own layout is built
        output = run_and_refine(
            method,
            MethodInput(
                dataset=dataset,
                qi=qi,
                k=k,
                params=params,
                rng=rng,
                progress=sub_progress(progress, 0.0, 0.9),
                hierarchies=load_hierarchies(step, dataset),
            ),
        )
    labels = np.asarray(output.labels, dtype=np.int64)
    if labels.shape != (dataset.n_records,):
        raise RuntimeError(
            f"method {method.name} returned {labels.shape} labels for {dataset.n_records} records"
        )
    progress(0.9, "aggregating groups")
    if output.protected_qi is None:
        protected = aggregate(dataset, qi, labels, params)
    else:
        protected = aggregate(dataset, qi, labels, params)
        for col in output.protected_qi.columns:
            protected[col] = output.protected_qi[col].to_numpy()
    protected, rounding = released_numbers(protected, dataset, qi, params)
    progress(0.95, "measuring")
    seconds = time.perf_counter() - started
    groups = release_groups(dataset.roles, protected)
    with _zscores_spare(qi):  # the IL bound gives them back once it has centred them
        report = build_report(
            dataset, spec, method, params, seed, qi, labels, protected, seconds,
            {**output.extra, **rounding}, groups=groups,
        )  # fmt: skip
    progress(1.0, "done")
    return RunResult(
        spec=spec,
        roles=dataset.roles,
        labels=labels,
        protected=protected,
        report=report,
        qi=qi,
        seconds=seconds,
        artifacts=dict(output.artifacts),
        groups=groups,
    )


def _zscores_spare(qi: QIMatrix) -> contextlib.AbstractContextManager[None]:
    """The run's z-scores declared :func:`~microgui.core.spare.droppable` (issue 33: the kernel
    reads them only to build its layout, the IL bound only to centre them; 80 MB at 1,000,000
    x 10, unread for minutes at the command's peak) when no other thread reads them (above
    :data:`PREFETCH_MAX_BYTES` no bound is prefetched) and they can be written again from the
    values read."""
    z = qi.continuous
    if qi.cont_values is None or z.nbytes <= PREFETCH_MAX_BYTES:
        return contextlib.nullcontext()
    return droppable(z, functools.partial(rewrite_continuous, qi))


def _run_scaled(
    dataset: Dataset,
    spec: RunSpec,
    step: MethodStep,
    method: Method,
    params: Mapping[str, Any],
    k: int,
    qi: QIMatrix,
    seed: int,
    started: float,
    progress: ProgressFn,
) -> RunResult:
    """The method step with strata or blocks (:func:`microgui.core.runs.scale.run_scaled`)."""
    scaled = run_scaled(
        dataset,
        qi,
        method.name,
        k,
        params,
        seed,
        load_hierarchies(step, dataset),
        strata=spec.strata,
        block_size=resolve_block_size(spec.block_size, dataset.n_records, k),
        engine=spec.engine,
        scheduler=spec.scheduler,
        workers=spec.workers,
        progress=sub_progress(progress, 0.0, 0.95),
    )
    protected, rounding = released_numbers(scaled.protected, dataset, qi, params)
    progress(0.95, "measuring")
    seconds = time.perf_counter() - started
    extra = {**scaled.extra, "scale": scaled.summary, **rounding}
    groups = release_groups(dataset.roles, protected)
    report = build_report(
        dataset, spec, method, params, seed, qi, scaled.labels, protected, seconds, extra,
        groups=groups,
    )  # fmt: skip
    progress(1.0, "done")
    return RunResult(
        spec=spec,
        roles=dataset.roles,
        labels=scaled.labels,
        protected=protected,
        report=report,
        qi=qi,
        seconds=seconds,
        artifacts=scaled.artifacts,
        groups=groups,
    )


def released_numbers(
    protected: pd.DataFrame, dataset: Dataset, qi: QIMatrix, params: Mapping[str, Any]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The release with clean numbers (and rounded by the ``round`` parameter), and the
    report's ``rounding`` entry when it rounded (:mod:`microgui.core.table.numbers`)."""
    mode = str(params.get("round", "none"))
    source = (  # the numbers as read (prepare_qi parsed them once already)
        pd.DataFrame(qi.cont_values, columns=list(qi.continuous_names), copy=False)
        if qi.cont_values is not None
        else dataset.frame
    )
    cleaned, used = release_numbers(protected, source, qi.continuous_names, mode)
    if mode == "none":
        return cleaned, {}
    before_z = protected_continuous_z(protected, qi)
    before = (
        information_loss(qi.continuous, before_z)
        if qi.continuous_names and bool(np.isfinite(before_z).all())
        else None
    )
    return cleaned, {"rounding": rounding_report(used, mode, before)}


def load_hierarchies(step: MethodStep, dataset: Dataset) -> dict[str, Any]:
    """Read the hierarchy files named in the step (``microgui.core.table.hierarchy``)."""
    if not step.hierarchies:
        return {}
    from microgui.core.table.hierarchy import load_hierarchy

    out: dict[str, Any] = {}
    for name, path in step.hierarchies:
        column = resolve_column(name, dataset.frame.columns, "--hierarchy")
        out[column] = load_hierarchy(path)
    return out


def _check_hierarchies(step: MethodStep, method: Method, dataset: Dataset) -> None:
    """Hierarchies that would be ignored are refused, not dropped in silence (issue 12): the
    method must generalize and each column must be a quasi-identifier."""
    if not step.hierarchies:
        return
    if not method.uses_hierarchies:
        users = ", ".join(m.name for m in available_methods() if m.uses_hierarchies)
        raise InvalidParameter(
            f"method {method.name} does not generalize, so the hierarchy given for "
            f"{step.hierarchies[0][0]!r} would be ignored; drop --hierarchy, or choose a method "
            f"that uses hierarchies ({users})"
        )
    for name, _path in step.hierarchies:
        column = resolve_column(name, dataset.frame.columns, "--hierarchy")
        if column not in dataset.roles.quasi_identifiers:
            raise InvalidRoles(
                f"--hierarchy names {column!r}, which is not a quasi-identifier, so its hierarchy "
                "would be ignored; tag the column a quasi-identifier or drop its hierarchy"
            )


def kind_refusal(method: Method, roles: RoleMap) -> str:
    """Why ``method`` refuses the kinds of these quasi-identifiers ("" when it accepts them)."""
    wrong = [c for c in roles.quasi_identifiers if roles[c].kind not in method.kinds]
    if not wrong:
        return ""
    accepted = ", ".join(sorted(k.value for k in method.kinds))
    kinds = ", ".join(f"{c!r} ({roles[c].kind.value})" for c in wrong[:3])
    hint = " (use mdav-generic for mixed kinds)" if method.name == "mdav" else ""
    return f"works on {accepted} quasi-identifiers only; not on {kinds}{hint}"


def method_refusal(
    method: Method,
    roles: RoleMap,
    n_records: int | None = None,
    params: Mapping[str, object] | None = None,
) -> str:
    """Why ``method`` cannot run on these roles ("" when it can): it needs a quasi-identifier,
    of the kinds it accepts, and a confidential column when it protects one (p-sensitive,
    t-closeness); with ``n_records``, also the table limits it declares (``table_refusal``:
    optimal's largest table, optimal-univariate's one attribute), with ``params`` (default: its
    defaults)."""
    if not roles.quasi_identifiers:
        return "tag at least one quasi-identifier"
    why = kind_refusal(method, roles)
    if why:
        return why
    if method.needs_confidential and not roles.confidential:
        return "needs a confidential column"
    if n_records is not None and method.table_refusal is not None:
        return method.table_refusal(roles, n_records, resolve_params(method, params or {}))
    return ""


def check_kinds(method: Method, roles: RoleMap) -> None:
    """Raise :class:`InvalidRoles` when ``method`` refuses the kind of a quasi-identifier."""
    why = kind_refusal(method, roles)
    if why:
        raise InvalidRoles(f"method {method.name!r} {why}")


def _check_weight(dataset: Dataset, params: Mapping[str, Any]) -> None:
    """The survey weight column (issue 18) checked before the run, not after it: one column,
    every weight a number above 0; ``weighted_means`` needs one."""
    weight = dataset.roles.weight  # two weight columns: refused here
    if params.get("weighted_means", False) and params.get("rescale_variance", False):
        raise InvalidParameter(
            "weighted_means and rescale_variance together: the rescaling uses the unweighted "
            "variance and would move the weighted means; choose one"
        )
    if weight is not None:
        survey_weights(dataset.frame, weight)
    elif params.get("weighted_means", False):
        raise InvalidParameter(
            "weighted_means=yes needs a survey weight column: tag one with the role weight "
            "(--weight COL), or drop the parameter"
        )
    household = dataset.roles.household  # two household-id columns: refused here
    if household is not None:  # a record without its household: refused before the run
        household_codes(dataset.frame, household)


def release_groups(
    roles: RoleMap, protected: pd.DataFrame, *, missing: Missing = "category"
) -> GroupMeasures:
    """The group measures of a run's released table (k-anonymity, attribute disclosure per
    confidential attribute: :func:`~microgui.core.metrics.disclosure.group_measures`), computed
    once for its report, its release check and its release report; ``missing``: the rule of a
    blank key value (``"any"`` after a plan's local suppression)."""
    return group_measures(
        protected,
        roles.quasi_identifiers,
        [c for c in roles.confidential if c in protected.columns],
        roles,
        missing=missing,
    )


def build_report(
    dataset: Dataset,
    spec: RunSpec,
    method: Method,
    params: Mapping[str, Any],
    seed: int,
    qi: QIMatrix,
    labels: np.ndarray,
    protected: pd.DataFrame,
    seconds: float,
    extra: Mapping[str, Any],
    *,
    groups: GroupMeasures | None = None,
) -> dict[str, Any]:
    """The run report: aggregates and measures only, never a raw value of any record.

    ``groups``: the group measures of ``protected`` (:func:`release_groups`), when the caller
    keeps them (the run's :class:`RunResult`); computed here otherwise."""
    if groups is None:
        groups = release_groups(dataset.roles, protected)
    sizes = group_sizes(labels)
    z_protected = protected_continuous_z(protected, qi)
    roles = dataset.roles
    # A generalization method publishes its continuous quasi-identifiers as text ("[20-29]"):
    # SSE, SST and IL are then undefined (null); the method reports its own loss in ``extra``.
    generalized = (
        not method.aggregates
        and bool(qi.continuous_names)
        and not bool(np.isfinite(z_protected).all())
    )
    if generalized:
        basis = "none (continuous quasi-identifiers generalized to text; see generalization_il)"
    elif qi.continuous_names:
        basis = "z-scored continuous quasi-identifiers"
    else:
        basis = "none (no continuous quasi-identifier)"
    # every quasi-identifier in the partition's distance (issue 13); generalized columns through
    # the representative of their released values, so mstk runs get a comparable figure too
    mixed = mixed_information_loss(qi, protected, protected_z=z_protected)
    report: dict[str, Any] = {
        "method": method.name,
        "k": int(spec.k),
        "parameters": {k: v for k, v in params.items()},
        "seed": seed,
        "n_records": int(dataset.n_records),
        "n_groups": int(len(sizes)),
        "min_group_size": int(sizes.min()) if len(sizes) else 0,
        "max_group_size": int(sizes.max()) if len(sizes) else 0,
        "group_size_counts": {
            str(s): int(c) for s, c in zip(*np.unique(sizes, return_counts=True), strict=True)
        },
        "sse": None if generalized else sse(qi.continuous, z_protected),
        "sst": None if generalized else sst(qi.continuous),
        "information_loss": None if generalized else information_loss(qi.continuous, z_protected),
        "information_loss_basis": basis,
        # a proven floor under information_loss for this data and k (issue 16)
        **lower_bound_report(qi, None if generalized else z_protected, labels, int(spec.k)),
        "information_loss_all_qi": mixed.information_loss,
        "information_loss_all_qi_basis": mixed.basis,
        "information_loss_by_attribute": mixed.by_attribute,
        "k_anonymity": groups.k_anonymity,
        # groups releasing a categorical combination none of their records has (issue 13)
        "invented_combinations": invented_combinations(protected, qi, labels),
        "seconds": round(seconds, 4),
        # threads the exact kernels could use (issue 33; the release is the same for any number)
        "threads": current_threads(),
        "microgui_version": __version__,
        "input": dataset.name,
        "quasi_identifiers": {c: roles[c].kind.value for c in roles.quasi_identifiers},
        # the columns whose missing cells were treated as a category, with how many cells
        "missing_as_category": {
            c: int(is_missing(dataset.frame[c]).sum())
            for c in roles.quasi_identifiers
            if roles[c].missing_is_category
        },
        "identifiers_removed": roles.identifiers,
        "confidential": roles.confidential,
        "citation": method.reference,  # "Domingo-Ferrer & Torra 2005, Algorithm 5.1"
    }
    if roles.weight is not None:  # issue 18: the survey weight column, released unchanged
        report["weight"] = roles.weight
    # issue 29: the file's disclosure risk before and after, on the same categorical keys
    report.update(risk_before_after(dataset, protected, int(spec.k)))
    report.update(extra)
    # attribute disclosure is part of the verdict (issue 29): per confidential attribute, over the
    # released table's equivalence classes, and the one-line verdict every surface shows
    report["attribute_disclosure"] = groups.disclosure_json()
    report["verdict"] = verdict_json(release_verdict(report))
    return report


#: Above this many records the run report leaves SUDA2 out of risk_before/risk_after (its search
#: grows with the records and the key combinations; ``microgui assess`` still runs it).
REPORT_SUDA_MAX_RECORDS = 200_000


#: risk_before of the last few (table, roles, k): a sweep or a re-run on the same table
#: measures its input once. Keyed by the frame's id, checked against a weak reference to it.
_BEFORE: dict[tuple[int, RoleMap, int, bool], tuple[weakref.ref[pd.DataFrame], dict[str, Any]]] = {}
_BEFORE_KEPT = 4


def _risk_before(dataset: Dataset, k: int, suda: bool) -> dict[str, Any]:
    key = (id(dataset.frame), dataset.roles, k, suda)
    hit = _BEFORE.get(key)
    if hit is not None and hit[0]() is dataset.frame:
        return copy.deepcopy(hit[1])
    before = risk_section(dataset.frame, dataset.roles, k=k, suda=suda)
    while len(_BEFORE) >= _BEFORE_KEPT:
        _BEFORE.pop(next(iter(_BEFORE)))
    _BEFORE[key] = (weakref.ref(dataset.frame), copy.deepcopy(before))
    return before


def risk_before_after(
    dataset: Dataset, protected: pd.DataFrame, k: int, *, household_size_key: bool = False
) -> dict[str, Any]:
    """``risk_before`` (the input) and ``risk_after`` (the release) of the run report:
    :func:`microgui.core.metrics.file_risk.assess_risk` on the same keys, both tables;
    ``household_size_key`` (``protect --household-size-key``): the size of each record's
    household is one more key of both (as ``assess --household-size-key``)."""
    suda = dataset.n_records <= REPORT_SUDA_MAX_RECORDS
    if household_size_key:
        before = risk_section(dataset.frame, dataset.roles, k=k, suda=suda,
                              household_size_key=True)  # fmt: skip
        # the derived household-size key is added again to the release's keys
        keys = list(before.get("keys") or [])[:-1] or None
    else:
        before = _risk_before(dataset, k, suda)
        keys = before.get("keys") or None
    after = (
        risk_section(
            protected,
            dataset.roles,
            k=k,
            keys=keys,
            suda=suda,
            household_size_key=household_size_key,
        )  # fmt: skip
        if keys
        else dict(before)
    )
    if not suda:
        why = (
            f"SUDA2 left out of the run report above {REPORT_SUDA_MAX_RECORDS:,} records; "
            "run microgui assess for it"
        )
        before["suda2_note"] = after["suda2_note"] = why
    return {"risk_before": before, "risk_after": after}
