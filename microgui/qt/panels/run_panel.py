"""The run panel: method, k, the method's parameters, seed, strata; Run, Cancel, progress bar.

Strata (``RunSpec.strata``, ``001`` §III, sdcMicro's ``strata_variables``): the records of each
combination of the chosen columns are microaggregated on their own, so k-anonymity holds within
each stratum and so across them. The chooser lists the table's columns except identifiers.

Widgets for the parameters are made from the method's :class:`ParamSpec` list (bool → check box,
choices → combo box, int/float → spin box, text → line edit), so a new method needs no Qt code.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.methods.base import Method, ParamSpec, resolve_params
from microgui.core.references import readable
from microgui.core.runs import RunResult, RunSpec, method_refusal
from microgui.core.table.roles import AttributeRole
from microgui.qt.compact import compact_combo
from microgui.qt.controller import AppController
from microgui.qt.elided_label import ElidedLabel, ElidedToolButton
from microgui.qt.wrapped_label import WrappedLabel

__all__ = [
    "RunPanel",
    "make_param_widget",
    "param_widget_value",
    "param_label",
    "sweep_done_text",
]


def sweep_done_text(points: list[Any], reason: bool = True) -> str:
    """What a finished sweep left: how many of its runs are in the history, and how many failed
    with (``reason``) the first one's reason (the Method panel said "Sweep done: 4 run(s)."
    when two of the four had failed and were in neither the history nor the map: issue 30)."""
    kept = sum(point.report is not None for point in points)
    text = f"Sweep done: {kept} of {len(points)} run(s) in the history and on the risk–utility map"
    failed = [point for point in points if point.report is None]
    if failed and not reason:
        text += f"; {len(failed)} failed"
    elif failed:
        first = failed[0]
        text += (
            f"; {len(failed)} failed ({first.spec.method} k={first.spec.k}: "
            f"{first.error or 'no result'})"
        )
    return text + "."


_INT_LIMIT = 2_147_483_647
#: Lines the Method dock keeps for the method's headline and its "more ▸" link (the longest
#: headline, t-closeness's, takes four at 1366 × 768).
HEADLINE_LINES = 4


class WholeLabel(WrappedLabel):
    """A word-wrapped label never laid out shorter than its text at its width (its minimum is
    its text's height): in the settings, which scroll, a label squeezed to one line hid the
    rest of the method's explanation (1366 × 768 review)."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        # once laid out, its text's height at its width (QLabel's own hint wraps at a width
        # of its choosing: 98 px for a headline 56 px tall in the dock)
        hint = super().sizeHint()
        return QSize(hint.width(), self._wanted) if self._wanted else hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        return QSize(hint.width(), max(hint.height(), self.sizeHint().height()))


#: The block sizes the method panel offers (text, RunSpec.block_size).
BLOCK_CHOICES: tuple[tuple[str, int | str | None], ...] = (
    ("none (exact on the whole table)", None),
    ("auto (exact up to 100,000 records)", "auto"),
    ("blocks of 50,000 (+0.9 % IL)", 50_000),
    ("blocks of 20,000 (+2.9 % IL)", 20_000),
    ("blocks of 10,000 (+4.7 % IL)", 10_000),
)


def param_label(name: str) -> str:
    """'rescale_variance' → 'Rescale variance'."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _short_screen() -> bool:
    """A screen too short to show the parameters unfolded beside the roles (768 px laptops)."""
    screen = QGuiApplication.primaryScreen()
    return screen is not None and screen.availableGeometry().height() < 900


def _on_change(widget: QWidget, slot: Any) -> None:
    """Call ``slot`` whenever a parameter widget's value changes."""
    if isinstance(widget, QCheckBox):
        widget.toggled.connect(lambda *_: slot())
    elif isinstance(widget, QComboBox):
        widget.currentIndexChanged.connect(lambda *_: slot())
    elif isinstance(widget, QSpinBox | QDoubleSpinBox):
        widget.valueChanged.connect(lambda *_: slot())
    elif isinstance(widget, QLineEdit):
        widget.textChanged.connect(lambda *_: slot())


def make_param_widget(spec: ParamSpec) -> QWidget:
    """The editor widget of one method parameter, set to its default."""
    widget: QWidget
    if spec.type is bool:
        box = QCheckBox(param_label(spec.name))
        box.setChecked(bool(spec.default))
        widget = box
    elif spec.choices is not None:
        combo = QComboBox()
        combo.addItems(list(spec.choices))
        combo.setCurrentText(str(spec.default))
        widget = combo
    elif spec.type is int:
        spin = QSpinBox()
        spin.setRange(
            int(spec.minimum) if spec.minimum is not None else -_INT_LIMIT,
            int(spec.maximum) if spec.maximum is not None else _INT_LIMIT,
        )
        spin.setValue(int(spec.default))
        widget = spin
    elif spec.type is float:
        dspin = QDoubleSpinBox()
        dspin.setDecimals(4)
        dspin.setRange(
            float(spec.minimum) if spec.minimum is not None else -1e12,
            float(spec.maximum) if spec.maximum is not None else 1e12,
        )
        dspin.setValue(float(spec.default))
        widget = dspin
    else:
        line = QLineEdit(str(spec.default if spec.default is not None else ""))
        widget = line
    widget.setToolTip(readable(spec.help))
    widget.setObjectName(f"param_{spec.name}")
    return widget


def param_widget_value(widget: QWidget) -> Any:
    """The value a parameter widget holds (in the parameter's type)."""
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, QSpinBox):
        return widget.value()
    if isinstance(widget, QDoubleSpinBox):
        return widget.value()
    if isinstance(widget, QLineEdit):
        return widget.text()
    raise TypeError(f"not a parameter widget: {widget!r}")


def set_param_widget_value(widget: QWidget, value: Any) -> None:
    """Show ``value`` (parsed, in the parameter's type) in a parameter widget."""
    if isinstance(widget, QCheckBox):
        if isinstance(value, str):  # never bool("false")
            value = value.strip().lower() in ("1", "true", "yes", "on")
        widget.setChecked(bool(value))
    elif isinstance(widget, QComboBox):
        widget.setCurrentText(str(value))
    elif isinstance(widget, QSpinBox):
        widget.setValue(int(value))
    elif isinstance(widget, QDoubleSpinBox):
        number = float(value)
        # as many decimals as the value has (1e-05 shown as 0.0000 would run as 0)
        written = f"{number:.10f}".rstrip("0").split(".")[1] if number % 1 else ""
        widget.setDecimals(max(widget.decimals(), min(10, len(written))))
        widget.setValue(number)
    elif isinstance(widget, QLineEdit):
        widget.setText(str(value))


class RunPanel(QWidget):
    """Choose and start a run; ``error_occurred`` reports a parameter the core refused;
    ``sweep_requested`` asks the window for the sweep dialog."""

    error_occurred = Signal(str)
    sweep_requested = Signal()
    #: The method's explanation was unfolded (True) or folded.
    about_toggled = Signal(bool)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._methods: dict[str, Method] = {}
        self.param_widgets: dict[str, QWidget] = {}

        self.method_combo = QComboBox()
        # long method titles must not widen the window past a laptop screen (issue 15)
        compact_combo(self.method_combo, 22)
        self.method_combo.currentIndexChanged.connect(self._on_method_changed)
        #: the method is the one proposed for the table, not chosen by the user or a run shown:
        #: it follows the roles (issue 15: a reopened project's roles came after the proposal)
        self._method_proposed = False
        self.method_combo.activated.connect(self._on_method_chosen)
        # The method's headline, always whole, its "more ▸" link unfolding the explanation
        # (what it does, the kinds of quasi-identifiers, the source) whole below it; folded on
        # a short screen. At 1366 × 768 both scrolled inside a box ~64 px tall, cut after three
        # lines (a review on Adult); the link ends the headline: no row of its own.
        self.headline = WholeLabel()
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.headline.setToolTip(
            "more ▸ / less ▴: show or fold what the method does, the quasi-identifiers it takes "
            "and its source"
        )
        self.headline.linkActivated.connect(lambda _link: self.show_about(not self.about_shown))
        #: Whether the method's explanation is unfolded under its headline.
        self.about_shown = not _short_screen()
        self._headline = ""
        self.summary = WholeLabel()
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # which hierarchy files attached in the roles panel a run of this method uses (issue 13)
        self.hierarchy_note = WholeLabel()
        self.hierarchy_note.setWordWrap(True)
        self.hierarchy_note.setTextFormat(Qt.TextFormat.RichText)
        self.hierarchy_note.setStyleSheet(
            "QLabel { background: #eef3fa; border: 1px solid #c5d5ea; padding: 3px; }"
        )
        self.k_spin = QSpinBox()
        self.k_spin.setRange(2, 2)
        self.k_spin.setToolTip(
            "Minimum number of records per group: every released record is shared by at least k records"
        )
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(-1, _INT_LIMIT)
        self.seed_spin.setSpecialValueText("random")
        self.seed_spin.setToolTip(
            "Seed of the run's random numbers (recorded in the report); 'random' draws one"
        )
        # the row's whole width, its text cut with "…" beside the menu arrow (which was drawn
        # over "none (whole table)"), the strata whole in its tooltip (issue 30)
        self.strata_button = ElidedToolButton(
            "Columns whose combinations split the records into strata, each microaggregated on "
            "its own (k-anonymity holds within every stratum); none: the whole table at once"
        )
        self.strata_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.strata_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.strata_button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Blocking (RunSpec.block_size, the command line's --block-size): large tables in
        # spatially coherent blocks, with the IL cost measured in microgui.core.runs.scale
        self.blocks_combo = QComboBox()
        for text, value in BLOCK_CHOICES:
            self.blocks_combo.addItem(text, value)
        compact_combo(self.blocks_combo, 16, 300)
        self.blocks_combo.setToolTip(
            "Split a large table into spatially coherent blocks and protect each on its own "
            "(command line --block-size). Much faster above 100,000 records; the cost in "
            "information loss, measured on 100,000 × 10 records with MDAV at k = 5: +0.9 % "
            "(relative) with blocks of 50,000, +2.9 % with 20,000, +4.7 % with 10,000. "
            "'auto' keeps the exact method up to 100,000 records."
        )
        self.strata_menu = QMenu(self.strata_button)
        self.strata_button.setMenu(self.strata_menu)
        self.strata: list[str] = []
        #: (the table's frame, its columns' counts of values) for the strata menu
        self._value_counts: tuple[Any, dict[str, int]] = (None, {})
        self._update_strata_text()
        # The parameters fold (issue 15: on a 768 px screen the roles table below kept only
        # ~4 rows): the header says which differ from their defaults, so nothing is hidden.
        self.params_box = QGroupBox()
        self.params_toggle = QToolButton()
        self.params_toggle.setText("Parameters")
        self.params_toggle.setCheckable(True)
        self.params_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.params_toggle.setAutoRaise(True)
        self.params_toggle.setToolTip("Show or fold the method's parameters")
        self.params_note = QLabel()
        self.params_note.setWordWrap(True)
        self.params_note.setStyleSheet("color: #555")
        self.params_body = QWidget()
        self.params_form = QFormLayout(self.params_body)
        self.params_form.setContentsMargins(0, 0, 0, 0)
        self.params_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.params_toggle)
        header.addWidget(self.params_note, 1)
        box_layout = QVBoxLayout(self.params_box)
        box_layout.setContentsMargins(6, 2, 6, 4)
        box_layout.addLayout(header)
        box_layout.addWidget(self.params_body)
        self.params_toggle.toggled.connect(self._show_params)
        self.params_toggle.setChecked(not _short_screen())
        self._show_params(self.params_toggle.isChecked())

        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Microaggregate the quasi-identifiers with these settings")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(controller.cancel_run)
        self.sweep_button = QPushButton("Sweep…")
        self.sweep_button.setToolTip(
            "Run a grid of methods × k × parameters and see every run on the risk–utility map"
        )
        self.sweep_button.clicked.connect(self.sweep_requested)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("%p %")
        # two lines at most, always (a third pushed the buttons; a cut one hid its end): a
        # longer status is cut with "…", whole in its tooltip (issue 30)
        self.status_label = ElidedLabel("Open a table to start.", max_lines=2)
        # Issue 30: showing a run never changes these settings (the next Run ran what the user
        # had not chosen); when the run shown was made otherwise, say so and offer its settings.
        # The note sits above k and seed, where the settings it speaks of are (below the status
        # line it was under the fold of a 768 px screen), in a tinted frame of its own.
        self.shown_note = QLabel()
        self.shown_note.setWordWrap(True)
        self.load_shown_button = QPushButton("Load its settings")
        self.load_shown_button.setToolTip(
            "Load this run's settings: set the method, k, parameters, seed, strata and blocks "
            "to those of the run shown (nothing else changes until you press Run)"
        )
        self.load_shown_button.clicked.connect(self.load_shown_settings)
        self.shown_box = QFrame()
        self.shown_box.setObjectName("shownBox")
        self.shown_box.setStyleSheet(
            "QFrame#shownBox { background: #fff6dc; border: 1px solid #d9b44a; border-radius: 3px; }"
        )
        shown_row = QHBoxLayout(self.shown_box)
        shown_row.setContentsMargins(6, 3, 3, 3)
        shown_row.addWidget(self.shown_note, 1)
        shown_row.addWidget(self.load_shown_button)
        self.shown_box.setVisible(False)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Method", self.method_combo)
        # the hierarchy note, the headline, then the explanation when unfolded: every label at
        # its text's whole height (WholeLabel); what does not fit the dock scrolls with the
        # settings, and the Method dock asks the window for the height (fit_method_dock)
        self.explained = QWidget()
        column = QVBoxLayout(self.explained)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.hierarchy_note)
        column.addWidget(self.headline)
        column.addWidget(self.summary)
        self.summary.setVisible(self.about_shown)
        # the dock's minimum keeps the longest headline's lines (the labels are laid out at
        # their width only later: the settings' first minimum gave the headline two)
        font = self.headline.font()
        font.setBold(True)
        self._headline_room = HEADLINE_LINES * QFontMetrics(font).lineSpacing()
        self.explained.setMinimumHeight(self._headline_room)
        form.addRow(self.explained)
        form.addRow(self.shown_box)
        form.addRow("k", self.k_spin)
        form.addRow("Seed", self.seed_spin)
        form.addRow("Strata", self.strata_button)
        form.addRow("Blocks", self.blocks_combo)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 1)
        buttons.addWidget(self.sweep_button)
        buttons.addWidget(self.cancel_button)
        # Issue 30 (review): the settings scroll in an area of their own above Run, Sweep,
        # Cancel, the progress bar and the status line, which stay in sight whatever is open
        # (with the parameters open at 1366 x 768 the whole panel scrolled and pushed Run and
        # Sweep below the dock).
        self.settings = QWidget()
        settings_layout = QVBoxLayout(self.settings)
        settings_layout.setContentsMargins(0, 0, 0, 0)
        settings_layout.addLayout(form)
        settings_layout.addWidget(self.params_box)
        settings_layout.addStretch(1)
        self.settings_area = QScrollArea()
        self.settings_area.setWidget(self.settings)
        self.settings_area.setWidgetResizable(True)
        self.settings_area.setFrameShape(QFrame.Shape.NoFrame)
        self.settings_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.settings_area, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status_label)

        self._load_methods()
        if controller.dataset is None:
            # before any table: the run the app proposes for one (issue 30: the panel showed
            # the first method of the list, ama, and k = 2, which no table would be given)
            proposal = controller.default_spec()
            self.k_spin.setRange(2, max(2, proposal.k))  # a table's size sets it when loaded
            self.set_spec(proposal)
            self._method_proposed = True
        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.roles_changed.connect(lambda _roles: self._fill_strata_menu())
        controller.roles_changed.connect(self._follow_roles)
        controller.roles_changed.connect(lambda _roles: self._grey_refused_methods())
        controller.roles_changed.connect(lambda _roles: self._update_hierarchy_note())
        controller.hierarchies.changed.connect(self._update_hierarchy_note)
        controller.run_started.connect(self._on_run_started)
        # the panel says when the run the views show was made with other settings (issue 15),
        # and never takes them by itself (issue 30)
        controller.run_shown.connect(self._on_run_shown)
        self.k_spin.valueChanged.connect(lambda *_: self._update_shown_note())
        self.seed_spin.valueChanged.connect(lambda *_: self._update_shown_note())
        self.blocks_combo.currentIndexChanged.connect(lambda *_: self._update_shown_note())
        controller.run_progress.connect(self._on_run_progress)
        controller.run_finished.connect(self._on_run_finished)
        controller.run_failed.connect(self._on_run_failed)
        controller.run_cancelled.connect(self._on_run_cancelled)
        controller.busy_changed.connect(self._update_buttons)
        controller.sweep_started.connect(self._on_sweep_started)
        controller.sweep_progress.connect(self._on_run_progress)
        controller.sweep_finished.connect(
            lambda _i, points: self._sweep_ended(sweep_done_text(points))
        )
        controller.sweep_cancelled.connect(
            lambda _i, points: self._sweep_ended(
                f"Sweep cancelled; {len(points)} finished run(s) kept in the history."
            )
        )
        controller.sweep_failed.connect(lambda _i, m, _d: self._sweep_ended(f"Sweep failed: {m}"))
        self._update_buttons()

    # methods and parameters ---------------------------------------------------------------
    def _load_methods(self) -> None:
        self.method_combo.blockSignals(True)
        self.method_combo.clear()
        for method in self._controller.methods():
            self._methods[method.name] = method
            self.method_combo.addItem(f"{method.name} — {method.title}", method.name)
            self.method_combo.setItemData(
                self.method_combo.count() - 1, method.headline, Qt.ItemDataRole.ToolTipRole
            )
        self.method_combo.blockSignals(False)
        self._grey_refused_methods()
        self._on_method_changed()

    def method_refusals(self) -> dict[str, str]:
        """Why each method cannot run on the current roles (methods that can are left out)."""
        roles = self._controller.roles
        if roles is None:
            return {}
        return {n: why for n, m in self._methods.items() if (why := method_refusal(m, roles))}

    def _grey_refused_methods(self) -> None:
        """Issue 30: methods that cannot run on the current roles are in the list, greyed, with
        the reason as their tooltip (they failed only after Run). The method chosen stays chosen
        (the user may be about to change the roles); the status line and Run say why not."""
        refused = self.method_refusals()
        model = self.method_combo.model()
        for row in range(self.method_combo.count()):
            name = str(self.method_combo.itemData(row))
            method = self._methods[name]
            why = refused.get(name, "")
            item = model.item(row) if hasattr(model, "item") else None
            if item is not None:
                item.setEnabled(not why)
            tip = f"Not available: {why}" if why else method.headline
            self.method_combo.setItemData(row, tip, Qt.ItemDataRole.ToolTipRole)
        current = self.method
        if current is not None and current.name in refused:
            self.status_label.setText(
                f"{current.name} cannot run on these roles: {refused[current.name]}."
            )
        self._update_buttons()

    def show_about(self, shown: bool) -> None:
        """Unfold or fold the method's explanation under its headline (its link)."""
        if shown == self.about_shown:
            return
        self.about_shown = shown
        self.summary.setVisible(shown)
        self._show_headline()
        self.about_toggled.emit(shown)

    def _show_headline(self) -> None:
        link = "less ▴" if self.about_shown else "more ▸"
        self.headline.setText(
            f"<b>{self._headline}</b> <a href='about'>{link}</a>" if self._headline else ""
        )

    def _show_params(self, shown: bool) -> None:
        self.params_body.setVisible(shown)
        self.params_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _update_params_note(self) -> None:
        """The folded parameters in one line: "defaults", or the ones changed."""
        method = self.method
        changed = []
        for spec in method.all_params if method is not None else ():
            widget = self.param_widgets.get(spec.name)
            if widget is None:
                continue
            try:
                value = spec.parse(param_widget_value(widget))
            except MicroguiError:
                changed.append(f"{param_label(spec.name).lower()}: invalid")
                continue
            if value != spec.default:
                shown = ("on" if value else "off") if isinstance(value, bool) else value
                changed.append(f"{param_label(spec.name).lower()} = {shown}")
        self.params_note.setText("; ".join(changed) if changed else "defaults")
        self._update_shown_note()

    @property
    def method(self) -> Method | None:
        return self._methods.get(str(self.method_combo.currentData()))

    def _on_method_changed(self, _index: int = 0) -> None:
        method = self.method
        while self.params_form.rowCount():
            self.params_form.removeRow(0)
        self.param_widgets = {}
        if method is None:
            self._headline = ""
            self.headline.setText("")
            self.summary.setText("")
            return
        kinds = ", ".join(sorted(k.value for k in method.kinds))
        # The one-paragraph explanation is shown in full (unfolded): a statistician choosing a
        # method should not have to hover to learn what it does and where it comes from.
        self._headline = html.escape(method.headline)
        self._show_headline()
        self.summary.setText(
            f"{html.escape(method.text)}<br>"
            f"<span style='color:#666'>Quasi-identifiers: {kinds}. "
            f"Source: {html.escape(method.reference)}</span>"
        )
        self.summary.setToolTip(method.text)
        for spec in method.all_params:
            widget = make_param_widget(spec)
            self.param_widgets[spec.name] = widget
            if isinstance(widget, QCheckBox):
                self.params_form.addRow(widget)
            else:
                self.params_form.addRow(param_label(spec.name), widget)
            _on_change(widget, self._update_params_note)
        self.params_box.setVisible(bool(method.all_params))
        self._update_params_note()
        self._update_buttons()
        self._update_hierarchy_note()

    def _update_hierarchy_note(self) -> None:
        """Say which attached hierarchy files a run of the chosen method uses: mstk uses those
        of the quasi-identifiers; the other methods do not generalize and get none."""
        method = self.method
        attached = self._controller.hierarchies.items()
        used = self._controller.hierarchies.files_for(method, self._controller.roles)
        text = ""
        if method is not None and method.uses_hierarchies:
            if used:
                names = ", ".join(
                    f"{html.escape(c)} ({html.escape(attached[c].path.name)})" for c in used
                )
                text = f"Uses the hierarchies attached in the roles panel: {names}."
                bad = [c for c in used if not attached[c].complete]
                if bad:
                    text += (
                        f" <span style='color:#b00020'>⚠ {html.escape(', '.join(bad))}: values "
                        "missing from the hierarchy; the run refuses them.</span>"
                    )
            else:
                text = (
                    "No hierarchy attached: automatic ones are built (roles panel: right-click "
                    "a quasi-identifier → Attach hierarchy…)."
                )
        elif attached:
            users = ", ".join(m.name for m in self._methods.values() if m.uses_hierarchies)
            text = (
                f"Hierarchies attached in the roles panel ({html.escape(', '.join(attached))}) "
                f"are used by {users} only; this method does not generalize."
            )
        self.hierarchy_note.setText(text)
        self.hierarchy_note.setVisible(bool(text))

    def select_method(self, name: str) -> None:
        pos = self.method_combo.findData(name)
        if pos < 0:
            raise MicroguiError(f"unknown method {name!r}")
        self.method_combo.setCurrentIndex(pos)

    def _shown_spec(self) -> RunSpec | None:
        run_id = self._controller.shown_run_id
        if run_id is None:
            return None
        try:
            return self._controller.entry(run_id).spec
        except (KeyError, LookupError):
            return None

    def _on_run_shown(self, _run_id: int) -> None:
        self._update_shown_note()

    def _update_shown_note(self) -> None:
        """'#3 mstk k=4 (shown) was made with other settings' and the button that loads them,
        or nothing when the panel describes the run shown."""
        spec = self._shown_spec()
        if spec is None or spec.method not in self._methods or self._describes(spec):
            self._show_note(False)
            return
        run_id = self._controller.shown_run_id
        self.shown_note.setText(
            f"The run shown, #{run_id} {spec.method} k={spec.k}, has other settings"
        )
        self.shown_note.setToolTip(
            f"The run shown, #{run_id} {spec.method} k={spec.k}, was made with other settings "
            "than these."
        )
        self._show_note(True)

    def _show_note(self, show: bool) -> None:
        """Show or hide the note on the run shown (under the method's headline); while shown,
        the headline gives up the lines it keeps and does not use, so that the Parameters
        header below stays in sight on a laptop (the dock's minimum has room for the note)."""
        self.shown_box.setVisible(show)
        self.explained.setMinimumHeight(0 if show else self._headline_room)

    def _describes(self, spec: RunSpec) -> bool:
        """Whether the widgets describe ``spec`` (method, k, parameters as resolved, seed,
        strata, blocks); a run whose seed was drawn matches a panel left on 'random'."""
        try:
            mine = self.spec()
        except MicroguiError:
            return False
        if (mine.method, mine.k, mine.seed, tuple(mine.strata), mine.block_size) != (
            spec.method,
            spec.k,
            spec.seed,
            tuple(spec.strata),
            spec.block_size,
        ):
            return False
        method = self._methods[spec.method]
        try:
            return resolve_params(method, mine.param_dict) == resolve_params(
                method, spec.param_dict
            )
        except MicroguiError:
            return False

    def load_run_settings(self, run_id: int) -> None:
        """Set the widgets to the settings of history run ``run_id`` (its seed as given: a run
        that drew a fresh seed loads 'random'; the history's replay uses the drawn one)."""
        spec = self._controller.entry(run_id).spec
        if spec.method not in self._methods:
            raise MicroguiError(f"run #{run_id}'s method {spec.method!r} is not available")
        self.set_spec(spec)
        self._method_proposed = False
        self._update_shown_note()
        self.status_label.setText(f"Settings of run #{run_id} loaded; press Run to run them.")

    def load_shown_settings(self) -> None:
        """What 'Load this run's settings' does: the settings of the run shown."""
        if self._controller.shown_run_id is not None:
            self.load_run_settings(self._controller.shown_run_id)

    def _on_method_chosen(self, _index: int) -> None:
        self._method_proposed = False

    def _follow_roles(self, roles: Any) -> None:
        """A proposed method that cannot run on new roles (those of a reopened project, applied
        after the table was read) is replaced by the core's proposal for them, when that one can
        run (:func:`~microgui.core.runs.method_refusal`). A method the user chose stays."""
        method = self.method
        if not self._method_proposed or method is None or not method_refusal(method, roles):
            return
        proposed = self._methods.get(self._controller.default_spec().method)
        if proposed is not None and not method_refusal(proposed, roles):
            self.select_method(proposed.name)

    def set_spec(self, spec: RunSpec) -> None:
        """Show ``spec`` in the widgets (method, k, parameters, seed); parameters the spec does
        not give show their defaults."""
        self.select_method(spec.method)
        self.k_spin.setValue(spec.k)
        method = self.method
        for prm in method.all_params if method is not None else ():
            if prm.name in self.param_widgets:
                set_param_widget_value(self.param_widgets[prm.name], prm.default)
        specs = {prm.name: prm for prm in method.all_params} if method is not None else {}
        for name, value in spec.params:
            if name in self.param_widgets and name in specs:
                # a sweep's or a project's spec keeps the text it was given ("false", "1e-05")
                set_param_widget_value(self.param_widgets[name], specs[name].parse(value))
        self.seed_spin.setValue(-1 if spec.seed is None else spec.seed)
        self.set_strata(spec.strata)
        position = self.blocks_combo.findData(spec.block_size)
        if position < 0 and spec.block_size is not None:  # a size the list does not offer
            self.blocks_combo.addItem(f"blocks of {int(spec.block_size):,}", spec.block_size)
            position = self.blocks_combo.count() - 1
        self.blocks_combo.setCurrentIndex(max(position, 0))

    # strata -------------------------------------------------------------------------------
    def set_strata(self, columns: Any) -> None:
        """Stratify by these columns (in this order; none: no strata)."""
        self.strata = [str(c) for c in columns]
        self._fill_strata_menu()

    def _fill_strata_menu(self) -> None:
        self.strata_menu.clear()
        dataset = self._controller.dataset
        if dataset is None:
            self.strata = []
            self._update_strata_text()
            return
        roles = dataset.roles
        columns = [str(c) for c in dataset.frame.columns]
        self.strata = [c for c in self.strata if c in columns]
        for column in columns:
            role = roles[column].role if column in roles else AttributeRole.NON_CONFIDENTIAL
            n_values = self._n_values(dataset.frame, column)
            action = self.strata_menu.addAction(f"{column}  ({n_values:,} values)")
            action.setData(column)
            action.setCheckable(True)
            action.setChecked(column in self.strata)
            if role is AttributeRole.IDENTIFIER:
                action.setEnabled(False)
                action.setToolTip("an identifier is removed from the output: not a stratum")
            action.toggled.connect(lambda checked, c=column: self._toggle_stratum(c, bool(checked)))
        self.strata_menu.setToolTipsVisible(True)
        self._update_strata_text()

    def _n_values(self, frame: Any, column: str) -> int:
        """The column's count of distinct values, counted once per table: the menu is filled
        again at each change of roles, and counting every column of a large table there held
        the GUI thread (issue 30)."""
        counted, counts = self._value_counts
        if counted is not frame:
            counts = {}
            self._value_counts = (frame, counts)
        if column not in counts:
            counts[column] = int(frame[column].nunique(dropna=False))
        return counts[column]

    def _toggle_stratum(self, column: str, checked: bool) -> None:
        if checked and column not in self.strata:
            self.strata.append(column)
        elif not checked and column in self.strata:
            self.strata.remove(column)
        self._update_strata_text()

    def _update_strata_text(self) -> None:
        self.strata_button.set_full_text(
            ", ".join(self.strata) if self.strata else "none (whole table)"
        )

    def spec(self) -> RunSpec:
        """The run the widgets describe."""
        method = self.method
        if method is None:
            raise MicroguiError("no method is available")
        params = {name: param_widget_value(w) for name, w in self.param_widgets.items()}
        seed = self.seed_spin.value()
        return RunSpec.make(
            method.name,
            self.k_spin.value(),
            params,
            None if seed < 0 else seed,
            # attached hierarchy files, for the methods that use them only (issue 13)
            self._controller.hierarchies.files_for(method, self._controller.roles),
            strata=list(self.strata),
            block_size=self.blocks_combo.currentData(),
        )

    # running ------------------------------------------------------------------------------
    def run(self) -> int | None:
        """Start a run with the current settings (what the Run button does); returns its id."""
        try:
            spec = self.spec()
            method = self.method
            assert method is not None
            resolve_params(method, spec.param_dict)
            return self._controller.start_run(spec)
        except MicroguiError as exc:
            self.status_label.setText(str(exc))
            self.error_occurred.emit(str(exc))
            return None

    def _update_buttons(self, _busy: bool = False) -> None:
        busy = self._controller.is_running
        has_data = self._controller.dataset is not None
        method = self.method
        roles = self._controller.roles
        why = method_refusal(method, roles) if method is not None and roles is not None else ""
        self.run_button.setEnabled(has_data and not busy and method is not None and not why)
        self.run_button.setToolTip(
            f"{method.name if method else 'This method'} cannot run on these roles: {why}"
            if why
            else "Microaggregate the quasi-identifiers with these settings"
        )
        self.sweep_button.setEnabled(has_data)
        self.cancel_button.setEnabled(busy)

    def _on_dataset_loaded(self, dataset: Any) -> None:
        self.k_spin.setRange(2, max(2, int(dataset.n_records)))
        self.strata = []
        self.set_spec(self._controller.default_spec())
        self._method_proposed = True
        self.progress_bar.setValue(0)
        self.status_label.setText(f"{dataset.n_records:,} records. Choose k and press Run.")
        self._update_buttons()

    def _on_run_started(self, _run_id: int, spec: Any) -> None:
        self.progress_bar.setValue(0)
        self.status_label.setText(f"Running {spec.method}, k = {spec.k}…")

    def _on_run_progress(self, _run_id: int, fraction: float, status: str) -> None:
        self.progress_bar.setValue(round(fraction * 1000))
        if status and status != "done":
            self.status_label.setText(f"{status[:1].upper()}{status[1:]}…")

    def _on_run_finished(self, _run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        self.progress_bar.setValue(1000)
        self.status_label.setText(
            f"Done in {result.seconds:.2f} s: {result.n_groups:,} groups, {result.information_loss_text}."
        )

    def _on_run_failed(self, _run_id: int, message: str, _details: str) -> None:
        self.progress_bar.setValue(0)
        self.status_label.setText(f"Run failed: {message}")

    def _on_sweep_started(self, _sweep_id: int, total: int) -> None:
        self.progress_bar.setValue(0)
        self.status_label.setText(f"Sweep of {total} run(s)…")

    def _sweep_ended(self, text: str) -> None:
        self.status_label.setText(text)

    def _on_run_cancelled(self, _run_id: int) -> None:
        self.progress_bar.setValue(0)
        self.status_label.setText("Run cancelled.")
