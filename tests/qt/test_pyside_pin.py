"""Guard for the PySide6 pin (pyproject.toml).

PySide6 6.12.0 on Python 3.11 aborts with "Fatal Python error: none_dealloc" after some thousands
of Qt calls that return None (reproduced here: the loop below dies at 6.12.0, passes at 6.11.3).
This test runs that loop in a subprocess so a bad upgrade fails loudly instead of crashing the app.
"""

from __future__ import annotations

import os
import subprocess
import sys

LOOP = r"""
from PySide6.QtWidgets import QApplication, QLabel, QWidget
app = QApplication([])
w = QWidget(); label = QLabel("x", w)
for i in range(60000):
    label.setText(str(i)); w.setWindowTitle("t"); label.setVisible(True)
    if i % 100 == 0:
        app.processEvents()
print("survived")
"""


def test_many_none_returning_qt_calls_do_not_abort() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", LOOP], capture_output=True, text=True, env=env, timeout=240
    )
    assert out.returncode == 0 and "survived" in out.stdout, out.stderr[-2000:]
