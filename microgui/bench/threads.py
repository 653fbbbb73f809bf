"""The threads scaling rows (issue 33, item 1): exact MDAV on 1, 2 and all cores.

For each table (the benchmark's standard :func:`correlated_data`, d = 10, k = 5; 100,000 records,
with ``huge`` also 1,000,000) and each kernel (pruned search; brute-force passes), the time on
1 thread and, for 2 and all cores, two times: *forced* (every batch on all threads: the
parallel kernels themselves) and *adaptive* (what a run does: batch by batch the faster of one
thread and all, :class:`~microgui.core.methods.threads.AdaptiveThreads`), with the share of the
batches the chooser gave to all threads. Every row checks that the labels equal the one-thread
labels. Speed-up = one-thread time / time. The targets of the issue (2 threads against 1):
>= 1.5x at 100,000, >= 1.7x at 1,000,000 - on an *idle* machine: when other programs hold the
cores a forced parallel run can be many times slower (the adaptive one then stays on one thread).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from microgui.bench.data import correlated_data
from microgui.core.methods import mdav as mdav_module
from microgui.core.methods.threads import (
    AdaptiveThreads,
    available_cores,
    max_threads,
    using_threads,
)
from microgui.text_table import text_table

__all__ = ["THREAD_TARGETS", "threads_text"]

#: 2 threads against 1, by records (issue 33).
THREAD_TARGETS = {100_000: 1.5, 1_000_000: 1.7}
K = 5


@contextmanager
def _forced() -> Iterator[None]:
    before = AdaptiveThreads.adaptive
    AdaptiveThreads.adaptive = False
    try:
        yield
    finally:
        AdaptiveThreads.adaptive = before


class _Counting(AdaptiveThreads):
    last: dict[int, int] = {}

    def record(self, threads: int, seconds: float, share: float = 1.0, full: bool = True) -> None:
        super().record(threads, seconds, share, full)
        _Counting.last = dict(self.used)


def _run(x: np.ndarray, search: str, threads: int) -> tuple[float, np.ndarray, float]:
    """Seconds, labels and the share of batches run on all threads."""
    original = mdav_module.AdaptiveThreads
    mdav_module.AdaptiveThreads = _Counting  # type: ignore[misc]
    _Counting.last = {}
    try:
        with using_threads(threads):
            started = time.perf_counter()
            labels = mdav_module.mdav(x, K, search=search)
            seconds = time.perf_counter() - started
    finally:
        mdav_module.AdaptiveThreads = original  # type: ignore[misc]
    used = _Counting.last
    total = sum(used.values()) or 1
    parallel = sum(c for t, c in used.items() if t > 1) / total
    return seconds, labels, parallel


def threads_text(huge: bool = False, sizes: tuple[int, ...] = (100_000,)) -> str:
    """The scaling table as text (``sizes``; with ``huge`` also 1,000,000 records)."""
    mdav_module.warm_up()
    cores = min(available_cores(), max_threads())
    counts = sorted({2, cores} - {1}) if cores >= 2 else []
    sizes = tuple(sizes) + ((1_000_000,) if huge else ())
    rows: list[list[str]] = []
    for n in sizes:
        x = correlated_data(n, 10).continuous
        for search in ("pruned", "brute") if n <= 100_000 else ("pruned",):
            one, ref, _ = _run(x, search, 1)
            rows.append([f"{n:,}", search, "1", f"{one:.2f}", "", "", "", "", "yes"])
            for t in counts:
                with _forced():
                    forced, lab_f, _ = _run(x, search, t)
                adaptive, lab_a, share = _run(x, search, t)
                same = np.array_equal(lab_f, ref) and np.array_equal(lab_a, ref)
                target = THREAD_TARGETS.get(n) if t == 2 else None
                rows.append(
                    [
                        f"{n:,}",
                        search,
                        str(t),
                        f"{forced:.2f}",
                        f"{one / forced:.2f}x" + (f" (target {target}x)" if target else ""),
                        f"{adaptive:.2f}",
                        f"{one / adaptive:.2f}x",
                        f"{100 * share:.0f} %",
                        "yes" if same else "NO",
                    ]
                )
    head = [
        "records",
        "kernel",
        "threads",
        "forced s",
        "speed-up",
        "adaptive s",
        "speed-up",
        "batches on all",
        "same labels",
    ]
    note = (
        f"threads scaling (issue 33): exact MDAV, d = 10, k = {K}, {cores} core(s) usable; "
        "forced = every batch on all threads, adaptive = what a run does. Only meaningful on an "
        "idle machine."
    )
    if not counts:
        note += " One core: nothing to scale."
    return note + "\n" + text_table(head, rows, right={0, 2, 3, 4, 5, 6, 7})
