"""Attribute roles and kinds (``003`` §2) and the per-column spec of a dataset.

Roles follow Domingo-Ferrer & Torra (``003_309fe4adb430bc25.txt`` §2): identifiers are removed,
quasi-identifiers are microaggregated, confidential and non-confidential attributes pass through
unchanged. Kinds decide the distance and the aggregate used for a quasi-identifier (``003``
§5.2-5.4): continuous (Euclidean on z-scores, mean), ordinal (d_ORD, median or convex median),
nominal (equality distance, mode).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from microgui.core.errors import InvalidRoles
from microgui.core.side_file import read_side_file

__all__ = [
    "AttributeRole",
    "AttributeKind",
    "ColumnSpec",
    "RoleMap",
    "roles_from_lists",
    "normalize_name",
    "resolve_column",
    "resolve_columns",
    "name_list",
    "roles_from_file",
]


class AttributeRole(StrEnum):
    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    CONFIDENTIAL = "confidential"
    NON_CONFIDENTIAL = "non-confidential"
    #: a survey (sampling) weight (issue 18): released unchanged like a non-confidential
    #: column; the risk measures use it to estimate population frequencies (sdcMicro's
    #: ``freqCalc``/``indivRisk``) and, when asked (``weighted_means``), the aggregation takes
    #: weighted group means. One column at most.
    WEIGHT = "weight"
    #: the household (cluster) id (issue 31 item 5): released unchanged; the records sharing a
    #: value are the persons of one household. The household risk (sdcMicro ``measure_risk``
    #: with ``hhId``) combines their individual risks, and the release's random record order
    #: keeps them adjacent. One column at most.
    HOUSEHOLD = "household-id"

    @property
    def label(self) -> str:
        return self.value.capitalize()


class AttributeKind(StrEnum):
    CONTINUOUS = "continuous"
    ORDINAL = "ordinal"
    NOMINAL = "nominal"

    @property
    def label(self) -> str:
        return self.value.capitalize()


@dataclass(frozen=True)
class ColumnSpec:
    """Role and kind of one column; ``order`` lists an ordinal column's categories, lowest first.

    ``missing_as_category``: the missing cells of a nominal or ordinal quasi-identifier form a
    category of their own (released as an empty cell; last in an ordinal order) instead of
    refusing the run (:func:`microgui.core.table.dataset.prepare_qi`). An explicit, recorded choice;
    it has no effect on a continuous column, whose missing cells are always refused.
    """

    role: AttributeRole = AttributeRole.NON_CONFIDENTIAL
    kind: AttributeKind = AttributeKind.CONTINUOUS
    order: tuple[str, ...] | None = None
    missing_as_category: bool = False

    def with_role(self, role: AttributeRole) -> ColumnSpec:
        return replace(self, role=role)

    def with_kind(self, kind: AttributeKind, order: Iterable[str] | None = None) -> ColumnSpec:
        return replace(self, kind=kind, order=tuple(order) if order is not None else None)

    def with_missing_as_category(self, flag: bool) -> ColumnSpec:
        return replace(self, missing_as_category=bool(flag))

    @property
    def missing_is_category(self) -> bool:
        """Missing cells are a category in a run: set, and the column is categorical."""
        return self.missing_as_category and self.kind is not AttributeKind.CONTINUOUS

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"role": self.role.value, "kind": self.kind.value}
        if self.order is not None:
            out["order"] = list(self.order)
        if self.missing_as_category:
            out["missing_as_category"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ColumnSpec:
        order = data.get("order")
        return cls(
            role=AttributeRole(str(data.get("role", AttributeRole.NON_CONFIDENTIAL.value))),
            kind=AttributeKind(str(data.get("kind", AttributeKind.CONTINUOUS.value))),
            order=tuple(str(v) for v in order) if isinstance(order, list) else None,
            missing_as_category=data.get("missing_as_category") is True,
        )


@dataclass(frozen=True)
class RoleMap(Mapping[str, ColumnSpec]):
    """An immutable mapping column name -> :class:`ColumnSpec`, in the table's column order.

    ``source`` is the roles file the map was read from (:func:`roles_from_file`), None
    otherwise: a file the run read, which no writer may replace (carried here so that every
    writer knows it without each caller remembering; not part of equality)."""

    specs: tuple[tuple[str, ColumnSpec], ...] = field(default=())
    source: Path | None = field(default=None, compare=False)
    #: name -> spec, built once: a lookup (``roles[name]``, ``name in roles``) scanning the
    #: specs made every per-column loop quadratic in the number of columns (a 300,000-column
    #: table ran for more than 10 minutes, issue 27).
    _index: dict[str, ColumnSpec] = field(init=False, repr=False, compare=False, hash=False)
    #: role -> its columns in table order, built once for the same reason
    _by_role: dict[AttributeRole, tuple[str, ...]] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        by_role: dict[AttributeRole, list[str]] = {role: [] for role in AttributeRole}
        index: dict[str, ColumnSpec] = {}
        for key, spec in self.specs:
            by_role[spec.role].append(key)
            index.setdefault(key, spec)  # the first spec of a name, as the scan found it
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_by_role", {r: tuple(v) for r, v in by_role.items()})

    @classmethod
    def from_dict(cls, specs: Mapping[str, ColumnSpec]) -> RoleMap:
        return cls(tuple(specs.items()))

    def __getitem__(self, name: str) -> ColumnSpec:
        return self._index[name]

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._index
        except TypeError:  # an unhashable key is in no map
            return False

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def replace(self, name: str, spec: ColumnSpec) -> RoleMap:
        if name not in self:
            raise InvalidRoles(f"column {name!r} does not exist")
        return RoleMap(tuple((k, spec if k == name else s) for k, s in self.specs))

    def columns_with(self, role: AttributeRole) -> list[str]:
        return list(self._by_role[role])

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.columns_with(AttributeRole.QUASI_IDENTIFIER)

    @property
    def identifiers(self) -> list[str]:
        return self.columns_with(AttributeRole.IDENTIFIER)

    @property
    def confidential(self) -> list[str]:
        return self.columns_with(AttributeRole.CONFIDENTIAL)

    @property
    def weight(self) -> str | None:
        """The survey weight column, if one is tagged (:attr:`AttributeRole.WEIGHT`)."""
        names = self.columns_with(AttributeRole.WEIGHT)
        if len(names) > 1:
            raise InvalidRoles(
                f"{len(names)} columns are tagged as the survey weight ({', '.join(map(repr, names))}); "
                "tag one, and the others non-confidential"
            )
        return names[0] if names else None

    @property
    def household(self) -> str | None:
        """The household-id column, if one is tagged (:attr:`AttributeRole.HOUSEHOLD`)."""
        names = self.columns_with(AttributeRole.HOUSEHOLD)
        if len(names) > 1:
            raise InvalidRoles(
                f"{len(names)} columns are tagged as the household id ({', '.join(map(repr, names))}); "
                "tag one, and the others non-confidential"
            )
        return names[0] if names else None

    def qi_of_kind(self, kind: AttributeKind) -> list[str]:
        return [
            k for k in self._by_role[AttributeRole.QUASI_IDENTIFIER] if self._index[k].kind is kind
        ]

    def to_json(self) -> dict[str, dict[str, object]]:
        return {k: s.to_json() for k, s in self.specs}

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, object]]) -> RoleMap:
        return cls(tuple((str(k), ColumnSpec.from_json(v)) for k, v in data.items()))


def normalize_name(name: str) -> str:
    """How a column name given by the user is compared when it matches no column exactly:
    white space at both ends removed, Unicode NFC, case folded (``' Âge'`` and ``'âge'`` agree).
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name.strip()).casefold())


