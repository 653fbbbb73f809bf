"""Global recoding and top/bottom coding (:mod:`microgui.core.methods.recode`), after sdcMicro's
``globalRecode`` (R/globalRecode.R, ``globalRecodeWORK``), ``groupAndRename``
(R/groupAndRename.R) and ``topBotCoding`` (R/topBotCoding.R, ``topBotCodingWORK``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.methods.recode import (
    read_mapping,
    recode_intervals,
    recode_level,
    recode_mapping,
    top_bottom_code,
)
from microgui.core.table.hierarchy import Hierarchy
from microgui.core.table.roles import AttributeKind


def test_intervals_left_closed_last_closed() -> None:
    """[a, b) intervals, the last closed on both ends: 25 is in [25, 30), 30 in [25, 30]."""
    s = pd.Series([20, 24, 25, 30, None], name="age")
    r = recode_intervals(s, [20, 25, 30])
    assert r.values.tolist() == ["[20, 25)", "[20, 25)", "[25, 30]", "[25, 30]", None]
    assert r.changed == 4 and r.before == 4 and r.after == 2
    assert r.kind is AttributeKind.ORDINAL and r.order == ("[20, 25)", "[25, 30]")


def test_intervals_open_ends_and_outside_refused_by_count() -> None:
    s = pd.Series([1.5, 7, 12, 99])
    r = recode_intervals(s, ["-inf", 5, 10, "inf"])
    assert r.values.tolist() == ["[-inf, 5)", "[5, 10)", "[10, inf)", "[10, inf)"]
    with pytest.raises(InvalidInput) as err:
        recode_intervals(pd.Series([1, 2, 50, 60, 61]), [2, 50])
    msg = str(err.value)
    assert "1 value(s) below" in msg and "2 above" in msg
    assert "60" not in msg and "61" not in msg  # counts, never a value


def test_intervals_bad_breaks_refused() -> None:
    s = pd.Series([1, 2, 3])
    for breaks in ([1], [3, 2, 1], [1, 1, 2], ["a", 2]):
        with pytest.raises(InvalidParameter):
            recode_intervals(s, breaks)
    with pytest.raises(InvalidParameter):
        recode_intervals(s, bins=0)
    with pytest.raises(InvalidInput, match="not numbers"):
        recode_intervals(pd.Series(["1", "x"]), [0, 5])


def test_equal_frequency_bins() -> None:
    """sdcMicro's method="equalAmount": breaks at the quantiles; each bin near n/bins records."""
    s = pd.Series(np.arange(100))
    r = recode_intervals(s, bins=4)
    counts = r.values.value_counts()
    assert len(counts) == 4 and counts.min() == 25 and counts.max() == 25
    ties = recode_intervals(pd.Series([1] * 90 + list(range(2, 12))), bins=5)
    assert 1 <= ties.after <= 5  # tied breaks merge (sdcMicro jitters them)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(-50, 150)), min_size=1, max_size=60),
    st.integers(1, 8),
)
def test_every_value_recoded(values: list[int | None], bins: int) -> None:
    """Property: every non-missing value gets exactly the interval that holds it; missing stays
    missing; the changed count is every non-missing cell (a number never equals its label)."""
    s = pd.Series(values, dtype="float")
    if s.notna().sum() == 0:
        return
    r = recode_intervals(s, ["-inf", 0, 18, 65, "inf"])
    for x, label in zip(s, r.values, strict=True):
        if pd.isna(x):
            assert label is None
            continue
        low, high = label[1:-1].split(", ")
        assert float(low) <= x and (x < float(high) or label.endswith("]"))
    assert r.changed == int(s.notna().sum())
    eq = recode_intervals(s, bins=bins)
    assert eq.values.isna().tolist() == s.isna().tolist()
    assert set(eq.values.dropna()) <= set(eq.order or ())


