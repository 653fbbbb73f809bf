"""Running a plan: :func:`run_plan` applies the steps of a :class:`~.spec.Plan` in order to the
original table and returns one :class:`~microgui.core.runs.spec.RunResult` to release, with
each step's own figures.

Today's single-method run is a plan of one step: a plan whose only step microaggregates every
quasi-identifier *is* :func:`~microgui.core.runs.protect.run_protection` on the same spec (same
release byte for byte, same report, plus ``plan`` and ``steps``). Decided at the issue 31
review: such a plan run enters the app's history, the views and its reports as that method's run
(its report's ``method`` is the method's), because it is that run; its spec keeps the plan, so
the project replays it as the plan the user ran. A longer plan runs each
microaggregate step through :func:`run_protection` too (its columns the quasi-identifiers of
that run, the others passed through), so every method, parameter and hierarchy works there as in
a one-method run. Each step reports counts and measures, never a value: values changed per
column, suppressions, the information loss of a microaggregation, and the records still at
risk after it (records whose key combination is shared by fewer than k records; with missing
matching any value once a suppression has run). The final release is verified once, by the
release check (:func:`microgui.core.release.check.check_export` reads ``plan`` in the report:
:func:`plan_problems`).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from microgui._version import __version__
from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import get_method
from microgui.core.methods.recode import (
    Recoded,
    read_mapping,
    recode_intervals,
    recode_level,
    recode_mapping,
    top_bottom_code,
)
from microgui.core.metrics import group_sizes, information_loss, k_anonymity_level, sse, sst
from microgui.core.metrics.disclosure import (
    GroupMeasures,
    release_verdict,
    verdict_json,
)
from microgui.core.metrics.kanonymity import Missing
from microgui.core.metrics.missing_match import frequencies_missing_any
from microgui.core.metrics.mixed_loss import mixed_information_loss
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.runs.plan.spec import (
    MicroaggregateStep,
    Plan,
    RecodeStep,
    SuppressStep,
    TopBottomStep,
    kind_columns,
    plan_from_json,
    resolve_plan,
)
from microgui.core.runs.protect import release_groups, risk_before_after, run_protection
from microgui.core.runs.spec import RunResult, RunSpec, parse_seed, validate_k
from microgui.core.table.aggregate import protected_continuous_z
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole, RoleMap

__all__ = [
    "PlanResult",
    "run_plan",
    "plan_problems",
    "plan_k_level",
    "PLAN_METHOD",
    "plan_spec",
    "spec_plan",
    "run_spec",
]

#: The ``method`` of a multi-step plan's report and spec (no registered method has this name).
PLAN_METHOD = "plan"


@dataclass(frozen=True)
class PlanResult:
    """A plan's outcome: the resolved ``plan``, the ``result`` to release (its report holds
    ``plan`` and ``steps``) and the per-step figures ``steps``."""

    plan: Plan
    result: RunResult
    steps: tuple[dict[str, Any], ...]


def _one_method_run(plan: Plan, roles: RoleMap) -> bool:
    """A plan of one microaggregate step over every quasi-identifier: today's run."""
    if len(plan.steps) != 1 or not isinstance(plan.steps[0], MicroaggregateStep):
        return False
    step = plan.steps[0]
    chosen = kind_columns(roles, step.selection, step.columns)
    return set(chosen) == set(roles.quasi_identifiers)


def _spec(plan: Plan, step: MicroaggregateStep, seed: int | None) -> RunSpec:
    return RunSpec.make(
        step.method,
        step.k,
        dict(step.params),
        seed,
        {c: str(plan.path(p)) for c, p in step.hierarchies},
    )


def _self_contained(plan: Plan) -> dict[str, Any]:
    """The plan's JSON with every file its steps name made absolute against its folder, so that
    a spec holding it runs wherever it is read (the app's history, a project file)."""
    data = plan.to_json()
    if plan.folder is None:
        return data
    for step in data["steps"]:
        for key in ("mapping", "hierarchy"):
            if isinstance(step.get(key), str):
                step[key] = str(plan.path(step[key]))
        if isinstance(step.get("hierarchies"), Mapping):
            step["hierarchies"] = {c: str(plan.path(p)) for c, p in step["hierarchies"].items()}
    return data


