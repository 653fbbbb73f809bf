"""The analyses the views ask for in the background (STYLE.md §4): the dependency tree of the
quasi-identifiers (issue 3), the correlations and regressions of the run shown (issue 5), and the
unprotected table's reference point of the risk-utility map (issue 29/30: measured after the run
is shown, never inside the run).

Each kind is a :class:`~microgui.qt.workers.TaskSlot` in the controller's analysis pool, so that
they never wait behind a run; one current request per kind, a newer request supersedes
(cancels and ignores) an older one. The dependency tree, computed only when its tab is shown,
has a pool of its own (the controller's ``tree_pool``): the view looked at never waits behind
the run's other analyses (issue 29/30). Their ends are the controller's signals
(``dependency_tree_computed``, ``correlations_computed``, ``regression_fitted`` and their
``*_failed``). What is computed is core (:mod:`microgui.core.runs.analysis`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from microgui.core.errors import InvalidRoles
from microgui.core.runs.analysis import (
    correlation_outcome,
    dependency_tree_outcome,
    regression_outcome,
)
from microgui.core.views.ru_frame import cached_unprotected_reference, unprotected_reference
from microgui.qt.workers import TaskSlot

#: The window's :class:`~microgui.qt.controller.AppController` (not imported: it imports this
#: module, and the package has no import cycle, type-only ones included).
AppController = Any

__all__ = ["ViewAnalyses"]


class ViewAnalyses(QObject):
    """The dependency tree, correlations and regressions of one controller's views, and the
    unprotected table's reference point."""

    #: task id, the reference point's measures (``core.views.ru_frame.unprotected_reference``)
    reference_measured = Signal(int, object)

    def __init__(
        self,
        pool: QThreadPool,
        controller: AppController,
        tree_pool: QThreadPool | None = None,
        reference_pool: QThreadPool | None = None,
    ) -> None:
        super().__init__(controller)
        self._controller = controller
        # the tree in a pool of its own when given: it is asked for when its tab is shown and
        # must not queue behind the run's other analyses (the reference's ~10 s on Adult)
        self.trees = TaskSlot(tree_pool if tree_pool is not None else pool, self).forward(
            finished=controller.dependency_tree_computed, failed=controller.dependency_tree_failed
        )
        ids = itertools.count(1)
        self.correlations = TaskSlot(pool, self, ids).forward(
            finished=controller.correlations_computed, failed=controller.correlations_failed
        )
        self.regressions = TaskSlot(pool, self, ids).forward(
            finished=controller.regression_fitted, failed=controller.regression_failed
        )
        #: the reference point of the R-U map; a failure leaves the map without its star
        # in a pool of its own when given: the analyses of the views shown must not wait behind it
        self.references = TaskSlot(
            reference_pool if reference_pool is not None else pool, self, ids
        ).forward(finished=self.reference_measured)

    @property
    def slots(self) -> tuple[TaskSlot, ...]:
        return (self.trees, self.correlations, self.regressions, self.references)

    def dependency_tree(self, bins: int) -> int:
        """Start the dependency tree of the current quasi-identifiers; the request's id."""
        dataset = self._controller.dataset
        if dataset is None:
            raise InvalidRoles("open a table first")
        return self.trees.start(partial(dependency_tree_outcome, dataset, int(bins)))

    def correlations_of_shown(self) -> int:
        """Start the correlations of the run shown, original vs protected; the request's id."""
        ctl = self._controller
        if ctl.result is None or ctl.result_dataset is None or ctl.shown_run_id is None:
            raise InvalidRoles("run a method first: the correlations compare a run with its table")
        return self.correlations.start(
            partial(correlation_outcome, ctl.result_dataset, ctl.result, ctl.shown_run_id)
        )

    def regression(self, y: str, xs: Sequence[str]) -> int:
        """Start the fit of ``y ~ xs`` on the run shown and its table; the request's id."""
        ctl = self._controller
        if ctl.result is None or ctl.result_dataset is None or ctl.shown_run_id is None:
            raise InvalidRoles("run a method first: the regression compares a run with its table")
        xs = [str(x) for x in xs]
        ds, result, run_id = ctl.result_dataset, ctl.result, ctl.shown_run_id
        return self.regressions.start(partial(regression_outcome, ds, result, run_id, y, xs))

    def unprotected_reference(self, dataset: Any) -> int | None:
        """Start measuring ``dataset`` unprotected (a full ``evaluate`` against itself, ~10 s on
        Adult) unless it is measured or being measured; the request's id, or None when nothing
        was started. ``reference_measured`` follows."""
        if dataset is None or cached_unprotected_reference(dataset) is not None:
            return None
        if self.references.busy and self.references.context() is dataset:
            return None
        return self.references.start(partial(unprotected_reference, dataset), dataset)
