"""Runs in the worker: signal order, cancel within a second, superseded runs, failures, closing."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from qt_helpers import SignalRecorder, large_continuous_dataset

from microgui.core.progress import ProgressFn
from microgui.core.runs import RunSpec
from microgui.qt.main_window import MainWindow
from microgui.qt.workers import RunSignals, RunWorker, make_run_pool

RUN_TIMEOUT_MS = 60_000


def _started_method(_run_id: int, fraction: float, _status: str) -> bool:
    return fraction > 0.0  # the method itself is running (past "checking the data")


def test_cancel_a_long_run_within_a_second(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(large_continuous_dataset())  # 200,000 × 10: MDAV needs about a minute
    panel = window.run_panel
    assert panel.spec().method == "mdav"
    recorder = SignalRecorder(ctl)
    with qtbot.waitSignal(
        ctl.run_progress, timeout=RUN_TIMEOUT_MS, check_params_cb=_started_method
    ):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert ctl.is_running and panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()

    started = time.perf_counter()
    with qtbot.waitSignal(ctl.run_cancelled, timeout=1000):
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    assert time.perf_counter() - started < 1.0
    assert recorder.compact() == ["run_started", "run_progress", "run_cancelled"]
    # the UI is idle again
    assert not ctl.is_running
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    assert panel.progress_bar.value() == 0 and "cancelled" in panel.status_label.text()
    assert ctl.result is None and window.plot.records_item.data.size == 0
    assert ctl.pool.waitForDone(5000)


def test_a_superseded_result_is_ignored(demo_window: MainWindow, qtbot) -> None:
    ctl = demo_window.controller
    recorder = SignalRecorder(ctl)
    first = ctl.start_run(RunSpec.make("mdav-generic", 3, seed=0))
    # Let the first run finish in its thread while the GUI thread is blocked: its `finished`
    # signal is queued, and only delivered after the second run has been started.
    assert ctl.pool.waitForDone(RUN_TIMEOUT_MS)
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        second = ctl.start_run(RunSpec.make("mdav-generic", 7, seed=0))
    assert blocker.args[0] == second != first
    assert blocker.args[1].spec.k == 7 and ctl.result is blocker.args[1]
    assert [args[0] for args in recorder.of("run_finished")] == [second]
    assert "k = 7" in demo_window.results_panel.value_labels["run"].text()


def test_starting_a_run_supersedes_the_running_one(window: MainWindow, qtbot) -> None:
    ctl = window.controller
    ctl.set_dataset(large_continuous_dataset(n=100_000, d=6))
    recorder = SignalRecorder(ctl)
    with qtbot.waitSignal(
        ctl.run_progress, timeout=RUN_TIMEOUT_MS, check_params_cb=_started_method
    ):
        first = ctl.start_run(RunSpec.make("mdav", 5))
    quick = large_continuous_dataset(n=300, d=3, seed=1)
    busy: list[bool] = []
    ctl.busy_changed.connect(busy.append)
    ctl.set_dataset(quick)  # a new table supersedes the run in progress
    assert not ctl.is_running and busy == [False]
    assert window.run_panel.run_button.isEnabled()
    superseded_at = len(recorder.events)
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        second = ctl.start_run(RunSpec.make("mdav", 5))
    assert blocker.args[0] == second
    assert blocker.args[1].labels.shape == (300,)
    assert ctl.pool.waitForDone(5000)
    qtbot.wait_until(lambda: ctl.live_runs == 0)  # the first worker's last signal was delivered
    # the first run stopped (cancelled in its thread) but said nothing: it was superseded
    assert all(args[0] == second for _, args in recorder.events[superseded_at:])
    assert [args[0] for args in recorder.of("run_started")] == [first, second]
    assert recorder.of("run_cancelled") == []


def test_an_internal_error_is_sent_with_its_traceback(demo_window: MainWindow, qtbot) -> None:
    ctl = demo_window.controller
    assert ctl.dataset is not None

    def broken(progress: ProgressFn) -> object:
        progress(0.5, "half way")
        raise ZeroDivisionError("boom")

    with qtbot.waitSignal(ctl.run_failed, timeout=RUN_TIMEOUT_MS) as blocker:
        ctl.start_job(broken, RunSpec.make("mdav", 5), ctl.dataset)
    _, message, details = blocker.args
    assert "ZeroDivisionError: boom" in message
    assert "Traceback" in details and "broken" in details
    box = demo_window.error_box
    assert box is not None and box.detailedText() == details
    assert not ctl.is_running


def test_closing_the_window_cancels_and_waits(qtbot) -> None:
    from microgui.qt.settings import UiSettings

    window = MainWindow(UiSettings())
    window.show()
    ctl = window.controller
    ctl.set_dataset(large_continuous_dataset())
    with qtbot.waitSignal(
        ctl.run_progress, timeout=RUN_TIMEOUT_MS, check_params_cb=_started_method
    ):
        window.run_panel.run()
    started = time.perf_counter()
    window.close()
    assert time.perf_counter() - started < 5.0
    assert ctl.pool.activeThreadCount() == 0 and not ctl.is_running
    window.deleteLater()


def test_worker_throttles_progress_and_reports_each_outcome(qtbot) -> None:
    pool = make_run_pool()

    def chatty(progress: ProgressFn) -> int:
        for i in range(20_001):
            progress(i / 20_000, "counting")
        return 42

    signals = RunSignals()
    seen: list[float] = []
    signals.progress.connect(lambda _i, f, _s: seen.append(f))
    worker = RunWorker(7, chatty, signals)
    with qtbot.waitSignal(signals.finished, timeout=RUN_TIMEOUT_MS) as blocker:
        pool.start(worker)
    assert blocker.args == [7, 42]
    assert 100 <= len(seen) <= 101  # whole percents only

    def cancelled_early(progress: ProgressFn) -> int:
        progress(0.0)
        return 1

    signals2 = RunSignals()
    worker2 = RunWorker(8, cancelled_early, signals2)
    worker2.cancel()
    with qtbot.waitSignal(signals2.cancelled, timeout=RUN_TIMEOUT_MS) as blocker2:
        pool.start(worker2)
    assert blocker2.args == [8]
    assert pool.waitForDone(5000)


@pytest.mark.parametrize("k", [2, 11])
def test_k_spin_box_bounds_follow_the_table(demo_window: MainWindow, k: int) -> None:
    spin = demo_window.run_panel.k_spin
    assert spin.minimum() == 2 and spin.maximum() == 4000
    spin.setValue(k)
    assert demo_window.run_panel.spec().k == k


def test_cancel_frees_the_window_at_once_even_while_compiling(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 15: a first run compiles kernels without a progress check for tens of seconds;
    Cancel pressed then took effect 24.7 s later. Now the run is abandoned at once (the worker
    stops at its next check, its late signals ignored)."""
    import threading

    ctl = demo_window.controller
    assert ctl.dataset is not None
    release = threading.Event()

    def compiling(progress: ProgressFn) -> object:
        progress(0.0, "preparing the kernels")
        release.wait(10)  # a compile: no progress call for a long time
        progress(0.5, "forming groups")  # raises RunCancelled when cancelled
        raise AssertionError("a cancelled run went on")

    run_id = ctl.start_job(compiling, RunSpec.make("mdav", 5), ctl.dataset)
    qtbot.wait(100)
    with qtbot.waitSignal(ctl.run_cancelled, timeout=1000) as blocker:
        demo_window.run_panel.cancel_button.click()  # emitted at once, not after the compile
    assert blocker.args == [run_id]
    assert not ctl.is_running and demo_window.run_panel.run_button.isEnabled()
    failures: list[object] = []
    ctl.run_failed.connect(lambda *args: failures.append(args))
    release.set()  # the "compile" ends: the worker sees the cancel and stops quietly
    ctl.pool.waitForDone(10_000)
    qtbot.wait(50)
    assert failures == [] and not ctl.is_running


def test_a_run_after_an_abandoned_one_says_it_waits(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    import threading

    ctl = demo_window.controller
    assert ctl.dataset is not None
    release = threading.Event()

    def compiling(progress: ProgressFn) -> object:
        progress(0.0, "preparing the kernels")
        release.wait(10)
        progress(0.5, "forming groups")
        raise AssertionError("a cancelled run went on")

    ctl.start_job(compiling, RunSpec.make("mdav", 5), ctl.dataset)
    qtbot.wait(100)
    ctl.cancel_run()
    statuses: list[str] = []
    ctl.run_progress.connect(lambda _i, _f, text: statuses.append(text))
    with qtbot.waitSignal(ctl.run_finished, timeout=RUN_TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=1))
        assert statuses[:1] == ["waiting for the cancelled run to stop"]
        release.set()
