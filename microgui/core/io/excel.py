"""Reading Excel workbooks.

``.xlsx``/``.xlsm`` workbooks are read with calamine (python-calamine) and give the cells
openpyxl gave; openpyxl reads a sheet whose XML holds what the two read otherwise (cells of white
space only, ``_xHHHH_`` escapes), and the formula cells without a saved value are found in the
sheet's XML as before. ``.xls`` goes through xlrd. Messages name rows as the spreadsheet shows
them.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.io.common import _check_columns, _zero_records
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.dataset import LINE_WORD_ATTR, LINES_ATTR, SOURCE_ATTR, shared_attr

__all__ = ["SHEETS_ATTR", "ExcelEngine"]


#: frame.attrs key of a workbook's read sheet and all its sheets: ``(name, (names...))``.
SHEETS_ATTR = "microgui.sheets"


def _excel_column(i: int) -> str:
    letters = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def _cell_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _read_excel(
    path: Path, sheet: str | int | None, progress: ProgressFn = no_progress
) -> pd.DataFrame:
    """One sheet of a workbook (the first unless ``sheet`` names one: its name, its 0-based
    index, or its position from 1 as text). When the workbook has several sheets and none was
    chosen, every refusal says which sheet was read and how to choose another."""
    seen: list[str] = []
    try:
        return _read_sheet(path, sheet, seen, progress)
    except InvalidInput as exc:
        if sheet is None and len(seen) > 1:
            others = ", ".join(map(repr, seen[1:4])) + (", ..." if len(seen) > 4 else "")
            raise InvalidInput(
                f"{exc} (read the first of {len(seen)} sheets, {seen[0]!r}; the others: {others}: "
                "choose one with --sheet NAME)"
            ) from None
        raise


def _choose_sheet(name: str, sheets: list[str], sheet: str | int | None) -> str:
    if sheet is None:
        sheet = 0
    if isinstance(sheet, int):
        if not 0 <= sheet < len(sheets):
            raise InvalidInput(
                f"{name!r} has {len(sheets)} sheet(s), so there is no sheet number {sheet} "
                f"(counting from 0); its sheets are {', '.join(map(repr, sheets))}"
            )
        return sheets[sheet]
    if sheet in sheets:
        return sheet
    if sheet.strip().isdigit() and 1 <= int(sheet) <= len(sheets):
        return sheets[int(sheet) - 1]  # a position, counting from 1 (--sheet 2)
    raise InvalidInput(
        f"{name!r} has no sheet named {sheet!r}; its sheets are {', '.join(map(repr, sheets))}"
    )


ExcelEngine = Literal["calamine", "openpyxl", "xlrd"]


def _read_sheet(
    path: Path,
    sheet: str | int | None,
    seen: list[str],
    progress: ProgressFn = no_progress,
    engine: ExcelEngine | None = None,
) -> pd.DataFrame:
    """Read the chosen sheet: ``.xlsx``/``.xlsm`` with calamine (python-calamine) when it is
    installed and can tell everything (see :func:`_calamine_sheet`), else with openpyxl, as
    before issue 17 and with the same cells; ``.xls`` with xlrd."""
    name = path.name
    if engine is None:
        engine = "xlrd" if path.suffix.lower() == ".xls" else "calamine"
    raw: pd.DataFrame | None = None
    if engine == "calamine":
        found = _calamine_sheet(path, sheet, seen, progress)
        if found is not None:
            raw, sheet_name, sheets = found
        engine = "openpyxl"  # for whatever calamine left to openpyxl
    if raw is None:
        raw, sheet_name, sheets = _pandas_sheet(path, sheet, seen, engine)
        if engine == "openpyxl" and raw.isna().to_numpy().any():
            # Formula cells with no saved value come back missing from openpyxl: keep their
            # formula as text instead (never a silently emptied cell; issue 12). A sheet with no
            # missing cell has none, and its XML is not read a second time.
            for (row, col), formula in _uncached_formulas(path, sheet_name).items():
                if row in raw.index and col in raw.columns:
                    raw.loc[row, col] = formula
    progress(0.9, f"checking sheet {sheet_name}")
    # Formatted but empty rows and columns come back as all-NaN; they are not part of the table.
    raw = raw.dropna(axis=0, how="all")
    if raw.empty:
        raise InvalidInput(
            f"sheet {sheet_name!r} of {name!r} is empty; choose the sheet that holds the table"
        )
    names = [_cell_text(v) for v in raw.iloc[0]]
    keep = [i for i, n in enumerate(names) if n.strip() or raw.iloc[1:, i].notna().any()]
    raw = raw.iloc[:, keep]
    names = [names[i] for i in keep]
    letters = [_excel_column(int(raw.columns[j])) for j in range(len(keep))]
    _check_columns(names, name, lambda i: f"column {letters[i]} of sheet {sheet_name!r}")
    data = raw.iloc[1:]
    if data.empty:
        raise _zero_records(name, f"sheet {sheet_name!r} of ")
    # pandas keeps the sheet's row positions (index = row number - 1, blank rows dropped above):
    # messages name the rows as the spreadsheet shows them (dataset.LINES_ATTR, LINE_WORD_ATTR).
    sheet_rows = data.index.to_numpy(dtype=np.int64) + 1
    jumps = np.flatnonzero(np.diff(sheet_rows) != 1) + 1
    breaks = tuple((int(i), int(sheet_rows[i])) for i in jumps)
    data = data.reset_index(drop=True)
    data.columns = pd.Index(names, dtype=object)
    data = data.infer_objects()
    data.attrs[SOURCE_ATTR] = f"{name} (sheet {sheet_name})"
    data.attrs[LINES_ATTR] = shared_attr((int(sheet_rows[0]), breaks))
    data.attrs[LINE_WORD_ATTR] = "row"
    data.attrs[SHEETS_ATTR] = (sheet_name, tuple(sheets))
    return data


def _pandas_sheet(
    path: Path, sheet: str | int | None, seen: list[str], engine: Literal["openpyxl", "xlrd"]
) -> tuple[pd.DataFrame, str, list[str]]:
    """The sheet's cells through pandas (openpyxl or xlrd): object values, NaN for empty cells,
    index and columns the 0-based sheet positions."""
    name = path.name
    if engine == "xlrd":
        import importlib.util

        if importlib.util.find_spec("xlrd") is None:
            raise InvalidInput(
                f"{name!r} is an old Excel .xls workbook and reading it needs the xlrd package, "
                "which is not installed; save it as .xlsx or CSV, or install xlrd"
            )
    try:
        book = pd.ExcelFile(path, engine=engine)
    except Exception as exc:  # openpyxl/xlrd/zipfile raise many unrelated types
        raise InvalidInput(
            f"{name!r} cannot be read as an Excel workbook ({type(exc).__name__}: {exc}); "
            "open it in Excel or LibreOffice and save it again as .xlsx"
        ) from exc
    with book:
        sheets = [str(s) for s in book.sheet_names]
        seen[:] = sheets
        sheet_name = _choose_sheet(name, sheets, sheet)
        try:
            raw = pd.read_excel(
                book,
                sheet_name=sheet_name,
                header=None,
                dtype=object,
                keep_default_na=False,
                na_values=[""],
            )
        except Exception as exc:
            raise InvalidInput(
                f"sheet {sheet_name!r} of {name!r} cannot be read ({type(exc).__name__}: {exc}); "
                "open it in Excel or LibreOffice and save it again as .xlsx"
            ) from exc
    return raw, sheet_name, sheets


#: Rows of a sheet converted between two progress reports.
_SHEET_PROGRESS_ROWS = 20_000


def _calamine_sheet(
    path: Path, sheet: str | int | None, seen: list[str], progress: ProgressFn
) -> tuple[pd.DataFrame, str, list[str]] | None:
    """The sheet's cells read by calamine, as :func:`_pandas_sheet` gives openpyxl's (the same
    values: whole numbers as int, dates as datetime, empty and error cells NaN), with the text
    of uncached formula cells put in (:func:`_uncached_formulas`); None where openpyxl must
    read it: python-calamine missing, a workbook calamine cannot open, or a sheet whose XML
    holds what the two read differently (:func:`_sheet_xml_scan`). A bad sheet choice raises
    as with openpyxl."""
    try:
        from python_calamine import CalamineWorkbook, SheetTypeEnum
    except ImportError:
        return None
    name = path.name
    try:
        book = CalamineWorkbook.from_path(os.fspath(path))
    except Exception:  # noqa: BLE001 - openpyxl reads it again and says what is wrong
        return None
    with book:
        sheets = [str(m.name) for m in book.sheets_metadata if m.typ == SheetTypeEnum.WorkSheet]
        seen[:] = sheets
        sheet_name = _choose_sheet(name, sheets, sheet)
        formulas = _sheet_xml_scan(path, sheet_name)
        if formulas is None:
            return None
        progress(0.1, f"reading sheet {sheet_name}")
        try:
            cells = book.get_sheet_by_name(sheet_name).to_python(skip_empty_area=False)
        except Exception:  # noqa: BLE001 - openpyxl reads it again and says what is wrong
            return None
    height = len(cells)
    width = len(cells[0]) if height else 0
    blocks = []
    for start in range(0, height, _SHEET_PROGRESS_ROWS):
        progress(0.2 + 0.65 * start / height, f"reading sheet {sheet_name}: {start:,} rows")
        stop = min(start + _SHEET_PROGRESS_ROWS, height)
        block = np.empty((stop - start, width), dtype=object)
        block[:] = cells[start:stop]
        for j in range(width):
            block[:, j] = _calamine_column(block[:, j])
        blocks.append(block)
    del cells
    raw = pd.DataFrame(np.concatenate(blocks) if blocks else None, dtype=object)
    del blocks
    for (row, col), formula in formulas.items():
        # as with openpyxl: only inside the extent of the cells that hold values
        if row in raw.index and col in raw.columns:
            raw.loc[row, col] = formula
    return raw, sheet_name, sheets


_TEXT, _FLOAT, _DATE = 1, 2, 3
_KINDS: dict[type, int] = {str: _TEXT, float: _FLOAT, datetime.date: _DATE}
_KIND_OF = np.frompyfunc(lambda value: _KINDS.get(type(value), 0), 1, 1)


def _calamine_column(cells: np.ndarray) -> np.ndarray:
    """Calamine cells (an object array) as pandas' openpyxl reader gives them: a whole float
    as int, a date as a datetime at midnight, an empty (or error) cell NaN."""
    out = cells.copy()
    inferred = pd.api.types.infer_dtype(cells, skipna=False)  # C speed; the usual columns
    if inferred == "floating":
        kinds = np.full(cells.shape, _FLOAT, dtype=np.int8)
    elif inferred == "string":
        kinds = np.full(cells.shape, _TEXT, dtype=np.int8)
    else:
        kinds = _KIND_OF(cells).astype(np.int8)
    text = kinds == _TEXT
    if text.any():
        out[text & (cells == "")] = np.nan
    floats = np.flatnonzero(kinds == _FLOAT)
    if floats.size:
        values = cells[floats].astype(np.float64)
        whole = values == np.floor(values)
        small = whole & (np.abs(values) < 2.0**62)
        out[floats[small]] = values[small].astype(np.int64)  # stored as Python ints
        for i in floats[whole & ~small].tolist():
            out[i] = int(cells[i])
    days = np.flatnonzero(kinds == _DATE)
    for i in days.tolist():
        day = cells[i]
        out[i] = datetime.datetime(day.year, day.month, day.day)
    return out


_SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_FORMULA_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?f[\s>/]")


def _sheet_part(archive: Any, sheet_name: str) -> str | None:
    """The zip member holding sheet ``sheet_name`` (workbook.xml and its relationships)."""
    from xml.etree import ElementTree

    book = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rid = next(
        (
            sh.get(f"{{{_REL_NS}}}id")
            for sh in book.iter(f"{{{_SHEET_NS}}}sheet")
            if sh.get("name") == sheet_name
        ),
        None,
    )
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels if r.get("Id") == rid), None)
    if not target:
        return None
    return target.lstrip("/") if target.startswith("/") else f"xl/{target}"


def _cell_position(ref: str) -> tuple[int, int] | None:
    """``"C12"`` -> (11, 2): 0-based sheet row and column."""
    match = re.fullmatch(r"([A-Z]{1,3})([0-9]{1,7})", ref)
    if match is None:
        return None
    col = 0
    for ch in match[1]:
        col = col * 26 + ord(ch) - ord("A") + 1
    return int(match[2]) - 1, col - 1


def _uncached_formulas(path: Path, sheet_name: str) -> dict[tuple[int, int], str]:
    """The sheet's formula cells that have no saved value: (0-based row, column) -> ``"=..."``.

    Such cells (files written by pandas, openpyxl or other programs, never opened in a
    spreadsheet) come back as missing from every reader, which made a quasi-identifier
    "missing" or emptied a pass-through column in silence (issue 12); the caller puts the
    formula text there instead. The sheet's XML is scanned as a stream; a sheet without any
    formula costs one pass of byte search.
    """
    import zipfile
    from xml.etree import ElementTree

    found: dict[tuple[int, int], str] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            part = _sheet_part(archive, sheet_name)
            if part is None or part not in archive.namelist():
                return found
            with archive.open(part) as fh:
                tail = b""
                any_formula = False
                while chunk := fh.read(1 << 20):
                    if _FORMULA_TAG.search(tail + chunk):
                        any_formula = True
                        break
                    tail = chunk[-64:]
            if not any_formula:
                return found
            cell_tag, f_tag, v_tag = (f"{{{_SHEET_NS}}}{t}" for t in ("c", "f", "v"))
            with archive.open(part) as fh:
                for _event, elem in ElementTree.iterparse(fh, events=("end",)):
                    if elem.tag != cell_tag:
                        continue
                    formula = elem.find(f_tag)
                    if formula is not None:
                        value = elem.find(v_tag)
                        where = _cell_position(str(elem.get("r", "")))
                        if where is not None and (value is None or not (value.text or "").strip()):
                            found[where] = "=" + (formula.text or "")
                    elem.clear()
    except (zipfile.BadZipFile, KeyError, OSError, ElementTree.ParseError):
        return {}  # pandas read the sheet: whatever this scan cannot parse, it did
    return found


#: What calamine reads otherwise than openpyxl: a text element holding only white space without
#: ``xml:space="preserve"`` (calamine drops the spaces; openpyxl writes such cells), found as the
#: end of a ``<t>`` tag followed by white space to the next tag (or to the end of a chunk: the
#: rest is in the next), and ``_xHHHH_`` escapes (calamine decodes them, openpyxl keeps the
#: text). Both patterns start with literals, which ``re`` finds fast.
_WHITE_TEXT = re.compile(rb"t>[ \t\r\n]+(?:<|\Z)")
_ESCAPE = re.compile(rb"_x[0-9A-Fa-f]{4}_")
_FORMULA_START = re.compile(rb"f[\s>/]")
_XML_PREFIX = re.compile(rb"[A-Za-z_][\w.-]*")


def _opening_tag(data: bytes, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern``, which starts at an element's local name, matches where ``data`` has
    an opening tag of that element: ``<name`` or ``<prefix:name``."""
    for match in pattern.finditer(data):
        at = match.start()
        before = data[at - 1 : at]
        if before == b"<":
            return True
        if before == b":":
            tag = data.rfind(b"<", 0, at)
            if tag >= 0 and _XML_PREFIX.fullmatch(data, tag + 1, at - 1):
                return True
    return False


