"""Local suppression (:mod:`microgui.core.methods.local_suppression`), checked against sdcMicro's
semantics: a key cell's size counts every record that agrees on each key where both are present,
a missing value matching anything (sdcMicro R/freqCalc.r with ``alpha = 1``; R/localSuppression.R).

The cell sizes here are counted by brute force over all pairs of records, independently of the
module's pattern-pair counting.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_sets import shared_path

from microgui.core.errors import MicroguiError
from microgui.core.methods.local_suppression import (
    InvalidSuppression,
    SuppressionResult,
    suppress,
    wildcard_counts,
)


def brute_sizes(frame: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Cell size of each record on ``cols`` by comparing every pair (missing matches anything)."""
    codes = np.stack([pd.factorize(frame[c])[0] for c in cols], axis=1)  # -1 = missing
    a, b = codes[:, None, :], codes[None, :, :]
    match = ((a == b) | (a < 0) | (b < 0)).all(axis=2)  # n x n
    return match.sum(axis=1)


def smallest_cell(frame: pd.DataFrame, keys: list[str], m: int | None, strata: str | None) -> int:
    subsets = (
        [keys]
        if m is None or m >= len(keys)
        else [list(s) for s in itertools.combinations(keys, m)]
    )
    groups = [frame] if strata is None else [g for _, g in frame.groupby(strata, dropna=False)]
    return min(int(brute_sizes(g, s).min()) for g in groups for s in subsets)


@st.composite
def tables(draw: st.DrawFn) -> tuple[pd.DataFrame, list[str], int, int | None, str | None]:
    n = draw(st.integers(4, 20))
    n_keys = draw(st.integers(1, 4))
    keys = [f"k{j}" for j in range(n_keys)]
    data: dict[str, list[object]] = {}
    for c in keys:
        card = draw(st.integers(1, 4))
        cells = st.one_of(st.none(), st.sampled_from([f"v{v}" for v in range(card)]))
        cells = cells if draw(st.booleans()) else st.sampled_from([f"v{v}" for v in range(card)])
        data[c] = draw(st.lists(cells, min_size=n, max_size=n))
    data["other"] = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    strata = None
    if draw(st.booleans()):
        strata = "region"
        data[strata] = [i % 2 for i in range(n)]
    frame = pd.DataFrame(data, index=pd.Index(draw(st.permutations(range(100, 100 + n)))))
    smallest = n if strata is None else n // 2
    k = draw(st.integers(1, min(4, smallest)))
    m = draw(st.one_of(st.none(), st.integers(1, n_keys)))
    return frame, keys, k, m, strata


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_every_cell_reaches_k_and_nothing_else_changes(case: tuple) -> None:
    frame, keys, k, m, strata = case
    before = frame.copy()
    result = suppress(frame, keys, k, strata=strata, combinations=m)
    out = result.frame
    pd.testing.assert_frame_equal(frame, before)  # input untouched
    assert list(out.index) == list(frame.index) and list(out.columns) == list(frame.columns)
    assert out["other"].equals(frame["other"])  # non-key columns identical, dtype too
    if strata:
        assert out[strata].equals(frame[strata])
    got = smallest_cell(out, keys, m, strata)
    assert got >= k and result.k_after == got
    for c in keys:
        was, now = frame[c].isna(), out[c].isna()
        assert not (was & ~now).any()  # existing missing values stay missing
        kept = ~now
        assert (out[c][kept] == frame[c][kept]).all()  # no value is changed, only suppressed
        assert result.suppressed[c] == int((now & ~was).sum())
    assert result.total == sum(result.suppressed.values())


@settings(max_examples=15, deadline=None)
@given(tables())
def test_no_single_suppressed_cell_could_be_given_back(case: tuple) -> None:
    """The restore pass leaves a 1-minimal set: giving back any one cell breaks k somewhere."""
    frame, keys, k, m, strata = case
    out = suppress(frame, keys, k, strata=strata, combinations=m).frame
    for c in keys:
        for label in out.index[out[c].isna() & frame[c].notna()]:
            trial = out.copy()
            trial[c] = trial[c].astype(object)
            trial.loc[label, c] = frame.loc[label, c]
            assert smallest_cell(trial, keys, m, strata) < k


