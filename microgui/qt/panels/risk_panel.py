"""The *Risk* view (issue 29 item 2): the disclosure risk of the loaded table before any run,
and before → after once a run is shown.

What it shows comes from :func:`microgui.core.metrics.file_risk.assess_risk` (the same dict as
``microgui assess --json`` and the run report's ``risk_before`` / ``risk_after``): the
k-anonymity counts on the categorical keys, the smallest key combinations that break k, a
histogram of the individual risk, the SUDA2 per-variable contributions as horizontal bars
(sorted, labelled with the column names: the variables to protect first) and the l-diversity of
each confidential attribute. The table's risk is computed in the controller's analysis pool
(a :class:`~microgui.qt.workers.TaskSlot`), only while the view is visible, after the roles
settle; a run's figures are read from its report. This panel only formats.
"""

from __future__ import annotations

import html
from functools import partial
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from microgui.core.metrics.file_risk import assess_risk, format_expected
from microgui.core.progress import ProgressFn
from microgui.core.runs import RunResult
from microgui.qt.controller import AppController
from microgui.qt.plots.titles import fitted_axes
from microgui.qt.workers import TaskSlot

__all__ = ["RiskPanel", "PLACEHOLDER", "SOURCES", "assess_job"]

PLACEHOLDER = (
    "Open a table and tag its quasi-identifiers (nominal or ordinal ones are the keys) to see "
    "its disclosure risk before any run."
)
#: What the view shows: the loaded table, or the run shown (its report's before and after).
SOURCES = ("table", "run")
#: The roles settle this long before the table's risk is computed again.
_SETTLE_MS = 300
_BEFORE = "#7f7f7f"
_AFTER = "#4a7fb5"
#: The view lays its tables and plots out in two columns from this width (pixels) on.
_TWO_COLUMNS = 1000
#: Column names on bar labels are cut to this many characters.
_LABEL = 28


def assess_job(frame: Any, roles: Any, k: int, progress: ProgressFn) -> dict[str, Any]:
    """The worker's job: :func:`assess_risk` of the loaded table (run in the analysis pool)."""
    progress(0.0, "assessing the table's risk")
    return assess_risk(frame, roles, k=k)


def _short(name: object) -> str:
    text = str(name)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= _LABEL else text[: _LABEL - 1] + "…"


