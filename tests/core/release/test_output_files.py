"""Issue 12, output paths and written files: findings 3, 5 (export side), 6, 7, 16, 17 and the
minor ones (SIGTERM, blank ``--allow-unsafe``, ``-o folder/``, long names, FIFOs).

No path a run reads (data, hierarchy, project) is ever written by it; the CSV reads back to the
checked table whatever its text holds (CR, LF, quotes, formulas, NUL refused); every column dtype
a reader returns passes the formula neutralizer; the CSV and its report are one release; special
files are never replaced; SIGTERM cleans up like Ctrl-C.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import errno
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microgui.core.io.atomic as atomic_io
import microgui.core.io.csv_write as csv_write
from microgui.cli import main
from microgui.core.errors import ExportRefused
from microgui.core.io import (
    check_write_targets,
    read_frame,
    read_table,
    write_csv_atomic,
    write_files_atomic,
    write_json_atomic,
    write_text_atomic,
)
from microgui.core.metrics import k_anonymity_level
from microgui.core.release.check import (
    check_export,
    export_run,
    neutralize_column_names,
    neutralize_formulas,
)
from microgui.core.release.order import RecordOrder, release_permutation
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.numbers import whole_numbers_written_plain
from microgui.core.table.roles import roles_from_lists
from tests.cli_argv import protect_argv

BAD = Path(__file__).resolve().parents[2] / "data" / "bad"
ROOT = Path(__file__).resolve().parents[3]
HIERARCHY = "north;*\nsouth;*\neast;*\n"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {err!r}"
    assert lines[0].startswith("microgui: error: ")
    return lines[0]


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


@pytest.fixture
def people(tmp_path: Path) -> Path:
    src = tmp_path / "people.csv"
    shutil.copy(BAD / "people.csv", src)
    (tmp_path / "h.csv").write_text(HIERARCHY, encoding="utf-8")
    return src


def mstk_argv(src: Path, out: Path | str, report: Path | str | None = None) -> list[str]:
    argv = ["protect", str(src), "-o", str(out), "--keep-order", "--method", "mstk", "-k", "2"]
    argv += ["--qi", "age,income,region", "--nominal", "region", "--identifiers", "id"]
    argv += ["--hierarchy", f"region={src.parent / 'h.csv'}"]
    return argv + (["--report", str(report)] if report is not None else [])


def spellings(folder: Path, name: str) -> list[Path]:
    """Other names of ``folder/name``: itself, through ``sub/..``, a symlink, a hard link."""
    (folder / "sub").mkdir(exist_ok=True)
    sym, hard = folder / "sym.csv", folder / "hard.csv"
    if not sym.exists():
        sym.symlink_to(folder / name)
    if not hard.exists():
        os.link(folder / name, hard)
    return [folder / name, folder / "sub" / ".." / name, sym, hard]


# --- finding 3: no path a run reads is written by it ------------------------------------------


@pytest.mark.parametrize("which", ["output", "report"])
@pytest.mark.parametrize("spelling", range(4), ids=["same", "dotdot", "symlink", "hardlink"])
def test_protect_never_writes_the_hierarchy(
    which: str, spelling: int, people: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = people.parent
    target = spellings(folder, "h.csv")[spelling]
    out, report = (target, folder / "r.json") if which == "output" else (folder / "o.csv", target)
    before = listing(folder)
    code, err = run(mstk_argv(people, out, report), capsys)
    line = error_line(err)
    assert code == 2 and "input file" in line and "choose another" in line
    assert (folder / "h.csv").read_text(encoding="utf-8") == HIERARCHY
    assert listing(folder) == before


@pytest.mark.parametrize("target", ["original", "protected", "hierarchy"])
def test_evaluate_json_never_writes_an_input(
    target: str, people: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    protected = tmp_path / "prot.csv"
    assert main(mstk_argv(people, protected)) == 0
    capsys.readouterr()
    paths = {"original": people, "protected": protected, "hierarchy": tmp_path / "h.csv"}
    victim = paths[target]
    sym = tmp_path / "link.json"
    sym.symlink_to(victim)
    before = victim.read_bytes()
    for spelling in (victim, sym, tmp_path / "sub" / ".." / victim.name):
        (tmp_path / "sub").mkdir(exist_ok=True)
        argv = ["evaluate", str(people), str(protected), "--qi", "age,income,region"]
        argv += ["--nominal", "region", "--hierarchy", f"region={tmp_path / 'h.csv'}"]
        code, err = run([*argv, "--json", str(spelling)], capsys)
        line = error_line(err)
        assert code == 2 and "input file" in line, line
        assert victim.read_bytes() == before


@pytest.mark.parametrize("command", ["sweep", "dependency-tree"])
def test_sweep_and_tree_json_never_write_the_input(
    command: str, people: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = people.read_bytes()
    for spelling in spellings(people.parent, people.name):
        if command == "sweep":
            argv = ["sweep", str(people), "--qi", "age,income", "--methods", "mdav", "--k", "2"]
        else:
            argv = ["dependency-tree", str(people), "--attributes", "age,income"]
        code, err = run([*argv, "--workers", "1"] if command == "sweep" else argv, capsys)
        assert code == 0
        code, err = run([*argv, "--json", str(spelling)], capsys)
        line = error_line(err)
        assert code == 2 and "input file" in line
        assert people.read_bytes() == before


def _people_run(people: Path) -> tuple[Dataset, object]:
    loaded = read_table(people)
    roles = roles_from_lists(
        list(loaded.frame.columns),
        qi=["age", "income", "region"],
        nominal=["region"],
        identifiers=["id"],
    )
    dataset = Dataset(loaded.frame, roles, loaded.source)
    spec = RunSpec.make("mstk", 2, {}, 1, {"region": str(people.parent / "h.csv")})
    return dataset, run_protection(dataset, spec)


def test_api_export_never_writes_a_hierarchy_or_extra_protected_file(people: Path) -> None:
    dataset, result = _people_run(people)
    folder = people.parent
    for target in spellings(folder, "h.csv"):
        with pytest.raises(ExportRefused, match="input file"):
            export_run(dataset, result, target, folder / "r.json")  # type: ignore[arg-type]
        with pytest.raises(ExportRefused, match="input file"):
            export_run(dataset, result, folder / "o.csv", target)  # type: ignore[arg-type]
    project = folder / "p.mgproj"
    project.write_text("{}", encoding="utf-8")
    with pytest.raises(ExportRefused, match="input file"):
        export_run(dataset, result, project, also_protect=[project])  # type: ignore[arg-type]
    assert (folder / "h.csv").read_text(encoding="utf-8") == HIERARCHY
    assert project.read_text(encoding="utf-8") == "{}"
    assert not (folder / "o.csv").exists() and temps(folder) == []


def test_writers_take_a_collection_of_protected_paths(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("a\n")
    b.write_text("b\n")
    for writer in (
        lambda p: write_text_atomic("x", p, protect_from=[a, b]),
        lambda p: write_json_atomic({}, p, protect_from=(str(a), str(b))),
        lambda p: write_csv_atomic(pd.DataFrame({"x": [1]}), p, protect_from={a, b}),
    ):
        for target in (a, b, tmp_path / "." / "b.csv"):
            with pytest.raises(ExportRefused, match="input file"):
                writer(target)
    assert a.read_text() == "a\n" and b.read_text() == "b\n" and temps(tmp_path) == []
    # the same file given twice as a target is refused before anything is written
    os.link(a, tmp_path / "a2.csv")
    with pytest.raises(ExportRefused, match="same file"):
        write_files_atomic(
            [
                (tmp_path / "c.csv", lambda h: h.write("1")),
                (tmp_path / "c.csv", lambda h: h.write("2")),
            ]
        )
    with pytest.raises(ExportRefused, match="same file"):
        check_write_targets([a, tmp_path / "a2.csv"])
    assert not (tmp_path / "c.csv").exists()


# --- finding 6: CR and other hostile text round-trips --------------------------------------


HOSTILE = ["x\ry", "\r", "a\r\nb", "p\nq", 'say "hi"', "a,b", " lead", "trail ", "\x85", "\u2028"]


def read_back_all(path: Path) -> tuple[pd.DataFrame, list[list[str]], pd.DataFrame]:
    by_pandas = pd.read_csv(path, dtype=str, keep_default_na=False)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return by_pandas, rows, read_frame(path)


def test_cr_in_cells_and_names_is_quoted_and_reads_back(tmp_path: Path) -> None:
    frame = pd.DataFrame({"t": HOSTILE, "n\rame": range(len(HOSTILE)), "c": ["k"] * len(HOSTILE)})
    out = tmp_path / "cr.csv"
    write_csv_atomic(frame, out)
    by_pandas, rows, mine = read_back_all(out)
    assert list(by_pandas.columns) == ["t", "n\rame", "c"]
    assert by_pandas["t"].tolist() == HOSTILE
    assert rows[0] == ["t", "n\rame", "c"] and [r[0] for r in rows[1:]] == HOSTILE
    assert list(mine.columns) == ["t", "n\rame", "c"] and mine["t"].tolist() == HOSTILE
    assert len(mine) == len(frame)
    # a file without CR is unchanged: minimal quoting, "\n" line ends
    write_csv_atomic(pd.DataFrame({"a": ["x", "y z"]}), out)
    assert out.read_bytes() == b"a\nx\ny z\n"


def test_cr_in_a_large_table_is_quoted_in_every_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_write, "CSV_CHUNK_ROWS", 7)
    values = [f"r{i}\r=x" if i % 5 == 0 else f"r{i}" for i in range(40)]
    frame = pd.DataFrame({"t": values, "v": np.arange(40) * 0.1})
    out = tmp_path / "big.csv"
    write_csv_atomic(frame, out)
    back = pd.read_csv(out, dtype={"t": str}, keep_default_na=False)
    assert back["t"].tolist() == values and back["v"].tolist() == frame["v"].tolist()


@pytest.mark.parametrize("where", ["cell", "name"])
def test_nul_is_refused_with_the_column_and_line(where: str, tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": ["x", "y", "z"], "b": [1, 2, 3]})
    if where == "cell":
        frame.loc[1, "a"] = "y\x00"
    else:
        frame.columns = ["a\x00", "b"]
    out = tmp_path / "nul.csv"
    with pytest.raises(ExportRefused) as info:
        write_csv_atomic(frame, out)
    message = str(info.value)
    assert "NUL" in message and "\n" not in message and "\x00" not in message
    assert ("line 3" in message) if where == "cell" else ("column name" in message)
    assert listing(tmp_path) == []


def test_protect_with_cr_in_a_nominal_qi_reads_back_k_anonymous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ["id,age,city,note"]
    cities = ['"Oslo\r=cmd()"', "Bergen", '"Oslo\rBergen"', '"\rx"']
    notes = ['"n\r"', "ok", "ok"]
    for i in range(16):
        rows.append(f"{i},{20 + i},{cities[i % 4]},{notes[i % 3]}")
    src = tmp_path / "in.csv"
    src.write_bytes(("\n".join(rows) + "\n").encode())
    out, report = tmp_path / "out.csv", tmp_path / "out.json"
    argv = protect_argv(src, out, "--method", "mdav-generic", "-k", "4")
    argv += [
        "--qi",
        "age,city",
        "--nominal",
        "city",
        "--identifiers",
        "id",
        "--report",
        str(report),
    ]
    code, err = run(argv, capsys)
    assert code == 0, err
    back = read_frame(out)
    assert len(back) == 16
    assert k_anonymity_level(back, ["age", "city"]) >= 4
    assert pd.read_csv(out).shape[0] == 16
    # the formula after the CR is neutralized too (a spreadsheet splitting at CR would run it)
    assert "Oslo\r'=cmd()" in back["city"].tolist()
    assert json.loads(report.read_text())["neutralized_cells"]["city"] >= 1


def test_formula_after_a_line_break_is_neutralized() -> None:
    frame = pd.DataFrame(
        {
            "t": [
                "x\r=cmd",
                "x\n+1+1",
                "x\r\n@SUM(A1)",
                "a\r\tb",
                "x\n-3.5",
                "=a\n=b",
                "ok\nfine",
                "\r",
                "\n=x",
            ]
        }
    )
    out, counts = neutralize_formulas(frame)
    assert out["t"].tolist() == [
        "x\r'=cmd",
        "x\n'+1+1",
        "x\r\n'@SUM(A1)",
        "a\r'\tb",
        "x\n-3.5",
        "'=a\n'=b",
        "ok\nfine",
        "'\r",
        "\n'=x",
    ]
    assert counts == {"t": 7}


# --- the property test -------------------------------------------------------------------------

HOSTILE_CHARS = ["\r", "\n", '"', ",", "=", "+", "-", "@", "\t", "'", " ", ";", "\x00"]
TEXT = st.text(alphabet=st.sampled_from(["a", "b", "Z", *HOSTILE_CHARS]), min_size=1, max_size=6)


def _missing_marker(value: str) -> bool:
    # Cells the readers treat as missing on purpose (empty after stripping, "-", ".", "NA"...).
    return value.strip() in ("", "-", ".", "NA", "N/A", "null", "NULL", "nan", "NaN")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cats=st.lists(
        TEXT.filter(lambda v: not _missing_marker(v)), min_size=2, max_size=4, unique=True
    ),
    notes=st.lists(TEXT, min_size=12, max_size=12),
    name=TEXT,
    keep=st.booleans(),
    order_seed=st.one_of(st.none(), st.integers(0, 2**32)),
)
def test_written_csv_reads_back_to_the_checked_table(
    cats: list[str],
    notes: list[str],
    name: str,
    keep: bool,
    order_seed: int | None,
    tmp_path: Path,
) -> None:
    """The file holds the checked table's records: in the input order (``order_seed`` None:
    kept) or in the permutation its seed draws (issue 31), none lost, none repeated."""
    if "\x00" in name or name in ("age", "city") or _missing_marker(name):
        name = "note"
    n = 12
    frame = pd.DataFrame(
        {
            "age": np.arange(n) % 5 + 20,
            "city": [cats[i % len(cats)] for i in range(n)],
            name: notes,
        }
    )
    roles = roles_from_lists(list(frame.columns), qi=["age", "city"], nominal=["city"])
    dataset = Dataset.from_frame(frame, roles)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 2, {}, 1))
    check = check_export(result)
    assert check.ok
    out = tmp_path / f"p{abs(hash((tuple(cats), tuple(notes), name, keep)))}.csv"
    if any("\x00" in v for v in [*cats, *notes]):
        with pytest.raises(ExportRefused, match="NUL"):
            export_run(dataset, result, out, keep_formula_cells=keep)
        assert not out.exists()
        return
    order = RecordOrder(keep=True) if order_seed is None else RecordOrder(seed=order_seed)
    export_run(dataset, result, out, keep_formula_cells=keep, order=order)
    expected = result.protected.iloc[release_permutation(n, order)].reset_index(drop=True)
    if not keep:
        expected = neutralize_column_names(neutralize_formulas(expected)[0])[0]
    # whole means are written without ".0" (issue 13: 20, not 20.0)
    expected = whole_numbers_written_plain(expected, result.qi.continuous_names).astype(str)
    by_pandas, rows, mine = read_back_all(out)
    assert list(by_pandas.columns) == list(expected.columns)
    assert rows[0] == list(expected.columns) and len(rows) == n + 1
    for position, column in enumerate(expected.columns):
        want = expected[column].tolist()
        assert by_pandas.iloc[:, position].tolist() == want
        assert [r[position] for r in rows[1:]] == want
    assert k_anonymity_level(by_pandas, ["age", "city"]) >= 2
    assert list(mine.columns) == list(expected.columns) and len(mine) == n
    for position, column in enumerate(expected.columns):
        got = ["" if pd.isna(v) else str(v) for v in mine.iloc[:, position]]
        want = expected[column].tolist()
        assert [g for g, w in zip(got, want, strict=True) if not _missing_marker(w)] == [
            w for w in want if not _missing_marker(w)
        ]
    assert k_anonymity_level(mine, ["age", "city"]) >= 2


# --- finding 7: a formula in a column name -------------------------------------------------------


def test_formula_column_names_are_neutralized_and_counted(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "age": np.arange(12) % 4 + 20,
            '=HYPERLINK("http://x")': ["a"] * 12,
            "+cmd": range(12),
            "x\r@y": ["b"] * 12,
            "-3.5": ["c"] * 12,
        }
    )
    dataset = Dataset.from_frame(frame, roles_from_lists(list(frame.columns), qi=["age"]))
    result = run_protection(dataset, RunSpec.make("mdav", 3, {}, 1))
    out = tmp_path / "o.csv"
    report = export_run(dataset, result, out, tmp_path / "o.json")
    header = next(csv.reader(io.StringIO(out.read_bytes().decode(), newline="")))
    assert header == ["age", '\'=HYPERLINK("http://x")', "'+cmd", "x\r'@y", "-3.5"]
    assert report["neutralized_column_names"] == 3
    assert json.loads((tmp_path / "o.json").read_text())["neutralized_column_names"] == 3
    export_run(dataset, result, out, keep_formula_cells=True)
    assert next(csv.reader(io.StringIO(out.read_bytes().decode(), newline="")))[1][0] == "="


def test_neutralized_name_that_collides_is_refused(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": np.arange(6) % 3, "=x": [1] * 6, "'=x": [2] * 6})
    dataset = Dataset.from_frame(frame, roles_from_lists(list(frame.columns), qi=["age"]))
    result = run_protection(dataset, RunSpec.make("mdav", 2, {}, 1))
    with pytest.raises(ExportRefused, match="rename"):
        export_run(dataset, result, tmp_path / "o.csv")
    assert listing(tmp_path) == []


# --- finding 5: every dtype a reader returns passes the neutralizer and exports ---------------


def every_dtype_frame(n: int = 6) -> pd.DataFrame:
    day = dt.date(2024, 1, 1)
    frame = pd.DataFrame(
        {
            "age": np.arange(n) % 3 + 30,
            "date": [day + dt.timedelta(days=i) for i in range(n)],
            "datetime64": pd.date_range("2024-01-01", periods=n, freq="D"),
            "datetime_tz": pd.date_range("2024-01-01", periods=n, freq="h", tz="Europe/Oslo"),
            "datetime_obj": [dt.datetime(2024, 1, 1, i) for i in range(n)],
            "time": [dt.time(i, 30) for i in range(n)],
            "timedelta": pd.to_timedelta(np.arange(n), unit="D"),
            "timedelta_obj": [dt.timedelta(minutes=i) for i in range(n)],
            "decimal": [decimal.Decimal("1.10") + i for i in range(n)],
            "category": pd.Categorical(["=a", "b"] * (n // 2)),
            "category_int": pd.Categorical([1, 2] * (n // 2)),
            "bool": [True, False] * (n // 2),
            "boolean": pd.array([True, None] * (n // 2), dtype="boolean"),
            "Int64": pd.array([1, None] * (n // 2), dtype="Int64"),
            "Float64": pd.array([1.5, None] * (n // 2), dtype="Float64"),
            "string": pd.array(["=s", None] * (n // 2), dtype="string"),
            "period": pd.period_range("2024-01", periods=n, freq="M"),
            "interval": pd.interval_range(0, n),
            "mixed": ["=m", decimal.Decimal("2"), dt.date(2020, 1, 1), 3, None, b"=b"][:n],
            "bytes": [b"=x"] * n,
            "complex": np.arange(n) + 1j,
            "all_missing": [None] * n,
        }
    )
    try:
        frame["arrow_string"] = pd.array(["=p", "q"] * (n // 2), dtype="string[pyarrow]")
    except (ImportError, TypeError):
        pass
    return frame


def test_neutralizer_passes_every_dtype() -> None:
    frame = every_dtype_frame()
    out, counts = neutralize_formulas(frame)
    assert counts == {
        "category": 3,
        "string": 3,
        "mixed": 1,
        **({"arrow_string": 3} if "arrow_string" in frame.columns else {}),
    }
    for column in frame.columns:
        if column not in counts:
            assert out[column].dtype == frame[column].dtype, column
            pd.testing.assert_series_equal(out[column], frame[column])
    assert out["category"].tolist()[0] == "'=a" and out["mixed"].tolist()[1] == decimal.Decimal("2")


def test_export_passes_every_dtype(tmp_path: Path) -> None:
    frame = every_dtype_frame()
    roles = roles_from_lists(list(frame.columns), qi=["age"])
    dataset = Dataset.from_frame(frame, roles)
    result = run_protection(dataset, RunSpec.make("mdav", 2, {}, 1))
    out = tmp_path / "all.csv"
    # read back row for row: the input order kept (a release is shuffled by default, issue 31)
    report = export_run(dataset, result, out, tmp_path / "all.json", order=RecordOrder(keep=True))
    back = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(back.columns) == list(frame.columns) and len(back) == len(frame)
    assert back["date"].tolist()[0] == "2024-01-01"
    assert back["decimal"].tolist()[0] == "1.10"
    assert back["category"].tolist()[0] == "'=a"
    assert report["neutralized_cells"]["category"] == 3


# --- finding 16: the CSV and its report are one release ------------------------------------------


@pytest.mark.parametrize(
    "case", ["missing folder", "folder", "name too long", "trailing slash", "unwritable folder"]
)
def test_bad_report_path_keeps_the_old_csv(
    case: str, people: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = people.parent
    out = folder / "out.csv"
    out.write_text("old\n")
    report: str = {
        "missing folder": str(folder / "nowhere" / "r.json"),
        "folder": str(folder / "sub"),
        "name too long": str(folder / ("r" * 300 + ".json")),
        "trailing slash": str(folder / "newdir") + "/",
        "unwritable folder": str(folder / "locked" / "r.json"),
    }[case]
    (folder / "sub").mkdir()
    (folder / "locked").mkdir()
    real_create = atomic_io._create_temp

    def create(where: Path, name: str) -> tuple[int, Path]:
        if where.name == "locked":  # tests may run as root: simulate the refusal
            raise PermissionError(errno.EACCES, "Permission denied", str(where))
        return real_create(where, name)

    monkeypatch.setattr(atomic_io, "_create_temp", create)
    before = listing(folder)
    code, err = run(mstk_argv(people, out, report), capsys)
    line = error_line(err)
    assert code == 2, err
    assert out.read_text() == "old\n" and listing(folder) == before and temps(folder) == []
    assert "choose" in line or "create it" in line


def test_failed_second_rename_restores_the_first_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = tmp_path / "a.csv", tmp_path / "b.json", tmp_path / "c.txt"
    a.write_text("old a\n")
    real_replace = os.replace

    def replace(src: object, dst: object) -> None:
        if Path(str(dst)).name == "c.txt":
            raise PermissionError(errno.EACCES, "Permission denied")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic_io.os, "replace", replace)
    items = [
        (a, lambda h: h.write("new a\n")),
        (b, lambda h: h.write("{}")),
        (c, lambda h: h.write("c")),
    ]
    with pytest.raises(ExportRefused, match="c.txt"):
        write_files_atomic(items)  # type: ignore[arg-type]
    assert a.read_text() == "old a\n" and not b.exists() and not c.exists()
    assert listing(tmp_path) == ["a.csv"]


# --- finding 17: special files are never replaced ------------------------------------------------


def _special_targets(folder: Path) -> dict[str, Path]:
    fifo = folder / "fifo.csv"
    os.mkfifo(fifo)
    sock_path = folder / "sock.csv"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    sock.close()
    to_null = folder / "null.csv"
    to_null.symlink_to(os.devnull)
    to_proc = folder / "proc.csv"
    to_proc.symlink_to("/proc/self/status")
    to_fd = folder / "fd.csv"
    to_fd.symlink_to("/proc/self/fd/0")
    return {"fifo": fifo, "socket": sock_path, "null": to_null, "proc": to_proc, "fd": to_fd}


@pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, sockets and /proc")
def test_special_output_targets_are_refused(
    people: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = people.parent
    specials = _special_targets(folder)
    for kind, target in specials.items():
        for argv in (
            mstk_argv(people, target),
            mstk_argv(people, folder / "o.csv", target),
            ["dependency-tree", str(people), "--attributes", "age,income", "--json", str(target)],
        ):
            code, err = run(argv, capsys)
            line = error_line(err)
            assert code == 2 and "not a regular file" in line, (kind, line)
            assert target.is_symlink() or not target.is_file(), kind
    # checked without writing: a device node given directly
    for device in (os.devnull, "/dev/zero", "/proc/self/status"):
        with pytest.raises(ExportRefused, match="not a regular file"):
            check_write_targets([device])
    assert not (folder / "o.csv").exists() and temps(folder) == []


def test_symlink_to_a_regular_file_is_replaced_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("keep\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text_atomic("new\n", link)
    assert real.read_text() == "keep\n"
    assert not link.is_symlink() and link.read_text() == "new\n"


# --- minor: trailing slash, long names, blank override, FIFO input ------------------------------


@pytest.mark.parametrize("existing", [False, True])
def test_output_with_a_trailing_slash_is_a_folder(
    existing: bool, people: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = people.parent
    if existing:
        (folder / "nosuchdir").mkdir()
    before = listing(folder)
    target = str(folder / "nosuchdir") + os.sep
    for argv in (
        mstk_argv(people, target),
        ["dependency-tree", str(people), "--attributes", "age,income", "--json", target],
    ):
        code, err = run(argv, capsys)
        line = error_line(err)
        assert code == 2 and "folder" in line and "file name" in line, line
        assert listing(folder) == before
    with pytest.raises(ExportRefused, match="folder"):
        write_text_atomic("x", target)
    assert listing(folder) == before


def test_long_valid_names_are_written(people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = people.parent
    for length in (244, 250, 255):
        out = folder / ("o" * (length - 4) + ".csv")
        report = folder / ("r" * (length - 5) + ".json")
        code, err = run(mstk_argv(people, out, report), capsys)
        assert code == 0, err
        assert out.exists() and report.exists() and temps(folder) == []
    too_long = folder / ("x" * 252 + ".csv")
    code, err = run(mstk_argv(people, too_long), capsys)
    line = error_line(err)
    assert code == 2 and "too long" in line and "shorter" in line
    wide = folder / ("é" * 127 + ".csv")  # 258 bytes in UTF-8
    with pytest.raises(ExportRefused, match="too long"):
        write_text_atomic("x", wide)
    assert temps(folder) == []


@pytest.mark.parametrize("reason", ["", "  ", "\t", "...", "\u200b", "- -"])
def test_override_reason_needs_words(
    reason: str, people: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = people.parent
    argv = protect_argv(people, folder / "o.csv", "--method", "mdav", "-k", "2")
    argv += ["--qi", "age,income", "--allow-unsafe", reason]
    code, err = run(argv, capsys)
    line = error_line(err)
    assert code == 2 and "--allow-unsafe" in line and "reason" in line
    assert not (folder / "o.csv").exists()
    dataset, result = _people_run(people)
    with pytest.raises(ExportRefused, match="reason"):
        export_run(dataset, result, folder / "o.csv", override=reason)  # type: ignore[arg-type]
    assert not (folder / "o.csv").exists()


def test_override_reason_is_recorded_on_one_line(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": [1, 1, 2, 2, 9], "x": range(5)})
    dataset = Dataset.from_frame(frame, roles_from_lists(list(frame.columns), qi=["age"]))
    result = run_protection(dataset, RunSpec.make("mdav", 2, {}, 1))
    # a table that fails the check (a given check no longer decides: the writer measures)
    unsafe = result.protected.copy()
    unsafe.loc[unsafe.index[-1], "age"] = 99
    report = export_run(
        dataset, result, tmp_path / "o.csv", override="  test\nrelease  ", table=unsafe
    )
    assert report["export_override"]["reason"] == "test release"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_fifo_input_has_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    argv = protect_argv(fifo, tmp_path / "o.csv", "--method", "mdav", "-k", "2")
    code, err = run([*argv, "--qi", "age"], capsys)
    line = error_line(err)
    assert code == 2 and "in.csv" in line and "not a regular file" in line
    assert "empty" not in line


# --- minor: SIGTERM during a write ---------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    real_fsync = os.fsync
    def paused_fsync(fd):
        print("ready", flush=True)
        signal.pause()  # the test sends SIGTERM now, while the temporary file exists
    os.fsync = paused_fsync
    from microgui.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("command", ["protect", "dependency-tree"])
def test_sigterm_during_a_write_leaves_no_temp_file(command: str, people: Path) -> None:
    folder = people.parent / "out"
    folder.mkdir()
    if command == "protect":
        argv = mstk_argv(people, folder / "o.csv", folder / "o.json")
    else:
        argv = ["dependency-tree", str(people), "--attributes", "age,income"]
        argv += ["--json", str(folder / "t.json")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=people.parent,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and line.strip() != "ready":
            line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else ""
        assert temps(folder), "the child should be writing"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "terminated" in err
    assert listing(folder) == []
