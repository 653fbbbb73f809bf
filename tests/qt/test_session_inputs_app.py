"""The app's writers refuse every file the session read (``AppController.read_files``): the
table, the project file it was opened from (Save project over it excepted, which is what Save
means) and the hierarchy files; the export, the saved report, Save project and the autosave."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from microgui.core.demo import demo_path
from microgui.core.errors import ExportRefused
from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import AUTOSAVE_NAME, Project, load_project, save_project
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 120_000


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    """A project (roles only) of a copy of the demo table, saved under the autosave's name so
    that the autosave can be pointed at it."""
    table = tmp_path / "people.csv"
    shutil.copy(demo_path(), table)
    columns = table.read_text(encoding="utf-8").splitlines()[0].split(",")
    roles = roles_from_lists(columns, qi=["age", "income"], identifiers=["person_id"])
    project = Project(
        data_path="people.csv",
        columns=tuple(columns),
        roles=roles,
    )
    path = tmp_path / AUTOSAVE_NAME
    save_project(project, path)
    return path


def test_no_writer_of_the_app_replaces_a_file_the_session_read(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, project_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        assert window.open_project(project_path)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav", 3, {}, 1))
    table = project_path.parent / "people.csv"
    assert ctl.project_file == project_path
    assert set(ctl.read_files()) >= {table, project_path}
    saved, data = project_path.read_bytes(), table.read_bytes()

    for target in (project_path, table):
        with pytest.raises(ExportRefused, match="refusing to write"):
            ctl.export(target)
        assert not window.export_to(target)
        assert "refusing to write" in window.last_error
        assert not window.save_report(target)
        assert "refusing to write" in window.last_error
    with pytest.raises(ExportRefused, match="refusing to write"):
        ctl.save_project(table)
    # the autosave never replaces the project the session was opened from
    monkeypatch.setenv("MICROGUI_STATE_DIR", str(project_path.parent))
    with pytest.raises(ExportRefused, match="refusing to write"):
        ctl.autosave()
    assert project_path.read_bytes() == saved and table.read_bytes() == data

    # Save project over the project opened is what Save means
    ctl.save_project(project_path)
    assert len(load_project(project_path).runs) == 1
    assert table.read_bytes() == data
    # a table opened on its own: the project file is no longer the session's
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(table)
    assert ctl.project_file is None


def test_a_chart_export_is_checked_as_every_writer(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A chart goes to .png or .svg (any other suffix becomes .png, so never a table), and is
    refused over a file the session read or a folder, before anything is drawn."""
    import pyqtgraph as pg

    from microgui.qt.plots.chart_export import export_chart

    read = tmp_path / "read.png"
    read.write_bytes(b"kept")
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    item = widget.getPlotItem()
    with pytest.raises(ExportRefused, match="refusing to write"):
        export_chart(item, read, protect_from=[read])
    with pytest.raises(ExportRefused, match="folder"):
        export_chart(item, tmp_path / "sub" / "chart.svg")
    assert read.read_bytes() == b"kept"
    assert export_chart(item, tmp_path / "chart.csv", protect_from=[read]).name == "chart.png"
