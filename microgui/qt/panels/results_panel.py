"""The results panel: information loss and disclosure-risk figures of the last run.

Every figure is read from the run's report (computed in core); this panel only formats them.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFormLayout, QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from microgui.core.methods.refine import refinement_losses
from microgui.core.metrics.disclosure import Verdict, percent_text, release_verdict
from microgui.core.metrics.measure_text import format_measure, format_percent
from microgui.core.runs import RunResult
from microgui.qt.controller import AppController
from microgui.qt.elided_label import ElidedLabel
from microgui.qt.plots.titles import fitted_axes

__all__ = [
    "ResultsPanel",
    "RESULT_FIELDS",
    "by_attribute_variants",
    "seed_text",
    "verdict_colour",
    "verdict_html",
]

#: A seed longer than this many digits is shown cut (a plan's or a sweep's drawn 64-bit seed
#: has 20 digits: one unbreakable word that widened the Results panel past its dock, so the
#: verdict's first line sat behind a horizontal scroll bar at 1366 × 768 and 1920 × 1080). The
#: whole seed is in the row's tooltip, the report and *Copy as command*.
SEED_DIGITS = 8

#: The colours of a verdict: a release that may carry a ✓, one with attribute disclosure (a
#: warning: the method did not promise otherwise), one below k.
SAFE_COLOUR, WARNING_COLOUR, BAD_COLOUR = "#1a7f37", "#b35c00", "#b00020"


def verdict_colour(verdict: Verdict) -> str:
    """The colour the app shows ``verdict`` in."""
    if verdict.ok:
        return SAFE_COLOUR
    return BAD_COLOUR if verdict.level == "not_k_anonymous" else WARNING_COLOUR


def verdict_html(verdict: Verdict) -> str:
    """The verdict's line as rich text: its colour, the ✓ only when nothing is disclosed."""
    mark = " ✓" if verdict.ok else ""
    return (
        f"<span style='color:{verdict_colour(verdict)}; font-weight:bold'>"
        f"{escape(verdict.text)}{mark}</span>"
    )


#: The widest a figure's name is, in average characters: longer names wrap (at 1366 × 768 the
#: names' column, as wide as "Invented combinations", left the values ~100 pixels, and
#: "488 (of 3,016 records)" read over three lines).
NAME_CHARS = 14
#: The figures that are a number and its unit: never broken across lines (one that does not
#: fit beside its name goes under it, whole).
WHOLE_VALUES = ("n_groups", "group_sizes", "sse", "sst", "invented_combinations", "seconds")


