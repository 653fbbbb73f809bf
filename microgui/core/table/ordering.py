"""Orders of an ordinal column's categories from what the user already has: an attached
hierarchy (its leaf order), the categories' own codes, or a pasted list (issue 30: ordering 16
education categories by hand took 48 clicks).

Every function returns the column's categories, each exactly once, lowest first, or raises
:class:`~microgui.core.errors.MicroguiError` naming the categories it cannot place. The order
is then set like a hand-made one (``RoleMap`` ordinal ``order``; Domingo-Ferrer & Torra 2005,
ordinal attributes are ranked by this order before microaggregation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from microgui.core.errors import MicroguiError
from microgui.core.table.hierarchy import Hierarchy, value_key

__all__ = ["order_from_hierarchy", "hierarchy_groups_split", "order_from_codes", "parse_order_text"]

#: a category starting with a number: "1st-4th", "10th", "5-9 years", "3. secondary"
_LEADING_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)")


def _named(values: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    more = len(values) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def order_from_hierarchy(categories: Sequence[str], hierarchy: Hierarchy) -> list[str]:
    """``categories`` in the order of the hierarchy's leaves (its file order, level 0); a
    category the hierarchy does not hold is refused, naming it."""
    rank = {value_key(leaf): i for i, leaf in enumerate(hierarchy.values)}
    missing = [c for c in categories if value_key(c) not in rank]
    if missing:
        raise MicroguiError(
            f"the hierarchy has no leaf for {len(missing)} categor"
            f"{'y' if len(missing) == 1 else 'ies'}: {_named(missing)}"
        )
    return sorted(categories, key=lambda c: rank[value_key(c)])


def hierarchy_groups_split(order: Sequence[str], hierarchy: Hierarchy) -> list[str]:
    """The hierarchy's groups (labels of levels 1 and up, below the root) whose values are not
    next to each other in ``order``, lowest level first, each once.

    A hierarchy file need not list its values in rank order (ARX's Adult education file puts
    ``Bachelors`` first and ``Preschool`` last), so its leaf order is only a ranking when every
    group of values it defines is a run of consecutive categories; a split group tells the user
    that the file order is not one (issue 30). Categories the hierarchy does not hold are
    ignored.
    """
    position = {value_key(c): i for i, c in enumerate(order)}
    members: dict[tuple[int, str], list[int]] = {}
    for path in hierarchy.paths:
        at = position.get(value_key(path[0]))
        if at is None:
            continue
        for level, label in enumerate(path[1:-1], start=1):
            members.setdefault((level, label), []).append(at)
    split = []
    for (_, label), places in sorted(members.items(), key=lambda item: item[0][0]):
        if max(places) - min(places) + 1 != len(places) and label not in split:
            split.append(label)
    return split


def order_from_codes(categories: Sequence[str]) -> list[str]:
    """``categories`` by their numeric codes ("1" < "2" < "10"), or, when each starts with a
    number ("1st-4th", "5th-6th", "10th"), by that number (natural order; ties keep the text
    order). Refused, naming them, when some categories have no leading number."""
    keys: dict[str, float] = {}
    without = []
    for category in categories:
        match = _LEADING_NUMBER.match(str(category))
        if match is None:
            without.append(category)
        else:
            keys[category] = float(match.group(1))
    if without:
        raise MicroguiError(
            f"no numeric code at the start of {len(without)} categor"
            f"{'y' if len(without) == 1 else 'ies'}: {_named(without)}; "
            "order them from a hierarchy or paste the order"
        )
    return sorted(categories, key=lambda c: (keys[c], str(c)))


def parse_order_text(text: str, categories: Sequence[str]) -> list[str]:
    """The order pasted as text: one category a line, or comma-separated on one line (a
    category holding a comma is pasted one a line). Every category of the column must appear
    exactly once; unknown, repeated and missing ones are named."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    known = {str(c) for c in categories}
    if len(lines) == 1 and lines[0] not in known and "," in lines[0]:
        lines = [part.strip() for part in lines[0].split(",") if part.strip()]
    unknown = [v for v in lines if v not in known]
    seen: set[str] = set()
    repeated = []
    for value in lines:
        if value in seen and value not in repeated:
            repeated.append(value)
        seen.add(value)
    missing = [str(c) for c in categories if str(c) not in seen]
    problems = []
    if unknown:
        problems.append(f"not a category of the column: {_named(unknown)}")
    if repeated:
        problems.append(f"given more than once: {_named(repeated)}")
    if missing:
        problems.append(f"missing: {_named(missing)}")
    if problems:
        raise MicroguiError("; ".join(problems))
    return lines
