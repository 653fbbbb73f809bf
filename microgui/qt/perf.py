"""Measurements of the app's responsiveness (issue 6), for the benchmark.

- :func:`scatter_redraw_times`: how long the groups plot takes to draw a run of n records (first
  draw) and to redraw it for other axes, paint included (target: 100,000 points ≤ 100 ms).
- :func:`event_loop_stall`: the longest gap between ticks of a 10 ms :class:`QTimer` in the GUI
  thread while a run goes on in the worker through the controller, in the full main window
  (target: a run of a minute never blocks the event loop for more than 100 ms).

- :func:`survey_view_times`: how long each view changed for issue 29 (groups plot, MST view,
  compare bars and record plots) takes to draw a 30,000-record mixed run, paint included (target:
  ≤ 1 s after the run; :func:`mixed_run` builds the run).

- :func:`first_run_times`: with an empty kernel cache (a fresh install), the time from the window
  shown to the demo's first result, Run pressed at once and Run pressed once the methods are
  prepared (issue 15; target ≤ 2 s), each in a new process (:func:`fresh_cache_session`).

All return plain dicts of numbers. They need a QApplication; without one they create it, on the
offscreen platform unless ``QT_QPA_PLATFORM`` says otherwise. Nothing here is timed in a unit test
(STYLE.md §8); ``python -m microgui.bench`` calls them.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "scatter_redraw_times",
    "event_loop_stall",
    "ensure_application",
    "random_dataset",
    "first_run_times",
    "fresh_cache_session",
    "first_run_session",
    "labels_digest",
    "SESSION_MODES",
    "mixed_run",
    "survey_view_times",
    "view_stalls",
]


def ensure_application() -> Any:
    """The running QApplication, or a new one (offscreen unless ``QT_QPA_PLATFORM`` is set)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    return app if app is not None else QApplication([])


def random_dataset(n: int, d: int = 10, seed: int = 0) -> Any:
    """n × d standard-normal continuous quasi-identifiers (seeded)."""
    import pandas as pd

    from microgui.core.table.dataset import Dataset

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
    from microgui.core.runs import RunSpec, run_protection
    from microgui.core.views.moves import plot_projection
    from microgui.qt.plots.cluster_scatter import ClusterScatterPlot

    result = run_protection(random_dataset(n, d, seed), RunSpec.make("mdav", k, seed=seed))
    projection = plot_projection(result)
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

    from microgui.core.runs import RunSpec, run_protection
    from microgui.core.table.dataset import Dataset
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
    # the result's drawing starts when the run enters the history, a turn before run_finished
    runs_before = len(ctl.history)
    ctl.history_changed.connect(
        lambda: (
            len(ctl.history) > runs_before
            and state.setdefault("history_ms", clock.nsecsElapsed() / 1e6)
        )
    )
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
    if done_ms is not None and state.get("history_ms") is not None:
        done_ms = min(done_ms, state["history_ms"])
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


#: What :func:`first_run_session` does after the window shows: press Run at once; press it once
#: the methods are prepared; press Run, then Cancel half a second later.
SESSION_MODES = ("at-once", "after-preparation", "cancel")


