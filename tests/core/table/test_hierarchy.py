"""Generalization hierarchies: the ARX file format, validation errors, automatic hierarchies.

Fixtures: the reconstructed Figure 1 hierarchies of ``004_0ca91c7afa3e094f.txt``
(``seed-examples/mstk_hierarchy_*.csv``), ARX's Adult hierarchies and its small examples
(``arx-small``, CRLF, a top level that is not ``*``, a 10,000-row ZIP hierarchy, a dirty table).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import ADULT_DIR as ADULT
from reference_sets import ARX_SMALL
from reference_sets import SEED_EXAMPLES as SEED

from microgui.core.errors import InvalidInput
from microgui.core.table.hierarchy import (
    Hierarchy,
    automatic_hierarchy,
    build_hierarchy,
    load_hierarchy,
    value_key,
)
from microgui.core.table.roles import AttributeKind

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared reference data not available ({path.name})")
    return path


def _write(tmp_path: Path, text: str | bytes, name: str = "h.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


# --------------------------------------------------------------------------------------------
# the files of the project
# --------------------------------------------------------------------------------------------


@pytest.mark.shared
def test_paper_hierarchies() -> None:
    age = load_hierarchy(_need(SEED / "mstk_hierarchy_age.csv"))
    sex = load_hierarchy(_need(SEED / "mstk_hierarchy_sex.csv"))
    zipcode = load_hierarchy(_need(SEED / "mstk_hierarchy_zipcode.csv"))
    assert (age.height, sex.height, zipcode.height) == (3, 1, 3)
    assert age.values == ("21", "26", "33", "37", "45", "48", "50")
    assert age.generalizations["26"] == ("[20-30]", "[20-40]", "*")
    assert zipcode.generalizations["13051"] == ("1305*", "130**", "*****")
    assert sex.root == "Person" and not sex.added_root
    assert age.levels[1] == ("[20-30]", "[31-40]", "[41-50]")
    assert age.leaf_counts[(1, "[41-50]")] == 3
    assert age.leaf_counts[(2, "[20-40]")] == 4
    assert age.leaf_counts[(3, "*")] == 7
    assert age.lowest_common_generalization(["21", "26"]) == "[20-30]"
    assert age.lowest_common_generalization([21, 33]) == "[20-40]"
    assert age.lowest_common_generalization([21.0]) == "21"
    assert zipcode.lowest_common_generalization(["14851", "14856", "14865"]) == "148**"
    assert sex.lowest_common_generalization(["M", "F"]) == "Person"
    assert "26" in age and 26 in age and "27" not in age
    assert age.description.startswith("file mstk_hierarchy_age.csv (height 3")
    assert age.to_rows()[0] == "21;[20-30];[20-40];*"


ADULT_HEIGHTS = {
    "age": 4,
    "education": 3,
    "marital-status": 2,
    "native-country": 2,
    "occupation": 2,
    "race": 1,
    "salary-class": 1,
    "sex": 1,
    "workclass": 2,
}


@pytest.mark.shared
def test_adult_hierarchies_cover_the_data() -> None:
    frame = pd.read_csv(_need(ADULT / "adult.csv"), sep=";", dtype=str)
    for column, height in ADULT_HEIGHTS.items():
        h = load_hierarchy(ADULT / f"adult_hierarchy_{column}.csv")
        assert h.height == height, column
        assert h.root == "*" and not h.added_root
        codes = h.encode(frame[column].tolist(), column)
        assert len(codes) == len(frame)
        assert [h.values[c] for c in codes[:3]] == frame[column].tolist()[:3]
    age = load_hierarchy(ADULT / "adult_hierarchy_age.csv")
    assert len(age) == 100
    # labels are opaque: the README's quirk (20 -> 15-19) is kept as written
    assert age.generalizations["20"] == ("15-19", "10-19", "0-19", "*")
    country = load_hierarchy(ADULT / "adult_hierarchy_native-country.csv")  # no final newline
    assert len(country) == 41


@pytest.mark.shared
def test_arx_small_hierarchies() -> None:
    disease = load_hierarchy(_need(ARX_SMALL / "test2_hierarchy_Disease.csv"))
    assert disease.height == 3
    assert disease.root == "respiratory&digestive disease" and not disease.added_root
    assert disease.lowest_common_generalization(["flu", "bronchitis"]) == "respiratory infection"
    age = load_hierarchy(ARX_SMALL / "test2_hierarchy_Age.csv")
    assert age.generalizations["22"] == ("[20,30[", "*")  # commas inside ';'-separated labels
    zipcode = load_hierarchy(ARX_SMALL / "test_hierarchy_zipcode.csv")
    assert len(zipcode) == 10_000 and zipcode.height == 5
    assert zipcode.generalizations["81667"] == ("8166*", "816**", "81***", "8****", "*")
    data = pd.read_csv(ARX_SMALL / "test.csv", sep=";", dtype=str)
    for column in ("age", "gender", "zipcode"):
        load_hierarchy(ARX_SMALL / f"test_hierarchy_{column}.csv").encode(data[column], column)


@pytest.mark.shared
def test_dirty_values_are_named() -> None:
    age = load_hierarchy(_need(ARX_SMALL / "test_hierarchy_age.csv"))
    dirty = pd.read_csv(ARX_SMALL / "test_dirty.csv", sep=";", dtype=str)
    with pytest.raises(InvalidInput) as err:
        age.encode(dirty["age"].tolist(), "age")
    msg = str(err.value)
    assert "'age'" in msg and "'4e'" in msg and "row 2" in msg
    assert "test_hierarchy_age.csv" in msg and "2 value(s) missing in 2 row(s)" in msg
    assert "add a row" in msg


# --------------------------------------------------------------------------------------------
# malformed files
# --------------------------------------------------------------------------------------------


def test_crlf_bom_blank_lines_and_spaces(tmp_path: Path) -> None:
    text = "\ufeffa ; X;*\r\n\r\nb;X ;*\r\nc;Y;*"
    h = load_hierarchy(_write(tmp_path, text))
    assert h.values == ("a", "b", "c")
    assert h.generalizations["a"] == ("X", "*")
    assert h.height == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "is empty"),
        ("\n\n  \n", "is empty"),
        ("a\nb\n", "single column"),
        ("a;X;*\nb;*\n", "line 2: 2 cell(s) where line 1 has 3"),
        ("a;X;*\nb;;*\n", "line 2: cell 2 is empty"),
        (
            "a;X;*\nb;X;*\na;Y;*\n",
            "line 3: value 'a' is listed again with different generalizations",
        ),
        ("a;X;*\nb;X;Z\n", "line 2: 'X' (level 1) generalizes to 'Z' here but to '*' on line 1"),
        ("a;X;*\n\nb;Y;*\nc;X;Q\n", "line 4: 'X' (level 1)"),
    ],
)
def test_malformed_files(tmp_path: Path, text: str, needle: str) -> None:
    path = _write(tmp_path, text, "bad.csv")
    with pytest.raises(InvalidInput) as err:
        load_hierarchy(path)
    assert "bad.csv" in str(err.value)
    assert needle in str(err.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not found"):
        load_hierarchy(tmp_path / "nope.csv")
    with pytest.raises(InvalidInput, match="is a folder"):
        load_hierarchy(tmp_path)
    with pytest.raises(InvalidInput, match="not a text file"):
        load_hierarchy(_write(tmp_path, b"a;\x00;b\n", "bin.csv"))


def test_trailing_separator_on_every_row(tmp_path: Path) -> None:
    h = load_hierarchy(_write(tmp_path, "a;X;*;\nb;X;*;\n"))
    assert h.height == 2 and h.generalizations["b"] == ("X", "*")
    with pytest.raises(InvalidInput, match="line 2: cell 4 is empty"):
        load_hierarchy(_write(tmp_path, "a;X;*;Q\nb;X;*;\n", "bad.csv"))


def test_identical_repeated_rows_are_kept_once(tmp_path: Path) -> None:
    h = load_hierarchy(_write(tmp_path, "a;X;*\na;X;*\nb;X;*\n"))
    assert h.values == ("a", "b")


def test_same_label_on_two_levels(tmp_path: Path) -> None:
    h = load_hierarchy(_write(tmp_path, "Male;Male;*\nFemale;Female;*\n"))
    assert h.lowest_common_generalization(["Male", "Male"]) == "Male"
    assert h.lowest_common_generalization(["Male", "Female"]) == "*"
    assert h.leaf_counts[(1, "Male")] == 1


def test_several_top_labels_get_a_root(tmp_path: Path) -> None:
    h = load_hierarchy(_write(tmp_path, "a;X\nb;X\nc;Y\n"))
    assert h.added_root and h.height == 2 and h.root == "*"
    assert h.lowest_common_generalization(["a", "c"]) == "*"
    assert "root '*' added" in h.description
    h2 = load_hierarchy(_write(tmp_path, "a;*\nb;Y\n", "star.csv"))
    assert h2.root == "**"  # '*' is already a label of the last column


def test_other_delimiters_when_no_semicolon(tmp_path: Path) -> None:
    assert load_hierarchy(_write(tmp_path, "a\tX\tall\nb\tX\tall\n")).height == 2
    assert load_hierarchy(_write(tmp_path, "a,X,all\nb,Y,all\n", "c.csv")).height == 2


def test_latin1_file(tmp_path: Path) -> None:
    h = load_hierarchy(_write(tmp_path, "Gen\xe8ve;CH;*\nZ\xfcrich;CH;*\n".encode("cp1252")))
    assert h.values == ("Genève", "Zürich")


def test_encode_matches_numbers_and_text() -> None:
    h = Hierarchy.from_rows([("21", "[20-29]", "*"), ("21.5", "[20-29]", "*"), ("x", "o", "*")])
    assert h.encode([21, 21.0, "21", " 21 ", np.int64(21), "21.50", 21.5, "x"]).tolist() == [
        0,
        0,
        0,
        0,
        0,
        1,
        1,
        2,
    ]
    assert value_key(3.0) == "3" and value_key(np.float64(2.5)) == "2.5" and value_key(" a ") == "a"
    with pytest.raises(InvalidInput, match=r"column 'v' holds '22' \(row 2\)"):
        h.encode(["21", "22", "23", "22"], "v")


def test_numeric_span_and_leaf_counts() -> None:
    h = Hierarchy.from_rows([("1", "A", "*"), ("5", "A", "*"), ("9", "B", "*")])
    span = h.node_numeric_span
    assert span is not None
    labels = h.node_labels
    assert span[labels.index("A")].tolist() == [1.0, 5.0]
    assert span[labels.index("*")].tolist() == [1.0, 9.0]
    assert h.node_leaf_counts[labels.index("A")] == 2
    assert Hierarchy.from_rows([("a", "*"), ("1", "*")]).node_numeric_span is None


# --------------------------------------------------------------------------------------------
# automatic hierarchies
# --------------------------------------------------------------------------------------------


def test_masking_reproduces_the_paper_zip_hierarchy() -> None:
    zips = ["13051", "13053", "13063", "13068", "14851", "14856", "14865"]
    h = build_hierarchy(zips, "masking")
    assert h.to_rows() == [
        "13051;1305*;130**;*****",
        "13053;1305*;130**;*****",
        "13063;1306*;130**;*****",
        "13068;1306*;130**;*****",
        "14851;1485*;148**;*****",
        "14856;1485*;148**;*****",
        "14865;1486*;148**;*****",
    ]
    with pytest.raises(InvalidInput, match="one length"):
        build_hierarchy(["123", "1234"], "masking")


def test_intervals_in_the_paper_style() -> None:
    h = build_hierarchy([21, 26, 33, 37, 45, 48, 50], "intervals", base_width=10)
    assert h.to_rows() == [
        "21;[20-29];[20-39];*",
        "26;[20-29];[20-39];*",
        "33;[30-39];[20-39];*",
        "37;[30-39];[20-39];*",
        "45;[40-49];[40-59];*",
        "48;[40-49];[40-59];*",
        "50;[50-59];[40-59];*",
    ]
    assert "width 10" in h.description
    decimals = build_hierarchy([0.1, 0.25, 0.3, 0.9, 1.7], "intervals", base_width=0.5)
    assert decimals.generalizations["0.25"][0] == "[0-0.5)"
    assert decimals.generalizations["0.9"][0] == "[0.5-1)"
    negative = build_hierarchy([-15, -12, -3, -1, 4, 12], "intervals", base_width=10)
    assert negative.generalizations["-15"][0] == "[-20--11]"
    assert negative.generalizations["-3"][0] == "[-10--1]"
    with pytest.raises(InvalidInput, match="need numbers"):
        build_hierarchy([1, "x"], "intervals")
    with pytest.raises(InvalidInput, match="must be > 0"):
        build_hierarchy([1, 2], "intervals", base_width=0)


def test_default_width_is_round() -> None:
    rng = np.random.default_rng(5)
    h = build_hierarchy(rng.integers(17, 91, 3000).tolist(), "intervals")
    width = int(re.search(r"width (\d+)", h.description).group(1))  # type: ignore[union-attr]
    assert width in (1, 2, 5, 10, 20)
    skewed = np.round(rng.lognormal(10, 1.5, 1000))
    hs = build_hierarchy(skewed.tolist(), "intervals")
    assert hs.height >= 4  # the bulk near 0 still gets several levels


def test_ordered_flat_and_constant() -> None:
    h = build_hierarchy(["a", "b", "c", "d", "e"], "ordered")
    assert h.generalizations["a"] == ("[a-b]", "[a-d]", "*")
    assert h.generalizations["e"][-1] == "*"
    assert h.lowest_common_generalization(["b", "c"]) == "[a-d]"
    flat = build_hierarchy(["x", "y", "x"], "flat")
    assert flat.to_rows() == ["x;*", "y;*"]
    const = build_hierarchy([7, 7.0, "7"], "intervals")
    assert const.to_rows() == ["7;*"]
    with pytest.raises(ValueError, match="unknown hierarchy kind"):
        build_hierarchy(["a", "b"], "nope")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="without values"):
        build_hierarchy([], "flat")


def test_automatic_choices() -> None:
    cont = automatic_hierarchy([1.5, 2.5, 10.0, 30.0], AttributeKind.CONTINUOUS)
    assert "intervals" in cont.description
    ordinal = automatic_hierarchy(["mid", "low"], AttributeKind.ORDINAL, ["low", "mid", "high"])
    assert ordinal.values == ("low", "mid", "high")
    zips = automatic_hierarchy(["08001", "08002", "17001"], AttributeKind.NOMINAL)
    assert zips.generalizations["08001"][-1] == "*****"
    names = automatic_hierarchy(["red", "green"], AttributeKind.NOMINAL)
    assert names.to_rows() == ["red;*", "green;*"]
    short = automatic_hierarchy(["1", "2", "3"], AttributeKind.NOMINAL)
    assert short.height == 1  # one-digit codes are not masked


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------


def _check_tree(h: Hierarchy) -> None:
    assert len({p[-1] for p in h.paths}) == 1
    assert len({len(p) for p in h.paths}) == 1
    parent: dict[tuple[int, str], str] = {}
    for p in h.paths:
        for level in range(h.height):
            assert parent.setdefault((level, p[level]), p[level + 1]) == p[level + 1]
    # every level groups: fewer nodes than the level below (the root level excepted)
    counts = [len(level) for level in h.levels]
    assert all(a > b for a, b in zip(counts, counts[1:], strict=False)) or counts[0] == 1


@HYPO
@given(
    st.lists(st.integers(-500, 5000), min_size=1, max_size=80),
    st.sampled_from([None, 1, 3, 10, 250]),
)
def test_intervals_property(values: list[int], base: int | None) -> None:
    h = build_hierarchy(values, "intervals", base_width=base)
    _check_tree(h)
    codes = h.encode(values)
    assert [float(h.values[c]) for c in codes] == [float(v) for v in values]
    for value in set(values):
        for label in h.generalizations[value_key(float(value))][:-1]:
            lo, hi = (int(x) for x in re.fullmatch(r"\[(-?\d+)-(-?\d+)\]", label).groups())  # type: ignore[union-attr]
            assert lo <= value <= hi


@HYPO
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), min_size=1, max_size=60)
)
def test_decimal_intervals_property(values: list[float]) -> None:
    h = build_hierarchy(values, "intervals")
    _check_tree(h)
    assert len(h.encode(values)) == len(values)


@HYPO
@given(st.lists(st.text("0123456789", min_size=4, max_size=4), min_size=1, max_size=60))
def test_masking_property(codes: list[str]) -> None:
    h = build_hierarchy(codes, "masking")
    _check_tree(h)
    for code in set(codes):
        for label in h.generalizations[code]:
            stem = label.rstrip("*")
            assert code.startswith(stem) and len(label) == 4


def test_tiny_span_around_zero_does_not_overflow() -> None:
    # hypothesis found it: intervals doubled ~650 times (int64 overflow) because a negative and
    # a non-negative bin never merge under floor division
    h = build_hierarchy([0.0, -1.3161637181219143e-195], "intervals")
    _check_tree(h)
    assert len(h.encode([0.0, -1.3161637181219143e-195])) == 2
