"""Compare runs → Records (linked plots) at 1366 × 768 (a review on UCI Adult): the plots'
titles were elided to one line each, "#1 mdav-generic…" over "400 groups · colou…" with four
runs, the run's k and how the plot is coloured in the tooltip only. Geometry, not pixels."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from microgui.core.runs import RunSpec
from microgui.qt.main_window import MainWindow
from microgui.qt.plots.compare_scatter import wrap_title

TIMEOUT_MS = 300_000
SPECS = (("mdav-generic", 5), ("mdav-generic", 3), ("mdav-generic", 10), ("ama", 4))


def _plain(title: str) -> list[str]:
    """The lines a title reads (its rich text without tags)."""
    return [re.sub(r"<[^>]+>", "", line) for line in title.split("<br>")]


@pytest.mark.parametrize("n_runs", [2, 3, 4])
def test_compared_plots_titles_read_whole_at_laptop_size(
    laptop_demo_window: MainWindow, qtbot, n_runs: int
) -> None:  # type: ignore[no-untyped-def]
    window, ctl = laptop_demo_window, laptop_demo_window.controller
    ids = []
    for method, k in SPECS[:n_runs]:
        with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
            ids.append(ctl.start_run(RunSpec.make(method, k, seed=0)))
    ctl.set_comparison(ids)
    panel = window.compare_panel
    window.tabs.setCurrentWidget(panel)
    panel.views.setCurrentWidget(panel.plot)
    qtbot.waitUntil(lambda: not panel.plot.drawing, timeout=TIMEOUT_MS)
    qtbot.wait(100)
    plot = panel.plot
    assert plot.columns == n_runs  # one row: the narrowest titles
    for entry, p in zip(panel.entries, plot.plots, strict=True):
        lines = _plain(p.plot.titleLabel.text)
        text = " ".join(lines)
        # the run's number, method and k, whole; and the groups, whole
        assert entry.name in text, (entry.name, lines)
        assert "…" not in text, lines
        assert re.search(r"\d groups", text), lines
        assert len(lines) <= 4, lines
        # the title inside its plot, above its view box, not over the records
        title = p.plot.titleLabel.item.sceneBoundingRect()
        box = p.view.sceneBoundingRect()
        whole = p.plot.sceneBoundingRect()
        assert title.bottom() <= box.top() + 1, (lines, title, box)
        assert whole.left() - 1 <= title.left() and title.right() <= whole.right() + 1
    # the view boxes stay level (linked axes side by side)
    tops = {round(p.view.sceneBoundingRect().top()) for p in plot.plots}
    assert max(tops) - min(tops) <= 1, tops


def test_wrap_title_keeps_the_first_part_and_drops_later_parts_whole(qtbot) -> None:  # type: ignore[no-untyped-def]
    metrics = QFontMetrics(QFont())
    width = metrics.horizontalAdvance("#12 mdav-generic") + 2
    assert wrap_title(["#12 mdav-generic k=10"], metrics, width, " ") == [
        "#12 mdav-generic",
        "k=10",
    ]
    parts = ["400 groups", "colour: distance moved", "×: released aggregates"]
    # "colour: distance moved" needs a third line here: left out whole, not cut
    narrow = metrics.horizontalAdvance("colour: distance") + 2
    assert wrap_title(parts, metrics, narrow, " · ") == ["400 groups"]
    two = metrics.horizontalAdvance("400 groups · colour: distance moved") + 2
    assert wrap_title(parts, metrics, two, " · ") == [
        "400 groups · colour: distance moved",
        "×: released aggregates",
    ]
    wide = wrap_title(parts, metrics, 10_000, " · ")
    assert wide == [" · ".join(parts)]
    cut = wrap_title(["dp-individual-ranking"], metrics, 40, " ")
    assert len(cut) == 1 and cut[0].endswith("…")