def _shown_columns(cols: Sequence[str]) -> str:
    # repr: a name may hold quotes, commas or a line break; the message stays one line
    return ", ".join(map(repr, cols[:12])) + (", …" if len(cols) > 12 else "")


class _ColumnIndex:
    """The columns of a table, for :func:`resolve_column` (built once per list of names)."""

    def __init__(self, columns: Iterable[str]) -> None:
        self.columns = [str(c) for c in columns]
        self.exact = set(self.columns)
        self.by_key: dict[str, list[str]] = {}
        for col in self.columns:
            self.by_key.setdefault(normalize_name(col), []).append(col)

    def resolve(self, name: object, option: str) -> str:
        if not isinstance(name, str):
            raise InvalidRoles(
                f"{option} names column {name!r} (type {type(name).__name__}); column names are "
                "text: give the name as a string"
            )
        if name in self.exact:  # an exact match always wins
            return name
        hits = self.by_key.get(normalize_name(name), [])
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise InvalidRoles(
                f"{option} names column {name!r}, which matches no column exactly but "
                f"{len(hits)} columns when spaces at the ends, Unicode form and case are "
                f"ignored ({', '.join(map(repr, hits))}); give the exact name of the one you mean "
                "(on the command line in quotes, e.g. --qi ' age')"
            )
        hint = (
            r"; write a comma inside a column name as \, (--qi 'a\,b')"
            if any("," in c for c in self.columns)
            else "; check the spelling"
        )
        raise InvalidRoles(
            f"{option} names column {name!r}, which is not in the table (columns: "
            f"{_shown_columns(self.columns)})" + hint
        )