@settings(max_examples=15, deadline=None)
@given(tables())
def test_wildcard_counts_equal_a_pairwise_count(case: tuple) -> None:
    frame, keys, _, _, _ = case
    codes = np.stack([pd.factorize(frame[c])[0] for c in keys], axis=1)
    assert (wildcard_counts(codes, range(len(keys))) == brute_sizes(frame, keys)).all()


def test_hand_checked_example() -> None:
    # (a,x) x2, (b,y) x2, (a,y) x1, k = 2: only (a,y) is alone. Suppressing sex makes it (*,y),
    # matching (b,y) twice: size 3; suppressing region makes it (a,*): size 3. One cell either way.
    frame = pd.DataFrame(
        {
            "region": ["a", "a", "b", "b", "a"],
            "sex": ["x", "x", "y", "y", "y"],
            "w": [1, 2, 3, 4, 5],
        }
    )
    result = suppress(frame, ["region", "sex"], 2, importance=[1, 2])
    assert isinstance(result, SuppressionResult)
    assert result.suppressed == {"region": 0, "sex": 1} and result.total == 1
    assert result.frame["sex"].isna().tolist() == [False, False, False, False, True]
    # (a,x): each other and (a,*) = 3; (b,y): each other only = 2; (a,*): (a,x) twice + itself
    assert result.k_after == 2
    assert brute_sizes(result.frame, ["region", "sex"]).tolist() == [3, 3, 2, 2, 3]


def test_importance_decides_between_equally_small_suppressions() -> None:
    frame = pd.DataFrame({"region": ["a", "a", "b", "b", "a"], "sex": ["x", "x", "y", "y", "y"]})
    first = suppress(frame, ["region", "sex"], 2, importance=[2, 1])  # sex most important
    assert first.suppressed == {"region": 1, "sex": 0}
    assert first.frame["region"].isna().tolist() == [False, False, False, False, True]
    # default importance (sdcMicro's): fewest categories = most important; both have 2, so the
    # first key is the more important one and the second is suppressed
    assert suppress(frame, ["region", "sex"], 2).suppressed == {"region": 0, "sex": 1}


def test_fewer_cells_beat_importance() -> None:
    """One cell of the most important key rather than two of the others (documented choice)."""
    # (y,q,s) is alone; (*,q,s) matches (x,q,s) twice, (y,*,*) matches (y,p,r) twice
    frame = pd.DataFrame({"a": list("xxyyy"), "b": list("qqppq"), "c": list("ssrrs")})
    result = suppress(frame, ["a", "b", "c"], 2, importance=[1, 2, 3])
    assert result.suppressed == {"a": 1, "b": 0, "c": 0}
    assert result.frame["a"].isna().tolist() == [False, False, False, False, True]
    # a record unlike all others loses every key: no smaller set reaches k
    frame = pd.DataFrame({"a": list("xxxy"), "b": list("pppq"), "c": list("rrrs")})
    result = suppress(frame, ["a", "b", "c"], 2)
    assert result.total == 3 and result.frame.iloc[3].isna().all()


def test_existing_missing_values_match_anything_and_are_not_counted() -> None:
    frame = pd.DataFrame({"a": ["x", "x", None, "y"], "b": ["p", "p", "p", "p"]})
    # the None record matches everything: (y,p) has size 2 already at k = 2
    result = suppress(frame, ["a", "b"], 2)
    assert result.total == 0 and result.k_after == 2
    assert result.frame.equals(frame)


def test_strata_are_made_k_anonymous_separately() -> None:
    frame = pd.DataFrame({"a": list("xxyyxxyy"), "s": [1, 1, 1, 1, 2, 2, 2, 2]})
    assert suppress(frame, ["a"], 2).total == 0
    result = suppress(frame, ["a"], 3, strata="s")
    assert smallest_cell(result.frame, ["a"], None, "s") >= 3
    # per stratum (x,x,y,y) at k = 3: one x suppressed lifts the y's to 3 but leaves the other
    # x at 2, so it goes too (x,y both suppressed would do as well): 2 cells per stratum
    assert result.total == 4


