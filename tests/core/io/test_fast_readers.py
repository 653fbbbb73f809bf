"""Issue 17, fast and lean loading: the pyarrow CSV reader against the csv module's, progress and
cancel while loading, and the calamine Excel reader against openpyxl's.

The reference of the CSV reader is :func:`microgui.core.io._read_csv_with_csv_module`, the
reader before issue 17 (the whole file decoded, every record a Python list): on every input,
including broken ones, both give the same frame (cells, dtypes, column names) and the same
``attrs`` (file name, record lines), or the same one-line message. Pieces are made tiny in some
tests so that records, quotes and ``\\r\\n`` cross the boundaries between pieces.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microgui.cli as cli
from microgui.core import io as mio
from microgui.core.errors import InvalidInput
from microgui.core.io import csv as csv_io
from microgui.core.io import excel as excel_io
from microgui.core.io import read_frame, read_table
from microgui.core.progress import RunCancelled
from microgui.core.table.dataset import LINES_ATTR, SOURCE_ATTR, file_line

BAD = Path(__file__).resolve().parents[2] / "data" / "bad"


# --- helpers -----------------------------------------------------------------------------------


@contextmanager
def pieces(size: int | None) -> Iterator[None]:
    """Read CSVs in pieces of ``size`` bytes (None: as shipped)."""
    if size is None:
        yield
        return
    with (
        mock.patch.object(csv_io, "_PIECE_MIN", size),
        mock.patch.object(csv_io, "_PIECE_MAX", size),
    ):
        yield


def outcome(read: object, path: Path) -> tuple[pd.DataFrame | None, str | None]:
    try:
        return read(path), None  # type: ignore[operator]
    except InvalidInput as exc:
        return None, str(exc)


def assert_same_reading(
    path: Path, piece: int | None = None, *, fast_path: bool = False
) -> pd.DataFrame | None:
    """The fast reader and the csv module's agree on ``path``: frame and attrs, or message.
    ``fast_path``: pyarrow read it all (the csv module was not asked)."""
    fallback = mock.patch.object(
        csv_io, "_read_with_csv_module", wraps=csv_io._read_with_csv_module
    )
    with pieces(piece), fallback as asked:
        fast, fast_error = outcome(mio._read_csv, path)
    if fast_path:
        assert asked.call_count == 0, "the csv module read a well-formed file"
    reference, reference_error = outcome(mio._read_csv_with_csv_module, path)
    assert fast_error == reference_error
    if reference is None:
        return None
    assert fast is not None
    pd.testing.assert_frame_equal(fast, reference, check_exact=True)
    assert list(fast.columns) == list(reference.columns)  # names exactly, order included
    assert fast.attrs == reference.attrs
    return fast


def write(tmp_path: Path, data: bytes, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def python_lines(text: str) -> list[int]:
    """Independently: the 1-based line on which each non-blank record of a well-formed CSV
    starts (lines split at \\n, \\r\\n and a lone \\r, quotes followed by hand)."""
    starts: list[int] = []
    line, quoted, start_of_record, field_start = 1, False, True, True
    record_line, content = 1, False
    i = 0
    while i < len(text):
        ch = text[i]
        if start_of_record:
            record_line, content, start_of_record = line, False, False
        if quoted:
            if ch == '"':
                if text[i + 1 : i + 2] == '"':
                    i += 1
                else:
                    quoted = False
            elif ch in "\r\n":
                if ch == "\r" and text[i + 1 : i + 2] == "\n":
                    i += 1
                line += 1
            content = True
        elif ch in "\r\n":
            if ch == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
            line += 1
            if content:
                starts.append(record_line)
            start_of_record, field_start = True, True
        else:
            if ch == '"' and field_start:
                quoted = True
            field_start = ch == ","
            content = True
        i += 1
    if not start_of_record and content:
        starts.append(record_line)
    return starts


# --- named odd inputs ------------------------------------------------------------------------------

CASES: dict[str, bytes] = {
    "quotes": b'a,b\n"x ""y"" z",1\n"",2\n"""",3\n"a""",""""\n',
    "embedded newlines": b'id,note\n1,"two\nlines"\n2,"three\n\nlines"\n3,plain\n',
    "crlf": b'id,note\r\n1,"two\r\nlines"\r\n2,plain\r\n\r\n',
    "cr only": b"a,b\r1,2\r\r3,4\r",
    "mixed line ends": b'a,b\n1,2\r\n3,4\r5,"6\r7"\n\r\n8,9',
    "blank lines": b"\n\na,b\n\n1,2\n\n\n3,4\n\n",
    "no final line end": b"a,b\n1,2\n3,4",
    "trailing delimiter": b"a,b,\n1,2,\n3,4,\n",
    "semicolon": b"id;weight;city\n1;72,5;Lyon\n2;80,25;Nice\n",
    "tab": b"a\tb c\td\n1\tx, y\t3\n",
    "pipe": b"a|b\n1|2\n",
    "excel sep line": b"sep=;\na;b\n1,5;2\n",
    "excel sep line crlf": b"sep=;\r\na;b\r\n1,5;2\r\n",
    "latin-1": "name;city\nMüller;São Paulo\nGöran;Malmö\n".encode("cp1252"),
    "undefined cp1252 byte": b"a,b\nx\x81y,1\n",
    "utf-16": b"\xff\xfe" + "name,city\nÅsa,Tromsø\n".encode("utf-16-le"),
    "utf-16 be": b"\xfe\xff" + "name,city\nÅsa,Tromsø\n".encode("utf-16-be"),
    "bom": "\ufeffname,city\nÅsa,Tromsø\n".encode(),
    "double bom": "\ufeff\ufeffname,city\nÅsa,Tromsø\n".encode(),
    "bom inside a value": "a,b\n1,\ufeffx\n".encode(),
    "odd column names": '"a,b"," c ","d""e","f\ng",Возраст,李\n1,2,3,4,5,6\n'.encode(),
    "empty cells": b"a,b,c\n,,\n1,,\n,,3\n",
    "na-like text": b"a,b\nNA,\nnan,null\nNone,.\n",
    "leading zeros": b"code,zip,n\n007,02134,0\n010,00000,-0\n0.50,+1,1e3\n",
    "spaces": b"a,b\n 1 , x \n\t2\t,  \n",
    "one column": b'value\n1\n\n""\n2\n',
    "quote inside a value": b'a,b\n5\'11",x\nab"c,d\n',
    "quote after a space": b'a,b\n1, "x,y"\n',
    "nul in the middle": b"a,b\n" + b"1,2\n" * 20000 + b"x,\x00y\n" + b"3,4\n" * 20000,
    "unicode line separators": "a,b\n1,x\u2028y\n2,\x85z\x0b\n".encode(),
    "only a sep line": b"sep=;\n",
    "ragged": b"a,b,c\n1,2,3\n4,5\n6,7,8,9\n",
    "ragged after a quoted newline": b'a;b\n1;"x\ny"\n2\n',
    "text after a closing quote": b'a,b\n1,2\n"x"y,3\n',
    "open quote at the end": b'a,b\n1,"2\n3,4\n',
    "open quote inside a value": b'a,b\nx,"y\n"z,w\n',
    "duplicate names": b"age,sex,age\n1,2,3\n",
    "blank name": b"a, ,c\n1,2,3\n",
    "header only": b"a,b,c\n",
    "blank file": b"\n\r\n  \n",
    "binary": b"\x00\x01\x02garbage\x00",
}


