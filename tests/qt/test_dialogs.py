"""Dialogs and window plumbing: export override, About, drag and drop, parameter widgets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from microgui import __version__
from microgui.core.demo import demo_path
from microgui.core.methods import Method, MethodInput, MethodOutput, ParamSpec, get_method
from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeKind
from microgui.qt.main_window import PAPERS, MainWindow
from microgui.qt.panels.run_panel import make_param_widget, param_widget_value

RUN_TIMEOUT_MS = 60_000


def _singletons(inp: MethodInput) -> MethodOutput:
    return MethodOutput(labels=np.arange(inp.dataset.n_records, dtype=np.int64))


@pytest.fixture
def unsafe_method(register_method: Callable[[Method], str]) -> str:
    """A fake method registered for this test only: every record alone (k-anonymity 1)."""
    return register_method(
        Method(
            name="test-singletons",
            title="Singletons (test)",
            summary="puts every record in its own group",
            description="test only",
            citation="none",
            kinds=frozenset(AttributeKind),
            run=_singletons,
        )
    )


def test_export_refused_by_the_check_needs_a_typed_reason(
    demo_window: MainWindow, unsafe_method: str, qtbot, tmp_path: Path
) -> None:
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make(unsafe_method, 5))
    out = tmp_path / "unsafe.csv"
    assert not demo_window.export_to(out)
    dialog = demo_window.override_dialog
    assert dialog is not None and dialog.isVisible()
    assert not out.exists()
    assert not dialog.export_button.isEnabled()
    qtbot.keyClicks(dialog.reason_edit, "   ")
    assert not dialog.export_button.isEnabled()  # blanks are no reason
    dialog.reason_edit.clear()
    qtbot.keyClicks(dialog.reason_edit, "synthetic test data")
    assert dialog.export_button.isEnabled()
    with qtbot.waitSignal(demo_window.exported):
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    report = json.loads((tmp_path / "unsafe.report.json").read_text(encoding="utf-8"))
    assert report["export_override"]["reason"] == "synthetic test data"
    assert "1-anonymous" in report["export_override"]["problems"][0]
    assert out.is_file()


def test_cancelling_the_override_writes_nothing(
    demo_window: MainWindow, unsafe_method: str, qtbot, tmp_path: Path
) -> None:
    ctl = demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make(unsafe_method, 5))
    demo_window.export_to(tmp_path / "unsafe.csv")
    assert demo_window.override_dialog is not None
    demo_window.override_dialog.reject()
    assert list(tmp_path.iterdir()) == []


def test_about_names_the_version_and_the_papers(window: MainWindow) -> None:
    box = window.show_about()
    assert box.isVisible()
    text = box.text()
    assert __version__ in text
    for authors, title in PAPERS:
        assert authors.split(",")[0] in text and title.split(".")[0] in text
    box.close()


def test_dropping_a_file_opens_it(window: MainWindow, qtbot, tmp_path: Path) -> None:
    source = tmp_path / "dropped.csv"
    source.write_bytes(demo_path().read_bytes())
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(source))])
    event = QDropEvent(
        QPointF(200, 200),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.controller.dataset_loaded):
        window.dropEvent(event)
    assert window.windowTitle().startswith("dropped.csv")


def test_parameter_widgets_follow_the_param_specs(qtbot) -> None:
    specs = [
        ParamSpec("flag", bool, True, "a flag"),
        ParamSpec("mode", str, "b", "a choice", choices=("a", "b")),
        ParamSpec("count", int, 3, "an int", minimum=1, maximum=9),
        ParamSpec("ratio", float, 0.5, "a float", minimum=0.0, maximum=1.0),
        ParamSpec("label", str, "x", "text"),
    ]
    kinds = [QCheckBox, QComboBox, QSpinBox, QDoubleSpinBox, QLineEdit]
    for spec, kind in zip(specs, kinds, strict=True):
        widget = make_param_widget(spec)
        qtbot.addWidget(widget)
        assert isinstance(widget, kind) and widget.toolTip() == spec.help
        assert spec.parse(param_widget_value(widget)) == spec.default
    count = make_param_widget(specs[2])
    qtbot.addWidget(count)
    assert isinstance(count, QSpinBox) and (count.minimum(), count.maximum()) == (1, 9)


def test_run_panel_shows_the_method_summary_and_parameters(demo_window: MainWindow) -> None:
    panel = demo_window.run_panel
    panel.select_method("mdav-generic")
    assert "Domingo-Ferrer &amp; Torra 2005" in panel.summary.text()
    # every parameter the method declares, and these in particular (round: issue 13, item 6)
    declared = {spec.name for spec in get_method("mdav-generic").all_params}
    assert set(panel.param_widgets) == declared
    assert {"rescale_variance", "ordinal_average", "categorical_aggregate"} <= declared
    combo = panel.param_widgets["ordinal_average"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentText("convex-median")
    # issue 13: the combination rule is a choice, joint by default
    joint = panel.param_widgets["categorical_aggregate"]
    assert isinstance(joint, QComboBox)
    assert [joint.itemText(i) for i in range(joint.count())] == ["joint", "independent"]
    assert joint.currentText() == "joint"
    joint.setCurrentText("independent")
    panel.seed_spin.setValue(-1)
    spec = panel.spec()
    assert spec.param_dict["ordinal_average"] == "convex-median" and spec.seed is None
    assert spec.param_dict["categorical_aggregate"] == "independent"
    assert panel.seed_spin.text() == "random"
