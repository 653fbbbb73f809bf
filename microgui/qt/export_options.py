"""The app's export options (issue 18): how a CSV release is written and which identifier
columns are released as random pseudonyms instead of being left out, the same choices as
``protect``'s ``--csv-sep``/``--csv-decimal``/``--csv-encoding`` and ``--pseudonymize``/
``--pseudonym-key`` (:mod:`microgui.core.release`, :mod:`microgui.core.release.pseudonyms`).

File → *Export options…* sets them; every later export uses them (the CSV options only for a
CSV file), and the status line after an export says what was applied. Pseudonyms are off by
default: an identifier is left out unless its box is ticked. The records are released in a random
order (households kept together) unless *Keep the input order* is ticked (issue 31, ``protect
--keep-order``; :mod:`microgui.core.release.order`); the report says which. The seed of each
export's random order is drawn here (:meth:`ExportOptions.release_order`) and kept by the session
for its project file only (issue 30: ``protect --project P --run N`` writes the same file).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from microgui.core.release import CsvOptions
from microgui.core.release.check import ExportCheck, export_job
from microgui.core.release.order import RecordOrder, draw_order_seed
from microgui.core.release.pseudonyms import PSEUDONYM_WARNING
from microgui.core.runs import RunResult
from microgui.core.table.dataset import Dataset

__all__ = [
    "ExportOptions",
    "ExportOptionsDialog",
    "key_path_for",
    "options_text",
    "SEPARATORS",
    "ENCODINGS",
]

#: (label, separator) offered for a CSV release.
SEPARATORS: tuple[tuple[str, str], ...] = (
    ("comma ,", ","),
    ("semicolon ;", ";"),
    ("tab", "\t"),
    ("vertical bar |", "|"),
)
#: (label, decimal mark).
DECIMALS: tuple[tuple[str, str], ...] = (("point .", "."), ("comma ,", ","))
#: (label, encoding) — the encodings :class:`CsvOptions` accepts.
ENCODINGS: tuple[tuple[str, str], ...] = (
    ("UTF-8", "utf-8"),
    ("UTF-8 with BOM (Excel)", "utf-8-sig"),
    ("Windows-1252 (Western Europe)", "cp1252"),
    ("Latin-1 (ISO-8859-1)", "latin-1"),
    ("UTF-16", "utf-16"),
)


def key_path_for(release: Path) -> Path:
    """Where the pseudonym key goes beside a release: ``name.pseudonym-key.csv``."""
    return release.with_name(release.stem + ".pseudonym-key.csv")


@dataclass(frozen=True)
class ExportOptions:
    """The export options: ``csv`` (default: comma, point, UTF-8), the identifier columns to
    release as pseudonyms, whether to write the key file beside the release, and
    ``keep_order``: the input's record order instead of a random one (default off)."""

    csv: CsvOptions = field(default_factory=CsvOptions)
    pseudonymize: tuple[str, ...] = ()
    write_key: bool = False
    keep_order: bool = False

    @property
    def record_order(self) -> RecordOrder:
        """The release's record order (``protect --keep-order``, or a random order)."""
        return RecordOrder(keep=self.keep_order)

    def release_order(self) -> RecordOrder:
        """The order of one export: the input's, or a random one from a seed drawn now, which
        the session keeps for its project file and no report shows (``origin="session"``)."""
        if self.keep_order:
            return RecordOrder(keep=True)
        return RecordOrder(seed=draw_order_seed(), origin="session")

    def for_identifiers(self, identifiers: Sequence[str]) -> ExportOptions:
        """The options with pseudonyms only for columns that are identifiers now."""
        kept = tuple(c for c in self.pseudonymize if c in identifiers)
        return ExportOptions(self.csv, kept, self.write_key and bool(kept), self.keep_order)

    def for_new_table(self) -> ExportOptions:
        """The options for another table: pseudonyms were chosen for the previous table's
        identifiers, so the new one starts with its identifiers left out; the CSV format and
        the record order are the user's, kept."""
        return ExportOptions(self.csv, keep_order=self.keep_order)

    def export_job(
        self,
        dataset: Dataset,
        result: RunResult,
        path: str | Path,
        *,
        check: ExportCheck,
        override: str | None = None,
        also_protect: Sequence[Path] = (),
        renames: dict[str, str] | None = None,
        order: RecordOrder | None = None,
    ) -> Callable[[], dict[str, Any]]:
        """The export of ``result`` to ``path`` with these options
        (:func:`~microgui.core.release.check.export_job`): the CSV format for a CSV release, pseudonyms
        only for the run's identifiers, their key beside the release (:func:`key_path_for`);
        ``order``: the record order (default :attr:`record_order`)."""
        options = self.for_identifiers(result.roles.identifiers)
        return export_job(
            dataset,
            result,
            path,
            check=check,
            override=override,
            also_protect=also_protect,
            csv_options=options.csv,
            pseudonymize=options.pseudonymize,
            key_path=key_path_for(Path(path)) if options.write_key else None,
            renames=renames,
            order=self.record_order if order is None else order,
        )

    def describe(self) -> str:
        """One line for the status bar ("" when everything is the default)."""
        return options_text(
            {
                "csv_format": self.csv.to_json(),
                "pseudonymized": dict.fromkeys(self.pseudonymize, 0),
                "pseudonym_key": "a file beside the release" if self.write_key else None,
                "record_order": {"order": "input"} if self.keep_order else None,
            }
        )


