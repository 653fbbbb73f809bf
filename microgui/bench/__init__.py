"""``python -m microgui.bench``: how long the methods take, as a table, against targets.

A package, one module a section: :mod:`~microgui.bench.data` (synthetic records and the numpy
baseline), :mod:`~microgui.bench.cases` (the timed rows), :mod:`~microgui.bench.startup` (start-up
and first-run times), :mod:`~microgui.bench.memory`, :mod:`~microgui.bench.scale`,
:mod:`~microgui.bench.measures`, :mod:`~microgui.bench.reference`, :mod:`~microgui.bench.gui`;
:mod:`~microgui.bench.cli` reads the options.

Each row is a :class:`BenchCase` in :data:`CASES`; a new method adds its rows there. Data are
synthetic and seeded (:func:`correlated_data`), z-scored as a run would; the time is the timed step
alone (the numba JIT is warmed up first and its compile or cache-load time printed apart), except
for rows marked "run", which time the whole ``run_protection`` (validation, partition,
aggregation, report). IL = 100·SSE/SST on the z-scores (``002_f464918b99c38812.txt`` §III).
"max gap" is the longest time between two progress calls, i.e. how late a cancel can take effect.

**Baseline.** Beside every row on continuous data, "numpy MDAV" is the time of
:func:`numpy_mdav` (a plain vectorized numpy MDAV, written here) on the very same records, n, d
and k, and "x" is that time over the row's: how many times faster than plain numpy the row is.
It is measured for n <= ``--baseline-max`` (default 100,000); above that it is extrapolated by n²
from the largest measured n at the same d and k and marked "(est.)", never shown as measured.
"same" says whether an MDAV row's partition equals the baseline's (a check of exactness at scale).

**Targets** (issue 6, this 2-core machine, d = 10, k = 5) are printed beside their rows with
PASS or MISS; the memory target is measured in a fresh subprocess (:func:`memory_probe`).

Methods registered with ``bench_sizes`` get rows automatically (timed through ``run_protection``,
note "run"); the table is followed by each method's stated complexity. ``--reference`` adds the IL
of every continuous method on Census, Tarragona and EIA at k = 3, 4, 5, 10.

Options: ``--quick`` (only n <= 10,000; no memory probe, sweep or measures), ``--only NAME`` (rows
of one method), ``--repeat R`` (best of R timings; by default 3 for rows under a second, else 1),
``--baseline-max N``, ``--huge`` (exact MDAV on 1,000,000 records run to the end: minutes),
``--gui`` (the app's redraw and event-loop measurements, Qt offscreen), ``--reference``,
``--load`` (only the loading row, :mod:`~microgui.bench.loading`: a 1,000,000 x 10 CSV read in a
fresh process; part of the full run), ``--command`` (only the whole-command row,
:mod:`~microgui.bench.command`: ``microgui protect`` of a 50,000 x 10 CSV, CSV in and out, in
fresh processes; part of the full run);
``--dask [N]`` prints only the Dask row (:mod:`~microgui.bench.partitioned`: N x 10 records as
Parquet in partitions on a LocalCluster of 2 workers, the client's peak memory; minutes);
``--spark [N]`` prints only the Spark row (:mod:`~microgui.bench.spark_row`: N x 10 records,
``--engine spark`` on local[2], the driver's peak memory, the Dask row's time beside it).
"""

from __future__ import annotations

from microgui.bench.cases import (
    CASES,
    Baselines,
    BenchCase,
    BenchRow,
    format_rows,
    registered_cases,
    run_case,
    warm_up_report,
)
from microgui.bench.cli import main
from microgui.bench.data import BenchData, correlated_data, mixed_data, numpy_mdav
from microgui.bench.memory import MemoryResult, memory_probe
from microgui.bench.reference import reference_table
from microgui.bench.scale import blocked_line, blocking_cost, scale_text
from microgui.bench.startup import startup_rows, startup_text

__all__ = [
    "BenchData",
    "BenchCase",
    "BenchRow",
    "CASES",
    "correlated_data",
    "mixed_data",
    "numpy_mdav",
    "run_case",
    "registered_cases",
    "warm_up_report",
    "format_rows",
    "Baselines",
    "memory_probe",
    "MemoryResult",
    "blocking_cost",
    "blocked_line",
    "scale_text",
    "reference_table",
    "startup_rows",
    "startup_text",
    "main",
]
