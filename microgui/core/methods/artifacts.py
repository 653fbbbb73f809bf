"""What a method leaves for the app's views beside its report: one typed kind per thing.

A method's run function returns its artifacts in ``MethodOutput.artifacts``, a mapping made with
:meth:`Artifact.entry` (``{**SPANNING_TREE.entry(tree), **CLASSES.entry(table)}``), and declares the
kinds it leaves in ``Method.artifacts``; the run keeps them on the ``RunResult``. A view reads one
with :meth:`Artifact.of`, which returns the value with its type, or None when the run left none
(another method, a run in blocks). Each thing has one encoding: ``mst`` and ``mstk`` both leave a
:class:`SpanningTree`.

A project file keeps a run's partition and, with it, its spanning tree (edges and cut flags); the
classes of ``mstk`` and the dependency tree of ``ama`` are rebuilt from the data when a reopened
run is opened, and the record path of ``mhm`` is not kept (no view draws it)
(:mod:`microgui.core.runs.stored_partition`, issue 30).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd

from microgui.core.table.dependency import DependencyTree

__all__ = [
    "Artifact",
    "SpanningTree",
    "SPANNING_TREE",
    "DEPENDENCY_TREE",
    "CLASSES",
    "RECORD_PATH",
]

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class SpanningTree:
    """A spanning tree of a run's records and the edges its partitioning cut (the MST view).

    ``edges``: (n-1, 2) int64 row numbers; ``weights``: (n-1,) float64 edge lengths (Euclidean
    on the z-scored quasi-identifiers for ``mst``, hierarchical distances for ``mstk``);
    ``cut``: (n-1,) bool, the edges the partitioning removed (``mstk``: pruned).
    """

    edges: np.ndarray
    weights: np.ndarray
    cut: np.ndarray


@dataclass(frozen=True)
class Artifact(Generic[T]):
    """The name and type of one kind of thing a method leaves for a view."""

    name: str
    type: type[T]

    def entry(self, value: T) -> dict[str, Any]:
        """``{name: value}`` for ``MethodOutput.artifacts``, after checking the value's type."""
        if not isinstance(value, self.type):
            raise TypeError(f"artifact {self.name!r} must be a {self.type.__name__}")
        return {self.name: value}

    def of(self, artifacts: Mapping[str, Any]) -> T | None:
        """This artifact in a run's ``artifacts``, or None when the run left none."""
        value = artifacts.get(self.name)
        return value if isinstance(value, self.type) else None


#: The record tree of ``mst`` (an ``MstPartition``, which also holds the trees' components)
#: and of ``mstk``.
SPANNING_TREE: Artifact[SpanningTree] = Artifact("mst", SpanningTree)
#: The attribute dependency tree of ``ama``.
DEPENDENCY_TREE: Artifact[DependencyTree] = Artifact("dependency_tree", DependencyTree)
#: The generalization classes of ``mstk``: one row per class (``class``, ``size`` and each
#: quasi-identifier's generalized value).
CLASSES: Artifact[pd.DataFrame] = Artifact("classes", pd.DataFrame)
#: The order in which ``mhm`` visits the records (a permutation of the row numbers).
RECORD_PATH: Artifact[np.ndarray] = Artifact("path", np.ndarray)
