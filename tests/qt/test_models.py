"""The Qt item models: lazy over a million rows; role edits go through the controller."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from microgui.core.table.dataset import Dataset, category_values
from microgui.core.table.roles import AttributeKind, AttributeRole
from microgui.qt.controller import AppController
from microgui.qt.main_window import MainWindow
from microgui.qt.models.dataframe_model import DataFrameModel, format_cell
from microgui.qt.models.roles_model import RolesColumn, RolesModel

DISPLAY = Qt.ItemDataRole.DisplayRole


def test_dataframe_model_is_lazy_over_a_million_rows(qtbot) -> None:
    n = 1_000_000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": rng.normal(50_000, 9_000, n),
            "age": rng.integers(18, 90, n),
            "region": pd.Series(rng.choice(["north", "south"], n), dtype=object),
        }
    )
    dataset = Dataset.from_frame(frame)
    model = DataFrameModel()
    model.set_frame(frame, dataset.roles)
    assert model.rowCount() == n and model.columnCount() == 3
    # numeric columns are read in place, not copied
    assert np.shares_memory(model.column_array(0), frame["income"].to_numpy())
    last = model.index(n - 1, 0)
    assert model.data(last, DISPLAY) == f"{frame['income'].iloc[-1]:.10g}"
    assert model.data(model.index(n - 1, 2), DISPLAY) == frame["region"].iloc[-1]
    assert model.headerData(1, Qt.Orientation.Horizontal, DISPLAY) == "age\nQI · continuous"

    view = QTableView()
    qtbot.addWidget(view)
    view.verticalHeader().setDefaultSectionSize(22)
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    view.scrollToBottom()
    view.scrollTo(model.index(n // 2, 0))
    view.viewport().repaint()

    model.sort(0, Qt.SortOrder.DescendingOrder)
    assert model.data(model.index(0, 0), DISPLAY) == f"{frame['income'].max():.10g}"
    assert model.headerData(0, Qt.Orientation.Vertical, DISPLAY) == str(
        int(frame["income"].idxmax()) + 1
    )


def test_dataframe_model_formats_missing_values_and_sorts_them_last() -> None:
    frame = pd.DataFrame({"x": [2.5, np.nan, 1.0], "t": ["b", None, "a"]})
    model = DataFrameModel()
    model.set_frame(frame)
    assert model.data(model.index(1, 0), DISPLAY) == ""
    assert model.data(model.index(1, 1), DISPLAY) == ""
    model.sort(0)
    assert [model.data(model.index(r, 0), DISPLAY) for r in range(3)] == ["1", "2.5", ""]
    assert format_cell(True) == "true" and format_cell(3) == "3"


def test_dataframe_model_converts_text_in_blocks_of_shown_rows() -> None:
    """A text column is converted only in the blocks of rows shown (issue 29: converting every
    column at the first paint stalled the GUI thread); every cell reads as the frame's, across
    block edges, with missing values empty and in a sorted view."""
    n = 3000
    rng = np.random.default_rng(1)
    text = pd.Series(rng.choice(["a", "bb", "ccc"], n), dtype="str")
    text[rng.random(n) < 0.1] = None
    frame = pd.DataFrame({"t": text, "x": rng.normal(size=n), "o": text.astype(object)})
    model = DataFrameModel()
    model.set_frame(frame)
    assert model.data(model.index(n - 1, 0), DISPLAY) == format_cell(text.iloc[-1])
    assert len(model._blocks) == 1  # one block of one column converted, not the column
    for col in (0, 2):
        shown = [model.data(model.index(r, col), DISPLAY) for r in range(n)]
        assert shown == ["" if pd.isna(v) else v for v in text]
    model.sort(0)
    order = np.argsort(text.fillna("\uffff").to_numpy(dtype=object), kind="stable")
    shown = [model.data(model.index(r, 2), DISPLAY) for r in range(n)]
    assert shown == ["" if pd.isna(v) else v for v in text.iloc[order]]


@pytest.fixture
def controller(qtbot) -> AppController:  # type: ignore[no-untyped-def]
    ctl = AppController()
    frame = pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(30)],
            "income": np.linspace(1000, 4000, 30),
            "size": [1, 2, 3, 10, 20] * 6,
            "colour": ["red", "blue", "green"] * 10,
        }
    )
    ctl.set_dataset(Dataset.from_frame(frame))
    return ctl


def test_roles_model_edits_go_to_the_controller(controller: AppController, qtbot) -> None:
    model = RolesModel(controller)
    assert [model.column_name(r) for r in range(model.rowCount())] == [
        "id",
        "income",
        "size",
        "colour",
    ]
    assert model.index(0, RolesColumn.ROLE).data() == "Identifier"
    colour = model.index(3, RolesColumn.ROLE)
    assert colour.data() == "Quasi-identifier"  # text with few categories (issue 13)
    controller.set_role("colour", AttributeRole.NON_CONFIDENTIAL)
    assert not (model.flags(model.index(3, RolesColumn.KIND)) & Qt.ItemFlag.ItemIsEditable)

    with qtbot.waitSignal(controller.roles_changed):
        assert model.setData(colour, "quasi-identifier")  # text from a delegate also works
    assert controller.roles is not None
    assert controller.roles["colour"].role is AttributeRole.QUASI_IDENTIFIER
    assert model.flags(model.index(3, RolesColumn.KIND)) & Qt.ItemFlag.ItemIsEditable

    # a numeric column made ordinal gets its values in numeric order (10 after 3, not after 1)
    assert model.setData(model.index(2, RolesColumn.KIND), AttributeKind.ORDINAL)
    assert controller.roles["size"].order == ("1", "2", "3", "10", "20")
    assert model.index(2, RolesColumn.ORDER).data() == "1 < 2 < 3 < 10 < 20"

    with qtbot.waitSignal(model.edit_failed) as blocker:
        assert not model.setData(colour, "secret agent")
    assert "secret agent" in blocker.args[0]


def test_category_values_orders_numbers_numerically() -> None:
    assert category_values(pd.Series([3.0, 10.0, 1.0, np.nan, 3.0])) == ["1", "3", "10"]
    assert category_values(pd.Series(["b", "a", "c", "a"])) == ["a", "b", "c"]


def test_order_dialog_reorders_an_ordinal_column(demo_window: MainWindow, qtbot) -> None:
    panel = demo_window.roles_panel
    ctl = demo_window.controller
    assert ctl.roles is not None
    row = next(
        r for r in range(panel.model.rowCount()) if panel.model.column_name(r) == "education"
    )
    before = list(ctl.roles["education"].order or ())
    panel.view.setCurrentIndex(panel.model.index(row, RolesColumn.NAME))
    assert panel.order_button.isEnabled()
    qtbot.mouseClick(panel.order_button, Qt.MouseButton.LeftButton)
    dialog = panel.order_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.order() == before
    dialog.list_widget.setCurrentRow(0)
    qtbot.mouseClick(dialog.down_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.up_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.down_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(ctl.roles_changed):
        dialog.accept()
    assert list(ctl.roles["education"].order or ()) == [before[1], before[0], *before[2:]]
    assert panel.model.index(row, RolesColumn.ORDER).data().startswith(f"{before[1]} < {before[0]}")


def test_order_dialog_refuses_a_column_that_is_not_ordinal(demo_window: MainWindow, qtbot) -> None:
    panel = demo_window.roles_panel
    row = next(r for r in range(panel.model.rowCount()) if panel.model.column_name(r) == "income")
    with qtbot.waitSignal(panel.error_occurred):
        assert panel.edit_order(row) is None
    assert "income" in demo_window.last_error
    demo_window.error_box.close()  # type: ignore[union-attr]


def test_the_weight_role_in_the_roles_editor(controller: AppController, qtbot) -> None:
    """Issue 18: a survey weight is one column whose values are all numbers above 0; tagging
    another column moves the role; a column of other values is refused with the reason."""
    model = RolesModel(controller)
    size = model.index(2, RolesColumn.ROLE)
    with qtbot.waitSignal(controller.roles_changed):
        assert model.setData(size, "weight")
    assert controller.roles is not None and controller.roles.weight == "size"
    assert size.data() == "Weight"
    with qtbot.waitSignal(controller.roles_changed):
        assert model.setData(model.index(1, RolesColumn.ROLE), AttributeRole.WEIGHT)
    assert controller.roles.weight == "income"
    assert controller.roles["size"].role is AttributeRole.NON_CONFIDENTIAL
    with qtbot.waitSignal(model.edit_failed) as blocker:
        assert not model.setData(model.index(3, RolesColumn.ROLE), "weight")
    assert "weight column 'colour'" in blocker.args[0]


def test_a_new_table_forgets_the_pseudonym_choices(controller: AppController) -> None:
    """Export options (issue 18): pseudonyms were ticked for the previous table's identifiers;
    a new table starts with its identifiers left out (the CSV format is kept)."""
    from microgui.core.release import CsvOptions
    from microgui.qt.export_options import ExportOptions

    controller.export_options = ExportOptions(CsvOptions.make(";"), ("id",), True)
    controller.set_dataset(controller.dataset)  # type: ignore[arg-type]
    assert controller.export_options.pseudonymize == () and not controller.export_options.write_key
    assert controller.export_options.csv.sep == ";"


def test_fit_columns_sizes_to_the_widest_text_without_asking_every_cell(qtbot) -> None:  # type: ignore[no-untyped-def]
    from microgui.qt.models.dataframe_model import fit_columns

    class Counting(DataFrameModel):
        calls = 0

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
            Counting.calls += 1
            return super().data(index, role)

    words = ["a", "bb", "a much longer category label", "ccc"] * 500
    frame = pd.DataFrame({"n": np.arange(2000), "text": words, "x": np.linspace(0, 1, 2000)})
    frame.loc[1500, "text"] = "W" * 200  # beyond the rows measured (as Qt's 1,000)
    model = Counting()
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    model.set_frame(frame)
    Counting.calls = 0
    widths = fit_columns(view, model)
    assert Counting.calls == 0
    metrics = view.fontMetrics()
    header = view.horizontalHeader()
    assert widths == [view.columnWidth(c) for c in range(3)]
    assert widths[1] >= metrics.horizontalAdvance("a much longer category label")
    assert widths[1] < metrics.horizontalAdvance("W" * 200)
    assert widths[2] >= metrics.horizontalAdvance(format_cell(frame["x"].iloc[1]))
    assert all(w >= header.sectionSizeFromContents(c).width() for c, w in enumerate(widths))
    # sorted: the first rows shown are measured ("W…" sorts before the lowercase words)
    model.sort(1, Qt.SortOrder.AscendingOrder)
    assert fit_columns(view, model)[1] >= metrics.horizontalAdvance("W" * 200)
