"""Issue 18, item 1: the protected table released as Excel, Parquet, SPSS and Stata as well as
CSV, chosen by the output's extension, with the same release check, formula rules and atomic
write; SPSS/Stata value and variable labels kept.

Round trips: a labelled ``.sav`` and ``.dta`` in, the same format out: the labels are there, and
the values and row order are those of the CSV release of the same run.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from microgui.cli import main
from microgui.core.errors import ExportRefused
from microgui.core.io import read_table
from microgui.core.release import release_format, release_writer
from microgui.core.release.check import export_run
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.roles import roles_from_lists
from tests.cli_argv import protect_argv

FORMATS = [".csv", ".xlsx", ".parquet", ".sav", ".zsav", ".dta"]
VALUE_LABELS = {
    "sex": {1: "male", 2: "female"},
    "region": {1: "North", 2: "South", 3: "East", 4: "West"},
}
COLUMN_LABELS = {
    "id": "Record id",
    "sex": "Sex of respondent",
    "region": "Region",
    "age": "Age in years",
    "income": "Yearly income",
    "note": "Free note",
}


def _table(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "id": np.arange(n, dtype=float),
            "sex": rng.integers(1, 3, n).astype(float),
            "region": rng.integers(1, 5, n).astype(float),
            "age": rng.integers(18, 90, n).astype(float),
            "income": np.round(rng.lognormal(10, 1, n), 2),
            "note": [f"r{i}" for i in range(n)],
        }
    )


@pytest.fixture
def labelled(tmp_path: Path) -> dict[str, Path]:
    frame = _table()
    sav, dta = tmp_path / "in.sav", tmp_path / "in.dta"
    measure = {"sex": "nominal", "region": "nominal", "age": "scale", "income": "scale"}
    pyreadstat.write_sav(
        frame, sav, variable_value_labels=VALUE_LABELS, column_labels=COLUMN_LABELS,
        variable_measure=measure,
    )  # fmt: skip
    pyreadstat.write_dta(
        frame, dta, variable_value_labels=VALUE_LABELS, column_labels=COLUMN_LABELS
    )
    return {".sav": sav, ".dta": dta}


def _protect(source: Path, out: Path, *extra: str) -> int:
    return main(
        protect_argv(source, out, '--identifiers', 'id', '--qi', 'sex,region,age,income', '--nominal', 'sex,region', '-k', '5', '--method', 'mdav-generic', '--report', str(out.with_suffix('.json')), *extra)
    )  # fmt: skip


def _read_stat(path: Path) -> tuple[pd.DataFrame, object]:
    reader = pyreadstat.read_dta if path.suffix == ".dta" else pyreadstat.read_sav
    return reader(path)  # type: ignore[no-any-return]


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_labelled_round_trip_keeps_labels_values_and_order(
    labelled: dict[str, Path], tmp_path: Path, ext: str
) -> None:
    source = labelled[ext]
    assert _protect(source, tmp_path / f"out{ext}") == 0
    assert _protect(source, tmp_path / "out.csv") == 0
    released, meta = _read_stat(tmp_path / f"out{ext}")
    csv = pd.read_csv(tmp_path / "out.csv")
    assert list(released.columns) == ["sex", "region", "age", "income", "note"]  # id removed
    # value labels and variable labels are back
    for column, labels in VALUE_LABELS.items():
        assert {int(k): v for k, v in meta.variable_value_labels[column].items()} == labels
    assert meta.column_names_to_labels["income"] == "Yearly income"
    assert meta.column_names_to_labels["note"] == "Free note"
    # the same release as the CSV, row for row: codes mapped to their labels
    for column, labels in VALUE_LABELS.items():
        shown = released[column].map(lambda c, m=labels: m[int(c)])
        assert shown.tolist() == csv[column].tolist()
    np.testing.assert_allclose(released["age"], csv["age"])
    np.testing.assert_allclose(released["income"], csv["income"])
    assert released["note"].tolist() == csv["note"].tolist()
    report = json.loads((tmp_path / "out.json").read_text())  # the last run's: the CSV
    assert report["output_format"] == "csv"


@pytest.mark.parametrize("ext", [".xlsx", ".parquet", ".zsav"])
def test_other_formats_hold_the_same_release(
    labelled: dict[str, Path], tmp_path: Path, ext: str
) -> None:
    assert _protect(labelled[".sav"], tmp_path / "ref.csv") == 0
    assert _protect(labelled[".sav"], tmp_path / f"out{ext}") == 0
    csv = pd.read_csv(tmp_path / "ref.csv")
    report = json.loads((tmp_path / "out.json").read_text())
    assert (
        report["output_format"] == {"xlsx": "excel", "parquet": "parquet", "zsav": "spss"}[ext[1:]]
    )
    if ext == ".zsav":
        got, _meta = pyreadstat.read_sav(tmp_path / f"out{ext}", apply_value_formats=True)
    else:
        got = read_table(tmp_path / f"out{ext}").frame
    assert list(got.columns) == list(csv.columns)
    for column in csv.columns:
        if column in ("age", "income"):
            np.testing.assert_allclose(pd.to_numeric(got[column]), csv[column])
        else:
            assert [str(v) for v in got[column]] == [str(v) for v in csv[column]], column


@pytest.mark.parametrize("ext", FORMATS)
def test_release_check_refuses_every_format(tmp_path: Path, ext: str) -> None:
    # individual ranking masks each attribute on its own: no k-anonymity, so the release check
    # refuses it in every format, and nothing is written
    source = tmp_path / "in.csv"
    _table(60).to_csv(source, index=False)
    dataset = read_table(source)
    dataset = dataset.with_roles(
        roles_from_lists(list(dataset.frame.columns), qi=["age", "income"])
    )
    result = run_protection(dataset, RunSpec.make("individual-ranking", 3))
    out = tmp_path / f"out{ext}"
    with pytest.raises(ExportRefused, match="refused"):
        export_run(dataset, result, out, tmp_path / "out.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    report = export_run(dataset, result, out, override="internal test file, not released")
    assert report["export_override"]["reason"] and out.exists()


@pytest.mark.parametrize("ext", FORMATS)
def test_full_disk_leaves_the_old_file_and_no_temporary(
    labelled: dict[str, Path], tmp_path: Path, ext: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / f"out{ext}"
    out.write_bytes(b"the previous release")
    report = tmp_path / "out.json"
    report.write_text("{}")

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert _protect(labelled[".sav"], out) != 0
    assert out.read_bytes() == b"the previous release"
    assert report.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_extensions_choose_the_format() -> None:
    assert release_format("a.CSV") == "csv" and release_format("a.tsv") == "csv"
    assert release_format("a") == "csv" and release_format("a.out") == "csv"  # as before
    assert release_format("a.xlsx") == "excel" and release_format("a.pq") == "parquet"
    assert release_format("a.sav") == "spss" and release_format("a.zsav") == "spss"
    assert release_format("a.dta") == "stata"
    for old in ("a.xls", "a.XLSM"):
        with pytest.raises(ExportRefused, match=r"\.xlsx"):
            release_format(old)


def test_names_the_format_cannot_hold_are_refused_before_writing() -> None:
    frame = pd.DataFrame({"income per year": [1.0, 2.0], "1st": [3.0, 4.0]})
    with pytest.raises(ExportRefused, match="'income per year' is not a valid Stata"):
        release_writer(frame, "stata")
    with pytest.raises(ExportRefused, match="'income per year' is not a valid SPSS"):
        release_writer(frame, "spss")
    with pytest.raises(ExportRefused, match=r"record 2: a control character"):
        release_writer(pd.DataFrame({"t": ["ok", "bell\x07"]}), "excel")
    # a workbook's XML turns a carriage return into a line feed: refused, not changed
    with pytest.raises(ExportRefused, match=r"record 1: a control character \(or a carriage"):
        release_writer(pd.DataFrame({"t": ["line1\rline2"]}), "excel")


def test_values_outside_a_labelled_set_are_written_as_text_and_reported(tmp_path: Path) -> None:
    stat = {
        "codes": {"region": {"North": 1, "South": 2}},
        "value_labels": {"region": {1: "North", 2: "South"}},
        "column_labels": {"region": "Region"},
        "measures": {"region": "nominal"},
    }
    frame = pd.DataFrame({"region": ["North", "North-or-South", "South", None]})
    writer, notes = release_writer(frame, "spss", stat)
    assert notes["labels"]["values_outside_labels"] == {"region": 1}
    assert notes["labels"]["written_as_text"] == ["region"]
    writer.write(tmp_path / "x.sav")
    got, meta = pyreadstat.read_sav(tmp_path / "x.sav")
    assert got["region"].tolist()[:3] == ["North", "North-or-South", "South"]
    assert "region" not in (meta.variable_value_labels or {})
    assert meta.column_names_to_labels["region"] == "Region"
    # all inside: codes with their labels
    writer, notes = release_writer(frame.iloc[[0, 2, 3]], "stata", stat)
    assert notes["labels"]["value_labels_kept"] == ["region"]
    writer.write(tmp_path / "y.dta")
    got, meta = pyreadstat.read_dta(tmp_path / "y.dta")
    assert got["region"].tolist()[:2] == [1, 2] and meta.variable_value_labels["region"]


def test_workbook_formulas_are_neutralized_even_when_kept_for_text(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    frame = _table(30)
    frame["note"] = ['=HYPERLINK("x")'] * 30
    frame.to_csv(source, index=False)
    out = tmp_path / "out.xlsx"
    code = main(
        protect_argv(source, out, '--qi', 'age,income', '-k', '3', '--method', 'mdav', '--keep-formula-cells', '--report', str(tmp_path / 'r.json'))
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["neutralized_cells"] == {"note": 30}
    assert "neutralized" in report["formula_cells"]
    from openpyxl import load_workbook

    sheet = load_workbook(out).active
    assert sheet is not None
    assert all(cell.data_type == "s" for cell in sheet["F"][1:])


# --------------------------------------------------------------------------------------------
# CSV options: separator, decimal mark, encoding
# --------------------------------------------------------------------------------------------

EU = 'name,age,income,city\nAnna,34,1200.5,Zürich\nBo,45,2000.25,Genève\nCé,23,1500.75,"Lyon; FR"\n'


def _eu(tmp_path: Path) -> Path:
    source = tmp_path / "eu.csv"
    source.write_text(EU + "Di,51,3000.5,Köln\nEl,38,2500.25,Wien\nFa,29,1800.75,Bern\n")
    return source


def _eu_protect(source: Path, out: Path, *options: str) -> int:
    return main(
        protect_argv(source, out, '--qi', 'age,income', '-k', '3', '--method', 'mdav', '--report', str(out.with_suffix('.json')), *options)
    )  # fmt: skip


def test_csv_with_semicolons_decimal_commas_and_cp1252(tmp_path: Path) -> None:
    source = _eu(tmp_path)
    assert _eu_protect(source, tmp_path / "plain.csv") == 0
    out = tmp_path / "eu_out.csv"
    assert (
        _eu_protect(source, out, "--csv-sep", ";", "--csv-decimal", ",", "--csv-encoding", "cp1252")
        == 0
    )
    text = out.read_bytes().decode("cp1252")
    plain = (tmp_path / "plain.csv").read_text(encoding="utf-8")
    # the same release: separators and decimal marks swapped, the text cell with ";" quoted
    expected = [
        line.replace(",", "\0")
        .replace(".", ",")
        .replace("\0", ";")
        .replace("Lyon; FR", '"Lyon; FR"')
        for line in plain.replace('"Lyon; FR"', "Lyon; FR").splitlines()
    ]
    assert text.splitlines() == expected
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["csv_format"] == {"separator": ";", "decimal": ",", "encoding": "cp1252"}
    back = read_table(out).frame  # detected: ";" and cp1252
    assert back["city"].tolist()[:3] == ["Zürich", "Genève", "Lyon; FR"]


def test_tsv_gets_tabs_and_the_default_csv_is_unchanged(tmp_path: Path) -> None:
    source = _eu(tmp_path)
    assert _eu_protect(source, tmp_path / "a.csv") == 0
    assert _eu_protect(source, tmp_path / "b.tsv") == 0
    a = (tmp_path / "a.csv").read_text(encoding="utf-8").splitlines()
    b = (tmp_path / "b.tsv").read_text(encoding="utf-8").splitlines()
    assert b[0] == "name\tage\tincome\tcity" and b[3].endswith("\tLyon; FR")
    assert a[0] == "name,age,income,city" and a[3].endswith(",Lyon; FR")  # no quote needed


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--csv-sep", "ab"], "one character"),
        (["--csv-sep", ";", "--csv-decimal", ";"], "invalid choice"),
        (["--csv-decimal", ","], "also the separator"),
        (["--csv-encoding", "ebcdic"], "give one of"),
    ],
)
def test_bad_csv_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    source = _eu(tmp_path)
    if "invalid choice" in message:  # argparse's own refusal of a --csv-decimal choice
        with pytest.raises(SystemExit):
            _eu_protect(source, tmp_path / "o.csv", *options)
    else:
        assert _eu_protect(source, tmp_path / "o.csv", *options) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o.csv").exists()


def test_a_cell_the_encoding_cannot_hold_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "pl.csv"
    source.write_text("name,age,income\nAnna,34,1\nŁukasz,45,2\nBo,23,3\n", encoding="utf-8")
    assert _eu_protect(source, tmp_path / "o.csv", "--csv-encoding", "latin-1") != 0
    err = capsys.readouterr().err
    # the character's code point, not the character (issue 27: no value in a message)
    assert (
        "column 'name', record 2: a character (U+0141 LATIN CAPITAL LETTER L WITH STROKE) "
        "cannot be written in latin-1"
    ) in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pl.csv"]


def test_a_name_the_encoding_cannot_hold_is_not_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of characters the encoding cannot hold can be a whole name: never in the message."""
    source = tmp_path / "cn.csv"
    source.write_text("name,age,income\nAnna,34,1\n张伟,45,2\nBo,23,3\n", encoding="utf-8")
    assert _eu_protect(source, tmp_path / "o.csv", "--csv-encoding", "latin-1") != 0
    err = capsys.readouterr().err
    assert "U+5F20" in err and "张" not in err and "伟" not in err