def plan_spec(plan: Plan, k: int, seed: int | None) -> RunSpec:
    """The :class:`RunSpec` of a plan run (issue 31: a plan run is a run): ``method`` "plan",
    the release's ``k``, the ``seed`` and the plan's JSON (files made absolute) in ``plan``."""
    data = _self_contained(plan)
    data.pop("seed", None)  # the spec's own seed is the run's
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return RunSpec(method=PLAN_METHOD, k=int(k), seed=seed, plan=text)


def spec_plan(spec: RunSpec) -> Plan | None:
    """The plan a plan run's spec holds (None for a one-method run), its seed the spec's."""
    data = spec.plan_json
    if data is None:
        return None
    plan = plan_from_json(data, source="the run's plan")
    return replace(plan, seed=spec.seed)


def run_spec(dataset: Dataset, spec: RunSpec, progress: ProgressFn = no_progress) -> RunResult:
    """Run any spec: a plan run's plan (:func:`run_plan`, with the spec's seed) or one method
    (:func:`~microgui.core.runs.protect.run_protection`)."""
    plan = spec_plan(spec)
    if plan is None:
        return run_protection(dataset, spec, progress)
    return run_plan(dataset, plan, progress, seed=spec.seed).result


def run_plan(
    dataset: Dataset,
    plan: Plan,
    progress: ProgressFn = no_progress,
    *,
    seed: int | str | None = None,
) -> PlanResult:
    """Apply ``plan`` to ``dataset`` (its roles say the keys) and measure each step; the result
    is released by :func:`~microgui.core.release.check.export_run` like any run's. Raises
    :class:`~microgui.core.errors.MicroguiError` subclasses (one line) for a plan that does
    not fit the table; lets ``RunCancelled`` from ``progress`` propagate."""
    started = time.perf_counter()
    columns = [str(c) for c in dataset.frame.columns]
    plan = resolve_plan(plan, dataset.roles, columns)
    k = validate_k(plan.k, dataset.n_records, dataset.name if dataset.source else "")
    seed_value = parse_seed(seed) if seed is not None else plan.seed  # the caller's first
    if _one_method_run(plan, dataset.roles):
        step = plan.steps[0]
        assert isinstance(step, MicroaggregateStep)
        result = run_protection(dataset, _spec(plan, step, seed_value), progress)
        figures = (_method_figures(1, step, dataset, result, list(dataset.roles.quasi_identifiers),
                                   dataset.frame, result.protected, k, False),)  # fmt: skip
        report = {**result.report, "plan": plan.to_json(), "steps": list(figures)}
        return PlanResult(plan, replace(result, report=report), figures)
    seed_value = seed_value if seed_value is not None else secrets.randbits(63)
    frame = dataset.frame.copy(deep=False)
    roles = dataset.roles
    figures_list: list[dict[str, Any]] = []
    suppressed = False
    n = len(plan.steps)
    for i, step in enumerate(plan.steps):
        sub = sub_progress(progress, i / n, (i + 1) / n)
        sub(0.0, f"step {i + 1} of {n}: {step.kind}")
        t0 = time.perf_counter()
        if isinstance(step, RecodeStep | TopBottomStep):
            recoded = _recode(plan, step, frame[step.column])
            frame[step.column] = recoded.values
            spec = roles[step.column].with_kind(recoded.kind, recoded.order)
            roles = roles.replace(step.column, spec)
            fig: dict[str, Any] = {"column": step.column, **recoded.figures()}
            if isinstance(step, RecodeStep):
                fig["how"] = step.how
                fig["kind_after"] = recoded.kind.value
        elif isinstance(step, MicroaggregateStep):
            chosen = kind_columns(roles, step.selection, step.columns)
            if not chosen:
                raise InvalidRoles(
                    f"{plan.describe(i)}: no {step.selection or ''} quasi-identifier to "
                    "microaggregate at this step".replace("no  ", "no ")
                )
            others = [c for c in roles.quasi_identifiers if c not in chosen]
            sub_roles = roles
            for c in others:  # this run's keys only; the others pass through it unchanged
                sub_roles = sub_roles.replace(c, roles[c].with_role(AttributeRole.NON_CONFIDENTIAL))
            step_data = Dataset(frame, sub_roles, dataset.source, dict(dataset.value_labels),
                                inputs=dataset.inputs)  # fmt: skip
            result = run_protection(step_data, _spec(plan, step, seed_value), sub)
            before = frame
            frame = frame.copy(deep=False)
            for c in chosen:
                frame[c] = result.protected[c].to_numpy()
            fig = _method_figures(i + 1, step, step_data, result, chosen, before, frame, k, True)
        else:
            keys, fixed = _suppress_keys(step, roles)
            fig = _suppress(plan, i, step, frame, keys, fixed, sub)
            frame = fig.pop("_frame")
            suppressed = True
        fig = {"step": step.kind, "index": i + 1, **fig}
        fig["records_below_k_after"] = _below_k(frame, roles.quasi_identifiers, k, suppressed)
        fig["seconds"] = round(time.perf_counter() - t0, 4)
        figures_list.append(fig)
        sub(1.0, f"step {i + 1} of {n} done")
    all_figures = tuple(figures_list)
    removed = set(dataset.roles.identifiers)
    protected = frame.loc[:, [c for c in frame.columns if str(c) not in removed]]
    _check_untouched(dataset, protected)
    seconds = time.perf_counter() - started
    groups = release_groups(
        dataset.roles, protected, missing="any" if plan.suppresses else "category"
    )
    report, groups = _plan_report(
        dataset, roles, plan, protected, k, seed_value, all_figures, seconds, groups
    )
    qi = prepare_qi(dataset)
    labels = _classes(protected, dataset.roles.quasi_identifiers)
    run_spec_ = plan_spec(plan, k, seed_value)
    result = RunResult(
        run_spec_, dataset.roles, labels, protected, report, qi, seconds, groups=groups
    )
    return PlanResult(plan, result, all_figures)


