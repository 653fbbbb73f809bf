"""The start-up row of the app (issue 30, session 46): ``microgui --demo`` from process start to
the demo table shown, and the GUI thread's longest stall meanwhile once the window is shown.

:func:`startup_session` runs the app's own entry point (:func:`microgui.qt.app.run_app` with
``demo=True``) in the calling process, which must be a fresh one: the window's first show is
caught by an event filter, from which a 10 ms :class:`QTimer` heartbeat and a
:class:`~microgui.qt.stall_watch.StallWatch` (its stacks name what the longest stall held) watch
the GUI thread until the demo table is in the window and :data:`SETTLE_MS` more (its first
paint). Two figures are held to :data:`STALL_TARGET_MS`: the event loop's first turn (from
``show()`` to the end of the window's first paint: the old start-up read the demo table there)
and the longest stall after it. Before the show there is no window to freeze: the window's
construction is in ``shown_s``. :func:`startup_stall_row` runs :data:`SESSIONS` sessions, each in
a new process with its settings and autosave in a temporary folder; the kernel cache is the
user's (a start after the first).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any

__all__ = [
    "SETTLE_MS",
    "SESSIONS",
    "STALL_TARGET_MS",
    "startup_session",
    "startup_stall_row",
    "startup_stall_text",
]

#: issue 30: no GUI-thread stall above this once the window is shown
STALL_TARGET_MS = 100.0
#: how long the window is watched after the table arrived (its first paint)
SETTLE_MS = 500
#: fresh processes measured by :func:`startup_stall_row`
SESSIONS = 3


def startup_session(started: float, timeout_s: float = 120.0) -> dict[str, Any]:
    """One start of the app on the demo, in this (fresh) process; ``started`` is the
    :func:`time.perf_counter` of the process's first line. Returns ``shown_s`` (process start
    to the window's first show), ``table_s`` (to the demo table in the window),
    ``table_at_first_turn`` (the table was read before the event loop's first turn, in the GUI
    thread), ``methods_at_show`` and
    ``methods_at_table`` (the method modules imported at the show and when the table came),
    ``loader_started`` (the controller's ``load_started`` came: the table loader read it),
    ``first_paint_ms`` (from the window's show to the end of the event loop's first turn, which
    lays it out and paints it), ``longest_stall_ms`` (the longest gap between heartbeats after
    that, until :data:`SETTLE_MS` after the table), ``stall_where`` (the project frames
    sampled in the longest stall above 50 ms, the first turn included) and ``outcome``."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    from microgui.qt.app import make_application, run_app
    from microgui.qt.stall_watch import StallWatch

    app = make_application()
    state: dict[str, Any] = {"outcome": "timeout", "shown_s": None, "table_s": None}
    ticks: list[float] = []
    watch: list[StallWatch] = []
    heartbeat = QTimer(interval=10)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))

    def finish(outcome: str) -> None:
        if state["outcome"] == "timeout":
            state["outcome"] = outcome
            window = next(
                (w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow)), None
            )
            if window is not None:
                window.close()
            app.quit()

    def method_modules() -> list[str]:
        return sorted(m for m in sys.modules if m.startswith("microgui.core.methods."))

    def table_shown(*_a: object) -> None:
        if state["table_s"] is None:
            state["table_s"] = time.perf_counter() - started
            state["methods_at_table"] = method_modules()
            QTimer.singleShot(SETTLE_MS, lambda: finish("shown"))

    class FirstShow(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
            if (
                event.type() == QEvent.Type.Show
                and isinstance(obj, QMainWindow)
                and state["shown_s"] is None
            ):
                now = time.perf_counter()
                state["shown_s"] = now - started
                ticks.append(now)
                heartbeat.start()
                watch.append(StallWatch(50.0, log_stalls=False).start())
                ctl = obj.controller  # type: ignore[attr-defined]
                state["methods_at_show"] = method_modules()
                state["loader_started"] = False
                ctl.load_started.connect(lambda _p: state.update(loader_started=True))
                ctl.dataset_loaded.connect(table_shown)
                ctl.load_failed.connect(lambda _p, m, _d: finish(f"failed: {m}"))

                def first_turn() -> None:
                    # the table read in the GUI thread before the event loop ran
                    state["table_at_first_turn"] = ctl.dataset is not None
                    if ctl.dataset is not None:
                        table_shown()

                QTimer.singleShot(0, first_turn)
            return False

    spy = FirstShow()
    app.installEventFilter(spy)
    QTimer.singleShot(int(timeout_s * 1000), lambda: finish("timeout"))
    code = run_app(demo=True)
    heartbeat.stop()
    for w in watch:
        w.stop()
    gaps = [(b - a) * 1000 for a, b in zip(ticks, ticks[1:], strict=False)]
    # the first: show() itself, the window's layout and first paint, and what else that turn of
    # the event loop ran; the window is on the screen from its end
    first, later = (gaps[0], gaps[1:]) if gaps else (0.0, [])
    longest = watch[0].longest() if watch else None
    where = ""
    if longest is not None and longest.stacks:
        # each frame from the package's folder on: no path of the machine in the output
        frames = [
            f[f.rfind("microgui/") :] for stack in longest.stacks for f in stack if "microgui/" in f
        ]
        where = " < ".join(dict.fromkeys(reversed(frames[-40:])))[:400]
    return {
        **state,
        "exit_code": code,
        "first_paint_ms": round(first, 1),
        "longest_stall_ms": round(max(later, default=0.0), 1),
        "stall_where": where,
    }


def startup_stall_row(sessions: int = SESSIONS, timeout_s: float = 180.0) -> dict[str, Any]:
    """:func:`startup_session` in ``sessions`` new processes (offscreen unless
    ``QT_QPA_PLATFORM`` says otherwise; settings and autosave in a temporary folder): the
    median and max of each figure, the sessions' outcomes and the worst stall's location."""
    code = (
        "import time\nstarted = time.perf_counter()\nimport json\n"
        "from microgui.bench.startup_stall import startup_session\n"
        "print('RESULT', json.dumps(startup_session(started)), flush=True)\n"
    )
    from microgui.qt.perf import fresh_process_result

    runs: list[dict[str, Any]] = []
    for _ in range(sessions):
        with tempfile.TemporaryDirectory(prefix="microgui-startup-") as folder:
            env = {
                **os.environ,
                "XDG_CONFIG_HOME": os.path.join(folder, "config"),
                "MICROGUI_STATE_DIR": os.path.join(folder, "state"),
            }
            env.setdefault("QT_QPA_PLATFORM", "offscreen")
            env.pop("MICROGUI_STALL_WATCH", None)
            began = time.perf_counter()
            run = fresh_process_result(code, env, timeout_s, cwd=folder, exit_zero=False)
            if isinstance(run, str):
                runs.append({"outcome": run})
                continue
            run["process_s"] = time.perf_counter() - began
            runs.append(run)
    good = [r for r in runs if r.get("outcome") == "shown"]

    def figure(key: str) -> tuple[float, float] | None:
        values = [float(r[key]) for r in good if r.get(key) is not None]
        return (statistics.median(values), max(values)) if values else None

    worst = max(good, key=lambda r: float(r["longest_stall_ms"]), default=None)
    return {
        "sessions": len(runs),
        "outcomes": [str(r.get("outcome")) for r in runs],
        "shown_s": figure("shown_s"),
        "table_s": figure("table_s"),
        "first_paint_ms": figure("first_paint_ms"),
        "longest_stall_ms": figure("longest_stall_ms"),
        "stall_where": worst.get("stall_where", "") if worst else "",
    }


def startup_stall_text(sessions: int = SESSIONS) -> str:
    """The row as the benchmark prints it."""
    r = startup_stall_row(sessions)
    stall, shown, table = r["longest_stall_ms"], r["shown_s"], r["table_s"]
    paint = r["first_paint_ms"]
    if stall is None or shown is None or table is None or paint is None:
        return f"  microgui --demo, start to table shown: n/a ({'; '.join(r['outcomes'])})"
    verdict = "met" if stall[1] <= STALL_TARGET_MS else "MISSED"
    # the first turn holds the window's own layout and paint (the old code read the demo there)
    painted = "met" if paint[1] <= STALL_TARGET_MS else "MISSED"
    where = f"\n    (stacks of the longest: {r['stall_where']})" if r["stall_where"] else ""
    return (
        f"  microgui --demo to the table shown (median/max of {r['sessions']} processes): "
        f"window shown {shown[0]:.2f}/{shown[1]:.2f} s after process start, table shown "
        f"{table[0]:.2f}/{table[1]:.2f} s;\n    the event loop's first turn (show() to the "
        f"window's first paint) {paint[0]:.0f}/{paint[1]:.0f} ms, target <= "
        f"{STALL_TARGET_MS:.0f} ms {painted}; longest GUI-thread stall from the first paint to the table "
        f"shown {stall[0]:.0f}/{stall[1]:.0f} ms, target <= {STALL_TARGET_MS:.0f} ms "
        f"{verdict}{where}"
    )
