"""The disclosure risk of one table (``assess_risk``, issue 29 item 2): k-anonymity on the
categorical keys with sdcMicro's missing-matches-anything counting (``freqCalc``), the worst key
combinations, individual risk (``indivRisk``), SUDA2 and l-diversity over the raw key cells.

Expected figures are counted by hand on small tables, or by a plain pandas ``groupby`` written
independently of the module (the worst combinations: every subset counted by brute force).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from reference_sets import shared_path

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.file_risk import (
    FEW_VALUES,
    NoCategoricalKey,
    assess_risk,
    choose_keys,
    risk_section,
)
from microgui.core.metrics.weighted_risk import frequencies, individual_risk
from microgui.core.table.roles import roles_from_lists


def _roles(frame: pd.DataFrame, nominal: list[str], **kw: object) -> object:
    qi = list(kw.pop("qi", nominal))  # type: ignore[call-overload]
    return roles_from_lists(list(frame.columns), qi=qi, nominal=nominal, **kw)  # type: ignore[arg-type]


def _table() -> pd.DataFrame:
    """12 records; ("a2", "b2", "c1") is unique; cell sizes 4, 4, 3, 1 over (a, b, c)."""
    rows = (
        [("a1", "b1", "c1", "yes")] * 4
        + [("a1", "b2", "c1", "no"), ("a1", "b2", "c1", "yes")] * 2
        + [("a2", "b1", "c2", "no")] * 3
        + [("a2", "b2", "c1", "no")]
    )
    return pd.DataFrame(rows, columns=["a", "b", "c", "conf"])


def test_a_unique_combination_is_counted_and_its_smallest_key_set_named() -> None:
    frame = _table()
    risk = assess_risk(
        frame, _roles(frame, ["a", "b", "c"], confidential=["conf"]), k=3, suda=False
    )
    ka = risk["k_anonymity"]
    assert risk["keys"] == ["a", "b", "c"] and risk["n_records"] == 12 and risk["k"] == 3
    assert ka["level"] == 1
    assert ka["records_in_cells_of_size_1"] == 1
    assert ka["records_in_cells_of_size_2"] == 0
    assert ka["records_below_k"] == 1 and ka["cells_below_k"] == 1
    # no single variable breaks k = 3 (a: 8/4, b: 7/5, c: 9/3); (a, b) has (a2, b2) once, and
    # (a, c) and (b, c) do not: {a2,c1}=1 -> (a, c) breaks too; (b, c): (b2, c1) 5, (b1, c2) 3,
    # (b1, c1) 4 -> no
    worst = ka["worst_combinations"]
    assert {tuple(w["columns"]) for w in worst} == {("a", "b"), ("a", "c")}
    assert all(w["cells_below_k"] == 1 and w["records_below_k"] == 1 for w in worst)
    # 1/fk: 4 records 1/4, 4 records 1/4 (cell (a1,b2,c1) has 4), 3 records 1/3, 1 record 1
    ir = risk["individual_risk"]
    assert ir["weighted"] is False and "1/fk" in ir["method"]
    assert ir["expected_reidentifications"] == pytest.approx(1 + 1 + 1 + 1)
    assert ir["max"] == 1.0 and ir["records_above"] == {"0.1": 12, "0.2": 12, "0.5": 1}
    assert sum(ir["histogram"]["counts"]) == 12 and len(ir["histogram"]["edges"]) == 21
    # conf over the cells: (a1,b1,c1) all yes, (a1,b2,c1) yes/no, (a2,b1,c2) all no, unique
    ld = risk["l_diversity"]["conf"]
    assert ld["distinct_l_diversity"] == 1
    assert ld["homogeneous_groups"] == 3 and ld["homogeneous_records"] == 4 + 3 + 1
    assert ld["homogeneous_percent"] == pytest.approx(100 * 8 / 12)


def test_every_key_cell_at_least_k_breaks_nothing() -> None:
    frame = _table().iloc[:11]  # the unique record removed: cells 4, 4, 3
    risk = assess_risk(frame, _roles(frame, ["a", "b", "c"]), k=3, suda=False)
    ka = risk["k_anonymity"]
    assert ka["level"] == 3 and ka["records_below_k"] == 0 and ka["cells_below_k"] == 0
    assert ka["worst_combinations"] == [] and risk["l_diversity"] == {}
    risk4 = assess_risk(frame, _roles(frame, ["a", "b", "c"]), k=4, suda=False)
    assert risk4["k_anonymity"]["records_below_k"] == 3
    assert risk4["k_anonymity"]["cells_below_k"] == 1


def test_missing_key_values_match_anything() -> None:
    """sdcMicro freqCalc (alpha = 1): the record with a missing ``a`` counts in both cells of
    its ``b``; as a category of its own it would be unique."""
    frame = pd.DataFrame({"a": ["A", "A", "B", None], "b": ["x", "x", "x", "x"]})
    risk = assess_risk(frame, _roles(frame, ["a", "b"]), k=2, suda=False)
    ka = risk["k_anonymity"]
    # r0, r1: {r0, r1, r3} = 3; r2: {r2, r3} = 2; r3: everyone = 4
    assert ka["level"] == 2 and ka["records_in_cells_of_size_1"] == 0
    assert ka["records_in_cells_of_size_2"] == 1 and ka["records_with_missing_key"] == 1
    assert "missing key value matches any value" in ka["missing_rule"]
    assert risk["individual_risk"]["expected_reidentifications"] == pytest.approx(
        2 / 3 + 1 / 2 + 1 / 4
    )


def test_a_weight_column_gives_the_weighted_individual_risk() -> None:
    frame = _table().assign(w=[10.0, 20, 30, 40, 5, 5, 5, 5, 50, 50, 50, 100])
    roles = _roles(frame, ["a", "b", "c"], weight="w")
    risk = assess_risk(frame, roles, k=3, suda=False)
    ir = risk["individual_risk"]
    freq = frequencies(frame, ["a", "b", "c"], "w")
    rk = individual_risk(freq.fk, freq.Fk)
    assert ir["weighted"] is True and "'w'" in ir["method"]
    assert ir["expected_reidentifications"] == pytest.approx(float(rk.sum()))
    # the unique record stands for 100 people: far below 1/fk = 1
    assert ir["max"] < 0.1 and ir["mean"] == pytest.approx(float(rk.mean()))
    assert "w" not in risk["keys"]


def test_a_single_key_column() -> None:
    frame = pd.DataFrame({"g": ["u"] * 5 + ["v"] * 2 + ["w"]})
    risk = assess_risk(frame, _roles(frame, ["g"]), k=3, suda=False)
    ka = risk["k_anonymity"]
    assert risk["keys"] == ["g"] and ka["level"] == 1
    assert ka["records_below_k"] == 3 and ka["cells_below_k"] == 2
    assert ka["worst_combinations"] == [
        {"columns": ["g"], "cells_below_k": 2, "records_below_k": 3}
    ]


def test_no_categorical_key_is_a_clear_error() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"income": rng.normal(size=50), "age": rng.integers(0, 90, 50)})
    roles = roles_from_lists(list(frame.columns), qi=["income", "age"])
    with pytest.raises(NoCategoricalKey, match=r"^no categorical key: tag .* or bin") as info:
        assess_risk(frame, roles)
    assert "\n" not in str(info.value) and "'income'" in str(info.value)
    # the run report gets the reason, not an error
    assert risk_section(frame, roles, k=3) == {"keys": [], "keys_note": str(info.value)}
    with pytest.raises(InvalidParameter, match="'nope' is not a column"):
        assess_risk(frame, roles, keys=["nope"])
    with pytest.raises(InvalidParameter, match="k=0"):
        assess_risk(frame, roles, keys=["age"], k=0)


def test_continuous_keys_enter_only_with_few_values() -> None:
    frame = pd.DataFrame(
        {
            "size": [str(i % 4) for i in range(60)],  # text, as the readers keep it
            "income": [str(1000 + i) for i in range(60)],
            "region": ["n", "s"] * 30,
        }
    )
    roles = roles_from_lists(
        list(frame.columns), qi=["size", "income", "region"], nominal=["region"]
    )
    keys, note = choose_keys(frame, roles)
    assert keys == ["size", "region"]
    assert "'size'" in note and f"at most {FEW_VALUES}" in note
    assert "'income' left out" in note and "bin" in note
    risk = assess_risk(frame, roles, k=3, suda=False)
    assert risk["keys"] == ["size", "region"] and risk["k_anonymity"]["level"] == 15


def test_worst_combinations_are_the_minimal_breaking_sets_brute_force() -> None:
    """Compared with every subset of 1-3 keys counted by pandas groupby, independently."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            c: rng.choice(list("pqrs")[:m], 300)
            for c, m in zip("abcde", (2, 3, 4, 3, 2), strict=True)
        }
    )
    k = 4
    risk = assess_risk(frame, _roles(frame, list("abcde")), k=k, suda=False)
    expected = {}
    for size in (1, 2, 3):
        for sub in itertools.combinations("abcde", size):
            if any(set(e) <= set(sub) for e in expected):
                continue
            fk = frame.groupby(list(sub))[sub[0]].transform("size")
            cells = frame[fk < k].drop_duplicates(list(sub))
            if len(cells):
                expected[sub] = (len(cells), int((fk < k).sum()))
    got = {
        tuple(w["columns"]): (w["cells_below_k"], w["records_below_k"])
        for w in risk["k_anonymity"]["worst_combinations"]
    }
    assert got  # this seed breaks k on some triple
    ranked = sorted(expected.items(), key=lambda t: (len(t[0]), -t[1][1], -t[1][0]))[:10]
    assert got == dict(ranked)
    fk = frame.groupby(list("abcde"))["a"].transform("size")
    assert risk["k_anonymity"]["records_below_k"] == int((fk < k).sum())


