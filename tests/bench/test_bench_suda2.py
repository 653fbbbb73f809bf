"""The SUDA2 row of the benchmark (issue 29: within 3x of sdcMicro's C++ ``suda2`` on Adult)."""

from __future__ import annotations

import pytest

from microgui.bench import measures


def test_suda2_row_is_absent_without_the_reference_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measures, "shared_data_dir", lambda: None)
    assert measures.suda2_text() is None


@pytest.mark.shared
def test_suda2_row_times_adult_against_sdcmicro() -> None:
    import reference_sets

    reference_sets.shared_path("adult", "adult.csv")
    line = measures.suda2_text(repeat=1)
    assert line is not None
    assert "30,162 records, 7 categorical keys" in line
    assert f"sdcMicro's C++ {measures.SDCMICRO_SUDA2_CPP_SECONDS:.3f} s" in line
    assert line.endswith(("PASS", "MISS"))
