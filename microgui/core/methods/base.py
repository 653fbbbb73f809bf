"""The contract between microgui and its microaggregation methods, and the method registry.

A method is a :class:`Method`: a name (the ``--method`` value), texts for the app, the kinds of
quasi-identifier it accepts, its parameters (:class:`ParamSpec`, set with ``--param NAME=VALUE``)
and a function ``run(MethodInput) -> MethodOutput``. The run function only partitions (and, for
generalization methods, may produce its own quasi-identifier values); the shared aggregation step
(``microgui.core.table.aggregate``) replaces each group by its aggregate. A method also declares
everything else it brings: the warm-up of its compiled kernels (the benchmark and the tests call
it), the privacy model it promises (:class:`ReleaseCheck`, verified before export) and the
artifacts it leaves for the app's views (:mod:`microgui.core.methods.artifacts`).

This module holds the contract and the registry's dictionary only; :mod:`microgui.core.methods`
imports every method module and looks methods up (``get_method``, ``available_methods``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.kanonymity import Missing
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.references import readable
from microgui.core.table.aggregate import CATEGORICAL_AGGREGATES, DEFAULT_CATEGORICAL_AGGREGATE
from microgui.core.table.dataset import Dataset, QIMatrix
from microgui.core.table.numbers import ROUND_CHOICES
from microgui.core.table.roles import AttributeKind, RoleMap

if TYPE_CHECKING:
    from microgui.core.methods.artifacts import Artifact

__all__ = [
    "ParamSpec",
    "MethodInput",
    "MethodOutput",
    "ReleaseCheck",
    "Method",
    "REGISTERED",
    "register",
    "registered",
    "COMMON_PARAMS",
    "resolve_params",
    "REFINE_CHOICES",
    "REFINE_PARAMS",
]


@dataclass(frozen=True)
class ParamSpec:
    """One ``--param NAME=VALUE`` of a method: its type, default, range and help text."""

    name: str
    type: type  # int, float, str or bool
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    def parse(self, raw: object) -> Any:
        """Convert and check a value (from the command line, JSON or a widget)."""
        try:
            if self.type is bool:
                if isinstance(raw, bool):
                    value: Any = raw
                elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                    value = True
                elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError(raw)
            elif isinstance(raw, bool):  # True is no number of records, nor a gamma
                raise ValueError(raw)
            elif self.type is int:
                value = int(str(raw).strip()) if not isinstance(raw, int) else raw
            elif self.type is float:
                value = float(str(raw).strip()) if not isinstance(raw, (int, float)) else float(raw)
                if not math.isfinite(value):  # nan passes every range check; inf most
                    raise ValueError(raw)
            else:
                value = str(raw).strip()
        except ValueError:
            raise InvalidParameter(
                f"parameter {self.name}={raw!r} is not a valid {self.type.__name__}"
            ) from None
        if self.choices is not None and value not in self.choices:
            raise InvalidParameter(
                f"parameter {self.name}={value!r} must be one of {', '.join(self.choices)}"
            )
        if self.minimum is not None and value < self.minimum:
            raise InvalidParameter(f"parameter {self.name}={value} must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidParameter(f"parameter {self.name}={value} must be <= {self.maximum}")
        return value


#: Parameters of the shared aggregation step, accepted by every method that aggregates.
COMMON_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec(
        "rescale_variance",
        bool,
        False,
        "Rescale each microaggregated continuous attribute so its variance equals the original's "
        "(003 §5.2); means stay exact and k-anonymity is kept.",
    ),
    ParamSpec(
        "weighted_means",
        bool,
        False,
        "Release each group's survey-weighted mean (sum of w·x over sum of w, w the column tagged "
        "weight) of the continuous quasi-identifiers instead of the plain mean, as sdcMicro's "
        "microaggregation(weights=); still k-anonymous, but the SSE is no longer the smallest "
        "for the partition.",
    ),
    ParamSpec(
        "ordinal_average",
        str,
        "median",
        "Aggregate of ordinal quasi-identifiers: the median or the convex median (003 §5.3).",
        choices=("median", "convex-median"),
    ),
    ParamSpec(
        "categorical_aggregate",
        str,
        DEFAULT_CATEGORICAL_AGGREGATE,
        "How a group's categorical quasi-identifiers are released: joint = a combination of "
        "categories that one of the group's records has (the per-attribute median/mode when a "
        "record has it, else the group's categorical medoid); independent = each attribute's "
        "median/mode on its own (003 §5.3-5.4), which can publish a combination no record of "
        "the group has (counted as invented_combinations in the report).",
        choices=CATEGORICAL_AGGREGATES,
    ),
    ParamSpec(
        "round",
        str,
        "none",
        "Round the aggregated continuous values: none (clean decimals only, no float noise), "
        "source = to each column's own decimals in the input (integers stay integers), or a "
        "number of decimals 0-10. The report gives the IL before rounding.",
        choices=ROUND_CHOICES,
    ),
)


#: The values of ``--param refine`` (:mod:`microgui.core.methods.refine` says what each does).
REFINE_CHOICES: tuple[str, ...] = ("none", "local", "igd", "deep")

#: Parameters of the refinement that may follow a partitioning method (issue 16), accepted by
#: every method that aggregates its own groups and promises nothing on confidential attributes
#: (:attr:`Method.refinable`).
REFINE_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec(
        "refine",
        str,
        "none",
        "Improve the method's groups afterwards, keeping every group at k..2k-1 records and "
        "never raising the SSE: none; local = moves and swaps of records to a local optimum "
        "(exact SSE changes); igd = iterative group decomposition (Khomnotai et al. 2018); "
        "deep = igd, local, exact re-splitting of neighbouring groups, then perturbation and "
        "restart (refine_rounds rounds per group). The report's refinement entry gives the IL "
        "before and after.",
        choices=REFINE_CHOICES,
    ),
    ParamSpec(
        "refine_rounds",
        int,
        100,
        "Perturbation rounds per group for refine=deep, counted for at most 300 groups (a "
        "larger table gets 300 × this many rounds in all). More: lower loss, longer run; the "
        "same seed gives the same groups.",
        minimum=0,
        maximum=100_000,
    ),
)


@dataclass(frozen=True)
class MethodInput:
    """Everything a method's run function may use. ``params`` are parsed (see :class:`ParamSpec`)."""

    dataset: Dataset
    qi: QIMatrix
    k: int
    params: Mapping[str, Any]
    rng: np.random.Generator
    progress: ProgressFn = no_progress
    #: generalization hierarchies by column (``--hierarchy COL=FILE``), loaded by the run
    hierarchies: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodOutput:
    """What a method returns.

    ``labels``: int64 group id per record, 0..g-1, in the table's row order.
    ``protected_qi``: for methods that make their own quasi-identifier values (generalization),
    a frame with one column per quasi-identifier; None means "aggregate the groups".
    ``extra``: JSON-serializable entries added to the run report.
    ``artifacts``: what a view needs that does not belong in the report (a spanning tree, a
    dependency tree, generalization classes), made with :meth:`~microgui.core.methods.artifacts.Artifact.entry`
    of the kinds in :mod:`microgui.core.methods.artifacts`; kept on the :class:`RunResult`.
    """

    labels: np.ndarray
    protected_qi: pd.DataFrame | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    artifacts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReleaseCheck:
    """The privacy model a method promises on the confidential attributes, verified before export.

    ``model`` names it: the p of p-sensitive k-anonymity (002 §4.11), the l of distinct
    l-diversity (Machanavajjhala et al. 2007) or the t of t-closeness (Li et al. 2007); ``param``
    is the method's parameter holding the promised level.
    """

    model: Literal["p-sensitive", "l-diversity", "t-closeness"]
    param: str

    def measure(
        self,
        frame: pd.DataFrame,
        qis: Sequence[str],
        confidential: Sequence[str],
        roles: RoleMap,
        params: Mapping[str, Any],
        *,
        missing: Missing = "category",
    ) -> tuple[float, float, bool] | None:
        """(promised level, level reached by the released ``frame``, kept) with groups =
        identical quasi-identifier values, a blank one counted by the ``missing`` rule
        (:mod:`microgui.core.metrics.kanonymity`: ``"any"`` after a local suppression); None
        when the run's ``params`` hold no level. A t is kept when reached ≤ t (1e-9
        tolerance), a p or an l when reached ≥ it."""
        from microgui.core.metrics.privacy import distinct_l_diversity, p_sensitivity, t_closeness

        if self.param not in params:
            return None
        if self.model == "t-closeness":
            t = float(params[self.param])
            reached = float(t_closeness(frame, qis, confidential, roles, missing=missing))
            return t, reached, reached <= t + 1e-9
        promised = int(params[self.param])
        if self.model == "p-sensitive":
            level = p_sensitivity(frame, qis, confidential, missing=missing)
        else:
            level = distinct_l_diversity(frame, qis, confidential, missing=missing)
        return float(promised), float(level), level >= promised

    def problem(
        self,
        frame: pd.DataFrame,
        qis: Sequence[str],
        confidential: Sequence[str],
        roles: RoleMap,
        params: Mapping[str, Any],
        *,
        missing: Missing = "category",
    ) -> str | None:
        """Why the released ``frame`` breaks the promise (groups = identical quasi-identifier
        values, a blank one counted by the ``missing`` rule), or None when it keeps it or the
        run's ``params`` hold no level."""
        measured = self.measure(frame, qis, confidential, roles, params, missing=missing)
        if measured is None or measured[2]:
            return None
        promised, reached, _kept = measured
        if self.model == "t-closeness":
            return (
                f"a group is {reached:.4f} away (EMD) from the whole table on a confidential "
                f"attribute, above the promised t = {params[self.param]}"
            )
        what = "sensitive" if self.model == "p-sensitive" else "diverse"
        return (
            f"the table is only {int(reached)}-{what} on {', '.join(map(repr, confidential))}, "
            f"below the promised {self.param} = {int(promised)}"
        )


