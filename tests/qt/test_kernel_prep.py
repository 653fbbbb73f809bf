"""Issues 15 and 30, no silent compile and no waiting: the app prepares the methods' kernels in
the background; a run started meanwhile compiles its own at once and says so."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from microgui.core.methods import available_methods
from microgui.qt import kernel_prep
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

RUN_TIMEOUT_MS = 60_000
#: The whole preparation: with an empty kernel cache it compiles every method's kernels (about
#: 80 s on an idle 2-core machine, several minutes on a loaded one): a check of what is
#: prepared, not of how fast.
PREPARATION_TIMEOUT_MS = 900_000


def fake_warm_up(calls: list[str], name: str, gate: threading.Event | None = None) -> Callable:
    """A warm-up that records its name and thread, and blocks on ``gate`` when given."""

    def warm_up() -> float:
        calls.append(f"{name}@{threading.get_ident()}")
        if gate is not None:
            assert gate.wait(20), "the test never released the warm-up"
        return 0.0

    warm_up.__module__ = f"tests.fake.{name}"
    return warm_up


def test_the_window_prepares_nothing_unless_asked(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    qtbot.wait(50)
    assert not window.kernel_prep.running and kernel_prep.active_preparation() is None
    assert window.kernel_status.isHidden()


@pytest.mark.parametrize(
    "where", ["in the app", pytest.param("in a child", marks=pytest.mark.slow)]
)
def test_the_app_window_prepares_the_registry_from_start_up(qtbot, monkeypatch, where: str) -> None:  # type: ignore[no-untyped-def]
    """``prepare_kernels=True`` (what ``microgui gui`` passes): every registered method, off
    the GUI thread; a filled cache says nothing in the status bar. In this process after the
    window shows (compiles hold the GIL); in a child process (the app's way) from the window's
    making (issue 30, session 45: a first run waits for it), only with the slow tests: the child
    runs at the lowest priority, and beside the test workers of a full run it may wait minutes
    for a core."""
    if where == "in the app":
        monkeypatch.setattr(kernel_prep, "child_command", lambda: None)  # as a frozen app
    win = MainWindow(UiSettings(), prepare_kernels=True)
    qtbot.addWidget(win)
    # in this process not before the event loop (the window shows first); the child at once
    assert win.kernel_prep.running == (where == "in a child")
    win.show()
    with qtbot.waitSignal(win.kernel_prep.finished, timeout=PREPARATION_TIMEOUT_MS) as blocker:
        pass
    ready, total = blocker.args
    assert total == len(available_methods()) + 2  # and the refinement's and suppression's
    assert ready == total and win.kernel_prep.failed == []


def test_the_app_window_starts_its_child_before_it_shows(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 30, session 45: the preparation's child started on the event loop's first turn,
    after the demo was read and after the GUI thread had imported every method's module; a
    run pressed at start waits for that child's compiles. It now starts with the window, and
    which module each method's warm-up prepares is read from a table when a run needs it, not
    from every method's module imported on the event loop's first turn (session 46)."""
    import sys

    script = "import sys, time\nprint('total 1', flush=True)\ntime.sleep(30)\n"
    monkeypatch.setattr(kernel_prep, "child_command", lambda: [sys.executable, "-c", script])
    read: list[bool] = []
    real = kernel_prep.KernelPrep._method_modules
    monkeypatch.setattr(
        kernel_prep.KernelPrep,
        "_method_modules",
        lambda self: read.append(True) or real(self),
    )
    win = MainWindow(UiSettings(), prepare_kernels=True)
    qtbot.addWidget(win)
    prep = win.kernel_prep
    assert prep.running and prep.in_child and prep.child is not None
    assert prep.child.processId() > 0 and read == []
    qtbot.waitUntil(lambda: prep.total == 1, timeout=10_000)
    qtbot.wait(50)  # turns of the event loop after the child's first line
    assert read == []
    prep.shutdown(5000)
    assert prep.child is None


def test_preparation_runs_off_the_gui_thread_and_reports_progress(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    calls: list[str] = []
    shared = fake_warm_up(calls, "shared")
    other = fake_warm_up(calls, "other")
    prep = window.kernel_prep
    seen: list[tuple[int, int]] = []
    prep.progress.connect(lambda ready, total: seen.append((ready, total)))
    with qtbot.waitSignal(prep.finished, timeout=10_000) as blocker:
        prep.start([("a", shared), ("plain", None), ("b", other), ("c", shared)])
    assert blocker.args == [4, 4]
    # each warm-up once (methods sharing kernels share it), none in the GUI thread
    assert [c.split("@")[0] for c in calls] == ["shared", "other"]
    gui = threading.get_ident()
    assert all(int(c.split("@")[1]) != gui for c in calls)
    assert seen == [(1, 4), (3, 4), (4, 4)]  # "plain" has no kernels: ready from the start
    assert kernel_prep.active_preparation() is None


def test_status_bar_says_so_while_it_takes_a_while(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    gate = threading.Event()
    calls: list[str] = []
    prep, label = window.kernel_prep, window.kernel_status
    label._reveal.setInterval(50)
    label._hide.setInterval(200)
    prep.start([("a", fake_warm_up(calls, "slow", gate)), ("b", fake_warm_up(calls, "quick"))])
    try:
        qtbot.waitUntil(lambda: not label.isHidden(), timeout=2000)
        assert label.text() == "Loading methods: 0 of 2…"  # nothing compiled: loading
        prep.compiled.set()  # numba said it compiles: a first start after installing
        label._on_progress(prep.ready, prep.total)
        assert label.text() == "Preparing methods (once after installing): 0 of 2…"
    finally:
        gate.set()
    qtbot.waitUntil(lambda: label.text() == "Methods ready", timeout=5000)
    qtbot.waitUntil(label.isHidden, timeout=2000)  # then gone


def test_a_quick_preparation_shows_nothing(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A filled cache loads every kernel in under a second: the status bar stays quiet."""
    calls: list[str] = []
    with qtbot.waitSignal(window.kernel_prep.finished, timeout=5000):
        window.kernel_prep.start([("a", fake_warm_up(calls, "a")), ("b", fake_warm_up(calls, "b"))])
    qtbot.wait(kernel_prep.SHOW_AFTER_MS + 100)
    assert window.kernel_status.isHidden()


def test_a_run_during_preparation_does_not_wait_for_the_warm_ups(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 30: Run pressed while a warm-up is under way (here blocked) computes at once: it
    waits neither for that warm-up nor for its own method's (it compiles what it calls), and
    the preparation takes the rest after it."""
    from microgui.core.progress import ProgressFn
    from microgui.core.runs import RunSpec

    ctl, prep = demo_window.controller, demo_window.kernel_prep
    busy, calls, ran = threading.Event(), [], threading.Event()
    spec = RunSpec.make("mdav", 3)
    prep.start(
        [
            ("cbfs", fake_warm_up(calls, "cbfs", busy)),  # compiling when Run is pressed
            (spec.method, fake_warm_up(calls, "own")),  # the run's own method's
        ]
    )

    def job(progress: ProgressFn) -> object:
        ran.set()
        raise RuntimeError("stop here")

    try:
        qtbot.waitUntil(lambda: bool(calls), timeout=2000)
        with qtbot.waitSignal(ctl.run_failed, timeout=5000):
            ctl.start_job(job, spec, ctl.dataset)
        assert ran.is_set() and [c.split("@")[0] for c in calls] == ["cbfs"] and prep.running
    finally:
        busy.set()
    qtbot.waitUntil(lambda: not prep.running, timeout=10_000)
    assert [c.split("@")[0] for c in calls] == ["cbfs", "own"]


def test_a_warm_up_gives_way_before_its_next_compile_and_is_taken_again(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    """A warm-up under way when a run starts stops before its next kernel compile (numba
    compiles one kernel at a time: the run would wait behind it), and is run again, whole,
    after the run: its second kernel is then compiled, and the preparation ends with every
    method ready."""
    import numba

    from microgui.core.progress import ProgressFn
    from microgui.core.runs import RunSpec

    def first(x: float) -> float:
        return x + 1.0

    def second(x: float) -> float:
        return x * 2.0

    kernels = [numba.njit(cache=False)(first), numba.njit(cache=False)(second)]
    between, calls = threading.Event(), []

    def warm_up() -> float:
        calls.append("warm")
        kernels[0](1.0)
        assert between.wait(20), "the test never let the warm-up go on"
        kernels[1](1.0)
        return 0.0

    ctl, prep = demo_window.controller, demo_window.kernel_prep
    running, release = threading.Event(), threading.Event()

    def job(progress: ProgressFn) -> object:
        running.set()
        release.wait(10)
        raise RuntimeError("stop here")

    prep.start([("a", warm_up)])
    try:
        qtbot.waitUntil(lambda: bool(kernels[0].signatures), timeout=10_000)
        ctl.start_job(job, RunSpec.make("individual-ranking", 3), ctl.dataset)
        assert running.wait(5)
        between.set()  # the warm-up goes on to its second kernel while the run computes
        qtbot.waitUntil(lambda: prep._paused, timeout=5000)
        assert not kernels[1].signatures and calls == ["warm"] and prep.ready == 0
    finally:
        between.set()
        release.set()
    with qtbot.waitSignal(prep.finished, timeout=20_000) as blocker:
        pass
    assert blocker.args == [1, 1] and calls == ["warm", "warm"]
    assert kernels[1].signatures and prep.failed == []


def test_a_compile_inside_a_run_says_so_in_its_status() -> None:
    """Issue 30: the run's status says it compiles (which kernels) and then goes back to what
    it said; a Cancel seen as a compile would begin stops the run before the compile."""
    import numba

    from microgui.core.progress import RunCancelled
    from microgui.core.runs import RunSpec

    def twice(x: float) -> float:
        return 2.0 * x

    kernel = numba.njit(cache=False)(twice)
    said: list[tuple[float, str]] = []

    def job(progress):  # type: ignore[no-untyped-def]
        progress(0.3, "grouping")
        kernel(1.0)
        progress(0.6, "measuring")
        return "done"

    wrapped = kernel_prep.after_kernels(job, RunSpec.make("mdav-generic", 5))
    assert wrapped(lambda f, text="": said.append((f, text))) == "done"
    assert said == [
        (0.3, "grouping"),
        (0.3, "compiling the kernels of mdav-generic (first run only)"),
        (0.3, "grouping"),
        (0.6, "measuring"),
    ]
    assert kernel_prep.compile_status("mdav", "microgui.core.methods.refine_kernels") == (
        "compiling the refinement kernels (first run only)"
    )
    assert "of the measures" in kernel_prep.compile_status("mdav", "microgui.core.metrics.risk")

    fresh = numba.njit(cache=False)(twice)

    def cancelling(fraction: float, text: str = "") -> None:
        if text.startswith("compiling"):
            raise RunCancelled()

    with pytest.raises(RunCancelled):
        kernel_prep.after_kernels(lambda p: fresh(1.0), RunSpec.make("mdav", 5))(cancelling)
    assert not fresh.signatures  # stopped before the compile began


def test_the_preparation_gives_way_to_a_run(demo_window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """No warm-up starts while a run computes; the rest follows when it ends."""
    from microgui.core.progress import ProgressFn
    from microgui.core.runs import RunSpec

    ctl, prep = demo_window.controller, demo_window.kernel_prep
    first, calls, running = threading.Event(), [], threading.Event()
    prep.start([("cbfs", fake_warm_up(calls, "cbfs", first)), ("md", fake_warm_up(calls, "md"))])
    release = threading.Event()

    def job(progress: ProgressFn) -> object:
        running.set()
        release.wait(10)
        progress(1.0, "done")
        raise RuntimeError("stop here")

    try:
        ctl.start_job(job, RunSpec.make("individual-ranking", 3), ctl.dataset)  # no kernels
        assert running.wait(5)
        first.set()  # cbfs ends while the run computes: md must wait
        qtbot.wait(300)
        assert [c.split("@")[0] for c in calls] == ["cbfs"] and prep.running
    finally:
        first.set()
        release.set()
    qtbot.waitUntil(lambda: not prep.running, timeout=10_000)
    assert [c.split("@")[0] for c in calls] == ["cbfs", "md"]


def test_closing_the_window_stops_the_preparation(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Close while a warm-up runs: it is waited for (a compile cannot be interrupted), the rest
    never start, no thread is left."""
    win = MainWindow(UiSettings())
    qtbot.addWidget(win)
    win.show()
    gate, calls = threading.Event(), []
    win.kernel_prep.start([("a", fake_warm_up(calls, "a", gate)), ("b", fake_warm_up(calls, "b"))])
    qtbot.waitUntil(lambda: bool(calls), timeout=2000)
    threading.Timer(0.2, gate.set).start()
    win.close()
    assert [c.split("@")[0] for c in calls] == ["a"]
    assert win.kernel_prep.pool.activeThreadCount() == 0
    assert not win.kernel_prep.running and kernel_prep.active_preparation() is None
    win.kernel_prep.start()  # a closed window never starts again
    assert not win.kernel_prep.running


@pytest.mark.slow
def test_empty_kernel_cache_run_then_cancel_frees_the_window_within_a_second() -> None:
    """The issue's check: with an empty kernel cache (a new process, its own empty cache
    folder), the app as started by ``microgui gui``: Run, Cancel 0.5 s later, the window is idle
    again within 1 s; the run said it compiled its kernels (issue 30: it no longer waits)."""
    from microgui.qt.perf import fresh_cache_session

    session = fresh_cache_session("cancel", timeout_s=600)
    assert session["outcome"] == "cancelled", session
    assert session["cancel_to_idle_ms"] < 1000, session
    assert session["said_compiling"], session
    assert session["in_process_compiles"] == 0, session  # it was waiting for the child


@pytest.mark.slow
def test_empty_kernel_cache_run_at_once_compiles_nothing_in_the_app() -> None:
    """Issue 30 (session 43): with an empty kernel cache, Run pressed at once has its kernels
    compiled by the preparation's child and loads them: no kernel compiled in the app's process
    (the compile's garbage stalled the GUI thread), the same partition as a run with the kernels
    ready (here, in this process), and the run said it compiled."""
    from microgui.core.demo import load_demo
    from microgui.core.runs.analysis import analyse_run, proposed_spec
    from microgui.qt.perf import fresh_cache_session, labels_digest

    session = fresh_cache_session("at-once", timeout_s=900)
    assert session["outcome"] == "finished", session
    assert session["prepared_in_child"] and session["served"], session
    assert session["in_process_compiles"] == 0, session
    assert session["said_compiling"], session
    demo = load_demo()
    spec = proposed_spec(available_methods(), demo.roles, demo.n_records)
    assert session["labels_digest"] == labels_digest(analyse_run(demo, spec).result.labels)


def test_the_preparation_takes_the_lower_bound_then_mdav_first(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The optimal univariate partition's kernels (every run's lower bound; about a second)
    first, then MDAV's (the proposed run's), whose warm-up goes on long after the run's own
    kernel; the others after, in the registry's order."""
    calls: list[str] = []
    names = ["cbfs", "mdav", "univariate", "md"]
    with qtbot.waitSignal(window.kernel_prep.finished, timeout=5000):
        window.kernel_prep.start([(n, fake_warm_up(calls, n)) for n in names])
    assert [c.split("@")[0] for c in calls] == ["univariate", "mdav", "cbfs", "md"]