def test_csv_options_with_another_format_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eu_protect(_eu(tmp_path), tmp_path / "o.xlsx", "--csv-sep", ";") != 0
    assert "are for a CSV output" in capsys.readouterr().err


def test_full_disk_with_csv_options_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "o.csv"
    out.write_bytes(b"old")

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert _eu_protect(_eu(tmp_path), out, "--csv-sep", ";", "--csv-encoding", "utf-16") != 0
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# --------------------------------------------------------------------------------------------
# every column type a reader returns, through every format (the defect class, not one case)
# --------------------------------------------------------------------------------------------


def _odd_columns(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "income": rng.normal(1000, 100, n),
            "when": pd.date_range("2024-01-01", periods=n, freq="D"),
            "how_long": pd.to_timedelta(np.arange(n), unit="h"),
            "flag": [True, False] * (n // 2),
            "count": pd.array(list(range(n - 1)) + [None], dtype="Int64"),
            "label": pd.Categorical(["a", "b", "c"] * (n // 3)),
            "text": ["x", None, "=1+1", "ünï"] * (n // 4),
            "mixed": [1, "two", 3.5, None] * (n // 4),
            "money": [__import__("decimal").Decimal("1.10")] * n,
        }
    )


@pytest.mark.parametrize("ext", FORMATS)
def test_every_column_type_goes_out_or_is_refused_in_one_sentence(tmp_path: Path, ext: str) -> None:
    from microgui.core.table.dataset import Dataset

    frame = _odd_columns()
    roles = roles_from_lists(list(frame.columns), qi=["age", "income"])
    dataset = Dataset.from_frame(frame, roles)
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    out = tmp_path / f"out{ext}"
    try:
        report = export_run(dataset, result, out)
    except ExportRefused as exc:
        message = str(exc)
        assert "\n" not in message and "Traceback" not in message
        assert not out.exists()
        pytest.fail(f"{ext}: refused: {message}")  # every type here should go out
    assert out.exists() and report["output_format"]
    back = read_table(out).frame
    assert len(back) == len(frame) and list(back.columns) == list(frame.columns)


# --------------------------------------------------------------------------------------------
# the adversarial review's findings (issue 18): each broke the first version
# --------------------------------------------------------------------------------------------


def test_number_columns_of_a_csv_input_go_out_as_numbers(tmp_path: Path) -> None:
    source = tmp_path / "r.csv"
    source.write_text(
        "age,income,zip,price,code\n21,1000.5,01234,1.50,1.1\n22,2000.25,02345,2.50,1.10\n"
        "23,,03456,3.50,2\n"
    )
    args = ["--qi", "age", "--confidential", "income", "-k", "3", "--method", "mdav"]
    for ext in (".sav", ".dta", ".xlsx", ".parquet"):
        out = tmp_path / f"o{ext}"
        assert main(["protect", str(source), "-o", str(out), "--keep-order", *args]) == 0
        if ext in (".sav", ".dta"):
            got, _meta = _read_stat(out)
        elif ext == ".xlsx":
            got = pd.read_excel(out, engine="openpyxl", dtype={"zip": str, "code": str})
        else:
            got = pd.read_parquet(out)
        assert pd.api.types.is_float_dtype(got["income"]), ext
        assert got["income"].tolist()[:2] == [1000.5, 2000.25] and pd.isna(got["income"][2])
        assert [str(v) for v in got["zip"]] == ["01234", "02345", "03456"], ext  # text kept
        # a fixed number of decimals is a number (its display format keeps 2 decimals in
        # SPSS/Stata); 1.1 and 1.10 in one column are two codes: text
        assert got["price"].tolist() == [1.5, 2.5, 3.5], ext
        assert [str(v) for v in got["code"]] == ["1.1", "1.10", "2"], ext
        if ext == ".sav":
            assert _meta.original_variable_types["price"] == "F19.2"
    out = tmp_path / "eu.csv"
    assert main(protect_argv(source, out, *args, "--csv-sep", ";", "--csv-decimal", ",")) == 0
    assert out.read_text().splitlines()[1].split(";")[1] == "1000,5"
    # the decimal mark reaches every number column, its digits as written (1.50 -> 1,50)
    assert out.read_text().splitlines()[1].split(";")[3:] == ["1,50", "1.1"]


def test_integers_beyond_2_53_are_not_rounded(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"hh": np.array([12345678901234567, 12345678901234568, 3], dtype=np.int64)}
    )
    for fmt, path in (("spss", "a.sav"), ("stata", "a.dta"), ("excel", "a.xlsx")):
        writer, notes = release_writer(frame, fmt)
        assert notes["integers_written_as_text"] == ["hh"]
        writer.write(tmp_path / path)
    got, _meta = pyreadstat.read_sav(tmp_path / "a.sav")
    assert got["hh"].tolist() == ["12345678901234567", "12345678901234568", "3"]
    writer, notes = release_writer(frame, "parquet")
    writer.write(tmp_path / "a.parquet")
    assert pd.read_parquet(tmp_path / "a.parquet")["hh"].tolist() == frame["hh"].tolist()


def test_spss_dates_stay_dates(tmp_path: Path) -> None:
    import datetime as dt

    frame = pd.DataFrame(
        {"age": [30.0, 31.0, 32.0], "born": [dt.date(1990, 1, 1), dt.date(1991, 2, 3), None]}
    )
    source = tmp_path / "d.sav"
    pyreadstat.write_sav(frame, source)
    out = tmp_path / "o.sav"
    assert main(protect_argv(source, out, "--qi", "age", "-k", "3", "--method", "mdav")) == 0
    _got, meta = pyreadstat.read_sav(out)
    assert meta.original_variable_types["born"].startswith("DATE")


def test_formula_like_labels_keep_their_codes_and_are_neutralized(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": [30.0, 31.0, 32.0, 40.0, 41.0, 42.0], "frm": [1.0, 2.0] * 3})
    source = tmp_path / "f.sav"
    pyreadstat.write_sav(
        frame, source, variable_value_labels={"frm": {1: "- none", 2: "@home"}},
        column_labels={"age": "=1+1 age"},
    )  # fmt: skip
    out = tmp_path / "o.sav"
    code = main(
        protect_argv(source, out, '--qi', 'age', '-k', '3', '--method', 'mdav', '--report', str(tmp_path / 'r.json'))
    )  # fmt: skip
    assert code == 0
    got, meta = pyreadstat.read_sav(out)
    assert got["frm"].tolist() == [1.0, 2.0] * 3  # codes, not text
    assert meta.variable_value_labels["frm"] == {1.0: "'- none", 2.0: "'@home"}
    assert meta.column_names_to_labels["age"] == "'=1+1 age"
    labels = json.loads((tmp_path / "r.json").read_text())["labels"]
    assert labels["values_outside_labels"] == {} and labels["labels_neutralized"] == 3


@pytest.mark.parametrize("sep", ["=", "+", "-", "@", "\x01", "'"])
def test_separators_a_spreadsheet_would_run_are_refused(sep: str) -> None:
    from microgui.core.release import CsvOptions

    with pytest.raises(ExportRefused, match="--csv-sep"):
        CsvOptions.make(sep)


def test_text_longer_than_the_format_holds_and_nul_are_refused() -> None:
    long = pd.DataFrame({"t": ["a", "x" * 40_000]})
    with pytest.raises(ExportRefused, match=r"record 2: text longer than an Excel workbook"):
        release_writer(long, "excel")
    with pytest.raises(ExportRefused, match=r"longer than a Stata file holds \(2,045 bytes\)"):
        release_writer(pd.DataFrame({"t": ["é" * 1_100]}), "stata")
    for fmt in ("excel", "parquet", "spss", "stata"):
        with pytest.raises(ExportRefused, match="a NUL character"):
            release_writer(pd.DataFrame({"t": ["ok", "a\x00b"]}), fmt)


def test_names_unicode_reserved_and_case_duplicates() -> None:
    frame = pd.DataFrame({"Größe": [1.0], "âge": [2.0]})
    release_writer(frame, "spss")
    release_writer(frame, "stata")
    with pytest.raises(ExportRefused, match="'in' is not a valid Stata"):
        release_writer(pd.DataFrame({"in": [1.0]}), "stata")
    with pytest.raises(ExportRefused, match="'BY' is not a valid SPSS"):
        release_writer(pd.DataFrame({"BY": [1.0]}), "spss")
    with pytest.raises(ExportRefused, match="SPSS ignores case"):
        release_writer(pd.DataFrame({"age": [1.0], "AGE": [2.0]}), "spss")
    with pytest.raises(ExportRefused, match="not a valid SPSS"):
        release_writer(pd.DataFrame({"#x": [1.0]}), "spss")


def test_tsv_keeps_an_explicit_comma_and_encoding_aliases() -> None:
    from microgui.core.release import CsvOptions

    assert CsvOptions.make(",").for_name("a.tsv").sep == ","
    assert CsvOptions.make().for_name("a.tsv").sep == "\t"
    assert CsvOptions.make(encoding="latin1").encoding == "latin-1"
    assert CsvOptions.make(encoding="UTF_8").encoding == "utf-8"


def test_spss_user_missing_codes_go_back_where_the_column_passes_through(tmp_path: Path) -> None:
    """SPSS user-missing values (-99 "refused"): read as missing (never averaged), written back
    with their declaration in a .sav release in the columns passed through unchanged; a
    quasi-identifier's are not (its cells are aggregates), and the report says which."""
    rng = np.random.default_rng(4)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": np.round(rng.lognormal(9, 1, n), 2),
            "happy": rng.choice([1.0, 2.0, 3.0], n),
            "note": rng.choice(["ok", "fine", "NR"], n),
        }
    )
    frame.loc[[3, 17, 40], "happy"] = -99.0
    frame.loc[[5], "happy"] = -98.0
    source = tmp_path / "s.sav"
    pyreadstat.write_sav(
        frame, source,
        missing_ranges={"happy": [{"lo": -99.0, "hi": -98.0}], "note": ["NR"]},
        variable_value_labels={"happy": {1: "no", 2: "so so", 3: "yes", -99: "refused"}},
    )  # fmt: skip
    dataset = read_table(source)
    assert dataset.frame["happy"].isna().sum() == 4  # read as missing, not as -99
    assert dataset.frame["note"].isna().sum() == int((frame["note"] == "NR").sum())
    out = tmp_path / "o.sav"
    code = main(protect_argv(source, out, '--qi', 'age', '--method', 'mdav', '-k', '3', '--confidential', 'happy', '--report', str(tmp_path / 'r.json'), '-q'))  # fmt: skip
    assert code == 0
    back, meta = pyreadstat.read_sav(out, user_missing=True)
    assert back["happy"].tolist() == frame["happy"].tolist()  # -99/-98 back, row for row
    assert back["note"].tolist() == frame["note"].tolist()
    assert meta.missing_ranges["happy"] == [{"lo": -99.0, "hi": -98.0}]
    assert [r["lo"] for r in meta.missing_ranges["note"]] == ["NR"]
    labels = json.loads((tmp_path / "r.json").read_text())["labels"]
    assert labels["user_missing_kept"] == ["happy", "note"]
    # a quasi-identifier with user-missing cells: its declaration is not carried
    code = main(protect_argv(source, tmp_path / 'q.sav', '--qi', 'age,happy', '--method', 'mdav-generic', '-k', '3', '--missing-as-category', 'happy', '--ordinal', 'happy', '--report', str(tmp_path / 'q.json'), '-q'))  # fmt: skip
    assert code == 0
    labels = json.loads((tmp_path / "q.json").read_text())["labels"]
    assert (
        labels["user_missing_dropped"] == ["happy"] and "happy" not in labels["user_missing_kept"]
    )


def test_stata_extended_missing_values_go_back_in_a_dta_release(tmp_path: Path) -> None:
    """Stata's .a to .z ("not asked", "refused"): read as missing, written back as the same
    letters in a .dta release where the column passes through; never into an SPSS file."""
    rng = np.random.default_rng(5)
    n = 40
    happy = rng.choice([1.0, 2.0, 3.0], n).astype(object)
    happy[[2, 11]] = "a"
    happy[[20]] = "r"
    frame = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float), "happy": happy})
    source = tmp_path / "s.dta"
    pyreadstat.write_dta(frame, source, missing_user_values={"happy": ["a", "r"]})
    dataset = read_table(source)
    assert dataset.frame["happy"].isna().sum() == 3
    assert pd.api.types.is_numeric_dtype(dataset.frame["happy"].dtype)
    out = tmp_path / "o.dta"
    code = main(protect_argv(source, out, '--qi', 'age', '--method', 'mdav', '-k', '3', '--confidential', 'happy', '--report', str(tmp_path / 'r.json'), '-q'))  # fmt: skip
    assert code == 0
    back, meta = pyreadstat.read_dta(out, user_missing=True)
    assert back["happy"].tolist() == list(happy)
    assert sorted(meta.missing_user_values["happy"]) == ["a", "r"]
    assert json.loads((tmp_path / "r.json").read_text())["labels"]["user_missing_kept"] == ["happy"]
    sav = tmp_path / "o.sav"  # into SPSS: system-missing, no letters
    assert main(protect_argv(source, sav, '--qi', 'age', '--method', 'mdav', '-k', '3', '--confidential', 'happy', '-q')) == 0  # fmt: skip
    back, _meta = pyreadstat.read_sav(sav, user_missing=True)
    assert back["happy"].isna().sum() == 3