def test_combinations_only_ask_for_subsets() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"k{j}": rng.integers(0, 3, 60) for j in range(4)})
    full = suppress(frame, list(frame.columns), 3)
    pairs = suppress(frame, list(frame.columns), 3, combinations=3)
    assert smallest_cell(pairs.frame, list(frame.columns), 3, None) >= 3
    assert 0 < pairs.total < full.total
    touched = [c for c, n in pairs.suppressed.items() if n]
    untouched = [c for c, n in pairs.suppressed.items() if not n]
    # integer keys stay exact: a suppressed one becomes nullable, the others keep their dtype
    assert touched and all(pairs.frame[c].dtype == "Int64" for c in touched)
    assert all(pairs.frame[c].dtype == frame[c].dtype for c in untouched)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keys": ["a", "nope"]}, "unknown key column 'nope'"),
        ({"keys": []}, "at least one key column"),
        ({"keys": ["a", "a"]}, "key column 'a' is given twice"),
        ({"k": 0}, "k must be an integer >= 1"),
        ({"k": 2.5}, "k must be an integer >= 1"),
        ({"k": 5}, "k = 5 is larger than the 4 records"),
        ({"strata": "zone"}, "unknown strata column 'zone'"),
        ({"strata": "a"}, "strata column 'a' is also a key"),
        ({"strata": "s", "k": 3}, "strata column 's' has a stratum of 2 records, fewer than k = 3"),
        ({"importance": [1]}, "importance has 1 entries for 2 key columns"),
        ({"importance": [0, 1]}, "importance must be integers from 1 to 2"),
        ({"combinations": 0}, "combinations must be >= 1"),
    ],
)
def test_bad_input_is_one_line_naming_the_column(kwargs: dict, message: str) -> None:
    frame = pd.DataFrame({"a": list("xxyy"), "b": list("pqpq"), "s": [1, 1, 2, 2]})
    args = {"keys": ["a", "b"], "k": 2, **kwargs}
    with pytest.raises(InvalidSuppression, match=message) as caught:
        suppress(frame, **args)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, MicroguiError)
    assert "\n" not in str(caught.value)


def test_figures_hold_no_value() -> None:
    frame = pd.DataFrame({"a": ["SECRET1", "SECRET1", "SECRET2"], "b": ["p", "p", "p"]})
    result = suppress(frame, ["a", "b"], 2)
    text = json.dumps({"suppressed": result.suppressed, "total": result.total, "k": result.k_after})
    assert "SECRET" not in text and result.total == 1


def test_progress_reaches_the_end() -> None:
    seen: list[float] = []
    frame = pd.DataFrame({"a": list("xxxy"), "b": list("pppq")})
    suppress(frame, ["a", "b"], 2, progress=lambda f, s="": seen.append(f))
    assert seen and seen[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in seen)


# sdcMicro 5.8.1 `localSuppression` on the same keys with its default importance suppressed 8,239
# cells of Adult at k = 5 (measured, see microgui/bench/suppression.py); issue 31's target is at
# most 10 % more.
SDCMICRO_ADULT_K5 = 8239


@pytest.mark.shared
def test_adult_k5_is_k_anonymous_and_within_the_sdcmicro_target() -> None:
    frame = pd.read_csv(shared_path("adult", "adult.csv"), sep=";", dtype=str)
    keys = [
        "sex",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
    ]
    result = suppress(frame, keys, 5)
    codes = np.stack([pd.factorize(result.frame[c])[0] for c in keys], axis=1)
    assert int(wildcard_counts(codes, range(len(keys))).min()) == result.k_after >= 5
    assert result.frame.drop(columns=keys).equals(frame.drop(columns=keys))
    assert result.total <= 1.10 * SDCMICRO_ADULT_K5


def test_fixed_keys_are_never_suppressed_and_count_in_k() -> None:
    """``fixed`` keys (a plan's microaggregated continuous keys, issue 31) belong to the key
    combination but are never blanked: k is reached on keys + fixed, a missing cell matching any
    value and fixed values only when equal; a fixed group below k is refused in one line."""
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame(
        {
            "a": rng.choice(list("pqrs"), n),
            "b": rng.choice(list("xyz"), n),
            "g": np.repeat(np.arange(n // 5) * 1.5, 5),  # groups of 5 equal values
        }
    )
    out = suppress(frame, ["a", "b"], 5, fixed=["g"])
    assert out.frame["g"].equals(frame["g"]) and out.total > 0
    sizes = brute_sizes(out.frame, ["a", "b", "g"])
    assert sizes.min() >= 5 and out.k_after >= 5
    with pytest.raises(MicroguiError, match="fixed key"):
        suppress(frame.iloc[:-1], ["a", "b"], 5, fixed=["g"])
