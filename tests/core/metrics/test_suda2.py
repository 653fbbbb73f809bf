"""SUDA2 (:mod:`microgui.core.metrics.suda2`): the MSU definition, sdcMicro's ``suda2`` numbers.

The sdcMicro numbers (``data/suda2/*.json`` and the ones typed in below) were produced by
sdcMicro's own C++ (``src/Suda2.h``) and R scoring (``R/suda2.R``), commit cf32510 (5.8.1), under
R 4.2.2, ``DisFraction = 0.01``, ``original_scores = TRUE`` (``data/suda2/README.md``).
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.suda2 import minimal_sample_uniques, suda2
from microgui.core.progress import RunCancelled

DATA = Path(__file__).parent / "data" / "suda2"

#: sdcMicro's ``francdat`` (8 records; ``data(francdat)``, CASC deliverable 1.2-D1), key columns.
FRANCDAT = pd.DataFrame(
    {
        "Key1": [1, 1, 1, 3, 4, 4, 6, 1],
        "Key2": [2, 2, 2, 3, 3, 3, 2, 2],
        "Key3": [5, 1, 1, 1, 1, 1, 1, 5],
        "Key4": [1, 1, 1, 5, 4, 1, 5, 1],
    }
)


def _reference(name: str) -> dict:
    with open(DATA / f"{name}.json", encoding="utf-8") as f:
        return json.load(f)


def _full(ref: dict, column: str) -> np.ndarray:
    out = np.zeros(ref["n_records"])
    out[ref["nonzero"]["row"]] = ref["nonzero"][column]
    return out


def _assert_equals_sdcmicro(result, ref: dict) -> None:
    """Scores exactly; DIS scores and contributions to 1e-12 relative (bit-equal on the machine
    they were made on; another libm's ``pow`` may differ in the last bit)."""
    np.testing.assert_array_equal(result.score, _full(ref, "score"))
    np.testing.assert_allclose(result.dis_score, _full(ref, "dis_score"), rtol=1e-12, atol=0)
    assert list(result.contributions) == list(ref["contributions"])
    for key, value in ref["contributions"].items():
        assert result.contributions[key] == pytest.approx(value, rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------------------------
# sdcMicro's numbers without ../shared
# --------------------------------------------------------------------------------------------


def test_francdat_typed_in_equals_sdcmicro() -> None:
    ref = _reference("francdat_k4")
    result = suda2(FRANCDAT, ["Key1", "Key2", "Key3", "Key4"])
    _assert_equals_sdcmicro(result, ref)
    assert result.max_size == 4 and result.dis_fraction == 0.01
    assert result.keys == ("Key1", "Key2", "Key3", "Key4")
    # DisFraction = 0.1 changes only the DIS scores (sdcMicro, R 4.2.2)
    tenth = suda2(FRANCDAT, ["Key1", "Key2", "Key3", "Key4"], dis_fraction=0.1)
    np.testing.assert_array_equal(tenth.score, result.score)
    np.testing.assert_allclose(
        tenth.dis_score,
        [0, 0, 0, 0.13689132045766222, 0.10096284487344041, 0.06457763957230428]
        + [0.13689132045766222, 0],
        rtol=1e-12,
        atol=0,
    )


def test_published_examples_equal_sdcmicro() -> None:
    """Templ (2017) book example and the SDC guidelines' table (sdcMicro tests/test_suda2.R); the
    text columns coded as R factors. Scores and DIS scores from sdcMicro (R 4.2.2)."""
    book = pd.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+", "50k+"] + ["50k-"] * 6,
            "education": ["highschool"] * 4
            + ["university", "highschool", "middleschool", "university"],
        }
    )
    result = suda2(book, list(book.columns))
    np.testing.assert_array_equal(result.score, [0, 0, 0, 0, 4, 2, 6, 8])
    np.testing.assert_allclose(
        result.dis_score[4:],
        [0.010859095209110119, 0.0047558604060030348, 0.017545170385026562, 0.024601057080283095],
        rtol=1e-12,
    )
    assert result.contributions == pytest.approx(
        {"age": 40.0, "gender": 30.0, "income": 0.0, "education": 70.0}
    )
    guideline = pd.DataFrame(
        {
            "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
            "Gender": ["Female"] * 3
            + ["Male", "Female", "Male", "Female", "Male"]
            + ["Female"] * 2,
            "Education": ["Secondary incomplete"] * 2
            + ["Primary incomplete"]
            + ["Secondary complete"] * 3
            + ["Primary complete", "Post-secondary"]
            + ["Secondary incomplete"] * 2,
            "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed"]
            + ["Non-LF", "Unemployed", "Non-LF", "Non-LF"],
        }
    )
    result = suda2(guideline, list(guideline.columns))
    np.testing.assert_array_equal(result.score, [0, 0, 6, 0, 12, 0, 6, 10, 0, 0])
    np.testing.assert_allclose(
        result.dis_score[[2, 4, 7]],
        [0.0049867976611432099, 0.011383006514236068, 0.0091666788691624687],
        rtol=1e-12,
    )
    assert result.contributions == pytest.approx(
        {"Residence": 400 / 17, "Gender": 300 / 17, "Education": 1100 / 17, "Labor": 400 / 17}
    )