def test_a_missing_category_keeps_the_value_labels(tmp_path: Path) -> None:
    """An ordinal with missing cells released with --missing-as-category: its empty cells are
    system-missing in the .sav, not 'values outside the labels' (which wrote the column as text
    without its labels; found by a newcomer tour)."""
    rng = np.random.default_rng(6)
    n = 60
    frame = pd.DataFrame(
        {"age": rng.integers(18, 90, n).astype(float), "educ": rng.choice([1.0, 2.0, 3.0], n)}
    )
    frame.loc[rng.choice(n, 25, replace=False), "educ"] = np.nan  # some groups' median
    source = tmp_path / "e.sav"
    pyreadstat.write_sav(
        frame, source, variable_value_labels={"educ": {1: "low", 2: "mid", 3: "high"}}
    )
    out = tmp_path / "o.sav"
    code = main(protect_argv(source, out, '--qi', 'age,educ', '--ordinal', 'educ=low<mid<high', '--missing-as-category', 'educ', '--method', 'mdav-generic', '-k', '3', '--report', str(tmp_path / 'r.json'), '-q'))  # fmt: skip
    assert code == 0
    labels = json.loads((tmp_path / "r.json").read_text())["labels"]
    assert labels["values_outside_labels"] == {} and labels["written_as_text"] == []
    back, meta = pyreadstat.read_sav(out)
    assert {int(k): v for k, v in meta.variable_value_labels["educ"].items()} == {
        1: "low", 2: "mid", 3: "high",
    }  # fmt: skip
    assert set(back["educ"].dropna()) <= {1.0, 2.0, 3.0}


