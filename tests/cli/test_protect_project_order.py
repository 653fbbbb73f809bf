"""``protect --project P --run N`` writes the records in the order of run N's last export from
the app, whose seed the project keeps (issue 30; :mod:`microgui.core.release.order`): byte for
byte the app's file, said in one line on stderr, the seed in no report; an explicit
``--order-seed``/``--keep-order``, or another table, draws its own order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.io import read_table
from microgui.core.release.check import export_run
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import Project, export_record, save_project
from microgui.core.runs.protect import run_protection
from microgui.core.table.roles import roles_from_lists

SEED = 2**64 - 3  # the largest seeds too (the app draws 64 bits)


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A table, an "app export" of its run 7 in a random order from a seed drawn for it, and
    the project keeping that seed: (project, table, the exported bytes)."""
    rng = np.random.default_rng(1)
    n = 60
    table = tmp_path / "survey.csv"
    pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(8, 1, n), 2),
            "hours": rng.integers(1, 60, n),
        }
    ).to_csv(table, index=False)
    loaded = read_table(table)
    roles = roles_from_lists([str(c) for c in loaded.frame.columns], qi=["age", "income", "hours"])
    dataset = loaded.with_roles(roles)
    spec = RunSpec.make("mdav", 3, seed=4)
    app = tmp_path / "app.csv"
    export_run(dataset, run_protection(dataset, spec), app,
               order=RecordOrder(seed=SEED, origin="session"))  # fmt: skip
    project = tmp_path / "survey.microgui.json"
    save_project(
        Project(
            data_path=str(table),
            columns=tuple(str(c) for c in loaded.frame.columns),
            roles=roles,
            runs=(spec, RunSpec.make("mdav", 4, seed=5)),
            run_ids=(7, 8),
            run_exports=((export_record("app.csv", "2026-11-29T07:00:00", SEED),), ()),
        ),
        project,
    )
    return project, table, app.read_bytes()


def test_a_run_replays_its_last_export_order_and_says_so(
    session: tuple[Path, Path, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _table, app = session
    out, report = tmp_path / "cli.csv", tmp_path / "cli.json"
    argv = ["protect", "--project", str(project), "--run", "7", "-o", str(out)]
    assert main([*argv, "--report", str(report)]) == 0
    assert out.read_bytes() == app
    said = [line for line in capsys.readouterr().err.splitlines() if "record order" in line]
    assert len(said) == 1 and "run #7's last export" in said[0] and "app.csv" in said[0]
    written = report.read_text(encoding="utf-8")
    order = json.loads(written)["record_order"]
    assert order["seed"] is None and order["replayed_from_project"] is True
    assert str(SEED) not in written and str(SEED) not in "".join(said)


def test_an_explicit_order_or_another_table_is_not_the_exports(
    session: tuple[Path, Path, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, table, app = session
    base = ["protect", "--project", str(project), "--run", "7"]
    assert main([*base, "-o", str(tmp_path / "k.csv"), "--keep-order"]) == 0
    assert main([*base, "-o", str(tmp_path / "s.csv"), "--order-seed", "5"]) == 0
    assert "record order" not in capsys.readouterr().err
    assert app not in ((tmp_path / "k.csv").read_bytes(), (tmp_path / "s.csv").read_bytes())
    copy = tmp_path / "copy" / "survey.csv"
    copy.parent.mkdir()
    shutil.copy(table, copy)
    assert main([*base, "--input", str(copy), "-o", str(tmp_path / "c.csv")]) == 0
    assert "not the project's table" in capsys.readouterr().err
    # run 8 was never exported: a fresh random order, said by nothing
    assert main(["protect", "--project", str(project), "--run", "8", "-o",
                 str(tmp_path / "8.csv")]) == 0  # fmt: skip
    assert "record order" not in capsys.readouterr().err


def test_another_table_keeps_the_projects_input_order_option(
    session: tuple[Path, Path, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project whose export option keeps the input order (issue 31) keeps it for another
    table too; only the export's random order is not replayed there (it drew a fresh random
    order before session 44)."""
    project_path, table, _app = session
    project = replace_keep_order(project_path, True)
    copy = tmp_path / "copy" / "survey.csv"
    copy.parent.mkdir()
    shutil.copy(table, copy)
    base = ["protect", "--project", str(project), "--run", "7", "--input", str(copy)]
    assert main([*base, "-o", str(tmp_path / "kept.csv"), "--keep-order"]) == 0
    capsys.readouterr()
    assert main([*base, "-o", str(tmp_path / "option.csv")]) == 0
    said = capsys.readouterr().err
    assert "not the project's table: the input order (the project's export option)" in said
    assert (tmp_path / "option.csv").read_bytes() == (tmp_path / "kept.csv").read_bytes()


def replace_keep_order(path: Path, keep: bool) -> Path:
    """The project at ``path`` saved again with its export option ``keep_order``."""
    from dataclasses import replace

    from microgui.core.runs.project_file import load_project

    project = replace(load_project(path), keep_order=keep)
    save_project(project, path)
    assert load_project(path).keep_order is keep
    return path
