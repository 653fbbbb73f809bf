"""The views of issue 3, driven as a statistician would: the dependency tree (live and after an
ama run), the partition of the minimum spanning tree (mst, mstk) and the generalization classes."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from microgui.core import dependency as dependency_module  # the tree job calls it there
from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import DependencyTreeOutcome
from microgui.core.table.dataset import Dataset
from microgui.core.table.dependency import DependencyTree
from microgui.core.table.roles import AttributeKind, AttributeRole, roles_from_lists
from microgui.core.views.layout import MAX_VIEW_EDGES
from microgui.qt.main_window import MainWindow, view_rows
from microgui.qt.plots.cell_text import cell_font
from microgui.qt.plots.dependency_tree import KEY_LEGEND
from microgui.qt.plots.legend_strip import LegendStrip
from microgui.qt.plots.mst_partition import PLACEHOLDER
from microgui.qt.workers import TaskSlot

RUN_TIMEOUT_MS = 60_000
DEMO_QIS = ("sex", "age", "region", "education", "hours_per_week", "income", "wealth")


def _legend_texts(legend: pg.LegendItem | LegendStrip) -> list[str]:
    if isinstance(legend, LegendStrip):  # the MST view's, below its plot
        return legend.texts
    return [label.text for _sample, label in legend.items]


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        window.controller.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def _show_tree_tab(window: MainWindow, qtbot: Any) -> DependencyTree:
    panel = window.tree_panel
    with qtbot.waitSignal(panel.tree_shown, timeout=RUN_TIMEOUT_MS) as blocker:
        window.tabs.setCurrentWidget(panel)
    tree = blocker.args[0]
    assert isinstance(tree, DependencyTree)
    return tree


def _continuous_only(window: MainWindow) -> None:
    ctl = window.controller
    assert ctl.dataset is not None
    for column in ctl.dataset.roles.quasi_identifiers:
        if ctl.dataset.roles[column].kind is not AttributeKind.CONTINUOUS:
            ctl.set_role(column, AttributeRole.NON_CONFIDENTIAL)


def _table_1() -> Dataset:
    """``004`` Table 1(a): Age, Sex, Zipcode of seven patients."""
    frame = pd.DataFrame(
        {
            "ID": [f"t{i}" for i in range(1, 8)],
            "Age": [21, 26, 33, 37, 45, 48, 50],
            "Sex": list("MMFFMFM"),
            "Zipcode": ["13051", "13053", "13063", "13068", "14851", "14856", "14865"],
            "Disease": ["Anaemia", "Flu", "Cancer", "HIV", "Flu", "HIV", "Cancer"],
        }
    )
    roles = roles_from_lists(
        frame.columns,
        qi=["Age", "Sex", "Zipcode"],
        identifiers=["ID"],
        confidential=["Disease"],
        nominal=["Sex", "Zipcode"],
    )
    return Dataset.from_frame(frame, roles)


# --------------------------------------------------------------------------------------------
# dependency tree
# --------------------------------------------------------------------------------------------


def test_the_tree_before_any_run_is_computed_in_a_worker(
    demo_window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    original = dependency_module.dependency_tree_of_qi

    def spy(*args: Any, **kwargs: Any) -> DependencyTree:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(dependency_module, "dependency_tree_of_qi", spy)
    window = demo_window
    panel = window.tree_panel
    assert not panel.is_computing  # hidden tab: nothing computed yet
    tree = _show_tree_tab(window, qtbot)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert tree.attributes == DEMO_QIS and tree.bins == 10
    plot = panel.plot
    assert len(plot.nodes_item.data) == 7
    assert len(plot.edges_item.xData) == 2 * 6  # one curve, connect='pairs'
    assert [t.toPlainText() for t in plot.edge_labels] == [f"{w:.3f}" for _, _, w in tree.edges]
    assert plot.key_attributes() == tree.key_attributes
    assert KEY_LEGEND in _legend_texts(plot.legend)
    assert not panel.showing_run and "current quasi-identifiers" in panel.source_label.text()
    # the heatmap: the matrix, names on both axes
    np.testing.assert_array_equal(plot.image_item.image, tree.matrix)
    left_ticks = plot.matrix_plot.getAxis("left")._tickLevels[0]
    assert [name for _pos, name in left_ticks] == list(DEMO_QIS)
    assert [name for _pos, name in plot.bottom_axis._tickLevels[0]] == list(DEMO_QIS)
    assert len(plot.cell_text.texts) == 49
    # The font is fitted to the cells whenever the plot's layout gives the view its size (posted
    # layout events: under a loaded CI they may come before or after the tree is drawn, and the
    # view's width settles once its axes have theirs). Whatever the order, the texts end up
    # shown exactly when a font fits the settled view, and a window large enough shows them.
    view = plot.matrix_plot.getViewBox()

    def fitted_to_settled_view() -> bool:
        fits = any(cell_font(view.width(), view.height(), 7, s) for s in ("0.00", "0.0"))
        return plot.cell_text.shown == fits

    qtbot.wait(200)
    qtbot.waitUntil(fitted_to_settled_view, timeout=5000)
    window.resize(2400, 1500)
    qtbot.waitUntil(lambda: plot.cell_text.shown, timeout=5000)


def _widest_fits(plot: Any, texts: list[str]) -> bool:
    """Each text, in the cells' font, fits a cell of the matrix's view."""
    from PySide6.QtGui import QFontMetrics

    view = plot.matrix_plot.getViewBox()
    m = len(plot.tree.attributes)
    metrics = QFontMetrics(plot.cell_text._font)
    cell_w = view.width() / (m * 1.04)
    return all(metrics.horizontalAdvance(t) + 4 <= cell_w for t in texts)


def test_the_matrix_values_are_written_at_1366_by_768(demo_window: MainWindow, qtbot) -> None:
    """Issue 30 (review): at 1366 × 768 the matrix of the demo's 7 quasi-identifiers had ~130 px
    beside the tree and wrote no value in its cells (hover only). Its pane now takes the width
    its values need: they are written, with two decimals, and each fits its cell."""
    window = demo_window
    window.resize(1366, 768)
    qtbot.wait(50)
    tree = _show_tree_tab(window, qtbot)
    plot = window.tree_panel.plot
    qtbot.waitUntil(lambda: plot.cell_text.shown, timeout=5000)
    qtbot.wait(100)  # settled: still shown
    assert plot.cell_text.shown and plot.cell_decimals == 2
    m = len(tree.attributes)
    expected = ["·" if r == c else f"{tree.matrix[r, c]:.2f}" for r in range(m) for c in range(m)]
    assert plot.cell_text.texts == expected
    assert _widest_fits(plot, plot.cell_text.texts)
    sizes = plot.splitter.sizes()
    assert sizes[0] >= 0.4 * sum(sizes)  # the tree keeps its share


def test_the_matrix_drops_a_decimal_then_its_values_as_it_narrows(
    demo_window: MainWindow, qtbot
) -> None:
    """Narrowed by the user (their split is kept), the matrix writes its values with two
    decimals, then one when two do not fit, then none (hover a cell): never a value wider
    than its cell."""
    window = demo_window
    window.resize(1600, 900)
    qtbot.wait(50)
    _show_tree_tab(window, qtbot)
    plot = window.tree_panel.plot
    qtbot.waitUntil(lambda: plot.cell_text.shown, timeout=5000)
    total = sum(plot.splitter.sizes())
    plot.splitter.moveSplitter(int(total * 0.45), 1)  # as the handle's drag does
    assert plot.split_by_user
    seen: set[int | None] = set()
    for matrix_width in range(int(total * 0.55), 120, -12):
        plot.splitter.setSizes([total - matrix_width, matrix_width])
        qtbot.wait(30)
        assert plot.splitter.sizes()[1] <= matrix_width + 2  # the user's split is kept
        if plot.cell_text.shown:
            assert _widest_fits(plot, plot.cell_text.texts)
            assert all(len(t.split(".")[-1]) == plot.cell_decimals for t in plot.cell_text.texts
                       if t != "·")  # fmt: skip
            seen.add(plot.cell_decimals)
        else:
            seen.add(None)
    assert seen == {2, 1, None}


def test_the_shown_tree_does_not_wait_behind_the_runs_other_analyses(
    demo_window: MainWindow, qtbot
) -> None:
    """Issue 29/30: the tree tab said "Computing…" for seconds while the analysis pool worked
    through the run's other analyses. With the pool held by a running analysis and two more
    queued behind it, showing the tab gets the tree first, and a hidden tab starts nothing."""
    window = demo_window
    ctl = window.controller
    release = threading.Event()
    ended: list[str] = []
    holder = TaskSlot(ctl.analysis_pool)
    queued = [TaskSlot(ctl.analysis_pool), TaskSlot(ctl.analysis_pool)]
    holder.finished.connect(lambda *_a: ended.append("running analysis"))
    for n, slot in enumerate(queued):
        slot.finished.connect(lambda *_a, n=n: ended.append(f"queued analysis {n}"))
    ctl.dependency_tree_computed.connect(lambda *_a: ended.append("tree"))
    holder.start(lambda _progress: release.wait(RUN_TIMEOUT_MS / 1000))
    for slot in queued:
        slot.start(lambda _progress: None)
    panel = window.tree_panel
    try:
        ctl.set_role("household_size", AttributeRole.QUASI_IDENTIFIER)  # the tree is out of date
        assert not panel.is_computing  # hidden: nothing started for it
        # (the other analyses end only when released: a tree behind them would never come)
        with qtbot.waitSignal(panel.tree_shown, timeout=30_000, raising=False):
            window.tabs.setCurrentWidget(panel)
        shown_while_held = list(ended)
    finally:
        release.set()
    qtbot.wait_until(lambda: len(ended) == 4, timeout=RUN_TIMEOUT_MS)
    assert shown_while_held == ["tree"]  # before the analyses that were running or queued
    assert ended == ["tree", "running analysis", "queued analysis 0", "queued analysis 1"]
    assert "household_size" in panel.plot.tree.attributes


def test_the_reference_measures_do_not_hold_the_shown_views_analyses(
    demo_window: MainWindow, qtbot
) -> None:
    """Issue 29/30: the unprotected table's reference measures (~10 s on Adult, for the R-U map's
    star) have a lane of their own: with the views' analysis pool held, the reference is still
    measured, and with the reference lane held, an analysis of a view shown still runs."""
    ctl = demo_window.controller
    release = threading.Event()
    holder = TaskSlot(ctl.analysis_pool)
    holder.start(lambda _progress: release.wait(RUN_TIMEOUT_MS / 1000))
    try:
        assert ctl.dataset is not None
        with qtbot.waitSignal(ctl.analyses.reference_measured, timeout=RUN_TIMEOUT_MS):
            assert ctl.analyses.unprotected_reference(ctl.dataset) is not None
    finally:
        release.set()
    qtbot.wait_until(lambda: not holder.busy, timeout=RUN_TIMEOUT_MS)
    release.clear()
    held = TaskSlot(ctl.reference_pool)
    held.start(lambda _progress: release.wait(RUN_TIMEOUT_MS / 1000))
    view_task = TaskSlot(ctl.analysis_pool)
    try:
        with qtbot.waitSignal(view_task.finished, timeout=30_000):
            view_task.start(lambda _progress: "done")
    finally:
        release.set()
    qtbot.wait_until(lambda: not held.busy, timeout=RUN_TIMEOUT_MS)


def test_changing_bins_or_roles_recomputes_the_tree(demo_window: MainWindow, qtbot) -> None:
    window = demo_window
    ctl = window.controller
    panel = window.tree_panel
    first = _show_tree_tab(window, qtbot)

    with qtbot.waitSignal(ctl.dependency_tree_computed, timeout=RUN_TIMEOUT_MS) as blocker:
        panel.bins_spin.setValue(4)
    outcome = blocker.args[1]
    assert isinstance(outcome, DependencyTreeOutcome)
    assert outcome.tree.bins == 4 and panel.plot.tree is outcome.tree
    assert not np.allclose(outcome.tree.matrix, first.matrix)  # fewer bins, lower entropies
    assert "4 equal-frequency bins" in panel.plot.title_text()

    with qtbot.waitSignal(panel.tree_shown, timeout=RUN_TIMEOUT_MS) as shown:
        ctl.set_role("household_size", AttributeRole.QUASI_IDENTIFIER)
    tree = shown.args[0]
    assert "household_size" in tree.attributes and len(panel.plot.nodes_item.data) == 8

    # a role change that does not touch the quasi-identifiers computes nothing
    ctl.set_role("survey_weight", AttributeRole.CONFIDENTIAL)
    assert not panel.is_computing


def test_a_superseded_tree_is_ignored(demo_window: MainWindow, qtbot) -> None:
    window = demo_window
    ctl = window.controller
    _show_tree_tab(window, qtbot)
    arrived: list[int] = []
    ctl.dependency_tree_computed.connect(lambda tree_id, _o: arrived.append(tree_id))
    with qtbot.waitSignal(window.tree_panel.tree_shown, timeout=RUN_TIMEOUT_MS) as blocker:
        window.tree_panel.bins_spin.setValue(3)
        window.tree_panel.bins_spin.setValue(5)  # the user changed their mind at once
    assert ctl.tree_pool.waitForDone(RUN_TIMEOUT_MS)
    qtbot.wait_until(lambda: not ctl.is_computing_tree)
    assert len(arrived) == 1 and blocker.args[0].bins == 5


def test_roles_without_quasi_identifiers_explain_why_there_is_no_tree(
    demo_window: MainWindow, qtbot
) -> None:
    window = demo_window
    ctl = window.controller
    _show_tree_tab(window, qtbot)
    assert ctl.dataset is not None
    roles = ctl.dataset.roles
    for column in roles.quasi_identifiers:
        roles = roles.replace(column, roles[column].with_role(AttributeRole.NON_CONFIDENTIAL))
    with qtbot.waitSignal(ctl.dependency_tree_failed, timeout=RUN_TIMEOUT_MS) as blocker:
        ctl.set_roles(roles)
    assert "quasi-identifier" in blocker.args[1]
    assert "quasi-identifier" in window.tree_panel.plot.title_text()
    assert window.tree_panel.plot.tree is None


def test_an_ama_run_shows_its_tree_and_key_attributes(demo_window: MainWindow, qtbot) -> None:
    window = demo_window
    window.tabs.setCurrentWidget(window.tree_panel)
    result = _run(window, qtbot, RunSpec.make("ama", 5, {"bins": 6}, seed=0))
    tree = result.artifacts["dependency_tree"]
    panel = window.tree_panel
    plot = panel.plot
    assert panel.showing_run and "ama" in panel.source_label.text()
    assert plot.tree is tree and panel.bins == 6
    assert plot.key_attributes() == tree.key_attributes and tree.key_attributes
    keys = {tree.attributes.index(a) for a in tree.key_attributes}
    brushes = plot.nodes_item.data["brush"]
    assert all((brushes[i] is plot.key_brush) == (i in keys) for i in range(len(brushes)))
    assert len(plot.edges_item.xData) == 2 * len(tree.edges)
    assert "key attributes: <b>" + ", ".join(tree.key_attributes) in plot.title_text()
    # a later, live computation replaces the run's tree
    with qtbot.waitSignal(panel.tree_shown, timeout=RUN_TIMEOUT_MS):
        panel.bins_spin.setValue(8)
    assert not panel.showing_run and plot.tree is not tree


# --------------------------------------------------------------------------------------------
# MST partition
# --------------------------------------------------------------------------------------------


def test_mst_view_draws_kept_and_cut_edges(demo_window: MainWindow, qtbot) -> None:
    """Issue 29: at most MAX_VIEW_EDGES of the edges in view are drawn, and the title says how
    many; zooming in draws every edge of a small view."""
    window = demo_window
    plot = window.mst_plot
    assert PLACEHOLDER in plot.title_text()
    # issue 30 (review): no 0-1 scale on the empty view, the axes come with the tree
    assert not plot.plot_item.getAxis("bottom").isVisible()
    _continuous_only(window)
    window.tabs.setCurrentWidget(plot)
    result = _run(window, qtbot, RunSpec.make("mst", 5, seed=0))
    part = result.artifacts["mst"]
    assert plot.plot_item.getAxis("bottom").isVisible()
    assert plot.layout_shown is window.controller.mst_layout
    view = plot.view_edges
    assert view is not None and view.total == 3999 and view.in_view > MAX_VIEW_EDGES
    assert plot.kept_drawn + plot.cut_drawn == MAX_VIEW_EDGES
    drawn = view.indices
    assert plot.cut_drawn == int(part.cut[drawn].sum()) > 0
    assert len(plot.cut_curve.xData) == 2 * plot.cut_drawn
    # one curve per palette colour, one for edges between groups, one for cut edges: never
    # one item per edge
    curves = [i for i in plot.plot_item.items if isinstance(i, pg.PlotCurveItem)]
    assert len(curves) == len(plot.cluster_palette) + 2
    assert all(c.opts["connect"] == "pairs" for c in curves)
    assert len(plot.records_item.data) == 4000
    # hundreds of groups in view: grey records, said in the legend and the title
    assert not plot.records_by_group and "groups in view" in plot.title_text()
    title = plot.title_text()
    assert "3,999 edges" in title and f"{int(part.cut.sum()):,} cut" in title
    assert f"drawing {MAX_VIEW_EDGES:,} of {view.in_view:,} edges in view" in title
    assert "zoom in to see more" in title
    assert "cut edge" in _legend_texts(plot.legend)
    # zoomed in on a few records: every edge in view drawn, the records coloured by group
    x, y = plot._coords[0], plot._coords[1]
    cx, cy = float(np.median(x)), float(np.median(y))
    sx, sy = 0.02 * float(np.ptp(x)), 0.02 * float(np.ptp(y))
    plot.plot_item.getViewBox().setRange(
        xRange=(cx - sx, cx + sx), yRange=(cy - sy, cy + sy), padding=0.0
    )
    qtbot.waitUntil(lambda: plot.view_edges is not view, timeout=2000)
    small = plot.view_edges
    assert small is not None and 0 < small.in_view <= MAX_VIEW_EDGES and not small.sampled
    assert plot.kept_drawn + plot.cut_drawn == small.in_view
    assert f"all {small.in_view:,} edges in view drawn" in plot.title_text()
    # axes: the same choices as the cluster scatter plot
    assert plot.axis_choices() == window.plot.axis_choices()
    plot.set_axes("age", "income")
    assert plot.plot_item.getAxis("bottom").labelText == "age (original units)"
    plot.cut_check.setChecked(False)
    assert plot.cut_drawn == 0 and "cut edge" not in _legend_texts(plot.legend)

    # a run without a tree brings the placeholder back
    window.controller.set_role("age", AttributeRole.QUASI_IDENTIFIER)
    _run(window, qtbot, RunSpec.make("mdav", 5, seed=0))
    assert PLACEHOLDER in plot.title_text() and plot.layout_shown is None


def test_mst_view_says_why_it_draws_no_edge(demo_window: MainWindow, qtbot) -> None:
    window = demo_window
    plot = window.mst_plot
    _continuous_only(window)
    window.tabs.setCurrentWidget(plot)
    _run(window, qtbot, RunSpec.make("mst", 5, seed=0))
    x = plot._coords[0]
    far = float(np.nanmax(x)) + 10.0
    plot.plot_item.getViewBox().setRange(xRange=(far, far + 1.0), padding=0.0)
    qtbot.waitUntil(
        lambda: plot.view_edges is not None and plot.view_edges.in_view == 0, timeout=2000
    )
    assert plot.kept_drawn + plot.cut_drawn == 0
    assert "no tree edge has both ends in this view" in plot.title_text()


# --------------------------------------------------------------------------------------------
# generalization classes (mstk)
# --------------------------------------------------------------------------------------------


def test_mstk_classes_table_and_linked_selection(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(_table_1())
    panel = window.classes_panel
    assert not window.classes_dock.toggleViewAction().isChecked()
    result = _run(window, qtbot, RunSpec.make("mstk", 2, seed=1))
    # a tab beside the run history, which stays in sight (issue 30)
    assert window.classes_dock.toggleViewAction().isChecked()
    assert window.history_dock in window.tabifiedDockWidgets(window.classes_dock)  # beside it
    assert window.history_dock.isVisible()
    model = panel.model
    assert model.rowCount() == 3
    assert [c for c in model.frame.columns] == ["class", "size", "Age", "Sex", "Zipcode"]
    # numbered from 1, like the runs (the records' group labels count from 0)
    assert [model.index(r, 0).data() for r in range(3)] == ["1", "2", "3"]
    sizes = [model.index(r, 1).data() for r in range(3)]
    assert sizes == ["2", "2", "3"]
    assert [int(s) for s in sizes] == np.bincount(result.labels).tolist()
    assert [model.index(2, c).data() for c in (2, 3, 4)] == result.protected.iloc[4][
        ["Age", "Sex", "Zipcode"]
    ].tolist()

    # sort by size, descending, as a click on the header does
    panel.view.sortByColumn(1, Qt.SortOrder.DescendingOrder)
    assert model.index(0, 1).data() == "3"

    # selecting the largest class selects its records in the data table
    with qtbot.waitSignal(ctl.selection_changed) as blocker:
        panel.view.selectRow(0)
    mask = blocker.args[0]
    assert mask.tolist() == [False] * 4 + [True] * 3
    assert panel.selected_classes() == [3]
    assert ctl.selected_rows.tolist() == [4, 5, 6]
    data_view = window.data_panel.view
    rows = sorted({i.row() for i in data_view.selectionModel().selectedRows()})
    assert rows == [4, 5, 6]
    assert data_view.selectionModel().currentIndex().row() == 4  # scrolled to the first one
    assert window.tabs.currentWidget() is window.data_panel
    # ringed in the MST view too (drawn when its tab is shown)
    window.tabs.setCurrentWidget(window.mst_plot)
    assert len(window.mst_plot.selection_item.data) == 3
    window.tabs.setCurrentWidget(window.data_panel)

    # with the data table sorted, the same records are selected at their sorted rows
    window.data_panel.view.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # Age, oldest first
    with qtbot.waitSignal(ctl.selection_changed):
        panel.select_class(1)  # numbered from 1, as shown
    rows = sorted({i.row() for i in data_view.selectionModel().selectedRows()})
    assert [window.data_panel.model.source_row(r) for r in rows] == [1, 0]
    assert rows == view_rows(window.data_panel.model, np.array([0, 1])).tolist() == [5, 6]

    # the MST view shows mstk's record tree and its pruned edges
    plot = window.mst_plot
    assert plot.layout_shown is not None and plot.layout_shown.source == "mstk"
    kept = ~np.asarray(result.artifacts["mst"].cut)
    assert plot.cut_drawn == int((~kept).sum()) and plot.kept_drawn == int(kept.sum())

    # clearing the class selection clears the records' selection
    with qtbot.waitSignal(ctl.selection_changed) as cleared:
        panel.view.clearSelection()
    assert cleared.args[0] is None
    assert not data_view.selectionModel().hasSelection()

    # a run of another method empties the table
    _run(window, qtbot, RunSpec.make("mdav-generic", 2, seed=1))
    assert panel.classes is None and "mstk" in panel.info.text()
