"""File → *Export protected table…*: the save dialog and its formats, the release check shown
before writing (:class:`ExportOverrideDialog`: exporting anyway needs a typed reason), the
confirmation asked when the release discloses a confidential attribute
(:class:`AttributeDisclosureDialog`, issue 29: run a method that protects it instead, or export
anyway, which the report records as ``released_with_attribute_disclosure``), and
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
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from microgui.core.errors import MicroguiError
from microgui.core.io.names import valid_names
from microgui.core.metrics.disclosure import Verdict, release_verdict
from microgui.core.release import release_format
from microgui.core.release.check import ExportCheck, default_release_path, report_path_for
from microgui.qt.export_options import ExportOptionsDialog, options_text
from microgui.qt.rename_dialog import RenameColumnsDialog

#: The :class:`~microgui.qt.main_window.MainWindow` (not imported: it imports this module, and
#: the package has no import cycle, type-only ones included).
MainWindow = Any

__all__ = [
    "EXPORT_FILTERS",
    "AttributeDisclosureDialog",
    "ExportOverrideDialog",
    "protecting_methods",
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
        self,
        problems: tuple[str, ...],
        target: Path,
        parent: QWidget | None = None,
        verdict: Verdict | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export refused by the release check")
        layout = QVBoxLayout(self)
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        # the release's verdict too (issue 29): attribute disclosure is said here as well
        said = (
            f"<p style='color:#b00020'><b>{html.escape(verdict.text)}</b></p>"
            if verdict is not None
            else ""
        )
        text = QLabel(
            f"{said}<p>The protected table for <b>{html.escape(target.name)}</b> does not pass the release check:</p>"
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


def protecting_methods(roles: Any) -> list[tuple[str, str, str]]:
    """The registered methods that protect a confidential attribute (those with a privacy
    model checked on release: p-sensitive, t-closeness), as (name, title, why it cannot run on
    ``roles``: "" when it can)."""
    from microgui.core.methods import available_methods
    from microgui.core.runs import method_refusal

    return [
        (m.name, m.title, method_refusal(m, roles) if roles is not None else "")
        for m in available_methods()
        if m.release_check is not None
    ]


class AttributeDisclosureDialog(QDialog):
    """Asked before writing a release in which a group shares one value of a confidential
    attribute: shows the verdict, offers one button per method that protects the attribute
    (:attr:`chosen_method` is set and the dialog finishes with :data:`RUN_INSTEAD`), or
    *Export anyway* (accepted) or *Cancel* (rejected)."""

    #: The dialog's result when a method was chosen to run instead.
    RUN_INSTEAD = 2

    def __init__(
        self,
        verdict: Verdict,
        details: list[str],
        methods: list[tuple[str, str, str]],
        target: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attribute disclosure in this release")
        self.chosen_method: str | None = None
        layout = QVBoxLayout(self)
        self.verdict_label = QLabel(
            f"<p style='color:#b35c00'><b>{html.escape(verdict.text)}</b></p>"
        )
        self.verdict_label.setObjectName("disclosure_verdict")
        self.verdict_label.setWordWrap(True)
        layout.addWidget(self.verdict_label)
        items = "".join(f"<li>{html.escape(d)}</li>" for d in details)
        text = QLabel(
            f"<p>The table for <b>{html.escape(target.name)}</b> is k-anonymous, but in some "
            "groups of identical quasi-identifiers a confidential attribute takes a single "
            "value: whoever knows that a person is in the file and their quasi-identifiers "
            "learns that value (the homogeneity attack).</p>"
            + (f"<ul>{items}</ul>" if items else "")
            + "<p>A method with a privacy model on the confidential attributes protects them. "
            "Run one instead (with the current k and roles), or export this table anyway: the "
            "report then records <code>released_with_attribute_disclosure</code>.</p>"
        )
        text.setWordWrap(True)
        layout.addWidget(text)
        row = QHBoxLayout()
        self.method_buttons: dict[str, QPushButton] = {}
        for name, title, why in methods:
            button = QPushButton(f"Run {name} instead")
            button.setToolTip(f"{title}: {why}" if why else f"{title}: select it and run it now")
            button.setEnabled(not why)
            button.clicked.connect(lambda _c=False, n=name: self._run_instead(n))
            row.addWidget(button)
            self.method_buttons[name] = button
        row.addStretch(1)
        layout.addLayout(row)
        # Enter runs the protecting method, never "Export anyway"
        enabled = [b for b in self.method_buttons.values() if b.isEnabled()]
        if enabled:
            enabled[0].setDefault(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton(
            "Export anyway", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.export_button.setAutoDefault(False)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(580, 300)

    def _run_instead(self, name: str) -> None:
        self.chosen_method = name
        self.done(self.RUN_INSTEAD)


def _disclosure_details(check: ExportCheck) -> list[str]:
    """One line per confidential attribute with a homogeneous group (counts only)."""
    lines = []
    for col, m in check.attribute_disclosure.items():
        groups = int(m.get("homogeneous_groups") or 0)
        if groups:
            lines.append(
                f"{col}: {int(m['homogeneous_records']):,} of {int(m['n_known']):,} records in "
                f"{groups:,} group(s) with one value; distinct l-diversity "
                f"{int(m['distinct_l_diversity'])}"
            )
    return lines


def default_export_path(window: MainWindow) -> Path:
    """The release proposed for the current result (:func:`default_release_path`):
    ``<input>_<method>_k<k>.<ext>`` in the folder of the last export (kept in the settings);
    before the first export, in the project's folder when a project is open, else in the
    input's (issue 30 item 5)."""
    ctl = window.controller
    dataset = ctl.result_dataset or ctl.dataset
    source = dataset.source if dataset is not None else None
    k = ctl.result.spec.k if ctl.result is not None else 0
    method = ctl.result.spec.method if ctl.result is not None else None
    # the folder of the last export (issue 30: it opened in the input's folder each time)
    folder = window.settings.export_directory()
    if not folder and ctl.project_file is not None:
        folder = str(Path(ctl.project_file).resolve().parent)
    if not folder and source is not None and _is_demo(source):
        # not beside the demo table: that is inside the installed package
        folder = window.settings.last_directory() or str(Path.home())
    return default_release_path(source, k, folder or None, method)


