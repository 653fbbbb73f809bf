"""Orders of ordinal categories from a hierarchy, the codes or pasted text
(:mod:`microgui.core.table.ordering`; issue 30)."""

from __future__ import annotations

import pytest

from microgui.core.errors import MicroguiError
from microgui.core.table.hierarchy import Hierarchy
from microgui.core.table.ordering import (
    hierarchy_groups_split,
    order_from_codes,
    order_from_hierarchy,
    parse_order_text,
)

EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th"]


def test_order_from_the_hierarchy_leaves() -> None:
    rows = [[c, "school", "*"] for c in EDUCATION]
    hierarchy = Hierarchy.from_rows(rows, "education.csv")
    shuffled = sorted(EDUCATION)  # the alphabetical start the order editor had
    assert shuffled != EDUCATION
    assert order_from_hierarchy(shuffled, hierarchy) == EDUCATION
    with pytest.raises(MicroguiError, match="no leaf for 1 category: 'Doctorate'"):
        order_from_hierarchy([*shuffled, "Doctorate"], hierarchy)


# a hierarchy file listed in no rank order, as ARX's Adult education file is (issue 30)
UNRANKED_ROWS = [
    ["Bachelors", "Undergraduate", "Higher", "*"],
    ["11th", "High School", "Secondary", "*"],
    ["Masters", "Graduate", "Higher", "*"],
    ["9th", "High School", "Secondary", "*"],
    ["Preschool", "Primary School", "Primary", "*"],
]


def test_hierarchy_groups_split_names_groups_the_order_breaks() -> None:
    hierarchy = Hierarchy.from_rows(UNRANKED_ROWS, "education.csv")
    file_order = order_from_hierarchy(
        ["9th", "Preschool", "Masters", "11th", "Bachelors"], hierarchy
    )
    assert file_order == ["Bachelors", "11th", "Masters", "9th", "Preschool"]
    assert hierarchy_groups_split(file_order, hierarchy) == ["High School", "Higher", "Secondary"]
    ranked = ["Preschool", "9th", "11th", "Bachelors", "Masters"]
    assert hierarchy_groups_split(ranked, hierarchy) == []
    ranked_groups = Hierarchy.from_rows([[c, "school", "*"] for c in EDUCATION], "edu.csv")
    assert hierarchy_groups_split(EDUCATION, ranked_groups) == []
    assert hierarchy_groups_split(["9th", "Masters", "11th", "Doctorate"], hierarchy) == [
        "High School",
        "Secondary",
    ]  # a category the hierarchy does not hold is ignored


def test_order_from_codes_numeric_and_leading_numbers() -> None:
    assert order_from_codes(["10", "2", "1", "3.5"]) == ["1", "2", "3.5", "10"]
    grades = EDUCATION[1:]
    assert order_from_codes(sorted(grades)) == grades  # "10th" after "9th", not after "1st-4th"
    with pytest.raises(MicroguiError, match="'Preschool'"):
        order_from_codes(EDUCATION)


def test_parse_pasted_order_lines_commas_and_errors() -> None:
    cats = ["low", "mid", "high"]
    assert parse_order_text("low\n mid \n\nhigh\n", sorted(cats)) == cats
    assert parse_order_text("low, mid, high", sorted(cats)) == cats
    assert parse_order_text("a, b\nc", ["c", "a, b"]) == ["a, b", "c"]  # a comma inside, by lines
    with pytest.raises(MicroguiError) as info:
        parse_order_text("low, medium, low", cats)
    text = str(info.value)
    assert "not a category of the column: 'medium'" in text
    assert "given more than once: 'low'" in text
    assert "missing: 'mid', 'high'" in text
