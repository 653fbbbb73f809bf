"""Deleting a main window whose pools still run a task (CI, session 45): the window's deletion
deleted its pools, whose destructor waited for the task while the GUI thread held the GIL the
task needed, and the process hung for good. In a child process, with a timeout: on the old code
this test hangs."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import time
from PySide6.QtCore import QCoreApplication, QEvent, QRunnable
from PySide6.QtWidgets import QApplication
app = QApplication([])
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

window = MainWindow(UiSettings(persist=False))
window.show()
window.close()
done = []

def late_task():  # a task started after the close (a signal queued before it), in Python
    began = time.perf_counter()
    while time.perf_counter() - began < 0.5:
        sum(range(1000))
    done.append(True)

window.controller.reference_pool.start(QRunnable.create(late_task))
time.sleep(0.05)
gone = []
window.destroyed.connect(lambda *_a: gone.append(True))
window.deleteLater()
QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
print("deleted" if gone and done else f"not deleted: gone={gone} done={done}", flush=True)
"""


def test_a_window_deleted_with_a_task_still_running_waits_for_it_and_goes() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "deleted"


OWNER_SCRIPT = r"""
import time
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QRunnable
app = QCoreApplication([])
from microgui.qt.workers import make_run_pool

class Owner(QObject):
    def event(self, e):  # deleted from Python code: the GIL held in the destructor
        return super().event(e)

owner = Owner()
pool = make_run_pool(owner)
done = []

def task():
    began = time.perf_counter()
    while time.perf_counter() - began < 0.5:
        sum(range(1000))
    done.append(True)

pool.start(QRunnable.create(task))
time.sleep(0.05)
owner.deleteLater()
QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
print("deleted" if done else "not done", flush=True)
"""


def test_any_owner_of_a_run_pool_deleted_with_a_task_running_waits_for_it() -> None:
    """The same for every pool :func:`~microgui.qt.workers.make_run_pool` makes (the help
    window's, the file tasks', the kernel preparation's): the class, not the one window."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-c", OWNER_SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "deleted"