def _calamine_differs(data: bytes) -> bool:
    return _ESCAPE.search(data) is not None or _opening_tag(data, _WHITE_TEXT)


def _formula_in(data: bytes) -> bool:
    return _opening_tag(data, _FORMULA_START)


def _search_part(archive: Any, part: str, *tests: Callable[[bytes], bool]) -> list[bool]:
    """Which of ``tests`` hold somewhere in the zip member ``part``, read as a stream (each
    chunk with the end of the one before, so that nothing is missed at a boundary)."""
    found = [False] * len(tests)
    with archive.open(part) as fh:
        tail = b""
        while not all(found) and (chunk := fh.read(1 << 20)):
            data = tail + chunk
            found = [done or test(data) for done, test in zip(found, tests, strict=True)]
            tail = chunk[-64:]
    return found


def _sheet_xml_scan(path: Path, sheet_name: str) -> dict[tuple[int, int], str] | None:
    """The uncached formula cells of the sheet (:func:`_uncached_formulas`) for the calamine
    reader, or None when openpyxl must read the sheet: its XML or the shared strings hold text
    that calamine reads otherwise (:data:`_CALAMINE_DIFFERS`), or the parts cannot be found.

    Calamine reads no formula, and leaves cells with neither value nor text out of the sheet's
    extent: the sheet's XML is always searched (one pass of byte search when it has none).
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            part = _sheet_part(archive, sheet_name)
            names = archive.namelist()
            if part is None or part not in names:
                return None
            strings = [n for n in names if n.lower().endswith("sharedstrings.xml")]
            if any(_search_part(archive, s, _calamine_differs)[0] for s in strings):
                return None
            differs, formulas = _search_part(archive, part, _calamine_differs, _formula_in)
            if differs:
                return None
            if not formulas:
                return {}
    except (zipfile.BadZipFile, KeyError, OSError, ValueError):
        return None
    return _uncached_formulas(path, sheet_name)