def first_run_times(wait_s: float = 600.0, timeout_s: float = 1500.0) -> dict[str, Any]:
    """First-run figures of the app with an empty kernel cache (issue 15), for the benchmark.

    Three new processes, each with its own empty ``NUMBA_CACHE_DIR``: the app (kernels prepared
    in the background from start-up) with Run pressed at once; the same with Run pressed when the
    preparation has ended (its ``finished`` signal; at ``wait_s`` only if it never ends); and, for comparison, the window without the
    preparation, Run pressed at once (how it was before). Returns ``run_at_once_s`` (window shown
    to the demo's result), ``run_at_once_said_compiling`` (the run's status said it compiled kernels),
    ``run_at_once_compiled_here`` (kernels compiled in the app's process: 0 when the
    preparation's child compiled the run's, issue 30) and ``run_at_once_served`` (how the child
    was made to take the run's methods first),
    ``preparation_s`` (window shown to every method prepared), ``run_after_preparation_s`` (Run
    pressed to result; target ≤ 2 s), ``run_after_preparation_pressed_early`` (True when Run was
    pressed at ``wait_s`` with the preparation still going on),
    ``without_preparation_run_at_once_s``, the longest stall of the GUI thread's event loop in
    each (``…_max_gap_ms``; for the preparation: before Run was pressed) and ``outcome`` ("ok"
    or what went wrong).
    """
    at_once = fresh_cache_session("at-once", timeout_s=timeout_s)
    after = fresh_cache_session("after-preparation", wait_s=wait_s, timeout_s=timeout_s)
    before = fresh_cache_session("at-once", prepare=False, timeout_s=timeout_s)
    cli = cli_first_run_seconds(timeout_s=timeout_s)
    problems = [r["outcome"] for r in (at_once, after, before) if r.get("outcome") != "finished"]
    return {
        "cli_first_run_s": cli,
        "run_at_once_s": at_once.get("shown_to_result_s"),
        "run_at_once_said_compiling": at_once.get("said_compiling"),
        "run_at_once_compiled_here": at_once.get("in_process_compiles"),
        "run_at_once_served": at_once.get("served"),
        "run_at_once_max_gap_ms": at_once.get("max_gap_ms"),
        "preparation_s": after.get("preparation_s"),
        "preparation_max_gap_ms": after.get("max_gap_before_run_ms"),
        "run_after_preparation_s": after.get("run_to_result_s"),
        "run_after_preparation_pressed_early": after.get("pressed_before_preparation_end"),
        "without_preparation_run_at_once_s": before.get("shown_to_result_s"),
        "without_preparation_max_gap_ms": before.get("max_gap_ms"),
        "outcome": "ok" if not problems else "; ".join(problems),
    }


