"""The Results panel never scrolls across (issue 30): a drawn 20-digit seed (a plan's, a
sweep's) was one unbreakable word that widened the panel past its dock, so the verdict's first
line sat behind a horizontal scroll bar at 1366 × 768 and 1920 × 1080. The seed is cut (whole in
the tooltip); the IL-by-attribute table scrolls across on its own."""

from __future__ import annotations

import pytest

from microgui.core.runs import RunSpec
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.results_panel import seed_text

LONG_SEED = 2**64 - 59  # 20 digits, like a drawn one


def test_seed_text_cuts_long_seeds_only() -> None:
    assert seed_text(0) == ("0", "0")
    assert seed_text(12345678) == ("12345678", "12345678")
    assert seed_text(LONG_SEED) == ("18446744…", str(LONG_SEED))
    assert seed_text(None) == ("", "")


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_results_fit_their_dock_across(demo_window: MainWindow, qtbot, size) -> None:  # type: ignore[no-untyped-def]
    window = demo_window
    window.resize(*size)
    window.show()
    ctl = window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=LONG_SEED))
    qtbot.wait(100)
    panel = window.results_panel
    scroll = window.results_scroll
    assert scroll.horizontalScrollBar().maximum() == 0, panel.minimumSizeHint()
    # the verdict and the run row lie inside the dock's visible width
    viewport = scroll.viewport().width()
    for label in (panel.verdict, panel.value_labels["run"]):
        right = label.mapTo(panel, label.rect().topRight()).x()
        assert label.isVisible() and right <= viewport, (label.objectName(), right, viewport)
    # and the layout walk (every laptop-size test's check) says so too
    from layout_walk import clipped_widgets

    assert not [p for p in clipped_widgets(window) if "verdict" in p]
    assert "18446744…" in panel.value_labels["run"].text()
    assert str(LONG_SEED) in panel.value_labels["run"].toolTip()
    # the table is whole: in sight, or reachable by its own scroll bar
    area = panel.by_attribute_area
    assert area.height() >= area.label.sizeHint().height()