def _is_demo(source: Path) -> bool:
    from microgui.core.demo import demo_path

    try:
        return Path(source).resolve() == Path(demo_path()).resolve()
    except OSError:
        return False


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
    verdict = release_verdict(
        {
            "k": ctl.result.spec.k,
            "k_anonymity": check.k_anonymity,
            "attribute_disclosure": check.attribute_disclosure,
        }
    )
    if not check.ok:
        dialog = ExportOverrideDialog(check.problems, path, window, verdict)
        dialog.accepted.connect(  # the override answers this check: the writer compares
            lambda: _write_export(window, path, dialog.reason(), background=background, shown=check)
        )
        window.override_dialog = dialog
        dialog.open()
        return False
    if verdict.level == "attribute_disclosure":
        return _confirm_disclosure(window, path, check, verdict, background=background)
    return _write_export(window, path, None, background=background)


def _confirm_disclosure(
    window: MainWindow, path: Path, check: ExportCheck, verdict: Verdict, *, background: bool
) -> bool:
    """Ask before releasing a table with attribute disclosure (:class:`AttributeDisclosureDialog`):
    export anyway (the core records ``released_with_attribute_disclosure``), run a protecting
    method instead (selected in the run panel and started), or cancel (nothing written)."""
    ctl = window.controller
    dialog = AttributeDisclosureDialog(
        verdict, _disclosure_details(check), protecting_methods(ctl.roles), path, window
    )

    def finished(code: int) -> None:
        if code == QDialog.DialogCode.Accepted:
            _write_export(window, path, None, background=background, shown=check)
        elif code == AttributeDisclosureDialog.RUN_INSTEAD and dialog.chosen_method:
            window.run_panel.select_method(dialog.chosen_method)
            run_id = window.run_panel.run()
            window.statusBar().showMessage(
                f"Nothing exported: running {dialog.chosen_method} instead, which protects the "
                "confidential attributes; export its result when it is done."
                if run_id is not None
                else f"Nothing exported: {dialog.chosen_method} is selected in the run panel.",
                15000,
            )
        else:
            window.statusBar().showMessage("Export cancelled: nothing written.", 10000)

    dialog.finished.connect(finished)
    window.disclosure_dialog = dialog
    dialog.open()
    return False


def _write_export(
    window: MainWindow,
    path: Path,
    override: str | None,
    *,
    background: bool = False,
    shown: ExportCheck | None = None,
    renames: dict[str, str] | None = None,
) -> bool:
    if renames is None and _ask_for_names(window, path, override, background, shown):
        return False
    # the seed of a random record order is drawn here and kept for the project file only
    # (issue 30: protect --project P --run N writes this file again; the report never has it)
    order = window.controller.export_options.release_order()
    try:
        result, job = window.controller.export_job(
            path, override=override, shown=shown, renames=renames or None, order=order
        )
    except MicroguiError as exc:
        window.show_error(str(exc), title="Export refused")
        return False

    def done(report: dict[str, Any]) -> None:
        window.controller.record_export(result, report, order)
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


def _ask_for_names(
    window: MainWindow,
    path: Path,
    override: str | None,
    background: bool,
    shown: ExportCheck | None,
) -> bool:
    """For an SPSS or Stata release of columns the format cannot name: open
    :class:`RenameColumnsDialog` (proposals of :func:`~microgui.core.io.names.valid_names`) and
    export with the accepted names; True when the dialog was opened (the export waits for it)."""
    try:
        fmt = release_format(path)
    except MicroguiError:
        return False  # the writer says why
    result = window.controller.result
    if fmt not in ("spss", "stata") or result is None:
        return False
    columns = [str(c) for c in result.protected.columns]
    proposals = valid_names(columns, fmt)
    if not proposals:
        return False
    dialog = RenameColumnsDialog(columns, proposals, fmt, path.name, window)

    def finished(code: int) -> None:
        if code == QDialog.DialogCode.Accepted:
            _write_export(
                window, path, override, background=background, shown=shown,
                renames=dialog.renames(),
            )  # fmt: skip
        else:
            window.statusBar().showMessage("Export cancelled: nothing written.", 10000)

    dialog.finished.connect(finished)
    window.rename_dialog = dialog
    dialog.open()
    return True


def _exported(window: MainWindow, path: Path, override: str | None, report: dict[str, Any]) -> None:
    window.settings.set_export_directory(path.resolve().parent)
    note = " (override recorded)" if override else ""
    if report.get("released_with_attribute_disclosure"):
        note += " (released with attribute disclosure, recorded in the report)"
    options = options_text(report)
    window.statusBar().showMessage(
        f"Exported {report.get('n_records', 0):,} records to {path.name} and the report to "
        f"{report_path_for(path).name}{note}" + (f" ({options})" if options else "") + ".",
        15000,
    )
    window.exported.emit(path)
