"""Starting the app: ``run_app(file, demo, screenshot)`` (what ``microgui gui`` calls).

With ``screenshot``, the app opens the demo (or the file), runs the default method, waits for the
result and the plot, saves ``window.grab()`` as PNG at a fixed window size and exits: 0 on success,
1 when anything failed (load, run, timeout, writing the PNG).
"""

from __future__ import annotations

import sys
import traceback
from importlib import resources
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QEventLoop, QMessageLogContext, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

import microgui
from microgui.core.errors import MicroguiError
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

__all__ = ["run_app", "make_application", "app_icon", "SCREENSHOT_SIZE", "SCREENSHOT_TIMEOUT_S"]

SCREENSHOT_SIZE = (1400, 900)
SCREENSHOT_TIMEOUT_S = 120.0
#: Time given to the plot to lay out and paint after the result arrives, before the grab.
_RENDER_DELAY_MS = 300


def _icon_path() -> Path | None:
    """resources/icons/microgui.png, installed (microgui.resources) or from a source checkout."""
    try:
        candidate = resources.files("microgui.resources").joinpath("icons", "microgui.png")
        if candidate.is_file():
            return Path(str(candidate))
    except (ModuleNotFoundError, TypeError, FileNotFoundError):
        pass
    checkout = (
        Path(microgui.__file__).resolve().parent.parent / "resources" / "icons" / "microgui.png"
    )
    return checkout if checkout.is_file() else None


def app_icon() -> QIcon:
    """The application icon (an empty icon when the file is absent)."""
    path = _icon_path()
    return QIcon(str(path)) if path is not None else QIcon()


#: Qt messages that say nothing about microgui (the offscreen platform cannot size native windows).
_IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints",)


def _qt_message_handler(mode: QtMsgType, _context: QMessageLogContext, message: str) -> None:
    if any(message.startswith(m) for m in _IGNORED_QT_MESSAGES):
        return
    level = {
        QtMsgType.QtDebugMsg: "debug",
        QtMsgType.QtInfoMsg: "info",
        QtMsgType.QtWarningMsg: "warning",
        QtMsgType.QtCriticalMsg: "critical",
        QtMsgType.QtFatalMsg: "fatal",
    }.get(mode, "message")
    print(f"qt {level}: {message}", file=sys.stderr)


def make_application() -> QApplication:
    """The running QApplication, or a new one named and iconed for microgui."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        qInstallMessageHandler(_qt_message_handler)
        app = QApplication(sys.argv[:1])
    app.setApplicationName("microgui")
    app.setOrganizationName("microgui")
    app.setApplicationVersion(microgui.__version__)
    app.setWindowIcon(app_icon())
    return app


def run_app(file: str | None = None, demo: bool = False, screenshot: str | None = None) -> int:
    """Open the microgui window (on ``file`` or the demo) and return the exit code.

    With ``screenshot``: run the default method, save the window as that PNG and exit.
    """
    app = make_application()
    if screenshot is not None:
        return _screenshot(app, file, demo, Path(screenshot))
    window = MainWindow(UiSettings(), prepare_kernels=True)
    previous_hook = sys.excepthook

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        # An exception escaping a slot must not end the session: tell the user, keep the window.
        details = "".join(traceback.format_exception(kind, exc, tb))
        print(details, file=sys.stderr)
        window.show_error(f"Internal error: {kind.__name__}: {exc}", details)

    sys.excepthook = excepthook
    try:
        window.show()
        if file:
            window.open_path(file)
        elif demo:
            # read by the loader, started once the window's first paint is done (queued behind
            # it): the reading thread would otherwise share the GIL with that paint; the window
            # paints and answers while the table is read (issue 30, session 46)
            QTimer.singleShot(0, window, lambda: window.open_demo(background=True))
        else:
            _offer_restore(window)
        return int(app.exec())
    finally:
        sys.excepthook = previous_hook


def _offer_restore(window: MainWindow) -> bool:
    """After a session that did not end cleanly, offer to restore it from the autosave."""
    from microgui.core.runs.project_file import clear_autosave, read_autosave

    try:
        project = read_autosave()
    except MicroguiError as exc:  # damaged: set aside by read_autosave, never fatal
        window.show_error(str(exc), title="The last session's autosave was set aside")
        return False
    if project is None:
        return False
    name = Path(project.data_path).name if project.data_path else "a table"
    answer = QMessageBox.question(
        window,
        "Restore the last session?",
        f"microgui did not close properly last time. Restore that session ({name}, its roles "
        f"and {len(project.runs)} run(s), re-computed with the same seeds)?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.Yes,
    )
    if answer != QMessageBox.StandardButton.Yes:
        clear_autosave()
        return False
    return window.open_project(project)


def _screenshot(app: QApplication, file: str | None, demo: bool, out: Path) -> int:
    window = MainWindow(UiSettings(persist=False))
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    status: dict[str, int | str | None] = {"code": None, "message": ""}
    loop = QEventLoop()

    def finish(code: int, message: str = "") -> None:
        if status["code"] is None:
            status["code"], status["message"] = code, message
            loop.quit()

    def grab() -> None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            ok = window.grab().save(str(out), "PNG")
        except OSError as exc:
            finish(1, f"cannot write {out}: {exc}")
            return
        finish(0 if ok else 1, "" if ok else f"cannot write {out}")

    previous_hook = sys.excepthook

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        finish(1, "".join(traceback.format_exception(kind, exc, tb)))

    sys.excepthook = excepthook
    ctl = window.controller

    def start_run(_dataset: object = None) -> None:
        window.run_panel.set_spec(ctl.default_spec())
        if window.run_panel.run() is None:
            finish(1, window.last_error)

    try:
        ctl.run_finished.connect(lambda _i, _r: QTimer.singleShot(_RENDER_DELAY_MS, grab))
        ctl.run_failed.connect(
            lambda _i, message, _details: finish(1, f"the run failed: {message}")
        )
        ctl.run_cancelled.connect(lambda _i: finish(1, "the run was cancelled"))
        ctl.load_failed.connect(lambda _path, message, _details: finish(1, message))
        QTimer.singleShot(
            int(SCREENSHOT_TIMEOUT_S * 1000),
            lambda: finish(1, f"no result after {SCREENSHOT_TIMEOUT_S:.0f} s"),
        )
        if file:
            ctl.dataset_loaded.connect(start_run)
            window.open_file(file)
        elif window.open_demo():
            start_run()
        else:
            finish(1, window.last_error)
        if status["code"] is None:
            loop.exec()
    finally:
        sys.excepthook = previous_hook
        window.close()
    code = status["code"]
    code = int(code) if code is not None else 1
    if code != 0:
        print(f"microgui: error: no screenshot: {status['message']}", file=sys.stderr)
    return code