def _table(headers: list[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    t.setWordWrap(False)
    # compact rows: the view must fit a 1366 x 768 screen beside the docks
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    header = t.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for c in range(1, len(headers)):
        header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
    return t


def _fill(table: QTableWidget, rows: list[list[str]], tips: list[str] | None = None) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            if c > 0:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if tips is not None and c == 0:
                item.setToolTip(tips[r])
            table.setItem(r, c, item)
    # show every row without an inner scroll bar (the view scrolls as a whole)
    height = table.horizontalHeader().height() + 4
    height += sum(table.rowHeight(r) for r in range(table.rowCount()))
    table.setFixedHeight(max(height, 40))


def _plot(title: str) -> pg.PlotWidget:
    w = pg.PlotWidget(background="w", axisItems=fitted_axes())
    w.setTitle(title, color="#222222", size="10pt")
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setMinimumHeight(220)
    return w


class RiskPanel(QWidget):
    """k-anonymity counts, worst key combinations, individual-risk histogram, SUDA2
    contributions and l-diversity of the loaded table or of the run shown."""

    #: the loaded table's risk arrived from the worker (the dict, or {"error": message})
    table_assessed = Signal(object)

    def __init__(
        self, controller: AppController | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        #: the table's risk (None: not computed), the run's before and after (None: no run)
        self.table_risk: dict[str, Any] | None = None
        self.run_before: dict[str, Any] | None = None
        self.run_verdict = ""
        self.run_after: dict[str, Any] | None = None
        self.run_label = ""
        self._dirty = True
        self._show_pending = False  # drawn when shown (see _show)
        #: the plots' turn: bumped whenever figures are shown, so a plot left for a later turn of
        #: the event loop draws only if nothing else was shown meanwhile
        self._plots_turn = 0
        #: True while a plot of the figures shown is left for a later turn (tests wait on it)
        self.plots_pending = False
        self.slot: TaskSlot | None = None
        if controller is not None:
            self.slot = TaskSlot(controller.analysis_pool, self)
            self.slot.finished.connect(self._on_assessed)
            self.slot.failed.connect(self._on_failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(_SETTLE_MS)
        self._timer.timeout.connect(self._refresh_if_dirty)

        self.source_combo = QComboBox()
        self.source_combo.addItem("Loaded table", SOURCES[0])
        self.source_combo.addItem("Run shown: before → after", SOURCES[1])
        self.source_combo.setToolTip(
            "The loaded table's risk with the current roles, or the run shown: its input "
            "(before) and its release (after), from the run report"
        )
        self.source_combo.currentIndexChanged.connect(lambda _i: self._show())
        self.k_spin = QSpinBox()
        self.k_spin.setRange(2, 1000)
        self.k_spin.setValue(5)
        self.k_spin.setToolTip("The k of the counts below k and of the worst combinations")
        self.k_spin.valueChanged.connect(lambda _v: self.invalidate())
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.message = QLabel(PLACEHOLDER)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #444444; padding: 12px;")

        self.k_table = _table(["records", "before"])
        self.worst_table = _table(["key variables", "cells < k", "records < k"])
        self.l_table = _table(["confidential", "distinct l", "one-value cells (records)"])
        self.risk_plot = _plot("Individual risk (records)")
        self.risk_plot.setLabel("bottom", "individual risk")
        self.suda_plot = _plot("SUDA2 contribution by variable (%)")
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("color: #444444;")

        k_box = self._box("k-anonymity on the key variables", self.k_table)
        worst_box = self._box("Smallest key combinations that break k", self.worst_table)
        l_box = self._box(
            "l-diversity of the confidential columns over the key cells", self.l_table
        )
        self.content = QWidget()
        self.grid = QGridLayout(self.content)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self._boxes = (k_box, worst_box, l_box)
        self._columns = 0
        self._arrange(1)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.content)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)

        top = QHBoxLayout()
        top.addWidget(QLabel("Show"))
        top.addWidget(self.source_combo)
        top.addSpacing(12)
        top.addWidget(QLabel("k"))
        top.addWidget(self.k_spin)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addWidget(self.scroll_area, 1)

        if controller is not None:
            controller.dataset_loaded.connect(lambda _d: self._on_table_changed(new_table=True))
            controller.roles_changed.connect(lambda _r: self._on_table_changed())
            controller.run_finished.connect(self._on_run_finished)
        self._show()

    def _arrange(self, columns: int) -> None:
        """One column (tables and plots in turn) in a narrow view, two (tables left, plots
        right) in a wide one."""
        if columns == self._columns:
            return
        self._columns = columns
        k_box, worst_box, l_box = self._boxes
        widgets = (k_box, self.suda_plot, worst_box, self.risk_plot, l_box, self.legend)
        for w in widgets:
            self.grid.removeWidget(w)
        for r in range(self.grid.rowCount()):
            self.grid.setRowStretch(r, 0)
        if columns == 1:
            for row, w in enumerate(widgets):
                self.grid.addWidget(w, row, 0)
            self.grid.setColumnStretch(1, 0)
            self.grid.setRowStretch(len(widgets), 1)
        else:
            self.grid.addWidget(k_box, 0, 0)
            self.grid.addWidget(worst_box, 1, 0)
            self.grid.addWidget(l_box, 2, 0)
            self.grid.addWidget(self.suda_plot, 0, 1)
            self.grid.addWidget(self.risk_plot, 1, 1, 2, 1)
            self.grid.addWidget(self.legend, 3, 0, 1, 2)
            self.grid.setColumnStretch(1, 1)
            self.grid.setRowStretch(4, 1)
        self.grid.setColumnStretch(0, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._arrange(2 if event.size().width() >= _TWO_COLUMNS else 1)

    @staticmethod
    def _box(title: str, widget: QWidget) -> QGroupBox:
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(widget)
        lay.addStretch(1)  # the table at the top when the row is taller (beside a plot)
        return box

    # state ----------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        return str(self.source_combo.currentData())

    def set_source(self, source: str) -> None:
        self.source_combo.setCurrentIndex(SOURCES.index(source))

    def invalidate(self) -> None:
        """The table or its roles changed: compute its risk again (when visible)."""
        self._dirty = True
        if self.isVisible():
            self._timer.start()

    def _on_table_changed(self, new_table: bool = False) -> None:
        self.table_risk = None
        if new_table:  # a run of another table is not shown beside this one
            self.run_before = self.run_after = None
        self.set_source("table")
        self.invalidate()
        self._show()

    def refresh(self) -> int | None:
        """Start the table's risk in the background; the task's id (None: nothing to do)."""
        ctl = self.controller
        if ctl is None or self.slot is None or ctl.dataset is None:
            return None
        dataset = ctl.dataset
        if not dataset.roles.quasi_identifiers:
            self.table_risk = None
            self._dirty = False
            self._show()
            return None
        self._dirty = False
        if self.source == "table":  # a run's before/after shown meanwhile keeps its summary
            self.summary.setText("Assessing the table's risk…")
        job = partial(assess_job, dataset.frame, dataset.roles, int(self.k_spin.value()))
        return self.slot.start(job)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._show_pending:
            self._show()
        if self._dirty:  # shown: at once (the roles settled while it was hidden)
            self._timer.stop()
            self.refresh()

    def _refresh_if_dirty(self) -> None:
        if self._dirty:
            self.refresh()

    def _on_assessed(self, _task_id: int, value: Any, _context: Any) -> None:
        self.table_risk = value
        if self.source == "table":
            self._show()
        self.table_assessed.emit(value)

    def _on_failed(self, _task_id: int, message: str, _details: str, _context: Any) -> None:
        self.table_risk = {"error": message}
        if self.source == "table":
            self._show()
        self.table_assessed.emit(self.table_risk)

    def _on_run_finished(self, run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        self.set_run(result, f"Run #{run_id}")

    def set_run(self, result: RunResult | None, label: str = "the run") -> None:
        """Show a run's ``risk_before`` / ``risk_after`` (from its report)."""
        report = result.report if result is not None else {}
        self.run_before = report.get("risk_before")
        self.run_after = report.get("risk_after")
        # the release's verdict counts its groups on EVERY quasi-identifier (continuous ones
        # too), this view's key cells only the categorical keys: both figures shown, each named
        self.run_verdict = str((report.get("verdict") or {}).get("text") or "")
        self.run_label = label
        if self.run_before is not None:
            self.set_source("run")
        self._show()

    def set_table_risk(self, risk: dict[str, Any] | None) -> None:
        """Show an :func:`assess_risk` result as the table's risk (tests, scripts)."""
        self.table_risk = risk
        self._dirty = False
        self._show(now=True)

    # drawing --------------------------------------------------------------------------------
    def shown(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(before, after) as shown: after is None for the table."""
        if self.source == "run":
            return self.run_before, self.run_after
        return self.table_risk, None

    def _message(self, text: str) -> None:
        self._plots_turn += 1  # plots still to draw belong to figures no longer shown
        self.plots_pending = False
        self.message.setText(text)
        self.message.setVisible(True)
        self.scroll_area.setVisible(False)
        self.legend.setVisible(False)
        self.summary.setVisible(False)

    def _show(self, now: bool = False) -> None:
        # hidden (another view in front): drawn when shown, unless ``now``. Drawing the tables and both plots
        # at each run's end held the GUI thread in the same turn as every other view (issue 30)
        if not now and not self.isVisible():
            self._show_pending = True
            return
        self._show_pending = False
        # a run's figures use the run's k; the spin box sets the loaded table's
        self.k_spin.setEnabled(self.source == "table")
        before, after = self.shown()
        if before is None:
            text = PLACEHOLDER
            if self.source == "run":
                text = "Run a method to see its input's risk against its release's."
            self._message(text)
            return
        if "error" in before:
            self._message(str(before["error"]))
            return
        if not before.get("keys"):
            self._message(str(before.get("keys_note", PLACEHOLDER)))
            return
        self.message.setVisible(False)
        self.scroll_area.setVisible(True)
        self.summary.setVisible(True)
        self.legend.setVisible(True)
        self._summary(before, after)
        self._k_table(before, after)
        self._worst(before, after)
        self._l_table(before, after)
        self._plots_turn += 1
        if now:
            self._risk_plot(before, after)
            self._suda_plot(before, after)
            return
        # each plot in a later turn of the event loop: the tables and both plots in one turn held
        # the GUI thread 110-150 ms on Adult (issue 29: no stall above 100 ms)
        turn = self._plots_turn
        self.plots_pending = True
        QTimer.singleShot(0, partial(self._draw_later, turn, self._risk_plot, False))
        QTimer.singleShot(0, partial(self._draw_later, turn, self._suda_plot, True))

    def _draw_later(self, turn: int, draw: Any, last: bool) -> None:
        """One plot of the figures shown in turn ``turn`` (none when another was shown since)."""
        if turn != self._plots_turn:
            return
        before, after = self.shown()
        if before is not None and before.get("keys") and "error" not in before:
            draw(before, after)
        if last:
            self.plots_pending = False

    def _summary(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        n = int(before["n_records"])
        ka = before["k_anonymity"]
        keys = ", ".join(html.escape(_short(c)) for c in before["keys"])
        what = "The loaded table" if after is None else f"{html.escape(self.run_label)}: its input"
        line = (
            f"{what}: <b>{ka['records_below_k']:,}</b> of {n:,} records "
            f"({100 * ka['records_below_k'] / n if n else 0:.1f} %) in key cells below "
            f"k = {before['k']}, <b>{ka['records_in_cells_of_size_1']:,}</b> sample uniques"
        )
        if after is not None:
            kb = after["k_anonymity"]
            line += (
                f"; its release: <b>{kb['records_below_k']:,}</b> below k, "
                f"<b>{kb['records_in_cells_of_size_1']:,}</b> unique"
            )
        self.summary.setText(f"{line}.<br>Key variables: {keys}")
        self.summary.setToolTip(str(before.get("keys_note", "")))
        self.legend.setText(
            "A missing key value matches any value (sdcMicro). "
            + ("Grey: before (the input), blue: after (the release). " if after is not None else "")
            + html.escape(str(before.get("keys_note", "")))
            + (
                "<br>The release's verdict counts its groups on every quasi-identifier, the "
                f"continuous ones too: <b>{html.escape(self.run_verdict)}</b>"
                if after is not None and self.run_verdict
                else ""
            )
        )

    def _k_table(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        k = before["k"]
        labels = [
            ("k-anonymity level (smallest key cell)", "level"),
            ("records in key cells of size 1", "records_in_cells_of_size_1"),
            ("records in key cells of size 2", "records_in_cells_of_size_2"),
            (f"records in key cells below k = {k}", "records_below_k"),
            (f"key cells below k = {k}", "cells_below_k"),
        ]
        sides = [before] if after is None else [before, after]
        self.k_table.setColumnCount(1 + len(sides))
        self.k_table.setHorizontalHeaderLabels(
            ["measure", "table"] if after is None else ["measure", "before", "after"]
        )
        rows = [[text, *(f"{s['k_anonymity'][key]:,}" for s in sides)] for text, key in labels]
        rows.append(
            ["individual risk: mean", *(f"{s['individual_risk']['mean']:.4g}" for s in sides)]
        )
        rows.append([
            "expected re-identifications",
            *(format_expected(s["individual_risk"]["expected_reidentifications"]) for s in sides),
        ])  # fmt: skip
        for t in ("0.1", "0.5"):
            rows.append([
                f"records with individual risk > {t}",
                *(f"{s['individual_risk']['records_above'][t]:,}" for s in sides),
            ])  # fmt: skip
        if all(s.get("household_risk") for s in sides):  # issue 31: beside the individual risk
            rows.append([
                "household risk: mean",
                *(f"{s['household_risk']['mean']:.4g}" for s in sides),
            ])  # fmt: skip
            rows.append([
                "expected re-identifications (households' risk)",
                *(format_expected(s["household_risk"]["expected_reidentifications"]) for s in sides),
            ])  # fmt: skip
        header = self.k_table.horizontalHeader()
        for c in range(1, self.k_table.columnCount()):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        _fill(self.k_table, rows)

    def _worst(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        """The input's smallest key combinations breaking k (the variables to recode first);
        with a run, the title says how many the release still has."""
        worst = before["k_anonymity"]["worst_combinations"]
        title = "Smallest key combinations that break k"
        if after is not None:
            left = len(after["k_anonymity"]["worst_combinations"])
            title += f" (input; in the release: {left if left else 'none'})"
        if not worst:
            title += ": none"
        box = self.worst_table.parentWidget()
        if isinstance(box, QGroupBox):
            box.setTitle(title)
        rows = [
            [" × ".join(_short(c) for c in w["columns"]), f"{w['cells_below_k']:,}",
             f"{w['records_below_k']:,}"]
            for w in worst
        ]  # fmt: skip
        tips = [" × ".join(str(c) for c in w["columns"]) for w in worst]
        _fill(self.worst_table, rows, tips)
        self.worst_table.setVisible(bool(worst))

    def _l_table(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        ld_b = before.get("l_diversity") or {}
        ld_a = (after or {}).get("l_diversity") or {}
        box = self.l_table.parentWidget()
        if isinstance(box, QGroupBox):
            box.setTitle(
                "l-diversity of the confidential columns over the key cells"
                + ("" if ld_b else ": no confidential column tagged")
            )
        heads = ["confidential", "distinct l", "records in one-value cells"]
        if after is not None:
            heads = [
                "confidential",
                "distinct l before → after",
                "one-value records before → after",
            ]
        self.l_table.setHorizontalHeaderLabels(heads)
        rows = []
        for col, v in ld_b.items():
            one = f"{v['homogeneous_records']:,} ({v['homogeneous_percent']:.1f} %)"
            if after is not None and col in ld_a:
                a = ld_a[col]
                rows.append([
                    _short(col), f"{v['distinct_l_diversity']} → {a['distinct_l_diversity']}",
                    f"{one} → {a['homogeneous_records']:,} ({a['homogeneous_percent']:.1f} %)",
                ])  # fmt: skip
            else:
                rows.append([_short(col), str(v["distinct_l_diversity"]), one])
        _fill(self.l_table, rows, [str(c) for c in ld_b])

    def _risk_plot(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        plot = self.risk_plot.getPlotItem()
        plot.clear()
        sides = [(before, _BEFORE)] if after is None else [(before, _BEFORE), (after, _AFTER)]
        width = 1.0 / len(sides)
        top = 1.0
        for i, (risk, colour) in enumerate(sides):
            hist = risk["individual_risk"]["histogram"]
            edges = np.asarray(hist["edges"], dtype=float)
            counts = np.asarray(hist["counts"], dtype=float)
            step = float(edges[1] - edges[0]) if len(edges) > 1 else 1.0
            x = edges[:-1] + step * width * (i + 0.5)
            plot.addItem(
                pg.BarGraphItem(
                    x=x, height=counts, width=step * width * 0.9, brush=colour, pen=None
                )
            )
            top = max(top, float(counts.max()) if len(counts) else 1.0)
        plot.setXRange(0.0, 1.0, padding=0.02)
        plot.setYRange(0.0, top * 1.05, padding=0)
        plot.setLabel("left", "records")
        self.risk_plot.setFixedHeight(240)

    def _suda_plot(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        plot = self.suda_plot.getPlotItem()
        plot.clear()
        s_b = before.get("suda2")
        if not s_b:
            self.suda_plot.setTitle(
                "SUDA2: " + str(before.get("suda2_note", "not computed")), color="#222222",
                size="10pt",
            )  # fmt: skip
            plot.getAxis("left").setTicks([[]])
            return
        contrib = s_b["contributions"]
        names = list(contrib)  # sorted largest first
        s_a = (after or {}).get("suda2") or None
        n = len(names)
        # largest at the top: row n-1-i for the i-th variable
        ys = np.arange(n, dtype=float)[::-1]
        height = 0.8 if s_a is None else 0.4
        plot.addItem(
            pg.BarGraphItem(
                x0=np.zeros(n), y=ys + (height / 2 if s_a is not None else 0.0),
                width=np.asarray([contrib[c] for c in names]), height=height,
                brush=_BEFORE if s_a is not None else _AFTER, pen=None,
            )
        )  # fmt: skip
        if s_a is not None:
            values = np.asarray([s_a["contributions"].get(c, 0.0) for c in names])
            plot.addItem(
                pg.BarGraphItem(
                    x0=np.zeros(n), y=ys - height / 2, width=values, height=height,
                    brush=_AFTER, pen=None,
                )
            )  # fmt: skip
        self.suda_plot.setFixedHeight(max(180, 26 * n + 110))
        plot.getAxis("left").setTicks(
            [[(float(y), _short(c)) for y, c in zip(ys, names, strict=True)]]
        )
        plot.getAxis("left").setStyle(tickTextWidth=140, autoExpandTextSpace=True)
        plot.setYRange(-0.6, n - 0.4, padding=0)
        top = max([*contrib.values(), *((s_a or {}).get("contributions") or {}).values(), 1.0])
        plot.setXRange(0.0, float(top) * 1.05, padding=0)
        plot.setLabel("bottom", "contribution to the SUDA score (%)")
        msu = f"records with a minimal sample unique: {s_b['records_with_msu']:,}"
        if s_a is not None:
            msu += f" → {s_a['records_with_msu']:,}"
        self.suda_plot.setTitle(
            f"SUDA2 contribution by variable (%)<br><span style='font-size: 9pt'>{msu}</span>",
            color="#222222", size="10pt",
        )  # fmt: skip
