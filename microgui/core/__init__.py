"""The core of microgui: plain Python (numpy, pandas, networkx, scipy), never Qt.

Packages by concept: ``table`` (the dataset and its roles), ``io`` (readers and writers),
``methods``, ``metrics``, ``runs`` (a run, its scale, sweeps, project files), ``release`` (the
checked export, its formats and reports) and ``views`` (the Qt-free geometry the app draws).

The modules moved there in issue 28 still import by their old paths (``microgui.core.dataset``
is :mod:`microgui.core.table.dataset`, the same module object): :data:`MOVED` maps each old
path to the new one, and a finder on ``sys.meta_path`` resolves an old path on first import.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["MOVED"]

#: Old module path -> new module path (issue 28). An entry whose new module does not exist (yet)
#: is skipped: importing its old path fails as any missing module does.
MOVED: dict[str, str] = {
    "microgui.core.aggregate": "microgui.core.table.aggregate",
    "microgui.core.column_types": "microgui.core.table.column_types",
    "microgui.core.dataset": "microgui.core.table.dataset",
    "microgui.core.dependency": "microgui.core.table.dependency",
    "microgui.core.hierarchy": "microgui.core.table.hierarchy",
    "microgui.core.numbers": "microgui.core.table.numbers",
    "microgui.core.roles": "microgui.core.table.roles",
    "microgui.core.artifacts": "microgui.core.methods.artifacts",
    "microgui.core.analysis": "microgui.core.runs.analysis",
    "microgui.core.pool": "microgui.core.runs.pool",
    "microgui.core.project_file": "microgui.core.runs.project_file",
    "microgui.core.scale": "microgui.core.runs.scale",
    "microgui.core.sweep": "microgui.core.runs.sweep",
    "microgui.core.distributed": "microgui.core.release.distributed",
    "microgui.core.export": "microgui.core.release.check",
    "microgui.core.formulas": "microgui.core.release.formulas",
    "microgui.core.pseudonyms": "microgui.core.release.pseudonyms",
    "microgui.core.release_report": "microgui.core.release.report",
    "microgui.core.replay": "microgui.core.release.replay",
    "microgui.core.report_charts": "microgui.core.release.report_charts",
    "microgui.core.report_html": "microgui.core.release.report_html",
    "microgui.core.layout": "microgui.core.views.layout",
    "microgui.core.projection": "microgui.core.views.projection",
    "microgui.core.ru_frame": "microgui.core.views.ru_frame",
}


class _MovedFinder:
    """Imports an old path of :data:`MOVED` as its new module: the same object, whose
    ``__name__`` and ``__spec__`` stay the new ones (pickles and reloads name the new path).
    A finder and loader by protocol: not derived from importlib.abc, whose import costs more
    than the rest of ``import microgui.core``."""

    def __init__(self) -> None:
        self._own_specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))  # one by protocol

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._own_specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just set ``__spec__`` to the old path's: give the module its own.
        module.__spec__ = self._own_specs.pop(module.__name__, module.__spec__)


if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedFinder())