def test_hand_example_msus_scores_and_contributions() -> None:
    """sdcMicro's contribution example (tests/test_suda2.R), worked by hand.

    Records (a, b, c): r0 = (2, 0, 0), r1 = (1, 3, 6), r2 = (1, 0, 0). r0: a=2 is unique -> MSU {a}
    (b=0, c=0 and (0, 0) are shared with r2). r1: b=3 and c=6 are unique -> {b}, {c}; a=1 is
    shared. r2: no single value is unique, (b, c) = (0, 0) is shared with r0, but (a, b) = (1, 0)
    and (a, c) = (1, 0) are unique -> {a, b}, {a, c}. With 3 keys an MSU of size k scores
    (3 - k)!: r0 2, r1 2 + 2 = 4, r2 1 + 1 = 2. Variable totals: a 2 + 2 = 4, b 2 + 1 = 3,
    c 2 + 1 = 3 of 8 -> 50 %, 37.5 %, 37.5 %.
    """
    table = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    msus = minimal_sample_uniques(table, ["a", "b", "c"])
    assert sorted(msus) == [(0, ("a",)), (1, ("b",)), (1, ("c",)), (2, ("a", "b")), (2, ("a", "c"))]
    result = suda2(table, ["a", "b", "c"])
    np.testing.assert_array_equal(result.score, [2, 4, 2])
    np.testing.assert_array_equal(result.msu_count, [1, 2, 2])
    assert result.contributions == {"a": 50.0, "b": 37.5, "c": 37.5}
    # sdcMicro's tests: the same numbers whatever the column order
    flipped = suda2(table, ["c", "b", "a"])
    assert flipped.contributions == {"c": 37.5, "b": 37.5, "a": 50.0}
    # all three records unique, no pair: U = 3, P = 0, Dis = 1 -> every DIS score is 1
    np.testing.assert_array_equal(result.dis_score, [1.0, 1.0, 1.0])


def test_correlated_items_credit_like_sdcmicro() -> None:
    """V4 = V0 * 3 mod 7 + 1 makes every value of V4 held by the same records as one of V0
    (correlated items, Suda2.h ``CorrelateItem``). sdcMicro credits an MSU of size >= 3 only to
    the representative (V0), so V0 and V4 differ although they are interchangeable; a plain
    per-MSU credit would give both 40.43 %. Numbers from sdcMicro (R 4.2.2)."""
    table = pd.DataFrame(
        [
            [2, 1, 2, 5, 7],
            [3, 1, 2, 5, 3],
            [4, 1, 2, 3, 6],
            [5, 1, 2, 5, 2],
            [1, 1, 1, 5, 4],
            [3, 1, 1, 5, 3],
            [1, 1, 2, 5, 4],
            [2, 1, 1, 5, 7],
            [3, 1, 2, 4, 3],
            [3, 1, 1, 4, 3],
        ],
        columns=["V0", "V1", "V2", "V3", "V4"],
    )
    result = suda2(table, list(table.columns))
    np.testing.assert_array_equal(result.score, [12, 4, 72, 48, 12, 4, 12, 12, 6, 6])
    expected = {
        "V0": 42.553191489361701,
        "V1": 0.0,
        "V2": 36.170212765957451,
        "V3": 23.404255319148938,
        "V4": 38.297872340425535,
    }
    assert result.contributions == pytest.approx(expected, rel=1e-12)


