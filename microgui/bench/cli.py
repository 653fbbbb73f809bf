"""The command line of ``python -m microgui.bench``: which sections run and in what order."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Sequence

import numba
import numpy as np

from microgui.bench.cases import (
    CASES,
    QUICK_MAX_N,
    Baselines,
    complexity_table,
    format_rows,
    registered_cases,
    run_case,
    warm_up_report,
)
from microgui.bench.command import command_probe, command_rows
from microgui.bench.data import SEED
from microgui.bench.gui import gui_text
from microgui.bench.loading import load_probe
from microgui.bench.measures import assess_text, census_sweep_text, measures_text, suda2_text
from microgui.bench.memory import HUGE_N, MEMORY_N, memory_child, memory_probe
from microgui.bench.reference import reference_table
from microgui.bench.scale import scale_text
from microgui.bench.startup import startup_text

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m microgui.bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"only rows with n <= {QUICK_MAX_N:,}; no memory probe, sweep or measures",
    )
    parser.add_argument(
        "--only", metavar="NAME", help="only the rows of this method (e.g. mdav-generic)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="R",
        help="best of R timings (default: 3 for rows under 1 s, else 1)",
    )
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=100_000,
        metavar="N",
        help="measure the numpy MDAV baseline up to N records; above, extrapolate and mark (est.) "
        "(default 100,000; 0 = no baseline)",
    )
    parser.add_argument(
        "--huge",
        action="store_true",
        help=f"run the memory probe's exact MDAV on {HUGE_N:,} records to the end (minutes)",
    )
    parser.add_argument(
        "--gui", action="store_true", help="also the app's redraw and event-loop measurements"
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also print the IL of every method on Census, Tarragona and EIA (k = 3, 4, 5, 10), "
        "read from ../shared/data or $MICROGUI_SHARED_DATA",
    )
    parser.add_argument(
        "--dask",
        nargs="?",
        type=int,
        const=10_000_000,
        metavar="N",
        help="only the Dask row (issue 17): N x 10 records (default 10,000,000) as Parquet in "
        "partitions, protected on a LocalCluster of 2 workers; client peak memory and IL "
        "against local blocking (minutes)",
    )
    parser.add_argument(
        "--spark",
        nargs="?",
        type=int,
        const=1_000_000,
        metavar="N",
        help="only the Spark row (issue 33): N x 10 records (default 1,000,000) as Parquet, "
        "protected with --engine spark on local[2]; the driver's peak memory, and the Dask "
        "row's time on the same size beside it (minutes)",
    )
    parser.add_argument(
        "--load",
        action="store_true",
        help="only the loading row (issue 17): read_table of a 1,000,000 x 10 CSV in a fresh "
        "process, time and peak memory against the file size (part of the full run)",
    )
    parser.add_argument(
        "--command",
        action="store_true",
        help="only the whole-command rows (issue 17): microgui protect of a 50,000 and a "
        "100,000 x 10 CSV (with --huge also 1,000,000), CSV in and out, wall time of a fresh "
        "process (the 50,000 row is part of the full run)",
    )
    parser.add_argument(
        "--search",
        action="store_true",
        help="only the exact-MDAV search table (issue 17): pruned and brute-force kernels and "
        "the numpy baseline, same partition checked, growth exponents; with --huge also "
        "1,000,000 records, both kernels measured (minutes)",
    )
    parser.add_argument(
        "--threads",
        action="store_true",
        help="only the threads scaling rows (issue 33): exact MDAV at 100,000 x 10 (with --huge "
        "also 1,000,000) on 1, 2 and all cores, forced and adaptive, same labels checked",
    )
    parser.add_argument(
        "--split-queries",
        action="store_true",
        help="only the probe of splitting one MDAV query over two threads (issue 33): the "
        "two-thread spin barrier's cost and the k-1 nearest search split in two at 100,000 x 10",
    )
    parser.add_argument(
        "--suppression",
        action="store_true",
        help="only the local-suppression table (issue 31): Adult and sdcMicro's testdata at "
        "k = 3 and 5 against sdcMicro's localSuppression (part of the full run)",
    )
    parser.add_argument(
        "--command-memory",
        action="store_true",
        help="only the whole command's memory and overhead rows (issue 33): peak RSS of "
        "microgui protect against its CSV (200,000 x 10; with --huge 1,000,000 x 10, minutes) "
        "and the 100,000 x 10 command's time against its kernel's",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="with --command-memory: the peak RSS of each phase of the command instead "
        "(reading, kernel, report and its measures, check, write; Linux)",
    )
    parser.add_argument(
        "--memory-child", nargs=3, metavar=("NPY", "K", "WHOLE"), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--command-phases-child",
        nargs=4,
        metavar=("CSV", "OUT", "D", "K"),
        help=argparse.SUPPRESS,
    )
    parser.add_argument(
        "--command-memory-child",
        nargs=4,
        metavar=("CSV", "OUT", "D", "K"),
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args(argv)
    if args.memory_child:
        path, k, whole = args.memory_child
        return memory_child(path, int(k), whole == "True")
    if args.command_memory_child:
        from microgui.bench.command_memory import command_memory_child

        source, out, d, k = args.command_memory_child
        return command_memory_child(source, out, int(d), int(k))
    if args.command_phases_child:
        from microgui.bench.command_phases import command_phases_child

        source, out, d, k = args.command_phases_child
        return command_phases_child(source, out, int(d), int(k))
    if args.command_memory and args.phases:
        from microgui.bench.command_phases import phases_text

        print(phases_text(huge=args.huge), flush=True)
        return 0
    if args.command_memory:
        from microgui.bench.command_memory import command_memory_text

        print(command_memory_text(huge=args.huge), flush=True)
        return 0
    if args.dask:
        from microgui.bench.partitioned import partitioned_text

        print(partitioned_text(args.dask), flush=True)
        return 0
    if args.spark:
        from microgui.bench.spark_row import spark_text

        print(spark_text(args.spark), flush=True)
        return 0
    if args.load:
        print(load_probe().text(), flush=True)
        return 0
    if args.search:
        from microgui.bench.search import search_text

        print(search_text(huge=args.huge, repeat=args.repeat or 3), flush=True)
        return 0
    if args.threads:
        from microgui.bench.threads import threads_text

        print(threads_text(huge=args.huge), flush=True)
        return 0
    if args.split_queries:
        from microgui.bench.split_queries import split_queries_text

        print(split_queries_text(), flush=True)
        return 0
    if args.suppression:
        from microgui.bench.suppression import suppression_text

        print(suppression_text() or "local suppression: ../shared/data not found", flush=True)
        return 0
    if args.command:
        for result in command_rows(huge=args.huge):
            print(result.text(), flush=True)
        return 0
    cases = [
        c
        for c in CASES + registered_cases()
        if (not args.quick or c.n <= QUICK_MAX_N) and (args.only is None or c.method == args.only)
    ]
    if not cases:
        known = ", ".join(sorted({c.method for c in CASES + registered_cases()}))
        print(f"no benchmark rows for {args.only!r}; methods: {known}", file=sys.stderr)
        return 2
    print(
        f"microgui benchmark: Python {platform.python_version()}, numpy {np.__version__}, "
        f"numba {numba.__version__}, {os.cpu_count()} CPU(s), {platform.machine()}",
        flush=True,
    )
    print(
        f"data: correlated_data(n, d, seed={SEED}) (see its docstring) unless noted; "
        "time of the partition only unless note=run"
    )
    print(warm_up_report(), flush=True)
    baselines = Baselines(args.baseline_max, args.repeat) if args.baseline_max > 0 else None
    rows = []
    for case in cases:
        rows.append(run_case(case, args.repeat, baselines))
        print(
            f"  done: {case.method} n={case.n:,} ({rows[-1].seconds:.2f} s)",
            file=sys.stderr,
            flush=True,
        )
    print(format_rows(rows))
    if baselines is not None:
        print(
            "numpy MDAV: numpy_mdav on the same records; x numpy = its time / the row's time; "
            "(est.) = extrapolated by n² from the largest measured n, not measured; "
            "same = the MDAV row's partition equals numpy MDAV's"
        )
    targets = [r for r in rows if r.case.target is not None]
    if targets:
        missed = [r for r in targets if r.seconds > (r.case.target or 0.0)]
        print(f"targets: {len(targets) - len(missed)} of {len(targets)} met")
    print()
    print("stated complexity of each method:")
    print(complexity_table())
    if args.only in (None, "mdav") and not args.quick:
        print()
        print("memory (issue 6 target: MDAV on 1,000,000 x 10 peaks at <= 3 x input + 300 MB):")
        print("  " + memory_probe(MEMORY_N).text(), flush=True)
        print("  " + memory_probe(HUGE_N, whole=args.huge).text(), flush=True)
    if args.only is None and not args.quick:
        print()
        print(
            "loading (issue 17 target: a 1,000,000 x 10 CSV read in <= 2 s, peak <= 3 x the file):"
        )
        print("  " + load_probe().text(), flush=True)
        print()
        print("whole command (issue 17 target: microgui protect of a 50,000 x 10 CSV in <= 1.5 s):")
        print("  " + command_probe().text(), flush=True)
        print()
        print(scale_text(), flush=True)
        sweep = census_sweep_text()
        if sweep is not None:
            print()
            print(sweep)
        print(measures_text())
        suda2_line = suda2_text()
        if suda2_line is not None:
            print(suda2_line)
        assess_line = assess_text()
        if assess_line is not None:
            print(assess_line)
        from microgui.bench.suppression import suppression_text

        suppression = suppression_text()
        if suppression is not None:
            print()
            print(suppression, flush=True)
        from microgui.bench.plan import plan_text

        plan_line = plan_text()  # issue 31: a four-step plan on Adult
        if plan_line is not None:
            print(plan_line)
    if args.only is None:
        print()
        print(startup_text(quick=args.quick), flush=True)
    if args.gui:
        print()
        print(gui_text())
    if args.reference:
        only = [args.only] if args.only else None
        table = reference_table(only)
        print()
        if table is None:
            print("reference IL: ../shared/data not found (set MICROGUI_SHARED_DATA)")
        else:
            print("information loss IL % on the reference sets (all columns z-scored):")
            print(table)
    return 0
