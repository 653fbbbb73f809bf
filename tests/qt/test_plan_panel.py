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
    # a recode before any step giving k: not a count that reads as a failure (issue 31)
    assert panel.table.item(0, 3).text() == "–"
    assert "no step giving k has run yet" in panel.table.item(0, 3).toolTip()
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


def _run_from_here_document(text: str, folder: Path) -> int:
    """Run a copied plan command: its plan file written from the here-document, then the
    ``microgui protect`` line (the shell's job, done here without a shell)."""
    import shlex

    lines = text.splitlines()
    assert lines[0].startswith("cat > ") and lines[0].endswith("<<'MICROGUI_PLAN'")
    end = lines.index("MICROGUI_PLAN")
    name = shlex.split(lines[0][len("cat > ") : -len("<<'MICROGUI_PLAN'")])[0]
    (folder / name).write_text("\n".join(lines[1:end]) + "\n", encoding="utf-8")
    command = shlex.split(lines[end + 1])
    assert command[0] == "microgui" and "--plan" in command and "--keep-order" in command
    return main([*command[1:], "-q"])


def test_a_plan_run_is_a_run(demo_window: MainWindow, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 31: a 3-step plan run enters the history with its number, is shown in the views,
    compared with a method run, saved in the project (with the export option "keep the input
    order"), reopened and re-computed, and replayed by ``protect --project P --run N`` and by
    its copied command: the same release, byte for byte."""
    from dataclasses import replace

    from microgui.core.runs.project_file import load_project

    window = demo_window
    ctl, panel = window.controller, window.plan_panel
    ctl.export_options = replace(ctl.export_options, keep_order=True)
    assert _fill(window, "recode", "age", "breaks 0, 25, 35, 45, 55, 65, inf")
    assert _fill(window, "top_bottom", "hours_per_week", "top 55")
    assert _fill(window, "microaggregate", "(all keys)", "mdav-generic k 5")
    with qtbot.waitSignal(ctl.run_shown, timeout=TIMEOUT_MS) as shown:
        run_id = panel.run()
    assert run_id is not None and shown.args == [run_id] and panel.run_id == run_id
    entry = ctl.entry(run_id)
    assert entry.spec.method == "plan" and entry.spec.plan_json["steps"] == panel.steps
    assert ctl.shown_run_id == run_id and ctl.result is entry.result  # the views show it
    assert entry.measures and "k_anonymity" in entry.measures  # the R-U map's figures
    assert entry.result.report["k_anonymity"] >= 5
    # a method run beside it, then both compared
    with qtbot.waitSignal(ctl.run_shown, timeout=TIMEOUT_MS):
        method_id = ctl.start_run(ctl.default_spec())
    ctl.set_comparison([run_id, method_id])
    assert ctl.compared == (run_id, method_id)
    # the plan's release from the app (the input order kept)
    with qtbot.waitSignal(panel.plan_exported, timeout=TIMEOUT_MS):
        panel.export(tmp_path / "app.csv")
    app_bytes = (tmp_path / "app.csv").read_bytes()
    # saved: the plan run with its plan and seed, and the record order
    project_path = tmp_path / "s.microgui.json"
    assert window.save_project_to(project_path)
    project = load_project(project_path)
    assert project.keep_order and project.runs[project.ids.index(run_id)].plan is not None
    # replayed by protect --project --run N: no --keep-order needed (the project keeps it)
    replay = ["protect", "--project", str(project_path), "--run", str(run_id),
              "-o", str(tmp_path / "replayed.csv"), "-q"]  # fmt: skip
    assert main(replay) == 0
    assert (tmp_path / "replayed.csv").read_bytes() == app_bytes
    # replayed by the copied command (its plan file, then protect --plan --seed --keep-order)
    window.history_panel.select_runs([run_id])
    text = window.history_panel.copy_command()
    monkeypatch.chdir(tmp_path)
    assert _run_from_here_document(text, tmp_path) == 0
    copied = next(tmp_path.glob("*_protected_k5.csv"))
    assert copied.read_bytes() == app_bytes
    # reopened: the plan run in the history with its number, re-computed (same seed, same
    # release) when shown; the record order option back
    ctl.export_options = replace(ctl.export_options, keep_order=False)
    with qtbot.waitSignal(ctl.history_changed, timeout=TIMEOUT_MS):
        assert window.open_project(project_path)
    assert ctl.export_options.keep_order
    # the history comes back in a later turn than the table's load (is_running is already
    # False then): wait for the runs themselves, not for the loader
    qtbot.waitUntil(lambda: len(ctl.history) == 2, timeout=TIMEOUT_MS)
    assert [e.run_id for e in ctl.history] == [run_id, method_id]
    if ctl.shown_run_id != run_id:
        with qtbot.waitSignal(ctl.run_shown, timeout=TIMEOUT_MS):
            ctl.show_run(run_id)
    assert ctl.result.spec.plan is not None
    ctl.export(tmp_path / "reopened.csv")  # the app's export of the run shown
    assert (tmp_path / "reopened.csv").read_bytes() == app_bytes


def test_still_below_k_words_an_intermediate_count(demo_window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """The "Still < k" column (issue 31): "–" before any step giving k, an intermediate count
    in parentheses (the later steps take those records on), the release's count plain."""
    from types import SimpleNamespace

    panel = demo_window.plan_panel
    steps = [
        {"step": "recode", "column": "age", "breaks": [0, 35, "inf"]},
        {"step": "microaggregate", "method": "mdav", "k": 5, "columns": "continuous"},
        {"step": "suppress", "k": 5},
    ]
    figures = [
        {"step": "recode", "index": 1, "records_below_k_after": 900},
        {"step": "microaggregate", "index": 2, "n_groups": 80, "records_below_k_after": 400},
        {"step": "suppress", "index": 3, "records_below_k_after": 0},
    ]
    panel._set_steps(steps)
    panel.result = SimpleNamespace(report={"steps": figures})
    panel._refresh()
    assert [panel.table.item(i, 3).text() for i in range(3)] == ["–", "(400)", "0"]
    assert "later steps take on" in panel.table.item(1, 3).toolTip()
    assert panel.table.horizontalHeaderItem(3).text() == "Still < k"