def _recode(plan: Plan, step: RecodeStep | TopBottomStep, series: pd.Series) -> Recoded:
    column = step.column
    if isinstance(step, TopBottomStep):
        return top_bottom_code(series, top=step.top, bottom=step.bottom, top_value=step.top_value,
                               bottom_value=step.bottom_value, column=column)  # fmt: skip
    if step.breaks is not None:
        return recode_intervals(series, step.breaks, column=column)
    if step.bins is not None:
        return recode_intervals(series, bins=step.bins, column=column)
    if step.mapping is not None:
        return recode_mapping(series, read_mapping(plan.path(step.mapping)), column=column)
    from microgui.core.table.hierarchy import load_hierarchy

    assert step.hierarchy is not None and step.level is not None
    return recode_level(series, load_hierarchy(plan.path(step.hierarchy)), step.level, column)


def _method_figures(
    index: int,
    step: MicroaggregateStep,
    data: Dataset,
    result: RunResult,
    chosen: Sequence[str],
    before: pd.DataFrame,
    after: pd.DataFrame,
    k: int,
    count: bool,
) -> dict[str, Any]:
    """A microaggregate step's figures: its run's groups and information loss on its columns,
    and the cells it changed."""
    report = result.report
    out: dict[str, Any] = {
        "method": report.get("method", step.method),
        "k": int(step.k),
        "columns": list(chosen),
        "n_groups": int(result.n_groups),
        "min_group_size": report.get("min_group_size"),
        "information_loss": report.get("information_loss"),
        "information_loss_all_qi": report.get("information_loss_all_qi"),
        "values_changed": {c: _changed(before[c], after[c]) for c in chosen},
    }
    if not count:  # the one-method run: its report has it all
        out = {"step": "microaggregate", "index": index, **out}
        out["records_below_k_after"] = _below_k(after, data.roles.quasi_identifiers, k, False)
        out["seconds"] = report.get("seconds")
    return out