def test_a_date_quasi_identifier_goes_back_as_dates(tmp_path: Path) -> None:
    """A date column of a .sav, made an ordinal quasi-identifier, is released as its
    categories' text by the aggregation; a typed release writes them as dates again (it came
    out as A19 text; found by a newcomer tour)."""
    rng = np.random.default_rng(7)
    n = 40
    days = pd.to_datetime("2000-01-01") + pd.to_timedelta(rng.integers(0, 5, n), unit="D")
    frame = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float), "seen": days})
    source = tmp_path / "d.sav"
    pyreadstat.write_sav(frame, source)
    for ext in (".sav", ".dta", ".parquet"):
        out = tmp_path / f"o{ext}"
        code = main(protect_argv(source, out, '--qi', 'age,seen', '--ordinal', 'seen', '--method', 'mdav-generic', '-k', '4', '-q'))  # fmt: skip
        assert code == 0, ext
        back = pd.read_parquet(out) if ext == ".parquet" else _read_stat(out)[0]
        assert pd.api.types.is_datetime64_any_dtype(back["seen"]), (ext, back["seen"].dtype)
        assert set(back["seen"]) <= set(days)


# --- a second adversarial review (each failed before its fix) ---------------------------------
def test_typed_inputs_keep_their_text_columns_and_codes(tmp_path: Path) -> None:
    """Only a text file's number columns are typed: an SPSS A-format or Parquet string column of
    digits is text on purpose (a ZIP code), and an SPSS text variable of digits with a text
    missing code ('XX') crashed the release."""
    frame = pd.DataFrame(
        {
            "age": [20.0, 30.0, 40.0, 50.0, 60.0, 70.0],
            "zip": ["60601", "60602", "60601", "60603", "60604", "60602"],
            "s": ["1", "2", "XX", "1", "2", "2"],
        }
    )
    sav = tmp_path / "t.sav"
    pyreadstat.write_sav(frame, sav, missing_ranges={"s": ["XX"]})
    out = tmp_path / "o.sav"
    assert main(protect_argv(sav, out, '--qi', 'age', '--method', 'mdav', '-k', '2', '-q')) == 0  # fmt: skip
    back, meta = pyreadstat.read_sav(out, user_missing=True)
    assert (
        back["zip"].tolist() == frame["zip"].tolist() and back["s"].tolist() == frame["s"].tolist()
    )
    assert meta.original_variable_types["zip"].startswith("A")
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet)
    assert main(protect_argv(parquet, tmp_path / 'o.parquet', '--qi', 'age', '--method', 'mdav', '-k', '2', '-q')) == 0  # fmt: skip
    assert pd.read_parquet(tmp_path / "o.parquet")["zip"].tolist() == frame["zip"].tolist()


