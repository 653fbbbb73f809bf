"""The app driven as a statistician would: open, tag, run, read the results, export."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyleOptionViewItem
from qt_helpers import SignalRecorder

from microgui.core.demo import demo_path
from microgui.core.metrics.measure_text import format_percent
from microgui.core.table.roles import AttributeKind, AttributeRole
from microgui.qt.main_window import MainWindow
from microgui.qt.models.roles_model import RolesColumn

RUN_TIMEOUT_MS = 60_000


def _row_of(window: MainWindow, column: str) -> int:
    model = window.roles_panel.model
    return next(r for r in range(model.rowCount()) if model.column_name(r) == column)


def _pick_in_delegate(window: MainWindow, row: int, column: RolesColumn, text: str) -> None:
    """Edit a roles cell through its combo-box delegate, as a click in the table does."""
    panel = window.roles_panel
    index = panel.model.index(row, column)
    delegate = panel.view.itemDelegateForColumn(column)
    editor = delegate.createEditor(panel.view.viewport(), QStyleOptionViewItem(), index)
    assert isinstance(editor, QComboBox)
    delegate.setEditorData(editor, index)
    pos = editor.findText(text)
    assert pos >= 0, f"{text!r} not offered: {[editor.itemText(i) for i in range(editor.count())]}"
    editor.setCurrentIndex(pos)
    delegate.setModelData(editor, panel.model, index)
    editor.deleteLater()


def test_open_tag_run_and_export(demo_window: MainWindow, qtbot, tmp_path: Path) -> None:
    window = demo_window
    ctl = window.controller
    assert "demo_persons.csv" in window.windowTitle()
    assert ctl.dataset is not None and ctl.dataset.n_records == 4000
    # the demo's default: MDAV-generic, k = 5 (mixed kinds)
    assert window.run_panel.spec().method == "mdav-generic"
    assert window.run_panel.k_spin.value() == 5

    # the user makes household_size a quasi-identifier in the roles table
    row = _row_of(window, "household_size")
    with qtbot.waitSignal(ctl.roles_changed):
        _pick_in_delegate(window, row, RolesColumn.ROLE, "Quasi-identifier")
    assert ctl.dataset.roles["household_size"].role is AttributeRole.QUASI_IDENTIFIER
    assert window.roles_panel.model.index(row, RolesColumn.ROLE).data() == "Quasi-identifier"
    assert "8 quasi-identifiers" in window.roles_panel.summary.text()

    window.run_panel.k_spin.setValue(4)
    recorder = SignalRecorder(ctl)
    assert not window.export_action.isEnabled()
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.run_panel.run_button, Qt.MouseButton.LeftButton)
        assert not window.run_panel.run_button.isEnabled()
        assert window.run_panel.cancel_button.isEnabled()
    run_id, result = blocker.args
    assert recorder.compact() == ["run_started", "run_progress", "run_finished"]
    assert all(args[0] == run_id for _, args in recorder.events)
    fractions = [args[1] for args in recorder.of("run_progress")]
    assert fractions == sorted(fractions) and len(fractions) <= 110  # throttled

    assert result.spec.k == 4 and "household_size" in result.roles.quasi_identifiers
    panel = window.results_panel
    assert panel.value_labels["information_loss"].text() == percent_shown(result.information_loss)
    assert "4 ✓" in panel.value_labels["k_anonymity"].text()
    assert panel.value_labels["n_groups"].text().startswith(f"{result.n_groups:,}")
    assert (
        window.run_panel.run_button.isEnabled() and not window.run_panel.cancel_button.isEnabled()
    )
    assert window.export_action.isEnabled()
    # the plot shows every record and one aggregate per group (as a density image with a
    # category axis, issue 29: its counts add up to the records)
    plot = window.plot
    if plot.density_shown:
        counts = np.rint(10**plot.density_item.image - 1).sum()
        assert counts + plot.outside_view == 4000
    else:
        assert len(plot.records_item.data) == 4000
    assert len(window.plot.protected_item.data) == result.n_groups

    out = tmp_path / "release.csv"
    with qtbot.waitSignal(window.exported):
        assert window.export_to(out)
    report_path = tmp_path / "release.report.json"
    assert out.is_file() and report_path.is_file()
    released = pd.read_csv(out)
    assert len(released) == 4000
    assert "person_id" not in released.columns
    assert set(released.columns) == {c for c in ctl.dataset.frame.columns if c != "person_id"}
    assert released.groupby(result.roles.quasi_identifiers).size().min() >= 4
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["k"] == 4 and report["method"] == "mdav-generic"
    assert "release.csv" in window.statusBar().currentMessage()


def test_export_never_overwrites_the_input(window: MainWindow, qtbot, tmp_path: Path) -> None:
    source = tmp_path / "persons.csv"
    source.write_bytes(demo_path().read_bytes())
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=RUN_TIMEOUT_MS):
        window.open_file(source)
    assert ctl.dataset is not None
    for column in ctl.dataset.roles.quasi_identifiers:  # make it a continuous-only table
        if ctl.dataset.roles[column].kind is not AttributeKind.CONTINUOUS:
            ctl.set_role(column, AttributeRole.NON_CONFIDENTIAL)
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        window.run_panel.run()
    before = source.read_bytes()
    assert not window.export_to(source)
    assert window.error_box is not None and window.error_box.isVisible()
    assert "persons.csv" in window.error_box.text()
    assert source.read_bytes() == before
    window.error_box.close()
    assert window.export_to(tmp_path / "persons_protected.csv")  # still usable


def test_bad_file_shows_an_error_and_the_window_stays_usable(
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\x01\x02 not a table \xff\xfe" * 20)
    ctl = window.controller
    with qtbot.waitSignal(ctl.load_failed, timeout=RUN_TIMEOUT_MS) as blocker:
        window.open_file(bad)
    assert blocker.args[0] == bad
    box = window.error_box
    assert box is not None and box.isVisible()
    assert "broken.csv" in box.text()
    assert window.controller.dataset is None
    assert window.windowTitle() == "microgui"
    box.close()

    with qtbot.waitSignal(ctl.load_failed, timeout=RUN_TIMEOUT_MS):
        window.open_file(tmp_path / "missing.csv")
    assert "missing.csv" in window.last_error
    assert window.settings.recent_files() == []
    window.error_box.close()  # type: ignore[union-attr]

    assert window.open_demo()
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(window.run_panel.run_button, Qt.MouseButton.LeftButton)


def test_a_refused_run_is_reported_not_raised(demo_window: MainWindow, qtbot) -> None:
    window = demo_window
    window.run_panel.select_method("mdav")  # the demo has nominal and ordinal QIs
    # issue 30: the method is greyed in the list and Run says why before it is pressed ...
    assert not window.run_panel.run_button.isEnabled()
    assert "mdav-generic" in window.run_panel.run_button.toolTip()
    # ... and a run started anyway (Run menu, Ctrl+R) is refused in words, not raised
    with qtbot.waitSignal(window.controller.run_failed, timeout=RUN_TIMEOUT_MS) as blocker:
        window.run_action.trigger()
    _, message, details = blocker.args
    assert "mdav-generic" in message and details == ""
    assert window.error_box is not None and window.error_box.isVisible()
    assert message[1:] in window.error_box.text()
    assert "failed" in window.run_panel.status_label.text()
    assert not window.controller.is_running  # Run stays greyed: mdav still cannot run here
    window.run_panel.select_method("mdav-generic")
    assert window.run_panel.run_button.isEnabled()


def test_recent_files_are_remembered_in_isolated_settings(
    window: MainWindow, qtbot, tmp_path: Path, _isolated_settings: Path
) -> None:
    assert window.open_demo()
    assert window.settings.recent_files() == []  # the demo is not a recent file
    source = tmp_path / "persons.csv"
    source.write_bytes(demo_path().read_bytes())
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=RUN_TIMEOUT_MS):
        window.open_file(source)
    assert window.settings.recent_files()[0] == str(source.resolve())
    assert Path(window.settings.file_name).is_relative_to(_isolated_settings)
    window.recent_menu.aboutToShow.emit()
    assert [a.text() for a in window.recent_menu.actions()][0] == "persons.csv"


def test_a_superseded_load_is_ignored(window: MainWindow, qtbot, tmp_path: Path) -> None:
    bad = tmp_path / "broken.csv"
    bad.write_text("", encoding="utf-8")
    good = tmp_path / "persons.csv"
    good.write_bytes(demo_path().read_bytes())
    ctl = window.controller
    failures: list[object] = []
    ctl.load_failed.connect(lambda *args: failures.append(args))
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=RUN_TIMEOUT_MS):
        window.open_file(bad)
        window.open_file(good)  # the user picked another file before the first was read
    assert ctl.load_pool.waitForDone(RUN_TIMEOUT_MS)
    qtbot.wait_until(lambda: not ctl.is_loading)
    assert failures == [] and window.error_box is None
    assert window.windowTitle().startswith("persons.csv")


def percent_shown(value: float) -> str:
    """A percentage as the Results panel writes it (the unit kept on the number's line)."""
    return format_percent(value).replace(" %", "\u00a0%")
