"""The file extensions microgui reads, by format, and the Open dialog's name filter."""

from __future__ import annotations

__all__ = [
    "TEXT_EXTENSIONS",
    "EXCEL_EXTENSIONS",
    "PARQUET_EXTENSIONS",
    "SPSS_EXTENSIONS",
    "STATA_EXTENSIONS",
    "SUPPORTED_EXTENSIONS",
    "file_dialog_filter",
]


TEXT_EXTENSIONS: tuple[str, ...] = (".csv", ".tsv", ".txt")
EXCEL_EXTENSIONS: tuple[str, ...] = (".xlsx", ".xlsm", ".xls")
PARQUET_EXTENSIONS: tuple[str, ...] = (".parquet",)
SPSS_EXTENSIONS: tuple[str, ...] = (".sav", ".zsav")
STATA_EXTENSIONS: tuple[str, ...] = (".dta",)
#: Every extension :func:`~microgui.core.io.read_table` accepts (lower case; matching ignores
#: case).
SUPPORTED_EXTENSIONS: tuple[str, ...] = (
    TEXT_EXTENSIONS + EXCEL_EXTENSIONS + PARQUET_EXTENSIONS + SPSS_EXTENSIONS + STATA_EXTENSIONS
)


def file_dialog_filter() -> str:
    """The name filter of the app's Open dialog, all readable tables first.

    Returns
    -------
    str
        Qt name filters separated by ``;;``, e.g. ``"Tables (*.csv ...);;...;;All files (*)"``.
    """

    def patterns(exts: tuple[str, ...]) -> str:
        return " ".join(f"*{e}" for e in exts)

    groups = [
        ("Tables", SUPPORTED_EXTENSIONS),
        ("CSV and text", TEXT_EXTENSIONS),
        ("Excel", EXCEL_EXTENSIONS),
        ("Parquet", PARQUET_EXTENSIONS),
        ("SPSS", SPSS_EXTENSIONS),
        ("Stata", STATA_EXTENSIONS),
    ]
    return ";;".join([f"{label} ({patterns(exts)})" for label, exts in groups] + ["All files (*)"])
