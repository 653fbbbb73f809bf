"""The command-line contract of issue 2: `microgui protect`, `--list-methods`, `--version`."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main
from tests.cli_argv import protect_argv

REPORT_KEYS = {
    "method",
    "k",
    "parameters",
    "n_records",
    "n_groups",
    "min_group_size",
    "max_group_size",
    "sse",
    "sst",
    "information_loss",
    "k_anonymity",
    "seconds",
    "microgui_version",
}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    n = 60
    df = pd.DataFrame(
        {
            "id": [f"P{i:04d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "income": (rng.lognormal(10, 0.7, n)).round(2),
            "edu": rng.choice(["low", "mid", "high"], n),
            "region": rng.choice(["north", "south", "east"], n),
            "note": [
                f'0{i}.50, "x"' for i in range(n)
            ],  # leading zero, comma, quotes: must survive
            "health": rng.normal(50, 10, n).round(3),
        }
    )
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def read_columns(path: Path) -> dict[str, list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}


def test_protect_writes_table_and_report(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, rep = tmp_path / "out.csv", tmp_path / "rep.json"
    code, _, err = run(
        protect_argv(
            table,
            out,
            "--method",
            "mdav-generic",
            "-k",
            "4",
            "--qi",
            "age,income",
            "--qi",
            "edu,region",
            "--ordinal",
            "edu=low<mid<high",
            "--nominal",
            "region",
            "--identifiers",
            "id",
            "--confidential",
            "health",
            "--group-column",
            "group",
            "--report",
            str(rep),
            keep_order=False,
        ),
        capsys,
    )
    assert code == 0, err
    report = json.loads(rep.read_text())
    assert REPORT_KEYS <= set(report)
    assert report["k"] == 4 and report["n_records"] == 60 and report["min_group_size"] >= 4
    assert report["k_anonymity"] >= 4
    original, protected = read_columns(table), read_columns(out)
    assert "id" not in protected
    assert list(protected) == ["age", "income", "edu", "region", "note", "health", "group"]
    # columns that are not quasi-identifiers come out byte-identical, the records in a random
    # order (issue 31): a permutation, no record lost, each keeping its own cells
    rows = sorted(zip(original["note"], original["health"], strict=True))
    assert sorted(zip(protected["note"], protected["health"], strict=True)) == rows
    # with --keep-order, in the input's order
    kept = tmp_path / "kept.csv"
    argv = protect_argv(table, kept, '--method', 'mdav-generic', '-k', '4', '--qi', 'age,income', '--qi', 'edu,region', '--ordinal', 'edu=low<mid<high', '--nominal', 'region', '--identifiers', 'id', '--confidential', 'health')  # fmt: skip
    assert run(argv, capsys)[0] == 0
    assert read_columns(kept)["note"] == original["note"]
    assert read_columns(kept)["health"] == original["health"]
    assert set(protected["edu"]) <= {"low", "mid", "high"}
    groups = pd.Series(protected["group"]).value_counts()
    assert groups.min() >= 4


def test_list_methods(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["protect", "--list-methods"], capsys)
    assert code == 0
    assert "mdav " in out and "mdav-generic" in out and "Domingo-Ferrer & Torra 2005" in out
    assert "003_309fe4adb430bc25.txt" not in out  # authors and year, not a file name


def test_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "microgui", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("microgui ")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--qi", "age,nope"], "'nope'"),
        (["--qi", "age,edu"], "is tagged continuous but line 2 holds"),
        (["--qi", "age", "-k", "1"], "k=1"),
        (["--qi", "age", "-k", "61"], "larger than the number of records"),
        (["--qi", "age", "-k", "abc"], "'abc' is not a whole number"),
        (["--qi", "age", "--method", "nosuch"], "unknown method 'nosuch'"),
        (["--qi", "age", "--param", "rescale_variance=maybe"], "rescale_variance"),
        (["--qi", "age", "--param", "nosuch=1"], "no parameter 'nosuch'"),
        (["--qi", "age", "--ordinal", "edu=low"], "at least two categories"),
        (["--qi", "age,edu", "--ordinal", "edu=low<mid"], "'high'"),
    ],
)
def test_user_errors_exit_2_one_line_nothing_written(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "o.csv"
    argv = ["protect", str(table), "-o", str(out), "--method", "mdav", "-k", "3"]
    # later options win in argparse for -k/--method; --qi etc. accumulate
    code, stdout, err = run(argv + extra, capsys)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["people.csv"]


def test_output_equal_to_input_refused(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = table.read_bytes()
    code, _, err = run(
        ["protect", str(table), "-o", str(table), "--method", "mdav", "-k", "3", "--qi", "age"],
        capsys,
    )
    assert code == 2 and "is the input file" in err
    assert table.read_bytes() == before


def test_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        protect_argv(
            tmp_path / "missing.csv",
            tmp_path / "o.csv",
            "--method",
            "mdav",
            "-k",
            "3",
            "--qi",
            "a",
            keep_order=False,
        ),
        capsys,
    )
    assert code == 2 and "missing.csv" in err and len(err.strip().splitlines()) == 1


def test_missing_required_option(table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["protect", str(table), "--method", "mdav", "-k", "3", "--qi", "age"], capsys
    )
    assert code == 2 and "-o OUTPUT" in err


def test_mdav_refuses_categorical_qis(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        protect_argv(
            table,
            tmp_path / "o.csv",
            "--method",
            "mdav",
            "-k",
            "3",
            "--qi",
            "age,region",
            "--nominal",
            "region",
            keep_order=False,
        ),
        capsys,
    )
    assert code == 2 and "mdav-generic" in err


def test_mstk_generalizes_and_reports_generalization_il(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, rep = tmp_path / "g.csv", tmp_path / "g.json"
    code, _, err = run(
        protect_argv(
            table,
            out,
            "--method",
            "mstk",
            "-k",
            "3",
            "--qi",
            "age,region",
            "--nominal",
            "region",
            "--identifiers",
            "id",
            "--report",
            str(rep),
            keep_order=False,
        ),
        capsys,
    )
    assert code == 0, err
    assert "generalization IL" in err
    report = json.loads(rep.read_text())
    assert report["information_loss"] is None and report["generalization_il"] >= 0
    assert report["k_anonymity"] >= 3
    assert sorted(read_columns(out)["note"]) == sorted(read_columns(table)["note"])


# --- issue 6: strata, blocks, engines ---------------------------------------------------------
def _protect_argv(table: Path, out: Path, *extra: str) -> list[str]:
    base = ["protect", str(table), "-o", str(out), "--method", "mdav", "-k", "3"]
    return [*base, "--qi", "age,income", "--identifiers", "id", *extra]


def test_protect_with_strata_and_blocks(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, rep = tmp_path / "s.csv", tmp_path / "s.json"
    argv = _protect_argv(
        table, out, "--strata", "region", "--block-size", "8", "--report", str(rep)
    )
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert "3 strata" in err and "engine in-process" in err
    report = json.loads(rep.read_text())
    scale = report["scale"]
    assert scale["strata"] == ["region"] and scale["n_strata"] == 3
    assert scale["block_sizes"]["max"] <= 8 and scale["n_blocks"] > 3
    assert report["k_anonymity"] >= 3
    original, protected = read_columns(table), read_columns(out)
    # the records in a random order (issue 31): each keeps its note and region
    pairs = sorted(zip(original["note"], original["region"], strict=True))
    assert sorted(zip(protected["note"], protected["region"], strict=True)) == pairs
    # no group spans two regions
    frame = pd.read_csv(out)
    assert (frame.groupby(["age", "income"])["region"].nunique() == 1).all()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strata", "nope"], "--strata names column 'nope', which is not in the table"),
        (["--strata", "id"], "strata column 'id' is an identifier"),
        (["--block-size", "5"], "block size 5 is smaller than 2k = 6"),
        (["--block-size", "lots"], "block size 'lots' is not a whole number"),
        (["--engine", "dask", "--block-size", "20"], "needs the address of a Dask scheduler"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "used only by --engine dask"),
        (["--workers", "two"], "workers 'two' is not a whole number"),
        (["--workers", "0"], "workers=0 must be a whole number >= 1"),
        (["--engine", "ray"], "unknown engine 'ray'"),
    ],
)
def test_scale_options_are_checked(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "o.csv"
    code, _, err = run(_protect_argv(table, out, *extra), capsys)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()
