"""The whole command's peak memory phase by phase (issue 33): ``microgui protect`` of a standard
normal CSV (:func:`~microgui.bench.command_memory.write_normal_csv`) in a fresh process, with
the peak resident memory (VmHWM) of each phase: reading, the numbers held, the quasi-identifier
matrix, the kernel, aggregation, the released numbers, the report and its measures (the IL lower
bound's per-attribute and principal-axis parts apart), and the release (its check and the write).

Each phase is a function of the run wrapped here: on entering and leaving it, the peak so far is
credited to the phase that was running and reset (Linux: ``5`` written to
``/proc/self/clear_refs``), so each phase gets its own peak, exact rather than sampled; a phase
nested in another (the report's measures) is credited apart, its parent keeps the rest. Only
where ``/proc/self/clear_refs`` can be written (Linux); elsewhere the probe says so. The phases
before the kernel are measured with the kernel cache warm (a first run after installing compiles
the kernels in the command's process, whose memory would count).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PHASES", "PhasePeak", "command_phases_child", "command_phases_probe", "phases_text"]

#: (module, function, phase): the functions whose calls are the phases (indented: nested)
PHASES = (
    ("microgui.cli.protect", "_read_input", "read the CSV"),
    ("microgui.core.table.dataset", "continuous_as_numbers", "continuous_as_numbers"),
    ("microgui.core.runs.protect", "prepare_qi", "prepare_qi"),
    ("microgui.core.runs.protect", "run_and_refine", "kernel"),
    ("microgui.core.runs.protect", "aggregate", "aggregate"),
    ("microgui.core.runs.protect", "released_numbers", "released_numbers"),
    ("microgui.core.runs.protect", "build_report", "build_report"),
    ("microgui.core.runs.protect", "mixed_information_loss", "  mixed information loss"),
    ("microgui.core.runs.protect", "lower_bound_report", "  IL lower bound"),
    ("microgui.core.methods.bound", "attribute_bound_sse", "    per attribute"),
    ("microgui.core.methods.bound", "principal_bound_sse", "    principal axes"),
    ("microgui.core.runs.protect", "group_measures", "  group measures (k, attribute disclosure)"),
    ("microgui.core.runs.protect", "risk_before_after", "  risk before/after"),
    ("microgui.core.release.check", "export_run", "export_run"),
    ("microgui.core.release.check", "check_export", "  check_export"),
    ("microgui.core.release.check", "write_files_atomic", "  write"),
)

_OUTSIDE = "between phases"


def _status_mb(key: str) -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 2**10
    raise OSError(f"no {key} in /proc/self/status")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


class _Credits:
    """The peak of each phase, credited at each phase's edges."""

    def __init__(self) -> None:
        self.peaks: dict[str, float] = {}
        self.seconds: dict[str, float] = {}
        self.stack = [_OUTSIDE]

    def credit(self) -> None:
        label = self.stack[-1]
        self.peaks[label] = max(self.peaks.get(label, 0.0), _status_mb("VmHWM"))
        _reset_peak()

    def wrap(self, fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def phase(*args: Any, **kwargs: Any) -> Any:
            self.credit()
            self.stack.append(label)
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - started
                self.credit()
                self.stack.pop()

        return phase


def command_phases_child(source: str, out: str, d: int, k: int) -> int:
    """Body of the probe's subprocess: the command with its phases wrapped, then JSON."""
    from microgui.bench.command_memory import _args

    _reset_peak()  # fails here, not mid-run, where it cannot be written
    credits = _Credits()
    import microgui.cli.protect  # noqa: F401 - the modules whose functions are wrapped

    for module_name, name, label in PHASES:
        module = importlib.import_module(module_name)
        setattr(module, name, credits.wrap(getattr(module, name), label))
    from microgui.cli import main

    started = time.perf_counter()
    code = main(_args(Path(source), Path(out), d, k))
    seconds = time.perf_counter() - started
    credits.credit()
    rows = [
        {"phase": label, "peak_mb": credits.peaks.get(label), "seconds": credits.seconds.get(label)}
        for label in [_OUTSIDE, *(label for *_, label in PHASES)]
    ]
    print(json.dumps({"code": code, "seconds": seconds, "phases": rows}))
    return 0


@dataclass(frozen=True)
class PhasePeak:
    """One phase's peak resident memory (MB = 2**20 bytes; None: the phase did not run)."""

    phase: str
    peak_mb: float | None
    seconds: float | None


def command_phases_probe(n: int, d: int = 10, k: int = 5) -> tuple[float, list[PhasePeak]]:
    """The CSV's size (MB) and the command's peak per phase (a fresh process, kernels warm)."""
    from microgui.bench.command_memory import write_normal_csv
    from microgui.core.methods import mdav as mdav_module

    mdav_module.warm_up()  # compiled here when the cache is stale, never in the measured child
    with tempfile.TemporaryDirectory(prefix="microgui-bench-") as tmp:
        source = write_normal_csv(Path(tmp) / "normal.csv", n, d)
        done = subprocess.run(
            [sys.executable, "-m", "microgui.bench", "--command-phases-child", os.fspath(source),
             os.fspath(Path(tmp) / "out.csv"), str(d), str(k)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        size = source.stat().st_size / 2**20
    if done.returncode != 0:
        raise RuntimeError(f"command phases probe failed:\n{done.stderr.strip()}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["code"] != 0:
        raise RuntimeError(f"microgui protect failed:\n{done.stderr.strip()}")
    return size, [PhasePeak(r["phase"], r["peak_mb"], r["seconds"]) for r in out["phases"]]


def phases_text(huge: bool = False) -> str:
    """The table: each phase's peak against the CSV (1,000,000 x 10 with ``huge``, else
    200,000 x 10)."""
    from microgui.bench.command_memory import MEMORY_TARGET

    if not os.access("/proc/self/clear_refs", os.W_OK):
        return "whole command, peak memory per phase: needs Linux's /proc/self/clear_refs"
    n = 1_000_000 if huge else 200_000
    size, rows = command_phases_probe(n)
    lines = [
        f"protect CLI {n:,} x 10 (standard normal CSV, {size:.0f} MB), peak RSS per phase "
        f"(target <= {MEMORY_TARGET:g}x the CSV = {MEMORY_TARGET * size:.0f} MB):"
    ]
    for row in rows:
        if row.peak_mb is None:
            continue
        took = f"{row.seconds:8.2f} s" if row.seconds is not None else ""
        lines.append(f"  {row.phase:28s} {row.peak_mb:6.0f} MB  {row.peak_mb / size:5.2f}x  {took}")
    return "\n".join(lines)
