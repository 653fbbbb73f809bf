"""SPSS and Stata inputs with dates and user-missing declarations, released in every format.

A generated matrix, not a hand-picked list: an SPSS ``.sav`` and a Stata ``.dta`` are written
by pyreadstat here, each holding a date variable, a date-time variable, a number variable with
user-missing codes (SPSS: a discrete code and a range; Stata: the extended missing ``.a`` and
``.r``) and, in SPSS, a text variable with user-missing codes and a date variable with a
declaration. Each of those columns takes each role (passed through unnamed, confidential,
quasi-identifier, identifier released as pseudonyms) and each run is released in every format
(.csv, .xlsx, .parquet, .sav, .zsav, .dta) and read back:

- no crash, no refusal (every cell of the matrix can be released);
- dates stay dates in every format that holds them (CSV: text that reads back as the dates),
  the input's own dates row for row where the column passes through;
- user-missing codes come back with their declaration where the column passes through
  unchanged and the format is the one they came from; otherwise the cells are missing and the
  report names the column in ``labels.user_missing_dropped`` (never silently lost);
- every declared column of the release is in exactly one of ``user_missing_kept`` and
  ``user_missing_dropped``.

Any SPSS/Stata file with a date variable and a user-missing declaration could not be released
as .sav/.zsav/.dta/.parquet (issue 27: the reader's notes rode along in the frame's attributes).
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from microgui.core.io import read_table
from microgui.core.release.check import export_run
from microgui.core.release.order import RecordOrder
from microgui.core.release.pseudonyms import PSEUDONYM_PATTERN
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.table.roles import roles_from_lists

#: Release in the input's order (a release is shuffled by default, issue 31): these tests read
#: the written file row for row beside the run's table.
KEEP_ORDER = RecordOrder(keep=True)

N = 24
OUTPUTS = (".csv", ".xlsx", ".parquet", ".sav", ".zsav", ".dta")
ROLES = ("pass", "confidential", "qi", "pseudonym")
#: Per input: its columns under test, and for each its kind and whether it has a declaration.
COLUMNS: dict[str, dict[str, tuple[str, bool]]] = {
    ".sav": {
        "d": ("date", True),  # SPSS date variables with a user-missing declaration
        "t": ("datetime", True),
        "um": ("number", True),
        "sm": ("text", True),
    },
    ".dta": {"d": ("date", False), "t": ("datetime", False), "um": ("number", True)},
}
#: The rows holding a user-missing code, and the codes of each input's columns.
MISSING_ROWS = (2, 9, 17)
CODES: dict[str, dict[str, tuple[object, ...]]] = {
    ".sav": {
        "um": (-99.0, -5.0, -99.0),  # a discrete code and one in a range
        "sm": ("NR", "DK", "NR"),
        "d": (dt.date(9999, 12, 31),) * 3,
        "t": (pd.Timestamp("1900-01-01"),) * 3,
    },
    ".dta": {"um": ("a", "r", "a")},  # Stata's extended missing .a and .r
}
_EPOCH = dt.datetime(1582, 10, 14)  # SPSS dates: seconds since
UM_LABELS = {1: "low", 2: "mid", 3: "high"}  # SPSS um: its labels, shown where no codes go


def _base() -> pd.DataFrame:
    rng = np.random.default_rng(27)
    days = rng.integers(0, 6, N)
    return pd.DataFrame(
        {
            "id": [f"P{i:04d}" for i in range(N)],
            "age": rng.integers(18, 90, N).astype(float),
            "d": [dt.date(2001, 3, 1) + dt.timedelta(days=int(x)) for x in days],
            "t": pd.Timestamp("2002-05-06 07:08:09") + pd.to_timedelta(days * 3600, unit="s"),
            "um": rng.choice([1.0, 2.0, 3.0], N),
            "sm": rng.choice(["yes", "no"], N).astype(object),
        }
    )


def _written(ext: str) -> pd.DataFrame:
    """The table as written into the input file, user-missing codes included."""
    frame = _base()
    if ext == ".dta":
        frame = frame.drop(columns=["sm"])
    for column, codes in CODES[ext].items():
        frame[column] = frame[column].astype(object)
        for row, code in zip(MISSING_ROWS, codes, strict=True):
            frame.at[row, column] = code
    frame["t"] = pd.to_datetime(frame["t"])
    if ext == ".sav":
        frame["um"] = frame["um"].astype(float)
    return frame


def _write_inputs(folder: Path) -> dict[str, Path]:
    sav = folder / "in.sav"
    seconds = (dt.datetime(9999, 12, 31) - _EPOCH).total_seconds()
    pyreadstat.write_sav(
        _written(".sav"), sav,
        missing_ranges={
            "um": [-99.0, {"lo": -9.0, "hi": -1.0}],
            "sm": ["NR", "DK"],
            "d": [{"lo": seconds, "hi": seconds}],
            "t": [(dt.datetime(1900, 1, 1) - _EPOCH).total_seconds()],
        },
        variable_value_labels={"um": {**UM_LABELS, -99: "refused"}},
    )  # fmt: skip
    dta = folder / "in.dta"
    pyreadstat.write_dta(_written(".dta"), dta, missing_user_values={"um": ["a", "r"]})
    return {".sav": sav, ".dta": dta}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _write_inputs(tmp_path_factory.mktemp("stat_inputs"))


@functools.cache
def _run(source: Path, column: str, role: str) -> tuple[Any, RunResult]:
    """One protected run of ``source`` with ``column`` in ``role`` (cached across formats)."""
    dataset = read_table(source)
    kind, declared = COLUMNS[source.suffix][column]
    qi = ["age"] + ([column] if role == "qi" else [])
    ordinal = [column] if role == "qi" and kind != "text" else []
    nominal = [column] if role == "qi" and kind == "text" else []
    roles = roles_from_lists(
        list(dataset.frame.columns),
        qi=qi,
        identifiers=["id"] + ([column] if role == "pseudonym" else []),
        confidential=[column] if role == "confidential" else [],
        ordinal=ordinal,
        nominal=nominal,
        missing_as_category=[column] if role == "qi" and declared else [],
    )
    dataset = dataset.with_roles(roles)
    return dataset, run_protection(dataset, RunSpec.make("mdav-generic", 3, seed=1))


def _read_back(path: Path) -> pd.DataFrame:
    ext = path.suffix
    if ext == ".csv":
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    if ext == ".xlsx":
        return pd.read_excel(path, engine="openpyxl")
    if ext == ".parquet":
        return pd.read_parquet(path)
    reader = pyreadstat.read_dta if ext == ".dta" else pyreadstat.read_sav
    frame, _meta = reader(path, user_missing=True)
    return frame


def _meta(path: Path) -> Any:
    reader = pyreadstat.read_dta if path.suffix == ".dta" else pyreadstat.read_sav
    return reader(path, user_missing=True)[1]


def _as_times(values: pd.Series) -> list[pd.Timestamp | None]:
    out: list[pd.Timestamp | None] = []
    for v in values.tolist():
        if v is None or v is pd.NaT or (not isinstance(v, str) and pd.isna(v)) or v == "":
            out.append(None)
        else:
            out.append(pd.Timestamp(v))
    return out


CELLS = [
    (ext, column, role, out)
    for ext, columns in COLUMNS.items()
    for column, role, out in itertools.product(columns, ROLES, OUTPUTS)
]


@pytest.mark.parametrize(
    ("ext", "column", "role", "out"), CELLS, ids=["-".join(c).replace(".", "") for c in CELLS]
)
def test_stat_input_released_and_read_back(
    inputs: dict[str, Path], tmp_path: Path, ext: str, column: str, role: str, out: str
) -> None:
    source = inputs[ext]
    kind, declared = COLUMNS[ext][column]
    dataset, result = _run(source, column, role)
    target = tmp_path / f"o{out}"
    report = export_run(
        dataset,
        result,
        target,
        tmp_path / "r.json",
        pseudonymize=[column] if role == "pseudonym" else [],
        order=KEEP_ORDER,  # read back row for row
    )
    back = _read_back(target)
    assert len(back) == N and column in back.columns
    cells = back[column]
    written = _written(ext)[column]
    family = {".sav": (".sav", ".zsav"), ".dta": (".dta",)}[ext]
    passes = role in ("pass", "confidential")
    rows = list(MISSING_ROWS)
    codes = CODES[ext].get(column, ())

    # user-missing: back with the declaration, or reported dropped, never both, never neither
    labels = report.get("labels") or {}
    kept = set(labels.get("user_missing_kept", ()))
    dropped = set(labels.get("user_missing_dropped", ()))
    declared_in_release = {c for c, (_k, has) in COLUMNS[ext].items() if has and c in back.columns}
    assert not kept & dropped
    assert declared_in_release <= kept | dropped, (kept, dropped)
    carried = declared and passes and out in family
    if declared:
        assert (column in kept) is carried, (kept, dropped)
        if carried:
            meta = _meta(target)
            if out == ".dta":
                assert sorted(meta.missing_user_values[column]) == ["a", "r"]
            else:
                assert meta.missing_ranges[column]
        else:  # no code in the release; a column passed through has the cells missing
            present = [v for v in cells.tolist() if not (pd.isna(v) or v == "")]
            assert not [v for v in present if _same(v, codes[0]) or _same(v, codes[1])]
            if passes:
                assert all(pd.isna(v) or v == "" for v in cells.iloc[rows].tolist())

    if role == "pseudonym":
        present = [v for v in cells.tolist() if not (pd.isna(v) or v == "")]
        assert present and all(PSEUDONYM_PATTERN.fullmatch(str(v)) for v in present)
        return
    want = written.tolist()
    if declared and not carried:
        want = [None if i in rows else v for i, v in enumerate(want)]
    if kind in ("date", "datetime"):
        if out != ".csv":  # every typed format holds dates
            assert all(
                v is None or isinstance(v, (dt.date, pd.Timestamp, np.datetime64)) or pd.isna(v)
                for v in cells.tolist()
            ) or pd.api.types.is_datetime64_any_dtype(cells.dtype), (out, cells.dtype)
        got, want = _as_times(cells), _as_times(pd.Series(want, dtype=object))
    else:
        got = [None if pd.isna(v) or v == "" else v for v in cells.tolist()]
        want = [None if v is None or (isinstance(v, float) and np.isnan(v)) else v for v in want]
        if ext == ".sav" and kind == "number" and out in (".csv", ".xlsx", ".parquet"):
            want = [None if v is None else UM_LABELS[int(v)] for v in want]  # labels shown
        elif kind == "number" and not (carried and ext == ".dta"):
            got = [None if v is None else float(v) for v in got]
    if passes:
        assert got == want, (got, want)
    else:  # a quasi-identifier's values are categories of the input
        assert {g for g in got if g is not None} <= {w for w in want if w is not None} | {
            g for g in got if kind in ("number", "text")
        }


def _same(value: object, code: object) -> bool:
    try:
        if isinstance(code, (dt.date, pd.Timestamp)):
            return bool(pd.Timestamp(value) == pd.Timestamp(code))
        if isinstance(code, float):
            return float(value) == code  # type: ignore[arg-type]
        return bool(value == code)
    except (TypeError, ValueError):
        return False


def test_the_matrix_covers_every_combination() -> None:
    """Generated, not hand-listed: both inputs, every kind, every role, every format."""
    assert len(CELLS) == (4 + 3) * len(ROLES) * len(OUTPUTS)
    kinds = {kind for columns in COLUMNS.values() for kind, _d in columns.values()}
    assert kinds == {"date", "datetime", "number", "text"}


def test_a_date_and_a_declaration_released_by_the_command_line(
    inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The case of issue 27 as the command line runs it: exit 0 in every typed format."""
    from microgui.cli import main

    for out in (".sav", ".zsav", ".dta", ".parquet"):
        target = tmp_path / f"c{out}"
        code = main(["protect", str(inputs[".sav"]), "-o", str(target), "--keep-order", "--qi", "age",
                     "--identifiers", "id", "--method", "mdav", "-k", "3", "-q"])  # fmt: skip
        assert code == 0, (out, capsys.readouterr().err)
        assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_a_parquet_release_holds_no_note_of_the_reader(
    inputs: dict[str, Path], tmp_path: Path, ext: str
) -> None:
    """pandas writes a frame's attrs into a Parquet file: the input's file name, SHA-256, labels
    and which records held user-missing codes went into the release's metadata (issue 27)."""
    import pyarrow.parquet as pq

    dataset, result = _run(inputs[ext], "um", "qi")
    target = tmp_path / "o.parquet"
    export_run(dataset, result, target, order=KEEP_ORDER)
    metadata = pq.read_schema(target).metadata or {}
    assert b"PANDAS_ATTRS" not in metadata
    text = b"".join(metadata.values())
    assert b"in" + ext.encode() not in text and b"sha256" not in text and b"refused" not in text


def test_the_readers_user_missing_notes_survive_pandas(inputs: dict[str, Path]) -> None:
    """pandas deep-copies a frame's attrs at every operation and compares them when it
    concatenates: the notes compare as a whole (an array there made the comparison raise) and
    are not copied cell by cell (a tuple of a million codes made every operation slow)."""
    import copy

    from microgui.core.io import STAT_ATTR, MissingCodes

    frame = read_table(inputs[".sav"]).frame
    cells = frame.attrs[STAT_ATTR]["user_missing"]["um"]["cells"]
    assert isinstance(cells, MissingCodes) and cells.rows.tolist() == list(MISSING_ROWS)
    assert copy.deepcopy(frame.attrs) == frame.attrs
    assert copy.deepcopy(cells) is cells and not cells.rows.flags.writeable
    assert pd.concat([frame, frame]).attrs == frame.attrs  # raised before
