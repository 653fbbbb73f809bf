"""The memory probe (issue 6): MDAV on 1,000,000 × 10 in a fresh subprocess, its peak resident
memory against the target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from microgui.bench.data import correlated_data
from microgui.core.methods import mdav as mdav_module

__all__ = ["MEMORY_N", "HUGE_N", "memory_child", "MemoryResult", "memory_probe"]


#: Input sizes of the memory probe: exact MDAV run to the end at 200,000 (about 12 s here), and at
#: 1,000,000 (the issue's target size) stopped after its first batch, or with ``--huge`` run to
#: the end (about 8 minutes of O(n²) work on this machine).
MEMORY_N = 200_000

HUGE_N = 1_000_000


def _maxrss_mb() -> float:
    """This process's peak resident memory: VmHWM where /proc exists (Linux), else ru_maxrss.

    Linux's ru_maxrss survives exec: a child forked from a large parent starts with the
    parent's peak, which would hide everything below it; VmHWM belongs to the new address space.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**10  # kB
    except (OSError, ValueError, IndexError):
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes there, KiB on Linux


def _current_rss_mb() -> float | None:
    try:  # Linux: resident pages, second field of /proc/self/statm
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _read_npy_in_place(path: str) -> np.ndarray:
    # np.load reads through a temporary buffer, whose peak (about 1.5x the input, measured) would
    # hide MDAV's own; reading straight into the final array costs the input and nothing more.
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(f)
        x = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
        f.readinto(memoryview(x).cast("B"))
    return x


def memory_child(path: str, k: int, whole: bool) -> int:
    """Body of the probe's subprocess: load the kernel and the data, run MDAV (to the end, or
    only its first batch of groups unless ``whole``), print JSON."""
    from microgui.core.progress import RunCancelled

    mdav_module.warm_up()
    x = _read_npy_in_place(path)
    before_peak, before_now = _maxrss_mb(), _current_rss_mb()

    def progress(fraction: float, status: str = "", /) -> None:
        # The first report after a batch of groups: every array MDAV uses has been allocated
        # and written (the kernel allocates only O(k + d) per batch after that).
        if not whole and fraction > 0:
            raise RunCancelled

    started = time.perf_counter()
    try:
        mdav_module.mdav(x, k, progress=progress)
    except RunCancelled:
        pass
    seconds = time.perf_counter() - started
    from microgui.core.io import json_text

    record = {
        "before_peak_mb": before_peak,
        "before_mb": before_now,
        "peak_mb": _maxrss_mb(),
        "seconds": seconds,
    }
    print(json_text(record, indent=None), end="")
    return 0


@dataclass(frozen=True)
class MemoryResult:
    """Peak resident memory of exact MDAV in a fresh process (MB = 2**20 bytes)."""

    n: int
    d: int
    k: int
    input_mb: float
    #: peak RSS after the imports, the kernel load and the data load (before MDAV runs)
    before_peak_mb: float
    #: resident memory at that moment (None where /proc is absent)
    before_mb: float | None
    #: peak RSS at the end: the whole process's peak
    peak_mb: float
    seconds: float
    #: False: MDAV was stopped after its first batch of groups (its memory is all allocated then)
    whole: bool = True

    @property
    def limit_mb(self) -> float:
        """Issue 6's target: 3x the input matrix + 300 MB."""
        return 3 * self.input_mb + 300

    @property
    def passed(self) -> bool:
        return self.peak_mb <= self.limit_mb

    def text(self) -> str:
        grown = self.peak_mb - self.before_peak_mb
        now = f", resident {self.before_mb:.0f} MB" if self.before_mb is not None else ""
        return (
            f"exact MDAV {self.n:,} x {self.d}, k={self.k}, fresh process: input {self.input_mb:.0f} MB; "
            f"peak RSS {self.peak_mb:.0f} MB (before MDAV: peak {self.before_peak_mb:.0f} MB{now}; "
            f"MDAV added {grown:.0f} MB = {grown / self.input_mb:.2f}x the input); "
            f"target peak <= 3 x input + 300 MB = {self.limit_mb:.0f} MB: "
            f"{'PASS' if self.passed else 'MISS'}; "
            + (
                f"MDAV took {self.seconds:.1f} s"
                if self.whole
                else f"MDAV stopped after its first batch of groups ({self.seconds:.1f} s): every "
                "array it uses is allocated and written by then; --huge runs it to the end"
            )
        )


def memory_probe(n: int, d: int = 10, k: int = 5, *, whole: bool = True) -> MemoryResult:
    """Peak resident memory of :func:`~microgui.core.methods.mdav.mdav` on ``n`` x ``d`` records,
    measured in a fresh Python process (VmHWM of ``/proc/self/status``; ``resource.getrusage``
    ru_maxrss where there is no /proc, see :func:`_maxrss_mb`).

    The records (:func:`correlated_data`) are made here and saved to a temporary ``.npy`` file
    that the child loads, so the peak of making them (several temporary n x d arrays) does not
    count; the child reports its peak before and after the run, so both the process's peak and
    MDAV's own increase are shown. ``whole=False`` stops MDAV (through its progress callback)
    after the first batch of groups: the peak is reached by then, which makes the million-record
    probe take seconds instead of minutes.
    """
    # Compile the kernel here if numba's cache is stale: compiling in the child would set its peak.
    mdav_module.warm_up()
    x = correlated_data(n, d).continuous
    with tempfile.TemporaryDirectory(prefix="microgui-bench-") as tmp:
        path = os.path.join(tmp, "records.npy")
        np.save(path, x)
        done = subprocess.run(
            [sys.executable, "-m", "microgui.bench", "--memory-child", path, str(k), str(whole)],
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"memory probe failed:\n{done.stderr.strip()}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return MemoryResult(
        n,
        d,
        k,
        x.nbytes / 2**20,
        out["before_peak_mb"],
        out["before_mb"],
        out["peak_mb"],
        out["seconds"],
        whole,
    )
