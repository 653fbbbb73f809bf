"""The bad-input corpus (``tests/data/bad``) through the command line: a promise per case.

Every case either succeeds (a "bad" file that is in fact fine: Latin-1, UTF-16, decimal commas,
odd column names, a constant column, identical rows) or exits 2 with one line on stderr that names
the file, line or column and says what to do; never a traceback, and nothing is written (no
output, no report, no temporary file). ``tests/data/bad/README.md`` lists the cases.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import time
from pathlib import Path
from types import ModuleType

import pytest

import microgui.core.io.atomic as atomic_io
from microgui.cli import main
from microgui.core.progress import RunCancelled

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


def _make_large() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_large", BAD / "make_large.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_large = _make_large()


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated large files (never committed), in a temporary folder."""
    folder = tmp_path_factory.mktemp("bad_large")
    make_large.write_wide(folder)
    make_large.write_million(folder)
    return folder


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of ``microgui argv``; stderr never holds a traceback."""
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err
    return code, err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {err!r}"
    assert lines[0].startswith("microgui: error: ")
    return lines[0]


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# (case id, input file, options, expected exit code, words the error must hold)
PEOPLE = "people.csv"
CASES: list[tuple[str, str, list[str], int, list[str]]] = [
    ("empty", "empty.csv", ["--qi", "age"], 2, ["'empty.csv'", "empty", "choose the file"]),
    (
        "header only",
        "header_only.csv",
        ["--qi", "age"],
        2,
        ["'header_only.csv'", "no records", "choose the file"],
    ),
    (
        "duplicate names",
        "duplicate_names.csv",
        ["--qi", "income"],
        2,
        ["'duplicate_names.csv'", "two columns named 'age'", "column 2", "column 4", "rename"],
    ),
    (
        "blank name",
        "blank_name.csv",
        ["--qi", "age"],
        2,
        ["'blank_name.csv'", "column 3", "no name", "give every column a name"],
    ),
    (
        "ragged rows",
        "ragged.csv",
        ["--qi", "age"],
        2,
        ["'ragged.csv'", "line 4", "6 field(s)", "header has 5", "quote values"],
    ),
    (
        "binary named .csv",
        "binary.csv",
        ["--qi", "age"],
        2,
        ["'binary.csv'", "binary file", "Excel .xlsx", "proper extension"],
    ),
    ("latin-1", "latin1.csv", ["--qi", "âge,revenu", "--identifiers", "id"], 0, []),
    ("utf-16", "utf16.csv", ["--qi", "age,income", "--identifiers", "id"], 0, []),
    ("decimal commas", "decimal_comma.csv", ["--qi", "age,income", "--identifiers", "id"], 0, []),
    (
        "missing values in a quasi-identifier",
        "missing_qi.csv",
        ["--qi", "age,income"],
        2,
        ["'age'", "missing_qi.csv", "2 missing value(s)", "line 3, 5", "fill or remove"],
    ),
    (
        "'.' in a quasi-identifier",
        "missing_qi.csv",
        ["--qi", "income", "--identifiers", "id"],
        2,
        ["'income'", "missing_qi.csv", "1 missing value(s)", "line 6", "fill or remove"],
    ),
    (
        "text in a continuous column",
        "text_in_continuous.csv",
        ["--qi", "age,income"],
        2,
        ["'income'", "text_in_continuous.csv", "line 5", "'unknown'", "tag the column nominal"],
    ),
    (
        "constant column",
        "constant_column.csv",
        ["--qi", "age,income", "--identifiers", "id"],
        0,
        [],
    ),
    ("identical rows", "identical_rows.csv", ["--qi", "age,income"], 0, []),
    (
        "n < k",
        "few_rows.csv",
        ["--qi", "age,income", "-k", "5"],
        2,
        ["k=5", "few_rows.csv", "(3)", "give k <= 3"],
    ),
    (
        "one row",
        "one_row.csv",
        ["--qi", "age,income"],
        2,
        ["one_row.csv", "1 record(s)", "at least 2", "choose a table"],
    ),
    (
        "odd column names",
        "odd_names.csv",
        ["--qi", "a\\,b,Возраст", "--nominal", "Возраст", "--confidential", "年収"],
        0,
        [],
    ),
    (
        "odd column names, comma not escaped",
        "odd_names.csv",
        ["--qi", "a,b"],
        2,
        ["--qi names column 'a'", "'two\\nlines'", "'a,b'", "\\,"],
    ),
    (
        "ordinal order misses a category",
        PEOPLE,
        ["--qi", "age,education", "--ordinal", "education=primary<secondary"],
        2,
        ["'education'", "people.csv", "'tertiary'", "line 5, 7", "add the category"],
    ),
    (
        "hierarchy misses a value",
        PEOPLE,
        [
            "--qi",
            "age,region",
            "--nominal",
            "region",
            "--hierarchy",
            "region={bad}/hierarchy_missing.csv",
        ],
        2,
        ["'region'", "people.csv", "'east'", "line 5", "hierarchy_missing.csv", "add a row"],
    ),
    (
        "hierarchy contradicts itself",
        PEOPLE,
        [
            "--qi",
            "age,region",
            "--nominal",
            "region",
            "--hierarchy",
            "region={bad}/hierarchy_contradiction.csv",
        ],
        2,
        ["hierarchy_contradiction.csv", "line 4", "'north'", "keep one row per value"],
    ),
    (
        "hierarchy file missing",
        PEOPLE,
        ["--qi", "age,region", "--nominal", "region", "--hierarchy", "region={bad}/nope.csv"],
        2,
        ["nope.csv", "not found", "check the path"],
    ),
    ("k = 1", PEOPLE, ["--qi", "age,income", "-k", "1"], 2, ["k=1", "give k >= 2"]),
    ("k = 0", PEOPLE, ["--qi", "age,income", "-k", "0"], 2, ["k=0", "give k >= 2"]),
    (
        "k > n",
        PEOPLE,
        ["--qi", "age,income", "-k", "7"],
        2,
        ["k=7", "people.csv", "(6)", "give k <= 6"],
    ),
    ("k = abc", PEOPLE, ["--qi", "age,income", "-k", "abc"], 2, ["'abc'", "whole number"]),
    (
        "unknown column",
        PEOPLE,
        ["--qi", "age,Incom"],  # 'Income' now names 'income' (unique once case-folded)
        2,
        ["'Incom'", "not in the table", "check the spelling"],
    ),
]


def _method(extra: list[str]) -> list[str]:
    if "--hierarchy" in extra:
        return ["--method", "mstk"]
    if any(opt in extra for opt in ("--ordinal", "--nominal")):
        return ["--method", "mdav-generic"]
    return ["--method", "mdav"]


@pytest.mark.parametrize(
    ("case", "name", "extra", "code", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_protect_keeps_the_promise(
    case: str,
    name: str,
    extra: list[str],
    code: int,
    words: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    before = listing(BAD)
    extra = [e.replace("{bad}", str(BAD)) for e in extra]
    k = [] if "-k" in extra else ["-k", "2"]
    argv = ["protect", str(BAD / name), "-o", str(out / "protected.csv")]
    argv += ["--report", str(out / "report.json"), *_method(extra), *k, *extra]
    got, err = run(argv, capsys)
    assert listing(BAD) == before  # the corpus folder is never written to
    if code == 0:
        assert got == 0, err
        assert listing(out) == ["protected.csv", "report.json"]
        return
    assert got == 2
    line = error_line(err)
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    assert listing(out) == []  # no output, no report, no temporary file


def test_valid_odd_files_keep_their_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The "bad" files that are fine: names and pass-through cells come back exactly."""
    out = tmp_path / "p.csv"
    code, err = run(
        ["protect", str(BAD / "odd_names.csv"), "-o", str(out), "--method", "mdav-generic"]
        + ["-k", "3", "--qi", "a\\,b", "--nominal", "a\\,b"],
        capsys,
    )
    assert code == 0, err
    header = out.read_text(encoding="utf-8").split("\n", 2)
    assert header[0] == '"say ""hi""","a,b","two'
    latin = tmp_path / "l.csv"
    code, err = run(
        ["protect", str(BAD / "latin1.csv"), "-o", str(latin), "--method", "mdav", "-k", "2"]
        + ["--qi", "âge,revenu", "--identifiers", "id"],
        capsys,
    )
    assert code == 0, err
    text = latin.read_text(encoding="utf-8")
    assert text.startswith("âge,revenu,région,éducation\n") and "Besançon" in text


