"""The Dask row (issue 17): ``microgui protect --engine dask`` on a table that the client never
loads, generated as Parquet in partitions, on a LocalCluster of 2 workers; the client's peak
memory against the 1 GB target, and the IL against blocking on one machine.

Run with ``python -m microgui.bench --dask [N]`` (default N = 10,000,000; minutes)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from microgui.bench.data import SEED
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists

__all__ = [
    "DASK_N",
    "DASK_PARTS",
    "CLIENT_TARGET_MB",
    "write_parts",
    "run_measured",
    "partitioned_text",
]

#: The issue's size: 10,000,000 records x 10, in this many Parquet files.
DASK_N = 10_000_000
DASK_PARTS = 20
#: The client's peak resident memory target (MB).
CLIENT_TARGET_MB = 1024.0


def write_parts(folder: Path, n: int, d: int = 10, parts: int = DASK_PARTS) -> list[str]:
    """``n`` records of ``d`` correlated attributes (the recipe of
    :func:`~microgui.bench.data.correlated_data`: correlation 0.6^|i-j|, every third column
    log-normal; 4 decimals) written as ``parts`` Parquet files, one partition at a time, so the
    table is never whole in memory here either. Returns the column names."""
    names = [f"x{j}" for j in range(d)]
    lags = np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    chol = np.linalg.cholesky(0.6**lags).T
    folder.mkdir(parents=True, exist_ok=True)
    for p, rows in enumerate(np.array_split(np.arange(n), parts)):
        rng = np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(p,)))
        x = rng.standard_normal((len(rows), d)) @ chol
        x[:, 2::3] = np.exp(x[:, 2::3])
        pd.DataFrame(x.round(4), columns=names).to_parquet(
            folder / f"part-{p:03d}.parquet", row_group_size=250_000
        )
    return names


def _peak_mb(pid: int) -> float | None:
    """VmHWM (peak resident memory) of a live process, from /proc (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**10
    except (OSError, ValueError, IndexError):
        return None
    return None


def _descendants(pid: int) -> list[int]:
    """The live descendants of ``pid`` (Linux /proc): the JVM that pyspark starts, its Python
    workers."""
    out: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in children:
                out.append(int(child))
                stack.append(int(child))
    return out


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def run_measured(
    argv: list[str], what: str, child_command: str | None = None
) -> tuple[float, float | None, float | None, str]:
    """Run the command line in a fresh process, sampling every 50 ms its peak memory and (with
    ``child_command``, e.g. ``"java"``) the peak of its descendants of that name (VmHWM only
    grows, so the last reading before it exits is the peak). Returns (seconds, peak MB, the
    descendants' peak MB, stderr); a failed run raises naming ``what``."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak: list[float] = []
    other: list[float] = []

    def sample() -> None:
        while child.poll() is None:
            value = _peak_mb(child.pid)
            if value is not None:
                peak.append(value)
            if child_command is not None:
                for pid in _descendants(child.pid):
                    if _command(pid) == child_command:
                        value = _peak_mb(pid)
                        if value is not None:
                            other.append(value)
            time.sleep(0.05)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _out, err = child.communicate()
    seconds = time.perf_counter() - started
    watcher.join()
    if child.returncode != 0:
        raise RuntimeError(f"the {what} run failed:\n{err.strip()[-2000:]}")
    return seconds, max(peak, default=None), max(other, default=None), err


def partitioned_text(n: int = DASK_N, *, local: bool = True) -> str:
    """The Dask row: generate, protect (MDAV, k = 5, ``--block-size auto``) on a LocalCluster
    of 2 single-thread worker processes through the command line, and (``local``) the same
    table blocked on this machine with the local engine, for the IL."""
    import distributed

    lines = [
        f"Dask, partitioned (issue 17 target: 10,000,000 x 10 with the client's peak <= "
        f"{CLIENT_TARGET_MB:.0f} MB; MDAV, k=5, --block-size auto, LocalCluster of 2 workers):"
    ]
    with tempfile.TemporaryDirectory(prefix="microgui-dask-bench-") as tmp:
        folder = Path(tmp) / "table"
        started = time.perf_counter()
        names = write_parts(folder, n)
        made = time.perf_counter() - started
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster:
            report_file = Path(tmp) / "report.json"
            argv = [
                sys.executable, "-m", "microgui", "protect", str(folder),
                "-o", str(Path(tmp) / "out.parquet"), "--method", "mdav", "-k", "5",
                "--qi", ",".join(names), "--block-size", "auto", "--seed", str(SEED),
                "--engine", "dask", "--scheduler", str(cluster.scheduler_address),
                "--report", str(report_file), "--quiet",
            ]  # fmt: skip
            seconds, peak, _none, _err = run_measured(argv, "Dask")
        report = json.loads(report_file.read_text())
        scale = report["scale"]
        verdict = "" if peak is None else ("PASS" if peak <= CLIENT_TARGET_MB else "MISS")
        shown = "unknown (no /proc)" if peak is None else f"{peak:.0f} MB"
        lines.append(
            f"  {n:,} x {len(names)} Parquet in {scale['input_partitions']} partitions "
            f"(generated in {made:.1f} s): {seconds:.1f} s for the whole command; client peak "
            f"RSS {shown} (target <= {CLIENT_TARGET_MB:.0f} MB: {verdict}); IL "
            f"{report['information_loss']:.4f} %; {scale['n_blocks']} blocks of "
            f"{scale['block_sizes']['min']:,}-{scale['block_sizes']['max']:,} "
            f"(split on the {scale['split']}; {scale['blocks_merged']} merged, "
            f"{scale['blocks_split_again']} split again)"
        )
        if local:
            frame = pd.read_parquet(folder)
            dataset = Dataset(frame, roles_from_lists(names, qi=names))
            started = time.perf_counter()
            result = run_protection(dataset, RunSpec.make("mdav", 5, seed=SEED, block_size="auto"))
            local_seconds = time.perf_counter() - started
            del frame, dataset
            il_local = result.information_loss
            lines.append(
                f"  the same table blocked on this machine (local engine, all in memory): IL "
                f"{il_local:.4f} %, {local_seconds:.1f} s (run_protection only); Dask's IL "
                f"{100 * (report['information_loss'] / il_local - 1):+.2f} % relative"
            )
    lines.append(
        "  (timings on a shared 2-core machine; the LocalCluster's scheduler runs in the "
        "benchmark's process, the client in its own)"
    )
    return "\n".join(lines)
