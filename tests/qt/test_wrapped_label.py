"""The wrapped label takes its text's height at once, and the clip walker's checks of it and of
scroll areas (tests/qt/layout_walk.py; issue 30)."""

from __future__ import annotations

from typing import Any

from layout_walk import clipped_widgets
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from microgui.qt.wrapped_label import WrappedLabel

LONG = " ".join(["a long explanation of where this figure comes from"] * 6)


def _panel(qtbot: Any, label: QLabel) -> QWidget:
    panel = QWidget()
    qtbot.addWidget(panel)
    layout = QVBoxLayout(panel)
    layout.addWidget(label)
    plot = QWidget()  # a neighbour that can shrink (a plot)
    plot.setMinimumHeight(20)
    layout.addWidget(plot, 1)
    panel.resize(300, 400)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_wrapped_label_has_its_texts_height_without_a_turn_of_the_event_loop(qtbot) -> None:  # type: ignore[no-untyped-def]
    """updateGeometry only posts a layout request: until it was delivered the label kept its
    one-line height under a six-line text (what the walk saw on a loaded machine)."""
    label = WrappedLabel("one line")
    panel = _panel(qtbot, label)
    one_line = label.height()
    label.setText(LONG)  # no event processed from here on
    needed = label.heightForWidth(label.width())
    assert needed > 2 * one_line
    assert label.height() >= needed
    label.setText("short again")
    assert label.height() < needed
    panel.close()


def test_a_plain_wrapped_qlabel_settles_when_the_walk_delivers_its_layout_request(qtbot) -> None:  # type: ignore[no-untyped-def]
    label = QLabel("one line")
    label.setWordWrap(True)
    panel = _panel(qtbot, label)
    label.setText(LONG)
    assert label.height() < label.heightForWidth(label.width())  # requested, not yet laid out
    assert clipped_widgets(panel) == []  # the walk delivers the posted layout request first
    assert label.height() >= label.heightForWidth(label.width())


def test_the_walk_sees_a_scroll_area_cutting_its_widget(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The Results dock's value column was cut at the right inside its scroll area, which does
    not scroll across."""
    window = QWidget()
    qtbot.addWidget(window)
    area = QScrollArea()
    QVBoxLayout(window).addWidget(area)
    area.setWidgetResizable(True)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    inner = QWidget()
    inner.setMinimumWidth(500)
    QVBoxLayout(inner).addWidget(QLabel("value"))
    area.setWidget(inner)
    window.resize(300, 200)
    window.show()
    qtbot.waitExposed(window)
    problems = clipped_widgets(window)
    assert any("too wide and cannot scroll" in p for p in problems), problems
    window.resize(600, 200)
    qtbot.wait(10)
    assert clipped_widgets(window) == []
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    window.resize(300, 200)
    qtbot.wait(10)
    assert clipped_widgets(window) == []  # it scrolls across: nothing cut


def _verdict_in_scroll_area(qtbot: Any, inner_width: int) -> QScrollArea:
    area = QScrollArea()
    qtbot.addWidget(area)
    area.setWidgetResizable(True)
    inner = QWidget()
    inner.setMinimumWidth(inner_width)
    layout = QVBoxLayout(inner)
    verdict = QLabel("k-anonymous (k = 5); attribute disclosure: 51 % of records")
    verdict.setObjectName("result_verdict")
    verdict.setWordWrap(True)
    layout.addWidget(verdict)
    area.setWidget(inner)
    area.resize(300, 200)
    area.show()
    qtbot.waitExposed(area)
    return area


def test_the_walk_finds_a_verdict_behind_a_scroll_bar_across(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A scroll area that can scroll across is not "clipped", yet the verdict's end sat behind
    its scroll bar (the Results panel with a 20-digit seed): the walk names it."""
    area = _verdict_in_scroll_area(qtbot, inner_width=600)
    assert area.horizontalScrollBar().maximum() > 0
    problems = clipped_widgets(area)
    assert any("result_verdict" in p and "spans x" in p for p in problems), problems
    area.close()


def test_the_walk_passes_a_verdict_inside_its_scroll_area(qtbot) -> None:  # type: ignore[no-untyped-def]
    area = _verdict_in_scroll_area(qtbot, inner_width=100)
    assert area.horizontalScrollBar().maximum() == 0
    assert not [p for p in clipped_widgets(area) if "verdict" in p]
    area.close()
