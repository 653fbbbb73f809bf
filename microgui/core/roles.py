"""Attribute roles and kinds (``003`` §2) and the per-column spec of a dataset.

Roles follow Domingo-Ferrer & Torra (``003_309fe4adb430bc25.txt`` §2): identifiers are removed,
quasi-identifiers are microaggregated, confidential and non-confidential attributes pass through
unchanged. Kinds decide the distance and the aggregate used for a quasi-identifier (``003``
§5.2-5.4): continuous (Euclidean on z-scores, mean), ordinal (d_ORD, median or convex median),
nominal (equality distance, mode).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from microgui.core.errors import InvalidRoles

__all__ = ["AttributeRole", "AttributeKind", "ColumnSpec", "RoleMap", "roles_from_lists"]


class AttributeRole(StrEnum):
    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    CONFIDENTIAL = "confidential"
    NON_CONFIDENTIAL = "non-confidential"

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
    """Role and kind of one column; ``order`` lists an ordinal column's categories, lowest first."""

    role: AttributeRole = AttributeRole.NON_CONFIDENTIAL
    kind: AttributeKind = AttributeKind.CONTINUOUS
    order: tuple[str, ...] | None = None

    def with_role(self, role: AttributeRole) -> ColumnSpec:
        return replace(self, role=role)

    def with_kind(self, kind: AttributeKind, order: Iterable[str] | None = None) -> ColumnSpec:
        return replace(self, kind=kind, order=tuple(order) if order is not None else None)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"role": self.role.value, "kind": self.kind.value}
        if self.order is not None:
            out["order"] = list(self.order)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ColumnSpec:
        order = data.get("order")
        return cls(
            role=AttributeRole(str(data.get("role", AttributeRole.NON_CONFIDENTIAL.value))),
            kind=AttributeKind(str(data.get("kind", AttributeKind.CONTINUOUS.value))),
            order=tuple(str(v) for v in order) if isinstance(order, list) else None,
        )


@dataclass(frozen=True)
class RoleMap(Mapping[str, ColumnSpec]):
    """An immutable mapping column name -> :class:`ColumnSpec`, in the table's column order."""

    specs: tuple[tuple[str, ColumnSpec], ...] = field(default=())

    @classmethod
    def from_dict(cls, specs: Mapping[str, ColumnSpec]) -> RoleMap:
        return cls(tuple(specs.items()))

    def __getitem__(self, name: str) -> ColumnSpec:
        for key, spec in self.specs:
            if key == name:
                return spec
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def replace(self, name: str, spec: ColumnSpec) -> RoleMap:
        if name not in self:
            raise InvalidRoles(f"column {name!r} does not exist")
        return RoleMap(tuple((k, spec if k == name else s) for k, s in self.specs))

    def columns_with(self, role: AttributeRole) -> list[str]:
        return [k for k, s in self.specs if s.role is role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.columns_with(AttributeRole.QUASI_IDENTIFIER)

    @property
    def identifiers(self) -> list[str]:
        return self.columns_with(AttributeRole.IDENTIFIER)

    @property
    def confidential(self) -> list[str]:
        return self.columns_with(AttributeRole.CONFIDENTIAL)

    def qi_of_kind(self, kind: AttributeKind) -> list[str]:
        return [
            k for k, s in self.specs if s.role is AttributeRole.QUASI_IDENTIFIER and s.kind is kind
        ]

    def to_json(self) -> dict[str, dict[str, object]]:
        return {k: s.to_json() for k, s in self.specs}

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, object]]) -> RoleMap:
        return cls(tuple((str(k), ColumnSpec.from_json(v)) for k, v in data.items()))


def roles_from_lists(
    columns: Iterable[str],
    *,
    qi: Iterable[str],
    identifiers: Iterable[str] = (),
    confidential: Iterable[str] = (),
    ordinal: Mapping[str, Iterable[str] | None] | None = None,
    nominal: Iterable[str] = (),
) -> RoleMap:
    """Build a :class:`RoleMap` the way the command line and the Python API describe roles.

    Quasi-identifiers not named in ``ordinal`` or ``nominal`` are continuous; an ordinal column
    maps to its category order, lowest first (None: numeric order of its values, else text
    order); columns named nowhere are non-confidential and pass through. Every name must be a
    column of the table and may have one role only.
    """
    cols = [str(c) for c in columns]
    known = set(cols)
    ordinal = dict(ordinal or {})
    qi_list, id_list, conf_list, nom_list = (
        list(qi),
        list(identifiers),
        list(confidential),
        list(nominal),
    )

    def check(names: Iterable[str], option: str) -> None:
        for name in names:
            if name not in known:
                # repr: a name may hold quotes, commas or a line break; the message stays one line
                shown = ", ".join(map(repr, cols[:12])) + (", …" if len(cols) > 12 else "")
                hint = (
                    r"; write a comma inside a column name as \, (--qi 'a\,b')"
                    if any("," in c for c in cols)
                    else "; check the spelling (names are case-sensitive)"
                )
                raise InvalidRoles(
                    f"{option} names column {name!r}, which is not in the table (columns: {shown})"
                    + hint
                )

    check(qi_list, "--qi")
    check(id_list, "--identifiers")
    check(conf_list, "--confidential")
    check(ordinal, "--ordinal")
    check(nom_list, "--nominal")
    if not qi_list:
        raise InvalidRoles("no quasi-identifier given; name at least one column with --qi")
    for name in list(ordinal) + nom_list:
        if name not in qi_list:
            raise InvalidRoles(
                f"{name!r} is given a kind (--ordinal/--nominal) but is not a quasi-identifier; add it to --qi"
            )
    both = set(ordinal) & set(nom_list)
    if both:
        raise InvalidRoles(
            f"column {sorted(both)[0]!r} is given as both ordinal and nominal; choose one"
        )
    seen: dict[str, str] = {}
    for option, names in (
        ("--qi", qi_list),
        ("--identifiers", id_list),
        ("--confidential", conf_list),
    ):
        for name in names:
            if name in seen and seen[name] != option:
                raise InvalidRoles(
                    f"column {name!r} is named by both {seen[name]} and {option}; give it one role"
                )
            seen[name] = option
    specs: dict[str, ColumnSpec] = {}
    for col in cols:
        if col in ordinal:
            order = ordinal[col]
            specs[col] = ColumnSpec(
                AttributeRole.QUASI_IDENTIFIER,
                AttributeKind.ORDINAL,
                tuple(str(v) for v in order) if order is not None else None,
            )
        elif col in nom_list:
            specs[col] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
        elif col in qi_list:
            specs[col] = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        elif col in id_list:
            specs[col] = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)
        elif col in conf_list:
            specs[col] = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
        else:
            specs[col] = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
    return RoleMap.from_dict(specs)