def resolve_column(name: object, columns: Iterable[str], option: str = "column") -> str:
    """The column of ``columns`` that the user's ``name`` means.

    An exact match always wins. Otherwise ``name`` must match exactly one column after
    :func:`normalize_name` (spaces at the ends, Unicode NFC, case); two or more such columns
    (``'ssn'`` and ``'ssn '``, ``'SSN'`` and ``'ssn'``, NFC and NFD spellings) are an ambiguity,
    refused with every candidate shown. Raises :class:`InvalidRoles` naming ``option``.
    """
    return _ColumnIndex(columns).resolve(name, option)


def resolve_columns(names: Iterable[object], columns: Iterable[str], option: str) -> list[str]:
    """:func:`resolve_column` for each of ``names`` (order and repeats kept)."""
    index = _ColumnIndex(columns)
    return [index.resolve(name, option) for name in names]


def name_list(value: object, option: str) -> list[object]:
    """Column names given as one string (one column, never its letters), or an iterable of
    them, as a list; None is no column. Raises :class:`InvalidRoles` for anything else."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise InvalidRoles(
            f"{option} must be a column name or a list of column names, not a "
            f"{type(value).__name__}"
        )
    return list(value)


def _ordinal_map(value: object) -> dict[object, object]:
    """``ordinal`` as the API takes it: {col: order or None}, one name, or a list of names."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {name: None for name in name_list(value, "ordinal")}


