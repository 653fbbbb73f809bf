"""The Results panel never scrolls across (issue 30): a drawn 20-digit seed (a plan's, a
sweep's) was one unbreakable word that widened the panel past its dock, so the verdict's first
line sat behind a horizontal scroll bar at 1366 × 768 and 1920 × 1080. The seed is cut (whole in
the tooltip); the IL-by-attribute table fits the dock's width (names cut, whole in its tooltip)."""

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


#: An mstk run with hierarchies on Adult: every quasi-identifier generalized, long names.
ADULT_GENERALIZED = {
    col: {"kind": kind, "information_loss": 60.39, "changed_percent": 92.0, "generalized": True}
    for col, kind in (
        ("age", "continuous"),
        ("sex", "nominal"),
        ("race", "nominal"),
        ("marital-status", "nominal"),
        ("education", "ordinal"),
        ("native-country", "nominal"),
        ("workclass", "nominal"),
        ("occupation", "nominal"),
        ("a-much-longer-column-name-than-adults", "nominal"),
    )
}


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_il_by_attribute_fits_the_dock_without_scrolling_across(
    demo_window: MainWindow, qtbot, size
) -> None:  # type: ignore[no-untyped-def]
    """A generalized run's IL-by-attribute table sat behind a horizontal scroll bar, even at
    1920 × 1080: it takes the most complete form that fits the dock's width, never scrolls
    across, and gives every name whole in its tooltip."""
    from PySide6.QtCore import Qt

    from microgui.qt.panels.results_panel import by_attribute_variants

    window = demo_window
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    area = window.results_panel.by_attribute_area
    variants = by_attribute_variants({"information_loss_by_attribute": ADULT_GENERALIZED})
    assert "n, gen." in variants[0] and "* generalized" in variants[1]
    area.set_variants(variants)
    qtbot.wait(50)
    assert area.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert area.label.sizeHint().width() <= area.viewport().width()
    assert area.label.width() <= area.viewport().width()
    assert area.height() >= area.label.sizeHint().height()
    # cut only as much as needed: the form before the one shown does not fit
    shown = variants.index(area.label.text())
    assert 0 < shown < len(variants) - 1, shown  # some cut, not the shortest
    area.label.setText(variants[shown - 1])
    assert area.label.sizeHint().width() > area.viewport().width()
    area.fit()
    assert area.label.text() == variants[shown]
    for name in ADULT_GENERALIZED:
        assert name in area.label.toolTip()
    from layout_walk import clipped_widgets

    assert not [p for p in clipped_widgets(window) if "result" in p.lower()]


def test_the_run_line_is_one_line_at_laptop_size(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Beside its name, in the value column, the run line ("mdav-generic, k = 5, seed 0")
    wrapped to 3-4 lines at 1366 × 768. It is one line the panel's width, with the run's number
    of the history; what does not fit is cut with "…" and whole in its tooltip."""
    window = demo_window
    window.resize(1366, 768)
    ctl = window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        run_id = ctl.start_run(RunSpec.make("mdav-generic", 5, seed=LONG_SEED))
    qtbot.wait(100)
    line = window.results_panel.value_labels["run"]
    one_line = line.fontMetrics().lineSpacing() + line.contentsMargins().top() * 2 + 4
    assert line.isVisible() and line.height() <= one_line, (line.height(), one_line)
    whole = f"Run #{run_id}: mdav-generic, k = 5, seed 18446744…"
    assert line.text() == whole
    shown = line.text_shown()  # type: ignore[attr-defined]
    assert "\n" not in shown
    if shown != whole:  # cut: the tooltip has it all
        assert shown.endswith("…") and whole in line.toolTip()
    assert str(LONG_SEED) in line.toolTip()
    # inside the dock's visible width
    right = line.mapTo(window.results_panel, line.rect().topRight()).x()
    assert right <= window.results_scroll.viewport().width()