@dataclass(frozen=True)
class Method:
    """A registered microaggregation method."""

    name: str
    title: str
    summary: str  # one line, with its paper
    description: str  # one paragraph for the app's method panel
    citation: str  # paper file and section, e.g. "003_309fe4adb430bc25.txt, Algorithm 5.1"
    kinds: frozenset[AttributeKind]
    run: Callable[[MethodInput], MethodOutput]
    params: tuple[ParamSpec, ...] = ()
    aggregates: bool = True  # uses the shared aggregation step (and so COMMON_PARAMS)
    #: time complexity in words, e.g. "O(n²/k) distance evaluations", shown by the benchmark
    complexity: str = ""
    #: record counts at which ``python -m microgui.bench`` times the method (d = 10, k = 5);
    #: empty for methods whose cost does not allow it (say why in ``complexity``)
    bench_sizes: tuple[int, ...] = ()
    #: whether the method needs confidential columns (p-sensitive, t-closeness)
    needs_confidential: bool = False
    #: whether the method reads generalization hierarchies (``--hierarchy``); given to any
    #: other method they would be ignored, so a run refuses them (issue 12)
    uses_hierarchies: bool = False
    #: compiles (or loads from numba's cache) the method's kernels and returns the seconds it
    #: took; None for a method without compiled kernels. Methods sharing kernels share it.
    warm_up: Callable[[], float] | None = None
    #: the privacy model the method promises on the confidential attributes, checked on export
    release_check: ReleaseCheck | None = None
    #: the kinds of artifact its runs leave for the app's views (:mod:`microgui.core.methods.artifacts`)
    artifacts: tuple[Artifact[Any], ...] = ()
    #: why the method cannot run on a table of these roles and this many records with these
    #: (resolved) parameters, "" when it can: the limits the kinds alone do not say (one
    #: attribute only, a largest table); asked by sweeps and the app before a run
    table_refusal: Callable[[RoleMap, int, Mapping[str, Any]], str] | None = None

    @property
    def reference(self) -> str:
        """The citation as a user reads it: "Domingo-Ferrer & Torra 2005, Algorithm 5.1"."""
        return readable(self.citation)

    @property
    def text(self) -> str:
        """The description as a user reads it (paper numbers as authors and year)."""
        return readable(self.description)

    @property
    def headline(self) -> str:
        """The one-line summary as a user reads it (paper numbers as authors and year)."""
        return readable(self.summary)

    @property
    def refinable(self) -> bool:
        """Whether a refinement may follow the method (``--param refine``): it aggregates the
        groups it makes and promises nothing on the confidential attributes (a move of a record
        could break p-sensitivity, l-diversity or t-closeness, which the refinement does not
        check)."""
        return self.aggregates and self.release_check is None

    @property
    def all_params(self) -> tuple[ParamSpec, ...]:
        return (
            self.params
            + (COMMON_PARAMS if self.aggregates else ())
            + (REFINE_PARAMS if self.refinable else ())
        )