def roles_from_lists(
    columns: Iterable[str],
    *,
    qi: Iterable[str] | str,
    identifiers: Iterable[str] | str = (),
    confidential: Iterable[str] | str = (),
    ordinal: Mapping[str, Iterable[str] | None] | Iterable[str] | str | None = None,
    nominal: Iterable[str] | str = (),
    missing_as_category: Iterable[str] | str = (),
    weight: str | None = None,
    household: str | None = None,
) -> RoleMap:
    """Build a :class:`RoleMap` the way the command line and the Python API describe roles.

    ``weight`` names the survey weight column (``--weight``), released unchanged;
    ``household`` the household-id column (``--household``), released unchanged.

    Quasi-identifiers not named in ``ordinal`` or ``nominal`` are continuous; an ordinal column
    maps to its category order, lowest first (None: numeric order of its values, else text
    order); columns named nowhere are non-confidential and pass through. Every name must be a
    column of the table and may have one role only.

    Names are matched by :func:`resolve_column` (exact first, else unique after removing
    spaces at the ends, Unicode NFC and case folding); one string names one column
    (``qi="age"``), never its letters.
    """
    index = _ColumnIndex(columns)
    cols = index.columns

    def resolved(value: object, option: str) -> list[str]:
        return list(dict.fromkeys(index.resolve(n, option) for n in name_list(value, option)))

    qi_list = resolved(qi, "--qi")
    id_list = resolved(identifiers, "--identifiers")
    conf_list = resolved(confidential, "--confidential")
    ord_map: dict[str, list[str] | None] = {}
    for name, order in _ordinal_map(ordinal).items():
        col = index.resolve(name, "--ordinal")
        if col in ord_map:
            raise InvalidRoles(f"--ordinal gives column {col!r} twice; give one order")
        if order is not None and (isinstance(order, str) or not isinstance(order, Iterable)):
            raise InvalidRoles(
                f"--ordinal {col!r}: give its categories as a list, lowest first, or None for "
                "the natural order of its values"
            )
        ord_map[col] = None if order is None else [str(v) for v in order]
    nom_list = resolved(nominal, "--nominal")
    missing_list = resolved(missing_as_category, "--missing-as-category")
    if not qi_list:
        raise InvalidRoles("no quasi-identifier given; name at least one column with --qi")
    for name in list(ord_map) + nom_list:
        if name not in qi_list:
            raise InvalidRoles(
                f"{name!r} is given a kind (--ordinal/--nominal) but is not a quasi-identifier; add it to --qi"
            )
    for name in missing_list:
        if name not in qi_list:
            raise InvalidRoles(
                f"--missing-as-category names {name!r}, which is not a quasi-identifier; add "
                "it to --qi (with --nominal or --ordinal), or drop it from --missing-as-category"
            )
        if name not in ord_map and name not in nom_list:
            raise InvalidRoles(
                f"--missing-as-category names {name!r}, which is not a nominal or ordinal "
                "quasi-identifier; missing cells of a continuous quasi-identifier cannot be a "
                "category (fill them or remove those records), so give the column with "
                "--nominal or --ordinal, or drop it from --missing-as-category"
            )
    both = set(ord_map) & set(nom_list)
    if both:
        raise InvalidRoles(
            f"column {sorted(both)[0]!r} is given as both ordinal and nominal; choose one"
        )
    weight_list = [] if weight is None else [index.resolve(weight, "--weight")]
    household_list = [] if household is None else [index.resolve(household, "--household")]
    seen: dict[str, str] = {}
    for option, names in (
        ("--qi", qi_list),
        ("--identifiers", id_list),
        ("--confidential", conf_list),
        ("--weight", weight_list),
        ("--household", household_list),
    ):
        for name in names:
            if name in seen and seen[name] != option:
                raise InvalidRoles(
                    f"column {name!r} is named by both {seen[name]} and {option}; give it one role"
                )
            seen[name] = option
    nom_set, qi_set, id_set, conf_set = set(nom_list), set(qi_list), set(id_list), set(conf_list)
    specs: dict[str, ColumnSpec] = {}
    for col in cols:
        if col in ord_map:
            order = ord_map[col]
            specs[col] = ColumnSpec(
                AttributeRole.QUASI_IDENTIFIER,
                AttributeKind.ORDINAL,
                tuple(str(v) for v in order) if order is not None else None,
            )
        elif col in nom_set:
            specs[col] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
        elif col in qi_set:
            specs[col] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        elif col in id_set:
            specs[col] = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)
        elif col in conf_set:
            specs[col] = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
        elif col in weight_list:
            specs[col] = ColumnSpec(AttributeRole.WEIGHT, AttributeKind.CONTINUOUS)
        elif col in household_list:
            specs[col] = ColumnSpec(AttributeRole.HOUSEHOLD, AttributeKind.NOMINAL)
        else:
            specs[col] = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
        if col in missing_list:
            specs[col] = specs[col].with_missing_as_category(True)
    return RoleMap.from_dict(specs)


#: The newest roles-file schema :func:`roles_from_file` reads.
ROLES_SCHEMA = 1


#: The largest roles file read: 64 MiB holds the roles of a table at the column limit.
MAX_ROLES_BYTES = 64 * 1024 * 1024


