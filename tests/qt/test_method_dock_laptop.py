"""The Method dock at 1366 × 768 (a review on UCI Adult): the chosen method's description
scrolled inside a box ~64 px tall, cut after three lines. Its headline now reads whole, its
explanation whole once unfolded ("more ▸"), scrolling with the settings if the dock is short.
Geometry, not pixels."""

from __future__ import annotations

import html
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QLabel, QScrollArea, QWidget

from microgui.core.methods import available_methods
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings


@pytest.fixture
def laptop_window(qtbot) -> Iterator[MainWindow]:  # type: ignore[no-untyped-def]
    window = MainWindow(UiSettings(persist=False))
    qtbot.addWidget(window)
    window.controller.load_demo()
    window.resize(1366, 738)  # 768 less a window manager's panel
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.controller.shutdown()


def _scroll_area_of(widget: QWidget) -> QScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


def _whole(label: QLabel) -> bool:
    """The label is as tall as its text at its width."""
    return label.height() >= label.heightForWidth(label.width())


def _in_sight(widget: QWidget, area: QScrollArea) -> bool:
    view = area.viewport()
    rect = QRect(widget.mapTo(view, widget.rect().topLeft()), widget.size())
    return view.rect().contains(rect)


def test_method_description_reads_whole_at_laptop_size(laptop_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = laptop_window.run_panel
    area = panel.settings_area
    for method in available_methods():
        panel.select_method(method.name)
        if hasattr(panel, "show_about"):
            panel.show_about(False)
            qtbot.wait(20)
            # folded: the headline whole, in sight, with its link, nothing to scroll
            assert html.escape(method.headline) in panel.headline.text()
            assert "more ▸" in panel.headline.text()
            assert _whole(panel.headline), method.name
            assert _in_sight(panel.headline, area), method.name
            assert area.verticalScrollBar().maximum() == 0, method.name
            panel.show_about(True)
        qtbot.wait(20)
        # unfolded: the whole explanation and its source, in no box of its own
        summary = panel.summary
        assert summary.isVisible() and "Source:" in summary.text()
        assert _whole(summary), (
            method.name,
            summary.height(),
            summary.heightForWidth(summary.width()),
        )
        assert _scroll_area_of(summary) is area, method.name
        # ... every line of it reachable by scrolling the settings
        bottom = summary.mapTo(area.widget(), summary.rect().bottomLeft()).y()
        assert bottom <= area.widget().height(), method.name
    # Run and Sweep stay in sight below the settings whatever is unfolded
    assert panel.run_button.isVisible() and panel.sweep_button.isVisible()
    dock = laptop_window.run_dock
    for button in (panel.run_button, panel.sweep_button):
        where = QRect(button.mapTo(dock, button.rect().topLeft()), button.size())
        assert dock.rect().contains(where)


def test_unfolding_the_description_asks_the_dock_for_room(laptop_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The link folds and unfolds the explanation; the settings ask for its height."""
    panel = laptop_window.run_panel
    panel.select_method("t-closeness")
    panel.show_about(False)
    qtbot.wait(20)
    with qtbot.waitSignal(panel.about_toggled):
        panel.headline.linkActivated.emit("about")
    qtbot.wait(20)
    assert panel.about_shown and panel.summary.isVisible() and "less ▴" in panel.headline.text()
    # what the Method dock asks for (MainWindow.fit_method_dock) shows the whole explanation
    settings = panel.settings
    wanted = max(settings.sizeHint().height(), settings.minimumSizeHint().height())
    summary = panel.summary
    assert wanted >= summary.mapTo(settings, summary.rect().bottomLeft()).y()


def test_folded_description_and_the_note_on_the_run_shown_need_no_scrolling(
    laptop_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """With the note "the run shown has other settings" under the longest headline
    (t-closeness's, four lines), the Parameters header stays in sight: nothing to scroll."""
    from microgui.core.runs import RunSpec

    ctl, panel = laptop_window.controller, laptop_window.run_panel
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        ctl.start_run(RunSpec.make("ama", 4, seed=0))
    for name in ("t-closeness", "mdav-generic"):
        panel.select_method(name)
        panel.show_about(False)
        qtbot.wait(50)
        assert panel.shown_box.isVisible(), name
        assert _whole(panel.headline), name
        assert panel.settings_area.verticalScrollBar().maximum() == 0, name
        assert _in_sight(panel.params_box, panel.settings_area), name
