"""A plan's side files in a project file (issue 31): written relative to the project file's
folder, as the table's path and the runs' hierarchy files are, made absolute again when read;
projects of before (absolute paths) keep loading; an absent side file is one line naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from microgui.core.demo import demo_path, load_demo
from microgui.core.errors import MicroguiError
from microgui.core.runs.plan import plan_from_json, plan_spec, run_spec
from microgui.core.runs.project_file import Project, load_project, save_project

PLAN = {
    "plan_version": 1,
    "steps": [
        {"step": "recode", "column": "region", "mapping": "regions.json"},
        {"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous"},
    ],
}


def _folder(tmp_path: Path) -> tuple[Path, Project]:
    """A project folder: the demo's first 300 records, a mapping, a plan run and the plan."""
    folder = tmp_path / "study"
    folder.mkdir()
    demo = load_demo()
    frame = pd.read_csv(demo_path(), dtype=str).head(300)
    frame.to_csv(folder / "persons.csv", index=False)
    regions = sorted(frame["region"].unique())
    mapping = {r: ("A" if i % 2 else "B") for i, r in enumerate(regions)}
    (folder / "regions.json").write_text(json.dumps(mapping), encoding="utf-8")
    plan = plan_from_json(PLAN, folder=folder)
    spec = plan_spec(plan, 3, 7)  # its files absolute, as a session holds them
    session_plan = dict(PLAN, steps=[dict(PLAN["steps"][0], mapping=str(folder / "regions.json")),
                                     PLAN["steps"][1]])  # fmt: skip
    project = Project(str(folder / "persons.csv"), tuple(frame.columns), demo.roles,
                      runs=(spec,), plans=(session_plan,))  # fmt: skip
    return folder, project


def test_side_files_are_relative_in_the_file_and_absolute_when_read(tmp_path: Path) -> None:
    folder, project = _folder(tmp_path)
    save_project(project, folder / "p.microgui.json")
    written = json.loads((folder / "p.microgui.json").read_text(encoding="utf-8"))
    assert written["runs"][0]["plan"]["steps"][0]["mapping"] == "regions.json"
    assert written["plans"][0]["steps"][0]["mapping"] == "regions.json"
    assert str(tmp_path) not in json.dumps(written["runs"]) + json.dumps(written["plans"])
    # the folder moved whole: the run reads the mapping at its new place
    moved = tmp_path / "moved"
    shutil.move(folder, moved)
    read = load_project(moved / "p.microgui.json")
    (spec,) = read.resolved_runs(moved)
    assert spec.plan_json["steps"][0]["mapping"] == str(moved / "regions.json")
    assert read.resolved_plans(moved)[0]["steps"][0]["mapping"] == str(moved / "regions.json")
    assert moved / "regions.json" in read.read_files(moved)
    from microgui.core.table.dataset import Dataset

    data = Dataset.from_frame(pd.read_csv(moved / "persons.csv", dtype=str), read.roles)
    result = run_spec(data, spec)
    assert set(result.protected["region"]) <= {"A", "B"}
    # the mapping gone: one line naming it, no traceback
    (moved / "regions.json").unlink()
    with pytest.raises(MicroguiError) as err:
        run_spec(data, spec)
    assert "regions.json" in str(err.value) and "\n" not in str(err.value)


def test_a_project_with_absolute_side_files_keeps_loading(tmp_path: Path) -> None:
    folder, project = _folder(tmp_path)
    save_project(project, folder / "p.microgui.json")
    written = json.loads((folder / "p.microgui.json").read_text(encoding="utf-8"))
    absolute = str(folder / "regions.json")  # as a project of before wrote them
    written["runs"][0]["plan"]["steps"][0]["mapping"] = absolute
    written["plans"][0]["steps"][0]["mapping"] = absolute
    (folder / "old.microgui.json").write_text(json.dumps(written), encoding="utf-8")
    read = load_project(folder / "old.microgui.json")
    assert read.resolved_runs(folder)[0].plan_json["steps"][0]["mapping"] == absolute
    assert read.resolved_plans(folder)[0]["steps"][0]["mapping"] == absolute