_REGISTRY: dict[str, Method] = {}
#: The registered methods by name, read-only: those whose module has been imported.
#: :func:`microgui.core.methods.get_method` imports the module of the method asked for, and
#: :func:`microgui.core.methods.available_methods` every method module.
REGISTERED: Mapping[str, Method] = MappingProxyType(_REGISTRY)


def register(method: Method) -> Method:
    """Add a method to the registry (module import time); names are unique."""
    if method.name in _REGISTRY and _REGISTRY[method.name] is not method:
        raise ValueError(f"method {method.name!r} registered twice")
    _REGISTRY[method.name] = method
    return method


@contextmanager
def registered(method: Method) -> Iterator[Method]:
    """Register ``method`` for the duration of a ``with`` block (a test's fake method)."""
    register(method)
    try:
        yield method
    finally:
        if _REGISTRY.get(method.name) is method:
            del _REGISTRY[method.name]


def resolve_params(method: Method, raw: Mapping[str, object]) -> dict[str, Any]:
    """Defaults of ``method`` overridden by ``raw`` (parsed); unknown names are refused."""
    specs = {p.name: p for p in method.all_params}
    for name in raw:
        if name not in specs:
            known = ", ".join(specs) or "none"
            raise InvalidParameter(
                f"method {method.name!r} has no parameter {name!r} (its parameters: {known})"
            )
    return {
        name: (spec.parse(raw[name]) if name in raw else spec.default)
        for name, spec in specs.items()
    }