def test_hostile_column_names_and_no_value_in_the_result() -> None:
    names = ["line\nbreak", "quo\"te's", "=cmd|' /C calc'!A0", "x" * 300, "ünï©ødé 名前"]
    rng = np.random.default_rng(2)
    secrets = [f"SECRETVALUE{i:03d}" for i in range(7)]
    frame = pd.DataFrame({n: rng.choice(secrets[:3], 40) for n in names[:4]})
    frame[names[4]] = rng.choice(secrets[3:], 40)
    roles = roles_from_lists(
        list(frame.columns), qi=names[:4], nominal=names[:4], confidential=[names[4]]
    )
    risk = assess_risk(frame, roles, k=3, suda=False)
    assert risk["keys"] == names[:4] and list(risk["l_diversity"]) == [names[4]]
    text = json.dumps(risk, ensure_ascii=False)
    assert json.loads(text) == risk
    assert "SECRETVALUE" not in text


def test_adult_figures_agree_with_a_groupby_count() -> None:
    path = shared_path("adult", "adult.csv")
    frame = pd.read_csv(path, sep=";", dtype=str)
    cat = [
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "race",
        "sex",
        "native-country",
    ]
    roles = roles_from_lists(
        list(frame.columns), qi=[*cat, "age"], nominal=cat, confidential=["salary-class"]
    )
    risk = assess_risk(frame, roles, k=5, suda=False)
    assert set(risk["keys"]) == set(cat) and "'age' left out" in risk["keys_note"]
    fk = frame.groupby(cat)["sex"].transform("size")
    ka = risk["k_anonymity"]
    assert ka["records_in_cells_of_size_1"] == int((fk == 1).sum())
    assert ka["records_below_k"] == int((fk < 5).sum())
    assert risk["individual_risk"]["expected_reidentifications"] == pytest.approx(
        float((1 / fk).sum())
    )
    one_value = frame.groupby(cat)["salary-class"].transform("nunique") == 1
    assert risk["l_diversity"]["salary-class"]["homogeneous_records"] == int(one_value.sum())
    assert "SECRET" not in json.dumps(risk)
    text = json.dumps(risk)
    for column in cat:
        for value in frame[column].unique():
            assert json.dumps(value) not in text.replace(json.dumps(column), "")