def test_versions_and_missing_dots_stay_as_written(tmp_path: Path) -> None:
    source = tmp_path / "v.csv"
    source.write_text(
        "age,version,x\n20,3.9,1.5\n30,3.10,.\n40,3.11,2.25\n50,3.9,3.5\n60,3.10,4.5\n70,3.11,5.5\n"
    )
    args = ["--qi", "age", "--method", "mdav", "-k", "2", "-q"]
    assert (
        main(["protect", str(source), "-o", str(tmp_path / "o.parquet"), "--keep-order", *args])
        == 0
    )
    got = pd.read_parquet(tmp_path / "o.parquet")
    assert got["version"].tolist() == ["3.9", "3.10", "3.11", "3.9", "3.10", "3.11"]
    assert got["x"].tolist()[0] == 1.5 and pd.isna(got["x"].tolist()[1])
    eu = tmp_path / "eu.csv"
    assert main(protect_argv(source, eu, '--csv-sep', ';', '--csv-decimal', ',', *args)) == 0  # fmt: skip
    rows = [line.split(";") for line in eu.read_text().splitlines()[1:]]
    assert [r[1] for r in rows][:3] == ["3.9", "3.10", "3.11"]  # codes: as written
    assert [r[2] for r in rows][:3] == ["1,5", ".", "2,25"]  # the missing '.' is no point


