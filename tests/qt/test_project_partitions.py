"""Issue 30, item 2: a project keeps each run's partition, so reopening restores the runs as they
were, at once, without running a method; a project of before (no partitions) lists its runs at
once and re-computes one only when it is shown; a damaged partition says so and its run is
re-computed (same seed), never a crash."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui.core.runs.protect as protect
import microgui.qt.history as history
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000


def _export_kept(win: MainWindow, out: Path) -> bool:
    """The export, in the input order: compared byte for byte with another window's (a release
    is shuffled from a fresh seed by default, issue 31)."""
    ctl = win.controller
    ctl.export_options = replace(ctl.export_options, keep_order=True)
    return win.export_to(out)


SPECS = [
    RunSpec.make("mdav-generic", 3, {}, 1),
    RunSpec.make("mdav", 4, {}, 2),
    RunSpec.make("mdav-generic", 5, {"ordinal_average": "median"}, None),  # a fresh seed
]


def _table(path: Path, n: int = 90) -> Path:
    rng = np.random.default_rng(0)
    pd.DataFrame(
        {
            "person": [f"P{i}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(8, 1, n), 2),
            "hours": rng.integers(1, 60, n),
        }
    ).to_csv(path, index=False)
    return path


def _session(
    window: MainWindow, qtbot: Any, tmp_path: Path, specs: list[RunSpec] = SPECS
) -> tuple[Path, dict[int, bytes]]:
    """Three runs on a small table, #2 shown and exported; saved; returns the project file and
    each run's exported release."""
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(_table(tmp_path / "survey.csv"))
    # not the roles suggested when the table is read (hours would be a quasi-identifier): the
    # reopened runs must be rebuilt on the project's
    roles = roles_from_lists(
        ["person", "age", "income", "hours"], qi=["age", "income"], identifiers=["person"]
    )
    ctl.set_roles(roles)
    exported: dict[int, bytes] = {}
    for spec in specs:
        with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
            ctl.start_run(spec)
        run_id = ctl.shown_run_id
        assert run_id is not None
        out = tmp_path / "first" / f"run{run_id}.csv"
        out.parent.mkdir(exist_ok=True)
        assert _export_kept(window, out)
        exported[run_id] = out.read_bytes()
    project = tmp_path / "survey.microgui.json"
    assert window.save_project_to(project)
    return project, exported


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every method run and every re-computation from now on."""
    calls: list[str] = []
    real_refine, real_analyse = protect.run_and_refine, history.analyse_run

    def refine(method: Any, inp: Any) -> Any:
        calls.append(f"method {method.name}")
        return real_refine(method, inp)

    def analyse(dataset: Any, spec: Any, progress: Any) -> Any:
        calls.append(f"re-computed {spec.method}")
        return real_analyse(dataset, spec, progress)

    monkeypatch.setattr(protect, "run_and_refine", refine)
    monkeypatch.setattr(history, "analyse_run", analyse)
    return calls


def _reopen(window: MainWindow, qtbot: Any, project: Path, *, shown: bool = True) -> MainWindow:
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    if shown:
        with qtbot.waitSignal(other.controller.run_shown, timeout=TIMEOUT_MS):
            assert other.open_project(project)
    else:
        with qtbot.waitSignal(other.controller.history_changed, timeout=TIMEOUT_MS):
            assert other.open_project(project)
    return other


def test_reopened_runs_are_rebuilt_from_their_partitions_without_a_method(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, exported = _session(window, qtbot, tmp_path)
    kept = json.loads(project.read_text(encoding="utf-8"))["runs"]
    assert all(r["partition"]["records"] == 90 for r in kept)
    before = {e.run_id: e.result.labels for e in window.controller.history}
    calls = _spy(monkeypatch)
    other = _reopen(window, qtbot, project)  # the last run is shown by itself
    octl = other.controller
    assert [e.run_id for e in octl.history] == [1, 2, 3]
    assert not any(e.from_sweep for e in octl.history)  # runs, not "sweep points"
    assert [e.finished_at for e in octl.history] == [  # when they finished, not when reopened
        e.finished_at.replace(microsecond=0) for e in window.controller.history
    ]
    assert octl.shown_run_id == 3
    for run_id in (1, 2):
        with qtbot.waitSignal(octl.run_shown, timeout=TIMEOUT_MS):
            octl.show_run(run_id)
    assert calls == []  # no method ran, nothing was re-computed
    for entry in octl.history:
        np.testing.assert_array_equal(entry.result.labels, before[entry.run_id])
    for run_id, data in exported.items():  # the releases, byte for byte
        octl.show_run(run_id)
        qtbot.waitUntil(lambda run_id=run_id: octl.shown_run_id == run_id, timeout=TIMEOUT_MS)
        out = tmp_path / "reopened" / f"run{run_id}.csv"
        out.parent.mkdir(exist_ok=True)
        assert _export_kept(other, out)
        assert out.read_bytes() == data, f"run #{run_id}"
    # saved again, the partitions are kept (those of runs never opened too)
    again = tmp_path / "again.microgui.json"
    assert other.save_project_to(again)
    runs = json.loads(again.read_text(encoding="utf-8"))["runs"]
    assert [r["partition"]["labels"] for r in runs] == [r["partition"]["labels"] for r in kept]
    other.controller.shutdown()


def test_a_project_without_partitions_recomputes_a_run_only_when_shown(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _exported = _session(window, qtbot, tmp_path, SPECS[:2])
    data = json.loads(project.read_text(encoding="utf-8"))
    for run in data["runs"]:
        del run["partition"]
    project.write_text(json.dumps(data), encoding="utf-8")
    calls = _spy(monkeypatch)
    other = _reopen(window, qtbot, project, shown=False)
    octl = other.controller
    qtbot.wait(200)
    assert [e.run_id for e in octl.history] == [1, 2] and octl.shown_run_id is None
    assert calls == [] and not octl.is_running  # nothing computed at open
    with qtbot.waitSignal(octl.run_shown, timeout=TIMEOUT_MS):
        octl.show_run(2)
    assert calls == ["method mdav"]  # on demand, that run only
    other.controller.shutdown()


def test_a_damaged_partition_says_so_and_its_run_is_recomputed(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, exported = _session(window, qtbot, tmp_path, SPECS[1:])
    data = json.loads(project.read_text(encoding="utf-8"))
    data["runs"][1]["partition"]["labels"] = "AAAA" + data["runs"][1]["partition"]["labels"][4:]
    project.write_text(json.dumps(data), encoding="utf-8")
    calls = _spy(monkeypatch)
    messages: list[str] = []
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    other.controller.run_progress.connect(lambda _i, _f, text: messages.append(text))
    with qtbot.waitSignal(other.controller.run_shown, timeout=TIMEOUT_MS):
        assert other.open_project(project)
    assert any("#2" in m and "cannot be inflated" in m and "re-computing it" in m for m in messages)
    assert calls[0] == "re-computed mdav-generic"
    out = tmp_path / "r2.csv"
    assert _export_kept(other, out)
    assert out.read_bytes() == exported[2]  # same seed, same release
    other.controller.shutdown()


def test_partitions_beyond_the_budget_are_left_out_oldest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A project file may hold 64 MB: the newest runs keep their partitions within the budget,
    the oldest are re-computed when opened."""
    from datetime import datetime

    from microgui.core.runs.sweep import SweepPoint
    from microgui.core.table.dataset import Dataset

    dataset = Dataset.from_frame(pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]}))
    spec = RunSpec.make("mdav", 2, seed=0)
    entries = [
        history.HistoryEntry(
            i,
            None,
            dataset,
            datetime.now(),
            SweepPoint(i, spec, {"seconds": 0.1}, {}),
            partition={"labels": "x" * 400, "release_sha256": "0" * 64},
        )
        for i in (1, 2, 3)
    ]
    monkeypatch.setattr(history, "PARTITION_BUDGET", 1000)
    kept = history.kept_partitions(entries)
    assert [block is not None for block in kept] == [False, True, True]
    project = history.project_of(dataset, entries, (), {})
    assert project.run_partitions[0] is None and project.run_partitions[2] is not None
