"""The dependency tree panel: the AMA tree of the quasi-identifiers, live before and after runs.

Before any ``ama`` run it shows the tree of the current quasi-identifiers; a change of the bins
or of the quasi-identifiers (roles, kinds, orders) asks the controller for a new tree, computed
in a worker (a superseded one is dropped). After an ``ama`` run it shows that run's tree, until
the bins or the quasi-identifiers change again. While the panel is hidden nothing is computed;
the tree is brought up to date when it is shown.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from microgui.core.errors import MicroguiError
from microgui.core.methods.artifacts import DEPENDENCY_TREE
from microgui.core.runs import RunResult
from microgui.core.runs.analysis import DependencyTreeOutcome
from microgui.core.table.dataset import Dataset
from microgui.core.table.dependency import DEFAULT_BINS, DependencyTree
from microgui.core.table.roles import ColumnSpec, RoleMap
from microgui.core.views.layout import TreeLayout
from microgui.qt.controller import AppController
from microgui.qt.plots.dependency_tree import DependencyTreePlot
from microgui.qt.wrapped_label import WrappedLabel

__all__ = ["DependencyTreePanel", "DependencyTreeOptions", "MAX_BINS"]

MAX_BINS = 1000

_Key = tuple[int, tuple[tuple[str, ColumnSpec], ...], int]


@dataclass
class DependencyTreeOptions:
    """What the panel computes; kept apart from the widgets so it can be saved and tested alone."""

    #: Equal-frequency bins of a continuous quasi-identifier (``000`` entropies; ama's ``bins``).
    bins: int = DEFAULT_BINS


def _qi_key(dataset: Dataset, roles: RoleMap, bins: int) -> _Key:
    """What a tree depends on: the table, its quasi-identifiers (with kinds and orders), bins."""
    return (id(dataset.frame), tuple((c, roles[c]) for c in roles.quasi_identifiers), bins)


class DependencyTreePanel(QWidget):
    """Bins control, where the tree comes from, and the :class:`DependencyTreePlot`.

    ``tree_shown`` carries each :class:`DependencyTree` drawn (computed or from a run).
    """

    tree_shown = Signal(object)

    def __init__(
        self,
        controller: AppController,
        parent: QWidget | None = None,
        options: DependencyTreeOptions | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self.options = options or DependencyTreeOptions()
        self._pending: int | None = None
        self._dirty = False
        self._shown_key: _Key | None = None
        self.showing_run = False

        self.bins_spin = QSpinBox()
        self.bins_spin.setRange(2, MAX_BINS)
        self.bins_spin.setValue(self.options.bins)
        # Only the finished value counts: typing "25" must not compute a tree for 2 first.
        self.bins_spin.setKeyboardTracking(False)
        self.bins_spin.setToolTip(
            "Equal-frequency bins of each continuous quasi-identifier when computing the "
            "entropies (ordinal and nominal values are categories). Changing it recomputes the tree."
        )
        self.bins_spin.valueChanged.connect(self._on_bins_changed)
        self.source_label = WrappedLabel()  # all its lines at 1366 × 768 (issue 30)
        self.source_label.setStyleSheet("color: #444;")
        self.plot = DependencyTreePlot()

        top = QHBoxLayout()
        top.addWidget(QLabel("Bins per continuous QI"))
        top.addWidget(self.bins_spin)
        top.addSpacing(16)
        top.addWidget(self.source_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)

        controller.dataset_loaded.connect(self._on_dataset_loaded)
        controller.roles_changed.connect(lambda _roles: self._invalidate())
        controller.run_finished.connect(self._on_run_finished)
        controller.dependency_tree_computed.connect(self._on_computed)
        controller.dependency_tree_failed.connect(self._on_failed)
        self._set_source("Open a table to see the dependency tree of its quasi-identifiers.")

    @property
    def bins(self) -> int:
        return self.options.bins

    def _on_bins_changed(self, value: int) -> None:
        self.options.bins = int(value)
        self._invalidate()

    @property
    def is_computing(self) -> bool:
        return self._pending is not None

    def _set_source(self, text: str) -> None:
        self.source_label.setText(text)

    # requests -----------------------------------------------------------------------------
    def _current_key(self) -> _Key | None:
        dataset = self._controller.dataset
        if dataset is None:
            return None
        return _qi_key(dataset, dataset.roles, self.bins)

    def _invalidate(self) -> None:
        key = self._current_key()
        if key is None:
            return
        if key == self._shown_key and self._pending is None:
            return  # e.g. a confidential column retagged: the tree is the same
        self._dirty = True
        if self.isVisible():
            self.recompute()
        else:
            self._set_source("The tree will be recomputed when this tab is shown.")

    def recompute(self) -> int | None:
        """Ask for the tree of the current quasi-identifiers with the current bins."""
        self._dirty = False
        try:
            self._pending = self._controller.compute_dependency_tree(self.bins)
        except MicroguiError as exc:
            self._pending = None
            self.plot.clear(str(exc))
            return None
        self._set_source(f"Computing the dependency tree (bins = {self.bins})…")
        return self._pending

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty and self._controller.dataset is not None:
            self.recompute()

    # controller signals -------------------------------------------------------------------
    def _on_dataset_loaded(self, _dataset: Any) -> None:
        self._shown_key = None
        self._pending = None
        self.showing_run = False
        self.plot.clear("Computing the dependency tree…")
        self._invalidate()

    def _on_computed(self, tree_id: int, outcome: Any) -> None:
        if tree_id != self._pending:
            return
        self._pending = None
        assert isinstance(outcome, DependencyTreeOutcome)
        self._shown_key = self._current_key()
        self.showing_run = False
        name = self._controller.dataset.name if self._controller.dataset is not None else ""
        self._set_source(
            f"Tree of the current quasi-identifiers of <b>{html.escape(name)}</b>: it follows "
            "the bins and the roles as you change them; an <b>ama</b> run microaggregates on its "
            "key attributes."
        )
        self._show(outcome.tree, outcome.layout)

    def _on_failed(self, tree_id: int, message: str, _details: str) -> None:
        if tree_id != self._pending:
            return
        self._pending = None
        self._shown_key = None
        self.showing_run = False
        self.plot.clear(message[:1].upper() + message[1:])
        self._set_source("No dependency tree for these roles.")

    def _on_run_finished(self, _run_id: int, result: Any) -> None:
        assert isinstance(result, RunResult)
        tree = DEPENDENCY_TREE.of(result.artifacts)
        layout = self._controller.tree_layout
        if tree is None or layout is None:
            return
        self._pending = None  # a live tree still on its way is older than this run
        self._dirty = False
        self.options.bins = int(tree.bins)
        self.bins_spin.blockSignals(True)
        self.bins_spin.setValue(int(tree.bins))
        self.bins_spin.blockSignals(False)
        dataset = self._controller.result_dataset or self._controller.dataset
        self._shown_key = (
            _qi_key(dataset, result.roles, int(tree.bins)) if dataset is not None else None
        )
        self.showing_run = True
        stale = (
            " The roles have changed since: change the bins or run again to update it."
            if self._controller.result_is_stale
            else ""
        )
        self._set_source(
            f"Tree of the last <b>ama</b> run (k = {result.spec.k}, bins = {tree.bins}): its "
            f"records were grouped on the key attributes.{stale}"
        )
        self._show(tree, layout)

    def _show(self, tree: DependencyTree, layout: TreeLayout) -> None:
        self.plot.set_tree(tree, layout)
        self.tree_shown.emit(tree)