def test_decimal_commas_are_read_as_decimals(tmp_path: Path) -> None:
    from microgui.core.io import read_table
    from microgui.core.table.dataset import numeric_column

    dataset = read_table(BAD / "decimal_comma.csv")
    assert numeric_column(dataset.frame, "income").tolist()[:2] == [4100.05, 5200.15]


def test_thousands_separator_is_refused_not_guessed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "thousands.csv"
    src.write_text('age,income\n30,"1,200"\n40,"2,500"\n50,"3,100"\n', encoding="utf-8")
    code, err = run(
        ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--method", "mdav", "-k", "2"]
        + ["--qi", "age,income"],
        capsys,
    )
    line = error_line(err)
    assert code == 2 and "'income'" in line and "thousands.csv" in line and "line 2" in line
    assert "decimal comma or a thousands separator" in line and "decimal point" in line
    assert listing(tmp_path) == ["thousands.csv"]


# --- output paths ------------------------------------------------------------------------------


def _protect_people(tmp_path: Path, out: Path, report: Path | None = None) -> list[str]:
    src = tmp_path / PEOPLE
    if not src.exists():
        shutil.copy(BAD / PEOPLE, src)
    argv = ["protect", str(src), "-o", str(out), "--method", "mdav", "-k", "2"]
    argv += ["--qi", "age,income", "--identifiers", "id"]
    return argv + (["--report", str(report)] if report else [])


