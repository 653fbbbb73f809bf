"""Draw the main window and each of its views on the demo data and save them as PNG files.

Run by :func:`screens.capture` in its own process, under Xvfb with Qt's xcb platform (a real
window): ``python capture_app.py OUT_DIR``. The window fills the screen (as maximized); the demo
table is opened and its Risk view grabbed; an mstk run (k = 5, seed 0) is made: its MST view and classes are grabbed; then
the proposed run (MDAV-generic, k = 5, seed 0) is made and compared with it, and every tab of the
central view, the whole window and every visible dock are grabbed, each once the background work
has finished and the event loop has been quiet for a moment.

Deterministic by construction: fixed seeds, the Fusion style and its standard palette, one font
(DejaVu Sans 9 pt), no cursor blinking or UI animations, the pointer parked in a corner, and
the clock frozen for what the views print (run times, history timestamps). Writes
``OUT_DIR/full/NAME.png`` (screen resolution), ``OUT_DIR/NAME.png`` (:func:`small`: what is
compared and kept as reference) and ``OUT_DIR/capture.json`` (Qt version,
font, screen, the names written).
"""

from __future__ import annotations

import datetime as _datetime
import json
import re
import sys
import time as _time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QEventLoop, QPoint, Qt, QThreadPool, QTimer, qVersion
from PySide6.QtGui import QCursor, QFont, QFontInfo, QImage
from PySide6.QtWidgets import QApplication, QDockWidget, QStyleFactory, QWidget

from microgui.core.methods import warm_ups
from microgui.core.runs import RunSpec
from microgui.qt.app import make_application
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings
from microgui.qt.workers import live_run_pools

__all__ = ["MAX_WIDTH", "FONT_FAMILY", "FONT_POINT_SIZE", "main"]

#: Width of the images compared (and stored as references), in pixels.
MAX_WIDTH = 1200
FONT_FAMILY = "DejaVu Sans"
FONT_POINT_SIZE = 9
#: How long the event loop must stay quiet (no background task) before a grab.
QUIET_MS = 300
RUN_TIMEOUT_S = 240.0  # a first run on an empty kernel cache compiles (tens of seconds)
FROZEN_NOW = _datetime.datetime(2024, 1, 2, 10, 30, 0)