def cli_first_run_seconds(timeout_s: float = 900.0) -> float | None:
    """The command line's first run of the app's first demo run (the demo's default method
    and k), whole command, in a new process with an empty kernel cache: what issue 30 holds the
    app's first run to (at most this + 2 s). None when it failed."""
    from microgui.core.demo import demo_path, demo_roles_path

    with tempfile.TemporaryDirectory(prefix="microgui-kernels-") as folder:
        env = {**os.environ, "NUMBA_CACHE_DIR": folder}
        out = Path(folder) / "release.csv"
        command = [
            sys.executable,
            "-m",
            "microgui",
            "protect",
            str(demo_path()),
            "--roles",
            str(demo_roles_path()),
            "--method",
            "mdav-generic",
            "-k",
            "5",
            "-o",
            str(out),
        ]
        started = time.perf_counter()
        try:
            proc = subprocess.run(command, env=env, capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        seconds = time.perf_counter() - started
    return seconds if proc.returncode == 0 else None


def fresh_cache_session(
    mode: str, *, wait_s: float = 60.0, prepare: bool = True, timeout_s: float = 900.0
) -> dict[str, Any]:
    """:func:`first_run_session` in a new process whose kernel cache is an empty temporary folder
    (offscreen unless ``QT_QPA_PLATFORM`` says otherwise); its dict, or ``outcome`` saying why
    there is none."""
    if mode not in SESSION_MODES:
        raise ValueError(f"mode must be one of {SESSION_MODES}")
    with tempfile.TemporaryDirectory(prefix="microgui-kernels-") as folder:
        env = {**os.environ, "NUMBA_CACHE_DIR": folder}
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        code = (
            "import json\nfrom microgui.qt.perf import first_run_session\n"
            f"print('RESULT', json.dumps(first_run_session({mode!r}, {wait_s!r}, {prepare!r})))"
        )
        result = fresh_process_result(code, env, timeout_s)
    return {"mode": mode, "outcome": result} if isinstance(result, str) else result


def fresh_process_result(
    code: str,
    env: dict[str, str],
    timeout_s: float,
    cwd: str | None = None,
    *,
    exit_zero: bool = True,
) -> dict[str, Any] | str:
    """Run ``code`` in a new Python process (``env``, ``cwd``) and return the JSON dict its last
    line starting ``RESULT `` holds; or a line saying why there is none (a timeout; no such
    line; with ``exit_zero``, an exit status other than 0), ending with its last error line."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout_s:.0f} s"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines or (exit_zero and proc.returncode != 0):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"failed (exit {proc.returncode}): {tail}"
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return result


def labels_digest(labels: Any) -> str:
    """A short hash of a partition's labels (two runs gave the same partition)."""
    array = np.ascontiguousarray(labels, dtype=np.int64)
    return hashlib.blake2b(array.tobytes(), digest_size=8).hexdigest()


def first_run_session(mode: str, wait_s: float = 60.0, prepare: bool = True) -> dict[str, Any]:
    """One first-run session of the main window on the demo (call it in a fresh process: kernels
    compiled by an earlier session of the same process are not compiled again).

    The window (settings not saved; the kernels prepared in the background when ``prepare``) is
    shown and the demo opened as the app opens it (read by the table loader; Run is pressed
    once it is in); then, by ``mode`` (:data:`SESSION_MODES`), Run is pressed at once,
    on the preparation's ``finished`` signal (at ``wait_s`` if it has not ended by then:
    ``pressed_before_preparation_end``), or at once and Cancel 0.5 s
    later. Returns ``mode``, ``prepare``, ``outcome`` ("finished", "cancelled", "failed: …",
    "timeout"), ``shown_to_result_s``, ``run_to_result_s``, ``preparation_s`` (window shown to
    the preparation's end, when it ended in the session), ``said_compiling`` (the run's
    status said it compiled kernels), ``cancel_to_idle_ms`` (Cancel pressed to Run enabled again),
    ``max_gap_ms`` (longest gap between ticks of a 10 ms timer in the GUI thread, from the demo
    open to the end; ``max_gap_before_run_ms``: until Run was pressed),
    ``in_process_compiles`` (kernels compiled in this process from the demo open to the end;
    ``compiled_here``: which), ``served`` (how the preparation's child was made to prepare the
    run's kernels first: :attr:`~microgui.qt.kernel_prep.KernelPrep.served`),
    ``labels_digest`` (a hash of the result's partition) and
    ``close_s`` (closing the window, which waits for a compile in progress).
    """
    ensure_application()
    from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QTimer

    from microgui.qt.main_window import MainWindow
    from microgui.qt.settings import UiSettings

    window = MainWindow(UiSettings(persist=False), prepare_kernels=prepare)
    window.resize(1366, 768)
    window.show()
    shown = time.perf_counter()
    ctl, prep, panel = window.controller, window.kernel_prep, window.run_panel
    state: dict[str, Any] = {"outcome": "timeout", "mode": mode, "prepare": prepare}
    statuses: list[str] = []
    loop = QEventLoop()
    ticks: list[float] = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))

    def end(outcome: str) -> None:
        state.setdefault("ended", time.perf_counter())
        state["outcome"] = outcome
        loop.quit()

    def press_run() -> None:
        if ctl.dataset is None:  # the demo still being read (as in the app): Run once it is in
            if not state.get("run_waits_for_table"):
                state["run_waits_for_table"] = True
                ctl.dataset_loaded.connect(lambda _d: press_run())
            return
        if "run_at" in state:
            return
        state["run_at"] = time.perf_counter()
        panel.set_spec(ctl.default_spec())
        if panel.run() is None:
            end(f"failed: {window.last_error}")
        elif mode == "cancel":
            QTimer.singleShot(500, press_cancel)

    def press_cancel() -> None:
        state["cancel_at"] = time.perf_counter()
        panel.cancel_button.click()
        watch.start()

    def idle() -> None:
        if not ctl.is_running and panel.run_button.isEnabled():
            watch.stop()
            state["cancel_to_idle_ms"] = round((time.perf_counter() - state["cancel_at"]) * 1000)
            end("cancelled")

    watch = QTimer(interval=5)
    watch.timeout.connect(idle)
    ctl.run_progress.connect(lambda _i, _f, text: statuses.append(text))
    ctl.run_finished.connect(lambda *_a: end("finished"))
    ctl.run_failed.connect(lambda _i, message, _d: end(f"failed: {message}"))

    def prepared(*_a: Any) -> None:
        state["preparation_s"] = round(time.perf_counter() - shown, 2)
        if mode == "after-preparation" and "run_at" not in state:
            state["pressed_before_preparation_end"] = False
            press_run()

    def press_late() -> None:  # the preparation never ended within wait_s
        if "run_at" not in state:
            state["pressed_before_preparation_end"] = True
            press_run()

    prep.finished.connect(prepared)
    # kernels compiled in this process (issue 30, session 43: a run pressed during the
    # preparation has them compiled by the child and loads them)
    from microgui.core.methods.jit_cache import watching_compiles

    compiles: list[str] = []
    watch_compiles = ExitStack()
    watch_compiles.enter_context(
        watching_compiles(  # at their end: a compile refused as it would begin is none
            lambda _m, _n: None, lambda m, name: compiles.append(f"{m}.{name}"), every_thread=True
        )
    )
    # the demo read by the table loader, as the app opens it (session 46)
    ctl.load_failed.connect(lambda _p, message, _d: end(f"failed: {message}"))
    if not window.open_demo(background=True):
        watch_compiles.close()
        return {**state, "outcome": f"failed: {window.last_error}"}
    ticks.append(time.perf_counter())
    timer.start()  # the GUI thread's stalls from here
    if mode == "after-preparation":
        QTimer.singleShot(int(wait_s * 1000), press_late)
    else:
        QTimer.singleShot(0, press_run)
    QTimer.singleShot(int((wait_s + 600) * 1000), loop.quit)
    loop.exec()
    timer.stop()
    watch_compiles.close()
    state["in_process_compiles"] = len(compiles)
    state["compiled_here"] = sorted(set(compiles))
    state["served"] = list(prep.served)
    if ctl.history and ctl.history[-1].outcome is not None:
        state["labels_digest"] = labels_digest(ctl.history[-1].outcome.result.labels)
    ended = state.pop("ended", time.perf_counter())
    run_at = state.pop("run_at", None)
    state.pop("cancel_at", None)
    if run_at is not None and state["outcome"] == "finished":
        state["shown_to_result_s"] = round(ended - shown, 2)
        state["run_to_result_s"] = round(ended - run_at, 2)
    at = np.asarray(ticks + [ended])
    gaps = np.diff(at) if len(at) > 1 else np.zeros(1)
    state["max_gap_ms"] = round(float(gaps.max()) * 1000, 1)
    if run_at is not None:  # before Run: the preparation alone (the GUI thread otherwise idle)
        before = gaps[at[1:] <= run_at]
        state["max_gap_before_run_ms"] = round(float(before.max(initial=0.0)) * 1000, 1)
    state["said_compiling"] = any(s.startswith("compiling ") for s in statuses)
    state["prepared_in_child"] = prep.in_child  # issue 30: the cache filled by a child process
    closing = time.perf_counter()
    window.close()
    state["close_s"] = round(time.perf_counter() - closing, 2)
    window.deleteLater()
    # deleted now, not at the interpreter's exit (where tearing the window down crashed the
    # process now and then: exit -11 after the result was printed)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    return state


