"""File → *Export protected table…*: the save dialog and its formats, the release check shown
before writing (:class:`ExportOverrideDialog`: exporting anyway needs a typed reason), and
File → *Export options…*.

What is written and checked is core (:func:`~microgui.core.release.check.export_job`, through
:meth:`~microgui.qt.controller.AppController.export_job`); the files are written by the
window's file task, off the GUI thread, or at once for a script or a test.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.release.check import ExportCheck, default_release_path, report_path_for
from microgui.qt.export_options import ExportOptionsDialog, options_text

#: The :class:`~microgui.qt.main_window.MainWindow` (not imported: it imports this module, and
#: the package has no import cycle, type-only ones included).
MainWindow = Any

__all__ = [
    "EXPORT_FILTERS",
    "ExportOverrideDialog",
    "default_export_path",
    "export_dialog",
    "export_options_dialog",
    "export_to",
    "with_export_suffix",
]

#: The export dialog's formats (issue 18): the file's extension chooses what is written
#: (:func:`microgui.core.release.release_format`).
EXPORT_FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CSV (*.csv)", (".csv", ".tsv", ".txt")),
    ("Excel workbook (*.xlsx)", (".xlsx",)),
    ("Parquet (*.parquet)", (".parquet", ".pq")),
    ("SPSS, labels kept (*.sav *.zsav)", (".sav", ".zsav")),
    ("Stata, labels kept (*.dta)", (".dta",)),
)


def with_export_suffix(path: str, picked: str) -> str:
    """The name typed, with the chosen format's extension added when it has none of a known
    format (a name typed without one, under the "Excel workbook" choice, becomes .xlsx)."""
    suffix = Path(path).suffix.lower()
    if any(suffix in exts for _f, exts in EXPORT_FILTERS):
        return path
    for name, exts in EXPORT_FILTERS:
        if name == picked:
            return path + exts[0]
    return path


class ExportOverrideDialog(QDialog):
    """Shows why a protected table fails the release check; exporting anyway needs a typed reason."""

    def __init__(
        self, problems: tuple[str, ...], target: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export refused by the release check")
        layout = QVBoxLayout(self)
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        text = QLabel(
            f"<p>The protected table for <b>{html.escape(target.name)}</b> does not pass the release check:</p>"
            f"<ul>{items}</ul><p>Run again with a valid configuration, or export anyway and give the reason. "
            "The reason and the problems are recorded in the report.</p>"
        )
        text.setWordWrap(True)
        layout.addWidget(text)
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("Reason for releasing this table anyway (required)")
        layout.addWidget(self.reason_edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton(
            "Export anyway", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.export_button.setEnabled(False)
        self.reason_edit.textChanged.connect(
            # a reason has words, as the core asks (issue 12: "  " or "..." is no reason)
            lambda t: self.export_button.setEnabled(any(ch.isalnum() for ch in t))
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(520, 260)

    def reason(self) -> str:
        return self.reason_edit.text().strip()


def default_export_path(window: MainWindow) -> Path:
    """The release proposed for the current result (:func:`default_release_path`), in the
    last folder used."""
    ctl = window.controller
    dataset = ctl.result_dataset or ctl.dataset
    source = dataset.source if dataset is not None else None
    k = ctl.result.spec.k if ctl.result is not None else 0
    return default_release_path(source, k, window.settings.last_directory())


def export_dialog(window: MainWindow) -> None:
    """Ask where to export the current result, then export it in the background."""
    if window.controller.result is None:
        window.show_error("Run a method before exporting.")
        return
    default = default_export_path(window)
    chosen = next(
        (f for f, exts in EXPORT_FILTERS if default.suffix.lower() in exts),
        EXPORT_FILTERS[0][0],
    )
    path, picked = QFileDialog.getSaveFileName(
        window,
        "Export the protected table",
        str(default),
        ";;".join(f for f, _ in EXPORT_FILTERS),
        chosen,
    )
    if path:
        export_to(window, with_export_suffix(path, picked), background=True)


def export_options_dialog(window: MainWindow) -> ExportOptionsDialog:
    """File → Export options…: opens the dialog (non-modal); its OK sets the options."""
    ctl = window.controller
    # the identifiers tagged now and those of the run an export would write (its roles may
    # be older than the current tagging)
    identifiers = list(ctl.roles.identifiers) if ctl.roles is not None else []
    if ctl.result is not None:
        identifiers += [c for c in ctl.result.roles.identifiers if c not in identifiers]
    dialog = ExportOptionsDialog(ctl.export_options, identifiers, window)

    def accepted() -> None:
        ctl.export_options = dialog.options()
        said = ctl.export_options.describe()
        window.statusBar().showMessage(
            f"Export options: {said}." if said else "Export options: the defaults.", 10000
        )

    dialog.accepted.connect(accepted)
    window.export_options_window = dialog
    dialog.open()
    return dialog


def export_to(window: MainWindow, path: str | Path, *, background: bool = False) -> bool:
    """Export the current result to ``path`` (and its report beside it).

    When the release check fails, the problems are shown in :class:`ExportOverrideDialog`;
    the export then happens only if the user types a reason and confirms. Returns True when
    the files were written now. ``background`` (the dialog's way): the files are written by
    the file task, off the GUI thread (``window.file_written`` when done); True when started.
    """
    path = Path(path)
    if path.suffix == "":
        path = path.with_suffix(".csv")
    ctl = window.controller
    try:
        check = ctl.check_current_export()
    except MicroguiError as exc:
        window.show_error(str(exc), title="Cannot export")
        return False
    if ctl.result_is_stale:
        window.statusBar().showMessage(
            "Exporting the last run (its roles differ from the current tagging).", 10000
        )
    if not check.ok:
        dialog = ExportOverrideDialog(check.problems, path, window)
        dialog.accepted.connect(  # the override answers this check: the writer compares
            lambda: _write_export(window, path, dialog.reason(), background=background, shown=check)
        )
        window.override_dialog = dialog
        dialog.open()
        return False
    return _write_export(window, path, None, background=background)


def _write_export(
    window: MainWindow,
    path: Path,
    override: str | None,
    *,
    background: bool = False,
    shown: ExportCheck | None = None,
) -> bool:
    try:
        result, job = window.controller.export_job(path, override=override, shown=shown)
    except MicroguiError as exc:
        window.show_error(str(exc), title="Export refused")
        return False

    def done(report: dict[str, Any]) -> None:
        window.controller.record_export(result, report)
        _exported(window, path, override, report)

    if background:
        return bool(window.file_tasks.start(path.name, job, done, "Export refused"))
    try:
        report = job()
    except MicroguiError as exc:
        window.show_error(str(exc), title="Export refused")
        return False
    done(report)
    return True


def _exported(window: MainWindow, path: Path, override: str | None, report: dict[str, Any]) -> None:
    window.settings.set_last_directory(path.resolve().parent)
    note = " (override recorded)" if override else ""
    options = options_text(report)
    window.statusBar().showMessage(
        f"Exported {report.get('n_records', 0):,} records to {path.name} and the report to "
        f"{report_path_for(path).name}{note}" + (f" ({options})" if options else "") + ".",
        15000,
    )
    window.exported.emit(path)
