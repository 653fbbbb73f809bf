"""Issue 17, item 4: no ``np.unique(..., axis=0)`` left where a run computes. It sorts a structured
view of the rows and holds the GIL throughout (555 ms at 350,000 × 10), freezing the app's window
while a run works in its thread; :func:`microgui.core.metrics.risk.unique_rows` (lexsort) gives
the same rows, first indices, inverse and counts and releases the GIL. It lives in
:mod:`microgui.core.table.numbers`, which every layer may import (``aggregate`` included)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from microgui.core.metrics.risk import unique_rows

PACKAGE = Path(__file__).resolve().parents[3] / "microgui"
#: Calls still allowed, by file: none.
ALLOWED: dict[str, int] = {}


def test_no_unique_with_axis_in_the_package() -> None:
    found: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "unique"
            and any(kw.arg == "axis" for kw in node.keywords)
        ]
        if calls:
            found[path.relative_to(PACKAGE).as_posix()] = len(calls)
    assert found == ALLOWED


@pytest.mark.parametrize("seed", range(5))
def test_unique_rows_is_np_unique(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, size=(200, int(rng.integers(1, 4))))
    if seed % 2:
        a = a.astype(float) / 2 - 0.5
    want = np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)
    got = unique_rows(a)
    for w, g in zip(want, got, strict=True):
        assert np.array_equal(np.asarray(w).reshape(g.shape), g)
