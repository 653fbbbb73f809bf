"""Work counted, not timed: the Python calls and microgui lines a step runs, and wide tables to
run it on (issue 27's resource limits)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import microgui

PACKAGE = os.path.dirname(microgui.__file__)


def count_work(run: Callable[[], object]) -> int:
    """How much Python work ``run`` does: every Python call, and every line run in microgui
    (a loop of ours over the columns inside a loop over the columns shows up here even when it
    calls nothing)."""
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        run()
    finally:
        sys.settrace(previous)
    return count


def wide_csv(path: Path, columns: int, rows: int, seed: int = 0) -> Path:
    """Two continuous quasi-identifiers (age, income) and ``columns - 2`` small codes."""
    rng = np.random.default_rng(seed)
    names = ["age", "income", *(f"c{i}" for i in range(columns - 2))]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(names) + "\n")
        for _ in range(rows):
            cells = [str(rng.integers(18, 90)), str(rng.integers(1000, 9000))]
            cells += map(str, rng.integers(0, 5, columns - 2))
            handle.write(",".join(cells) + "\n")
    return path
