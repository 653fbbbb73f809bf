"""Projects in the app (issue 7): save, open (table + roles + runs re-computed with their seeds),
refusal of damaged or newer files with the window still usable, and the crash-recovery autosave."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from microgui.core.demo import demo_path
from microgui.core.runs.project_file import autosave_path, load_project, read_autosave
from microgui.core.table.roles import AttributeRole
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    shutil.copy(demo_path(), path)
    return path


def test_save_and_open_a_project(window: MainWindow, qtbot, table: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(table)
    ctl.set_role("age", AttributeRole.QUASI_IDENTIFIER)
    ctl.set_role("income", AttributeRole.QUASI_IDENTIFIER)
    ctl.set_role("person_id", AttributeRole.IDENTIFIER)
    spec = window.run_panel.spec()
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(spec)
    first = ctl.history[0]
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(replace(spec, k=spec.k + 2))
    second = ctl.history[1]
    ctl.set_comparison([first.run_id, second.run_id])
    project_path = tmp_path / "work.microgui.json"
    assert window.save_project_to(project_path)
    saved = load_project(project_path)
    assert saved.data_path == "people.csv"
    assert saved.runs == (first.reproducible_spec, second.reproducible_spec)
    assert saved.comparison == (0, 1)
    text = project_path.read_text(encoding="utf-8")
    frame = ctl.dataset.frame
    for column in ("person_id", "income"):  # the project holds no data value
        assert all(str(v) not in text for v in frame[column].head(50) if len(str(v)) >= 5)

    # a new window opens it: same table, same roles, the runs re-computed with their seeds, and
    # the comparison restored (its runs re-computed to have their tables)
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    octl = other.controller
    with qtbot.waitSignal(octl.comparison_changed, timeout=TIMEOUT_MS):
        assert other.open_project(project_path)
    assert octl.dataset is not None and octl.dataset.roles == ctl.dataset.roles
    assert len(octl.history) == 2
    restored = octl.history[0]
    assert restored.spec == first.reproducible_spec
    assert restored.report["information_loss"] == pytest.approx(first.report["information_loss"])
    assert len(octl.compared) == 2
    assert all(octl.entry(i).has_table for i in octl.compared)


def test_bad_project_files_are_refused_and_the_window_stays_usable(
    demo_window: MainWindow, qtbot, tmp_path: Path, table: Path
) -> None:  # type: ignore[no-untyped-def]
    ctl = demo_window.controller
    good = {
        "schema_version": 1,
        "data": {"path": str(table), "columns": []},
        "roles": {},
        "runs": [],
        "comparison": [],
    }
    cases = {
        "truncated.json": json.dumps(good)[:40],
        "future.json": json.dumps({**good, "schema_version": 7, "microgui_version": "9.0"}),
        "gone.json": json.dumps({**good, "data": {"path": "nowhere.csv", "columns": []}}),
    }
    expected = {
        "truncated.json": "truncated or damaged",
        "future.json": "update microgui",
        "gone.json": "is not there",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert not demo_window.open_project(path)
        assert expected[name] in demo_window.last_error, demo_window.last_error
        assert ctl.dataset is not None and ctl.dataset.n_records == 4000  # the table stays
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(demo_window.run_panel.spec())


def test_autosave_is_written_and_removed_on_a_clean_exit(
    window: MainWindow, qtbot, table: Path
) -> None:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(table)
    window.autosave()
    project = read_autosave()
    assert project is not None and Path(str(project.data_path)).name == "people.csv"
    window.close()
    assert not autosave_path().exists()


# --- issue 12, findings 1 and 11 through the app ----------------------------------------------
def _hostile_project(table: Path, tmp_path: Path, port: int) -> Path:
    run = {"method": "mdav", "k": 3, "strata": ["sex"], "engine": "dask",
           "scheduler": f"tcp://127.0.0.1:{port}"}  # fmt: skip
    data = {
        "schema_version": 1,
        "data": {"path": str(table), "columns": []},
        "roles": {},
        "runs": [run],
        "comparison": [],
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_project_choosing_a_scheduler_is_refused_and_opens_no_socket(
    demo_window: MainWindow, qtbot, tmp_path: Path, table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Not even loopback: opening a project file never connects anywhere."""
    import socket

    attempts: list[object] = []

    def refuse(_sock: object, address: object) -> None:
        attempts.append(address)
        raise OSError("no socket may be connected while a project is opened")

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = _hostile_project(table, tmp_path, port)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    assert not demo_window.open_project(path)
    assert "'engine'" in demo_window.last_error and "never" in demo_window.last_error
    qtbot.wait(200)  # anything started in the background would have connected by now
    assert attempts == []
    assert demo_window.controller.dataset is not None  # the demo table stays, usable


def test_many_runs_are_recomputed_only_when_the_user_says_so(
    window: MainWindow, qtbot, tmp_path: Path, table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    import microgui.qt.main_window as main_window

    asked: list[str] = []

    def answer_no(_parent: object, _title: str, text: str, *_a: object) -> object:
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer_no)
    runs = [
        {"method": "mdav", "k": 3, "seed": i} for i in range(main_window.RUNS_WITHOUT_ASKING + 1)
    ]
    data = {
        "schema_version": 1,
        "data": {"path": str(table), "columns": []},
        "roles": {"age": {"role": "quasi-identifier", "kind": "continuous"}},
        "runs": runs,
        "comparison": [0, 1],
    }
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        assert window.open_project(path)
    assert len(asked) == 1 and f"{len(runs):,} runs" in asked[0]
    qtbot.wait(100)
    assert ctl.history == [] or len(ctl.history) == 0  # no sweep was started
    assert (
        ctl.dataset is not None and ctl.dataset.roles["age"].role is AttributeRole.QUASI_IDENTIFIER
    )


def test_a_bad_autosave_is_said_once_and_the_app_starts(
    window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from microgui.qt.app import _offer_restore

    path = autosave_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"schema_version": 1, "extra": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert _offer_restore(window) is False
    assert "set aside" in window.last_error and "nested deeper" in window.last_error
    assert not path.exists() and path.with_name(path.name + ".bad").exists()
    assert _offer_restore(window) is False  # the next start: nothing to say
    assert window.open_demo()


def test_open_path_opens_a_project_file_as_a_project_and_a_table_as_a_table(
    window: MainWindow, qtbot, tmp_path: Path, table: Path
) -> None:  # type: ignore[no-untyped-def]
    # `microgui gui work.microgui.json` refused the project the app had saved ("extension
    # '.json', which microgui cannot read ... save the table in one of these formats")
    data = {
        "schema_version": 1,
        "data": {"path": str(table), "columns": []},
        "roles": {"age": {"role": "quasi-identifier", "kind": "continuous"}},
        "runs": [],
        "comparison": [],
    }
    path = tmp_path / "work.microgui.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        assert window.open_path(path), window.last_error
    assert ctl.dataset is not None and Path(ctl.dataset.source).name == table.name
    assert ctl.dataset.roles["age"].role is AttributeRole.QUASI_IDENTIFIER
    assert "cannot read" not in window.last_error
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.controller.dataset_loaded, timeout=TIMEOUT_MS):
        assert other.open_path(table)
    assert other.controller.dataset is not None
