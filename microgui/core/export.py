"""Export of a run: the protected CSV and its JSON report, checked before anything is written.

Before writing, the protected table is verified: no identifier column, a k-anonymity level on
the quasi-identifiers of at least the run's k, and, where the method promised one, the p of
p-sensitive k-anonymity and the t of t-closeness on the confidential attributes. A failure
refuses the export with the reason (:class:`ExportRefused`) unless the caller passes an
explicit ``override`` reason, which is then recorded in the report (``export_override``) and
logged. Both files go to a temporary file in the
target folder and are renamed into place; the input file is never written.

CSV injection (formula injection): a spreadsheet opening the CSV runs a cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula (OWASP "CSV Injection"). By
default such text cells are neutralized on export by a leading apostrophe (``=cmd`` is written
``'=cmd``), which spreadsheets show as text. Plain numbers (``-3.5``, ``+1e3``) are not formulas
and are left alone, so numeric data never changes; numeric columns are never touched. The count of
neutralized cells per column goes into the report (``neutralized_cells``). ``keep_formula_cells``
(command line ``--keep-formula-cells``) writes them raw, for a file that no spreadsheet will open.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.dataset import Dataset
from microgui.core.errors import ExportRefused
from microgui.core.io import csv_writer, write_csv_atomic, write_files_atomic
from microgui.core.metrics import k_anonymity_level
from microgui.core.runs import RunResult

__all__ = [
    "ExportCheck",
    "check_export",
    "protected_table",
    "export_run",
    "neutralize_formulas",
    "FORMULA_PREFIXES",
]

log = logging.getLogger(__name__)

#: Leading characters that make a spreadsheet read a cell as a formula (OWASP CSV Injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _is_formula(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.startswith(FORMULA_PREFIXES)
        and _PLAIN_NUMBER.fullmatch(value) is None
    )


def neutralize_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """``frame`` with every text cell that a spreadsheet would run as a formula prefixed by ``'``.

    Returns the new frame (the input is not modified; untouched columns are shared) and the number
    of cells changed per column (columns with none are left out). Numeric columns and plain numbers
    written as text (``-3.5``) are never changed.
    """
    counts: dict[str, int] = {}
    out = frame
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        values = series.to_numpy(dtype=object)
        # Only cells whose first character is a formula prefix are looked at in Python.
        first = pd.Series(values, dtype=object).str[:1]
        candidates = np.flatnonzero(first.isin(FORMULA_PREFIXES).to_numpy())
        bad = [i for i in candidates if _is_formula(values[i])]
        hits = len(bad)
        if not hits:
            continue
        if out is frame:
            out = frame.copy(deep=False)
        fixed = values.copy()
        for i in bad:
            fixed[i] = "'" + fixed[i]
        # pandas-stubs leave Series out of isetitem's value types; pandas takes one (and aligns it)
        out.isetitem(position, pd.Series(fixed, index=frame.index, dtype=object))  # type: ignore[arg-type]
        counts[str(column)] = counts.get(str(column), 0) + hits
    return out, counts


@dataclass(frozen=True)
class ExportCheck:
    """The verdict on a protected table: ``problems`` is empty when it may be released."""

    k_anonymity: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def protected_table(result: RunResult, group_column: str | None = None) -> pd.DataFrame:
    """The protected frame, with each record's group id added as ``group_column`` if given."""
    frame = result.protected
    if group_column:
        if group_column in frame.columns:
            raise ExportRefused(
                f"--group-column {group_column!r} already names a column of the table; choose another name"
            )
        frame = frame.copy(deep=False)
        frame[group_column] = result.labels
    return frame


def check_export(result: RunResult, frame: pd.DataFrame | None = None) -> ExportCheck:
    """Verify a protected table before release (identifiers absent, k-anonymity ≥ k)."""
    frame = result.protected if frame is None else frame
    problems: list[str] = []
    leaked = [c for c in result.roles.identifiers if c in frame.columns]
    if leaked:
        problems.append(f"identifier column(s) {', '.join(map(repr, leaked))} would be exported")
    level = k_anonymity_level(frame, result.roles.quasi_identifiers)
    if level < result.spec.k:
        problem = f"the table is only {level}-anonymous on its quasi-identifiers, below the chosen k = {result.spec.k}"
        if result.report.get("k_anonymity_guaranteed") is False:
            # masking methods (individual ranking, hybrid data) never promised k-anonymity
            problem += f" ({result.report['method']} does not guarantee k-anonymity: {result.report.get('note', '')})"
        problems.append(problem)
    problems.extend(_promised_privacy_problems(result, frame))
    return ExportCheck(k_anonymity=level, problems=tuple(problems))


