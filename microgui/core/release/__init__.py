"""Releasing a run: the checked export and everything written with it.

- :mod:`~microgui.core.release.check`: the release check and :func:`export_run` (nothing is
  written unchecked); :mod:`~microgui.core.release.formats`: the output formats (CSV, Excel,
  Parquet, SPSS, Stata) and their writers; :mod:`~microgui.core.release.pseudonyms`,
  :mod:`~microgui.core.release.formulas` (formula neutralizing);
- :mod:`~microgui.core.release.report` (the JSON report), :mod:`~microgui.core.release.report_html`,
  :mod:`~microgui.core.release.report_charts`;
- :mod:`~microgui.core.release.distributed` (partitioned Dask runs writing their release by parts)
  and :mod:`~microgui.core.release.replay` (a run with its release options as a command line).

The names of the former module ``microgui.core.release`` (now ``formats``) are re-exported here.
"""

from microgui.core.release.formats import (
    CSV_ENCODINGS,
    EXCEL_MAX_COLUMNS,
    EXCEL_MAX_ROWS,
    FORMAT_NAMES,
    RELEASE_FORMATS,
    CsvOptions,
    csv_options_writer,
    is_missing_value,
    release_format,
    release_writer,
)

__all__ = [
    "CSV_ENCODINGS",
    "CsvOptions",
    "csv_options_writer",
    "RELEASE_FORMATS",
    "FORMAT_NAMES",
    "EXCEL_MAX_ROWS",
    "EXCEL_MAX_COLUMNS",
    "is_missing_value",
    "release_format",
    "release_writer",
]
