"""The static checks CI enforces (STYLE.md §9): ruff lint and format, mypy strict on the core.

The tools are the ones installed beside the running interpreter (the ``test`` extra); a test is
skipped, saying so, when its tool is absent. mypy keeps its cache in ``.mypy_cache`` (git-ignored):
a first run takes about 25 s, later ones a second or two.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip(f"{name} is not installed beside {sys.executable} (pip install -e '.[test]')")
    return exe


def _run(args: list[str]) -> None:
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, f"{' '.join(args[1:])} failed:\n{out.stdout}{out.stderr}"


def test_ruff_lint_and_format() -> None:
    ruff = _tool("ruff")
    _run([ruff, "check", "."])
    _run([ruff, "format", "--check", "."])


def test_mypy_strict_core() -> None:
    _run([_tool("mypy"), "--strict", "microgui/core"])
