"""Every kind of column a reader can return (microgui.core.table.column_types): a matrix generated
from the module's own list, kinds x release formats x role suggestions. Each kind has samples
(dtypes a reader or the API hands over); the test fails when a kind of the module has none.
Reports never hold a value of the column (the samples' text carries the marker "zq")."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import shlex
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.cli import main
from microgui.core.errors import ExportRefused
from microgui.core.io import read_table
from microgui.core.table.column_types import (
    FORMATS,
    KIND_NAMES,
    KINDS,
    kind,
    kind_of,
    release_columns,
)
from microgui.core.table.dataset import explain_roles
from microgui.core.table.roles import AttributeRole
from tests.cli_argv import protect_argv

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyreadstat = pytest.importorskip("pyreadstat")

N = 12
MARK = "zq"  # in every text-like sample value; never in a report
EXT = {"csv": ".csv", "excel": ".xlsx", "parquet": ".parquet", "spss": ".sav", "stata": ".dta"}
Maker = Callable[[int], pd.Series]


def _arrow(values: list[Any], arrow_type: Any) -> pd.Series:
    return pd.Series(values, dtype=pd.ArrowDtype(arrow_type))


#: kind -> {sample label: maker of a column of n cells with few distinct values}
SAMPLES: dict[str, dict[str, Maker]] = {
    "text": {
        "object": lambda n: pd.Series([f"{MARK}t{i % 3}" for i in range(n)], dtype=object),
        "string": lambda n: pd.Series([f"{MARK}t{i % 3}" for i in range(n)], dtype="string"),
        "arrow_string": lambda n: _arrow([f"{MARK}t{i % 3}" for i in range(n)], pa.string()),
    },
    "binary": {
        "utf8": lambda n: pd.Series([f"{MARK}b{i % 3}".encode() for i in range(n)], dtype=object),
        "not_utf8": lambda n: pd.Series(
            [bytes([0xFF, 0xFE, i % 3]) + MARK.encode() for i in range(n)], dtype=object
        ),
        "arrow_binary": lambda n: _arrow(
            [f"{MARK}{i % 3}".encode() for i in range(n)], pa.binary()
        ),
        "nul": lambda n: pd.Series([b"\x00" + MARK.encode() + bytes([i % 3]) for i in range(n)]),
    },
    "nested": {
        "list": lambda n: pd.Series([np.array([i % 3, 1]) for i in range(n)], dtype=object),
        "list_of_text": lambda n: pd.Series([[f"{MARK}{i % 2}"] for i in range(n)], dtype=object),
        "map": lambda n: pd.Series([[(f"{MARK}k", i % 3)] for i in range(n)], dtype=object),
        "struct": lambda n: pd.Series([{"x": i % 3, "y": MARK} for i in range(n)], dtype=object),
        "arrow_list": lambda n: _arrow([[i % 3, 1] for i in range(n)], pa.list_(pa.int64())),
        "arrow_struct": lambda n: _arrow(
            [{"a": i % 3} for i in range(n)], pa.struct([("a", pa.int64())])
        ),
        "arrow_map": lambda n: _arrow(
            [[("k", i % 3)] for i in range(n)], pa.map_(pa.string(), pa.int64())
        ),
    },
    "category": {
        "text": lambda n: pd.Series(pd.Categorical([f"{MARK}c{i % 3}" for i in range(n)])),
        "ordered": lambda n: pd.Series(
            pd.Categorical([f"{MARK}c{i % 3}" for i in range(n)], ordered=True)
        ),
        "numbers": lambda n: pd.Series(pd.Categorical([i % 3 for i in range(n)])),
    },
    "boolean": {
        "bool": lambda n: pd.Series([i % 2 == 0 for i in range(n)]),
        "nullable": lambda n: pd.Series(
            [i % 2 == 0 if i % 5 else None for i in range(n)], dtype="boolean"
        ),
    },
    "integer": {
        "int64": lambda n: pd.Series(np.arange(n) % 4),
        "Int64": lambda n: pd.Series([i % 4 if i % 5 else None for i in range(n)], dtype="Int64"),
        "arrow_int": lambda n: _arrow([i % 4 for i in range(n)], pa.int64()),
        "uint8": lambda n: pd.Series((np.arange(n) % 4).astype(np.uint8)),
    },
    "big_integer": {
        "int64": lambda n: pd.Series([2**60 + i % 3 for i in range(n)], dtype=np.int64),
        "uint64": lambda n: pd.Series([2**63 + i % 3 for i in range(n)], dtype=np.uint64),
        "Int64": lambda n: pd.Series([2**60 + i % 3 for i in range(n)], dtype="Int64"),
        "python_ints": lambda n: pd.Series([2**64 + i % 3 for i in range(n)], dtype=object),
    },
    "float": {
        "float64": lambda n: pd.Series((np.arange(n) % 4) / 3),
        "Float64": lambda n: pd.Series(
            [i % 4 / 2 if i % 5 else None for i in range(n)], dtype="Float64"
        ),
    },
    "decimal": {
        "object": lambda n: pd.Series(
            [decimal.Decimal(f"{i % 3}.25") for i in range(n)], dtype=object
        ),
        "arrow_decimal": lambda n: _arrow(
            [decimal.Decimal(f"{i % 3}.25") for i in range(n)], pa.decimal128(10, 2)
        ),
    },
    "complex": {"complex128": lambda n: pd.Series(np.arange(n) % 3 + 1j)},
    "date": {
        "object": lambda n: pd.Series([dt.date(2020, 1, 1 + i % 3) for i in range(n)]),
        "arrow_date": lambda n: _arrow(
            [dt.date(2020, 1, 1 + i % 3) for i in range(n)], pa.date32()
        ),
    },
    "datetime": {
        "naive": lambda n: pd.Series(pd.to_datetime([f"2020-01-0{1 + i % 3}" for i in range(n)])),
    },
    "datetime_tz": {
        "berlin": lambda n: pd.Series(
            pd.to_datetime([f"2020-0{1 + i % 3}-01" for i in range(n)]).tz_localize("Europe/Berlin")
        ),
        "arrow_utc": lambda n: _arrow(
            [dt.datetime(2020, 1, 1 + i % 3, tzinfo=dt.UTC) for i in range(n)],
            pa.timestamp("us", tz="UTC"),
        ),
    },
    "time": {"object": lambda n: pd.Series([dt.time(10, i % 3) for i in range(n)])},
    "timedelta": {
        "timedelta64": lambda n: pd.Series(pd.to_timedelta(np.arange(n) % 3, unit="h")),
    },
    "period": {"monthly": lambda n: pd.Series(pd.period_range("2020-01", periods=n, freq="M"))},
    "interval": {
        "numbers": lambda n: pd.Series(pd.interval_range(0, 3)[np.arange(n) % 3]),
    },
    "mixed": {
        "numbers_and_text": lambda n: pd.Series(
            [i % 3 if i % 2 else f"{MARK}{i % 3}" for i in range(n)], dtype=object
        ),
        "bytes_among_text": lambda n: pd.Series(
            [f"{MARK}{i % 3}".encode() if i % 2 else f"{MARK}{i % 3}" for i in range(n)],
            dtype=object,
        ),
    },
    "empty": {
        "none": lambda n: pd.Series([None] * n, dtype=object),
        "string": lambda n: pd.Series([None] * n, dtype="string"),
    },
}
CASES = [(k, label) for k in KIND_NAMES for label in SAMPLES.get(k, {})]
IDS = [f"{k}-{label}" for k, label in CASES]


def _frame(column: pd.Series, name: str = "col", n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"age": rng.integers(20, 70, n).astype(float), "income": rng.normal(100, 20, n).round(2)}
    )
    frame[name] = column
    return frame


def test_every_kind_has_samples_and_every_format() -> None:
    assert set(SAMPLES) == set(KIND_NAMES), "a kind without samples, or samples of no kind"
    assert all(SAMPLES[k] for k in KIND_NAMES)
    for each in KINDS:
        assert set(each.formats) == set(FORMATS)
        for treatment in each.formats.values():
            assert treatment.action in ("write", "convert", "refuse") and treatment.says


@pytest.mark.parametrize(("name", "label"), CASES, ids=IDS)
def test_kind_of_each_sample(name: str, label: str) -> None:
    assert kind_of(SAMPLES[name][label](N)) == name


# --- role suggestions -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "label"), CASES, ids=IDS)
def test_name_rule_applies_to_every_kind(name: str, label: str) -> None:
    """A column named like an identifier is one, whatever it holds (a binary column named
    email was passed through); a column with no value carries nothing."""
    frame = _frame(SAMPLES[name][label](N), "contact_email")
    spec = {s.name: s for s in explain_roles(frame)}["contact_email"].spec
    expected = AttributeRole.NON_CONFIDENTIAL if name == "empty" else AttributeRole.IDENTIFIER
    assert spec.role is expected


@pytest.mark.parametrize(("name", "label"), CASES, ids=IDS)
def test_kinds_that_are_no_quasi_identifier_pass_through_when_harmless(
    name: str, label: str
) -> None:
    suggestion = {s.name: s for s in explain_roles(_frame(SAMPLES[name][label](N)))}["col"]
    if not kind(name).qi:
        assert suggestion.spec.role is AttributeRole.NON_CONFIDENTIAL, suggestion.reason
    assert MARK not in suggestion.reason


def _emails(n: int) -> list[str]:
    return [f"person{i}.{MARK}@example.org" for i in range(n)]


#: kinds whose values can be e-mail addresses -> makers of such a column
EMAILS: dict[str, Maker] = {
    "text": lambda n: pd.Series(_emails(n), dtype=object),
    "binary": lambda n: pd.Series([e.encode() for e in _emails(n)], dtype=object),
    "nested-list": lambda n: pd.Series([[e] for e in _emails(n)], dtype=object),
    "nested-struct": lambda n: pd.Series([{"who": e} for e in _emails(n)], dtype=object),
    "nested-arrow": lambda n: _arrow([[e] for e in _emails(n)], pa.list_(pa.string())),
    "category": lambda n: pd.Series(pd.Categorical(_emails(n))),
}


@pytest.mark.parametrize("label", list(EMAILS))
def test_value_rule_applies_to_every_kind_holding_text(label: str) -> None:
    frame = _frame(EMAILS[label](N), "contact")
    suggestion = {s.name: s for s in explain_roles(frame)}["contact"]
    assert suggestion.spec.role is AttributeRole.IDENTIFIER, suggestion.reason
    assert MARK not in suggestion.reason


def test_a_struct_field_named_like_an_identifier_makes_an_identifier() -> None:
    column = pd.Series([{"phone": f"{i % 2}"} for i in range(N)], dtype=object)
    suggestion = {s.name: s for s in explain_roles(_frame(column, "contact"))}["contact"]
    assert suggestion.spec.role is AttributeRole.IDENTIFIER


def test_binary_values_distinct_on_every_record_are_an_identifier() -> None:
    column = pd.Series([bytes([0xFF, i]) for i in range(40)], dtype=object)
    suggestion = {s.name: s for s in explain_roles(_frame(column, "blob", 40))}["blob"]
    assert suggestion.spec.role is AttributeRole.IDENTIFIER


# --- release formats --------------------------------------------------------------------------


def _read_back(path: Path, fmt: str) -> pd.DataFrame:
    if fmt == "csv":
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    if fmt == "excel":
        return pd.read_excel(path, engine="openpyxl")
    if fmt == "parquet":
        return pd.read_parquet(path)
    reader = pyreadstat.read_sav if fmt == "spss" else pyreadstat.read_dta
    return reader(str(path))[0]


def _protected(frame: pd.DataFrame) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
        return microgui.protect(frame, qi=["age", "income"], k=3, seed=1)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "label"), CASES, ids=IDS)
def test_release_matrix(name: str, label: str, fmt: str, tmp_path: Path) -> None:
    """Every kind in every release format: written, converted (the report names the column
    under the treatment's key), or refused in one line naming the column with nothing
    written; never a traceback, never a value in the report."""
    treatment = kind(name).formats[fmt]
    column = SAMPLES[name][label](N)
    res = _protected(_frame(column))
    out = tmp_path / f"out{EXT[fmt]}"
    report_path = tmp_path / "out.report.json"
    if treatment.action == "refuse":
        with pytest.raises(ExportRefused) as info:
            res.export(out, keep_order=True, report=report_path)
        message = str(info.value)
        assert "\n" not in message and "'col'" in message and MARK not in message
        assert not out.exists() and not report_path.exists()
        assert list(tmp_path.iterdir()) == []  # no temporary file left either
        return
    res.export(out, keep_order=True, report=report_path)
    report_text = report_path.read_text()
    assert MARK not in report_text
    report = json.loads(report_text)
    listed = report.get(treatment.report_key) or ()
    if treatment.action == "convert":
        assert "col" in listed, (treatment.report_key, report.get(treatment.report_key))
    elif not treatment.may_convert:
        for key in ("columns_converted", "integers_written_as_text", "time_zone_dropped"):
            assert "col" not in (report.get(key) or ()), key
    back = _read_back(out, fmt)
    assert len(back) == N and "col" in back.columns
    if name in ("binary", "nested"):
        expected, _notes = release_columns(_frame(column)[["col"]], fmt)
        want = expected["col"].tolist()
        got = back["col"].tolist()
        if fmt == "parquet" and treatment.action == "write" and name == "binary":
            assert [bytes(v) for v in got] == [bytes(v) for v in column.tolist()]
        elif isinstance(want[0], str):
            assert [str(v) for v in got] == want  # the written text is the converted text


# --- the known defects, end to end through the command line ----------------------------------


def _people_parquet(path: Path, n: int = 30) -> None:
    """A Parquet file whose e-mail addresses and names are binary values (the defect of issue
    27: suggest-roles tagged them non-confidential and protect released them in clear)."""
    rng = np.random.default_rng(5)
    pq.write_table(
        pa.table(
            {
                "email": pa.array(
                    [f"p{i}@{MARK}.example.org".encode() for i in range(n)], pa.binary()
                ),
                "full_name": pa.array(
                    [f"Name{i} {MARK}{i}".encode() for i in range(n)], pa.binary()
                ),
                "age": pa.array(rng.integers(20, 70, n).astype(float)),
                "income": pa.array(rng.normal(3000, 500, n).round(2)),
            }
        ),
        path,
    )


def test_binary_emails_and_names_are_suggested_identifiers_and_not_released(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "people.parquet"
    _people_parquet(source)
    assert main(["suggest-roles", str(source)]) == 0
    printed = capsys.readouterr().out
    options = printed.strip().splitlines()[-1].removeprefix("as protect options: ")
    assert "--identifiers" in options and "email" in options and "full_name" in options
    for ext in (".csv", ".parquet", ".xlsx", ".sav", ".dta"):
        out = tmp_path / f"released{ext}"
        argv = protect_argv(source, out, "--method", "mdav", "-k", "3", "-q")
        assert main([*argv, *shlex.split(options)]) == 0, ext
        back = _read_back(out, {v: k for k, v in EXT.items()}[ext])
        assert "email" not in back.columns and "full_name" not in back.columns
        assert MARK.encode() not in out.read_bytes()
    capsys.readouterr()
    # tagged by no option, they are named in the "look identifying" note
    out = tmp_path / "untagged.csv"
    argv = protect_argv(source, out, "--method", "mdav", "-k", "3", "-q")
    assert main([*argv, "--qi", "age,income"]) == 0
    err = capsys.readouterr().err
    assert "look identifying" in err and "'email' (identifier)" in err
    assert "'full_name' (identifier)" in err and MARK not in err


@pytest.mark.parametrize("ext", [".xlsx", ".sav", ".zsav", ".dta", ".parquet", ".csv"])
def test_binary_not_utf8_and_nested_parquet_columns_release_in_every_format(
    ext: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Non-UTF-8 bytes, lists, maps and structs passed through crashed typed releases
    (UnicodeDecodeError, ValueError): written now (Parquet natively where pyarrow can), as
    text elsewhere, each conversion named in the report."""
    n = 12
    source = tmp_path / "nested.parquet"
    pq.write_table(
        pa.table(
            {
                "age": pa.array([float(20 + i % 5) for i in range(n)]),
                "income": pa.array([float(100 + i % 4) for i in range(n)]),
                "blob": pa.array([bytes([0xFF, 0xFE, i % 2]) for i in range(n)], pa.binary()),
                "tags": pa.array([[i % 2, 1] for i in range(n)], pa.list_(pa.int64())),
                "mp": pa.array(
                    [[("k", i % 2)] for i in range(n)], pa.map_(pa.string(), pa.int64())
                ),
                "st": pa.array([{"x": i % 2} for i in range(n)], pa.struct([("x", pa.int64())])),
            }
        ),
        source,
    )
    out = tmp_path / f"o{ext}"
    report = tmp_path / "o.report.json"
    argv = protect_argv(source, out, "--report", str(report), "--method")
    code = main([*argv, "mdav", "-k", "3", "--qi", "age,income", "-q"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    converted = json.loads(report.read_text()).get("columns_converted", {})
    if ext == ".parquet":
        assert set(converted) <= {"mp"}  # a map read back as pairs: JSON text
        assert pd.read_parquet(out)["blob"].tolist()[0] == b"\xff\xfe\x00"
    else:
        assert {"blob", "tags", "mp", "st"} <= set(converted)


#: Parquet column types (pyarrow) -> the kind the reader's column is
PARQUET_TYPES: dict[str, tuple[Any, Callable[[int], list[Any]], str]] = {
    "string": (pa.string(), lambda i: f"t{i % 3}", "text"),
    "large_string": (pa.large_string(), lambda i: f"t{i % 3}", "text"),
    "binary": (pa.binary(), lambda i: bytes([i % 3]), "binary"),
    "large_binary": (pa.large_binary(), lambda i: bytes([i % 3]), "binary"),
    "fixed_binary": (pa.binary(2), lambda i: bytes([0, i % 3]), "binary"),
    "list": (pa.list_(pa.int32()), lambda i: [i % 3], "nested"),
    "map": (pa.map_(pa.string(), pa.int64()), lambda i: [("k", i % 3)], "nested"),
    "struct": (pa.struct([("a", pa.int64())]), lambda i: {"a": i % 3}, "nested"),
    "dictionary": (pa.dictionary(pa.int8(), pa.string()), lambda i: f"c{i % 3}", "category"),
    "bool": (pa.bool_(), lambda i: i % 2 == 0, "boolean"),
    "int8": (pa.int8(), lambda i: i % 3, "integer"),
    "int64_big": (pa.int64(), lambda i: 2**60 + i % 3, "big_integer"),
    "uint64_big": (pa.uint64(), lambda i: 2**63 + i % 3, "big_integer"),
    "float32": (pa.float32(), lambda i: i / 4, "float"),
    "decimal": (pa.decimal128(9, 2), lambda i: decimal.Decimal(f"{i % 3}.5"), "decimal"),
    "date32": (pa.date32(), lambda i: dt.date(2020, 1, 1 + i % 3), "date"),
    "timestamp": (pa.timestamp("ms"), lambda i: dt.datetime(2020, 1, 1 + i % 3), "datetime"),
    "timestamp_tz": (
        pa.timestamp("us", tz="America/New_York"),
        lambda i: dt.datetime(2020, 1, 1 + i % 3, tzinfo=dt.UTC),
        "datetime_tz",
    ),
    "time64": (pa.time64("us"), lambda i: dt.time(1, i % 3), "time"),
    "duration": (pa.duration("s"), lambda i: dt.timedelta(seconds=i % 3), "timedelta"),
    "null": (pa.null(), lambda i: None, "empty"),
}


@pytest.mark.parametrize("label", list(PARQUET_TYPES))
def test_every_parquet_type_the_reader_returns_is_a_listed_kind(label: str, tmp_path: Path) -> None:
    arrow_type, value, expected = PARQUET_TYPES[label]
    n = 8
    source = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "age": pa.array([float(i) for i in range(n)]),
                "col": pa.array([value(i) for i in range(n)], arrow_type),
            }
        ),
        source,
    )
    frame = read_table(source).frame
    assert kind_of(frame["col"]) == expected
    explain_roles(frame)  # never a crash
    for fmt in FORMATS:  # converted or refused in one line, never a traceback
        try:
            converted, _notes = release_columns(frame, fmt)
        except ExportRefused as exc:
            assert "'col'" in str(exc) and kind(expected).formats[fmt].action == "refuse"
        else:
            assert kind_of(converted["col"]) in KIND_NAMES


