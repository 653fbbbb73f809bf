"""The cost of blocking (issue 10): IL and time of exact MDAV against blocks of several sizes, and
the million-record row."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from microgui.bench.data import SEED, correlated_data
from microgui.bench.memory import HUGE_N
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

__all__ = [
    "BLOCKED_N",
    "BLOCK_SIZES",
    "MILLION_BLOCK_SIZE",
    "MILLION_TARGET",
    "blocking_cost",
    "scale_text",
    "blocked_line",
]


#: Blocked MDAV: block sizes tried against exact MDAV at :data:`BLOCKED_N`, and the block size of
#: the million-record run (issue 6 "Scale beyond one block": IL cost aim <= +3 % relative; a
#: million records x 10 in <= 60 s with the local engine).
BLOCKED_N = 100_000

BLOCK_SIZES = (10_000, 25_000)

MILLION_BLOCK_SIZE = 25_000

MILLION_TARGET = 60.0


def blocking_cost(
    values: np.ndarray,
    k: int,
    block_sizes: Sequence[int],
    *,
    method: str = "mdav",
    exact: bool = True,
    workers: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Information loss and time of blocked runs against the unblocked (exact) run.

    Parameters
    ----------
    values
        (n, d) continuous records (the benchmark's ``correlated_data(n, d).continuous``).
    k
        Minimum group size.
    block_sizes
        The block sizes to try (each >= 2k).
    method
        A method for continuous quasi-identifiers.
    exact
        Also run without blocking (the reference; O(n²) for MDAV, skip it for a million).
    workers
        Processes of the local engine (None: one per core).

    Returns
    -------
    list of dict
        One row per run, the unblocked one first when ``exact``: ``block_size`` (None for the
        unblocked run), ``n_blocks``, ``block_size_min``, ``block_size_max``, ``engine``,
        ``processes``, ``information_loss`` (IL = 100·SSE/SST, %), ``seconds`` (whole run,
        blocking and aggregation included) and ``relative_il_increase`` (IL / exact IL - 1,
        None without the exact run).
    """
    x = np.asarray(values, dtype=np.float64)
    names = [f"x{j}" for j in range(x.shape[1])]
    frame = pd.DataFrame(x, columns=names)
    roles = RoleMap.from_dict(
        {c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS) for c in names}
    )
    dataset = Dataset(frame, roles)
    sizes: list[int | None] = ([None] if exact else []) + [int(b) for b in block_sizes]
    rows: list[dict[str, Any]] = []
    reference: float | None = None
    for size in sizes:
        spec = RunSpec.make(method, k, seed=seed, block_size=size, workers=workers)
        started = time.perf_counter()
        result = run_protection(dataset, spec)
        seconds = time.perf_counter() - started
        il = result.information_loss
        scale = dict(result.report.get("scale", {}))
        if size is None:
            reference = il
        rows.append(
            {
                "block_size": size,
                "n_blocks": int(scale.get("n_blocks", 1)),
                "block_size_min": int(scale.get("block_sizes", {}).get("min", len(x))),
                "block_size_max": int(scale.get("block_sizes", {}).get("max", len(x))),
                "engine": scale.get("engine", "in-process"),
                "processes": int(scale.get("processes", 1)),
                "information_loss": il,
                "seconds": seconds,
                "relative_il_increase": None if reference is None else il / reference - 1.0,
            }
        )
    return rows


def scale_text() -> str:
    """Blocked runs (issue 6 "Scale beyond one block") through :func:`blocking_cost`: blocked
    MDAV's IL against exact MDAV at :data:`BLOCKED_N` records, and 1,000,000 x 10 in blocks of
    :data:`MILLION_BLOCK_SIZE` on the local engine against its 60 s target (about 10-15 s here,
    so it is in the default run)."""
    lines = ["blocked MDAV (k=5, d=10, whole run_protection; IL cost aim <= +3 % relative):"]
    rows = blocking_cost(correlated_data(BLOCKED_N, 10).continuous, 5, BLOCK_SIZES, seed=SEED)
    for row in rows:
        lines.append("  " + blocked_line(BLOCKED_N, row))
    (row,) = blocking_cost(
        correlated_data(HUGE_N, 10).continuous, 5, (MILLION_BLOCK_SIZE,), exact=False, seed=SEED
    )
    verdict = "PASS" if row["seconds"] <= MILLION_TARGET else "MISS"
    lines.append("  " + blocked_line(HUGE_N, row) + f"; target <= {MILLION_TARGET:g} s: {verdict}")
    return "\n".join(lines)


def blocked_line(n: int, row: dict[str, Any]) -> str:
    if row["block_size"] is None:
        return f"{n:,} exact: IL {row['information_loss']:.4f} %, {row['seconds']:.2f} s"
    cost = row["relative_il_increase"]
    versus = f", IL vs exact {100 * cost:+.2f} % relative" if cost is not None else ""
    return (
        f"{n:,} in blocks of <= {row['block_size']:,} ({row['n_blocks']} blocks of "
        f"{row['block_size_min']:,}-{row['block_size_max']:,}, {row['engine']}, "
        f"{row['processes']} process(es)): IL {row['information_loss']:.4f} %{versus}, "
        f"{row['seconds']:.2f} s"
    )
