"""Attribute disclosure after a local suppression: a missing key cell matches any value.

The rule (module docstring of :mod:`microgui.core.metrics.disclosure`): the class of a released
key combination holds every record compatible with it, as sdcMicro's ``freqCalc`` counts k after
``localSuppression`` (sdcMicro ``R/freqCalc.R``; ``../shared/design/release-workflow.md``); the
measures are those of Machanavajjhala et al. 2007 (distinct/entropy l-diversity, Def. 3.2, 4.1)
and Li, Li & Venkatasubramanian 2007 (t-closeness, EMD).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.metrics.disclosure import attribute_disclosure, release_verdict
from microgui.core.metrics.missing_match import frequencies_missing_any
from microgui.core.metrics.privacy import emd_equal, emd_ordered
from microgui.core.table.roles import AttributeKind

NAN = np.nan


def _table() -> pd.DataFrame:
    # row 5's sex was suppressed: it matches (M, A) and (F, A)
    return pd.DataFrame(
        {
            "sex": ["M", "M", "F", "F", NAN, "M"],
            "region": ["A", "A", "A", "A", "A", "B"],
            "disease": ["flu", "flu", "cancer", "flu", "cancer", "hiv"],
        }
    )


def test_a_suppressed_record_joins_every_class_it_matches() -> None:
    """Known numbers: classes (M,A) = rows 1,2,5; (F,A) = 3,4,5; (*,A) = 1-5; (M,B) = 6."""
    frame = _table()
    kinds = {"disease": AttributeKind.NOMINAL}
    old = attribute_disclosure(frame, ["sex", "region"], "disease", kinds)["disease"]
    new = attribute_disclosure(
        frame, ["sex", "region"], "disease", kinds, missing_matches_any=True
    )["disease"]
    # missing as a value: (M,A) = {flu, flu} and the lone suppressed record are homogeneous
    assert (old["homogeneous_groups"], old["homogeneous_records"]) == (3, 4)
    # missing matches any: row 5's cancer joins (M,A); only (M,B) stays homogeneous
    assert (new["homogeneous_groups"], new["homogeneous_records"]) == (1, 1)
    assert new["n_groups"] == 4
    assert new["distinct_l_diversity"] == 1
    assert new["homogeneous_percent"] == pytest.approx(100 / 6)
    # t: (M,B) holds only hiv; whole table flu 3/6, cancer 2/6, hiv 1/6 -> 1/2 (1/2+1/3+5/6)
    assert new["t_closeness"] == pytest.approx(5 / 6)
    assert list(frequencies_missing_any(frame, ["sex", "region"])) == [3, 3, 3, 3, 5, 1]


def test_the_verdict_no_longer_counts_a_suppressed_cell_as_a_class() -> None:
    frame = _table().iloc[:5]  # without row 6, no class discloses a disease after the rule
    kinds = {"disease": AttributeKind.NOMINAL}
    for rule, level in ((False, "attribute_disclosure"), (True, "safe")):
        disclosure = attribute_disclosure(
            frame, ["sex", "region"], "disease", kinds, missing_matches_any=rule
        )
        report = {"k": 2, "k_anonymity": 3, "attribute_disclosure": disclosure}
        assert release_verdict(report).level == level


def _brute(frame: pd.DataFrame, keys: list[str], col: str, ordered: bool) -> dict[str, float]:
    """Each distinct combination's compatible records, found pair by pair."""
    rows = frame[keys].to_numpy(dtype=object)
    combos = {tuple("\0" if pd.isna(v) else v for v in r) for r in rows}
    values = frame[col]
    distinct, homogeneous, t = [], 0, 0.0
    own_homogeneous = np.zeros(len(frame), dtype=bool)
    for c in combos:
        match = np.array(
            [
                all(a == "\0" or pd.isna(b) or a == b for a, b in zip(c, r, strict=True))
                for r in rows
            ]
        )
        group = values[match]
        distinct.append(group.nunique())
        if group.nunique() == 1:
            homogeneous += 1
            own = np.array([tuple("\0" if pd.isna(v) else v for v in r) == c for r in rows])
            own_homogeneous |= own
        emd = emd_ordered(group, values) if ordered else emd_equal(group, values)
        t = max(t, emd)
    return {
        "distinct_l_diversity": min(distinct),
        "homogeneous_groups": homogeneous,
        "homogeneous_records": int(own_homogeneous.sum()),
        "t_closeness": t,
    }


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), share=st.floats(0.0, 0.5))
def test_matches_a_pairwise_count(seed: int, n: int, share: float) -> None:
    """Property: the pattern-pair joins give what a pair-by-pair scan gives, for a nominal and an
    ordered (continuous) confidential attribute, with random suppressions."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n).astype(object),
            "b": rng.integers(0, 3, n).astype(float),
            "nom": rng.choice(["p", "q", "r", "s"], n),
            "num": rng.integers(0, 6, n),
        }
    )
    frame.loc[rng.random(n) < share, "a"] = None
    frame.loc[rng.random(n) < share, "b"] = NAN
    kinds = {"nom": AttributeKind.NOMINAL, "num": AttributeKind.CONTINUOUS}
    got = attribute_disclosure(frame, ["a", "b"], ["nom", "num"], kinds, missing_matches_any=True)
    for col, ordered in (("nom", False), ("num", True)):
        want = _brute(frame, ["a", "b"], col, ordered)
        for key, value in want.items():
            assert got[col][key] == pytest.approx(value), (col, key)
