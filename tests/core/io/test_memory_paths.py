"""Issue 33, memory of the whole command: numbers read by Arrow, continuous quasi-identifiers
held as their numbers, roles suggested only for untagged columns, the CSV writer's codes. Each
path is compared with the one it replaces (the reference), and the memory paths are checked
with tracemalloc in proportion to the table (never timed)."""

from __future__ import annotations

import io
import itertools
import json
import random
import tracemalloc
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from microgui.cli import main
from microgui.core.io import _write_csv, read_table
from microgui.core.io import csv_write as csv_write_module
from microgui.core.release.check import export_run
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table import dataset as dataset_module
from microgui.core.table.dataset import (
    Dataset,
    continuous_as_numbers,
    numeric_column,
    prepare_qi,
)
from microgui.core.table.roles import roles_from_lists

# --- numbers read by Arrow --------------------------------------------------------------------


def _hard_texts(seed: int) -> list[str]:
    """17-digit reprs, numbers exactly halfway between two doubles (and cut to 17-25 digits):
    where a parser that is not correctly rounded goes wrong; whole numbers beyond 2**53 and
    2**64, exponents, a plus sign, spaces."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000)
    texts = [repr(v) for v in x.tolist()] + [f"{v:.20f}" for v in x[:500].tolist()]
    with localcontext() as ctx:
        ctx.prec = 1200
        for a in x[:400].tolist():
            mid = (Decimal(a) + Decimal(float(np.nextafter(a, np.inf)))) / 2
            texts.append(format(mid, "e"))
            texts += [format(mid, f".{digits}e") for digits in (16, 17, 20, 24)]
    texts += [str(2**53 + 1), str(2**64 + 3), "12345678901234567890123", "+.5", "5.", " 7.25 "]
    texts += ["1E-7", "-3e+2", "0.0", "0", "1e-320"]
    return [t for t in texts if float(t) != 0 or not t.strip().startswith("-")]  # no -0


@pytest.mark.parametrize("seed", range(2))
def test_ascii_numbers_are_read_as_pandas_reads_them_bit_for_bit(seed: int) -> None:
    texts = _hard_texts(seed)
    random.Random(seed).shuffle(texts)
    assert dataset_module._plain_decimals(pa.array(texts)) is None  # not the plain path
    assert dataset_module._ascii_numbers(pa.array(texts)) is not None  # this one
    frame = pd.DataFrame({"x": pd.Series(texts, dtype="str")})
    expected = pd.to_numeric(pd.Series(texts, dtype=object).str.strip()).to_numpy(np.float64)
    got = numeric_column(frame, "x")
    assert got.view(np.int64).tolist() == expected.view(np.int64).tolist()


@pytest.mark.parametrize(
    "texts", [["-0", "1.5"], ["-0.0", "2"], ["inf", "1"], ["1_000"], ["nan"], ["1.5", None]]
)
def test_other_texts_are_left_to_pandas(texts: list[str | None]) -> None:
    """A negative zero (pandas reads "-0" as the integer 0), inf, nan, digits with _ and
    missing cells are not read by Arrow here."""
    assert dataset_module._ascii_numbers(pa.array(texts)) is None


def _expected_ascii_number(text: str) -> float | None:
    """What ``_ascii_numbers`` gives for one text, by its definition: the number when
    ``_NUMBER`` matches the text (and it is no negative zero), else None; the number as pandas
    reads the stripped text (Python's ``float`` keeps a ``\x1c`` that ``str.strip`` drops)."""
    if dataset_module._NUMBER.fullmatch(text) is None:
        return None
    value = float(text.strip())
    return None if value == 0 and np.signbit(value) else value


def _texts_up_to(alphabet: str, length: int) -> list[str]:
    return ["".join(t) for n in range(1, length + 1) for t in itertools.product(alphabet, repeat=n)]


@pytest.mark.parametrize(
    ("alphabet", "length"),
    [("01+-.eE \t", 5), ("9+-.eE\x1c\n\x00xinfaé_,", 3)],
    ids=["number-grammar", "other-bytes"],
)
def test_ascii_numbers_take_exactly_the_texts_the_number_pattern_matches(
    alphabet: str, length: int
) -> None:
    """Issue 33: numbers are told from other text by their bytes and Arrow's cast instead of a
    regular expression per cell; every short text of these characters gets what ``_NUMBER``
    decides, number for number (the grammar: signs, points, exponents, spaces inside or
    around; then bytes no number holds, non-ASCII among them)."""
    for text in _texts_up_to(alphabet, length):
        expected = _expected_ascii_number(text)
        got = dataset_module._ascii_numbers(pa.array([text, "1.5"]))
        if expected is None:
            assert got is None, text
        else:
            assert got is not None, text
            assert got[0].tobytes() == np.float64(expected).tobytes(), text


def test_ascii_numbers_match_no_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: 17-digit numbers are read without a regular expression over their cells (it
    was two thirds of the read's conversion), on Arrow text in chunks and sliced."""
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a regular expression over every cell")

    monkeypatch.setattr(pc, "match_substring_regex", refused)
    x = np.random.default_rng(3).standard_normal(5000)
    texts = [repr(v) for v in x.tolist()]
    expected = np.concatenate([x[:1000], x[1001:]]).tobytes()
    for kind in (pa.string(), pa.large_string()):
        chunked = pa.chunked_array([pa.array(texts[:1000], kind), pa.array(texts[1000:], kind)[1:]])
        got = dataset_module._ascii_numbers(chunked)
        assert got is not None
        assert got.tobytes() == expected
    assert dataset_module._ascii_numbers(pa.array(texts[:10] + ["1.5x"])) is None


# --- continuous quasi-identifiers held as numbers ---------------------------------------------


def _text_table(tmp_path: Path, n: int = 400) -> Path:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "a": rng.standard_normal(n),  # 17 digits, as a program writes them
            "b": rng.standard_normal(n) * 1e5,
            "few": rng.integers(0, 3, n).astype(float),  # few distinct: its texts are keys
            "holes": np.where(rng.random(n) < 0.02, np.nan, rng.standard_normal(n)),
            "region": rng.choice(["north", "south", "east"], n),
            "income": rng.gamma(2.0, 1000.0, n).round(2),
        }
    )
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    return path


