"""A run's specification (:class:`RunSpec`) and result (:class:`RunResult`), and the parsing
of their values (k, seed).

:class:`RunSpec` holds every parameter of a run: what we save, compare and re-run;
:func:`microgui.core.runs.protect.run_protection` turns one into a :class:`RunResult`.

A run is a plan: :attr:`RunSpec.steps`, an ordered list of steps, and one report. Today a plan
always has exactly one step, the :class:`MethodStep` (a method, its k, its parameters and
hierarchies), derived from the spec's fields, so that files, commands, JSON keys, equality and
hashes of specs stay what they were. What it will be (issue 31 adds recoding, top-coding and
local suppression as further kinds of :data:`Step`), in the words of
``../shared/design/release-workflow.md``: "A **plan** is data: an ordered list of steps, each
with its parameters, applied to the original table, with one verification of the final release
against every promise of every step" — the steps are applied in order, starting from the
original table, and the final release is verified once, giving the run's one report. The
run-level fields (seed, strata, block size, engine) stay on the spec: they say how the plan
runs, not what it does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.methods.refine import refinement_losses
from microgui.core.metrics.disclosure import GroupMeasures
from microgui.core.metrics.measure_text import format_measure, format_percent
from microgui.core.runs.scale import (
    resolve_block_size,
)
from microgui.core.table.dataset import QIMatrix
from microgui.core.table.roles import RoleMap

__all__ = [
    "MethodStep",
    "Step",
    "RunSpec",
    "RunResult",
    "parse_k",
    "parse_seed",
    "MAX_SEED",
    "validate_k",
    "information_loss_text",
]


@dataclass(frozen=True)
class MethodStep:
    """The method step of a plan: the registered ``method``, its ``k``, its raw ``params`` (by
    name, parsed against the method when run) and the ``hierarchies`` (column, file) it
    generalizes with; the same values as the :class:`RunSpec` fields of those names."""

    method: str
    k: int
    params: tuple[tuple[str, Any], ...] = ()
    hierarchies: tuple[tuple[str, str], ...] = ()

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)


#: A step of a plan. Today one kind; issue 31 makes it a union of the step kinds.
Step: TypeAlias = MethodStep


@dataclass(frozen=True)
class RunSpec:
    """Every parameter of a run: what we save, compare and re-run.

    ``params`` holds the raw ``--param`` values by name (parsed against the method when run);
    ``seed`` seeds the run's ``numpy.random.Generator`` (None: a fresh one, recorded in the report);
    ``hierarchies`` maps a column to the generalization hierarchy file given for it.

    Scale (:mod:`microgui.core.runs.scale`): ``strata`` microaggregates each stratum of these columns
    on its own; ``block_size`` (None: off, the exact method on the whole table) splits larger
    sets of records into blocks of at most that many records ("auto": exact up to 100,000
    records, blocks of 50,000 above; :func:`microgui.core.runs.scale.resolve_block_size`);
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
    #: a plan run's plan (issue 31): its versioned JSON as canonical text (sorted keys, so that
    #: the spec stays hashable and equal plans give equal specs), ``method`` then
    #: ``"plan"``; None for a one-method run (whose JSON has no ``plan`` key, as before)
    plan: str | None = None

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

    @property
    def steps(self) -> tuple[Step, ...]:
        """The run's plan, its steps in order: today always one, the :class:`MethodStep` made
        of this spec's fields. A property, not a field, so that equality, hashing and
        :meth:`to_json` of a spec (and so every saved file) are unchanged."""
        return (MethodStep(self.method, self.k, self.params, self.hierarchies),)

    @property
    def plan_json(self) -> dict[str, Any] | None:
        """The plan of a plan run as JSON (None for a one-method run)."""
        import json

        return None if self.plan is None else dict(json.loads(self.plan))

    def to_json(self) -> dict[str, Any]:
        out = self._fields_json()
        if self.plan is not None:  # a plan run only: a method run's JSON is unchanged
            out["plan"] = self.plan_json
        return out

    def _fields_json(self) -> dict[str, Any]:
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
        """Whether the run may go through strata or blocks (:mod:`microgui.core.runs.scale`); with
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
    #: The group measures of ``protected`` the report's ``k_anonymity`` and
    #: ``attribute_disclosure`` were taken from (computed once by the run, passed on to the
    #: release check and the release report); None when not kept (a run read back from a file).
    groups: GroupMeasures | None = field(default=None, repr=False, compare=False)

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
        parts.append(f"IL (all QIs) = {format_percent(headline)}")
    value = report.get("information_loss")
    gen = report.get("generalization_il")
    kinds = report.get("quasi_identifiers") or {"": "continuous"}  # older reports: no kinds
    if value is not None and "continuous" in kinds.values():
        floor = report.get("il_lower_bound_best", report.get("il_lower_bound"))
        # issue 16; one format with every view (issue 30: "0.00 %" for a bound of 0.0001307 %)
        shown = "" if floor is None else f" (lower bound {format_percent(floor)})"
        parts.append(f"SSE/SST (continuous QIs) = {format_percent(value)}{shown}")
    elif value is None and gen is not None:
        parts.append(f"generalization IL = {format_measure(gen)}")
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
            parts.append(f"refined ({mode}) from {what}{format_percent(losses[0])}")
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
