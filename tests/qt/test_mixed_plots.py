"""Plots for mixed data (issue 13, item 7): categorical axes in the groups plot, the mixed
projection's labels and the "Category changes" transition view."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from qt_helpers import large_continuous_dataset

from microgui.core.runs import RunResult, RunSpec
from microgui.core.views.projection import JITTER, category_axis, category_transitions
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.transition_panel import NO_CATEGORICAL, PLACEHOLDER, TransitionPanel
from microgui.qt.plots.cluster_scatter import PC1, PC2, ClusterScatterPlot
from microgui.qt.plots.transition_heatmap import format_count, heat_colour

RUN_TIMEOUT_MS = 60_000


def _run(window: MainWindow, qtbot, spec: RunSpec) -> RunResult:  # type: ignore[no-untyped-def]
    ctl = window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        ctl.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


@pytest.fixture
def demo_result(demo_window: MainWindow, qtbot) -> RunResult:  # type: ignore[no-untyped-def]
    return _run(demo_window, qtbot, RunSpec.make("mdav-generic", 5, seed=0))


def _first_of_groups(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_index=True)[1]


def test_groups_plot_takes_a_nominal_axis(demo_window: MainWindow, demo_result: RunResult) -> None:
    plot = demo_window.plot
    # points, not the density image "auto" draws over 1,000 records with a category axis
    plot.set_display("points")
    assert {"sex", "region", "education"} <= set(plot.axis_choices())
    assert plot.x_combo.itemText(plot.x_combo.findData("region")) == "region (nominal)"
    plot.x_combo.setCurrentIndex(plot.x_combo.findData("age"))
    plot.y_combo.setCurrentIndex(plot.y_combo.findData("region"))
    assert (plot.options.x_axis, plot.options.y_axis) == ("age", "region")

    axis = category_axis(demo_result.qi, "region")
    frame = demo_window.controller.dataset.frame  # type: ignore[union-attr]
    # the left axis shows the categories, by decreasing frequency
    counts = frame["region"].value_counts()
    assert list(axis.labels) == list(counts.index)
    left = plot.left_axis
    assert left.categories == axis.labels
    ticks = left.tickValues(-0.6, len(axis.labels) - 0.4, 400)
    assert ticks[0][1] == [float(i) for i in range(len(axis.labels))]  # all fit: no thinning
    assert left.tickStrings(ticks[0][1], 1.0, 1.0) == list(axis.labels)
    label = plot.plot_item.getAxis("left").labelText
    assert label.startswith("region (nominal, 6 categories")
    assert "frequency" in left.toolTip() and f"±{JITTER}" in left.toolTip()
    # each record sits within ±0.35 of its own category's slot
    y = plot.records_item.data["y"]
    slots = np.array([axis.labels.index(v) for v in frame["region"]], dtype=float)
    assert np.abs(y - slots).max() <= JITTER
    assert np.abs(y - slots).max() > 0.3  # jittered, not stacked on the slot
    np.testing.assert_allclose(plot.records_item.data["x"], frame["age"].to_numpy(dtype=float))
    # the group aggregates: within ±0.35 of the released category's slot, one per group
    released = demo_result.protected["region"].to_numpy(dtype=object)[
        _first_of_groups(demo_result.labels)
    ]
    py = plot.protected_item.data["y"]
    assert len(py) == demo_result.n_groups
    released_slots = np.array([axis.labels.index(v) for v in released], dtype=float)
    # the layer is in group order
    assert np.abs(py - released_slots).max() <= JITTER
    assert "categorical axis" in plot.title_text()
    # the records view spans every category slot, and the legend is above the top one
    (_, _), (y0, y1) = plot.plot_item.getViewBox().viewRange()
    assert y0 <= -0.5 and y1 >= len(axis.labels) - 0.5
    # the same seed gives the same picture; a redraw keeps it
    before = y.copy()
    plot.redraw()
    np.testing.assert_array_equal(plot.records_item.data["y"], before)


def test_two_categorical_axes_and_an_ordinal_order(
    demo_window: MainWindow, demo_result: RunResult
) -> None:
    plot = demo_window.plot
    plot.set_display("points")
    plot.set_axes("education", "sex")
    assert plot.bottom_axis.categories == demo_result.qi.ordinal_orders[0]  # declared order
    assert plot.left_axis.categories is not None and len(plot.left_axis.categories) == 2
    x, y = plot.records_item.data["x"], plot.records_item.data["y"]
    # the jitter of the two axes is independent: no diagonal within a cell
    rx, ry = x - np.round(x), y - np.round(y)
    assert abs(float(np.corrcoef(rx, ry)[0, 1])) < 0.1
    assert "categorical axes" in plot.title_text()
    # back to a continuous axis: numeric ticks again
    plot.set_axes("age", "income")
    assert plot.bottom_axis.categories is None and plot.left_axis.categories is None
    assert plot.plot_item.getAxis("bottom").labelText == "age (original units)"


def test_category_labels_are_thinned_not_overprinted(qtbot) -> None:  # type: ignore[no-untyped-def]
    plot = ClusterScatterPlot()
    qtbot.addWidget(plot)
    axis = plot.bottom_axis
    axis.set_categories(tuple(f"category number {i}" for i in range(30)))
    ticks = axis.tickValues(-0.6, 29.6, 300)  # 10 px per category
    step, values = ticks[0]
    assert step > 1 and values[1] - values[0] == step
    strings = axis.tickStrings(values, 1.0, step)
    widths = [axis._metrics().horizontalAdvance(s) for s in strings]
    assert max(widths) + 10 <= step * 300 / 30.2  # each label fits its share of the axis
    assert all(s.endswith("…") for s in strings)  # elided to fit


def test_pc_axes_name_the_mixed_embedding(demo_window: MainWindow, demo_result: RunResult) -> None:
    plot = demo_window.plot
    plot.set_axes(PC1, PC2)
    bottom = plot.plot_item.getAxis("bottom")
    assert "PC1 of the mixed-distance embedding" in bottom.labelText
    assert "of variance" in bottom.labelText
    assert "rank/|D|" in plot.bottom_axis.toolTip()
    assert plot.bottom_axis.categories is None


def test_transition_view_shows_counts(
    demo_window: MainWindow, demo_result: RunResult, qtbot
) -> None:
    panel = demo_window.transition_panel
    demo_window.tabs.setCurrentWidget(panel)
    assert panel.columns() == ["sex", "region", "education"]  # the table's column order
    assert panel.column_combo.itemText(2) == "education (ordinal)"
    panel.set_column("education")
    table = panel.heatmap.table
    assert table is not None
    expected = category_transitions(demo_result, "education")
    pd.testing.assert_frame_equal(table, expected)
    # the table the worker computed is the one shown
    outcome = demo_window.controller.entry(demo_window.controller.shown_run_id).outcome  # type: ignore[arg-type]
    assert outcome is not None and set(outcome.transitions) == {"sex", "region", "education"}
    assert list(table.index) == list(demo_result.qi.ordinal_orders[0])
    frame = demo_window.controller.dataset.frame  # type: ignore[union-attr]
    kept = int((frame["education"] == demo_result.protected["education"]).sum())
    assert int(np.trace(table.to_numpy())) == kept
    assert f"{kept:,}</b> of 4,000 records" in panel.summary.text()
    assert panel.scroll.isVisibleTo(panel) and not panel.message.isVisibleTo(panel)
    # a cell's tooltip: categories and count
    r, c = 0, 1
    text = panel.heatmap.cell_text(r, c)
    assert f"{int(table.iloc[r, c]):,} record(s)" in text
    assert text.startswith(f"original {table.index[r]} → released as {table.columns[c]}")
    assert "kept as" in panel.heatmap.cell_text(2, 2)
    # the cell under a point is the one drawn there
    panel.resize(900, 600)
    qtbot.waitUntil(lambda: panel.heatmap.width() > 300)
    rect = panel.heatmap.cell_rect(3, 4)
    assert panel.heatmap.cell_at(rect.center().x(), rect.center().y()) == (3, 4)
    panel.heatmap.grab()  # paints without error
    # colour by share of the row
    panel.colour_combo.setCurrentIndex(1)
    values = panel.heatmap.cell_values()
    shares = table.to_numpy() / table.to_numpy().sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.nan_to_num(values), np.where(table.to_numpy() > 0, shares, 0))
    assert "row %" in panel.legend.text()
    # another column
    panel.set_column("sex")
    pd.testing.assert_frame_equal(panel.heatmap.table, category_transitions(demo_result, "sex"))
    with pytest.raises(KeyError):
        panel.set_column("age")


def test_transition_view_without_categorical_quasi_identifier(window: MainWindow, qtbot) -> None:
    panel = window.transition_panel
    assert panel.message.text() == PLACEHOLDER
    window.controller.set_dataset(large_continuous_dataset(n=300, d=3))
    _run(window, qtbot, RunSpec.make("mdav", 5, seed=0))
    assert panel.message.text() == NO_CATEGORICAL
    assert "No categorical quasi-identifier in this run" in panel.message.text()
    assert panel.message.isVisibleTo(panel) and not panel.scroll.isVisibleTo(panel)
    assert panel.columns() == [] and not panel.column_combo.isEnabled()
    # the groups plot of an all-continuous run keeps its z-score PCA
    label = window.plot.plot_item.getAxis("bottom").labelText
    assert "z-score" in label or label.endswith("(original units)")


def test_transition_panel_alone_computes_its_tables(demo_result: RunResult, qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = TransitionPanel()
    qtbot.addWidget(panel)
    panel.set_run(demo_result)
    assert panel.columns() == ["sex", "region", "education"]
    panel.set_run(None)
    assert panel.message.text() == PLACEHOLDER


def test_heatmap_helpers() -> None:
    assert format_count(12_345, False) == "12,345"
    assert format_count(12_345, True) == "12k"
    assert format_count(9_255, True) == "9.3k"
    assert format_count(999, True) == "999"
    assert heat_colour(0.0).lightnessF() > heat_colour(1.0).lightnessF()
    assert heat_colour(2.0) == heat_colour(1.0)


def test_groups_plot_draws_from_the_workers_axes(  # type: ignore[no-untyped-def]
    demo_window: MainWindow, demo_result: RunResult, qtbot, monkeypatch
) -> None:
    """Issue 29: the drawing turn takes the axes the worker laid out with the projection
    (``qi_projection``); it computes none itself, and draws what it would have computed."""
    import microgui.core.views.projection as projection_module
    import microgui.qt.plots.cluster_scatter as scatter_module

    projection = projection_module.qi_projection(demo_result)
    assert projection is not None
    bare = dataclasses.replace(projection, category_axes={}, released_slots={}, released_numbers={})
    pictures = []
    for proj, forbid in ((bare, False), (projection, True)):
        plot = ClusterScatterPlot()
        qtbot.addWidget(plot)
        plot.set_display("points")
        with monkeypatch.context() as m:
            if forbid:

                def fail(*_args: object) -> None:
                    raise AssertionError("computed in the GUI thread")

                m.setattr(scatter_module, "category_axis", fail)
                m.setattr(scatter_module, "released_numbers", fail)
                m.setattr(projection_module.CategoryAxis, "slots_of", fail)
            plot.set_run(demo_result, proj)
            for x_axis, y_axis in (("age", "region"), ("education", "sex")):
                plot.set_axes(x_axis, y_axis)
                pictures.append(
                    (
                        plot.records_item.data["x"].copy(),
                        plot.records_item.data["y"].copy(),
                        plot.protected_item.data["x"].copy(),
                        plot.protected_item.data["y"].copy(),
                    )
                )
    for computed, ready in zip(pictures[:2], pictures[2:], strict=True):
        for a, b in zip(computed, ready, strict=True):
            np.testing.assert_array_equal(a, b)


#: Adult's 16 educations (ARX's file): every other one was labelled at 1366 × 768.
EDUCATIONS = (
    "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc",
    "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool",
)  # fmt: skip


def test_sixteen_categories_all_labelled_at_laptop_size(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Adult's education on the groups plot's vertical axis at 1366 × 768: every category
    labelled (in a smaller font, not below MIN_TICK_PT), none overprinting the next."""
    import pandas as pd

    from microgui.core.runs import RunSpec
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import roles_from_lists
    from microgui.qt.plots.cluster_scatter import MIN_TICK_PT

    rng = np.random.default_rng(5)
    n = 640
    frame = pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "education": rng.choice(EDUCATIONS, n),
            "sex": rng.choice(["Male", "Female"], n),
        }
    )
    roles = roles_from_lists(
        list(frame.columns), qi=list(frame.columns), nominal=["education", "sex"]
    )
    window.controller.set_dataset(Dataset(frame, roles))
    window.resize(1366, 768)
    with qtbot.waitSignal(window.controller.run_finished, timeout=120_000):
        window.controller.start_run(RunSpec.make("mdav-generic", 5, seed=1))
    plot = window.plot
    window.tabs.setCurrentWidget(plot)
    plot.set_axes("age", "education")
    qtbot.wait(200)
    axis = plot.left_axis
    assert axis.categories is not None and len(axis.categories) == 16
    lo, hi = plot.plot_item.getViewBox().viewRange()[1]
    length = axis.geometry().height()
    step, values = axis.tickValues(lo, hi, length)[0]
    assert step == 1 and len(values) == 16, (step, values, length)
    assert "every" not in axis.labelText  # no "every 2nd category labelled"
    assert axis.tick_font().pointSizeF() >= MIN_TICK_PT
    assert axis._metrics().height() <= length / (hi - lo)  # one line per slot: no overprint
