"""Export of a run: the protected CSV and its JSON report, checked before anything is written.

Before writing, the protected table is verified: no identifier column, and a k-anonymity level on
the quasi-identifiers of at least the run's k. A failure refuses the export with the reason
(:class:`ExportRefused`) unless the caller passes an explicit ``override`` reason, which is then
recorded in the report (``export_override``) and logged. Both files go to a temporary file in the
target folder and are renamed into place; the input file is never written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from microgui.core.dataset import Dataset
from microgui.core.errors import ExportRefused
from microgui.core.io import write_csv_atomic, write_json_atomic
from microgui.core.metrics import k_anonymity_level
from microgui.core.runs import RunResult

__all__ = ["ExportCheck", "check_export", "protected_table", "export_run"]

log = logging.getLogger(__name__)


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
    return ExportCheck(k_anonymity=level, problems=tuple(problems))


def export_run(
    dataset: Dataset,
    result: RunResult,
    csv_path: str | Path,
    report_path: str | Path | None = None,
    *,
    group_column: str | None = None,
    override: str | None = None,
) -> dict[str, Any]:
    """Write the protected CSV (and the report, if ``report_path``); return the report written.

    Raises :class:`ExportRefused` when the table fails :func:`check_export` and no ``override``
    reason is given, or when a target is the input file.
    """
    csv_path = Path(csv_path)
    frame = protected_table(result, group_column)
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
    write_csv_atomic(frame, csv_path, protect_from=source)
    if report_path is not None:
        write_json_atomic(report, Path(report_path), protect_from=source)
    return report
