"""The sweep dialog: a grid of methods × k × parameter values, run in the worker (issue 5).

The dialog only gathers the grid and shows what the controller reports: ``SweepSpec`` expands and
checks it (core), :meth:`AppController.start_sweep` runs ``run_sweep`` in the worker thread. Each
finished point appears in the run history and on the risk–utility map as it arrives; failed points
are listed here with their reason. The dialog is not modal: the app stays usable while it runs.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import InvalidParameter, MicroguiError
from microgui.core.methods import Method, get_method
from microgui.core.metrics.disclosure import release_verdict
from microgui.core.runs import RunSpec, validate_k
from microgui.core.runs import method_refusal as core_refusal
from microgui.core.runs.pool import default_workers
from microgui.core.runs.sweep import SweepPoint, SweepSpec, parse_k_list, parse_param_grid
from microgui.core.table.roles import RoleMap
from microgui.qt.controller import AppController

__all__ = ["SweepDialog", "parse_k_list", "parse_param_grid", "method_refusal", "DEFAULT_KS"]

#: The k values proposed (those of the literature's tables, ``003`` Table 2).
DEFAULT_KS = "3, 5, 10"

_INT_LIMIT = 2_147_483_647
#: The dialog's size where the screen has room for it.
WIDTH, HEIGHT = 560, 720
#: Room a window manager's title bar and frame take around the dialog, in pixels (a 1366 × 768
#: laptop leaves ~738 px: the 720 px dialog's buttons were below the screen's edge).
WINDOW_FRAME = 32


def method_refusal(
    method: Method,
    roles: RoleMap | None,
    n_records: int | None = None,
    grid: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Why ``method`` cannot run on these roles and this many records ("" when it can): the
    core's answer (:func:`microgui.core.runs.method_refusal`), or "open a table first". With
    the sweep's parameter ``grid``, a method runs when one of the grid's combinations of its own
    parameters is accepted (optimal with ``max_records=40`` on 30 records)."""
    if roles is None:
        return "open a table first"
    own = {p.name for p in method.all_params}
    varied = {name: list(values) for name, values in (grid or {}).items() if name in own}
    why = core_refusal(method, roles, n_records)
    if not why or not varied or n_records is None:
        return why
    for combo in itertools.product(*varied.values()):
        try:
            if not core_refusal(method, roles, n_records, dict(zip(varied, combo, strict=True))):
                return ""
        except MicroguiError:
            continue  # a value the method refuses: that point fails on its own
    return why