def freeze_clock() -> None:
    """Run times print as 0.00 s and history entries as made at :data:`FROZEN_NOW`: the only
    texts of the views that change from one run to the next."""
    import microgui.core.runs.protect as runs  # where run_protection reads the clock
    import microgui.qt.controller as controller

    class _FrozenTime:
        def __getattr__(self, name: str) -> Any:
            return getattr(_time, name)

        @staticmethod
        def perf_counter() -> float:
            return 0.0

    class _FrozenDatetime(_datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:  # noqa: ARG003
            return FROZEN_NOW

    runs.time = _FrozenTime()  # type: ignore[assignment]
    controller.datetime = _FrozenDatetime  # type: ignore[misc]


def fixed_look(app: QApplication) -> str:
    """One style, palette and font on every machine; no blinking, no animation. Returns the
    font family Qt actually uses (another one when DejaVu Sans is not installed)."""
    style = QStyleFactory.create("Fusion")
    app.setStyle(style)
    app.setPalette(style.standardPalette())
    font = QFont(FONT_FAMILY, FONT_POINT_SIZE)
    font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    app.setFont(font)
    app.setCursorFlashTime(0)
    for effect in (
        Qt.UIEffect.UI_AnimateMenu,
        Qt.UIEffect.UI_FadeMenu,
        Qt.UIEffect.UI_AnimateCombo,
        Qt.UIEffect.UI_AnimateTooltip,
        Qt.UIEffect.UI_FadeTooltip,
        Qt.UIEffect.UI_AnimateToolBox,
    ):
        app.setEffectEnabled(effect, False)
    return QFontInfo(font).family()


def wait_until(app: QApplication, done: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Run the event loop until ``done()`` holds (raises TimeoutError naming ``what``)."""
    clock = QElapsedTimer()
    clock.start()
    while not done():
        if clock.elapsed() > timeout_s * 1000:
            raise TimeoutError(f"{what}: not done after {timeout_s:.0f} s")
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()
    app.processEvents()


def settle(app: QApplication, window: MainWindow, timeout_s: float = 60.0) -> None:
    """Wait until no background task runs (runs, loads, trees, correlations) and the event loop
    has been quiet for :data:`QUIET_MS`: the views have drawn what they were given."""

    def idle() -> bool:
        pools = [*live_run_pools(), QThreadPool.globalInstance()]
        return not window.controller.is_running and not any(p.activeThreadCount() for p in pools)

    clock = QElapsedTimer()
    clock.start()
    quiet_since: int | None = None
    while True:
        app.processEvents()
        loop = QEventLoop()
        QTimer.singleShot(50, loop.quit)
        loop.exec()
        if idle():
            quiet_since = clock.elapsed() if quiet_since is None else quiet_since
            if clock.elapsed() - quiet_since >= QUIET_MS:
                return
        else:
            quiet_since = None
        if clock.elapsed() > timeout_s * 1000:
            raise TimeoutError(f"the views were still busy after {timeout_s:.0f} s")


def run(app: QApplication, window: MainWindow, spec: RunSpec) -> None:
    """Run ``spec`` from the method panel as a user would, wait for its result (raises on
    failure), then let the views settle."""
    ctl = window.controller
    state: dict[str, str | None] = {"failed": None, "done": None}
    ctl.run_finished.connect(lambda *_a: state.update(done="yes"))
    ctl.run_failed.connect(lambda _i, message, _d: state.update(failed=message))
    window.run_panel.set_spec(spec)
    if window.run_panel.run() is None:
        raise RuntimeError(f"the run {spec.method} did not start: {window.last_error}")
    wait_until(
        app, lambda: state["done"] is not None or state["failed"] is not None, RUN_TIMEOUT_S,
        f"run {spec.method}",
    )  # fmt: skip
    if state["failed"] is not None:
        raise RuntimeError(f"the run {spec.method} failed: {state['failed']}")
    settle(app, window)


def slug(text: str) -> str:
    """A file name for a tab's or dock's title: 'Correlations && OLS' -> 'correlations-ols'."""
    text = text.replace("&&", " ").replace("&", "").replace("–", "-")
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def small(image: QImage) -> QImage:
    """At most :data:`MAX_WIDTH` wide, in 256 colours without dithering: a quarter of the bytes
    of full colour, and the same image from the same pixels."""
    if image.width() > MAX_WIDTH:
        image = image.scaledToWidth(MAX_WIDTH, Qt.TransformationMode.SmoothTransformation)
    flags = Qt.ImageConversionFlag.ThresholdDither | Qt.ImageConversionFlag.AvoidDither
    return image.convertToFormat(QImage.Format.Format_Indexed8, flags)


def save(widget: QWidget, out: Path, name: str) -> None:
    """``widget.grab()`` at full size and downscaled to at most :data:`MAX_WIDTH` wide."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    (out / "full").mkdir(parents=True, exist_ok=True)
    if not image.save(str(out / "full" / f"{name}.png"), "PNG"):
        raise OSError(f"cannot write {out / 'full' / name}.png")
    image = small(image)
    if not image.save(str(out / f"{name}.png"), "PNG", 0):
        raise OSError(f"cannot write {out / name}.png")


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    # Kernels compiled (or loaded) before the window exists: the app's own preparation then
    # loads them in well under its SHOW_AFTER time and the status bar says nothing of it.
    for warm_up in warm_ups():
        warm_up()
    freeze_clock()
    app = make_application()
    family = fixed_look(app)
    window = MainWindow(UiSettings(persist=False))
    screen = app.primaryScreen()
    area = screen.availableGeometry()
    QCursor.setPos(screen, QPoint(area.left(), area.bottom()))  # over the status bar's text
    window.setGeometry(area)
    window.show()
    wait_until(app, lambda: window.isVisible() and window.windowHandle().isExposed(), 20, "show")
    if not window.open_demo():
        raise RuntimeError(f"cannot open the demo: {window.last_error}")
    settle(app, window)
    ctl = window.controller
    names: list[str] = []

    def grab(widget: QWidget, name: str) -> None:
        settle(app, window)
        save(widget, out, name)
        names.append(name)

    # The Risk view before any run: the loaded table's own risk (issue 29).
    window.tabs.setCurrentWidget(window.risk_panel)
    grab(window.tabs, "before-view-" + slug(window.tabs.tabText(window.tabs.currentIndex())))
    window.tabs.setCurrentIndex(0)
    # The MST view and the classes belong to an mstk run; the other views show the proposed
    # run (an mstk run generalizes, which leaves little to correlate), compared with the mstk.
    run(app, window, RunSpec.make("mstk", 5, seed=0))
    window.tabs.setCurrentWidget(window.mst_plot)
    grab(window.tabs, "mstk-view-" + slug(window.tabs.tabText(window.tabs.currentIndex())))
    grab(window.classes_dock, "mstk-dock-" + slug(window.classes_dock.windowTitle()))
    window.tabs.setCurrentIndex(0)
    run(app, window, ctl.default_spec())  # MDAV-generic, k = 5, seed 0
    ctl.set_comparison([entry.run_id for entry in ctl.history])
    tabs = window.tabs
    for index in range(tabs.count()):  # every view (some draw when first shown)
        tabs.setCurrentIndex(index)
        grab(tabs, "view-" + slug(tabs.tabText(index)))
    tabs.setCurrentIndex(0)
    grab(window, "window")
    for dock in window.findChildren(QDockWidget):
        if dock.isVisible() or window.tabifiedDockWidgets(dock):
            # a dock behind another's tab (the plan behind the run history) is raised first:
            # grabbed hidden, it was never laid out at the window's size (issue 31: the plan
            # dock's reference showed only its "#" column)
            dock.raise_()
            grab(dock, "dock-" + slug(dock.windowTitle()))
    info = {
        "qt": qVersion(),
        "font": family,
        "screen": f"{area.width()}x{area.height()}",
        "window": f"{window.width()}x{window.height()}",
        "names": names,
    }
    (out / "capture.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