def mixed_run(n: int = 30_000, seed: int = 0) -> Any:
    """A RunResult of a mixed survey-like table built without running a method: ``age``
    continuous and three nominal keys (16, 14 and 2 categories, as Adult's education,
    occupation and sex); groups of 5 consecutive records, released as their group's mean age
    and first category. A real MDAV-generic run of 30,000 records takes tens of seconds."""
    import pandas as pd

    from microgui.core.runs import RunResult, RunSpec
    from microgui.core.table.dataset import Dataset, prepare_qi
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(17, 90, n).astype(float),
            "education": rng.choice([f"e{i}" for i in range(16)], n),
            "occupation": rng.choice([f"o{i}" for i in range(14)], n),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    kinds = {"age": AttributeKind.CONTINUOUS}
    roles = RoleMap.from_dict(
        {
            c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, kinds.get(c, AttributeKind.NOMINAL))
            for c in frame.columns
        }
    )
    dataset = Dataset.from_frame(frame, roles)
    labels = np.arange(n, dtype=np.int64) // 5
    released = frame.copy()
    released["age"] = frame.groupby(labels)["age"].transform("mean")
    for c in ("education", "occupation", "sex"):
        released[c] = frame.groupby(labels)[c].transform("first")
    return RunResult(
        spec=RunSpec.make("mdav-generic", 5, seed=0),
        roles=roles,
        labels=labels,
        protected=released,
        report={},
        qi=prepare_qi(dataset),
    )