def test_mapping_maps_every_value_and_refuses_unmapped_by_count(tmp_path: Path) -> None:
    s = pd.Series(["north", "south", "east", "east", None, 3.0])
    mapping = {"north": "N", "south": "S", "east": "E", "3": "three"}
    r = recode_mapping(s, mapping)
    assert r.values.tolist() == ["N", "S", "E", "E", None, "three"]
    assert r.changed == 5 and r.kind is AttributeKind.NOMINAL
    secret = pd.Series(["north", "Zanzibar-7", "Zanzibar-7", "Q-99"])
    with pytest.raises(InvalidInput) as err:
        recode_mapping(secret, mapping, column="region")
    msg = str(err.value)
    assert "2 distinct value(s) in 3 row(s)" in msg and "'region'" in msg
    assert "Zanzibar" not in msg and "Q-99" not in msg


def test_mapping_files(tmp_path: Path) -> None:
    csv_file = tmp_path / "m.csv"
    csv_file.write_text("from,to\nnorth,N\nsouth,S\n", encoding="utf-8")
    assert read_mapping(csv_file) == {"north": "N", "south": "S"}
    json_file = tmp_path / "m.json"
    json_file.write_text(json.dumps({"1": "low", "2": "low", "3": "high"}), encoding="utf-8")
    assert read_mapping(json_file) == {"1": "low", "2": "low", "3": "high"}
    dup = tmp_path / "dup.csv"
    dup.write_text("north,N\nsecret-value,S\nsecret-value,T\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as err:
        read_mapping(dup)
    assert "1 value(s) more than once (first at line 3)" in str(err.value)
    assert "secret" not in str(err.value)
    dup_json = tmp_path / "dup.json"
    dup_json.write_text('{"a": "x", "a": "y"}', encoding="utf-8")
    with pytest.raises(InvalidInput, match="more than once"):
        read_mapping(dup_json)
    three = tmp_path / "three.csv"
    three.write_text("a,b,c\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="line 1 has 3 cell"):
        read_mapping(three)
    with pytest.raises(InvalidInput, match="folder"):
        read_mapping(tmp_path)


def test_hierarchy_level_is_homogeneous() -> None:
    """One level for the whole column (004 §4, Def. 1): the released labels are all of that
    level, so the column tabulates (unlike mstk's local mixing of levels)."""
    h = Hierarchy.from_rows(
        [["21", "[20-29]", "*"], ["25", "[20-29]", "*"], ["33", "[30-39]", "*"]], "age"
    )
    s = pd.Series([21, 25, 33, 33.0, None])
    r = recode_level(s, h, 1)
    assert r.values.tolist() == ["[20-29]", "[20-29]", "[30-39]", "[30-39]", None]
    assert set(r.values.dropna()) <= set(h.levels[1])
    assert recode_level(s, h, 2).values.dropna().unique().tolist() == ["*"]
    assert recode_level(s, h, 0).changed == 0
    with pytest.raises(InvalidParameter, match="outside"):
        recode_level(s, h, 3)
    with pytest.raises(InvalidInput) as err:
        recode_level(pd.Series([21, 99, 98]), h, 1)
    assert "2 distinct value(s) in 2 row(s)" in str(err.value) and "99" not in str(err.value)


def test_top_bottom_coding() -> None:
    """topBotCodingWORK: x[x > value] <- replacement (top), x[x < value] (bottom)."""
    s = pd.Series([1, 5, 60, 61, 99], name="hours")
    r = top_bottom_code(s, top=60)
    assert r.values.tolist() == [1, 5, 60, 60, 60] and r.changed == 2
    assert r.values.dtype == s.dtype and r.kind is AttributeKind.CONTINUOUS
    both = top_bottom_code(s, top=60, bottom=5, bottom_value=4)
    assert both.values.tolist() == [4, 5, 60, 60, 60] and both.changed == 3
    label = top_bottom_code(pd.Series([1.0, 5, 61, None]), top=60, top_value="60+")
    assert label.values.tolist() == ["1", "5", "60+", None]
    assert label.kind is AttributeKind.ORDINAL and label.order == ("1", "5", "60+")
    with pytest.raises(InvalidParameter):
        top_bottom_code(s)
    with pytest.raises(InvalidParameter, match="above top"):
        top_bottom_code(s, top=5, bottom=60)
    with pytest.raises(InvalidInput, match="1 cell"):
        top_bottom_code(pd.Series(["1", "x"]), top=1)
