"""Fixtures of the Qt tests: offscreen platform, isolated settings, no dangling run threads."""

from __future__ import annotations

import os

# Before any QApplication exists (pytest-qt creates it lazily, in the first test that needs it).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QSettings, QThreadPool  # noqa: E402

from microgui.qt import gui_gc  # noqa: E402
from microgui.qt.main_window import MainWindow  # noqa: E402
from microgui.qt.settings import UiSettings  # noqa: E402
from microgui.qt.workers import live_run_pools  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Qt warnings fail the Qt tests (STYLE.md §8), except the offscreen platform's notice that it
    cannot size native windows, which says nothing about microgui."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(
                pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
            )


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test writes its QSettings under its own temporary folder, never the user's."""
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    yield folder


@pytest.fixture(autouse=True)
def _no_unsaved_runs_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening another table does not ask about unsaved runs (a modal question would wait for
    ever offscreen); tests/qt/test_run_numbers.py asks."""
    from microgui.qt.main_window import MainWindow

    monkeypatch.setattr(MainWindow, "confirm_dropping_runs", False)


@pytest.fixture(autouse=True)
def _no_dangling_run_threads() -> Iterator[None]:
    """Fail a test that leaves a run pool (or the global pool) with a running thread.

    Autouse, so it is set up before and torn down after ``qtbot``, which closes the test's
    widgets (and so the windows' pools) first. ← napari ``_dangling_qthread_pool``.
    """
    yield
    busy = [p for p in [*live_run_pools(), QThreadPool.globalInstance()] if p.activeThreadCount()]
    # A cancelled run stops at its next progress call, but a numba compile in progress cannot be
    # interrupted: with an empty kernel cache (CI) a worker may still be compiling when the
    # window has closed. It must end within the wait; a thread that never ends fails the test.
    stuck = [pool for pool in busy if not pool.waitForDone(120_000)]
    gui_gc.reset()  # a window the test left open: automatic collection back for the next test
    if stuck:
        pytest.fail(f"{len(stuck)} thread pool(s) still had running threads 2 min after the test")


@pytest.fixture
def window(qtbot) -> MainWindow:  # type: ignore[no-untyped-def]
    """A shown main window with isolated settings; closed (pool drained) at teardown."""
    win = MainWindow(UiSettings())
    qtbot.addWidget(win)
    win.show()
    return win


@pytest.fixture
def demo_window(window: MainWindow) -> MainWindow:
    """The main window with the demo table open."""
    assert window.open_demo(), window.last_error
    return window


@pytest.fixture
def laptop_demo_window(qtbot) -> Iterator[MainWindow]:  # type: ignore[no-untyped-def]
    """The demo table in a main window sized 1366 × 768 before its first show, as the app opens
    on a laptop (docks laid out for that width); its runs shut down at teardown."""
    win = MainWindow(UiSettings())
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    assert win.open_demo(), win.last_error
    yield win
    win.controller.shutdown()
