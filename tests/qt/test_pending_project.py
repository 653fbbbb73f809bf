"""A project's roles and runs go to its own table only (adversarial review): opening another file
while the project's table is still being read drops the project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import Project
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.qt.main_window import MainWindow


def test_a_file_opened_after_a_project_does_not_get_the_projects_roles_or_runs(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    rng = np.random.default_rng(0)
    for name in ("a.csv", "b.csv"):
        frame = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200)})
        frame.to_csv(tmp_path / name, index=False)
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    project = Project(
        data_path=str(tmp_path / "a.csv"),
        columns=("x", "y"),
        roles=RoleMap.from_dict({"x": qi, "y": qi}),
        runs=(RunSpec.make("mdav", 5, seed=1),),
    )
    ctl = window.controller
    ctl.open_project(project, tmp_path)
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=60_000) as loaded:
        ctl.open_file(tmp_path / "b.csv")  # before a.csv is read
    qtbot.wait(200)
    dataset = loaded.args[0]
    assert dataset.source == tmp_path / "b.csv"
    assert ctl.dataset is not None and ctl.dataset.source == tmp_path / "b.csv"
    assert not ctl.is_running and ctl.history == []  # the project's run was not re-computed
    assert ctl.roles_reviewed is False  # b.csv's suggested roles, not the project's
