"""The Spark row (issue 33, item 3): ``microgui protect --engine spark --master local[2]`` on a
table generated as Parquet in partitions (the Dask row's table,
:func:`microgui.bench.partitioned.write_parts`), the driver's peak memory against the 1 GB
target, and (``dask``) the Dask row's time on a table of the same size beside it.

Run with ``python -m microgui.bench --spark [N]`` (default N = 1,000,000; minutes)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from microgui.bench.data import SEED
from microgui.bench.partitioned import CLIENT_TARGET_MB, _peak_mb, partitioned_text, write_parts

__all__ = ["SPARK_N", "spark_text"]

#: The issue's size: 1,000,000 records x 10.
SPARK_N = 1_000_000


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


def _run(argv: list[str]) -> tuple[float, float | None, float | None, str]:
    """The command in a fresh process: (seconds, the driver's Python peak MB, the JVM's peak
    MB, stderr), sampled every 50 ms (VmHWM only grows)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    python: list[float] = []
    java: list[float] = []

    def sample() -> None:
        while child.poll() is None:
            value = _peak_mb(child.pid)
            if value is not None:
                python.append(value)
            for pid in _descendants(child.pid):
                if _command(pid) == "java":
                    value = _peak_mb(pid)
                    if value is not None:
                        java.append(value)
            time.sleep(0.05)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _out, err = child.communicate()
    seconds = time.perf_counter() - started
    watcher.join()
    if child.returncode != 0:
        raise RuntimeError(f"the Spark run failed:\n{err.strip()[-2000:]}")
    return seconds, max(python, default=None), max(java, default=None), err


def spark_text(n: int = SPARK_N, *, dask: bool = True) -> str:
    """The Spark row: generate, protect (MDAV, k = 5, ``--block-size auto``) on ``local[2]``
    through the command line; with ``dask`` the Dask row on the same size beside it."""
    lines = [
        f"Spark, partitioned (issue 33 target: 1,000,000 x 10 with the client's peak <= "
        f"{CLIENT_TARGET_MB:.0f} MB; MDAV, k=5, --block-size auto, --master local[2]):"
    ]
    with tempfile.TemporaryDirectory(prefix="microgui-spark-bench-") as tmp:
        folder = Path(tmp) / "table"
        names = write_parts(folder, n)
        report_file = Path(tmp) / "report.json"
        argv = [
            sys.executable, "-m", "microgui", "protect", str(folder),
            "-o", str(Path(tmp) / "out"), "--method", "mdav", "-k", "5",
            "--qi", ",".join(names), "--block-size", "auto", "--seed", str(SEED),
            "--engine", "spark", "--master", "local[2]", "--report", str(report_file), "--quiet",
        ]  # fmt: skip
        seconds, python, java, _err = _run(argv)
        report = json.loads(report_file.read_text())
    scale = report["scale"]
    verdict = "" if python is None else ("PASS" if python <= CLIENT_TARGET_MB else "MISS")
    lines.append(
        f"  {n:,} x {len(names)} Parquet in {scale['input_partitions']} partitions: "
        f"{seconds:.1f} s for the whole command (Spark's start included); driver peak RSS: "
        f"Python {python or 0:.0f} MB (target <= {CLIENT_TARGET_MB:.0f} MB: {verdict}), Java "
        f"{java or 0:.0f} MB (local mode: the executors live in it too); IL "
        f"{report['information_loss']:.4f} %; {scale['n_blocks']} blocks of "
        f"{scale['block_sizes']['min']:,}-{scale['block_sizes']['max']:,} (split on the "
        f"{scale['split']})"
    )
    if dask:
        lines.append(partitioned_text(n, local=False))
    return "\n".join(lines)
