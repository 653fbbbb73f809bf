"""Issue 30, item 2: a run's number is its id for life — in the history, the project file and
``microgui protect --project P --run N`` — and reopening a project shows its runs at once.

Seen: the release report called a run "#2" but ``--run 2`` replayed another run (the project
numbered its runs by position, the app by a counter that cancelled and failed runs used up);
reopening re-computed every run (~90 s for 14) and renumbered them; numbers carried over from
one table to the next.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000
SPECS = [
    RunSpec.make("mdav-generic", 3, {}, 1),
    RunSpec.make("mdav", 4, {}, 2),
    RunSpec.make("mdav-generic", 5, {"ordinal_average": "median"}, 3),
    RunSpec.make("mdav-generic", 4, {}, None),  # a fresh seed: the report keeps it
    RunSpec.make("vmdav", 3, {}, 5),
    RunSpec.make("mhm", 3, {}, 6),
    RunSpec.make("mdav-generic", 6, {}, 7),
    RunSpec.make("mdav", 3, {}, 8),
    RunSpec.make("mdav-generic", 3, {}, 9),
    RunSpec.make("mdav", 5, {}, 10),
    RunSpec.make("mdav-generic", 7, {}, 11),
    RunSpec.make("mdav", 6, {}, 12),
    RunSpec.make("mdav-generic", 8, {}, 13),
    RunSpec.make("mdav", 7, {}, 14),
]


def _table(path: Path, n: int = 80, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    pd.DataFrame(
        {
            "person": [f"P{i}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(8, 1, n), 2),
            "hours": rng.integers(1, 60, n),
            "note": [f"n{i}" for i in range(n)],
        }
    ).to_csv(path, index=False)
    return path


def _open(window: MainWindow, qtbot, path: Path) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(path)
    roles = roles_from_lists(
        [str(c) for c in ctl.dataset.frame.columns],  # type: ignore[union-attr]
        qi=["age", "income", "hours"],
        identifiers=["person"],
    )
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)


def _run(window: MainWindow, qtbot, spec: RunSpec) -> int:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(spec)
    assert ctl.shown_run_id is not None
    return ctl.shown_run_id


def test_failed_and_cancelled_runs_leave_no_gap_and_a_new_table_starts_at_1(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    _open(window, qtbot, _table(tmp_path / "a.csv"))
    assert _run(window, qtbot, SPECS[0]) == 1
    with qtbot.waitSignal(ctl.run_failed, timeout=TIMEOUT_MS):  # optimal: too many records
        ctl.start_run(RunSpec.make("optimal", 3, {}, 1))
    with qtbot.waitSignal(ctl.run_cancelled, timeout=TIMEOUT_MS):
        ctl.start_run(SPECS[1])
        ctl.cancel_run()
    qtbot.waitUntil(lambda: ctl.live_runs == 0, timeout=TIMEOUT_MS)
    assert _run(window, qtbot, SPECS[2]) == 2
    ctl.remove_run(2)  # a removed run keeps its number to itself
    assert _run(window, qtbot, SPECS[4]) == 3
    assert [e.run_id for e in ctl.history] == [1, 3]
    _open(window, qtbot, _table(tmp_path / "b.csv", seed=1))
    assert _run(window, qtbot, SPECS[0]) == 1


def test_a_14_run_session_reopens_at_once_and_every_run_replays_byte_for_byte(
    window: MainWindow, qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    _open(window, qtbot, _table(tmp_path / "survey.csv"))
    ids = [_run(window, qtbot, spec) for spec in SPECS]
    assert ids == list(range(1, 15))
    ctl.remove_run(4)  # the numbers of the others stay theirs
    exported: dict[int, bytes] = {}
    # the default, random record order (issue 31), each export its own seed, which the project
    # keeps (never the report); #5 exported twice: its last export is the one replayed; #14
    # with the input order kept
    for run_id, keep in ((1, False), (5, True), (5, False), (9, False), (14, True)):
        ctl.show_run(run_id)
        ctl.export_options = replace(ctl.export_options, keep_order=keep)
        assert window.export_to(tmp_path / f"app_{run_id}.csv")
        exported[run_id] = (tmp_path / f"app_{run_id}.csv").read_bytes()
        written = (tmp_path / f"app_{run_id}.report.json").read_text(encoding="utf-8")
        order = json.loads(written)["record_order"]
        assert order["order"] == ("input" if keep else "random") and order.get("seed") is None
        if not keep:
            assert order["seed_kept_in_project"] is True
            assert str(ctl.run_exports[run_id][-1]["order_seed"]) not in written
    assert exported[1] != exported[14]  # shuffled, kept
    ctl.export_options = replace(ctl.export_options, keep_order=False)
    ctl.set_comparison([5, 9])
    project = tmp_path / "survey.microgui.json"
    assert window.save_project_to(project)
    kept = json.loads(project.read_text(encoding="utf-8"))["runs"]
    assert [r["id"] for r in kept] == [i for i in ids if i != 4]
    assert all("information_loss" in r["report"] for r in kept)
    exports = {r["id"]: r.get("exports", []) for r in kept}
    assert [len(exports[i]) for i in (1, 5, 9, 14, 2)] == [1, 2, 1, 1, 0]
    assert exports[5][0]["order"] == "input" and "order_seed" in exports[5][1]

    # another window reopens it: the runs at once, with their numbers and measures; only the
    # two compared are re-computed (same seeds), the others when opened
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    octl = other.controller
    started: list[object] = []
    octl.run_started.connect(lambda run_id, _spec: started.append(run_id))
    octl.sweep_started.connect(lambda *_a: started.append("sweep"))
    with qtbot.waitSignal(octl.comparison_changed, timeout=TIMEOUT_MS):
        assert other.open_project(project)
    assert [e.run_id for e in octl.history] == [i for i in ids if i != 4]
    assert octl.compared == (5, 9)
    for entry, before in zip(octl.history, [e for e in ctl.history], strict=True):
        assert entry.measures == pytest.approx(before.measures, nan_ok=True)
    # then the run shown when saved (#14), rebuilt from its partition
    qtbot.waitUntil(lambda: octl.shown_run_id == 14, timeout=TIMEOUT_MS)
    assert octl.entry(14).has_table
    assert "sweep" not in started and len(started) == 3  # the two compared and #14 only
    assert octl.run_exports == ctl.run_exports  # kept for the next save
    assert _run(other, qtbot, SPECS[0]) == 15  # new runs after the highest number

    # every --run N replays the run the app called #N, in the order of its last export (its
    # seed read from the project), with no order option
    capsys.readouterr()
    for run_id, data in exported.items():
        out = tmp_path / f"cli_{run_id}.csv"
        argv = ["protect", "--project", str(project), "--run", str(run_id), "-o", str(out)]
        assert main([*argv, "--report", str(tmp_path / f"cli_{run_id}.json")]) == 0
        assert out.read_bytes() == data, f"--run {run_id}"
        said = [line for line in capsys.readouterr().err.splitlines() if "record order" in line]
        assert len(said) == 1 and f"run #{run_id}'s last export" in said[0], said
        order = json.loads((tmp_path / f"cli_{run_id}.json").read_text("utf-8"))["record_order"]
        assert order.get("seed") is None
        assert order.get("replayed_from_project") is (None if run_id == 14 else True)
    # an explicit choice wins over the project's
    fresh = tmp_path / "fresh.csv"
    assert main(["protect", "--project", str(project), "--run", "1", "-o", str(fresh),
                 "--keep-order"]) == 0  # fmt: skip
    assert fresh.read_bytes() != exported[1]
    code = main(["protect", "--project", str(project), "--run", "4", "-o", str(tmp_path / "x.csv")])
    assert code != 0 and not (tmp_path / "x.csv").exists()
    other.controller.shutdown()


@pytest.mark.parametrize("answer", ["Cancel", "Discard", "Save"])
def test_opening_another_table_asks_before_dropping_unsaved_runs(
    window: MainWindow, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    monkeypatch.setattr(MainWindow, "confirm_dropping_runs", True)
    asked: list[str] = []

    def reply(_parent: object, _title: str, text: str, *_a: object) -> object:
        asked.append(text)
        return getattr(QMessageBox.StandardButton, answer)

    monkeypatch.setattr(QMessageBox, "question", reply)
    saved = tmp_path / "kept.microgui.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(saved), ""))
    ctl = window.controller
    first = _table(tmp_path / "a.csv")
    _open(window, qtbot, first)
    second = _table(tmp_path / "b.csv", seed=1)
    _open(window, qtbot, second)  # no run yet: nothing to ask
    assert asked == []
    _run(window, qtbot, SPECS[0])
    _run(window, qtbot, SPECS[1])
    if answer == "Cancel":
        assert window.open_file(first) == -1
        assert not window.open_demo()
        assert [e.run_id for e in ctl.history] == [1, 2]
    else:
        _open(window, qtbot, first)
        assert ctl.history == []
        assert saved.exists() == (answer == "Save")
    assert asked and "2 run(s)" in asked[0] and "#1, #2" in asked[0]
    if answer == "Save":  # saved: opening the next table asks nothing
        asked.clear()
        _run(window, qtbot, SPECS[0])
        window.save_project_to(tmp_path / "again.microgui.json")
        _open(window, qtbot, second)
        assert asked == []