def _suppress_keys(step: SuppressStep, roles: RoleMap) -> tuple[list[str], list[str]]:
    """The keys a suppress step blanks cells of, and the keys it keeps whole.

    Given ``columns``: those, and nothing kept whole (its k is promised on them). By default
    (decided for issue 31, as sdcMicro's ``localSuppression`` works on categorical key
    variables only): the categorical keys (nominal or ordinal at this step, recoded columns
    included) are blanked, and the continuous keys (microaggregated before, or left as they
    are) are kept whole: the step reaches k on *every* key, a missing categorical cell matching
    any value while continuous values match only when equal (the continuous keys are ``fixed``
    keys of :func:`~microgui.core.methods.local_suppression.suppress`: every group of equal
    continuous values must hold >= k records, which a microaggregate step of the continuous
    keys gives). With ``combinations = m`` nothing is kept whole: the promise is k over every
    combination of at most m of the categorical keys (sdcMicro's ``combs``).

    Why k on *all* keys by default (decided at the issue 31 review, Adult's 4-step plan of
    ``microgui.bench.plan``): an intruder who knows a person's age can use the released
    (microaggregated) age as well as the categorical keys. sdcMicro's ``localSuppression``
    checks k on the categorical keys only; on Adult that blanks 3,459 cells but leaves 21,322
    records (71 %) in combinations of all 8 keys shared by fewer than 5 records (the release is
    1-anonymous on its keys, and microgui's release check refuses it). Blanking age as well
    reaches k on all keys with 10,336 cells, 5,875 of them ages (19.5 % of the records lose
    their age, the variable analysts use most; sdcMicro's ``localSuppression`` never blanks a
    numeric key either). The default blanks 18,100 categorical cells (8.6 % of them) and keeps
    every age. sdcMicro's behaviour (k on the categorical keys only) means the continuous
    columns are no quasi-identifiers of the release (microgui's release check verifies k on
    every quasi-identifier); to blank the continuous keys too, name every key in ``columns``."""
    if step.columns:
        return list(step.columns), []
    qis = list(roles.quasi_identifiers)
    keys = [c for c in qis if roles[c].kind is not AttributeKind.CONTINUOUS]
    if step.combinations is not None:
        return keys, []
    return keys, [c for c in qis if c not in keys]


def _suppress(
    plan: Plan,
    index: int,
    step: SuppressStep,
    frame: pd.DataFrame,
    keys: list[str],
    fixed: list[str],
    progress: ProgressFn,
) -> dict[str, Any]:
    from microgui.core.methods.local_suppression import suppress

    kwargs: dict[str, Any] = {"progress": progress}
    if step.importance:
        # the plan lists columns from the most important; suppress() takes one rank per key,
        # 1 = most important (sdcMicro's importance), the unlisted ones least important
        rank = {c: r for r, c in enumerate(step.importance, start=1)}
        kwargs["importance"] = [rank.get(c, len(rank) + 1) for c in keys]
    if step.combinations is not None:
        kwargs["combinations"] = step.combinations
    if not keys:
        raise InvalidRoles(
            f"{plan.describe(index)}: no categorical key to suppress cells of; a suppress step "
            "blanks categorical keys by default (name its columns to choose others)"
        )
    if step.strata:
        kwargs["strata"] = step.strata[0]
    if fixed:
        groups = frame.groupby(fixed, dropna=False, sort=False).ngroup().to_numpy()
        smallest = int(np.bincount(groups).min()) if len(groups) else 0
        if smallest < step.k:
            raise InvalidRoles(
                f"{plan.describe(index)}: the continuous key(s) {', '.join(fixed)} leave a "
                f"group of {smallest} record(s) with equal values, fewer than k = {step.k}; "
                "suppressing categorical cells cannot reach k there: microaggregate the "
                "continuous keys first (or name the suppress step's columns)"
            )
        kwargs["fixed"] = fixed
    work = frame
    done = suppress(work, keys, step.k, **kwargs)
    out = frame.copy(deep=False)
    for c in keys:  # only the keys: suppression never touches another column
        out[c] = done.frame[c].to_numpy()
    return {
        "k": int(step.k),
        "columns": keys,
        # the keys its k is promised on (the release check measures them): the blanked ones
        # and those kept whole
        "k_on": [*keys, *fixed],
        **({"combinations": int(step.combinations)} if step.combinations is not None else {}),
        "suppressed": {str(c): int(v) for c, v in dict(done.suppressed).items()},
        "total": int(done.total),
        "k_after": int(done.k_after),
        "_frame": out,
    }