def test_continuous_quasi_identifiers_become_the_numbers_a_run_reads(tmp_path: Path) -> None:
    read = read_table(_text_table(tmp_path))
    roles = roles_from_lists(
        list(read.frame.columns), qi=["a", "b", "few", "holes", "region"], nominal=["region"],
        confidential=["income"], missing_as_category=[],
    )  # fmt: skip
    dataset = Dataset(read.frame, roles, read.source)
    held = continuous_as_numbers(dataset, more_distinct_than=20)
    for col in ("a", "b"):
        assert held.frame[col].dtype == np.float64
        expected = numeric_column(dataset.frame, col)
        assert (
            held.frame[col].to_numpy().view(np.int64).tolist() == expected.view(np.int64).tolist()
        )
    for col in ("few", "holes", "region", "income"):  # few values, a missing cell, not continuous
        assert held.frame[col].dtype == dataset.frame[col].dtype
        assert held.frame[col].equals(dataset.frame[col])
    assert held.frame.attrs == dataset.frame.attrs  # file name, lines, fingerprint
    assert dataset.frame["a"].dtype != np.float64  # the input is not changed
    # the run refuses the column with holes by its text, as before
    with pytest.raises(Exception, match="holes") as refused:
        prepare_qi(held)
    with pytest.raises(Exception, match="holes") as before:
        prepare_qi(dataset)
    assert str(refused.value) == str(before.value)


