"""Every view at 1366 × 768 (a statistician's review of UCI Adult in a real window): nothing
clipped, nothing covering the data. Geometry, not pixels: where a legend, an axis title or a
table's text lies against the data it explains."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from microgui.core.runs import RunSpec
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

TIMEOUT_MS = 300_000


def _run(window: MainWindow, qtbot, spec: RunSpec) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.run_shown, timeout=TIMEOUT_MS):
        window.controller.start_run(spec)


def _records_rect(item) -> QRectF:  # type: ignore[no-untyped-def]
    """The scene rectangle of a scatter item's points inside its view (what a reader sees)."""
    x, y = item.getData()
    view = item.getViewBox()
    (x0, x1), (y0, y1) = view.viewRange()
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    xs, ys = x[inside], y[inside]
    data = QRectF(float(xs.min()), float(ys.min()), float(np.ptp(xs)), float(np.ptp(ys)))
    return view.mapViewToScene(data).boundingRect()


def test_mst_legend_covers_no_record_at_laptop_size(laptop_demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The MST partition's legend was drawn over the view's top right corner and hid records
    (mstk k = 5 on Adult at 1366 × 768). It lies below the plot, inside the widget, over no
    part of the view box, with every entry (the edges' lines, the selection's ring) in it."""

    window = laptop_demo_window
    window.tabs.setCurrentWidget(window.mst_plot)
    _run(window, qtbot, RunSpec.make("mstk", 5, seed=0))
    mst = window.mst_plot
    qtbot.waitUntil(lambda: mst.legend.isVisible(), timeout=10_000)
    labels = window.controller.result.labels  # type: ignore[union-attr]
    window.controller.set_selection(np.flatnonzero(labels == labels[0]))
    qtbot.wait(200)
    legend = mst.legend.sceneBoundingRect()
    view_box = mst.plot_item.getViewBox().sceneBoundingRect()
    records = _records_rect(mst.records_item)
    widget = mst.plot_widget.mapToScene(mst.plot_widget.viewport().rect()).boundingRect()
    assert not legend.intersects(records), (legend, records)
    assert not legend.intersects(view_box), (legend, view_box)
    assert widget.adjusted(-1, -1, 1, 1).contains(legend), (legend, widget)
    texts = [text for _entry, text in mst.legend.items]
    assert texts[0].startswith("record") and "cut edge" in texts
    assert "selected record" in texts


def _axis_titles_past_their_axes(window: MainWindow) -> list[str]:
    """Every visible axis title of the window's plots that runs past either end of its axis
    (pyqtgraph centres a title on its axis whatever its length: the widget clips the rest)."""
    import pyqtgraph as pg

    slack = 8.0  # pyqtgraph's 5-pixel nudge and the text document's blank margins
    out = []
    for view in window.findChildren(pg.GraphicsView):
        if not view.isVisible() or view.scene() is None:
            continue
        for axis in view.scene().items():
            if not (
                isinstance(axis, pg.AxisItem)
                and axis.isVisible()
                and axis.label is not None
                and axis.label.isVisible()
                and axis.labelText
            ):
                continue
            title, along = axis.label.sceneBoundingRect(), axis.sceneBoundingRect()
            vertical = axis.orientation in ("left", "right")
            lo, hi = (title.top(), title.bottom()) if vertical else (title.left(), title.right())
            a, b = (along.top(), along.bottom()) if vertical else (along.left(), along.right())
            if lo < a - slack or hi > b + slack:
                out.append(f"{axis.labelText!r}: {lo:.0f}..{hi:.0f} past the axis {a:.0f}..{b:.0f}")
    return out


def test_no_axis_title_runs_past_its_axis_in_any_view(
    laptop_demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """ "PC2 of the mixed-distance embedding (10% of variance)" was cut by the widget at
    1366 × 768 (the records' plots are ~270 pixels tall there). Every view after a run: each
    axis title lies along its axis; a cut one ends in "…" and its axis's tooltip has it whole."""
    from microgui.core.views.layout import PC1, PC2

    window = laptop_demo_window
    _run(window, qtbot, RunSpec.make("mstk", 5, seed=0))
    window.mst_plot.set_axes(PC1, PC2)
    window.plot.set_axes(PC1, PC2)
    problems = []
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        qtbot.wait(300)
        problems += [
            f"{window.tabs.tabText(index)}: {p}" for p in _axis_titles_past_their_axes(window)
        ]
    assert problems == []
    from microgui.qt.plots.titles import FittedTitleAxisItem, pc_short_title

    left = window.mst_plot.plot_item.getAxis("left")
    assert isinstance(left, FittedTitleAxisItem) and left.labelText.startswith("PC2")
    if left.title_cut:  # the share of variance kept: "PC2 (25% of variance)"
        assert left.title_shown == pc_short_title(left.labelText), left.title_shown
        assert left.labelText in left.toolTip()
    # the groups plot's too (it read "PC2 of the mixed-distance embedding" on Adult)
    window.tabs.setCurrentWidget(window.plot)
    qtbot.wait(200)
    groups_left = window.plot.plot_item.getAxis("left")
    assert isinstance(groups_left, FittedTitleAxisItem)
    assert groups_left.title_shown.startswith("PC2") and "% of variance" in groups_left.title_shown


def test_a_fitted_axis_title_is_shortened_then_cut_with_its_whole_in_the_tooltip(qtbot) -> None:  # type: ignore[no-untyped-def]
    import pyqtgraph as pg

    from microgui.qt.plots.titles import fitted_axes, pc_short_title

    title = "PC2 of the mixed-distance embedding (10% of variance) · 8 QIs"
    assert pc_short_title(title) == "PC2 (10% of variance)"
    assert pc_short_title("age (years)") is None
    widget = pg.PlotWidget(axisItems=fitted_axes())
    qtbot.addWidget(widget)
    widget.getPlotItem().setLabel("left", title)
    left = widget.getPlotItem().getAxis("left")
    left.setToolTip("what the axis is")
    widget.resize(400, 700)
    widget.show()
    qtbot.waitExposed(widget)
    assert not left.title_cut and left.title_shown == title and left.labelText == title
    widget.resize(400, 200)
    qtbot.waitUntil(lambda: left.title_cut)
    assert left.title_shown.endswith("…") and len(left.title_shown) < len(title)
    assert left.label.boundingRect().width() <= left.geometry().height()
    assert left.toolTip() == f"{title}\nwhat the axis is"
    left.set_short_titles(title, pc_short_title(title))
    assert left.title_shown == "PC2 (10% of variance)"
    widget.resize(400, 700)
    qtbot.waitUntil(lambda: not left.title_cut)
    assert left.toolTip() == "what the axis is" and left.labelText == title
    # a title's trailing " · " notes go before anything is cut (the R-U map's "· lower is b…")
    bottom = widget.getPlotItem().getAxis("bottom")
    widget.getPlotItem().setLabel(
        "bottom", "records in groups with one value (%) · lower is better"
    )
    widget.resize(300, 700)
    qtbot.waitUntil(lambda: bottom.title_cut)
    assert bottom.title_shown == "records in groups with one value (%)"


def test_results_numbers_read_whole_on_one_line_at_laptop_size(
    laptop_demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The Results dock's value column was ~100 pixels at 1366 × 768 (the names' column as wide
    as "Invented combinations"): "488 (of 3,016 records)" read over three lines, "(≥ k =" over
    "5; see the verdict)". The names wrap instead; each number and its unit is on one line,
    whole, and nothing in the dock is cut."""
    import html
    import re

    from layout_walk import clipped_widgets

    window = laptop_demo_window
    _run(window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))
    qtbot.wait(200)
    panel = window.results_panel
    for key in ("n_groups", "group_sizes", "k_anonymity", "invented_combinations", "seconds"):
        label = panel.value_labels[key]
        plain = html.unescape(re.sub("<[^>]+>", "", label.text()))
        one_line = label.fontMetrics().horizontalAdvance(plain)
        assert label.isVisible() and label.width() >= one_line, (
            key,
            plain,
            label.width(),
            one_line,
        )
    assert "records)" in panel.value_labels["n_groups"].text()
    assert not [p for p in clipped_widgets(window) if "result" in p.lower()]


def test_a_data_cell_cut_by_its_column_gives_its_value_whole_in_its_tooltip(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The Data view cut Adult's "Married-civ-spouse" to "Married-civ-sp…" at 1366 × 768, and
    nothing gave it whole: each cell's tooltip is its value."""
    from PySide6.QtCore import Qt

    window = MainWindow(UiSettings())
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    import pandas as pd

    from microgui.core.table.dataset import Dataset

    frame = pd.DataFrame(
        {
            "age": [39, 50, 38, 53, 28],
            "marital-status": ["Married-civ-spouse", "Never-married", "Married-spouse-absent"]
            + ["Divorced", "Married-AF-spouse"],
        }
    )
    window.controller.set_dataset(Dataset.from_frame(frame))
    window.tabs.setCurrentWidget(window.data_panel)
    qtbot.wait(100)
    view = next(
        v for v in window.data_panel.findChildren(type(window.roles_panel.view)) if v.isVisible()
    )
    model = view.model()
    column = next(
        c
        for c in range(model.columnCount())
        if "marital" in str(model.headerData(c, Qt.Orientation.Horizontal))
    )
    for row in range(model.rowCount()):
        index = model.index(row, column)
        assert index.data(Qt.ItemDataRole.ToolTipRole) == index.data()
    assert model.index(0, column).data(Qt.ItemDataRole.ToolTipRole) == "Married-civ-spouse"


def _tick_labels_outside(window: MainWindow) -> list[str]:
    """Every tick label of the window's visible plots that the widget's edge cuts."""
    import pyqtgraph as pg
    from PySide6.QtGui import QPainter, QPicture

    out = []
    for view in window.findChildren(pg.GraphicsView):
        if not view.isVisible() or view.scene() is None:
            continue
        shown = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-2, -2, 2, 2)
        for axis in view.scene().items():
            if not (isinstance(axis, pg.AxisItem) and axis.isVisible()):
                continue
            picture = QPicture()
            painter = QPainter(picture)
            try:
                specs = axis.generateDrawSpecs(painter)  # what it paints: text metrics only
            finally:
                painter.end()
            for rect, _flags, text in specs[2] if specs else []:
                where = axis.mapRectToScene(rect)
                if not shown.contains(where):
                    out.append(f"{axis.orientation} tick {text!r} at {where.getRect()}")
    return out


def test_every_tick_label_and_axis_title_is_inside_its_plot_in_every_view(
    laptop_demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The class of the cut "PC2" title: every view, every Utility tab and both comparison
    pages after two runs at 1366 × 768. No tick label is cut by its widget's edge (the empty
    model plot's "1.0" was) and no axis title runs past its axis."""
    window = laptop_demo_window
    ctl = window.controller
    for spec in (RunSpec.make("mdav-generic", 5, seed=0), RunSpec.make("mstk", 5, seed=0)):
        _run(window, qtbot, spec)
    ctl.set_comparison([e.run_id for e in ctl.history])
    problems = []

    def look(where: str) -> None:
        qtbot.wait(300)
        found = _tick_labels_outside(window) + _axis_titles_past_their_axes(window)
        problems.extend(f"{where}: {p}" for p in found)

    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        page = window.tabs.currentWidget()
        name = window.tabs.tabText(index)
        if page is window.utility_panel:
            for tab in range(page.tabs.count()):
                page.tabs.setCurrentIndex(tab)
                look(f"{name} › {page.tabs.tabText(tab)}")
        elif page is window.compare_panel:
            for view in range(page.views.count()):
                page.views.setCurrentIndex(view)
                qtbot.waitUntil(lambda: window.compare_panel.bars.pending == 0, timeout=60_000)
                look(f"{name} › page {view}")
        else:
            look(name)
    assert problems == []
