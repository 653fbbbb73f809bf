"""A run: the full specification of a protection (:class:`RunSpec`) and its result (:class:`RunResult`).

``run_protection(dataset, spec, progress)`` validates, partitions with the registered method,
aggregates, measures and returns a frozen :class:`RunResult`. It is what the command line, the
Python API and the app's worker all call.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from microgui._version import __version__
from microgui.core.aggregate import aggregate, protected_continuous_z
from microgui.core.dataset import Dataset, QIMatrix, is_missing, prepare_qi, survey_weights
from microgui.core.errors import InvalidParameter, InvalidRoles
from microgui.core.methods import (
    Method,
    MethodInput,
    available_methods,
    get_method,
    resolve_params,
)
from microgui.core.methods.bound import lower_bound_report, prefetch
from microgui.core.methods.refine import refinement_losses, run_and_refine
from microgui.core.metrics import group_sizes, information_loss, k_anonymity_level, sse, sst
from microgui.core.metrics.combinations import invented_combinations
from microgui.core.metrics.mixed_loss import mixed_information_loss
from microgui.core.numbers import release_numbers, rounding_report
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.roles import RoleMap, resolve_column, resolve_columns
from microgui.core.scale import (
    check_scale_options,
    one_piece_message,
    resolve_block_size,
    run_scaled,
)

__all__ = [
    "RunSpec",
    "RunResult",
    "run_protection",
    "parse_k",
    "parse_seed",
    "MAX_SEED",
    "validate_k",
    "build_report",
    "information_loss_text",
    "kind_refusal",
    "method_refusal",
    "check_kinds",
]


@dataclass(frozen=True)
class RunSpec:
    """Every parameter of a run: what we save, compare and re-run.

    ``params`` holds the raw ``--param`` values by name (parsed against the method when run);
    ``seed`` seeds the run's ``numpy.random.Generator`` (None: a fresh one, recorded in the report);
    ``hierarchies`` maps a column to the generalization hierarchy file given for it.

    Scale (:mod:`microgui.core.scale`): ``strata`` microaggregates each stratum of these columns
    on its own; ``block_size`` (None: off, the exact method on the whole table) splits larger
    sets of records into blocks of at most that many records ("auto": exact up to 100,000
    records, blocks of 50,000 above; :func:`microgui.core.scale.resolve_block_size`);
    ``engine`` ("local" or "dask"), ``scheduler`` (the Dask scheduler's address) and ``workers`` (local processes; None: one
    per core) say where blocks and strata run. Specs saved before these fields existed load
    with the defaults, which give the runs they gave then.
    """

    method: str
    k: int
    params: tuple[tuple[str, Any], ...] = ()
    seed: int | None = None
    hierarchies: tuple[tuple[str, str], ...] = ()
    strata: tuple[str, ...] = ()
    block_size: int | str | None = None
    engine: str = "local"
    scheduler: str | None = None
    workers: int | None = None

    @classmethod
    def make(
        cls,
        method: str,
        k: int | str,
        params: Mapping[str, Any] | None = None,
        seed: int | str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        *,
        strata: Sequence[str] | str | None = None,
        block_size: int | str | None = None,
        engine: str = "local",
        scheduler: str | None = None,
        workers: int | str | None = None,
    ) -> RunSpec:
        """A spec from loose values; ``k`` must be a whole number (its range is checked on the
        run), and so must ``block_size`` and ``workers``; ``strata`` may be "a,b" or a list."""
        if isinstance(strata, str):
            strata = [part.strip() for part in strata.split(",") if part.strip()]
        return cls(
            method=method,
            k=parse_k(k),
            params=tuple(sorted((params or {}).items())),
            seed=parse_seed(seed),
            hierarchies=tuple(sorted((str(c), str(p)) for c, p in (hierarchies or {}).items())),
            strata=tuple(str(c) for c in (strata or ())),
            block_size=(
                None
                if block_size is None
                else "auto"
                if str(block_size).strip().lower() == "auto"
                else _whole(block_size, "block size")
            ),
            engine=str(engine),
            scheduler=None if scheduler is None else str(scheduler),
            workers=None if workers is None else _whole(workers, "workers"),
        )

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "k": self.k,
            "parameters": self.param_dict,
            "seed": self.seed,
            "hierarchies": dict(self.hierarchies),
            "strata": list(self.strata),
            "block_size": self.block_size,
            "engine": self.engine,
            "scheduler": self.scheduler,
            "workers": self.workers,
        }

    @property
    def scaled(self) -> bool:
        """Whether the run may go through strata or blocks (:mod:`microgui.core.scale`); with
        ``block_size="auto"`` a small table still runs exact (see :meth:`scaled_for`)."""
        return bool(self.strata) or self.block_size is not None

    def scaled_for(self, n: int) -> bool:
        """Whether a run of this spec on ``n`` records goes through strata or blocks."""
        return bool(self.strata) or resolve_block_size(self.block_size, n, self.k) is not None


@dataclass(frozen=True)
class RunResult:
    """The outcome of a run: spec, partition, protected table, report (JSON-ready) and timings."""

    spec: RunSpec
    roles: RoleMap
    labels: np.ndarray
    protected: pd.DataFrame
    report: Mapping[str, Any]
    qi: QIMatrix = field(repr=False)
    seconds: float = 0.0
    artifacts: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n_groups(self) -> int:
        return int(self.labels.max()) + 1 if len(self.labels) else 0

    @property
    def information_loss(self) -> float:
        """IL = 100·SSE/SST in percent; NaN when the run generalized its continuous
        quasi-identifiers (the report then holds null and ``generalization_il``)."""
        value = self.report["information_loss"]
        return float("nan") if value is None else float(value)

    @property
    def information_loss_all_qi(self) -> float:
        """The headline IL = 100·SSE/SST over every quasi-identifier in MDAV-generic's distance
        (:mod:`microgui.core.metrics.mixed_loss`), in percent; NaN when undefined."""
        value = self.report.get("information_loss_all_qi")
        return float("nan") if value is None else float(value)

    @property
    def information_loss_text(self) -> str:
        """The run's information loss in words, for status lines."""
        return information_loss_text(self.report)


