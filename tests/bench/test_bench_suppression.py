"""The local-suppression rows of the benchmark (issue 31 item 2)."""

from __future__ import annotations

import pytest
from reference_sets import shared_path

from microgui.bench import suppression
from microgui.bench.cases import CASES


def test_scale_row_is_in_the_main_table() -> None:
    assert any(c.method == "local-suppression" for c in CASES)


@pytest.mark.shared
def test_rows_compare_with_sdcmicro_and_judge_the_targets() -> None:
    shared_path("sdc-reference", "testdata.csv")  # skips without the reference data
    rows = suppression.suppression_rows(ks=(3,), repeat=1)
    assert {r.data for r in rows} == {"adult", "testdata"}
    for row in rows:
        assert row.k_after >= 3 and row.total == sum(row.suppressed.values())
        assert list(row.suppressed) == list(
            suppression.ADULT_KEYS if row.data == "adult" else suppression.TESTDATA_KEYS
        )
        assert row.sdcmicro is not None and row.ratio == row.total / sum(row.sdcmicro[0])
    text = suppression.suppression_text(rows)
    assert text is not None and "sdcMicro" in text
    assert text.count("PASS") + text.count("MISS") == len(rows)
