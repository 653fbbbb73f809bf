"""The views' analyses yield the CPU to the GUI thread (issues 29/30): the R-U map's reference
(a full evaluate, scipy's k-d tree threads on every core) ran while the views drew and the GUI
thread waited 100-600 ms for a core on a loaded machine, although no thread held the GIL that
long (measured with a 1 ms ticker against each analysis in a thread: no hold above 40 ms)."""

from __future__ import annotations

import os
import threading

import pytest

from microgui.qt import workers
from microgui.qt.workers import TaskSlot, lower_thread_priority, make_run_pool, worker_nice

pytestmark = pytest.mark.skipif(
    not hasattr(os, "getpriority") or workers._GUI_NICE is None,
    reason="no per-thread priorities on this system",
)


def _in_thread(steps: int | None) -> dict[str, int | None]:
    out: dict[str, int | None] = {}

    def child() -> None:
        out["child"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def job() -> None:
        out["set"] = lower_thread_priority(steps)
        out["again"] = lower_thread_priority(steps)  # a reused pool thread: not lowered twice
        out["own"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        t = threading.Thread(target=child)
        t.start()
        t.join()

    t = threading.Thread(target=job)
    t.start()
    t.join()
    return out


def test_a_worker_thread_and_the_threads_it_starts_run_below_the_gui_thread() -> None:
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if gui + 3 > 19:
        pytest.skip("the process already runs at the lowest priority")
    out = _in_thread(3)
    assert out["set"] == out["again"] == out["own"] == out["child"] == gui + 3
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == gui  # GUI untouched
    assert _in_thread(0)["own"] == gui  # 0: the same priority


def test_the_environment_sets_the_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.NICE_ENV, "2")
    assert worker_nice() == 2
    monkeypatch.setenv(workers.NICE_ENV, "99")
    assert worker_nice() == 19
    monkeypatch.setenv(workers.NICE_ENV, "low")
    assert worker_nice() == workers.WORKER_NICE
    monkeypatch.delenv(workers.NICE_ENV)
    assert worker_nice() == workers.WORKER_NICE


def test_a_background_pool_runs_below_the_gui_thread_and_a_run_pool_does_not(
    qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(workers.NICE_ENV, "2")
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if gui + 2 > 19:
        pytest.skip("the process already runs at the lowest priority")
    seen: dict[bool, int] = {}
    for background in (False, True):
        pool = make_run_pool(None, background=background)
        slot = TaskSlot(pool)
        slot.finished.connect(lambda _i, value, _c, b=background: seen.__setitem__(b, value))
        slot.start(lambda _p: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        qtbot.waitUntil(lambda b=background: b in seen, timeout=10_000)  # type: ignore[attr-defined]
        pool.waitForDone()
    assert seen == {False: gui, True: gui + 2}
