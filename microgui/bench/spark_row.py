"""The Spark row (issue 33, item 3): ``microgui protect --engine spark --master local[2]`` on a
table generated as Parquet in partitions (the Dask row's table,
:func:`microgui.bench.partitioned.write_parts`), the driver's peak memory against the 1 GB
target, and (``dask``) the Dask row's time on a table of the same size beside it.

Run with ``python -m microgui.bench --spark [N]`` (default N = 1,000,000; minutes)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from microgui.bench.data import SEED
from microgui.bench.partitioned import (
    CLIENT_TARGET_MB,
    partitioned_text,
    run_measured,
    write_parts,
)

__all__ = ["SPARK_N", "spark_text"]

#: The issue's size: 1,000,000 records x 10.
SPARK_N = 1_000_000


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
        seconds, python, java, _err = run_measured(argv, "Spark", child_command="java")
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
