"""The app's start-up keeps the GUI thread free (issue 30, session 46): ``microgui --demo``
shows its window before the demo table, which the table loader reads, and the GUI thread
imports no method module between the window's show and the table (the kernel preparation's
child learns its methods' modules from a table). Run in a new process, as a user starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lines_of(
    code: str, tmp_path: Path, prefix: str, timeout: float, env: dict[str, str] | None = None
) -> list[str]:
    """The lines starting ``prefix`` that ``code`` prints in a new offscreen Python process
    (this checkout first on its path; ``env`` added); it must exit 0 and print one."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            **(env or {}),
        },
        cwd=tmp_path,
        timeout=timeout,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith(prefix)]
    assert out.returncode == 0 and lines, out.stderr[-3000:]
    return lines


def _start_app_on_the_demo(tmp_path: Path) -> dict[str, object]:
    code = (
        "import time\nstarted = time.perf_counter()\nimport json\n"
        "from microgui.bench.startup_stall import startup_session\n"
        "print('RESULT', json.dumps(startup_session(started)), flush=True)\n"
    )
    lines = _lines_of(code, tmp_path, "RESULT ", 240, {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # settings never touch the user's
        "MICROGUI_STATE_DIR": str(tmp_path / "state"),  # nor the autosave
    })  # fmt: skip
    result: dict[str, object] = json.loads(lines[-1][len("RESULT ") :])
    return result


def test_app_shows_its_window_before_the_demo_table_read_by_the_loader(tmp_path: Path) -> None:
    r = _start_app_on_the_demo(tmp_path)
    assert r["outcome"] == "shown" and r["exit_code"] == 0
    # the table was not read in the GUI thread before the event loop ran: the loader reads it
    assert r["table_at_first_turn"] is False
    assert r["loader_started"] is True
    assert r["shown_s"] is not None and r["table_s"] is not None
    assert float(r["shown_s"]) < float(r["table_s"])  # type: ignore[arg-type]
    # no method module imported for the kernel preparation (nor anything else) meanwhile
    assert r["methods_at_table"] == r["methods_at_show"]


def test_kernel_preparation_child_imports_no_method_module_in_the_gui_thread(
    tmp_path: Path,
) -> None:
    """The preparation's child is told nothing it needs the methods' modules for; the app
    learns which module each warm-up prepares from ``PREPARED_MODULES`` (it imported every
    method's module on the event loop's first turn, ~0.4 s, to learn it)."""
    code = (
        "import sys\n"
        "from PySide6.QtCore import QCoreApplication, QTimer\n"
        "from microgui.qt import kernel_prep\n"
        "app = QCoreApplication([])\n"
        "script = 'import time; print(\"total 1\", flush=True); time.sleep(30)'\n"
        "kernel_prep.child_command = lambda: [sys.executable, '-c', script]\n"
        "def methods():\n"
        "    return {m for m in sys.modules if m.startswith('microgui.core.methods.')}\n"
        "before = methods()\n"
        "prep = kernel_prep.KernelPrep()\n"
        "prep.start()\n"
        "def look():\n"
        "    if prep.total == 1:\n"
        "        print('NEW', sorted(methods() - before), flush=True)\n"
        "        prep.shutdown(5000)\n"
        "        app.quit()\n"
        "timer = QTimer(interval=20)\n"
        "timer.timeout.connect(look)\n"
        "timer.start()\n"
        "QTimer.singleShot(60_000, app.quit)\n"
        "app.exec()\n"
    )
    lines = _lines_of(code, tmp_path, "NEW ", 120)
    assert lines[-1] == "NEW []"


def test_open_demo_menu_reads_the_table_with_the_loader(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """File → Open demo: the table loader reads it; meanwhile the status bar's table label says
    it is being read (the GUI thread read it and explained its roles, 150-250 ms)."""
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=60_000) as blocker:
        window.demo_action.trigger()
        assert ctl.dataset is None and ctl.is_loading
        assert window.dataset_label.text() == "Reading demo_persons.csv…"
    assert blocker.args[0].n_records == 4000 and window.controller.dataset is blocker.args[0]
    assert window.dataset_label.text().startswith("demo_persons")
    assert window.controller.dataset.roles.quasi_identifiers  # with the demo's roles
