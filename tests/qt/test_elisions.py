"""Issue 30's small elisions: texts cut with "…" to the room they have, whole in a tooltip (the
Method panel's status line and Strata button, the compact combo boxes such as the groups plot's
Y chooser, which showed "education (ordir")."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QComboBox

from microgui.qt.compact import compact_combo
from microgui.qt.elided_label import (
    ElidedLabel,
    ElidedToolButton,
    combo_shown_text,
    elided_lines,
    elision_tip,
)
from microgui.qt.main_window import MainWindow

LONG = (
    "Done in 12.41 s: 1,234 groups, IL (all QIs) = 60.85 %, generalization IL = 2.273, "
    "refinement deep kept the method's groups because the refined ones lost more in the release"
)


def test_elided_lines_wrap_then_cut_the_last_line(qapp: Any) -> None:
    metrics = QFontMetrics(QFont())
    width = 40 * metrics.averageCharWidth()
    shown, cut = elided_lines(LONG, metrics, width, 2)
    lines = shown.split("\n")
    assert cut and len(lines) == 2 and lines[-1].endswith("…")
    assert all(metrics.horizontalAdvance(line) <= width for line in lines)
    assert lines[0] == LONG[: len(lines[0])]  # cut at a space, nothing dropped before
    whole, cut = elided_lines("Run cancelled.", metrics, width, 2)
    assert (whole, cut) == ("Run cancelled.", False)
    # the last line ends after a whole word: "lower bound 0.000…" read as a bound of zero
    bound = "SSE/SST (continuous QIs) = 3.162 % (lower bound 0.0001307 %), 2.69 s"
    for chars in range(20, len(bound)):
        shown, cut = elided_lines(bound, metrics, metrics.horizontalAdvance(bound[:chars]), 1)
        if cut and " " in shown:
            assert bound.startswith(shown.removesuffix("…")), shown
            assert bound[len(shown) - 1] == " ", shown  # the word before "…" is whole
    one, cut = elided_lines("x" * 200, metrics, width, 2)  # one word wider than a line
    assert cut and one.endswith("…") and metrics.horizontalAdvance(one) <= width


def test_label_and_tool_button_tooltips_come_from_one_helper(qtbot: Any) -> None:
    """ElidedLabel and ElidedToolButton give the same tooltip for the same cut: the whole text,
    then their own explanation (one helper, :func:`elision_tip`)."""
    assert elision_tip("whole", True, "tip") == "whole\ntip"
    assert elision_tip("whole", False, "tip") == "tip"
    assert elision_tip("whole", False) == ""
    label, button = ElidedLabel(LONG, max_lines=1, tip="why"), ElidedToolButton(tip="why")
    for widget in (label, button):
        qtbot.addWidget(widget)
        widget.resize(120, 40)
    button.set_full_text(LONG)
    assert label.toolTip() == button.toolTip() == elision_tip(LONG, True, "why")
    label.resize(4000, 40)
    button.resize(4000, 40)
    label.setText(LONG)  # a hidden widget gets its resize event when shown
    button.set_full_text(LONG)
    assert label.toolTip() == button.toolTip() == "why"


def test_the_status_line_keeps_two_lines_and_its_whole_text(
    demo_window: MainWindow, qtbot: Any
) -> None:
    window = demo_window
    window.resize(1366, 768)
    qtbot.waitExposed(window)
    label = window.run_panel.status_label
    height = label.height()
    label.setText(LONG * 2)
    qtbot.wait(20)
    shown = label.text_shown().split("\n")
    assert len(shown) <= 2 and shown[-1].endswith("…")
    assert label.text() == LONG * 2 and LONG * 2 in label.toolTip()
    assert label.height() == height  # the buttons above do not move
    label.setText("Run cancelled.")
    assert label.text_shown() == "Run cancelled." and label.toolTip() == ""


def test_the_strata_button_cuts_its_text_and_gives_it_whole(
    demo_window: MainWindow, qtbot: Any
) -> None:
    window = demo_window
    window.resize(1366, 768)
    qtbot.waitExposed(window)
    panel = window.run_panel
    button = panel.strata_button
    assert button.text_shown() == "none (whole table)"  # whole at 1366 × 768
    width = button.width()
    columns = [str(c) for c in window.controller.dataset.frame.columns][:6]
    panel.set_strata(columns)
    qtbot.wait(20)
    whole = ", ".join(panel.strata)
    assert button.text() == whole and button.text_shown().endswith("…")
    assert button.fontMetrics().horizontalAdvance(button.text_shown()) < button.width()
    assert whole in button.toolTip() and "strata" in button.toolTip()
    assert button.width() == width  # the dock does not widen


def test_compact_combos_cut_their_text_with_an_ellipsis(qtbot: Any) -> None:
    combo = compact_combo(QComboBox(), 9, 220)
    qtbot.addWidget(combo)
    combo.addItem("education (ordinal)")
    combo.addItem("age")
    combo.setToolTip("The column drawn up")
    combo.show()
    qtbot.waitExposed(combo)
    combo.grab()  # painted
    assert combo_shown_text(combo).endswith("…")
    assert "education (ordinal)" in combo.toolTip()
    assert "The column drawn up" in combo.toolTip()  # its own explanation kept
    combo.setCurrentIndex(1)
    combo.grab()
    assert combo_shown_text(combo) == "age"
    assert combo.toolTip() == "The column drawn up"


def test_the_groups_plot_y_chooser_is_cut_with_an_ellipsis(
    demo_window: MainWindow, qtbot: Any
) -> None:
    window = demo_window
    window.resize(1366, 768)
    window.tabs.setCurrentWidget(window.plot)
    qtbot.waitExposed(window)
    from microgui.core.runs import RunSpec

    with qtbot.waitSignal(window.controller.run_shown, timeout=120_000):
        window.controller.start_run(RunSpec.make("mdav-generic", 5, seed=0))
    combo = window.plot.y_combo
    qtbot.waitUntil(lambda: combo.count() > 0)
    longest = max(range(combo.count()), key=lambda i: len(combo.itemText(i)))
    combo.setCurrentIndex(longest)
    combo.grab()
    text = combo.itemText(longest)
    shown = combo_shown_text(combo)
    assert "(" in text  # "name (kind)": the longest is cut
    assert shown.endswith("…") and text in combo.toolTip()