def information_loss_text(report: Mapping[str, Any]) -> str:
    """'IL (all QIs) = 11.16 %, SSE/SST (continuous QIs) = 7.98 %': the headline information
    loss over every quasi-identifier (``information_loss_all_qi``) and, by its own name, the
    continuous-only SSE/SST (``information_loss``) when there is a continuous quasi-identifier,
    with the proven lower bound under it (``il_lower_bound_best``,
    :mod:`microgui.core.methods.bound`) when the report has one, or the generalization IL
    (``004`` eqs. 6–9) when those were generalized to text; then, after a refinement
    (``--param refine``), the loss of the method's own groups."""
    parts = []
    headline = report.get("information_loss_all_qi")
    if headline is not None:
        parts.append(f"IL (all QIs) = {float(headline):.2f} %")
    value = report.get("information_loss")
    gen = report.get("generalization_il")
    kinds = report.get("quasi_identifiers") or {"": "continuous"}  # older reports: no kinds
    if value is not None and "continuous" in kinds.values():
        floor = report.get("il_lower_bound_best", report.get("il_lower_bound"))
        shown = "" if floor is None else f" (lower bound {float(floor):.2f} %)"  # issue 16
        parts.append(f"SSE/SST (continuous QIs) = {float(value):.2f} %{shown}")
    elif value is None and gen is not None:
        parts.append(f"generalization IL = {float(gen):.3f}")
    refined = report.get("refinement")  # issue 16: what the refinement after the method did
    if parts and isinstance(refined, Mapping):
        mode = refined.get("mode")
        losses = refinement_losses(refined)
        if refined.get("kept", "refined") != "refined":
            parts.append(f"refine={mode} kept the method's groups")
        elif losses is None:
            parts.append(f"refined ({mode})")
        else:
            what = "IL (all QIs) " if losses[2] else ""
            parts.append(f"refined ({mode}) from {what}{losses[0]:.2f} %")
    return ", ".join(parts) if parts else "IL not applicable"