def test_output_is_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / PEOPLE
    argv = _protect_people(tmp_path, src)
    original = (BAD / PEOPLE).read_bytes()
    code, err = run(argv, capsys)
    line = error_line(err)
    assert code == 2 and "people.csv" in line and "is the input file" in line
    assert "choose another output" in line
    assert src.read_bytes() == original and listing(tmp_path) == [PEOPLE]


def test_output_folder_unwritable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()

    def denied(folder: Path, name: str) -> tuple[int, Path]:
        raise PermissionError(errno.EACCES, "Permission denied", str(folder))

    # Tests may run as root, who can write anywhere: simulate the refusal of the folder.
    monkeypatch.setattr(atomic_io, "_create_temp", denied)
    code, err = run(_protect_people(tmp_path, locked / "p.csv", locked / "p.json"), capsys)
    line = error_line(err)
    assert code == 2 and "p.csv" in line and "permission denied" in line
    assert "choose a folder you can write to" in line
    assert listing(locked) == []


def test_output_folder_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(_protect_people(tmp_path, tmp_path / "nowhere" / "p.csv"), capsys)
    line = error_line(err)
    assert code == 2 and "nowhere" in line and "does not exist" in line and "create it" in line


@pytest.mark.parametrize("failing_write", [1, 2], ids=["csv", "report"])
def test_disk_full(
    failing_write: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A full disk while writing the CSV or its report leaves neither (nor a temporary file)."""
    out = tmp_path / "out"
    out.mkdir()
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == failing_write:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(atomic_io.os, "fsync", fsync)
    code, err = run(_protect_people(tmp_path, out / "p.csv", out / "p.json"), capsys)
    line = error_line(err)
    assert code == 2 and "disk is full" in line and "free some space" in line
    assert ("p.csv" if failing_write == 1 else "p.json") in line
    assert listing(out) == []


def test_output_replaces_an_old_file_only_when_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.csv"
    out.write_text("old\n")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_io.os, "fsync", no_space)
    code, _err = run(_protect_people(tmp_path, out, tmp_path / "p.json"), capsys)
    assert code == 2 and out.read_text() == "old\n"
    assert listing(tmp_path) == ["p.csv", PEOPLE]


# --- evaluate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "protected", "extra", "words"),
    [
        (PEOPLE, "few_rows.csv", ["--qi", "age,income"], ["people.csv", "few_rows.csv", "6", "3"]),
        (PEOPLE, "empty.csv", ["--qi", "age"], ["'empty.csv'", "empty", "choose the file"]),
        ("missing_qi.csv", PEOPLE, ["--qi", "age"], ["'age'", "missing_qi.csv", "line 3, 5"]),
        (PEOPLE, "binary.csv", ["--qi", "age"], ["'binary.csv'", "binary file"]),
        (PEOPLE, PEOPLE, ["--qi", "age,nope"], ["'nope'", "not in the table"]),
    ],
    ids=["row counts differ", "empty protected", "missing values", "binary", "unknown column"],
)
def test_evaluate_keeps_the_promise(
    original: str,
    protected: str,
    extra: list[str],
    words: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "m.json"
    argv = ["evaluate", str(BAD / original), str(BAD / protected), *extra, "--json", str(out)]
    code, err = run(argv, capsys)
    line = error_line(err)
    assert code == 2
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    assert listing(tmp_path) == []


# --- large files -------------------------------------------------------------------------------


def test_five_thousand_columns(
    large: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "wide.csv"
    argv = ["protect", str(large / make_large.WIDE_NAME), "-o", str(out), "--method", "mdav"]
    code, err = run(argv + ["-k", "3", "--qi", "age,income", "--identifiers", "id"], capsys)
    assert code == 0, err
    header = out.read_text(encoding="utf-8").split("\n", 1)[0].split(",")
    assert len(header) == make_large.WIDE_COLUMNS - 1 and "id" not in header


class Recorder:
    """A progress function that records its calls and cancels at call ``cancel_at``."""

    def __init__(self, cancel_at: int | None = None) -> None:
        self.calls: list[tuple[float, str]] = []
        self.cancel_at = cancel_at

    def __call__(self, fraction: float, status: str = "", /) -> None:
        self.calls.append((fraction, status))
        if self.cancel_at is not None and len(self.calls) >= self.cancel_at:
            raise RunCancelled()


def test_million_rows_load_with_progress(large: Path) -> None:
    from microgui.core.io import read_table
    from microgui.core.table.dataset import file_line

    progress = Recorder()
    started = time.perf_counter()
    dataset = read_table(large / make_large.MILLION_NAME, progress=progress)
    seconds = time.perf_counter() - started
    assert dataset.n_records == make_large.MILLION_ROWS
    assert file_line(dataset.frame, make_large.MILLION_ROWS - 1) == make_large.MILLION_ROWS + 1
    fractions = [f for f, _ in progress.calls]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert len(fractions) >= 100  # one call per 8,192 records
    assert any("records" in status for _, status in progress.calls)
    print(f"1,000,000-row CSV read in {seconds:.1f} s")  # shown with -s; not a speed test


def test_million_rows_load_can_be_cancelled(large: Path) -> None:
    from microgui.core.io import read_table

    progress = Recorder(cancel_at=5)
    started = time.perf_counter()
    with pytest.raises(RunCancelled):
        read_table(large / make_large.MILLION_NAME, progress=progress)
    assert len(progress.calls) == 5
    assert time.perf_counter() - started < 30  # stopped in the middle, not after the whole file


def test_holes_in_several_quasi_identifiers_are_named_at_once() -> None:
    """One message names every quasi-identifier with missing cells (found by a newcomer tour:
    fixing one column and rerunning only to hear about the next)."""
    import pandas as pd

    from microgui.core.errors import InvalidInput
    from microgui.core.table.dataset import Dataset, prepare_qi
    from microgui.core.table.roles import roles_from_lists

    frame = pd.DataFrame({"a": [1.0, None, 3.0], "b": ["x", None, "y"], "c": [1.0, 2.0, None]})
    roles = roles_from_lists(list(frame.columns), qi=["a", "b", "c"], nominal=["b"])
    with pytest.raises(InvalidInput, match=r"'a'.*missing cells also in 'b', 'c'"):
        prepare_qi(Dataset(frame, roles))


def test_dates_tagged_continuous_get_the_advice_for_dates() -> None:
    import pandas as pd

    from microgui.core.errors import InvalidInput
    from microgui.core.table.dataset import Dataset, prepare_qi
    from microgui.core.table.roles import roles_from_lists

    frame = pd.DataFrame(
        {"born": pd.array(["2001-09-28", "1999-01-02", "1985-12-31"], dtype="string")}
    )
    with pytest.raises(InvalidInput, match="it holds dates: tag it ordinal"):
        prepare_qi(Dataset(frame, roles_from_lists(["born"], qi=["born"])))