def survey_view_times(n: int = 30_000) -> dict[str, float]:
    """Milliseconds each issue-29 view takes to draw :func:`mixed_run` (``n`` records) and
    paint once, in widgets of 1000 × 700 pixels: ``groups``, ``members`` (a click on a record),
    ``mst`` (a chain tree over the records), ``compare_bars`` and ``compare_records`` (2 runs);
    ``<name>_stall``: the longest of the draw call and the paint alone (the GUI thread's longest
    hold in the app, where they are two turns of the event loop); ``compare_bars_all``: until
    every chart (built in slices) is drawn."""
    ensure_application()
    from PySide6.QtCore import QCoreApplication

    from microgui.core.views.layout import MstLayout, edge_sample
    from microgui.core.views.moves import plot_projection
    from microgui.qt.plots.cluster_scatter import ClusterScatterPlot
    from microgui.qt.plots.compare_bars import BarRun, CompareBarsPlot
    from microgui.qt.plots.compare_scatter import CompareRun, CompareScatterPlot
    from microgui.qt.plots.mst_partition import MstPartitionPlot

    result = mixed_run(n)
    projection = plot_projection(result)
    out: dict[str, float] = {"n": float(n)}

    def timed(name: str, draw: Any, widget: Any) -> None:
        started = time.perf_counter()
        draw()
        drawn = time.perf_counter()
        widget.grab()
        painted = time.perf_counter()
        out[name] = 1000.0 * (painted - started)
        # the GUI thread's longest single hold: the draw call and the paint are two turns of
        # the event loop in the app (the paint is a posted update request)
        out[f"{name}_stall"] = 1000.0 * max(drawn - started, painted - drawn)

    groups = ClusterScatterPlot()
    groups.resize(1000, 700)
    timed("groups", lambda: groups.set_run(result, projection), groups)
    timed("members", lambda: groups.show_members(n // 2), groups)
    edges = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    cut = (np.arange(n - 1) % 5) == 4
    a, b = result.labels[edges[:, 0]], result.labels[edges[:, 1]]
    layout = MstLayout(
        "mst",
        edges,
        cut,
        np.where(~cut & (a == b), a, -1),
        edge_sample(cut),
        np.random.default_rng(0).permutation(n - 1),
    )
    mst = MstPartitionPlot()
    mst.resize(1000, 700)
    timed("mst", lambda: mst.set_run(result, projection, layout), mst)
    bars = CompareBarsPlot()
    bars.resize(1000, 700)
    measures = {"information_loss": 3.0, "dist_percent": 12.0, "record_linkage": 9.0}
    by_attr = {c: {"changed_percent": 10.0} for c in ("education", "occupation", "sex")}
    runs = [BarRun("#1", measures, by_attr), BarRun("#2", measures, by_attr)]
    timed("compare_bars", lambda: bars.set_runs(runs, list(measures), {}), bars)
    # the charts left for later turns of the event loop (built in slices): all of them built
    started = time.perf_counter()
    longest = 0.0
    while bars.pending:
        before = time.perf_counter()
        QCoreApplication.processEvents()
        longest = max(longest, time.perf_counter() - before)
    bars.grab()
    out["compare_bars_all"] = out["compare_bars"] + 1000.0 * (time.perf_counter() - started)
    out["compare_bars_stall"] = max(out["compare_bars_stall"], 1000.0 * longest)
    compare = CompareScatterPlot()
    compare.resize(1000, 500)
    pair = [CompareRun("#1", result, projection), CompareRun("#2", result, projection)]
    timed("compare_records", lambda: compare.set_runs(pair), compare)
    for widget in (groups, mst, bars, compare):
        widget.deleteLater()
    return out


def view_stalls(
    dataset: Any = None,
    spec: Any = None,
    settle_s: float = 1.0,
    timer_ms: int = 10,
    timeout_s: float = 600.0,
    load_settle_s: float = 1.0,
) -> dict[str, Any]:
    """The longest GUI-thread stall of each phase of a session in the main window (offscreen,
    1366 × 768, settings not saved), from the gaps between ticks of a ``timer_ms`` QTimer:
    ``load_ms`` for ``load_settle_s`` after the table is set (the window lays it out and
    draws it; Run is pressed after), ``run_ms`` while the run computes in the worker (the
    ``ctl.start_run`` call included), ``drawing_ms`` from its end (the run enters the history;
    its views draw it in a later turn) until ``settle_s`` after ``run_finished`` (the views in
    front draw it), and ``views`` (tab title → ms) while each
    view is brought to the front and ``settle_s`` after (views behind draw when shown).

    ``dataset`` defaults to the demo table, ``spec`` to mdav-generic k = 5 (seed 1). Also
    ``run_s`` and ``outcome``. Timings are of the machine at hand (loaded: larger)."""
    ensure_application()
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from microgui.core.runs import RunSpec
    from microgui.qt.main_window import MainWindow
    from microgui.qt.settings import UiSettings

    window = MainWindow(UiSettings(persist=False))
    window.confirm_dropping_runs = False
    window.resize(1366, 768)
    window.show()
    ctl = window.controller
    if dataset is None:
        ctl.load_demo()
    else:
        ctl.set_dataset(dataset)
    spec = spec if spec is not None else RunSpec.make("mdav-generic", 5, seed=1)
    clock = QElapsedTimer()
    ticks: list[float] = []
    timer = QTimer(interval=timer_ms)
    timer.timeout.connect(lambda: ticks.append(clock.nsecsElapsed() / 1e6))
    loop = QEventLoop()
    state: dict[str, Any] = {"outcome": "timeout"}

    def ended(outcome: str) -> None:
        state["outcome"] = outcome
        state["end_ms"] = clock.nsecsElapsed() / 1e6
        QTimer.singleShot(int(settle_s * 1000), loop.quit)

    ctl.run_finished.connect(lambda *_a: ended("finished"))
    ctl.run_failed.connect(lambda _i, message, _d: ended(f"failed: {message}"))
    # the result's drawing starts when the run enters the history, a turn before run_finished
    runs_before = len(ctl.history)
    ctl.history_changed.connect(
        lambda: (
            len(ctl.history) > runs_before
            and state.setdefault("history_ms", clock.nsecsElapsed() / 1e6)
        )
    )
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)

    def longest(after: float, before: float = np.inf) -> float:
        at = np.asarray(ticks)
        gaps = np.diff(at)
        ends = at[1:]
        inside = gaps[(ends > after) & (ends <= before)]
        return round(float(inside.max(initial=0.0)), 1)

    clock.start()
    timer.start()
    ticks.append(0.0)
    # the table's first layout and paint in the window (turns after the load): a phase of its
    # own, before Run is pressed in a settled window, as a user presses it. Pressed at once
    # (load_settle_s=0), the run's first turn also held that drawing, shared with the worker
    loaded = QEventLoop()
    QTimer.singleShot(int(load_settle_s * 1000), loaded.quit)
    loaded.exec()
    pressed = clock.nsecsElapsed() / 1e6
    ticks.append(pressed)
    ctl.start_run(spec)
    loop.exec()
    end = float(state.get("end_ms", clock.nsecsElapsed() / 1e6))
    drawn_from = min(end, float(state.get("history_ms", end)))
    out: dict[str, Any] = {
        "outcome": state["outcome"],
        "run_s": round((end - pressed) / 1000, 2),
        "load_ms": longest(0.0, pressed),
        "run_ms": longest(pressed, drawn_from),
        "drawing_ms": longest(drawn_from),
        "views": {},
    }
    for index in range(window.tabs.count()):
        start = clock.nsecsElapsed() / 1e6
        ticks.append(start)
        window.tabs.setCurrentIndex(index)
        wait = QEventLoop()
        QTimer.singleShot(int(settle_s * 1000), wait.quit)
        wait.exec()
        out["views"][window.tabs.tabText(index).replace("&&", "&")] = longest(start)
    timer.stop()
    ctl.shutdown()
    window.close()
    window.deleteLater()
    return out


def adult_dataset() -> Any:
    """UCI Adult as issue 29 tries it (``../shared/data/adult/adult.csv``, 30,162 records):
    ``age`` a continuous quasi-identifier, the 7 other attributes nominal quasi-identifiers,
    ``salary-class`` confidential. None when the reference data is absent."""
    import pandas as pd

    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
    from microgui.reference_data import shared_data_dir

    root = shared_data_dir()
    path = None if root is None else root / "adult" / "adult.csv"
    if path is None or not path.is_file():
        return None
    frame = pd.read_csv(path, sep=";")
    nominal, continuous = AttributeKind.NOMINAL, AttributeKind.CONTINUOUS
    specs = {
        c: ColumnSpec(AttributeRole.CONFIDENTIAL, nominal)
        if c == "salary-class"
        else ColumnSpec(AttributeRole.QUASI_IDENTIFIER, continuous if c == "age" else nominal)
        for c in frame.columns
    }
    return Dataset.from_frame(frame, RoleMap.from_dict(specs), source=path)


def adult_view_stalls(repeat: int = 1, settle_s: float = 1.0) -> dict[str, Any] | None:
    """:func:`view_stalls` of an Adult session (:func:`adult_dataset`, mdav-generic k = 5,
    seed 1), ``repeat`` sessions: per phase and per view the median and the max over them
    (``drawing_ms``, ``views`` → (median, max)); also ``run_s`` (median). None without
    ../shared. Rough on a loaded machine."""
    dataset = adult_dataset()
    if dataset is None:
        return None
    from microgui.core.runs import RunSpec

    sessions = [
        view_stalls(dataset, RunSpec.make("mdav-generic", 5, seed=1), settle_s=settle_s)
        for _ in range(max(1, repeat))
    ]

    def spread(values: list[float]) -> tuple[float, float]:
        return round(float(np.median(values)), 1), round(float(np.max(values)), 1)

    return {
        "outcome": ", ".join(sorted({s["outcome"] for s in sessions})),
        "run_s": float(np.median([s["run_s"] for s in sessions])),
        "drawing_ms": spread([s["drawing_ms"] for s in sessions]),
        "views": {
            name: spread([s["views"][name] for s in sessions]) for name in sessions[0]["views"]
        },
    }


def adult_compare_records_times(repeat: int = 3) -> dict[str, Any] | None:
    """Issue 29: milliseconds the compare view's record plots take to draw two UCI Adult runs
    (:func:`adult_dataset`, mdav-generic k = 5 and k = 10, seed 1, run here in-process), in a
    plot of 1000 × 500 pixels: ``make`` (the plots' items, made ahead by the panel in a turn
    of their own), ``build`` (``set_runs``, one GUI-thread turn), ``paint`` (the next turn) and
    ``next`` (the second plot: the longer of its drawing turn and its paint, each a turn of its
    own as the panel staggers them),
    ``again`` (``set_runs`` of the same two runs on the plots drawn, as when the comparison
    changes, both plots in one call), each (median, max) of ``repeat`` fresh plots; also ``density``
    (whether the originals were drawn as density images). None without ../shared. Rough on a
    loaded machine."""
    dataset = adult_dataset()
    if dataset is None:
        return None
    ensure_application()
    from PySide6.QtCore import QCoreApplication

    from microgui.core.runs import RunSpec
    from microgui.core.runs.protect import run_protection
    from microgui.core.views.moves import plot_projection
    from microgui.qt.plots.compare_scatter import CompareRun, CompareScatterPlot

    runs = []
    for k in (5, 10):
        result = run_protection(dataset, RunSpec.make("mdav-generic", k, seed=1))
        runs.append(CompareRun(f"k = {k}", result, plot_projection(result)))
    # the runs' background work (the information-loss bound's thread) ended first: it holds
    # the GIL, and the GUI thread's draws would be timed waiting for it
    import threading

    deadline = time.perf_counter() + 60.0
    while time.perf_counter() < deadline and any(
        t.name == "microgui-il-bound" for t in threading.enumerate()
    ):
        time.sleep(0.1)
    times: dict[str, list[float]] = {"make": [], "build": [], "paint": [], "next": [], "again": []}
    density = False
    for _ in range(max(1, repeat)):
        plot = CompareScatterPlot()
        plot.resize(1000, 500)
        plot.show()
        QCoreApplication.processEvents()  # shown and laid out, as the panel is
        made = time.perf_counter()
        plot.prepare(len(runs))  # as the panel does, in a turn of its own
        started = time.perf_counter()
        times["make"].append(1000.0 * (started - made))
        plot.set_runs(runs, stagger=True)  # as the panel does: the first plot now
        built = time.perf_counter()
        plot.grab()
        painted = time.perf_counter()
        longest = 0.0
        while plot.drawing:  # the other plot, in a turn of its own, and its paint in the next
            before = time.perf_counter()
            QCoreApplication.processEvents()
            between = time.perf_counter()
            plot.grab()
            longest = max(longest, between - before, time.perf_counter() - between)
        times["next"].append(1000.0 * longest)
        redrawn = time.perf_counter()
        plot.set_runs(runs)
        again = time.perf_counter()
        times["build"].append(1000.0 * (built - started))
        # the first plot's paint alone: the second plot's turns are ``next`` (before, ``paint``
        # ran to the end of them and summed several turns into one "hold")
        times["paint"].append(1000.0 * (painted - built))
        times["again"].append(1000.0 * (again - redrawn))
        density = all(p.density_shown for p in plot.plots)
        plot.hide()  # (pyqtgraph's GraphicsView.close frees its scene under the plots: a crash)
        plot.deleteLater()
    out: dict[str, Any] = {
        name: (round(float(np.median(v)), 1), round(float(np.max(v)), 1))
        for name, v in times.items()
    }
    out["density"] = density
    return out