@pytest.mark.parametrize("fmt", ["excel", "parquet", "spss", "stata"])
def test_release_writer_called_alone_applies_the_same_treatments(fmt: str, tmp_path: Path) -> None:
    """release_writer converts on its own (a caller other than export_run meets no crash)."""
    from microgui.core.release import release_writer

    frame = _frame(SAMPLES["binary"]["not_utf8"](N), "blob")
    frame["mp"] = SAMPLES["nested"]["map"](N)
    writer, notes = release_writer(frame, fmt, {}, text_input=False)
    writer.write(tmp_path / f"o{EXT[fmt]}")
    converted = notes.get("columns_converted", {})
    assert "mp" in converted and ("blob" in converted) == (fmt != "parquet")


def test_a_hundred_thousand_columns_are_looked_at_by_dtype_not_one_by_one() -> None:
    import time

    n = 100_000
    frames = {
        "text": pd.DataFrame(np.full((3, n), "x", dtype=object)),  # each column read
        "numbers": pd.DataFrame(np.ones((3, n))),
        "integers": pd.DataFrame(np.ones((3, n), dtype=np.int64)),
    }
    frames["integers"].iloc[0, 7] = 2**60
    for label, frame in frames.items():
        frame.columns = [f"c{i}" for i in range(n)]
        started = time.perf_counter()
        _out, notes = release_columns(frame, "spss")
        seconds = time.perf_counter() - started
        assert seconds < 10, (label, seconds)  # about 0.5 s here; 30-90 s column by column
        assert notes == ({"integers_written_as_text": ["c7"]} if label == "integers" else {})