def test_the_release_is_the_same_with_the_numbers_held(tmp_path: Path) -> None:
    """The run and its release (CSV bytes, JSON report but its seconds) from the text table and
    from the table whose continuous quasi-identifiers are held as numbers."""
    read = read_table(_text_table(tmp_path))
    roles = roles_from_lists(
        list(read.frame.columns), qi=["a", "b", "few", "region"], nominal=["region"],
        confidential=["income"],
    )  # fmt: skip
    dataset = Dataset(read.frame, roles, read.source)
    held = continuous_as_numbers(dataset, more_distinct_than=20)
    assert held.frame["a"].dtype == np.float64
    spec = RunSpec.make("mdav-generic", 3, {}, 7)
    outputs = []
    for name, data in (("text", dataset), ("numbers", held)):
        result = run_protection(data, spec)
        out, rep = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        export_run(data, result, out, rep, order=RecordOrder(seed=3))
        report = _without_seconds(json.loads(rep.read_text()))
        report.pop("output")
        report["fingerprint"]["output"].pop("file")
        outputs.append((out.read_bytes(), report))
    assert outputs[0] == outputs[1]


def _without_seconds(report: object) -> object:
    if isinstance(report, dict):
        return {k: _without_seconds(v) for k, v in report.items() if k != "seconds"}
    return report