def test_suda2_section_counted_by_hand() -> None:
    """The unique record (a2, b2, c1) of ``_table`` has two minimal sample uniques, {a2, b2}
    and {a2, c1} (a2 alone is held by 4 records, b2 by 5, c1 by 9; (b2, c1) by 5): with 3 keys
    each of size 2 weighs (3 - 2)! = 1 (sdcMicro suda2, Suda2.h ``g_ab``), score 2; ``a`` is in
    both, so its contribution is 100 %, ``b`` and ``c`` 50 % each."""
    frame = _table()
    risk = assess_risk(frame, _roles(frame, ["a", "b", "c"]), k=3)
    suda = risk["suda2"]
    assert suda["records_with_msu"] == 1 and suda["score_max"] == 2.0
    assert suda["contributions"] == pytest.approx({"a": 100.0, "b": 50.0, "c": 50.0})
    assert list(suda["contributions"]) == ["a", "b", "c"]  # sorted, largest first
    assert suda["max_size"] == 3 and suda["dis_fraction"] == 0.01
    assert 0 < suda["dis_score_max"] <= 1 and sum(suda["score_histogram"]["counts"]) == 1
    capped = assess_risk(frame, _roles(frame, ["a", "b", "c"]), k=3, max_suda_size=1)["suda2"]
    assert capped["max_size"] == 1 and capped["records_with_msu"] == 0


def test_suda2_without_a_sample_unique_is_zero_as_the_search_says() -> None:
    """A table with no unique record (a k-anonymous release) skips the search: the figures
    are those :func:`suda2` computes."""
    from microgui.core.metrics.suda2 import suda2

    frame = _table().iloc[:11]  # cells of 4, 4 and 3 records
    got = assess_risk(frame, _roles(frame, ["a", "b", "c"]), k=3)["suda2"]
    res = suda2(frame, ["a", "b", "c"])
    assert got["records_with_msu"] == int((res.score > 0).sum()) == 0
    assert got["contributions"] == res.contributions == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert got["dis_score_max"] == float(res.dis_score.max()) == 0.0
    assert got["max_size"] == res.max_size


@pytest.mark.parametrize("extra_at", [None, 5, 2_000, 30_000])
def test_a_continuous_key_has_few_values_however_far_its_values_differ(extra_at) -> None:  # type: ignore[no-untyped-def]
    """At most FEW_VALUES distinct numbers, missing cells aside, over the whole column: a
    head of the column that holds FEW_VALUES of them, or NaN beside them, decides nothing; a
    value more anywhere, even the last record's, leaves the column out."""
    rng = np.random.default_rng(3)
    n = 40_000
    values = rng.integers(0, FEW_VALUES, n).astype(np.float64)
    values[::97] = np.nan
    if extra_at is not None:
        values[extra_at if extra_at < n else n - 1] = FEW_VALUES + 0.5
    frame = pd.DataFrame({"x": values, "c": ["a", "b"] * (n // 2)})
    roles = roles_from_lists(["x", "c"], qi=["x", "c"], nominal=["c"])
    keys, _note = choose_keys(frame, roles)
    few = int(pd.Series(values).nunique(dropna=True)) <= FEW_VALUES
    assert few == (extra_at is None)
    assert ("x" in keys) == few
