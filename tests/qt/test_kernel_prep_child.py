"""Issue 30 (session 41): the app fills the kernel cache in a CHILD PROCESS
(:mod:`microgui.core.runs.prepare`), so nothing compiles in the GUI's process in the
background. Here the child is a tiny stub script speaking the same stdout protocol."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

import pytest

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
    # a run that misses no kernel leaves the child alone (session 43: it was killed and
    # started again, losing the compile under way)
    qtbot.wait(100)
    assert prep.child is first and prep.served == []
    assert prep.ready == 1
    prep.shutdown()
    assert prep.child is None and not prep.running


# A run pressed while the child prepares (issue 30, session 43): the run compiles nothing in the
# app's process (a compile's garbage made the GUI thread stall in full collections); the child
# is asked for the kernel, the run waits and then loads it from the disk cache. Here the child is
# a stub that compiles one tiny kernel of a module written for the test.

KERNEL_MODULE = "mg_waited_kernels"


def kernel_module(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A module with one cached kernel (an empty cache entry: its folder is new), importable
    here and in the stub child."""
    (tmp_path / f"{KERNEL_MODULE}.py").write_text(
        "import numba\n\n\n@numba.njit(cache=True)\ndef twice(x):\n    return 2.0 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    monkeypatch.delitem(sys.modules, KERNEL_MODULE, raising=False)
    return importlib.import_module(KERNEL_MODULE)


def compiling_stub(tmp_path, *, then: str) -> list[str]:  # type: ignore[no-untyped-def]
    """A child that says it prepares "fake", waits for the app's request (a ``first`` line, or
    ``--first`` when the app started it anew), then ``then``: "compile" (the kernel, saved to
    the app's cache folder, and says so) or "exit" (crashes)."""
    import numba

    code = f"""
import sys, time
import numba
numba.config.CACHE_DIR = {numba.config.CACHE_DIR!r}
sys.path.insert(0, {str(tmp_path)!r})
print("total 1", flush=True)
print("started fake", flush=True)
if "--first" not in sys.argv:
    for line in sys.stdin:
        if line.startswith("first fake"):
            break
if {then!r} == "exit":
    sys.exit(3)
import {KERNEL_MODULE} as m
m.twice(1.0)
print("saved", m.twice._cache._cache_file._index_path, flush=True)
print("ready 1 fake", flush=True)
time.sleep(60)
"""
    return [sys.executable, "-c", code]


def run_in_thread(job):  # type: ignore[no-untyped-def]
    """``job`` wrapped as a run's (:func:`kernel_prep.after_kernels`) in a thread of its own;
    its statuses, its value (or exception) and the kernels compiled in this process."""
    from microgui.core.methods.jit_cache import watching_compiles
    from microgui.core.runs import RunSpec

    out: dict = {"statuses": [], "compiled": [], "cancel": threading.Event()}

    def progress(_fraction: float, text: str = "") -> None:
        if out["cancel"].is_set():
            from microgui.core.progress import RunCancelled

            raise RunCancelled()
        out["statuses"].append(text)

    def body() -> None:
        try:
            out["value"] = kernel_prep.after_kernels(job, RunSpec.make("mdav", 3))(progress)
        except BaseException as exc:  # noqa: BLE001 - looked at by the test
            out["error"] = exc

    def compiled(module: str, name: str) -> None:
        out["compiled"].append(f"{module}.{name}")

    # counted at their end: a compile refused as it would begin (the run then waits) is none
    watch = watching_compiles(lambda _m, _n: None, compiled, every_thread=True)
    watch.__enter__()
    out["stop_watching"] = lambda: watch.__exit__(None, None, None)
    out["thread"] = thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return out


def twice_to_the_end(module, qtbot):  # type: ignore[no-untyped-def]
    """The fake kernel's ``twice(21.0)`` run as a run (:func:`run_in_thread`) until it ends."""
    run = run_in_thread(lambda progress: module.twice(21.0))
    try:
        qtbot.waitUntil(lambda: not run["thread"].is_alive(), timeout=30_000)
    finally:
        run["stop_watching"]()
    return run


@pytest.mark.parametrize("how", ["priority raised", "restarted"])
def test_a_run_waits_for_the_childs_kernel_and_loads_it(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path,  # type: ignore[no-untyped-def]
    monkeypatch,  # type: ignore[no-untyped-def]
    how: str,
) -> None:
    """The child under way set back to normal priority (where the system allows it), or a new
    child started with the run's methods first (elsewhere)."""
    if how == "priority raised" and not kernel_prep._may_raise_priority():
        pytest.skip("this user may not raise a process's priority")
    module = kernel_module(tmp_path, monkeypatch)
    prep = window.kernel_prep
    if how == "restarted":
        monkeypatch.setattr(kernel_prep, "_normal_priority", lambda _pid: False)
        monkeypatch.setattr(kernel_prep, "_may_raise_priority", lambda: False)
        launch = prep._launch_child

        def slow_launch(*args: object) -> None:
            time.sleep(0.2)  # the run, waiting, must not take the gap for a dead child
            launch(*args)

        monkeypatch.setattr(prep, "_launch_child", slow_launch)
    prep._child_methods = [("fake", KERNEL_MODULE)]
    prep.child_command = compiling_stub(tmp_path, then="compile")
    prep.start()
    qtbot.waitUntil(lambda: prep._child_current == "fake", timeout=10_000)
    run = twice_to_the_end(module, qtbot)
    assert run.get("value") == 42.0, run
    assert run["compiled"] == []  # loaded from the cache the child filled
    assert prep.served == [how]
    assert "compiling the kernels of mdav (first run only)" in run["statuses"]
    prep.shutdown()


def test_a_child_asked_before_its_own_start_stays_at_normal_priority(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    """The child lowers its priority first thing; a run asking before that has it raised only
    after (its "total" line), else the raise would be undone and the run wait at the lowest
    priority (measured: a first run of 168 s instead of 18 s, under load)."""
    if not kernel_prep._may_raise_priority():
        pytest.skip("this user may not raise a process's priority")
    code = (
        "import os, sys, time\n"
        "time.sleep(1.0)\n"  # the interpreter starting
        "os.nice(19)\n"  # as microgui.core.runs.prepare.main does
        "print('total 1', flush=True)\n"
        "for line in sys.stdin:\n"
        "    if line.startswith('first'):\n"
        "        print('priority', os.getpriority(os.PRIO_PROCESS, 0), flush=True)\n"
        "        break\n"
        "time.sleep(60)\n"
    )
    prep = window.kernel_prep
    prep._child_methods = [("fake", KERNEL_MODULE)]
    prep.child_command = [sys.executable, "-c", code]
    caplog.set_level(logging.DEBUG, logger="microgui.qt.kernel_prep")  # the child's lines
    prep.start()
    prep.ask_child(["fake"])  # at once: the child is still starting
    qtbot.waitUntil(lambda: "child: priority" in caplog.text, timeout=20_000)
    assert prep.served == ["priority raised"]
    assert "child: priority 0" in caplog.text
    prep.shutdown()


def test_a_run_compiles_its_kernel_itself_when_the_child_dies(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path,  # type: ignore[no-untyped-def]
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from microgui.core.runs import prepare

    module = kernel_module(tmp_path, monkeypatch)
    monkeypatch.setattr(prepare, "preparation_list", lambda: [("fake", None)])
    prep = window.kernel_prep
    prep._child_methods = [("fake", KERNEL_MODULE)]
    prep.child_command = compiling_stub(tmp_path, then="exit")
    prep.start()
    qtbot.waitUntil(lambda: prep._child_current == "fake", timeout=10_000)
    run = twice_to_the_end(module, qtbot)
    assert run.get("value") == 42.0, run
    assert run["compiled"] == [f"{KERNEL_MODULE}.twice"]  # the old way: in this process
    assert not prep.in_child  # and the preparation went on in this process


def test_cancel_stops_a_run_waiting_for_the_child(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path,  # type: ignore[no-untyped-def]
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from microgui.core.progress import RunCancelled

    module = kernel_module(tmp_path, monkeypatch)
    prep = window.kernel_prep
    prep._child_methods = [("fake", KERNEL_MODULE)]
    prep.child_command = stub("total 1", "started fake", sleep=60)  # never compiles
    prep.start()
    qtbot.waitUntil(lambda: prep._child_current == "fake", timeout=10_000)
    run = run_in_thread(lambda progress: module.twice(21.0))
    try:
        qtbot.waitUntil(lambda: bool(run["statuses"]), timeout=10_000)  # waiting
        assert run["thread"].is_alive()
        run["cancel"].set()
        qtbot.waitUntil(lambda: not run["thread"].is_alive(), timeout=5000)
    finally:
        run["cancel"].set()
        run["stop_watching"]()
    assert isinstance(run.get("error"), RunCancelled), run
    assert run["compiled"] == [] and not module.twice.signatures
    assert prep.child is not None  # the preparation goes on
    prep.shutdown()
