"""Measurements of the app's responsiveness (issue 6), for the benchmark.

- :func:`scatter_redraw_times`: how long the groups plot takes to draw a run of n records (first
  draw) and to redraw it for other axes, paint included (target: 100,000 points ≤ 100 ms).
- :func:`event_loop_stall`: the longest gap between ticks of a 10 ms :class:`QTimer` in the GUI
  thread while a run goes on in the worker through the controller, in the full main window
  (target: a run of a minute never blocks the event loop for more than 100 ms).

Both return plain dicts of numbers. They need a QApplication; without one they create it, on the
offscreen platform unless ``QT_QPA_PLATFORM`` says otherwise. Nothing here is timed in a unit test
(STYLE.md §8); ``python -m microgui.bench`` calls them.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

import numpy as np

__all__ = ["scatter_redraw_times", "event_loop_stall", "ensure_application", "random_dataset"]


def ensure_application() -> Any:
    """The running QApplication, or a new one (offscreen unless ``QT_QPA_PLATFORM`` is set)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    return app if app is not None else QApplication([])


def random_dataset(n: int, d: int = 10, seed: int = 0) -> Any:
    """n × d standard-normal continuous quasi-identifiers (seeded)."""
    import pandas as pd

    from microgui.core.dataset import Dataset

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{i}" for i in range(d)])
    return Dataset.from_frame(frame)


def scatter_redraw_times(
    n: int = 100_000, repeats: int = 5, d: int = 4, k: int = 5, seed: int = 0
) -> dict[str, Any]:
    """Draw times of the groups plot for an MDAV run of ``n`` × ``d`` random records.

    Returns ``n``, ``mode`` ("points" or "density", as the plot's default threshold chooses),
    ``first_draw_ms`` (``set_run`` of the run, then one paint) and ``redraw_ms`` (the median of
    ``repeats`` axis changes, each with its paint) and ``redraw_max_ms``. The run itself is
    computed before timing (MDAV: a few seconds at 100,000).
    """
    ensure_application()
    from microgui.core.projection import qi_projection
    from microgui.core.runs import RunSpec, run_protection
    from microgui.qt.plots.cluster_scatter import ClusterScatterPlot

    result = run_protection(random_dataset(n, d, seed), RunSpec.make("mdav", k, seed=seed))
    projection = qi_projection(result)
    plot = ClusterScatterPlot()
    plot.resize(1000, 750)
    plot.show()
    plot.grab()  # lay out once, empty
    started = time.perf_counter()
    plot.set_run(result, projection)
    plot.grab()
    first = (time.perf_counter() - started) * 1000
    axes = [("x0", "x1"), ("x2", "x3") if d >= 4 else ("x1", "x0")]
    times: list[float] = []
    for i in range(repeats):
        started = time.perf_counter()
        plot.set_axes(*axes[i % 2])
        plot.grab()  # paints the widget: what the user waits for
        times.append((time.perf_counter() - started) * 1000)
    mode = "density" if plot.density_shown else "points"
    plot.close()
    plot.deleteLater()
    return {
        "n": n,
        "mode": mode,
        "first_draw_ms": round(first, 1),
        "redraw_ms": round(statistics.median(times), 1),
        "redraw_max_ms": round(max(times), 1),
    }