def test_fewer_than_three_keys_are_padded_like_sdcmicro() -> None:
    """R/suda2.R pads two keys with a constant column: ATT = 3, so a 1-MSU scores 2, a 2-MSU 1.
    sdcMicro (R 4.2.2) on a = (2, 1, 1), b = (0, 3, 0): scores 2, 2, 1, contributions 60, 60."""
    table = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0]})
    result = suda2(table, ["a", "b"])
    np.testing.assert_array_equal(result.score, [2, 2, 1])
    assert result.contributions == pytest.approx({"a": 60.0, "b": 60.0})
    one = suda2(table, ["a"])  # sdcMicro's R code fails here (colSums of a vector)
    np.testing.assert_array_equal(one.score, [2, 0, 0])
    assert one.contributions == {"a": 100.0}


# --------------------------------------------------------------------------------------------
# the MSU definition: brute force over every subset
# --------------------------------------------------------------------------------------------


def _brute_force(
    table: pd.DataFrame, max_size: int, missing: str
) -> set[tuple[int, tuple[str, ...]]]:
    """Every (record, key set) that is unique in the table and has no unique proper subset;
    in "match" mode a key set is never one holding a missing cell of the record, and a missing
    cell equals only another missing cell."""
    cols = list(table.columns)
    values = table.to_numpy(dtype=float)
    if missing == "category":
        values = np.where(np.isnan(values), -1.0, values)
    n = len(values)

    def unique(r: int, subset: tuple[int, ...]) -> bool:
        row = values[r, list(subset)]
        others = values[:, list(subset)]
        same = (others == row) | (np.isnan(others) & np.isnan(row))
        return int(same.all(axis=1).sum()) == 1

    found = set()
    for r in range(n):
        for size in range(1, max_size + 1):
            for subset in itertools.combinations(range(len(cols)), size):
                if np.isnan(values[r, list(subset)]).any():
                    continue
                if not unique(r, subset):
                    continue
                proper = (s for k in range(1, size) for s in itertools.combinations(subset, k))
                if not any(unique(r, s) for s in proper):
                    found.add((r, tuple(cols[v] for v in subset)))
    return found


