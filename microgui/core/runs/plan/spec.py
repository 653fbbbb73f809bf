"""A protection plan as data: :class:`Plan`, its step kinds, and the versioned JSON that holds it.

The JSON (``plan_version`` 1)::

    {"plan_version": 1,
     "seed": 12345,
     "steps": [
       {"step": "recode", "column": "age", "breaks": [0, 20, 25, 30, "inf"]},
       {"step": "recode", "column": "age", "bins": 8},
       {"step": "recode", "column": "education", "hierarchy": "education.csv", "level": 1},
       {"step": "recode", "column": "country", "mapping": "regions.csv"},
       {"step": "top_bottom", "column": "hours-per-week", "top": 60, "top_value": "60+"},
       {"step": "microaggregate", "method": "mdav", "k": 5, "columns": "continuous",
        "parameters": {}, "hierarchies": {}},
       {"step": "suppress", "k": 5, "columns": ["sex", "race"], "importance": ["race", "sex"],
        "combinations": 3, "strata": []}
     ]}

Steps apply in order to the original table (``../shared/design/release-workflow.md``: "A plan
is data: an ordered list of steps, each with its parameters, applied to the original table,
with one verification of the final release against every promise of every step"). Every step
works on quasi-identifiers only: other columns are released as the input holds them. A recode
step is exactly one of ``breaks``, ``bins``, ``hierarchy`` + ``level`` or ``mapping``
(:mod:`microgui.core.methods.recode`); a microaggregate step is what a
:class:`~microgui.core.runs.spec.RunSpec` holds (method, k, parameters, hierarchies) on the
chosen ``columns`` (a list, ``"continuous"``, ``"categorical"`` or absent: every
quasi-identifier); a suppress step is local suppression to ``k`` on its ``columns``, with
missing matching any value (absent: the categorical keys are blanked and the continuous ones
kept whole, k reached on every key; with ``combinations`` k on the categorical keys' smaller
combinations, as sdcMicro's ``localSuppression``; see the plan run module). File names in a
step (hierarchies, mappings) are relative to the plan file's folder. Steps hold no references to one another, so a
plan has no cycles to refuse; a plan longer than :data:`MAX_STEPS` is refused at once. The
optional ``seed`` seeds the plan's random draws (a method's), so the plan replays to the same
release.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.runs.spec import parse_k, parse_seed
from microgui.core.side_file import read_side_file
from microgui.core.table.roles import AttributeKind, RoleMap, resolve_column

__all__ = [
    "PLAN_VERSION",
    "MAX_STEPS",
    "MAX_PLAN_BYTES",
    "Plan",
    "PlanStep",
    "RecodeStep",
    "TopBottomStep",
    "MicroaggregateStep",
    "SuppressStep",
    "load_plan",
    "plan_from_json",
    "resolve_plan",
    "kind_columns",
    "step_from_words",
    "ALL_KEYS",
    "CONTINUOUS_KEYS",
    "CATEGORICAL_KEYS",
    "STEP_KINDS",
]

PLAN_VERSION = 1
#: The most steps a plan holds (a real plan has a handful; 10,000 steps is a mistake).
MAX_STEPS = 100
#: The largest plan file read.
MAX_PLAN_BYTES = 1024 * 1024


@dataclass(frozen=True)
class RecodeStep:
    """Global recoding of ``column``: by ``breaks`` or ``bins`` (intervals), by ``hierarchy``
    and ``level`` (an ARX hierarchy file), or by a ``mapping`` file."""

    column: str
    breaks: tuple[float | str, ...] | None = None
    bins: int | None = None
    hierarchy: str | None = None
    level: int | None = None
    mapping: str | None = None

    kind = "recode"

    @property
    def how(self) -> str:
        if self.breaks is not None:
            return "intervals"
        if self.bins is not None:
            return "equal-frequency intervals"
        if self.mapping is not None:
            return "mapping"
        return "hierarchy level"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.kind, "column": self.column}
        if self.breaks is not None:
            out["breaks"] = list(self.breaks)
        if self.bins is not None:
            out["bins"] = self.bins
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy
            out["level"] = self.level
        if self.mapping is not None:
            out["mapping"] = self.mapping
        return out


@dataclass(frozen=True)
class TopBottomStep:
    """Top/bottom coding of ``column`` (sdcMicro's ``topBotCoding``): values above ``top``
    become ``top_value`` (default: ``top``), below ``bottom`` become ``bottom_value``."""

    column: str
    top: float | None = None
    bottom: float | None = None
    top_value: float | str | None = None
    bottom_value: float | str | None = None

    kind = "top_bottom"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.kind, "column": self.column}
        for name in ("top", "top_value", "bottom", "bottom_value"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass(frozen=True)
class MicroaggregateStep:
    """Microaggregation with a registered ``method`` at ``k`` on ``columns`` (``()``: every
    quasi-identifier; or the words ``continuous``/``categorical``, resolved when run), with the
    raw ``params`` and ``hierarchies`` a :class:`~microgui.core.runs.spec.RunSpec` holds."""

    method: str
    k: int
    columns: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()
    hierarchies: tuple[tuple[str, str], ...] = ()
    selection: str | None = None  # "continuous" or "categorical": the columns by kind

    kind = "microaggregate"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.kind, "method": self.method, "k": self.k}
        if self.selection is not None:
            out["columns"] = self.selection
        elif self.columns:
            out["columns"] = list(self.columns)
        if self.params:
            out["parameters"] = dict(self.params)
        if self.hierarchies:
            out["hierarchies"] = dict(self.hierarchies)
        return out


@dataclass(frozen=True)
class SuppressStep:
    """Local suppression to ``k`` on ``columns`` (``()``: the categorical keys blanked, the
    continuous keys kept whole and k reached on all keys), missing matching any value; ``importance`` lists the columns from the most important (suppressed
    last); ``combinations`` checks every subset of at most that many keys; ``strata``
    suppresses within each stratum."""

    k: int
    columns: tuple[str, ...] = ()
    importance: tuple[str, ...] = ()
    combinations: int | None = None
    strata: tuple[str, ...] = ()

    kind = "suppress"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.kind, "k": self.k}
        if self.columns:
            out["columns"] = list(self.columns)
        if self.importance:
            out["importance"] = list(self.importance)
        if self.combinations is not None:
            out["combinations"] = self.combinations
        if self.strata:
            out["strata"] = list(self.strata)
        return out


PlanStep: TypeAlias = RecodeStep | TopBottomStep | MicroaggregateStep | SuppressStep
STEP_KINDS = ("recode", "top_bottom", "microaggregate", "suppress")

_FIELDS: dict[str, set[str]] = {
    "recode": {"step", "column", "breaks", "bins", "hierarchy", "level", "mapping", "note"},
    "top_bottom": {"step", "column", "top", "bottom", "top_value", "bottom_value", "note"},
    "microaggregate": {"step", "method", "k", "columns", "parameters", "hierarchies", "note"},
    "suppress": {"step", "k", "columns", "importance", "combinations", "strata", "note"},
}


@dataclass(frozen=True)
class Plan:
    """An ordered tuple of steps (see the module docstring); ``folder`` is where the file names
    of its steps are found (the plan file's folder), never saved in the JSON."""

    steps: tuple[PlanStep, ...]
    folder: Path | None = field(default=None, compare=False)
    #: the seed of the plan's random draws (a method's), kept so that the plan replays to the
    #: same release; None: a fresh one per run, recorded in the report
    seed: int | None = None

    @property
    def k(self) -> int | None:
        """The k the release is verified at: the largest k of its microaggregate and suppress
        steps (None: no step gives k-anonymity)."""
        ks = [s.k for s in self.steps if isinstance(s, MicroaggregateStep | SuppressStep)]
        return max(ks) if ks else None

    @property
    def suppresses(self) -> bool:
        return any(isinstance(s, SuppressStep) for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"plan_version": PLAN_VERSION}
        if self.seed is not None:
            out["seed"] = self.seed
        out["steps"] = [s.to_json() for s in self.steps]
        return out

    def path(self, name: str) -> Path:
        """A file named in a step, relative to the plan's folder."""
        p = Path(name)
        return p if p.is_absolute() or self.folder is None else self.folder / p

    def side_files(self) -> tuple[Path, ...]:
        """The files the plan's steps read (mappings, hierarchies), as :meth:`path` finds them."""
        names: list[str] = []
        for step in self.steps:
            if isinstance(step, RecodeStep):
                names += [n for n in (step.mapping, step.hierarchy) if n is not None]
            elif isinstance(step, MicroaggregateStep):
                names += [p for _c, p in step.hierarchies]
        return tuple(self.path(n) for n in dict.fromkeys(names))

    def describe(self, index: int) -> str:
        """'step 2 (recode age)': how messages name a step (1-based)."""
        step = self.steps[index]
        if isinstance(step, RecodeStep | TopBottomStep):
            return f"step {index + 1} ({step.kind} {step.column!r})"
        if isinstance(step, MicroaggregateStep):
            return f"step {index + 1} (microaggregate with {step.method})"
        return f"step {index + 1} (suppress to k = {step.k})"


def load_plan(path: str | os.PathLike[str]) -> Plan:
    """The plan in the JSON file ``path`` (read through :func:`read_side_file`): its step file
    names are relative to its folder."""
    p = Path(path)
    raw = read_side_file(p, "plan file", MAX_PLAN_BYTES)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InvalidInput(f"plan file {p.name!r} is not UTF-8 text; save it as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"plan file {p.name!r} is not valid JSON (line {exc.lineno}, column {exc.colno}): "
            f"{exc.msg}"
        ) from None
    return plan_from_json(data, source=p.name, folder=p.resolve().parent)


def plan_from_json(data: object, *, source: str = "the plan", folder: Path | None = None) -> Plan:
    """A :class:`Plan` from its JSON; raises :class:`InvalidInput` naming ``source``, the step
    and what is wrong, in one line."""
    where = source if source == "the plan" else f"plan {source!r}"
    if not isinstance(data, Mapping):
        raise InvalidInput(
            f'{where} is not a JSON object; give {{"plan_version": 1, "steps": [...]}}'
        )
    version = data.get("plan_version")
    if version != PLAN_VERSION:
        raise InvalidInput(
            f"{where} has plan_version {version!r}; this version of microgui reads "
            f"plan_version {PLAN_VERSION}"
        )
    unknown = sorted(set(data) - {"plan_version", "steps", "note", "seed"})
    if unknown:
        raise InvalidInput(f"{where} has unknown key(s) {', '.join(map(repr, unknown[:5]))}")
    steps = data.get("steps")
    if not isinstance(steps, list):
        raise InvalidInput(f'{where} needs "steps": a list of steps')
    if not steps:
        raise InvalidInput(f"{where} has no step; give at least one")
    if len(steps) > MAX_STEPS:
        raise InvalidInput(
            f"{where} has {len(steps):,} steps; a plan holds at most {MAX_STEPS} (check the file)"
        )
    parsed = tuple(_step(item, i, where) for i, item in enumerate(steps))
    try:
        seed = parse_seed(data.get("seed"), "seed")
    except InvalidParameter as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    return Plan(parsed, folder, seed)


def _step(item: object, index: int, where: str) -> PlanStep:
    at = f"{where}, step {index + 1}"
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{at} is not a JSON object")
    kind = item.get("step")
    if kind not in _FIELDS:
        shown = repr(kind) if isinstance(kind, str) and len(kind) <= 40 else "(missing or not text)"
        raise InvalidInput(
            f"{at}: unknown step kind {shown}; the kinds are {', '.join(STEP_KINDS)}"
        )
    extra = sorted(str(key) for key in item if key not in _FIELDS[kind])
    if extra:
        raise InvalidInput(
            f"{at} ({kind}): unknown key(s) {', '.join(map(repr, extra[:5]))}; its keys are "
            f"{', '.join(sorted(_FIELDS[kind] - {'step', 'note'}))}"
        )
    try:
        if kind == "recode":
            return _recode(item, at)
        if kind == "top_bottom":
            return _top_bottom(item, at)
        if kind == "microaggregate":
            return _microaggregate(item, at)
        return _suppress(item, at)
    except InvalidParameter as exc:
        raise InvalidInput(f"{at} ({kind}): {exc}") from None


def _text(item: Mapping[str, Any], key: str, at: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{at}: {key!r} must be text (a column or file name)")
    return value.strip()


def _names(value: object, key: str, at: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{at}: {key!r} must be a list of column names")
    return tuple(v.strip() for v in value)


def _whole(value: object, key: str, at: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{at}: {key!r} must be a whole number")
    return value


def _recode(item: Mapping[str, Any], at: str) -> RecodeStep:
    column = _text(item, "column", at)
    given = [key for key in ("breaks", "bins", "hierarchy", "mapping") if key in item]
    if len(given) != 1:
        raise InvalidInput(
            f"{at} (recode {column!r}): give exactly one of breaks, bins, hierarchy (with level) "
            f"or mapping{'' if not given else '; given ' + ', '.join(given)}"
        )
    how = given[0]
    if "level" in item and how != "hierarchy":
        raise InvalidInput(f"{at} (recode {column!r}): level goes with a hierarchy")
    if how == "breaks":
        breaks = item["breaks"]
        if not isinstance(breaks, list) or not all(
            isinstance(b, int | float | str) and not isinstance(b, bool) for b in breaks
        ):
            raise InvalidInput(f"{at} (recode {column!r}): breaks must be a list of numbers")
        return RecodeStep(column, breaks=tuple(breaks))
    if how == "bins":
        return RecodeStep(column, bins=_whole(item["bins"], "bins", at))
    if how == "mapping":
        return RecodeStep(column, mapping=_text(item, "mapping", at))
    if "level" not in item:
        raise InvalidInput(f"{at} (recode {column!r}): a hierarchy needs its level (1, 2, ...)")
    return RecodeStep(
        column, hierarchy=_text(item, "hierarchy", at), level=_whole(item["level"], "level", at)
    )


def _number(value: object, key: str, at: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{at}: {key!r} must be a number")
    return value


def _label(value: object, key: str, at: str) -> float | str | None:
    if value is None or (isinstance(value, int | float | str) and not isinstance(value, bool)):
        return value
    raise InvalidInput(f"{at}: {key!r} must be a number or a label")


def _top_bottom(item: Mapping[str, Any], at: str) -> TopBottomStep:
    column = _text(item, "column", at)
    top = _number(item.get("top"), "top", at)
    bottom = _number(item.get("bottom"), "bottom", at)
    if top is None and bottom is None:
        raise InvalidInput(f"{at} (top_bottom {column!r}): give top, bottom or both")
    if item.get("top_value") is not None and top is None:
        raise InvalidInput(f"{at} (top_bottom {column!r}): top_value goes with top")
    if item.get("bottom_value") is not None and bottom is None:
        raise InvalidInput(f"{at} (top_bottom {column!r}): bottom_value goes with bottom")
    return TopBottomStep(
        column,
        top=top,
        bottom=bottom,
        top_value=_label(item.get("top_value"), "top_value", at),
        bottom_value=_label(item.get("bottom_value"), "bottom_value", at),
    )


def _columns(item: Mapping[str, Any], at: str) -> tuple[tuple[str, ...], str | None]:
    value = item.get("columns")
    if isinstance(value, str):
        word = value.strip().lower()
        if word not in ("continuous", "categorical"):
            raise InvalidInput(
                f"{at}: 'columns' is a list of column names, or 'continuous' or 'categorical'"
            )
        return (), word
    return _names(value, "columns", at), None


def _microaggregate(item: Mapping[str, Any], at: str) -> MicroaggregateStep:
    method = _text(item, "method", at)
    k = parse_k(item.get("k"))
    columns, selection = _columns(item, at)
    params = item.get("parameters") or {}
    hierarchies = item.get("hierarchies") or {}
    if not isinstance(params, Mapping):
        raise InvalidInput(f"{at}: 'parameters' must be an object NAME: VALUE")
    if not isinstance(hierarchies, Mapping) or not all(
        isinstance(v, str) for v in hierarchies.values()
    ):
        raise InvalidInput(f"{at}: 'hierarchies' must be an object COLUMN: FILE")
    return MicroaggregateStep(
        method=method,
        k=k,
        columns=columns,
        params=tuple(sorted((str(n), v) for n, v in params.items())),
        hierarchies=tuple(sorted((str(c), str(p)) for c, p in hierarchies.items())),
        selection=selection,
    )


def _suppress(item: Mapping[str, Any], at: str) -> SuppressStep:
    k = parse_k(item.get("k"))
    columns, selection = _columns(item, at)
    if selection is not None:
        raise InvalidInput(f"{at}: 'columns' of a suppress step is a list of column names")
    combos = item.get("combinations")
    return SuppressStep(
        k=k,
        columns=columns,
        importance=_names(item.get("importance"), "importance", at),
        combinations=None if combos is None else _whole(combos, "combinations", at),
        strata=_names(item.get("strata"), "strata", at),
    )


# ---- validation against a table's roles -------------------------------------------------------


def resolve_plan(plan: Plan, roles: RoleMap, columns: Sequence[str]) -> Plan:
    """The plan with its column names matched to the table's (as every option matches them:
    :func:`~microgui.core.table.roles.resolve_column`) and checked: every step on
    quasi-identifiers only, k >= 2, no step on a column after a suppression of it (a local
    suppression comes last: a later step would meet or undo its missing cells), and a step that
    gives k-anonymity. Raises :class:`InvalidRoles`/:class:`InvalidParameter`, one line."""
    from dataclasses import replace

    qis = set(roles.quasi_identifiers)
    out: list[PlanStep] = []
    suppressed: set[str] = set()

    def key(name: str, index: int, what: str) -> str:
        col = resolve_column(name, columns, f"{plan.describe(index)} {what}")
        if col not in qis:
            role = roles[col].role.value if col in roles else "untagged"
            raise InvalidRoles(
                f"{plan.describe(index)} works on {col!r}, which is {role}, not a "
                "quasi-identifier: a plan changes quasi-identifiers only (other columns are "
                "released as the input holds them); tag it a quasi-identifier or drop the step"
            )
        return col

    for i, step in enumerate(plan.steps):
        if isinstance(step, RecodeStep | TopBottomStep):
            step = replace(step, column=key(step.column, i, "column"))
            touched: tuple[str, ...] = (step.column,)
        elif isinstance(step, MicroaggregateStep):
            cols = tuple(key(c, i, "columns") for c in step.columns)
            hier = tuple((key(c, i, "hierarchies"), p) for c, p in step.hierarchies)
            step = replace(step, columns=cols, hierarchies=hier)
            touched = cols or tuple(qis)
        else:
            cols = tuple(key(c, i, "columns") for c in step.columns)
            importance = tuple(key(c, i, "importance") for c in step.importance)
            strata = tuple(
                resolve_column(c, columns, f"{plan.describe(i)} strata") for c in step.strata
            )
            if len(strata) > 1:
                raise InvalidParameter(
                    f"{plan.describe(i)}: give one strata column (suppression reaches k within "
                    "each of its values)"
                )
            step = replace(step, columns=cols, importance=importance, strata=strata)
            touched = cols or tuple(qis)
        if isinstance(step, MicroaggregateStep | SuppressStep) and step.k < 2:
            raise InvalidParameter(
                f"{plan.describe(i)}: k = {step.k} gives no protection; give k >= 2"
            )
        again = sorted(suppressed & set(touched))
        if again:
            raise InvalidParameter(
                f"{plan.describe(i)} changes {', '.join(map(repr, again))} after a local "
                "suppression of it; put the suppression last"
            )
        if isinstance(step, SuppressStep):
            suppressed |= set(touched)
        out.append(step)
    if plan.k is None:
        raise InvalidParameter(
            "the plan has no step giving k-anonymity; add a microaggregate or a suppress step "
            "(recoding alone promises no k)"
        )
    return Plan(tuple(out), plan.folder, plan.seed)


def kind_columns(roles: RoleMap, selection: str | None, columns: Sequence[str]) -> list[str]:
    """The columns of a microaggregate step: its list, or the quasi-identifiers of the kind it
    names (``continuous``; ``categorical``: nominal and ordinal), or every quasi-identifier."""
    if columns:
        return list(columns)
    qis = roles.quasi_identifiers
    if selection == "continuous":
        return [c for c in qis if roles[c].kind is AttributeKind.CONTINUOUS]
    if selection == "categorical":
        return [c for c in qis if roles[c].kind is not AttributeKind.CONTINUOUS]
    return list(qis)


#: What the plan editor's "columns" choice may be besides a column name (a microaggregate or
#: suppress step on several keys).
ALL_KEYS, CONTINUOUS_KEYS, CATEGORICAL_KEYS = (
    "(all keys)",
    "(continuous keys)",
    "(categorical keys)",
)


def step_from_words(kind: str, column: str, words: str) -> dict[str, Any]:
    """The JSON of one step from the plan editor's three fields (checked by
    :func:`plan_from_json`): ``kind``, ``column`` (a name, or :data:`ALL_KEYS`,
    :data:`CONTINUOUS_KEYS`, :data:`CATEGORICAL_KEYS`) and ``words``:

    - recode: ``breaks 0, 25, 35, inf`` | ``bins 5`` | ``mapping FILE`` | ``level 2 FILE``
    - top_bottom: ``top 60`` | ``top 60 = 60+`` | ``bottom 18`` | ``bottom 18 = <18``
    - microaggregate: ``METHOD k 5`` (e.g. ``mdav-generic k 5``)
    - suppress: ``k 5``

    Raises :class:`InvalidInput` saying what to type."""
    text = " ".join(words.split())
    head, _, rest = text.partition(" ")
    head = head.lower()
    step: dict[str, Any] = {"step": kind}
    several = column in (ALL_KEYS, CONTINUOUS_KEYS, CATEGORICAL_KEYS)
    if kind in ("recode", "top_bottom") and several:
        raise InvalidInput(f"a {kind} step works on one column: choose it")
    try:
        if kind == "recode":
            step["column"] = column
            if head == "breaks":
                step["breaks"] = [_break(b) for b in rest.replace(",", " ").split()]
            elif head == "bins":
                step["bins"] = int(rest)
            elif head == "mapping" and rest:
                step["mapping"] = rest
            elif head == "level":
                level, _, path = rest.partition(" ")
                step["level"], step["hierarchy"] = int(level), path
            else:
                raise ValueError
        elif kind == "top_bottom":
            step["column"] = column
            if head not in ("top", "bottom"):
                raise ValueError
            value, _, label = rest.partition("=")
            step[head] = _break(value.strip())
            if label.strip():
                step[f"{head}_value"] = label.strip()
        elif kind == "microaggregate":
            parts = text.split()
            if len(parts) != 3 or parts[1].lower() != "k":
                raise ValueError
            step.update(method=parts[0], k=int(parts[2]))
            step.update(_columns_json(column))
        elif kind == "suppress":
            if head != "k":
                raise ValueError
            step["k"] = int(rest)
            if column == CONTINUOUS_KEYS or column == CATEGORICAL_KEYS:
                raise InvalidInput("a suppress step works on all keys or on one column")
            step.update(_columns_json(column))
        else:
            raise InvalidInput(f"unknown step kind {kind!r}; the kinds are {', '.join(STEP_KINDS)}")
    except (ValueError, TypeError):
        raise InvalidInput(f"{kind}: type {_WORDS_HELP.get(kind, '')}") from None
    plan_from_json({"plan_version": PLAN_VERSION, "steps": [step]})  # checked as a file is
    return step


_WORDS_HELP = {
    "recode": "'breaks 0, 25, 35, inf', 'bins 5', 'mapping FILE' or 'level 2 FILE'",
    "top_bottom": "'top 60', 'top 60 = 60+', 'bottom 18' or 'bottom 18 = <18'",
    "microaggregate": "the method and k: 'mdav-generic k 5'",
    "suppress": "'k 5'",
}


def _break(word: str) -> float | str:
    if word.lower() in ("inf", "-inf", "+inf"):
        return word.lower().lstrip("+")
    number = float(word)
    return int(number) if number.is_integer() else number


def _columns_json(column: str) -> dict[str, Any]:
    if column == ALL_KEYS or not column:
        return {}
    if column == CONTINUOUS_KEYS:
        return {"columns": "continuous"}
    if column == CATEGORICAL_KEYS:
        return {"columns": "categorical"}
    return {"columns": [column]}
