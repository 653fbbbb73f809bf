"""Issue 32 item 5, notebook manners: ``ProtectionResult._repr_html_`` shows the release verdict
(:func:`microgui.core.metrics.disclosure.release_verdict`), the key figures and the group sizes,
never a value of a record; the API takes a ``pyarrow.Table`` and a Polars DataFrame, converted
at the boundary (:func:`microgui.api.as_pandas`)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from microgui.api import UnsafeReleaseWarning, as_pandas, assess, protect
from microgui.core.errors import InvalidInput
from microgui.core.metrics.disclosure import release_verdict


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 40
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float) + 0.123,  # values easy to spot
            "income": rng.normal(50_000, 9_000, n).round(3) + 0.777,
            "region": rng.choice(["Northshire", "Southmoor"], n),
            "disease": rng.choice(["asthma", "diabetes", "gout"], n),
        }
    )


def test_repr_html_shows_verdict_figures_and_group_sizes_and_no_value() -> None:
    frame = _frame()
    res = protect(frame, qi=["age", "income"], confidential=["disease"], k=4, seed=3)
    html = res._repr_html_()
    verdict = release_verdict(res.report)
    from html import escape

    assert escape(verdict.text) in html
    counts = res.report["group_size_counts"]
    for size, n in counts.items():  # every group size and how many groups have it
        assert f"<tr><td>{size}</td><td>{n}</td></tr>" in html
    assert f"<td style='text-align:left'>{res.report['n_groups']}</td>" in html
    assert f"{res.report['information_loss']:.4g}" in html
    assert "passed" in html  # the release check
    # no cell of the input or of the release: neither numbers nor categories
    for column in ("age", "income"):
        for value in list(frame[column]) + list(res.frame[column]):
            assert f"{value:.4g}" not in html or f"{value:.4g}" in _figures(res.report)
            assert repr(float(value)) not in html
    for text in ("Northshire", "Southmoor", "asthma", "diabetes", "gout"):
        assert text not in html


def _figures(report: dict) -> set[str]:
    """The formatted figures the display may show (a value of a record could coincide)."""
    return {f"{v:.4g}" for v in report.values() if isinstance(v, float)}


def test_repr_html_of_an_unsafe_release_says_so() -> None:
    frame = _frame()[["age", "income"]]
    with pytest.warns(UnsafeReleaseWarning):
        res = protect(frame, qi=["age", "income"], method="individual-ranking", k=3, seed=1)
    html = res._repr_html_()
    assert not res.check.ok
    assert release_verdict(res.report).level == "not_k_anonymous"
    assert "not k-anonymous" in html and "#b42318" in html
    assert "passed" not in html


def test_a_pyarrow_table_is_protected_as_its_pandas_frame() -> None:
    frame = _frame()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    got = protect(table, qi=["age", "income"], confidential=["region"], k=3, seed=5)
    want = protect(frame, qi=["age", "income"], confidential=["region"], k=3, seed=5)
    pd.testing.assert_frame_equal(got.frame, want.frame)
    assert got.partition.tolist() == want.partition.tolist()
    assert assess(table, qi=["region"], k=3)["n_records"] == len(frame)


def test_a_polars_frame_is_protected_as_its_pandas_frame() -> None:
    pl = pytest.importorskip("polars")
    frame = _frame()
    got = protect(pl.from_pandas(frame), qi=["age", "income"], confidential=["region"], k=3, seed=5)
    want = protect(frame, qi=["age", "income"], confidential=["region"], k=3, seed=5)
    pd.testing.assert_frame_equal(got.frame, want.frame, check_dtype=False)
    assert got.partition.tolist() == want.partition.tolist()
    lazy = as_pandas(pl.from_pandas(frame).lazy())
    assert list(lazy.columns) == list(frame.columns) and len(lazy) == len(frame)


def test_other_arrow_objects_are_refused_with_a_message() -> None:
    with pytest.raises(InvalidInput, match=re.escape("give a pyarrow.Table")):
        protect(pa.array([1, 2, 3]), qi=["x"])