def test_protect_suggests_roles_for_the_untagged_columns_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Suggesting reads every cell: ``protect`` asks it only of the columns no option tags,
    and still names an untagged column that looks identifying."""
    rng = np.random.default_rng(1)
    n = 60
    frame = pd.DataFrame(
        {
            "a": rng.standard_normal(n),
            "b": rng.standard_normal(n),
            "email": [f"p{i}@x.org" for i in range(n)],
        }
    )
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    asked: list[list[str]] = []
    explain = dataset_module.explain_roles

    def recorded(table: pd.DataFrame) -> object:
        asked.append([str(c) for c in table.columns])
        return explain(table)

    monkeypatch.setattr(dataset_module, "explain_roles", recorded)
    args = ["protect", str(source), "--qi", "a,b", "-k", "3", "--method", "mdav"]
    assert main([*args, "-o", str(tmp_path / "out.csv"), "-q"]) == 0
    assert asked == [["email"]]
    assert "'email' (identifier)" in capsys.readouterr().err


# --- the CSV writer's memory --------------------------------------------------------------------


class _Discard(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def test_the_csv_writer_holds_codes_not_a_string_per_cell() -> None:
    """Writing a protected table (groups of 5 sharing their values, in a random order) takes
    less than 6x the table's bytes at its peak here (measured 4.4x; 2.0x at 100,000 x 10):
    each record's code into its column's distinct texts (ASCII bytes), lines joined piece by
    piece. A Python string per distinct value and a pointer per cell took 8.8x here (5.5x at
    100,000 x 10; 240 MB at 1,000,000 x 10)."""
    rng = np.random.default_rng(0)
    n, d = 24_000, 6
    groups = rng.standard_normal((n // 5, d))
    frame = pd.DataFrame(np.repeat(groups, 5, axis=0)[rng.permutation(n)])
    expected = frame.to_csv(index=False, lineterminator="\n")
    got = io.StringIO()
    _write_csv(frame, got)
    assert got.getvalue() == expected
    tracemalloc.start()
    try:
        _write_csv(frame, _Discard())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    table = n * d * 8
    assert csv_write_module._JOINED_ROWS < n / 4  # written in several pieces
    assert peak < 6 * table, peak / table


def _permuted_frames() -> list[pd.DataFrame]:
    """Numbers only (floats with NaN and -0.0, integers), numbers and text, a carriage return
    in a column name, one column, no record."""
    rng = np.random.default_rng(4)
    n = 9_000
    x = np.repeat(rng.standard_normal((n // 3, 3)), 3, axis=0)
    x[::7, 1] = np.nan
    x[5, 2] = -0.0
    numbers = pd.DataFrame(x, columns=["a", "b", "c"]).assign(i=rng.integers(-9, 9, n))
    mixed = numbers.assign(t=rng.choice(["x", "y,z", ""], n))
    return [numbers, mixed, numbers.rename(columns={"a": "a\rb"}), numbers[["a"]], numbers.iloc[:0]]


@pytest.mark.parametrize("case", range(5))
def test_the_csv_written_by_blocks_of_a_permutation_is_the_reordered_tables(case: int) -> None:
    """``csv_writer(frame, rows)`` writes ``frame.iloc[rows]``'s CSV byte for byte (issue 31's
    random record order, issue 33: without a reordered copy of a table of numbers)."""
    frame = _permuted_frames()[case]
    rows = np.random.default_rng(case).permutation(len(frame))
    expected, got = io.StringIO(), io.StringIO()
    csv_write_module.csv_writer(frame.iloc[rows].reset_index(drop=True))(expected)
    csv_write_module.csv_writer(frame, rows)(got)
    assert got.getvalue() == expected.getvalue()


def test_the_permuted_write_makes_no_reordered_copy() -> None:
    """Writing a table of numbers in a permuted order takes no more memory than writing it in
    its own order plus the codes' gather (a reordered copy of the table, what the release did
    before, adds the table's whole size: 8 bytes a cell)."""
    rng = np.random.default_rng(1)
    n, d = 24_000, 6
    frame = pd.DataFrame(np.repeat(rng.standard_normal((n // 5, d)), 5, axis=0))
    rows = rng.permutation(n)
    peaks = []
    for order in (None, rows):
        tracemalloc.start()
        try:
            csv_write_module.csv_writer(frame, order)(_Discard())
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    table = n * d * 8
    assert peaks[1] < peaks[0] + 0.25 * table, (peaks[0] / table, peaks[1] / table)


# --- k-anonymity counted column by column ----------------------------------------------------


def test_k_anonymity_level_is_the_groupby_minimum() -> None:
    """k_anonymity_level folds one column's codes at a time into the combination's: the same
    smallest group as ``groupby(qis, dropna=False).size()`` (floats by value, -0.0 = 0.0, text,
    categories and missing values as one value)."""
    from microgui.core.metrics.kanonymity import k_anonymity_level

    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        columns: dict[str, object] = {}
        for j in range(int(rng.integers(1, 4))):
            kind = int(rng.integers(0, 4))
            if kind == 0:
                columns[f"c{j}"] = rng.choice([0.0, -0.0, 1.5, np.nan, 2.0], n)
            elif kind == 1:
                columns[f"c{j}"] = rng.choice(np.array(["a", "b", None], dtype=object), n)
            elif kind == 2:
                columns[f"c{j}"] = pd.Categorical(rng.choice(["x", "y", "z"], n))
            else:
                columns[f"c{j}"] = rng.integers(0, 3, n)
        frame = pd.DataFrame(columns)
        names = list(frame.columns)
        expected = int(frame.groupby(names, dropna=False, sort=False).size().min())
        assert k_anonymity_level(frame, names) == expected


# --- z-scores computed in place -----------------------------------------------------------------


def test_prepare_qi_holds_the_raw_values_and_the_z_scores_only() -> None:
    """prepare_qi's peak (tracemalloc) is the raw (n, d) values and the z-scores, not a third
    (n, d) temporary of ``(cont - mean) / std`` (issue 33: the 1,000,000 x 10 command's peak),
    and the z-scores are bit for bit that expression's."""
    n, d = 50_000, 6
    x = np.random.default_rng(3).standard_normal((n, d)) * 7.0 + 3.0
    columns = [f"x{j}" for j in range(d)]
    data = Dataset(pd.DataFrame(x, columns=columns), roles_from_lists(columns, qi=columns))
    prepare_qi(data)  # warm: lazy imports and caches outside the measure
    tracemalloc.start()
    try:
        qi = prepare_qi(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    block = n * d * 8
    assert peak < 2.5 * block, f"prepare_qi peaked at {peak / block:.2f}x the (n, d) block"
    assert qi.cont_values is not None
    mean = x.mean(axis=0)
    std = x.std(axis=0, ddof=1)
    assert np.array_equal(qi.continuous, (x - mean) / std)
    assert np.array_equal(qi.cont_values, x)


def test_protected_z_scores_take_one_block() -> None:
    """protected_continuous_z (the run report's SSE basis) fills its result column by column:
    its peak (tracemalloc) is the (n, d) result, not a stacked copy and a temporary besides
    (three blocks at once were the 1,000,000 x 10 command's peak, in build_report; issue 33),
    and its cells are bit for bit ``(stacked - mean) / std``, a missing cell NaN."""
    from microgui.core.table.aggregate import protected_continuous_z

    n, d = 50_000, 6
    x = np.random.default_rng(4).standard_normal((n, d)) * 5.0 - 2.0
    columns = [f"x{j}" for j in range(d)]
    data = Dataset(pd.DataFrame(x, columns=columns), roles_from_lists(columns, qi=columns))
    qi = prepare_qi(data)
    released = np.round(x, 1)
    released[::97, 2] = np.nan  # a suppressed cell
    protected = pd.DataFrame(released, columns=columns)
    protected_continuous_z(protected, qi)  # warm
    tracemalloc.start()
    try:
        z = protected_continuous_z(protected, qi)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    block = n * d * 8
    assert peak < 1.5 * block, f"protected_continuous_z peaked at {peak / block:.2f}x the block"
    expected = (released - qi.cont_mean) / qi.cont_std
    assert np.array_equal(z, expected, equal_nan=True)
    assert z.flags.c_contiguous


def test_prepare_qi_takes_the_block_of_numbers_continuous_as_numbers_made(tmp_path: Path) -> None:
    """The continuous quasi-identifiers held as numbers are one (n, d) block, and prepare_qi
    takes it as its raw values (read-only) instead of a copy: its peak (tracemalloc) is then
    the z-scores alone (issue 33: 80 MB less from the run's start to the release at
    1,000,000 x 10). The raw values, means, standard deviations and z-scores are bit for bit
    those prepare_qi reads from the text."""
    n, d = 40_000, 5
    x = np.random.default_rng(6).standard_normal((n, d)) * 3.0 + 1.0
    columns = [f"x{j}" for j in range(d)]
    path = tmp_path / "numbers.csv"
    pd.DataFrame(x, columns=columns).assign(name="a").to_csv(path, index=False)
    read = read_table(path)
    dataset = Dataset(read.frame, roles_from_lists(list(read.frame.columns), qi=columns))
    held = continuous_as_numbers(dataset)
    from_text = prepare_qi(dataset)
    prepare_qi(held)  # warm
    tracemalloc.start()
    try:
        qi = prepare_qi(held)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    block = n * d * 8
    assert peak < 1.5 * block, f"prepare_qi peaked at {peak / block:.2f}x the (n, d) block"
    assert qi.cont_values is not None
    for col in columns:
        assert np.shares_memory(qi.cont_values, held.frame[col].to_numpy())
    assert not qi.cont_values.flags.writeable
    for name in ("cont_values", "cont_mean", "cont_std", "continuous"):
        assert getattr(qi, name).tobytes() == getattr(from_text, name).tobytes(), name
    assert qi.cont_values.shape == (n, d)


def test_prepare_qi_copies_a_callers_array() -> None:
    """A frame made on an array of the caller (``copy=False``) is copied, never shared: the
    caller may change the array after the run."""
    x = np.random.default_rng(7).standard_normal((100, 3))
    columns = ["a", "b", "c"]
    frame = pd.DataFrame(x, columns=columns, copy=False)
    qi = prepare_qi(Dataset(frame, roles_from_lists(columns, qi=columns)))
    assert qi.cont_values is not None
    assert not np.shares_memory(qi.cont_values, x)
    assert np.array_equal(qi.cont_values, x)
