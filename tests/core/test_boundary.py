"""The core never imports Qt (STYLE.md §1): checked by import-linter and by a blocked import."""

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


def test_import_linter_contract() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