def event_loop_stall(
    n_records: int = 350_000,
    d: int = 10,
    method: str = "mdav",
    k: int = 5,
    timer_ms: int = 10,
    timeout_s: float = 900.0,
    dataset: Any = None,
) -> dict[str, Any]:
    """The longest stall of the GUI thread's event loop during a run in the worker.

    Opens the main window (offscreen, settings not saved), sets ``dataset`` (default: ``n_records``
    × ``d`` random records; MDAV on 350,000 × 10 takes about a minute here), warms the method up on
    a small table (so that compiling its kernels is not measured), starts a QTimer every
    ``timer_ms`` ms and the run through the controller, and records the gaps between ticks until
    the run's result is drawn (the measurement ends 200 ms after ``run_finished``, so the GUI
    thread's own drawing of the result counts).

    Returns ``n_records``, ``method``, ``outcome`` ("finished", "failed: …", "cancelled" or
    "timeout"), ``run_seconds``, ``max_gap_ms`` (the longest interval between two ticks: the
    stall; an idle loop gives about ``timer_ms``), ``p99_gap_ms``, ``mean_gap_ms``, ``ticks``,
    ``gaps_over_100ms``, ``timer_ms``, and the longest gap of each phase:
    ``max_gap_during_run_ms`` (the worker computes; the GUI thread only shows progress) and
    ``max_gap_while_drawing_ms`` (after ``run_finished``: the views draw the result), with
    ``max_gap_phase`` naming the phase of the longest.
    """
    ensure_application()
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from microgui.core.dataset import Dataset
    from microgui.core.runs import RunSpec, run_protection
    from microgui.qt.main_window import MainWindow
    from microgui.qt.settings import UiSettings

    data = dataset if dataset is not None else random_dataset(n_records, d)
    # Compile (or load) the method's kernels outside the measurement, on the first rows.
    head = data.frame.iloc[: min(200, data.n_records)].reset_index(drop=True)
    run_protection(Dataset(head, data.roles), RunSpec.make(method, k, seed=0))
    window = MainWindow(UiSettings(persist=False))
    window.resize(1400, 900)
    window.show()
    ctl = window.controller
    ctl.set_dataset(data)
    window.grab()

    loop = QEventLoop()
    clock = QElapsedTimer()
    gaps: list[float] = []
    last = [0.0]
    state: dict[str, Any] = {"outcome": "timeout", "finished_at": None}

    at: list[float] = []

    def tick() -> None:
        now = clock.nsecsElapsed() / 1e6
        gaps.append(now - last[0])
        at.append(now)
        last[0] = now

    def ended(outcome: str) -> None:
        state["outcome"] = outcome
        state["finished_at"] = time.perf_counter()
        state["finished_ms"] = clock.nsecsElapsed() / 1e6
        QTimer.singleShot(200, loop.quit)  # let the GUI thread draw the result, measured

    timer = QTimer()
    timer.setInterval(timer_ms)
    timer.timeout.connect(tick)
    ctl.run_finished.connect(lambda *_a: ended("finished"))
    ctl.run_failed.connect(lambda _i, message, _d: ended(f"failed: {message}"))
    ctl.run_cancelled.connect(lambda *_a: ended("cancelled"))
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    guard.start(int(timeout_s * 1000))

    clock.start()
    timer.start()
    started = time.perf_counter()
    ctl.start_run(RunSpec.make(method, k, seed=0))
    loop.exec()
    timer.stop()
    guard.stop()
    if state["outcome"] == "timeout":
        ctl.cancel_run()
    ctl.shutdown()
    window.close()
    window.deleteLater()
    finished_at = state["finished_at"] or time.perf_counter()
    values = np.asarray(gaps[1:] or [0.0])
    ends = np.asarray(at[1:] or [0.0])
    # Where the longest gap happened: while the run computed, or while its result was drawn.
    worst_end = float(ends[int(np.argmax(values))])
    done_ms = state.get("finished_ms")
    # A gap that ends after run_finished was spent (at least partly) drawing the result.
    during = "drawing" if done_ms is not None and worst_end > done_ms else "run"
    phase = {
        "max_gap_during_run_ms": round(
            float(values[ends <= (done_ms if done_ms is not None else np.inf)].max(initial=0.0)), 1
        ),
        "max_gap_while_drawing_ms": round(
            float(values[ends > done_ms].max(initial=0.0)) if done_ms is not None else 0.0, 1
        ),
        "max_gap_phase": during,
    }
    return {
        "n_records": int(data.n_records),
        "method": method,
        "outcome": state["outcome"],
        "run_seconds": round(finished_at - started, 2),
        "max_gap_ms": round(float(values.max()), 1),
        "p99_gap_ms": round(float(np.percentile(values, 99)), 1),
        "mean_gap_ms": round(float(values.mean()), 2),
        "ticks": int(len(values)),
        "gaps_over_100ms": int(np.count_nonzero(values > 100.0)),
        "timer_ms": timer_ms,
        **phase,
    }