def options_text(report: Mapping[str, Any]) -> str:
    """What an export applies beyond the defaults, from its report's entries (``csv_format``,
    ``pseudonymized``, ``pseudonym_key``, ``record_order``): a CSV format other than comma,
    point, UTF-8, the pseudonymised columns and the input order kept ("" when none). One text for the options set and an export's status."""
    parts = []
    csv = report.get("csv_format") or {}
    if csv and (csv.get("separator"), csv.get("decimal"), csv.get("encoding")) != (
        ",",
        ".",
        "utf-8",
    ):
        sep = "tab" if csv.get("separator") == "\t" else csv.get("separator")
        parts.append(f"CSV separator {sep}, decimal {csv.get('decimal')}, {csv.get('encoding')}")
    pseudonymized = list(report.get("pseudonymized") or {})
    if pseudonymized:
        parts.append(f"pseudonyms for {', '.join(pseudonymized)}")
        if report.get("pseudonym_key"):
            parts.append(f"key in {report['pseudonym_key']}")
    if (report.get("record_order") or {}).get("order") == "input":
        parts.append("input order kept")
    return "; ".join(parts)


class ExportOptionsDialog(QDialog):
    """Edit :class:`ExportOptions`; :meth:`options` reads the choice (checked by
    :meth:`CsvOptions.make`, whose refusal is shown in the dialog)."""

    def __init__(
        self, options: ExportOptions, identifiers: Sequence[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export options")
        layout = QVBoxLayout(self)
        csv_box = QGroupBox("CSV files")
        form = QFormLayout(csv_box)
        self.sep = self._combo(SEPARATORS, options.csv.sep)
        self.decimal = self._combo(DECIMALS, options.csv.decimal)
        self.encoding = self._combo(ENCODINGS, options.csv.encoding)
        form.addRow("Separator", self.sep)
        form.addRow("Decimal mark", self.decimal)
        form.addRow("Encoding", self.encoding)
        layout.addWidget(csv_box)
        id_box = QGroupBox("Identifier columns")
        id_layout = QVBoxLayout(id_box)
        self.pseudonym_boxes: dict[str, QCheckBox] = {}
        if identifiers:
            intro = QLabel(
                "Left out of the release unless ticked: a ticked column is released as random "
                "pseudonyms (PSN-…), the same value getting the same pseudonym; nothing of the "
                "value is in it."
            )
            intro.setWordWrap(True)
            id_layout.addWidget(intro)
            for column in identifiers:
                box = QCheckBox(f"Release {column} as pseudonyms")
                box.setChecked(column in options.pseudonymize)
                self.pseudonym_boxes[column] = box
                id_layout.addWidget(box)
            self.write_key = QCheckBox("Also write the key file (original → pseudonym) beside it")
            self.write_key.setChecked(options.write_key)
            id_layout.addWidget(self.write_key)
            warning = QLabel(PSEUDONYM_WARNING[:1].upper() + PSEUDONYM_WARNING[1:] + ".")
            warning.setWordWrap(True)
            warning.setStyleSheet("color: #8a5a00;")
            id_layout.addWidget(warning)
        else:
            self.write_key = QCheckBox("Also write the key file")
            self.write_key.setVisible(False)
            id_layout.addWidget(QLabel("No column is tagged identifier."))
        layout.addWidget(id_box)
        order_box = QGroupBox("Records")
        order_layout = QVBoxLayout(order_box)
        self.keep_order = QCheckBox("Keep the input order of the records")
        self.keep_order.setChecked(options.keep_order)
        order_layout.addWidget(self.keep_order)
        order_note = QLabel(
            "Off (the default): the release lists its records in a random order, the records "
            "of a household kept together, so that a table sorted by identifier, area or date "
            "does not leak that order. The report says which."
        )
        order_note.setWordWrap(True)
        order_layout.addWidget(order_note)
        layout.addWidget(order_box)
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b03030;")
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._options = options
        # wrapped labels get the height of their text at the dialog's width (a QVBoxLayout
        # would otherwise cut them to one or two lines)
        self.setMinimumWidth(500)
        for label in self.findChildren(QLabel):
            if label.wordWrap() and label.text():
                label.setMinimumHeight(max(0, label.heightForWidth(440)))
        self.resize(500, self.sizeHint().height())

    @staticmethod
    def _combo(choices: Sequence[tuple[str, str]], current: str) -> QComboBox:
        combo = QComboBox()
        for label, value in choices:
            combo.addItem(label, value)
        index = combo.findData(current)
        combo.setCurrentIndex(max(index, 0))
        return combo

    def _read(self) -> ExportOptions:
        sep = str(self.sep.currentData())
        csv = CsvOptions.make(
            None if sep == "," else sep,  # the default: a .tsv name still gets a tab
            str(self.decimal.currentData()),
            str(self.encoding.currentData()),
        )
        chosen = tuple(c for c, box in self.pseudonym_boxes.items() if box.isChecked())
        return ExportOptions(
            csv,
            chosen,
            self.write_key.isChecked() and bool(chosen),
            self.keep_order.isChecked(),
        )

    def _accept(self) -> None:
        from microgui.core.errors import MicroguiError

        try:
            self._options = self._read()
        except MicroguiError as exc:  # e.g. a decimal comma with a comma separator
            self.error.setText(str(exc).replace("--csv-", ""))
            return
        self.accept()

    def options(self) -> ExportOptions:
        return self._options
