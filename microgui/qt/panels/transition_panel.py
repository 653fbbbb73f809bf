"""The "Category changes" panel: how each categorical quasi-identifier's categories were released.

For the run shown, a selector of its ordinal and nominal quasi-identifiers and, for the one
chosen, a transition heatmap (:class:`~microgui.qt.plots.transition_heatmap.TransitionHeatmap`):
rows are the original categories, columns the released ones, each cell the number of records,
the diagonal (unchanged) outlined. A line above it says how many records keep their category.
The tables are computed in core (:func:`microgui.core.views.projection.category_transitions`) in the
run worker (``RunOutcome.transitions``); this panel only formats. A run without an ordinal or
nominal quasi-identifier gets a message saying so.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from microgui.core.runs import RunResult
from microgui.core.views.projection import all_category_transitions, category_axis, unchanged_share
from microgui.qt.controller import AppController
from microgui.qt.plots.transition_heatmap import COLOUR_MODES, TransitionHeatmap

__all__ = ["TransitionPanel", "PLACEHOLDER", "NO_CATEGORICAL"]

PLACEHOLDER = "Run a method to see how the categories of its quasi-identifiers were released."
NO_CATEGORICAL = (
    "No categorical quasi-identifier in this run: this view shows, for each ordinal or nominal "
    "quasi-identifier, how many records of each original category were released with each "
    "category. Tag a column ordinal or nominal quasi-identifier and run again to see it."
)


class TransitionPanel(QWidget):
    """Column selector, summary line and transition heatmap of the run shown."""

    def __init__(
        self, controller: AppController | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.result: RunResult | None = None
        self.tables: Mapping[str, pd.DataFrame] = {}

        self.column_combo = QComboBox()
        self.column_combo.setToolTip("The ordinal or nominal quasi-identifier shown")
        self.column_combo.setMinimumContentsLength(18)
        self.column_combo.currentIndexChanged.connect(self._on_column_changed)
        self.colour_combo = QComboBox()
        self.colour_combo.addItem("records (log scale)", COLOUR_MODES[0])
        self.colour_combo.addItem("share of the row (%)", COLOUR_MODES[1])
        self.colour_combo.setToolTip(
            "Colour cells by their number of records (log scale), or by their share of the "
            "original category's records (how likely a record of that category is released "
            "as each category). The cells always show the number of records."
        )
        self.colour_combo.currentIndexChanged.connect(self._on_colour_changed)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.message = QLabel(PLACEHOLDER)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #444444; padding: 12px;")
        self.heatmap = TransitionHeatmap()
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("color: #444444;")
        self.heatmap.legend_changed.connect(lambda: self.legend.setText(self.heatmap.legend_text()))
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.heatmap)

        top = QHBoxLayout()
        top.addWidget(QLabel("Quasi-identifier"))
        top.addWidget(self.column_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("Colour"))
        top.addWidget(self.colour_combo)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.legend)

        if controller is not None:
            controller.dataset_loaded.connect(lambda _d: self.clear())
            controller.run_finished.connect(self._on_run_finished)
        self.clear()

    # content ------------------------------------------------------------------------------
    def clear(self, message: str = PLACEHOLDER) -> None:
        self.result = None
        self.tables = {}
        self._fill_columns([])
        self.heatmap.set_table(None)
        self._show_message(message)

    def _show_message(self, message: str) -> None:
        self.message.setText(message)
        self.message.setVisible(True)
        self.summary.setVisible(False)
        self.scroll.setVisible(False)
        self.legend.setVisible(False)

    def columns(self) -> list[str]:
        """The quasi-identifiers the selector offers."""
        return [str(self.column_combo.itemData(i)) for i in range(self.column_combo.count())]

    def current_column(self) -> str | None:
        data = self.column_combo.currentData()
        return None if data is None else str(data)

    def _fill_columns(self, names: list[str]) -> None:
        self.column_combo.blockSignals(True)
        previous = self.column_combo.currentData()
        self.column_combo.clear()
        result = self.result
        for name in names:
            kind = ""
            if result is not None:
                kind = "ordinal" if name in result.qi.ordinal_names else "nominal"
            self.column_combo.addItem(f"{name} ({kind})" if kind else name, name)
        index = self.column_combo.findData(previous)
        self.column_combo.setCurrentIndex(index if index >= 0 else 0)
        self.column_combo.blockSignals(False)
        self.column_combo.setEnabled(bool(names))
        self.colour_combo.setEnabled(bool(names))

    def set_run(
        self, result: RunResult | None, tables: Mapping[str, pd.DataFrame] | None = None
    ) -> None:
        """Show a run's transition tables (computed by core when not given)."""
        if result is None:
            self.clear()
            return
        self.result = result
        self.tables = dict(tables) if tables is not None else all_category_transitions(result)
        qi_names = set(self.tables)
        # in the table's column order
        names = [c for c in result.roles.quasi_identifiers if c in qi_names]
        names += [c for c in self.tables if c not in names]
        self._fill_columns(names)
        if not names:
            self.heatmap.set_table(None)
            self._show_message(NO_CATEGORICAL)
            return
        self._show_current()

    def set_column(self, name: str) -> None:
        """Show the transitions of one quasi-identifier (a name from :meth:`columns`)."""
        index = self.column_combo.findData(name)
        if index < 0:
            raise KeyError(f"{name!r} is not an ordinal or nominal quasi-identifier of this run")
        self.column_combo.setCurrentIndex(index)

    def _on_column_changed(self, _index: int) -> None:
        if self.result is not None and self.current_column() is not None:
            self._show_current()

    def _on_colour_changed(self, _index: int) -> None:
        self.heatmap.set_colour_mode(str(self.colour_combo.currentData()))

    def _show_current(self) -> None:
        name = self.current_column()
        result = self.result
        if name is None or result is None or name not in self.tables:
            return
        table = self.tables[name]
        self.heatmap.set_table(table)
        total = int(table.to_numpy().sum())
        share = unchanged_share(table)
        kept = round(share * total) if total else 0
        axis = category_axis(result.qi, name)
        extra = table.shape[1] - table.shape[0]
        generalized = int(table.iloc[:, table.shape[0] :].to_numpy().sum()) if extra > 0 else 0
        other = total - kept - generalized
        parts = [f"<b>{other:,}</b> ({other / total if total else 0:.1%}) with another category"]
        if extra > 0:
            parts.append(
                f"<b>{generalized:,}</b> ({generalized / total if total else 0:.1%}) with one of "
                f"{extra} generalized value(s) (the last column(s))"
            )
        self.summary.setText(
            f"<b>{html.escape(name)}</b> ({axis.kind}; {table.shape[0]} categories "
            f"{html.escape(axis.order_rule)}): <b>{kept:,}</b> of {total:,} records "
            f"({share:.1%}) released with their own category, {', '.join(parts)}. Hover a "
            "cell for its shares."
        )
        self.message.setVisible(False)
        self.summary.setVisible(True)
        self.scroll.setVisible(True)
        self.legend.setVisible(True)

    # controller signals -------------------------------------------------------------------
    def _on_run_finished(self, run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        tables: Mapping[str, pd.DataFrame] | None = None
        if self.controller is not None:
            try:
                outcome = self.controller.entry(run_id).outcome
            except KeyError:
                outcome = None
            if outcome is not None and outcome.result is result:
                tables = outcome.transitions
        self.set_run(result, tables)
