"""Shared helpers of the Qt tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from microgui.core.table.dataset import Dataset
from microgui.qt.controller import AppController

__all__ = ["SignalRecorder", "large_continuous_dataset"]

RUN_SIGNALS = ("run_started", "run_progress", "run_finished", "run_failed", "run_cancelled")


class SignalRecorder:
    """Records the run signals of a controller as (name, args) in arrival order."""

    def __init__(self, controller: AppController) -> None:
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        for name in RUN_SIGNALS:
            getattr(controller, name).connect(lambda *args, n=name: self.events.append((n, args)))

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    def compact(self) -> list[str]:
        """Signal names with consecutive repeats folded (progress*)."""
        out: list[str] = []
        for name in self.names():
            if not out or out[-1] != name:
                out.append(name)
        return out

    def of(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.events if n == name]


def large_continuous_dataset(n: int = 200_000, d: int = 10, seed: int = 0) -> Dataset:
    """n × d random continuous quasi-identifiers: MDAV takes about a minute on it."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{i}" for i in range(d)])
    return Dataset.from_frame(frame)