def _promised_privacy_problems(result: RunResult, frame: pd.DataFrame) -> list[str]:
    """The p of p-sensitive k-anonymity and the t of t-closeness, where the method promised one,
    measured on the table as released (groups = identical quasi-identifier values)."""
    from microgui.core.metrics.privacy import p_sensitivity, t_closeness

    conf = [c for c in result.roles.confidential if c in frame.columns]
    qis = result.roles.quasi_identifiers
    params = result.report.get("parameters", {})
    method = result.report.get("method")
    if not conf or not qis or len(frame) == 0:
        return []
    problems: list[str] = []
    if method == "p-sensitive" and "p" in params:
        p = int(params["p"])
        level = p_sensitivity(frame, qis, conf)
        if level < p:
            problems.append(
                f"the table is only {level}-sensitive on {', '.join(map(repr, conf))}, below the "
                f"promised p = {p}"
            )
    if method == "t-closeness" and "t" in params:
        t = float(params["t"])
        reached = t_closeness(frame, qis, conf, result.roles)
        if reached > t + 1e-9:
            problems.append(
                f"a group is {reached:.4f} away (EMD) from the whole table on a confidential "
                f"attribute, above the promised t = {t}"
            )
    return problems


def export_run(
    dataset: Dataset,
    result: RunResult,
    csv_path: str | Path,
    report_path: str | Path | None = None,
    *,
    group_column: str | None = None,
    override: str | None = None,
    keep_formula_cells: bool = False,
    check: ExportCheck | None = None,
) -> dict[str, Any]:
    """Write the protected CSV (and the report, if ``report_path``); return the report written.

    Text cells a spreadsheet would run as formulas are neutralized unless ``keep_formula_cells``
    (see the module docstring); the report says how many per column.
    ``check`` is :func:`check_export` of this result when the caller has already made it (the app
    shows its problems before asking for an override); it is then not computed again.

    Raises :class:`ExportRefused` when the table fails :func:`check_export` and no ``override``
    reason is given, or when a target is the input file.
    """
    csv_path = Path(csv_path)
    frame = protected_table(result, group_column)
    if check is None:  # a group column is no quasi-identifier: the result's check stands
        check = check_export(result, frame)
    report = dict(result.report)
    report["k_anonymity"] = check.k_anonymity
    report["output"] = csv_path.name
    if group_column:
        report["group_column"] = group_column
    if not check.ok:
        if not override:
            raise ExportRefused(
                f"export to {csv_path.name} refused: {'; '.join(check.problems)}. "
                "Re-run with a valid configuration, or override explicitly (the override is recorded in the report)."
            )
        log.warning("export override (%s): %s", override, "; ".join(check.problems))
        report["export_override"] = {"reason": override, "problems": list(check.problems)}
    source = dataset.source
    if report_path is not None and Path(report_path).resolve() == csv_path.resolve():
        raise ExportRefused(
            f"the report path {Path(report_path).name} is the same as the CSV output; choose another"
        )
    if keep_formula_cells:
        report["formula_cells"] = "kept raw (--keep-formula-cells)"
    else:
        frame, neutralized = neutralize_formulas(frame)
        report["neutralized_cells"] = neutralized
        if neutralized:
            log.info("neutralized formula-like cells: %s", neutralized)
    if report_path is None:
        write_csv_atomic(frame, csv_path, protect_from=source)
        return report
    # Both files are written before either is renamed: a full disk never leaves a CSV
    # without its report.
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    write_files_atomic(
        [(csv_path, csv_writer(frame)), (Path(report_path), lambda handle: handle.write(text))],
        protect_from=source,
    )
    return report