@pytest.mark.parametrize("missing", ["match", "category"])
def test_msus_are_unique_and_minimal_on_random_tables(missing: str) -> None:
    rng = np.random.default_rng(29)
    for trial in range(25):
        n = int(rng.integers(2, 18))
        m = int(rng.integers(1, 5))
        values = rng.integers(1, rng.integers(2, 5, m) + 1, (n, m)).astype(float)
        if trial % 3 == 0:
            values[rng.random((n, m)) < 0.2] = np.nan
        if trial % 4 == 1:
            values = np.vstack([values, values[: n // 2]])  # duplicated records
        table = pd.DataFrame(values, columns=[f"k{j}" for j in range(m)])
        max_size = m if trial % 2 else int(rng.integers(1, m + 1))
        expected = _brute_force(table, max_size, missing)
        found = minimal_sample_uniques(
            table, list(table.columns), max_size=max_size, missing=missing
        )
        assert len(found) == len(set(found))
        assert set(found) == expected, (trial, table)
        # the score is the sum of the MSU weights prod_{i=k}^{M-1} (ATT - i), ATT = max(keys, 3)
        # (sdcMicro's padding) and M = ATT when every size is searched
        att = max(m, 3)
        top = att if max_size == m else max_size
        score = np.zeros(len(table))
        for record, subset in expected:
            score[record] += math.prod(att - i for i in range(len(subset), top))
        result = suda2(table, list(table.columns), max_size=max_size, missing=missing)
        np.testing.assert_array_equal(result.score, score)
        counts = np.bincount([r for r, _ in expected], minlength=len(table))
        np.testing.assert_array_equal(result.msu_count, counts)


def test_missing_cells_are_never_part_of_an_msu() -> None:
    """sdcMicro's treatment: a missing cell is no item; it matches only another missing cell."""
    table = pd.DataFrame(
        {"a": [1.0, 1.0, np.nan, 2.0], "b": [1.0, 2.0, 2.0, 1.0], "c": [1, 1, 1, 1]}
    )
    msus = set(minimal_sample_uniques(table, ["a", "b", "c"]))
    assert all("a" not in keys for record, keys in msus if record == 2)
    assert (2, ("a",)) not in msus
    assert (3, ("a",)) in msus  # a = 2 is unique; the missing cell of record 2 is not a 2
    as_category = set(minimal_sample_uniques(table, ["a", "b", "c"], missing="category"))
    assert (2, ("a",)) in as_category


def test_max_size_limits_the_search_and_the_weights() -> None:
    table = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    result = suda2(table, ["a", "b", "c"], max_size=1)
    # only the 1-MSUs, weight prod_{i=1}^{0} = 1
    np.testing.assert_array_equal(result.score, [1, 2, 0])
    assert result.max_size == 1


def test_progress_reaches_one_and_a_raising_callback_cancels() -> None:
    table = pd.DataFrame({"a": [2, 1, 1, 4], "b": [0, 3, 0, 0], "c": [0, 6, 0, 1]})
    seen: list[float] = []
    suda2(table, ["a", "b", "c"], progress=lambda f, status="": seen.append(f))
    assert seen[-1] == 1.0 and seen == sorted(seen)

    def cancel(fraction: float, status: str = "") -> None:
        raise RunCancelled

    with pytest.raises(RunCancelled):
        suda2(table, ["a", "b", "c"], progress=cancel)


# --------------------------------------------------------------------------------------------
# edges and errors
# --------------------------------------------------------------------------------------------


def test_no_unique_record_scores_zero() -> None:
    table = pd.DataFrame({"a": [1, 1, 2, 2], "b": [3, 3, 4, 4], "c": [5, 5, 5, 5]})
    result = suda2(table, ["a", "b", "c"])
    assert not result.score.any() and not result.dis_score.any() and not result.msu_count.any()
    assert result.contributions == {"a": 0.0, "b": 0.0, "c": 0.0}  # sdcMicro: NaN (0 / 0)
    empty = suda2(table.iloc[:0], ["a", "b", "c"])
    assert empty.score.size == 0


@pytest.mark.parametrize(
    "keys, options",
    [
        ([], {}),
        (["a", "a"], {}),
        (["a", "zz"], {}),
        (["a", "b"], {"max_size": 3}),
        (["a", "b"], {"max_size": 0}),
        (["a", "b"], {"missing": "wildcard"}),
        (["a", "b"], {"dis_fraction": 1.5}),
    ],
)
def test_invalid_parameters_are_refused(keys: list[str], options: dict) -> None:
    table = pd.DataFrame({"a": [1, 2], "b": [1, 2]})
    with pytest.raises(InvalidParameter):
        suda2(table, keys, **options)


# --------------------------------------------------------------------------------------------
# sdcMicro's numbers on its test data and on Adult (../shared)
# --------------------------------------------------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize(
    "case", ["testdata_k7", "testdata_k5", "testdata_k7_missing", "francdat_k4"]
)
def test_sdc_reference_sets_equal_sdcmicro(case: str) -> None:
    import reference_sets

    ref = _reference(case)
    table = reference_sets.reference_frame(ref["data"])
    if case.endswith("_missing"):  # the cells made missing in R (data/suda2/README.md)
        table = table.astype({"water": float, "relat": float})
        table.loc[table.index[::7], "water"] = np.nan
        table.loc[table.index[2::11], "relat"] = np.nan
    _assert_equals_sdcmicro(suda2(table, ref["keys"]), ref)


@pytest.mark.shared
def test_adult_equals_sdcmicro() -> None:
    """Adult, 7 categorical keys (text coded as R factors in C-locale order)."""
    import reference_sets

    ref = _reference("adult_k7")
    result = suda2(reference_sets.adult_frame(), ref["keys"])
    values, counts = np.unique(result.score, return_counts=True)
    assert {repr(float(v)): int(c) for v, c in zip(values, counts, strict=True)} == ref[
        "score_counts"
    ]
    assert math.fsum(result.dis_score.tolist()) == pytest.approx(ref["dis_score_fsum"], rel=1e-12)
    assert result.dis_score.max() == pytest.approx(ref["dis_score_max"], rel=1e-12)
    rows = np.arange(result.score.size, dtype=float)
    assert float(rows @ result.score) == ref["row_times_score_sum"]  # which record has which score
    assert math.fsum((rows * result.dis_score).tolist()) == pytest.approx(
        ref["row_times_dis_score_fsum"], rel=1e-12
    )
    for key, value in ref["contributions"].items():
        assert result.contributions[key] == pytest.approx(value, rel=1e-12)
