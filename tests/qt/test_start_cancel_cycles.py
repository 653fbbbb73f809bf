"""Issue 7: 200 start/cancel cycles leave no thread behind and no memory growth beyond noise.

Each cycle starts a run through the controller (the demo, MDAV-generic), cancels it at once and
waits for its last signal (cancelled, or finished when the run beat the cancel). Threads are
counted (Python threads and the window's pools) and resident memory is read from /proc after a
warm-up and at the end. The memory bound (40 MB over 180 cycles) is far below what a leak of one
protected table per cycle would add (the demo's result is about 1 MB: 180 MB).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from pathlib import Path

import pytest

from microgui.qt.main_window import MainWindow

CYCLES = 200
WARMUP = 20


def _rss_mb() -> float:
    fields = Path("/proc/self/statm").read_text().split()
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_start_cancel_cycles(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    ctl = demo_window.controller
    spec = demo_window.run_panel.spec()
    ends: list[str] = []
    ctl.run_cancelled.connect(lambda _id: ends.append("cancelled"))
    ctl.run_finished.connect(lambda _id, _r: ends.append("finished"))
    ctl.run_failed.connect(lambda _id, msg, _d: ends.append(f"failed: {msg}"))
    baseline_threads = rss_warm = None
    for cycle in range(CYCLES):
        before = len(ends)
        ctl.start_run(spec)
        ctl.cancel_run()
        qtbot.waitUntil(lambda before=before: len(ends) > before, timeout=60_000)
        assert ctl.pool.waitForDone(10_000)
        if cycle == WARMUP - 1:
            gc.collect()
            baseline_threads = threading.active_count()
            rss_warm = _rss_mb()
    gc.collect()
    assert not any(e.startswith("failed") for e in ends), ends
    assert ends.count("cancelled") >= CYCLES // 2, "most runs should be cancelled, not finish"
    assert not ctl.is_running and ctl.pool.activeThreadCount() == 0
    assert threading.active_count() <= (baseline_threads or 0) + 1
    growth = _rss_mb() - (rss_warm or 0.0)
    print(
        f"{ends.count('cancelled')} cancelled, {ends.count('finished')} finished; RSS +{growth:.1f} MB"
    )
    assert growth < 40, f"resident memory grew by {growth:.1f} MB over {CYCLES - WARMUP} cycles"