def roles_from_file(path: str | os.PathLike[str], columns: Iterable[str]) -> RoleMap:
    """The roles of a roles file (``--roles FILE``): JSON ``{"schema_version": 1, "columns":
    {name: {"role", "kind", "order", "missing_as_category"}}}``, the format of the demo's
    ``demo_persons.roles.json`` (other keys are ignored). Every column of the table must be in
    it, and nothing else: a column the file does not tag is refused, not passed through
    silently. Errors (:class:`InvalidRoles`) name the file and the column."""
    import json

    name = Path(path).name

    def no_twice(pairs: list[tuple[str, object]]) -> dict[str, object]:
        keys = [k for k, _v in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise InvalidRoles(
                f"the roles file {name!r} names {twice[0]!r} twice; give each column one entry"
            )
        return dict(pairs)

    # never a FIFO or device, never more than a roles file holds (one place: side_file)
    raw = read_side_file(path, "roles file", MAX_ROLES_BYTES, InvalidRoles)
    try:  # utf-8-sig: a file saved by Windows Notepad starts with a byte-order mark
        data = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=no_twice)
    except UnicodeDecodeError as exc:
        raise InvalidRoles(f"cannot read the roles file {name!r}: {exc}") from exc
    except ValueError as exc:
        raise InvalidRoles(f"the roles file {name!r} is not JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("columns"), dict):
        raise InvalidRoles(
            f"the roles file {name!r} has no 'columns' mapping (column -> role, kind); see "
            "resources/demo_persons.roles.json"
        )
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidRoles(
            f"the roles file {name!r} has schema_version {version!r}; it must be a whole "
            f"number ({ROLES_SCHEMA})"
        )
    if version > ROLES_SCHEMA:
        raise InvalidRoles(
            f"the roles file {name!r} has schema_version {version}, newer than this microgui "
            f"reads ({ROLES_SCHEMA}); update microgui"
        )
    table = [str(c) for c in columns]
    index = _ColumnIndex(table)
    given: dict[str, object] = {}
    unknown: list[str] = []
    for key, entry in dict(data["columns"]).items():
        try:  # a name as --qi matches it: exactly, else after spaces, Unicode form and case
            column = index.resolve(str(key), "--roles")
        except InvalidRoles:
            unknown.append(str(key))
            continue
        if column in given:
            raise InvalidRoles(
                f"the roles file {name!r} tags column {column!r} twice ({key!r}); give it one entry"
            )
        given[column] = entry
    if unknown:
        raise InvalidRoles(
            f"the roles file {name!r} tags {unknown[0]!r}, which is not a column of the table"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
        )
    untagged = [c for c in table if c not in given]
    if untagged:
        raise InvalidRoles(
            f"the roles file {name!r} does not tag column {untagged[0]!r}"
            + (f" (and {len(untagged) - 1} more)" if len(untagged) > 1 else "")
            + '; give every column a role ({"role": "non-confidential"} passes it through)'
        )
    specs: dict[str, ColumnSpec] = {}
    for column in table:
        entry = given[column]
        if not isinstance(entry, dict):
            raise InvalidRoles(f"the roles file {name!r}: column {column!r} is not an object")
        order = entry.get("order")
        if order is not None and (
            not isinstance(order, list) or not all(isinstance(v, str) for v in order)
        ):
            raise InvalidRoles(
                f"the roles file {name!r}: the order of {column!r} must be a list of texts, "
                "lowest first"
            )
        role, kind = entry.get("role", "non-confidential"), entry.get("kind", "continuous")
        if role not in {r.value for r in AttributeRole}:
            raise InvalidRoles(
                f"the roles file {name!r}: column {column!r} has role {role!r}; give one of "
                f"{', '.join(r.value for r in AttributeRole)}"
            )
        if kind not in {k.value for k in AttributeKind}:
            raise InvalidRoles(
                f"the roles file {name!r}: column {column!r} has kind {kind!r}; give one of "
                f"{', '.join(k.value for k in AttributeKind)}"
            )
        blanks = entry.get("missing_as_category", False)
        if not isinstance(blanks, bool):
            raise InvalidRoles(
                f"the roles file {name!r}: missing_as_category of {column!r} is {blanks!r}; "
                "give true or false"
            )
        if order is not None and kind != AttributeKind.ORDINAL.value:
            raise InvalidRoles(
                f"the roles file {name!r}: {column!r} has an order but kind {kind!r}; give "
                'kind "ordinal", or drop the order'
            )
        specs[column] = ColumnSpec.from_json(entry)
    roles = RoleMap(tuple(specs.items()), source=Path(path))
    _ = roles.weight  # two weight columns: refused here
    _ = roles.household  # two household-id columns: refused here
    if not roles.quasi_identifiers:
        raise InvalidRoles(f"the roles file {name!r} tags no quasi-identifier")
    return roles