class SweepDialog(QDialog):
    """Methods (checklist), k values, parameter values, seed and workers; Start, Cancel,
    progress and the failed runs. The sweep is started through the controller; ``started``
    carries its id."""

    started = Signal(int)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._sweep_id: int | None = None
        self._total = 0
        self._added = 0
        self._grid_ok = False
        self._failed: list[SweepPoint] = []
        self.setWindowTitle("Sweep: methods × k × parameters")
        self.setModal(False)

        self.methods_list = QListWidget()
        self.methods_list.setToolTip(
            "Methods to run; greyed ones cannot run on the current roles (the reason under each)"
        )
        self.methods_list.itemChanged.connect(lambda _item: self._update_summary())
        # a greyed method's reason on lines of its own, wrapped to the list's width: on one line
        # it ran ~540 px past a 560 px dialog, behind a horizontal scroll bar (1366 × 768 review)
        self.methods_list.setWordWrap(True)
        self.methods_list.setResizeMode(QListView.ResizeMode.Adjust)
        self.methods_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.methods_list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.all_button = QPushButton("All")
        self.all_button.setToolTip(
            "Check every method that can run on the current roles (greyed ones cannot: the "
            "reason is under each)"
        )
        self.all_button.clicked.connect(lambda: self.check_methods(None))
        self.none_button = QPushButton("None")
        self.none_button.clicked.connect(lambda: self.check_methods([]))
        self.k_edit = QLineEdit(DEFAULT_KS)
        self.k_edit.setToolTip("k values, separated by commas (each 2 ≤ k ≤ the number of records)")
        self.k_edit.textChanged.connect(lambda _t: self._update_summary())
        self.params_edit = QLineEdit()
        self.params_edit.setPlaceholderText("optional, e.g. refine=none,deep; gamma=0.2,0.5")
        self.params_edit.setToolTip(
            "Parameter values to try: NAME=V1,V2, several separated by ';'. A method takes part "
            "only over the parameters it has; a name no checked method has is refused."
        )
        self.params_edit.textChanged.connect(lambda _t: self._update_summary())
        # a parameter value can lift a method's table limit (optimal's max_records)
        self.params_edit.textChanged.connect(lambda _t: self.refresh_methods())
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(-1, _INT_LIMIT)
        self.seed_spin.setSpecialValueText("random")
        self.seed_spin.setValue(0)
        self.seed_spin.setToolTip(
            "Seed of every run (recorded in its report); 'random' draws one per run"
        )
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(1, 64)
        self.workers_spin.setValue(default_workers(64))
        self.workers_spin.setToolTip(
            "Processes running the sweep (one per core by default); 1 runs the points one after "
            "the other in the app's worker thread"
        )

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        note = QLabel(
            "Each finished run appears in the run history and on the risk–utility map as it "
            "arrives. A sweep keeps each run's report and measures, <b>not its protected "
            "table</b>: opening a point (select it in the history or click it on the map) re-runs "
            "its spec with the same seed in the background — same seed, same result — and then "
            "shows it."
        )
        note.setWordWrap(True)
        note.setTextFormat(Qt.TextFormat.RichText)
        note.setStyleSheet("color: #444;")

        self.start_button = QPushButton("Start sweep")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel sweep")
        self.cancel_button.setToolTip(
            "Stop the sweep; the runs finished so far stay in the history"
        )
        self.cancel_button.clicked.connect(controller.cancel_sweep)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setFormat("%p %")
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.failed_label = QLabel("Failed runs")
        self.failed_list = QListWidget()
        self.failed_list.setToolTip("Runs that failed, with the reason (hover for the full text)")
        self.failed_list.setMaximumHeight(120)

        method_buttons = QHBoxLayout()
        method_buttons.addWidget(self.all_button)
        method_buttons.addWidget(self.none_button)
        method_buttons.addStretch(1)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("k values", self.k_edit)
        form.addRow("Parameter values", self.params_edit)
        form.addRow("Seed", self.seed_spin)
        form.addRow("Workers", self.workers_spin)
        run_buttons = QHBoxLayout()
        run_buttons.addWidget(self.start_button, 1)
        run_buttons.addWidget(self.cancel_button)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.hide)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Methods"))
        layout.addWidget(self.methods_list, 1)
        layout.addLayout(method_buttons)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(note)
        layout.addLayout(run_buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.status_label)
        layout.addWidget(self.failed_label)
        layout.addWidget(self.failed_list)
        layout.addWidget(close)
        self.resize(WIDTH, HEIGHT)

        controller.roles_changed.connect(lambda _roles: self.refresh_methods())
        controller.sweep_started.connect(self._on_started)
        controller.sweep_progress.connect(self._on_progress)
        controller.sweep_point_finished.connect(self._on_point)
        controller.sweep_finished.connect(self._on_finished)
        controller.sweep_cancelled.connect(self._on_cancelled)
        controller.sweep_failed.connect(self._on_failed)
        controller.busy_changed.connect(lambda _b: self._update_buttons())
        self.refresh_methods()
        self._show_failed([])

    def fit_to(self, free: QRect) -> None:
        """Size the dialog to a screen's free area ``free`` (its available geometry): at most
        :data:`WIDTH` × :data:`HEIGHT`, less the window manager's frame, so that Start, Cancel
        and Close stay on the screen (the methods list gives up the height; Qt places a dialog
        over its parent and within the screen when first shown)."""
        height = min(HEIGHT, free.height() - WINDOW_FRAME)
        height = max(height, min(self.minimumSizeHint().height(), free.height()))
        self.resize(min(WIDTH, free.width()), height)

    # the grid -----------------------------------------------------------------------------
    def _grid(self) -> dict[str, list[str]] | None:
        """The parameter values typed so far (None while they do not parse)."""
        try:
            return parse_param_grid(self.params_edit.text())
        except MicroguiError:
            return None

    def refresh_methods(self, checked: Sequence[str] | None = None) -> None:
        """List the registered methods; those that cannot run on the current roles are greyed
        out with the reason. ``checked``: the methods to check (None: keep the current ones)."""
        keep = set(self.checked_methods()) if checked is None else set(checked)
        roles = self._controller.roles
        self.methods_list.blockSignals(True)
        self.methods_list.clear()
        for method in self._controller.methods():
            item = QListWidgetItem(f"{method.name} — {method.title}")
            item.setData(Qt.ItemDataRole.UserRole, method.name)
            dataset = self._controller.dataset
            n = dataset.n_records if dataset else None
            why = method_refusal(method, roles, n, self._grid())
            if why:
                item.setFlags(Qt.ItemFlag.ItemIsUserCheckable)  # shown, not enabled
                item.setCheckState(Qt.CheckState.Unchecked)
                item.setToolTip(f"{method.name} cannot run here: {why}")
                item.setText(f"{method.name} — {method.title}\n    cannot run: {why}")
            else:
                item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
                state = Qt.CheckState.Checked if method.name in keep else Qt.CheckState.Unchecked
                item.setCheckState(state)
                item.setToolTip(method.headline)
            self.methods_list.addItem(item)
        self.methods_list.blockSignals(False)
        self._update_summary()

    def _items(self) -> list[QListWidgetItem]:
        return [self.methods_list.item(i) for i in range(self.methods_list.count())]

    def available_methods(self) -> list[str]:
        """The methods that can run on the current roles (the enabled items)."""
        return [
            str(i.data(Qt.ItemDataRole.UserRole))
            for i in self._items()
            if i.flags() & Qt.ItemFlag.ItemIsEnabled
        ]

    def checked_methods(self) -> list[str]:
        return [
            str(i.data(Qt.ItemDataRole.UserRole))
            for i in self._items()
            if i.checkState() == Qt.CheckState.Checked and i.flags() & Qt.ItemFlag.ItemIsEnabled
        ]

    def check_methods(self, names: Sequence[str] | None) -> None:
        """Check exactly these methods (None: every available one)."""
        wanted = set(self.available_methods() if names is None else names)
        self.methods_list.blockSignals(True)
        for item in self._items():
            if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                name = str(item.data(Qt.ItemDataRole.UserRole))
                item.setCheckState(
                    Qt.CheckState.Checked if name in wanted else Qt.CheckState.Unchecked
                )
        self.methods_list.blockSignals(False)
        self._update_summary()

    def prefill(self, spec: RunSpec) -> None:
        """Start from the run panel's settings: its method checked, its seed."""
        if not self.checked_methods():
            self.check_methods([spec.method])
        self.seed_spin.setValue(-1 if spec.seed is None else spec.seed)

    def run_specs(self) -> list[RunSpec]:
        """The runs the dialog describes; :class:`MicroguiError` saying what to fix."""
        methods = self.checked_methods()
        if not methods:
            raise InvalidParameter("check at least one method")
        ks = parse_k_list(self.k_edit.text())
        dataset = self._controller.dataset
        if dataset is not None:
            for k in ks:
                validate_k(k, dataset.n_records)
        seed = self.seed_spin.value()
        # the hierarchy files attached in the roles panel go to the methods that use them
        # (mstk); a sweep without such a method gets none instead of being refused (issue 13)
        users = [m for m in map(get_method, methods) if m.uses_hierarchies]
        files = self._controller.hierarchies.files_for(
            users[0] if users else None, self._controller.roles
        )
        spec = SweepSpec.make(
            methods,
            ks,
            parse_param_grid(self.params_edit.text()),
            None if seed < 0 else seed,
            files,
        )
        return spec.run_specs()

    def _update_summary(self) -> None:
        try:
            specs = self.run_specs()
        except MicroguiError as exc:
            self.summary.setText(f"<span style='color:#b00020'>{html.escape(str(exc))}</span>")
            self._grid_ok = False
        else:
            n_methods = len({s.method for s in specs})
            self.summary.setText(
                f"{len(specs)} run(s): {n_methods} method(s) × k values × parameter values."
            )
            self._grid_ok = True
        self._update_buttons()

    def _update_buttons(self) -> None:
        sweeping = self._controller.is_sweeping
        has_data = self._controller.dataset is not None
        self.start_button.setEnabled(has_data and not sweeping and self._grid_ok)
        self.cancel_button.setEnabled(sweeping)

    # running ------------------------------------------------------------------------------
    def start(self) -> int | None:
        """Start the sweep (what "Start sweep" does); returns its id, None when refused."""
        try:
            specs = self.run_specs()
            sweep_id = self._controller.start_sweep(specs, self.workers_spin.value())
        except MicroguiError as exc:
            self.status_label.setText(f"<span style='color:#b00020'>{html.escape(str(exc))}</span>")
            return None
        self.started.emit(sweep_id)
        return sweep_id

    def _mine(self, sweep_id: int) -> bool:
        return sweep_id == self._sweep_id

    def _on_started(self, sweep_id: int, total: int) -> None:
        self._sweep_id = sweep_id
        self._total = total
        self._added = 0
        self.progress_bar.setValue(0)
        self.status_label.setText(f"Running {total} run(s)…")
        self._show_failed([])
        self._update_buttons()

    def _on_progress(self, sweep_id: int, fraction: float, status: str) -> None:
        if self._mine(sweep_id):
            self.progress_bar.setValue(round(fraction * 1000))
            if status:
                self.status_label.setText(f"{status} · {self._added} in the history so far")

    def _on_point(self, sweep_id: int, point: Any, _run_id: int) -> None:
        if not self._mine(sweep_id):
            return
        if point.report is not None:
            self._added += 1
        if point.error:
            self._failed.append(point)
            self._show_failed(self._failed)

    def _ended(self, text: str) -> None:
        self.status_label.setText(text)
        self._update_buttons()

    def _on_finished(self, sweep_id: int, points: Any) -> None:
        if self._mine(sweep_id):
            self.progress_bar.setValue(1000)
            self._show_failed([p for p in points if p.error])
            failed = sum(1 for p in points if p.report is None)
            disclosing = sum(
                1
                for p in points
                if p.report is not None
                and release_verdict(p.report).level == "attribute_disclosure"
            )
            warn = (
                f" <span style='color:#b35c00'>{disclosing} with attribute disclosure "
                "(a group sharing one confidential value: column Homog. % of the history)."
                "</span>"
                if disclosing
                else ""
            )
            self._ended(
                f"Done: {self._added} of {len(points)} run(s) in the history and on the "
                f"risk–utility map; {failed} failed.{warn}"
            )

    def _on_cancelled(self, sweep_id: int, points: Any) -> None:
        if self._mine(sweep_id):
            self._ended(
                f"Cancelled after {len(points)} of {self._total} run(s); the {self._added} "
                "finished run(s) stay in the history."
            )

    def _on_failed(self, sweep_id: int, message: str, _details: str) -> None:
        if self._mine(sweep_id):
            self._ended(f"<span style='color:#b00020'>Sweep failed: {html.escape(message)}</span>")

    def _show_failed(self, points: Sequence[SweepPoint]) -> None:
        self._failed = list(points)
        self.failed_list.clear()
        for p in self._failed:
            params = ", ".join(f"{k}={v}" for k, v in p.spec.params)
            what = f"{p.spec.method} k={p.spec.k}" + (f" ({params})" if params else "")
            item = QListWidgetItem(f"{what}: {p.error}")
            item.setToolTip(f"{what}\n{p.error}")
            self.failed_list.addItem(item)
        self.failed_label.setText(
            f"Failed runs ({len(self._failed)})" if self._failed else "Failed runs: none"
        )
        # no empty box: its 120 px go to the methods list (the dialog fits a 768 px screen)
        self.failed_list.setVisible(bool(self._failed))

    def failed_texts(self) -> list[str]:
        return [self.failed_list.item(i).text() for i in range(self.failed_list.count())]
