"""One rule for a missing key cell in every risk figure (issue 31 follow-up): a missing cell
matches any value (sdcMicro ``freqCalc``/``measure_risk``, R/freqCalc.R), whether it was
suppressed by a plan or is missing in the raw input. ``evaluate`` (compare, CLI ``evaluate``)
and ``assess_risk`` (CLI ``assess``) give the same k, frequencies and l-diversity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics.disclosure import attribute_disclosure
from microgui.core.metrics.evaluate import evaluate
from microgui.core.metrics.file_risk import assess_risk
from microgui.core.metrics.missing_match import frequencies_missing_any, wildcard_counts


def test_blanked_keys_read_the_same_in_evaluate_and_assess(blanked_keys) -> None:  # type: ignore[no-untyped-def]
    ds, released = blanked_keys  # the two unique combinations, blanked
    keys = ["sex", "region"]
    # by hand: f,n: 2 + (f,?) = 3; f,s: 2; m,s: 3; m,?: 3; f,?: 4
    expected = [3, 3, 2, 3, 3, 3, 4]
    assert frequencies_missing_any(released, keys).tolist() == expected
    m = evaluate(ds, released)
    # assess reads a file as it comes (raw missing keys too): the same rule
    a = assess_risk(released, ds.roles, k=3, keys=keys, suda=False)
    assert m["k_anonymity"] == a["k_anonymity"]["level"] == 2
    assert a["k_anonymity"]["records_below_k"] == 1
    assert a["k_anonymity"]["records_with_missing_key"] == 2
    assert a["individual_risk"]["expected_reidentifications"] == pytest.approx(
        sum(1 / f for f in expected)
    )
    assert m["reidentification_risk_mean"] == pytest.approx(
        100 * a["individual_risk"]["expected_reidentifications"] / len(expected)
    )
    per = attribute_disclosure(released, keys, "income", ds.roles, missing_matches_any=True)
    # (f,s)+(f,?): lo, hi; (m,s)+(m,?): lo, lo, hi -> every cell has 2 values
    assert per["income"]["distinct_l_diversity"] == 2
    assert a["l_diversity"]["income"]["distinct_l_diversity"] == 2
    assert m["l_diversity"] == 2


def test_wildcard_counts_equal_a_pairwise_count() -> None:
    """Property: on random small tables with random blanks, the wildcard frequencies equal the
    pair-by-pair count (j counts for i when on every key they agree or either is missing)."""
    rng = np.random.default_rng(31)
    for _ in range(60):
        n, m = int(rng.integers(1, 25)), int(rng.integers(1, 4))
        codes = rng.integers(0, 3, size=(n, m)).astype(np.int64)
        codes[rng.random((n, m)) < 0.25] = -1
        got = wildcard_counts(codes, list(range(m)))
        brute = [
            sum(
                all(a < 0 or b < 0 or a == b for a, b in zip(codes[i], codes[j], strict=True))
                for j in range(n)
            )
            for i in range(n)
        ]
        assert list(got) == brute
        frame = pd.DataFrame(
            np.where(codes < 0, np.nan, codes), columns=[f"k{c}" for c in range(m)]
        )
        assert frequencies_missing_any(frame, list(frame.columns)).tolist() == brute