#: The cases the csv module is asked to read: errors and quotes pyarrow may read otherwise.
CSV_MODULE_CASES = {
    "quote inside a value",
    "quote after a space",
    "ragged",
    "ragged after a quoted newline",
    "text after a closing quote",
    "open quote at the end",
    "open quote inside a value",
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("piece", [None, 1, 3, 7])
def test_odd_inputs_read_as_the_csv_module_reads_them(
    tmp_path: Path, name: str, piece: int | None
) -> None:
    if name == "nul in the middle" and piece is not None:
        pytest.skip("160 kB in tiny pieces: slow; the pieces are tested on the other cases")
    fast = name not in CSV_MODULE_CASES
    assert_same_reading(write(tmp_path, CASES[name]), piece, fast_path=fast)


def test_the_cells_and_lines_are_the_files(tmp_path: Path) -> None:
    """Not only the same as the reference: the cells are the file's text and the lines are
    where the records start (an independent count)."""
    text = 'a,b\r\n\r\n"x\r\ny",007\n\n"",\r"p""q",\n1,2'
    frame = read_frame(write(tmp_path, text.encode()))
    assert frame["a"].tolist() == ["x\r\ny", "", 'p"q', "1"]
    assert frame["b"].tolist() == ["007", "", "", "2"]
    assert [file_line(frame, i) for i in range(len(frame))] == python_lines(text)[1:]
    assert frame.attrs[SOURCE_ATTR] == "t.csv"


def test_very_long_fields(tmp_path: Path) -> None:
    long = "x" * 60_000  # under the csv module's field limit (131,072), over a first piece
    data = f'a,b\n1,"{long}\n{long}"\n2,{long}\n'.encode()
    frame = assert_same_reading(write(tmp_path, data))
    assert frame is not None and frame["b"].str.len().tolist() == [120_001, 60_000]


def test_values_spanning_lines_in_pieces_of_several_blocks(tmp_path: Path) -> None:
    """Long records with quoted line breaks: pieces of megabytes, which pyarrow parses in
    blocks; a block must never end inside a quoted value (newlines_in_values)."""
    rng = np.random.default_rng(3)
    words = rng.choice(["alpha", "beta", "gamma", "\n", "\r\n", ",", '""'], size=(20_000, 80))
    rows = [f'{i},"{"".join(w)}",{i % 7}\n' for i, w in enumerate(words.tolist())]
    frame = assert_same_reading(
        write(tmp_path, ("id,text,k\n" + "".join(rows)).encode()), fast_path=True
    )
    assert frame is not None and len(frame) == 20_000


def test_a_field_over_the_csv_modules_limit_is_read(tmp_path: Path) -> None:
    """The csv module refuses a field of more than 131,072 characters; pyarrow reads it."""
    data = b"a,b\n1," + b"y" * 300_000 + b"\n"
    assert read_frame(write(tmp_path, data))["b"].str.len().tolist() == [300_000]


def test_not_utf8_found_late_is_read_as_cp1252(tmp_path: Path) -> None:
    """A cp1252 byte after a megabyte of ASCII: the whole file is read as cp1252, as before."""
    data = b"a,b\n" + b"1,2\n" * 300_000 + "Malmö,3\n".encode("cp1252")
    frame = assert_same_reading(write(tmp_path, data), fast_path=True)
    assert frame is not None and frame["a"].iloc[-1] == "Malmö"


def test_a_bom_that_lies_is_refused_as_before(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfa,b\n" + b"1,2\n" * 100_000 + b"\xff,3\n"
    with pytest.raises(InvalidInput, match=r"UTF-8-SIG byte-order mark but is not valid"):
        read_frame(write(tmp_path, data))
    assert_same_reading(write(tmp_path, data))


def test_every_bad_input_file_reads_as_before(tmp_path: Path) -> None:
    files = sorted(BAD.glob("*.csv"))
    assert len(files) >= 15
    for path in files:
        assert_same_reading(path)
        assert_same_reading(path, piece=5)


def test_a_utf8_file_is_never_read_whole(tmp_path: Path) -> None:
    """UTF-8 is parsed from the file in pieces: neither the whole bytes nor a decoded copy."""
    path = write(tmp_path, b"a,b\n" + "é,1\n".encode() * 50_000)
    with mock.patch.object(csv_io, "_read_bytes", side_effect=AssertionError("read whole")):
        frame = read_frame(path)
    assert frame.shape == (50_000, 2)


def test_pass_through_columns_are_written_back_byte_identical(tmp_path: Path) -> None:
    original = (
        "code,price,label,note,name\n"
        '007,1.50, x ,"say ""hi""",Ωμέγα\n'
        '010,2.0,"a, b",,Дмитрий\n'
        '0,1e3,"line\nbreak",x,李小龙\n'
        "-0,.5,'single',,São Paulo\n"
    ).encode()
    src = write(tmp_path, original)
    out = tmp_path / "out.csv"
    mio.write_csv_atomic(read_frame(src), out, protect_from=src)
    assert out.read_bytes() == original


# --- property: random CSVs -------------------------------------------------------------------------

ALPHABET = "ab1 .-é中\"',;\t|\r\n"


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """Mostly well-formed CSVs with quotes, line breaks in values, blank lines, mixed line
    ends, BOMs and encodings; a few are damaged (a character dropped or added anywhere, or a
    row of another width). With: the delimiter of a well-formed one (None: damaged)."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    width = draw(st.integers(1, 4))
    lines = []
    clean = True
    for _ in range(draw(st.integers(1, 6))):
        count = width if draw(st.integers(0, 9)) else draw(st.integers(1, width + 1))
        clean = clean and count == width
        fields = []
        for _ in range(count):
            text = draw(st.text(alphabet=ALPHABET, max_size=5))
            must = any(c in text for c in (delimiter, '"', "\r", "\n"))
            if must or draw(st.integers(0, 3)) == 0:
                text = '"' + text.replace('"', '""') + '"'
            fields.append(text)
        lines.append(delimiter.join(fields))
        lines.extend([""] * draw(st.integers(0, 1)))
    ends = [draw(st.sampled_from(["\n", "\r\n", "\r"])) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    if draw(st.integers(0, 5)) == 0 and text:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(['"', "", "\n", delimiter])) + text[at + 1 :]
        clean = False
    if draw(st.integers(0, 7)) == 0:
        text = f"sep={delimiter}\n" + text
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "cp1252"]))
    well_formed = delimiter if clean else None
    try:
        return text.encode(encoding), well_formed
    except UnicodeEncodeError:
        return text.encode("utf-8"), well_formed


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=csv_files(), piece=st.sampled_from([None, 1, 2, 5, 16]))
def test_random_csvs_read_as_the_csv_module_reads_them(
    tmp_path: Path, data: tuple[bytes, str | None], piece: int | None
) -> None:
    """A well-formed file, split on the delimiter it was written with, is read by pyarrow
    alone (when the detection guessed another delimiter, its rows may be ragged)."""
    text, delimiter = data
    path = write(tmp_path, text or b"\n")
    fast = False
    if delimiter is not None:
        try:
            fast = mio.detect_csv_format(path).delimiter == delimiter
        except InvalidInput:
            pass
    assert_same_reading(path, piece, fast_path=fast)


# --- progress and cancel ---------------------------------------------------------------------------


class Recorder:
    """A progress function recording its calls; raises RunCancelled at call ``cancel_at``."""

    def __init__(self, cancel_at: int | None = None) -> None:
        self.calls: list[tuple[float, str]] = []
        self.cancel_at = cancel_at

    def __call__(self, fraction: float, status: str = "", /) -> None:
        self.calls.append((fraction, status))
        if self.cancel_at is not None and len(self.calls) >= self.cancel_at:
            raise RunCancelled()


def numbers_csv(tmp_path: Path, rows: int = 200_000) -> Path:
    rng = np.random.default_rng(17)
    frame = pd.DataFrame(rng.normal(size=(rows, 4)).round(4), columns=list("abcd"))
    path = tmp_path / "numbers.csv"
    frame.to_csv(path, index=False)
    return path


def test_loading_reports_progress_in_steps(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    progress = Recorder()
    frame = read_table(path, progress=progress).frame
    fractions = [f for f, _ in progress.calls]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    reading = [s for _, s in progress.calls if s.startswith("reading numbers.csv: ")]
    assert len(reading) >= 200_000 // mio._PROGRESS_ROWS - 2  # about one per 8,192 records
    counts = [int(s.rsplit(": ", 1)[1].split()[0].replace(",", "")) for s in reading]
    assert counts == sorted(counts) and counts[-1] <= len(frame)


def test_cancelling_stops_the_load_at_once(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    progress = Recorder(cancel_at=4)
    with mock.patch.object(csv_io, "_arrow_table", wraps=csv_io._arrow_table) as parse:
        with pytest.raises(RunCancelled):
            read_table(path, progress=progress)
    assert len(progress.calls) == 4
    assert parse.call_count <= 3  # no piece parsed after the cancel


def test_cancelling_the_csv_module_path(tmp_path: Path) -> None:
    """A file the csv module reads (a quote inside a value) is cancellable too."""
    path = write(tmp_path, b"a,b\n5'11\",x\n" + b"1,2\n" * 50_000)
    with pytest.raises(RunCancelled):
        read_table(path, progress=Recorder(cancel_at=3))


def test_the_command_line_shows_loading_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("microgui.cli.progress.PROGRESS_AFTER_S", 0.0)  # as if the load were long
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert cli.main(["suggest-roles", str(numbers_csv(tmp_path, 50_000))]) == 0
    text = terminal.getvalue()
    # drawn at most 10 times a second: the start and the end at least, on one line, then ended
    assert text.startswith("\r[") and "0%  reading numbers.csv" in text
    assert "100%  read numbers.csv" in text and text.count("\n") == 1


def test_no_loading_bar_off_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("microgui.cli.progress.PROGRESS_AFTER_S", 0.0)
    assert cli.main(["suggest-roles", str(numbers_csv(tmp_path, 20_000))]) == 0
    assert "\r" not in capsys.readouterr().err


# --- Excel: calamine against openpyxl --------------------------------------------------------------


def openpyxl_reading(path: Path, sheet: str | int | None = None) -> pd.DataFrame:
    return mio._read_sheet(path, sheet, [], engine="openpyxl")


def calamine_reading(path: Path, sheet: str | int | None = None) -> pd.DataFrame:
    """The default reader, checked to have read with calamine (openpyxl made unusable)."""
    with mock.patch.object(excel_io, "_pandas_sheet", side_effect=AssertionError("openpyxl used")):
        return mio._read_sheet(path, sheet, [])


def assert_same_sheet(path: Path, sheet: str | int | None = None) -> pd.DataFrame:
    before = openpyxl_reading(path, sheet)
    after = calamine_reading(path, sheet)
    pd.testing.assert_frame_equal(after, before, check_exact=True)
    assert list(after.columns) == list(before.columns) and after.attrs == before.attrs
    for column in after.columns:  # the same Python types cell by cell (int stays int)
        assert [type(v) for v in after[column]] == [type(v) for v in before[column]]
    return after


def mixed_workbook(path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    notes = book.active
    notes.title = "Notes"
    notes["A1"], notes["A2"] = "note", "read me"
    sheet = book.create_sheet("People")
    sheet["B3"], sheet["C3"], sheet["D3"] = "name", "born", "income"
    sheet["E3"], sheet["F3"], sheet["G3"], sheet["H3"] = "code", "time", "ok", "total"
    rows = [
        ("Åsa", dt.datetime(1980, 5, 17), 41_000.5, "007", dt.time(8, 30), True),
        ("Bo", dt.datetime(1975, 1, 2, 13, 45), 38_000, "010", dt.time(17, 0), False),
        (" x ", dt.datetime(1999, 12, 31), -0.25, 12, None, None),
        (None, None, None, None, None, None),  # a blank row
        ("Dmitrij", dt.datetime(1900, 3, 1), 1e20, "=1+1", dt.time(0, 0, 1), True),
    ]
    for i, values in enumerate(rows, start=4):
        for column, value in zip("BCDEFG", values, strict=True):
            sheet[f"{column}{i}"] = value
        if values[0] is not None:
            sheet[f"H{i}"] = f"=D{i}*2"  # no saved value: read as the formula's text
    sheet["C4"].number_format = "yyyy-mm-dd"
    sheet["D5"].number_format = "#,##0.00"
    sheet["J20"].number_format = "0.00"  # a formatted, empty cell far away
    third = book.create_sheet("Numbers")
    third.append(["a", "b", "c"])
    for i in range(50):
        third.append([i, i / 7, f"t{i % 3}"])
    book.save(path)
    return path


def test_calamine_reads_sheets_as_openpyxl_did(tmp_path: Path) -> None:
    path = mixed_workbook(tmp_path / "mixed.xlsx")
    people = assert_same_sheet(path, "People")
    assert people["total"].tolist() == ["=D4*2", "=D5*2", "=D6*2", "=D8*2"]
    assert people["code"].tolist()[:3] == ["007", "010", 12]
    assert people.attrs[LINES_ATTR] == (4, ((3, 8),))
    assert_same_sheet(path, "Numbers")
    assert_same_sheet(path, 2)
    assert_same_sheet(path)  # the first sheet
    assert read_table(path, sheet="2").frame.shape == (4, 7)


def test_calamine_refuses_as_openpyxl_did(tmp_path: Path) -> None:
    path = mixed_workbook(tmp_path / "mixed.xlsx")
    for sheet in ("Nope", 7):
        with pytest.raises(InvalidInput) as before:
            openpyxl_reading(path, sheet)
        with pytest.raises(InvalidInput) as after:
            calamine_reading(path, sheet)
        assert str(after.value) == str(before.value)
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["a", "a"])
    book.active.append([1, 2])
    dup = tmp_path / "dup.xlsx"
    book.save(dup)
    with pytest.raises(InvalidInput, match=r"two columns named 'a' \(column A .* column B"):
        calamine_reading(dup)


def test_text_calamine_reads_otherwise_goes_to_openpyxl(tmp_path: Path) -> None:
    """Cells of white space only (written without xml:space) and _xHHHH_ escapes: calamine
    would read them otherwise, so openpyxl reads such a sheet, as before."""
    from openpyxl import Workbook

    for odd in (" ", "\t", "a_x000D_b"):
        book = Workbook()
        book.active.append(["name", "n"])
        book.active.append([odd, 1])
        book.active.append(["b", 2])
        path = tmp_path / "odd.xlsx"
        book.save(path)
        assert mio._sheet_xml_scan(path, "Sheet") is None
        frame = mio._read_sheet(path, None, [])
        pd.testing.assert_frame_equal(frame, openpyxl_reading(path))
        assert frame["name"].iloc[0] == odd


def test_excel_progress_and_cancel(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    sheet.append(["a", "b"])
    for i in range(45_000):
        sheet.append([i, i * 0.5])
    path = tmp_path / "big.xlsx"
    book.save(path)
    progress = Recorder()
    assert read_table(path, progress=progress).frame.shape == (45_000, 2)
    statuses = [s for _, s in progress.calls]
    assert sum(s.startswith("reading sheet Data: ") for s in statuses) >= 3
    fractions = [f for f, _ in progress.calls]
    assert fractions == sorted(fractions)
    with pytest.raises(RunCancelled):
        read_table(path, progress=Recorder(cancel_at=4))
