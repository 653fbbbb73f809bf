"""Missing-value detection (:func:`microgui.core.table.dataset.is_missing`): the same mask on
every column type a reader returns, read in pieces so that a worker gives the GIL back between
them (issue 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.table import dataset as dataset_module
from microgui.core.table.dataset import MISSING_TEXTS, is_missing


def whole_column_mask(series: pd.Series) -> np.ndarray:
    """The mask as one call over the whole column computed it (main before the pieces): the
    reference every column type must match."""
    miss = series.isna().to_numpy()
    if series.dtype == object or pd.api.types.is_string_dtype(series):
        try:
            text = series.astype("string").str.strip()
        except UnicodeDecodeError:
            text = series.map(lambda v: v.strip() if isinstance(v, str) else "x").astype("string")
        miss = miss | text.isin(list(MISSING_TEXTS)).fillna(True).to_numpy()
    return np.asarray(miss, dtype=bool)


_TEXTS = ["a", " b ", "", "  ", "NA", " N/A", "NaN ", "nan", ".", "na", "x.y", "None", "\tNA\n"]


def _columns(n: int) -> dict[str, pd.Series]:
    rng = np.random.default_rng(7)
    texts = np.array(_TEXTS, dtype=object)[rng.integers(0, len(_TEXTS), n)]
    with_none = texts.copy()
    with_none[rng.random(n) < 0.1] = None
    with_nan = texts.copy()
    with_nan[rng.random(n) < 0.1] = np.nan
    mixed = np.array([1, 2.5, "NA", b"NA", None, " 7 ", np.nan, True], dtype=object)[
        rng.integers(0, 8, n)
    ]
    numbers = rng.normal(size=n)
    numbers[rng.random(n) < 0.1] = np.nan
    return {
        "arrow strings (str)": pd.Series(with_none, dtype="str"),
        "arrow strings (string[pyarrow])": pd.Series(with_none, dtype="string[pyarrow]"),
        "python strings (string[python])": pd.Series(with_none, dtype="string[python]"),
        "object text with None": pd.Series(with_none, dtype=object),
        "object text with NaN": pd.Series(with_nan, dtype=object),
        "object mixed values": pd.Series(mixed, dtype=object),
        "categorical text": pd.Series(with_none, dtype=object).astype("category"),
        "categorical numbers": pd.Series(numbers.round(0)).astype("category"),
        "categorical mixed": pd.Series(mixed, dtype=object).astype("category"),
        "float with NaN": pd.Series(numbers),
        "nullable Int64": pd.Series(rng.integers(0, 9, n))
        .astype("Int64")
        .where(rng.random(n) > 0.1),
        "bool": pd.Series(rng.random(n) > 0.5),
        "all blank": pd.Series([" "] * n, dtype=object),
        "all None": pd.Series([None] * n, dtype=object),
        "all NaN float": pd.Series(np.full(n, np.nan)),
        "dates": pd.Series(pd.date_range("2020-01-01", periods=n, freq="h")).where(
            rng.random(n) > 0.1
        ),
        "undecodable bytes": pd.Series(
            np.array([b"\xff\xfe", "NA", " x ", None], dtype=object)[rng.integers(0, 4, n)]
        ),
    }


@pytest.mark.parametrize("n", [0, 1, 5, 70_001])
@pytest.mark.parametrize("name", sorted(_columns(3)))
def test_is_missing_matches_whole_column_mask(name: str, n: int) -> None:
    series = _columns(n)[name]
    expected = whole_column_mask(series)
    got = is_missing(series)
    assert got.dtype == bool and got.shape == (n,)
    assert np.array_equal(got, expected)


def test_is_missing_reads_a_text_column_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    # each piece is one call into pandas' C loops; between two of them a worker thread gives
    # the GIL back (issue 30): 3 full pieces and 1 row make 4 calls
    monkeypatch.setattr(dataset_module, "MISSING_PIECE_ROWS", 1_000)
    calls: list[int] = []
    blank = dataset_module.blank_texts

    def counted(piece: pd.Series) -> np.ndarray:
        calls.append(len(piece))
        return blank(piece)

    monkeypatch.setattr(dataset_module, "blank_texts", counted)
    series = pd.Series([" NA ", "x", None] * 1_000 + ["."], dtype=object)
    mask = is_missing(series)
    assert calls == [1_000, 1_000, 1_000, 1]
    assert np.array_equal(mask, whole_column_mask(series))


def test_is_missing_reads_categories_not_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    blank = dataset_module.blank_texts

    def counted(piece: pd.Series) -> np.ndarray:
        calls.append(len(piece))
        return blank(piece)

    monkeypatch.setattr(dataset_module, "blank_texts", counted)
    series = pd.Series(["a", " NA", "b", None] * 50_000, dtype=object).astype("category")
    mask = is_missing(series)
    assert calls == [3]  # the three categories, once
    assert np.array_equal(mask, whole_column_mask(series))


def test_is_missing_reads_no_text_in_a_numeric_column(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_piece: pd.Series) -> np.ndarray:
        raise AssertionError("a numeric column has no text to read")

    monkeypatch.setattr(dataset_module, "blank_texts", refuse)
    values = pd.Series([1.0, np.nan, 3.0])
    assert is_missing(values).tolist() == [False, True, False]