def _changed(before: pd.Series, after: pd.Series) -> int:
    """Cells whose value changed (missing equals missing)."""
    a = before.to_numpy(dtype=object)
    b = after.to_numpy(dtype=object)
    am, bm = pd.isna(a), pd.isna(b)
    both = ~(am | bm)
    diff = np.zeros(len(a), dtype=bool)
    if both.any():
        diff[both] = [x != y for x, y in zip(a[both], b[both], strict=True)]
    return int(((am != bm) | diff).sum())


def _below_k(frame: pd.DataFrame, keys: Sequence[str], k: int, missing_any: bool) -> int:
    """Records whose key combination fewer than ``k`` records share."""
    keys = list(keys)
    if not keys or not len(frame):
        return 0
    if missing_any:
        freq = frequencies_missing_any(frame, keys)
    else:
        freq = frame.groupby(keys, dropna=False, sort=False)[keys[0]].transform("size").to_numpy()
    return int((np.asarray(freq) < k).sum())


def _classes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """Group ids of the release: records with identical key values (missing as a value)."""
    if not keys:
        return np.zeros(len(frame), dtype=np.int64)
    ids = frame.groupby(list(keys), dropna=False, sort=True).ngroup().to_numpy()
    return np.asarray(ids, dtype=np.int64)


def _check_untouched(dataset: Dataset, protected: pd.DataFrame) -> None:
    """Every column that is not a quasi-identifier is released as the input holds it: a plan
    step changing one is a defect, never released."""
    qis = set(dataset.roles.quasi_identifiers)
    for c in protected.columns:
        if c not in qis and not protected[c].equals(dataset.frame[c]):
            raise RuntimeError(f"the plan changed column {c!r}, which is not a quasi-identifier")


def plan_k_level(frame: pd.DataFrame, keys: Sequence[str], report: Mapping[str, Any]) -> int:
    """The release's k on ``keys``: missing matching any value when the plan suppresses cells
    (sdcMicro's convention), else identical values (:func:`k_anonymity_level`). When the plan's
    last step giving k is a suppression with ``combinations = m``, that is what the plan
    promised: k over every combination of at most ``m`` keys (sdcMicro ``combs``), measured
    so (:func:`promised_combinations`), on that step's keys (``k_on`` of its figures, when the
    report has them); the other steps' promises are :func:`plan_problems`'."""
    m = promised_combinations(report)
    if m is not None:
        figures = [f for f in report.get("steps") or [] if isinstance(f, Mapping)
                   and f.get("step") == "suppress"]  # fmt: skip
        if figures and figures[-1].get("k_on"):
            keys = [str(c) for c in figures[-1]["k_on"] if str(c) in frame.columns]
    return _level(frame, keys, plan_suppresses(report), m)


def promised_combinations(report: Mapping[str, Any]) -> int | None:
    """``m`` when the plan's last step giving k (microaggregate or suppress) is a suppression
    on key combinations of at most ``m`` keys; None: k on the whole key combination."""
    plan = report.get("plan")
    steps = plan.get("steps", []) if isinstance(plan, Mapping) else []
    last = [s for s in steps if isinstance(s, Mapping)
            and s.get("step") in ("microaggregate", "suppress")]  # fmt: skip
    if last and last[-1].get("step") == "suppress" and last[-1].get("combinations") is not None:
        return int(last[-1]["combinations"])
    return None