class _NameLabel(QLabel):
    """A figure's name: at most :data:`NAME_CHARS` wide, wrapped at its spaces beyond that, so
    that the values beside it have the dock's width (nothing is cut: it wraps)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        metrics = self.fontMetrics()
        width = min(metrics.horizontalAdvance(self.text()), metrics.averageCharWidth() * NAME_CHARS)
        widest_word = max((metrics.horizontalAdvance(w) for w in self.text().split()), default=0)
        width = max(width, widest_word) + 2 * self.margin() + 1
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.sizeHint()


#: (key, label, tooltip) of the figures shown, in order.
RESULT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("run", "Run", "Number (as in the run history), method, k and seed of the run shown"),
    (
        "information_loss_all_qi",
        "Information loss, all QIs (IL)",
        "IL = 100·SSE/SST over every quasi-identifier, in the distance MDAV-generic groups by "
        "(Domingo-Ferrer & Torra 2005, §5.2-5.4): squared z-score differences (continuous), squared rank difference over "
        "the number of categories (ordinal), 0/1 (nominal); SST around the overall mean, median "
        "and mode. A generalized value ([20-30], *) counts by the distance of each original "
        "value to the average of the records released with it. Equals SSE/SST when every "
        "quasi-identifier is continuous. [information_loss_all_qi]",
    ),
    (
        "information_loss",
        "SSE/SST, continuous QIs",
        "100·SSE/SST on the z-scored continuous quasi-identifiers only (categorical ones left "
        "out), the figure published for the continuous benchmark sets. [information_loss]",
    ),
    (
        "il_lower_bound_best",
        "Lower bound, SSE/SST",
        "Proven lower bound on SSE/SST: no release that groups these records by k can lose "
        "less (the optimal univariate k-partition of each attribute, tightened by a "
        "nearest-neighbour bound on the principal axes; microgui.core.methods.bound). "
        "[il_lower_bound_best; per attribute alone: il_lower_bound]",
    ),
    (
        "refinement",
        "Refinement",
        "What the refinement after the method did (parameter refine): the loss of the "
        "method's own groups and of the refined ones, in the refinement's distance (SSE/SST "
        "of the z-scores when every QI is continuous). Group sizes stay within k..2k-1. "
        "[refinement]",
    ),
    ("sse", "SSE", "Within-group sum of squares of the continuous QIs (z-scores)"),
    ("sst", "SST", "Total sum of squares of the continuous QIs (z-scores)"),
    (
        "information_loss_by_attribute",
        "IL by attribute",
        "Each quasi-identifier's own SSE/SST (%) in the distance of IL, all QIs; for a "
        "categorical one also the share of records whose released value differs from the "
        "original. Dist, CTBIL' and EBIL per attribute are in the report "
        "[information_loss_by_attribute]",
    ),
    ("n_groups", "Groups", "Number of groups formed"),
    ("group_sizes", "Group size (min–max)", "Smallest and largest group"),
    (
        "k_anonymity",
        "k-anonymity level",
        "Fewest records sharing one combination of protected quasi-identifier values",
    ),
    (
        "attribute_disclosure",
        "Attribute disclosure",
        "Per confidential attribute, over the groups of identical released quasi-identifiers: "
        "the records in groups where the attribute takes one value (belonging to such a group "
        "discloses the value; Machanavajjhala et al. 2007), distinct l-diversity l (fewest "
        "values in a group) and t-closeness t (largest EMD to the whole table). Entropy "
        "l-diversity is in the report. Missing values are ignored. [attribute_disclosure]",
    ),
    (
        "invented_combinations",
        "Invented combinations",
        "Groups whose released combination of categorical quasi-identifiers none of their "
        "records has (parameter categorical_aggregate: joint never invents one)",
    ),
    ("seconds", "Time", "Wall-clock time of the run"),
)


class ResultsPanel(QWidget):
    """Figures of the current result and a histogram of its group sizes."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.value_labels: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        # a value that does not fit beside its name goes under it (a narrow dock at 1366 × 768):
        # the names' column alone then sets the panel's minimum width, nothing scrolls across
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        for key, label, tip in RESULT_FIELDS:
            if key == "run":
                # one line the panel's full width, cut with "…" (whole in its tooltip): beside
                # its name it wrapped to 3-4 lines at 1366 × 768 (issue 30)
                run_line = ElidedLabel("Run: —", max_lines=1, tip=tip)
                run_line.setObjectName("result_run")
                run_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                form.addRow(run_line)
                self.value_labels[key] = run_line
                continue
            value = QLabel("—")
            # long values (a generalized run's loss, a long method name) wrap instead of
            # widening the window past a laptop screen (issue 15); a number and its unit never
            value.setWordWrap(key not in WHOLE_VALUES)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setToolTip(tip)
            value.setObjectName(f"result_{key}")
            name = _NameLabel(label)
            name.setToolTip(tip)
            if key == "attribute_disclosure":
                pass  # under the verdict, first (below): no row of its own to fit 1366 × 768
            elif key == "information_loss_by_attribute":
                # a table under its title, the panel's full width: it fits that width (long
                # names cut, the whole table in its tooltip) and never scrolls across (a
                # generalized run's table sat behind a scroll bar even at 1920 × 1080, issue 30)
                value.setWordWrap(False)
                self.by_attribute_area = _FitsAcross(value, tip)
                form.addRow(name)
                form.addRow(self.by_attribute_area)
            else:
                form.addRow(name, value)
            self.value_labels[key] = value
        # the release's one verdict (issue 29), first: the words of the report and the CLI
        self.verdict = QLabel("")
        self.verdict.setObjectName("result_verdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict.setToolTip(
            "The release's verdict: k-anonymity, and whether a group of identical released "
            "quasi-identifiers shares one value of a confidential attribute (attribute "
            "disclosure). ✓ only when neither. [verdict]"
        )
        self.verdict.setVisible(False)
        # first rows of the form: the verdict, then its line per confidential attribute
        form.insertRow(0, self.verdict)
        form.insertRow(1, self.value_labels["attribute_disclosure"])
        self.value_labels["attribute_disclosure"].setVisible(False)
        self.note = QLabel("Run a method to see its information loss and group sizes.")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #666;")

        self.histogram = pg.PlotWidget(axisItems=fitted_axes())
        self.histogram.setBackground("w")
        self.histogram.setMinimumHeight(150)
        self.histogram.setMenuEnabled(False)
        self.histogram.setMouseEnabled(x=False, y=False)
        self.histogram.hideButtons()
        plot = self.histogram.getPlotItem()
        plot.setTitle("Group sizes", size="9pt")
        plot.setLabel("bottom", "records per group")
        plot.setLabel("left", "groups")
        plot.showGrid(x=False, y=True, alpha=0.25)
        self._bars: pg.BarGraphItem | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.histogram, 1)
        self.histogram.setVisible(False)
        layout.addStretch(0)

        controller.dataset_loaded.connect(lambda _d: self.clear())
        controller.run_finished.connect(self._on_run_finished)
        controller.roles_changed.connect(lambda _r: self._update_note())

    def clear(self) -> None:
        for key, label in self.value_labels.items():
            label.setText("Run: —" if key == "run" else "—")
        self.verdict.clear()
        self.verdict.setVisible(False)
        self.by_attribute_area.set_variants([])
        self.value_labels["attribute_disclosure"].setVisible(False)
        if self._bars is not None:
            self.histogram.removeItem(self._bars)
            self._bars = None
        self.histogram.setVisible(False)
        self.note.setText("Run a method to see its information loss and group sizes.")

    def _on_run_finished(self, run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        self.show_result(result, run_id)

    def show_result(self, result: RunResult, run_id: int | None = None) -> None:
        """Fill in the figures of ``result`` (run ``#run_id`` of the history, when given)."""
        report = result.report
        seed = report.get("seed")
        verdict = release_verdict(report)
        self.verdict.setText(verdict_html(verdict))
        self.verdict.setVisible(True)
        # the per-attribute line only when there is an attribute to speak of
        disclosure = report.get("attribute_disclosure")
        self.value_labels["attribute_disclosure"].setVisible(disclosure != {})
        seed_shown, seed_full = seed_text(seed)
        run_line = self.value_labels["run"]
        assert isinstance(run_line, ElidedLabel)
        run_line.tip = RESULT_FIELDS[0][2] + (
            f". Seed {seed_full}" if seed_shown != seed_full else ""
        )
        texts = {
            "run": ("Run" if run_id is None else f"Run #{run_id}")
            + f": {report['method']}, k = {report['k']}"
            + (f", seed {seed_shown}" if seed is not None else ""),
            "information_loss_all_qi": _all_qi_text(report),
            "information_loss": _il_text(report),
            "il_lower_bound_best": _bound_text(report),
            "refinement": refinement_text(report),
            "sse": _number(report.get("sse"), "{:,.2f}"),
            "sst": _number(report.get("sst"), "{:,.2f}"),
            "n_groups": f"{int(report['n_groups']):,} (of {int(report['n_records']):,} records)",
            "group_sizes": f"{report['min_group_size']} – {report['max_group_size']}",
            "k_anonymity": self._k_text(int(report["k_anonymity"]), int(report["k"]), verdict),
            "attribute_disclosure": disclosure_text(report),
            "invented_combinations": _invented_text(report),
            "seconds": f"{float(report['seconds']):.2f} s",
        }
        for key, text in texts.items():
            self.value_labels[key].setText(text)
        self.by_attribute_area.set_variants(by_attribute_variants(report))
        self._update_note()
        self._plot_sizes(report.get("group_size_counts", {}))

    @staticmethod
    def _k_text(level: int, k: int, verdict: Verdict) -> str:
        if level < k:
            return f"<span style='color:{BAD_COLOUR}'>{level} ✗ (below k\u00a0=\u00a0{k})</span>"
        if verdict.ok:
            return f"<span style='color:{SAFE_COLOUR}'>{level} ✓ (≥\u00a0k\u00a0=\u00a0{k})</span>"
        # k-anonymous, but not a release to tick: the verdict above says why
        # "k = 5" never broken across lines (it read "(≥ k =" over "5; see the" at 1366 px)
        return (
            f"<span style='color:{WARNING_COLOUR}'>{level} (≥\u00a0k\u00a0=\u00a0{k}; "
            "see the verdict)</span>"
        )

    def _update_note(self) -> None:
        result = self._controller.result
        if result is None:
            return
        report = result.report
        basis = str(report.get("information_loss_basis", ""))
        text = f"SSE/SST basis: {basis}."
        if report.get("information_loss_all_qi_basis"):
            text = f"IL basis: {report['information_loss_all_qi_basis']}. " + text
        if self._controller.result_is_stale:
            text += " <b>Roles changed since this run: run again before exporting.</b>"
        self.note.setText(text)

    def _plot_sizes(self, counts: Any) -> None:
        if self._bars is not None:
            self.histogram.removeItem(self._bars)
            self._bars = None
        if not counts:
            return
        sizes = np.array([int(s) for s in counts], dtype=np.float64)
        heights = np.array([int(c) for c in counts.values()], dtype=np.float64)
        self.histogram.setVisible(True)
        self._bars = pg.BarGraphItem(x=sizes, height=heights, width=0.8, brush="#4a7fb5", pen=None)
        self.histogram.addItem(self._bars)
        self.histogram.getPlotItem().getAxis("bottom").setTicks([size_ticks(sizes)])
        self.histogram.setXRange(sizes.min() - 0.8, sizes.max() + 0.8, padding=0)
        self.histogram.setYRange(0, heights.max() * 1.1, padding=0)
        # The view's transform now, not while preparing the first paint (which would ask for a
        # second paint in the same turn of the event loop; issue 6).
        self.histogram.getPlotItem().getViewBox().prepareForPaint()


#: The most group sizes labelled under the histogram (a narrow panel; sizes 5-150 overprinted).
MAX_SIZE_TICKS = 8


def size_ticks(sizes: np.ndarray) -> list[tuple[float, str]]:
    """Tick labels for the group sizes: every size when there are few, else evenly spaced
    sizes (1, 2 or 5 × a power of ten apart), so that the labels never overprint."""
    low, high = int(sizes.min()), int(sizes.max())
    if len(sizes) <= MAX_SIZE_TICKS:
        return [(float(s), str(int(s))) for s in sizes]
    span = max(high - low, 1)
    step = 1
    for base in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000):
        step = base
        if span // base + 1 <= MAX_SIZE_TICKS:
            break
    first = -(-low // step) * step
    return [(float(v), str(v)) for v in range(first, high + 1, step)]


def seed_text(seed: object) -> tuple[str, str]:
    """The seed as shown (at most :data:`SEED_DIGITS` digits, then "…") and in full."""
    full = "" if seed is None else str(seed)
    return (full if len(full) <= SEED_DIGITS else full[:SEED_DIGITS] + "…"), full


class _FitsAcross(QScrollArea):
    """A label that shows the first of its texts (most to least complete) that fits the
    width it has, the first one whole in its tooltip: it never scrolls, nor is cut, across;
    as tall as the label."""

    def __init__(self, label: QLabel, tip: str) -> None:
        super().__init__()
        self.label = label
        self.tip = tip
        self.variants: list[str] = []
        self.setWidget(label)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.set_variants([])

    def set_variants(self, texts: list[str]) -> None:
        """Show the first of ``texts`` that fits (the last one if none does; "—" if none)."""
        self.variants = list(texts) or ["—"]
        whole = self.variants[0]
        self.label.setToolTip(self.tip if whole == "—" else f"{whole}<br>{escape(self.tip)}")
        self.fit()

    def fit(self) -> None:
        """The first text that fits the viewport's width; height to the label's."""
        room = self.viewport().width()
        for text in self.variants:
            self.label.setText(text)
            if self.label.sizeHint().width() <= room:
                break
        self.label.adjustSize()
        self.setFixedHeight(self.label.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit()


def _number(value: object, fmt: str) -> str:
    return "—" if value is None else fmt.format(float(value))  # type: ignore[arg-type]


def _invented_text(report: Mapping[str, Any]) -> str:
    count = report.get("invented_combinations")
    kinds = set((report.get("quasi_identifiers") or {}).values())
    if count is None or not kinds & {"ordinal", "nominal"}:
        return "—"
    how = (report.get("parameters") or {}).get("categorical_aggregate")
    text = f"{int(count):,} of {int(report['n_groups']):,} groups" + (f" ({how})" if how else "")
    return f"<span style='color:#b00020'>{text}</span>" if int(count) else text


def disclosure_text(report: Mapping[str, Any]) -> str:
    """One line per confidential attribute: its l-diversity, t-closeness and the share of
    records in groups with one value of it (in the warning colour when any)."""
    disclosure = report.get("attribute_disclosure")
    if not isinstance(disclosure, Mapping):
        return "not measured"
    if not disclosure:
        return "no confidential attribute tagged"
    lines = []
    for col, m in disclosure.items():
        if not isinstance(m, Mapping):
            continue
        t = m.get("t_closeness")
        groups = int(m.get("homogeneous_groups") or 0)
        # the share first: the panel is narrow at 1366 × 768 and a long line is cut
        share = (
            f"{percent_text(float(m.get('homogeneous_percent') or 0.0))} of records in "
            f"{groups:,} group{'s' if groups != 1 else ''} of one value"
            if groups
            else "no group with one value"
        )
        line = (
            f"<b>{escape(str(col))}</b>: {share} · l = {int(m.get('distinct_l_diversity') or 0)}"
            f" · t = {'—' if t is None else f'{float(t):.2f}'}"
        )
        if groups:
            line = f"<span style='color:{WARNING_COLOUR}'>{line}</span>"
        lines.append(line)
    return "<br>".join(lines)


def _all_qi_text(report: Mapping[str, Any]) -> str:
    value = report.get("information_loss_all_qi")
    return "—" if value is None else f"<b>{_percent(value)}</b>"


#: The fewest characters of a column's name the IL-by-attribute table cuts it to.
MIN_NAME_CHARS = 4


def by_attribute_variants(report: Mapping[str, Any]) -> list[str]:
    """The IL-by-attribute table as rich text, most to least complete: kinds spelt ("n, gen."),
    then marked ("n*", a footnote says what * means), then names cut to fewer and fewer
    characters ("native-c…"). The panel shows the first that fits its width."""
    rows = report.get("information_loss_by_attribute") or {}
    if not rows:
        return []
    longest = max(len(str(col)) for col in rows)
    variants = [_by_attribute_text(rows, long_kinds=True)]
    variants.append(_by_attribute_text(rows, long_kinds=False))
    for chars in range(longest - 1, MIN_NAME_CHARS - 1, -1):
        variants.append(_by_attribute_text(rows, long_kinds=False, name_chars=chars))
    return variants


def _by_attribute_text(
    rows: Mapping[str, Any], *, long_kinds: bool, name_chars: int | None = None
) -> str:
    """A small table: column (its kind in a grey letter), SSE/SST %, changed %."""
    grey = "style='color:#666'"
    cells = [
        f"<tr><td {grey}>column · kind</td><td align='right' {grey}>SSE/SST</td>"
        f"<td align='right' {grey}>changed</td></tr>"
    ]
    generalized = False
    for col, m in rows.items():
        changed = m.get("changed_percent")
        il = m.get("information_loss")
        generalized = generalized or bool(m.get("generalized"))
        mark = (", gen." if long_kinds else "*") if m.get("generalized") else ""
        kind = str(m.get("kind", ""))[:1] + mark
        name = str(col)
        if name_chars is not None and len(name) > name_chars:
            name = name[: name_chars - 1] + "…"
        cells.append(
            f"<tr><td>{escape(name)} <span {grey}>{escape(kind)}</span></td>"
            f"<td align='right'>{'—' if il is None else f'{float(il):.2f} %'}</td>"
            f"<td align='right'>{'' if changed is None else f'{float(changed):.1f} %'}</td></tr>"
        )
    note = (
        f"<tr><td colspan='3' {grey}>* generalized</td></tr>"
        if generalized and not long_kinds
        else ""
    )
    return "<table cellspacing='0' cellpadding='2'>" + "".join(cells) + note + "</table>"


def refinement_text(report: Mapping[str, Any]) -> str:
    """'deep: 5.69 % → 4.79 % (1.2 s)', 'none', or why the method's own groups were kept."""
    entry = report.get("refinement")
    if not isinstance(entry, Mapping):
        refine = (report.get("parameters") or {}).get("refine")
        return "none" if refine in (None, "none") else str(refine)
    losses = refinement_losses(entry)
    before, after = (
        losses[:2]
        if losses is not None
        else (float(entry["information_loss_before"]), float(entry["information_loss_after"]))
    )
    text = (
        f"{entry.get('mode')}: IL {_percent(before)} → {_percent(after)} "
        f"({float(entry['seconds']):.1f} s)"
    )
    if str(entry.get("kept", "refined")) != "refined":
        text += " - kept the method's groups (the refined ones lost more in the release)"
    return text


def _percent(value: object) -> str:
    """:func:`format_percent`, the unit kept on the number's line (a narrow value column
    wrapped "0.0001307 %" before its "%")."""
    return format_percent(value).replace(" %", "\u00a0%")


def _bound_text(report: Mapping[str, Any]) -> str:
    """The proven lower bound, or why there is none (issue 16)."""
    best = report.get("il_lower_bound_best")
    if best is not None:
        return _percent(best)  # as the history, the reports and the CLI (issue 30)
    basis = str(report.get("il_lower_bound_basis") or "")
    return f"— {basis.removeprefix('none ')}" if basis.startswith("none (") else "—"


def _il_text(report: Mapping[str, Any]) -> str:
    kinds = report.get("quasi_identifiers") or {}
    if kinds and "continuous" not in kinds.values():
        return "— (no continuous quasi-identifier)"
    if report.get("information_loss") is not None:
        return _percent(report["information_loss"])
    if report.get("generalization_il") is not None:
        gen = float(report["generalization_il"])
        return f"— (generalized; generalization IL {format_measure(gen)}, Ramana & Valli Kumari 2013, eqs. 6–9)"
    return "—"