def test_zoned_times_go_to_spss_as_local_time_and_summer_time_does_not_crash(
    tmp_path: Path,
) -> None:
    when = pd.date_range("2020-01-01", periods=12, freq="MS", tz="Europe/Berlin")
    frame = pd.DataFrame({"age": np.arange(20.0, 32.0), "d": when, "seen": when})
    source = tmp_path / "z.parquet"
    frame.to_parquet(source)
    for ext in (".parquet", ".sav"):  # d an ordinal quasi-identifier across summer time
        out = tmp_path / f"o{ext}"
        code = main(protect_argv(source, out, '--qi', 'age,d', '--ordinal', 'd', '--method', 'mdav-generic', '-k', '2', '-q', '--report', str(tmp_path / f'r{ext}.json')))  # fmt: skip
        assert code == 0, ext
    back, _meta = pyreadstat.read_sav(tmp_path / "o.sav")
    assert back["seen"].tolist()[0] == pd.Timestamp("2020-01-01 00:00")  # midnight in Berlin
    report = json.loads((tmp_path / "r.sav.json").read_text())
    assert "seen" in report["time_zone_dropped"]


def test_display_formats_fit_the_numbers(tmp_path: Path) -> None:
    source = tmp_path / "f.csv"
    source.write_text(
        "age,n,big\n20,1,100000000.5\n30,,2.25\n40,3,3.5\n50,4,4.5\n60,5,5.25\n70,6,6.75\n"
    )
    out = tmp_path / "f.sav"
    assert main(protect_argv(source, out, '--qi', 'age', '--method', 'mdav', '-k', '2', '-q')) == 0  # fmt: skip
    _back, meta = pyreadstat.read_sav(out)
    assert meta.original_variable_types["n"].endswith(".0")  # whole numbers with a blank
    width = int(meta.original_variable_types["big"][1:].split(".")[0])
    assert width >= len("100000000.50")