def _level(frame: pd.DataFrame, keys: Sequence[str], missing_any: bool, m: int | None) -> int:
    """k on ``keys`` (over each subset of at most ``m`` of them when ``m`` is given)."""
    import itertools

    keys = list(keys)
    if not len(frame):
        return 0
    if not keys:
        return len(frame)
    subsets = (
        [keys]
        if m is None or m >= len(keys)
        else [list(c) for r in range(1, m + 1) for c in itertools.combinations(keys, r)]
    )
    rule: Missing = "any" if missing_any else "category"
    levels = [k_anonymity_level(frame, sub, missing=rule) for sub in subsets]
    return min(levels)


def plan_suppresses(report: Mapping[str, Any]) -> bool:
    """Whether the report's plan has a suppress step: its k, group sizes and attribute
    disclosure then count a missing key cell as matching any value (``group_measures_rule``)."""
    plan = report.get("plan")
    steps = plan.get("steps", []) if isinstance(plan, Mapping) else []
    return any(isinstance(s, Mapping) and s.get("step") == "suppress" for s in steps)


def plan_problems(result: RunResult, frame: pd.DataFrame) -> list[str]:
    """The promises of every step of the run's plan measured on the released ``frame``: each
    microaggregate step's k on its own columns (and the privacy model its method promises),
    each suppress step's k on its keys (missing matching any value). Empty for a run without a
    plan; the k on every key is :func:`plan_k_level`, checked by the release check itself."""
    plan = result.report.get("plan")
    steps = result.report.get("steps")
    if not isinstance(plan, Mapping) or not isinstance(steps, list):
        return []
    problems: list[str] = []
    missing_any = plan_suppresses(result.report)
    roles = result.roles
    conf = [c for c in roles.confidential if c in frame.columns]
    for fig in steps:
        if not isinstance(fig, Mapping) or fig.get("step") not in ("microaggregate", "suppress"):
            continue
        promised = fig.get("k_on") or fig.get("columns", [])  # a suppress step: k_on
        cols = [str(c) for c in promised if str(c) in frame.columns]
        step_k = int(fig.get("k") or 0)
        if not cols:
            continue
        m = fig.get("combinations") if fig.get("step") == "suppress" else None
        level = _level(frame, cols, missing_any, None if m is None else int(m))
        if level < step_k:
            over = f" (every combination of at most {m} keys)" if m is not None else ""
            problems.append(
                f"plan step {fig.get('index')} ({fig.get('step')}) promised k = {step_k} on "
                f"{', '.join(cols)}{over} and the release has {level}"
            )
        if fig.get("step") == "microaggregate" and conf:
            try:
                method = get_method(str(fig.get("method")))
            except InvalidParameter:
                continue
            if method.release_check is not None:
                problem = method.release_check.problem(
                    frame,
                    cols,
                    conf,
                    roles,
                    dict(plan_step_params(plan, fig)),
                    missing="any" if missing_any else "category",
                )
                if problem is not None:
                    problems.append(f"plan step {fig.get('index')}: {problem}")
    return problems


def plan_step_params(plan: Mapping[str, Any], fig: Mapping[str, Any]) -> Mapping[str, Any]:
    """The parameters of a step, resolved against its method (its defaults filled in)."""
    from microgui.core.methods import resolve_params

    index = int(fig.get("index") or 0) - 1
    steps = plan.get("steps", [])
    raw = steps[index].get("parameters", {}) if 0 <= index < len(steps) else {}
    return resolve_params(get_method(str(fig.get("method"))), dict(raw))


#: How a plan with a suppress step counts its groups (``group_measures_rule``), as its k.
GROUP_MEASURES_RULE = (
    "group sizes and attribute disclosure count a suppressed (missing) key cell as matching any "
    "value, as k-anonymity does: the group of a key combination holds every record compatible "
    "with it, so a record with a suppressed cell joins every group it matches and its "
    "confidential value joins each group's distribution"
)


def _k_rule(missing_any: bool, m: int | None) -> str:
    """How the report's ``k_anonymity`` was counted (the plan's promise)."""
    rule = (
        "missing matches any value (sdcMicro's convention)"
        if missing_any
        else "identical values (missing as a value)"
    )
    if m is not None:
        rule += (
            f", over every combination of at most {m} of the suppress step's keys (its "
            "combinations; the microaggregate steps' k on their own columns)"
        )
    return rule


