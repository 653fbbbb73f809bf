"""The import shape of the package.

The core never imports Qt (STYLE.md §1): checked by import-linter and by a blocked import. The
contracts of ``pyproject.toml`` (core layers, metrics never import methods, method modules
independent but for declared compositions) hold, and no module imports itself back.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCKED_IMPORT = r"""
import importlib, pkgutil, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6'):
            raise ImportError('blocked in the core: ' + name)
        return None
sys.meta_path.insert(0, Block())
import microgui, microgui.core, microgui.cli, microgui.api, microgui.bench
for mod in pkgutil.walk_packages(microgui.core.__path__, 'microgui.core.'):
    importlib.import_module(mod.name)
from microgui.cli import main
assert main(['protect', '--list-methods']) == 0
print('core-ok')
"""


def test_core_imports_without_qt() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert "core-ok" in out.stdout


#: The contracts of ``pyproject.toml`` that must be there and kept (a dropped one is noticed).
CONTRACTS = (
    "core never imports Qt",
    "core layers:",
    "metrics never import methods",
    "method modules independent of each other, except declared compositions",
)


def test_import_linter_contract() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    text = " ".join(out.stdout.split())  # long contract names are wrapped
    for name in CONTRACTS:
        assert name in text, f"contract {name!r} is missing from pyproject.toml"


def import_cycles(package: str = "microgui") -> list[list[str]]:
    """Each circle of module imports in ``package`` (imports inside functions and under
    TYPE_CHECKING count), as a closed path of module names."""
    grimp = pytest.importorskip("grimp")  # shipped with import-linter
    import networkx as nx

    graph = grimp.build_graph(package, cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module:
                edges.add_edge(module, imported)
    cycles = []
    for component in nx.strongly_connected_components(edges):
        if len(component) > 1:
            path = [a for a, _ in nx.find_cycle(edges.subgraph(component))]
            cycles.append([*path, path[0]])
    return sorted(cycles)


def test_no_import_cycle() -> None:
    cycles = import_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
