"""The plan editor (issue 31): add, reorder, remove and undo steps; run in the worker; each
step's effect shown; the saved plan gives the same release from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from microgui.cli import main
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 60_000


def _fill(window: MainWindow, kind: str, column: str, words: str) -> bool:
    panel = window.plan_panel
    panel.kind.setCurrentText(kind)
    panel.column.setCurrentText(column)
    panel.words.setText(words)
    return panel.add_from_fields()


def test_edit_undo_run_and_replay(demo_window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = demo_window
    panel = window.plan_panel
    assert not panel.run_button.isEnabled()  # no step yet
    assert _fill(window, "recode", "age", "breaks 0, 25, 35, 45, 55, 65, inf")
    assert _fill(window, "top_bottom", "hours_per_week", "top 55")
    assert _fill(window, "microaggregate", "(all keys)", "mdav-generic k 5")
    assert not _fill(window, "recode", "age", "bins many")  # refused in the status line
    assert "bins 5" in panel.status.text() and len(panel.steps) == 3
    # reorder, remove, undo: the table follows every edit
    panel.table.selectRow(1)
    panel.move_selected(-1)
    assert [s["step"] for s in panel.steps] == ["top_bottom", "recode", "microaggregate"]
    panel.undo_stack.undo()
    assert [s["step"] for s in panel.steps] == ["recode", "top_bottom", "microaggregate"]
    panel.table.selectRow(2)
    panel.remove_selected()
    assert len(panel.steps) == 2 and panel.table.rowCount() == 2
    panel.undo_stack.undo()
    assert len(panel.steps) == 3 and panel.table.item(2, 1).text().startswith("microaggregate")
    # the run in the worker; each step's effect in the table
    with qtbot.waitSignal(panel.plan_finished, timeout=TIMEOUT_MS) as done:
        assert panel.run() is not None
    result = done.args[0]
    assert [s["step"] for s in result.steps] == ["recode", "top_bottom", "microaggregate"]
    assert "values changed" in panel.table.item(0, 2).text()
    assert panel.table.item(2, 3).text() == "0"  # no record below k after the last step
    assert "k-anonymity" in panel.status.text()
    # saved and replayed by the copied command: the same release
    assert panel.save_plan(tmp_path / "plan.json")
    saved = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert saved == panel.to_json()
    # the input order kept (the app's export option): the copied command says so, and the same
    # bytes follow from it
    from dataclasses import replace

    ctl = window.controller
    ctl.export_options = replace(ctl.export_options, keep_order=True)
    with qtbot.waitSignal(panel.plan_exported, timeout=TIMEOUT_MS) as exported:
        assert panel.export(tmp_path / "app.csv") is not None  # in the worker
    written = exported.args[0]
    assert [s["step"] for s in written["steps"]] == ["recode", "top_bottom", "microaggregate"]
    assert written["plan"]["steps"] == panel.to_json()["steps"] and written["k_anonymity"] >= 5
    assert (tmp_path / "app.report.json").exists() and "exported app.csv" in panel.status.text()
    command = panel.copy_command(tmp_path / "plan.json", str(tmp_path / "cli.csv"))
    assert "--plan" in command and "--seed" in command and "--keep-order" in command
    import shlex

    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == command
    assert main([*shlex.split(command)[1:], "-q"]) == 0
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "app.csv").read_bytes()
    # saved in the project with its seed, replayed by protect --project --run plan (the record
    # order is an export option, not kept in the project: --keep-order given again)
    assert window.save_project_to(tmp_path / "s.microgui.json")
    replay = ["protect", "--project", str(tmp_path / "s.microgui.json"), "--run", "plan",
              "-o", str(tmp_path / "replayed.csv"), "-q", "--keep-order"]  # fmt: skip
    assert main(replay) == 0
    assert (tmp_path / "replayed.csv").read_bytes() == (tmp_path / "app.csv").read_bytes()
    assert main([*replay[:4], "plan2", *replay[5:]]) == 2  # the project keeps one plan


def test_project_keeps_the_plan(demo_window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from microgui.core.runs.project_file import load_project

    window = demo_window
    panel = window.plan_panel
    assert _fill(window, "recode", "age", "bins 4")
    assert _fill(window, "suppress", "(all keys)", "k 3")
    assert window.save_project_to(tmp_path / "s.microgui.json")
    project = load_project(tmp_path / "s.microgui.json")
    assert project.plans == (panel.to_json(),)
    panel.undo_stack.undo()
    panel.undo_stack.undo()
    assert panel.steps == [] and window.controller.plans == ()
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=TIMEOUT_MS):
        window.controller.open_project(project, tmp_path)
    assert [s["step"] for s in panel.steps] == ["recode", "suppress"]