def _plan_report(
    dataset: Dataset,
    roles: RoleMap,
    plan: Plan,
    protected: pd.DataFrame,
    k: int,
    seed: int,
    figures: Sequence[Mapping[str, Any]],
    seconds: float,
    groups: GroupMeasures,
) -> tuple[dict[str, Any], GroupMeasures]:
    """The report of a multi-step plan: the keys of a run report that describe a release
    (group sizes, information loss, risk before and after, the verdict), plus ``plan`` and
    ``steps``; counts and measures only. ``groups``: the release's group measures
    (:func:`~microgui.core.runs.protect.release_groups`, under the plan's rule); returned with
    the plan's k (:func:`plan_k_level`: on the promised key combinations when the last
    suppression promised k on combinations of at most m keys), the report's."""
    qis = dataset.roles.quasi_identifiers
    labels = _classes(protected, qis)
    missing_any = plan.suppresses
    promised = {"plan": plan.to_json(), "steps": [dict(f) for f in figures]}
    if promised_combinations(promised) is None:
        k_level = groups.k_anonymity  # k on the whole key combination: the one grouping's
    else:  # k on the promised combinations of keys (sdcMicro ``combs``)
        k_level = plan_k_level(protected, qis, promised)
        groups = replace(groups, k_anonymity=k_level)
    if missing_any:
        # a class per released key combination, holding every record compatible with it (a
        # suppressed cell matches any value): its size is the k check's frequency
        first = np.unique(labels, return_index=True)[1]
        sizes = frequencies_missing_any(protected, qis)[first]
    else:
        sizes = group_sizes(labels)
    qi = prepare_qi(dataset)
    z = protected_continuous_z(protected, qi)
    numeric = bool(qi.continuous_names) and bool(np.isfinite(z).all())
    try:
        mixed = mixed_information_loss(qi, protected, protected_z=z)
        il_all, il_basis, by_attr = mixed.information_loss, mixed.basis, mixed.by_attribute
    except (ValueError, TypeError, ArithmeticError):
        il_all, il_basis, by_attr = None, "not measured (a recoded column)", {}
    report: dict[str, Any] = {
        "method": PLAN_METHOD,
        "k": int(k),
        "parameters": {},
        "seed": seed,
        "n_records": int(dataset.n_records),
        "n_groups": int(len(sizes)),
        "min_group_size": int(sizes.min()) if len(sizes) else 0,
        "max_group_size": int(sizes.max()) if len(sizes) else 0,
        "group_size_counts": {
            str(s): int(c) for s, c in zip(*np.unique(sizes, return_counts=True), strict=True)
        },
        "sse": sse(qi.continuous, z) if numeric else None,
        "sst": sst(qi.continuous) if numeric else None,
        "information_loss": information_loss(qi.continuous, z) if numeric else None,
        "information_loss_basis": (
            "z-scored continuous quasi-identifiers"
            if numeric
            else "none (a continuous quasi-identifier was recoded to text, or there is none)"
        ),
        "information_loss_all_qi": il_all,
        "information_loss_all_qi_basis": il_basis,
        "information_loss_by_attribute": by_attr,
        "k_anonymity": k_level,
        "k_anonymity_rule": _k_rule(missing_any, promised_combinations({"plan": plan.to_json()})),
        "seconds": round(seconds, 4),
        "microgui_version": __version__,
        "input": dataset.name,
        "quasi_identifiers": {c: roles[c].kind.value for c in qis},
        "identifiers_removed": dataset.roles.identifiers,
        "confidential": dataset.roles.confidential,
        "citation": "",
    }
    if dataset.roles.weight is not None:
        report["weight"] = dataset.roles.weight
    report.update(risk_before_after(dataset, protected, int(k)))
    report["attribute_disclosure"] = groups.disclosure_json()
    report["verdict"] = verdict_json(release_verdict(report))
    if missing_any:  # said how the figures were counted (issue 31)
        report["group_measures_rule"] = GROUP_MEASURES_RULE
    report["plan"] = plan.to_json()
    report["steps"] = [dict(f) for f in figures]
    return report, groups