def parse_k(k: object) -> int:
    """k as an int, or :class:`InvalidParameter` when it is not a whole number."""
    if isinstance(k, bool):
        raise InvalidParameter(f"k={k!r} is not a whole number; give k >= 2")
    if isinstance(k, int):
        return k
    try:
        return int(str(k).strip())
    except ValueError:
        raise InvalidParameter(f"k={k!r} is not a whole number; give k >= 2") from None


#: The largest seed: numpy seeds are non-negative whole numbers, and 64 bits keep a seed exact
#: in the reports and project files other tools read (the seed drawn when none is given has 63).
MAX_SEED = 2**64 - 1


def parse_seed(seed: object, option: str = "seed") -> int | None:
    """A seed as an int in 0..:data:`MAX_SEED` (None stays None: a fresh seed per run), or
    :class:`InvalidParameter` saying what to give. Text is read as a whole number (the command
    line); floats and booleans are refused, not truncated."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer | str):
        raise InvalidParameter(
            f"{option} {seed!r} is not a whole number; give a seed from 0 to {MAX_SEED}"
        )
    try:
        value = int(seed.strip()) if isinstance(seed, str) else int(seed)
    except ValueError:
        text = str(seed)
        shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text)} characters)"
        raise InvalidParameter(
            f"{option} {shown} is not a whole number; give a seed from 0 to {MAX_SEED}"
        ) from None
    if not 0 <= value <= MAX_SEED:
        shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
        raise InvalidParameter(
            f"{option} {shown} is out of range; give a seed from 0 to {MAX_SEED} "
            "(numpy seeds are non-negative)"
        )
    return value


def _whole(value: object, what: str) -> int:
    """``value`` as an int, or :class:`InvalidParameter` naming ``what``."""
    if isinstance(value, bool):
        raise InvalidParameter(f"{what} {value!r} is not a whole number")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise InvalidParameter(f"{what} {value!r} is not a whole number") from None


def validate_k(k: object, n: int, table: str = "") -> int:
    """k as an int with 2 <= k <= n, or :class:`InvalidParameter` saying why not (``table``:
    the file name, for the message)."""
    value = parse_k(k)
    where = f" in {table}" if table else ""
    if value < 2:
        raise InvalidParameter(
            f"k={value} gives no protection; give k >= 2 (k-anonymity needs groups of at least 2)"
        )
    if n < 2:
        raise InvalidParameter(
            f"the table{where} has {n} record(s), and k-anonymity needs groups of at least 2 "
            "records; choose a table with at least k records"
        )
    if value > n:
        raise InvalidParameter(
            f"k={value} is larger than the number of records{where} ({n}); give k <= {n}"
        )
    return value


def run_protection(
    dataset: Dataset, spec: RunSpec, progress: ProgressFn = no_progress
) -> RunResult:
    """Protect ``dataset`` as ``spec`` says. Raises :class:`MicroguiError` subclasses for user errors
    and lets :class:`RunCancelled` from ``progress`` propagate."""
    started = time.perf_counter()
    method: Method = get_method(spec.method)
    params = resolve_params(method, spec.param_dict)
    k = validate_k(spec.k, dataset.n_records, dataset.name if dataset.source else "")
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
    _check_hierarchies(spec, method, dataset)
    if spec.engine == "dask" and not spec.scaled_for(dataset.n_records):
        raise InvalidParameter(one_piece_message())
    progress(0.0, "checking the data")
    qi = prepare_qi(dataset)
    check_kinds(method, dataset.roles)
    _check_weight(dataset, params)
    seed = parse_seed(spec.seed)  # a spec may come from a project file, not RunSpec.make
    seed = seed if seed is not None else secrets.randbits(63)
    prefetch(qi, k, method.aggregates)  # the report's IL bound, on the other core meanwhile
    if spec.scaled_for(dataset.n_records):
        return _run_scaled(dataset, spec, method, params, k, qi, seed, started, progress)
    rng = np.random.default_rng(seed)
    output = run_and_refine(
        method,
        MethodInput(
            dataset=dataset,
            qi=qi,
            k=k,
            params=params,
            rng=rng,
            progress=sub_progress(progress, 0.0, 0.9),
            hierarchies=_load_hierarchies(spec, dataset),
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
    protected, rounding = _release_numbers(protected, dataset, qi, params)
    progress(0.95, "measuring")
    seconds = time.perf_counter() - started
    report = build_report(
        dataset, spec, method, params, seed, qi, labels, protected, seconds,
        {**output.extra, **rounding},
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
    )


def _run_scaled(
    dataset: Dataset,
    spec: RunSpec,
    method: Method,
    params: Mapping[str, Any],
    k: int,
    qi: QIMatrix,
    seed: int,
    started: float,
    progress: ProgressFn,
) -> RunResult:
    """``run_protection`` with strata or blocks (:func:`microgui.core.scale.run_scaled`)."""
    scaled = run_scaled(
        dataset,
        qi,
        method.name,
        k,
        params,
        seed,
        _load_hierarchies(spec, dataset),
        strata=spec.strata,
        block_size=resolve_block_size(spec.block_size, dataset.n_records, k),
        engine=spec.engine,
        scheduler=spec.scheduler,
        workers=spec.workers,
        progress=sub_progress(progress, 0.0, 0.95),
    )
    protected, rounding = _release_numbers(scaled.protected, dataset, qi, params)
    progress(0.95, "measuring")
    seconds = time.perf_counter() - started
    extra = {**scaled.extra, "scale": scaled.summary, **rounding}
    report = build_report(
        dataset, spec, method, params, seed, qi, scaled.labels, protected, seconds, extra
    )
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
    )


def _release_numbers(
    protected: pd.DataFrame, dataset: Dataset, qi: QIMatrix, params: Mapping[str, Any]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The release with clean numbers (and rounded by the ``round`` parameter), and the
    report's ``rounding`` entry when it rounded (:mod:`microgui.core.numbers`)."""
    mode = str(params.get("round", "none"))
    source = (  # the numbers as read (prepare_qi parsed them once already)
        pd.DataFrame(qi.cont_values, columns=list(qi.continuous_names))
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


def _load_hierarchies(spec: RunSpec, dataset: Dataset) -> dict[str, Any]:
    """Read the hierarchy files named in the spec (``microgui.core.hierarchy``)."""
    if not spec.hierarchies:
        return {}
    from microgui.core.hierarchy import load_hierarchy

    out: dict[str, Any] = {}
    for name, path in spec.hierarchies:
        column = resolve_column(name, dataset.frame.columns, "--hierarchy")
        out[column] = load_hierarchy(path)
    return out


def _check_hierarchies(spec: RunSpec, method: Method, dataset: Dataset) -> None:
    """Hierarchies that would be ignored are refused, not dropped in silence (issue 12): the
    method must generalize and each column must be a quasi-identifier."""
    if not spec.hierarchies:
        return
    if not method.uses_hierarchies:
        users = ", ".join(m.name for m in available_methods() if m.uses_hierarchies)
        raise InvalidParameter(
            f"method {method.name} does not generalize, so the hierarchy given for "
            f"{spec.hierarchies[0][0]!r} would be ignored; drop --hierarchy, or choose a method "
            f"that uses hierarchies ({users})"
        )
    for name, _path in spec.hierarchies:
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
) -> dict[str, Any]:
    """The run report: aggregates and measures only, never a raw value of any record."""
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
        "k_anonymity": k_anonymity_level(protected, roles.quasi_identifiers),
        # groups releasing a categorical combination none of their records has (issue 13)
        "invented_combinations": invented_combinations(protected, qi, labels),
        "seconds": round(seconds, 4),
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
    report.update(extra)
    return report