@pytest.mark.parametrize("label", list(SAMPLES["big_integer"]))
def test_integers_beyond_2_53_are_suggested_as_exact_codes(label: str) -> None:
    """Distinct 64-bit values were merged by a float64 (an ordinal order of one category,
    printed as an option protect refused): codes now, or a key when distinct on most records."""
    frame = _frame(SAMPLES["big_integer"][label](N), "code")
    suggestion = {s.name: s for s in explain_roles(frame)}["code"]
    assert suggestion.spec.role is AttributeRole.QUASI_IDENTIFIER
    assert suggestion.spec.kind.value == "nominal" and "3 distinct" in suggestion.reason
    keys = pd.Series([2**60 + i for i in range(N)], dtype=np.int64)
    suggestion = {s.name: s for s in explain_roles(_frame(keys, "code"))}["code"]
    assert suggestion.spec.role is AttributeRole.IDENTIFIER


@pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")  # imaginary parts dropped
@pytest.mark.parametrize("method", ["p-sensitive", "t-closeness"])
@pytest.mark.parametrize(("name", "label"), [c for c in CASES if not kind(c[0]).qi], ids=str)
def test_kinds_that_are_no_quasi_identifier_can_be_confidential(
    name: str, label: str, method: str, tmp_path: Path
) -> None:
    """A confidential list column crashed p-sensitive and t-closeness (unhashable values), as
    did bytes that are no UTF-8, and complex numbers lost their imaginary part: each compared
    as a nominal value now (lists as JSON text); any refusal is one line."""
    from microgui.core.errors import MicroguiError

    frame = _frame(SAMPLES[name][label](N))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
            res = microgui.protect(
                frame, qi=["age", "income"], confidential=["col"], method=method, k=3, seed=1
            )
        res.export(tmp_path / "o.csv", keep_order=True, report=tmp_path / "o.json")
    except MicroguiError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize("held", ["binary", "list", "struct"])
def test_repeated_names_held_as_bytes_or_nested_values_are_not_passed_through(
    tmp_path: Path, held: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names that repeat (each on two records) are a quasi-identifier as text; held as bytes,
    lists or structs they cannot be one, and were passed through in clear (adversarial pass):
    suggested an identifier, and protect with untagged roles says it looks identifying."""
    names = [f"Alice Smith{i // 2}" for i in range(40)]
    column = {
        "binary": pa.array([n.encode() for n in names], pa.binary()),
        "list": pa.array([[n] for n in names], pa.list_(pa.string())),
        "struct": pa.array([{"a": n} for n in names], pa.struct([("a", pa.string())])),
    }[held]
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.table({"age": list(range(20, 60)), "zz": column}), path)
    frame = pd.read_parquet(path)
    suggestion = {s.name: s for s in explain_roles(frame)}["zz"]
    assert suggestion.spec.role is AttributeRole.IDENTIFIER, suggestion.reason
