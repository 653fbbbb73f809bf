"""Issue 30 (session 41): the app fills the kernel cache in a CHILD PROCESS
(:mod:`microgui.core.runs.prepare`), so nothing compiles in the GUI's process in the
background. Here the child is a tiny stub script speaking the same stdout protocol."""

from __future__ import annotations

import logging
import os
import sys
import threading

from microgui.qt import kernel_prep
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings


def stub(*lines: str, sleep: float = 0.0, status: int = 0) -> list[str]:
    """A child printing ``lines`` (flushed, 20 ms apart), sleeping, exiting with ``status``."""
    code = (
        "import sys, time\n"
        f"for line in {list(lines)!r}:\n"
        "    print(line, flush=True); time.sleep(0.02)\n"
        f"time.sleep({sleep})\n"
        f"sys.exit({status})\n"
    )
    return [sys.executable, "-c", code]


def test_the_app_preparation_runs_in_a_child_and_reports_its_progress(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    prep, label = window.kernel_prep, window.kernel_status
    label._reveal.setInterval(50)
    prep.child_command = stub(
        "total 3", "compiled", "ready 1 mdav", "failed 2 dba", "ready 3 cbfs", sleep=0.4
    )
    seen: list[tuple[int, int]] = []
    prep.progress.connect(lambda ready, total: seen.append((ready, total)))
    with qtbot.waitSignal(prep.finished, timeout=10_000) as blocker:
        prep.start()
        assert prep.running and prep.in_child and prep.child is not None
        qtbot.waitUntil(lambda: prep.ready == 3, timeout=5000)
        assert label.text() == "Preparing methods (once after installing): 3 of 3…"
    assert blocker.args == [3, 3]
    assert (1, 3) in seen and (2, 3) in seen and prep.failed == ["dba"]
    assert prep.child is None and kernel_prep.active_preparation() is None
    assert label.text() == "Methods ready (dba: compiled at the first run)"


def test_closing_the_window_kills_the_child(qtbot) -> None:  # type: ignore[no-untyped-def]
    win = MainWindow(UiSettings())
    qtbot.addWidget(win)
    win.show()
    prep = win.kernel_prep
    prep.child_command = stub("total 2", "ready 1 mdav", sleep=60)
    prep.start()
    qtbot.waitUntil(lambda: prep.ready == 1, timeout=10_000)
    assert prep.child is not None
    pid = prep.child.processId()
    assert pid > 0
    win.close()
    assert prep.child is None and not prep.running
    try:  # reaped by QProcess: no such process any more (no orphan)
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive


def test_a_failing_child_falls_back_to_the_in_process_preparation(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    monkeypatch,  # type: ignore[no-untyped-def]
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    from microgui.core.runs import prepare

    calls: list[str] = []

    def warm_up() -> float:
        calls.append(f"w@{threading.get_ident()}")
        return 0.0

    monkeypatch.setattr(prepare, "preparation_list", lambda: [("a", warm_up), ("b", None)])
    prep = window.kernel_prep
    prep.child_command = stub("total 2", status=3)  # crashes after its first line
    with caplog.at_level(logging.WARNING, logger="microgui.qt.kernel_prep"):
        with qtbot.waitSignal(prep.finished, timeout=10_000) as blocker:
            prep.start()
    assert blocker.args == [2, 2] and not prep.in_child
    assert len(calls) == 1 and int(calls[0].split("@")[1]) != threading.get_ident()
    assert "exit status 3" in caplog.text


def test_a_child_that_cannot_start_falls_back_too(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from microgui.core.runs import prepare

    monkeypatch.setattr(prepare, "preparation_list", lambda: [("b", None)])
    prep = window.kernel_prep
    prep.child_command = [os.path.join(os.sep, "no", "such", "interpreter")]
    with qtbot.waitSignal(prep.finished, timeout=10_000) as blocker:
        prep.start()
    assert blocker.args == [1, 1] and not prep.in_child and prep.child is None


def test_a_frozen_app_prepares_in_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert kernel_prep.child_command() is None
    monkeypatch.setattr(sys, "frozen", False, raising=False)
    assert kernel_prep.child_command()[1:] == ["-m", "microgui.core.runs.prepare"]


def test_a_run_during_the_child_preparation_does_not_wait_for_it(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    from microgui.core.progress import ProgressFn
    from microgui.core.runs import RunSpec

    ctl, prep = demo_window.controller, demo_window.kernel_prep
    prep.child_command = stub("total 2", "ready 1 mdav", sleep=60)
    prep.start()
    qtbot.waitUntil(lambda: prep.ready == 1, timeout=10_000)
    ran = threading.Event()

    def job(progress: ProgressFn) -> object:
        ran.set()
        raise RuntimeError("stop here")

    first = prep.child
    assert first is not None
    with qtbot.waitSignal(ctl.run_failed, timeout=5000):
        ctl.start_job(job, RunSpec.make("mdav", 3), ctl.dataset)
    assert ran.is_set() and prep.running and prep.in_child  # no fallback in-process
    # the child was killed while the run computed, and is started again after it
    qtbot.waitUntil(lambda: prep.child is not None and prep.child is not first, timeout=5000)
    assert prep.ready == 1  # the count never goes back
    prep.shutdown()
    assert prep.child is None and not prep.running
