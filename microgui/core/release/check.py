"""Export of a run: the protected table and its JSON report, checked before anything is written.

The table is written in the format its file name says (issue 18, :mod:`microgui.core.release`):
CSV, Excel ``.xlsx``, Parquet, SPSS ``.sav``/``.zsav`` or Stata ``.dta``; every format gets
the checks and the atomic write below. The report gives ``output_format``.

Before writing, the protected table is verified: no identifier column, a k-anonymity level on
the quasi-identifiers of at least the run's k, and, where the method promised one (its
``release_check``), the p of p-sensitive k-anonymity, the l of l-diversity or the t of t-closeness
on the confidential attributes. A failure
refuses the export with the reason (:class:`ExportRefused`) unless the caller passes an
explicit ``override`` reason, which is then recorded in the report (``export_override``) and
logged. Both files go to a temporary file in the
target folder and are renamed into place; the input file is never written.

No write without a check (issue 27): the check is made by :func:`export_run` itself, on the
exact values it is about to write (after the group column, the pseudonyms and the formula rule,
under the columns' own names), and the report's figures that describe the table
(``k_anonymity``, ``identifiers_removed``) are taken from that check and that frame, never from
an earlier one. A table edited after the run (the API's ``ProtectionResult.frame``) is written
only as a table of the run: same records in the same order, the run's columns (and only input
columns added); its cells are compared with the run's, and when any changed the run report's
measures are computed again on it (:func:`released_result`) and the report says what changed
(``edited_after_run``: counts and column names).

CSV injection (formula injection): a spreadsheet opening the CSV runs a cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula (OWASP "CSV Injection"). By
default such text cells are neutralized on export by a leading apostrophe (``=cmd`` is written
``'=cmd``), which spreadsheets show as text. Plain numbers (``-3.5``, ``+1e3``) are not formulas
and are left alone, so numeric data never changes; numeric, boolean, date and duration columns
are never touched (text is looked for in every other dtype a reader returns: object, string,
categorical, mixed). A line of a multi-line cell is treated like a cell (``x\r=cmd`` is written
``x\r'=cmd``): a program that splits the record at the line break would see a formula there.
Column names are neutralized the same way. The count of neutralized cells per column goes into
the report (``neutralized_cells``), and the count of column names (``neutralized_column_names``).
``keep_formula_cells`` (command line ``--keep-formula-cells``) writes them raw, for a file that no
spreadsheet will open.

Record order (issue 31, :mod:`microgui.core.release.order`): the file lists the records in a
random order by default (the households of a household-id column kept together), drawn from a
seed the operating system gives and nobody records, or from the user's ``--order-seed`` (then in
the report); ``--keep-order`` writes the input's order. Every check and measure is made on the
run's order; only the written file is reordered, and the report's ``record_order`` says which.

No file the run read is written: the data file, the roles file, every other file the dataset
carries as read (``Dataset.read_files``) and every hierarchy file of the run
(:func:`input_paths`), plus whatever the caller adds (``also_protect``: the app's session
files), are compared with the targets by inode. A reason given to override the release check must hold
words; it is recorded on one line.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused, InvalidParameter
from microgui.core.io import (
    FINGERPRINT_ATTR,
    STAT_ATTR,
    TEXT_EXTENSIONS,
    DerivedWriter,
    EncodedWriter,
    FileWriter,
    check_write_targets,
    csv_writer,
    file_sha256,
    json_text,
    text_cells,
    write_files_atomic,
)
from microgui.core.io.names import check_renames, valid_names
from microgui.core.methods import get_method
from microgui.core.metrics.disclosure import (
    GroupMeasures,
    group_measures,
    release_verdict,
    verdict_json,
)
from microgui.core.metrics.kanonymity import Missing
from microgui.core.release.formats import (
    CsvOptions,
    csv_options_writer,
    release_format,
    release_writer,
)
from microgui.core.release.formulas import FORMULA_PREFIXES
from microgui.core.release.formulas import neutralized as _neutralized
from microgui.core.release.order import RecordOrder, order_report, release_permutation
from microgui.core.release.pseudonyms import (
    KEY_FORMAT,
    PSEUDONYM_WARNING,
    check_pseudonyms,
    key_writer,
)
from microgui.core.release.pseudonyms import pseudonymize as pseudonymize_column
from microgui.core.runs.protect import build_report, release_groups
from microgui.core.runs.spec import RunResult
from microgui.core.table.column_types import kind_of, release_columns
from microgui.core.table.dataset import Dataset
from microgui.core.table.numbers import whole_numbers_written_plain
from microgui.core.table.roles import resolve_columns

__all__ = [
    "report_path_for",
    "default_release_path",
    "export_job",
    "ExportCheck",
    "check_export",
    "release_check_groups",
    "protected_table",
    "export_run",
    "neutralize_formulas",
    "neutralize_column_names",
    "input_paths",
    "input_fingerprint",
    "released_result",
    "ReleaseContext",
    "ReportMaker",
    "FORMULA_PREFIXES",
]

log = logging.getLogger(__name__)

_PREFIX_SET = frozenset(FORMULA_PREFIXES)


def _is_formula(value: object) -> bool:
    return isinstance(value, str) and _neutralized(value) is not None


def neutralize_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """``frame`` with every text cell that a spreadsheet would run as a formula prefixed by ``'``.

    Returns the new frame (the input is not modified; untouched columns are shared) and the number
    of cells changed per column (columns with none are left out). Numeric columns and plain numbers
    written as text (``-3.5``) are never changed, nor any cell that is not text (dates, decimals,
    booleans: every dtype passes, a changed column becomes ``object``).
    """
    counts: dict[str, int] = {}
    out = frame
    for position, (column, series) in enumerate(frame.items()):  # not .iloc: a third the work
        values = text_cells(series)
        if values is None:
            continue
        # Only cells starting with a formula prefix or holding a line break are looked at closely.
        fixed_cells = {
            i: _neutralized(v)
            for i, v in enumerate(values)
            if isinstance(v, str) and (v[:1] in _PREFIX_SET or "\n" in v or "\r" in v)
        }
        bad = {i: v for i, v in fixed_cells.items() if v is not None}
        if not bad:
            continue
        if out is frame:
            out = frame.copy(deep=False)
        fixed = values.copy()
        for i, value in bad.items():
            fixed[i] = value
        # pandas-stubs leave Series out of isetitem's value types; pandas takes one (and aligns it)
        out.isetitem(position, pd.Series(fixed, index=frame.index, dtype=object))  # type: ignore[arg-type]
        counts[str(column)] = counts.get(str(column), 0) + len(bad)
    return out, counts


def neutralize_column_names(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with each column name a spreadsheet would run as a formula neutralized as a
    cell is, and how many were; :class:`ExportRefused` when a new name is another column's."""
    names = list(frame.columns)
    fixed = [_neutralized(c) if isinstance(c, str) else None for c in names]
    count = sum(f is not None for f in fixed)
    if not count:
        return frame, 0
    new = [f if f is not None else c for f, c in zip(fixed, names, strict=True)]
    for old, name in zip(names, new, strict=True):
        if name != old and name in names:
            raise ExportRefused(
                f"column {old!r} would be written as {name!r} (so that a spreadsheet does not run "
                "it as a formula), but another column has that name; rename one of them"
            )
    out = frame.copy(deep=False)
    out.columns = pd.Index(new, dtype=object)
    return out, count


def input_fingerprint(dataset: Dataset) -> dict[str, Any]:
    """The input's fingerprint for the report (``fingerprint.input``): file name, SHA-256 and
    bytes as taken when the table was read (None each for a table given in Python), records and
    columns. Never a value."""
    source = dict(dataset.frame.attrs.get(FINGERPRINT_ATTR) or {})
    return {
        "file": source.get("file", dataset.source.name if dataset.source is not None else None),
        "sha256": source.get("sha256"),
        "bytes": source.get("bytes"),
        "rows": int(len(dataset.frame)),
        "columns": int(len(dataset.frame.columns)),
    }


@dataclass(frozen=True)
class ReleaseContext:
    """What a further report of a release is made from (:func:`export_run`'s ``extra_reports``):
    the table as written (after pseudonyms and the formula rule on cells), under the columns' own
    names (a name neutralized in the file, ``'=age`` for ``=age``, is the same column), and the
    run report written with it, whose ``fingerprint.output`` holds the release file's SHA-256 as
    written."""

    dataset: Dataset
    result: RunResult
    frame: pd.DataFrame
    report: dict[str, Any]
    #: the group measures of ``frame`` the release check gave (its verdict's), None if unknown
    groups: GroupMeasures | None = None


#: Makes the writer of one further report of a release (the HTML or PDF release report).
ReportMaker = Callable[[ReleaseContext], Callable[[IO[str]], object] | FileWriter | EncodedWriter]


def input_paths(dataset: Dataset, result: RunResult) -> list[Path]:
    """The files a run read: the data file first, then every other file its dataset was made
    from (:attr:`~microgui.core.table.dataset.Dataset.read_files`: roles file, a command's declared
    inputs) and each hierarchy file of its spec."""
    paths = dataset.read_files
    paths += [Path(path) for _column, path in result.spec.hierarchies]
    return list(dict.fromkeys(paths))


def report_path_for(csv_path: Path) -> Path:
    """The JSON report written beside an exported table: ``name.csv`` → ``name.report.json``;
    another format keeps its extension in the name, ``name.sav`` → ``name.sav.report.json``, so
    that exporting one run as ``name.csv`` and then as ``name.sav`` keeps both files' reports
    (one name for both replaced the first export's report without a word)."""
    if csv_path.suffix.lower() == ".csv":
        return csv_path.with_name(csv_path.stem + ".report.json")
    return csv_path.with_name(csv_path.name + ".report.json")


#: Tables read in these formats are released in their own format, labels kept (issue 18).
_OWN_FORMAT_SUFFIXES = (".sav", ".zsav", ".dta")


def default_release_path(
    source: Path | None, k: int, folder: str | None = None, method: str | None = None
) -> Path:
    """The release proposed for a table read from ``source`` and protected with ``k``:
    ``<stem>_protected_k<k>.csv`` in ``folder`` (default: the table's folder, else ``.``), or
    ``<stem>_<method>_k<k>.csv`` given the ``method`` (the app's export, issue 30: two runs'
    releases no longer get one name). A table read from SPSS or Stata goes back in its own
    format, labels kept (issue 18)."""
    stem = source.stem if source is not None else "table"
    if method:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in method)
        return _in_folder(source, folder, f"{stem}_{safe}_k{k}")
    return _in_folder(source, folder, f"{stem}_protected_k{k}")


def _in_folder(source: Path | None, folder: str | None, name: str) -> Path:
    folder = folder or (str(source.parent) if source is not None else ".")
    ext = ".csv"
    if source is not None and source.suffix.lower() in _OWN_FORMAT_SUFFIXES:
        ext = source.suffix.lower()
    return Path(folder) / f"{name}{ext}"


def _override_reason(override: str) -> str:
    reason = " ".join(override.split())
    if not any(ch.isalnum() for ch in reason):
        raise ExportRefused(
            f"the reason given to override the release check ({override!r}) holds no words; "
            "write why this table may be released anyway (it is recorded in the report)"
        )
    return reason


@dataclass(frozen=True)
class ExportCheck:
    """The verdict on a protected table: ``problems`` is empty when it may be released.

    ``attribute_disclosure`` is measured on the same frame (issue 29,
    :func:`~microgui.core.metrics.disclosure.attribute_disclosure`): it is no problem (the method
    may not have promised it) but part of the release's verdict, which the report records.
    """

    k_anonymity: int
    problems: tuple[str, ...]
    attribute_disclosure: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the group measures ``k_anonymity`` and ``attribute_disclosure`` were read from
    #: (:func:`release_check_groups`), passed on to the release report
    groups: GroupMeasures | None = field(default=None, repr=False, compare=False)

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


def check_export(
    result: RunResult, frame: pd.DataFrame | None = None, *, pseudonymized: Iterable[str] = ()
) -> ExportCheck:
    """Verify a protected table before release (identifiers absent, k-anonymity ≥ k, the
    method's promise); ``frame`` (default: the run's table) is measured as given, so pass the
    values as written. ``pseudonymized``: identifier columns released as pseudonyms (not
    leaked: :func:`export_run` checked them)."""
    frame = result.protected if frame is None else frame
    problems: list[str] = []
    drawn = set(pseudonymized)
    leaked = [c for c in result.roles.identifiers if c in frame.columns and c not in drawn]
    if leaked:
        problems.append(f"identifier column(s) {', '.join(map(repr, leaked))} would be exported")
    groups = release_check_groups(result, frame)
    level = groups.k_anonymity
    if level < result.spec.k:
        problem = f"the table is only {level}-anonymous on its quasi-identifiers, below the chosen k = {result.spec.k}"
        if result.report.get("k_anonymity_guaranteed") is False:
            # masking methods (individual ranking, hybrid data) never promised k-anonymity
            problem += f" ({result.report['method']} does not guarantee k-anonymity: {result.report.get('note', '')})"
        problems.append(problem)
    problems.extend(_promised_privacy_problems(result, frame))
    problems.extend(_plan_problems(result, frame))
    return ExportCheck(
        k_anonymity=level,
        problems=tuple(problems),
        attribute_disclosure=groups.disclosure_json(),
        groups=groups,
    )


def release_check_groups(result: RunResult, frame: pd.DataFrame) -> GroupMeasures:
    """The group measures of ``frame``, a release of ``result`` (k-anonymity, attribute
    disclosure per confidential attribute), as the release check and the release report show
    them: the run's own (:attr:`RunResult.groups`, computed once with its report) when
    ``frame`` holds the run's values in the measured columns, else measured on ``frame``.

    A plan with a local suppression (issue 31) counts a missing key cell as matching any value
    (sdcMicro's convention, :mod:`microgui.core.runs.plan`); its k is then the plan's
    (:func:`~microgui.core.runs.plan.plan_k_level`, on the promised key combinations when the
    last suppression promised k on combinations of at most m keys)."""
    from microgui.core.runs.plan import plan_k_level, plan_suppresses
    from microgui.core.runs.plan.run import promised_combinations

    roles = result.roles
    qis = [c for c in roles.quasi_identifiers if c in frame.columns]
    conf = [c for c in roles.confidential if c in frame.columns]
    rule: Missing = "any" if plan_suppresses(result.report) else "category"
    kept = result.groups
    if kept is not None and kept.applies_to(qis, conf, rule):
        if frame is result.protected or _same_values(frame, result.protected, [*qis, *conf]):
            return kept
    groups = group_measures(frame, qis, conf, roles, missing=rule)
    if "plan" in result.report and promised_combinations(result.report) is not None:
        groups = replace(groups, k_anonymity=plan_k_level(frame, qis, result.report))
    return groups


def _same_values(frame: pd.DataFrame, other: pd.DataFrame, columns: Sequence[str]) -> bool:
    """Whether ``frame`` and ``other`` hold equal values, row by row, in ``columns`` (missing
    where the other is missing): then they group their records alike. A CSV release writes
    whole numbers as integers (39 for 39.0: equal, grouped alike); the formula rule changes
    text (not equal: measured again)."""
    if len(frame) != len(other):
        return False
    for col in columns:
        if col not in frame.columns or col not in other.columns:
            return False
        a, b = frame[col], other[col]
        if a is b or (a.dtype == b.dtype and a.equals(b)):
            continue
        a_na, b_na = a.isna().to_numpy(), b.isna().to_numpy()
        if not np.array_equal(a_na, b_na):
            return False
        known = ~a_na
        try:
            same = a.to_numpy(dtype=object)[known] == b.to_numpy(dtype=object)[known]
            if not bool(np.all(same)):
                return False
        except (TypeError, ValueError):  # values that do not compare: measured again
            return False
    return True


def _plan_problems(result: RunResult, frame: pd.DataFrame) -> list[str]:
    """The promises of each step of a plan (issue 31), measured on the released frame."""
    if "plan" not in result.report:
        return []
    from microgui.core.runs.plan import plan_problems

    return plan_problems(result, frame)


def _promised_privacy_problems(result: RunResult, frame: pd.DataFrame) -> list[str]:
    """The privacy model the run's method promised (its ``ReleaseCheck``: the p of p-sensitive
    k-anonymity, the l of l-diversity, the t of t-closeness), measured on the table as released
    (groups = identical quasi-identifier values)."""
    conf = [c for c in result.roles.confidential if c in frame.columns]
    qis = result.roles.quasi_identifiers
    try:
        method = get_method(str(result.report.get("method")))
    except InvalidParameter:  # not a registered method's run
        return []
    if method.release_check is None:
        return []
    if not conf or not qis or len(frame) == 0:
        return []
    params = result.report.get("parameters", {})
    problem = method.release_check.problem(frame, qis, conf, result.roles, params)
    return [] if problem is None else [problem]


def released_result(
    dataset: Dataset, result: RunResult, table: pd.DataFrame | None = None
) -> RunResult:
    """``result`` with ``table`` as its protected table: what :func:`export_run` writes and
    measures when the caller releases a table edited after the run (the API's
    ``ProtectionResult.frame``); ``result`` itself when ``table`` is None or the run's own.

    The table must still be one of the run: the same records in the same order (length and
    index), every column of the run's table, and no column the run's input did not have (an
    input column put back, an identifier say, is then refused by the release check). When any cell
    differs from the run's, the run report's measures are computed again on ``table`` (the
    same :func:`~microgui.core.runs.build_report`, the run's groups), so no figure of the
    report describes another table, and ``edited_after_run`` gives the count of changed cells
    per column and the columns added. Raises :class:`ExportRefused` naming what no longer
    matches.
    """
    if table is None or table is result.protected:
        return result
    run_table = result.protected
    what = "the table to release (edited after the run)"
    redo = "; release the run's table, or run the protection again on the table you want to release"
    if not isinstance(table, pd.DataFrame):
        raise ExportRefused(f"{what} is a {type(table).__name__}, not a DataFrame{redo}")
    names = [str(c) for c in table.columns]
    if len(set(names)) != len(names):
        twice = sorted({c for c in names if names.count(c) > 1})
        raise ExportRefused(f"{what} has column(s) {', '.join(map(repr, twice))} twice{redo}")
    if len(table) != len(run_table):
        raise ExportRefused(
            f"{what} has {len(table):,} records and the run made {len(run_table):,}: records "
            f"were added or removed{redo}"
        )
    if not table.index.equals(run_table.index):
        raise ExportRefused(
            f"{what} has its records under other index labels or in another order than the "
            f"run made{redo}"
        )
    missing = [str(c) for c in run_table.columns if c not in table.columns]
    if missing:
        raise ExportRefused(
            f"{what} lacks the run's column(s) {', '.join(map(repr, missing))}{redo}"
        )
    # the input's columns as the run saw them (its roles; every column the run's table lacks is
    # an identifier, tagged), not the caller's frame, which may have grown since
    known = set(result.roles) | set(map(str, run_table.columns))
    unknown = [c for c in names if c not in known]
    if unknown:
        raise ExportRefused(
            f"{what} has column(s) {', '.join(map(repr, unknown))} that the input does not "
            f"have{redo}"
        )
    added = [c for c in names if c not in set(map(str, run_table.columns))]
    changed = {
        str(c): n for c in run_table.columns if (n := _changed_cells(run_table[c], table[c]))
    }
    if not changed and not added:
        return replace(result, protected=table)
    _refuse_identifier_values(dataset, result, table, [c for c in changed if c in names])
    # Only the quasi-identifiers were protected, and only their values can be measured again
    # (k, the promises). Any other column is released as the input holds it: an edit of one
    # can put back what no check can see (an identifier lower-cased, a part of it, appended to
    # a confidential value: found by an adversarial pass), so it is refused, override or not.
    qis = set(result.roles.quasi_identifiers)
    others = [c for c in changed if c not in qis]
    if others:
        raise ExportRefused(
            f"{what} changed column(s) {', '.join(map(repr, others))}, which are not "
            "quasi-identifiers: such a column is released as the input holds it, and an edit "
            "of it cannot be checked; tag the column a quasi-identifier and run again, or "
            "release the run's values"
        )
    try:
        method = get_method(str(result.report.get("method", result.spec.method)))
    except InvalidParameter as exc:  # not a registered method's run: nothing to measure with
        raise ExportRefused(f"{what} cannot be measured (its method is not known){redo}") from exc
    try:
        groups = release_groups(dataset.roles, table)
        figures = build_report(
            dataset,
            result.spec,
            method,
            dict(result.report.get("parameters", {})),
            int(result.report.get("seed") or 0),  # as the run recorded it (kept below)
            result.qi,
            result.labels,
            table,
            result.seconds,
            {},
            groups=groups,
        )
    except (ValueError, TypeError, ArithmeticError) as exc:  # the error's text may hold a value
        raise ExportRefused(
            f"{what} cannot be measured (column(s) {', '.join(map(repr, changed))} changed: "
            f"{type(exc).__name__}){redo}"
        ) from exc
    report = {
        **result.report,
        **figures,
        "seed": result.report.get("seed"),
        "seconds": result.report.get("seconds"),
        "edited_after_run": {"cells_changed": changed, "columns_added": added},
    }
    log.info("table edited after the run: %s", report["edited_after_run"])
    return replace(result, protected=table, report=report, groups=groups)


def _refuse_identifier_values(
    dataset: Dataset, result: RunResult, table: pd.DataFrame, edited: Sequence[str]
) -> None:
    """An edited column that now holds an identifier's values record for record (``frame[
    'note'] = df['id']``) releases the identifier under another name: the check by column
    name cannot see it, so it is refused here."""
    for column in edited:
        for ident in result.roles.identifiers:
            if ident not in dataset.frame.columns or len(dataset.frame) != len(table):
                continue
            source = pd.Series(dataset.frame[ident].to_numpy(dtype=object))
            if source.isna().all():  # nothing of the identifier to release
                continue
            if _changed_cells(source, pd.Series(table[column].to_numpy(dtype=object))) == 0:
                raise ExportRefused(
                    f"the table to release (edited after the run) holds the values of the "
                    f"identifier column {ident!r} in column {column!r}; an identifier is never "
                    "released as it is (pseudonymize it, or leave the column as the run made it)"
                )


def _changed_cells(before: pd.Series, after: pd.Series) -> int:
    """How many cells of a column differ (missing equals missing; 3 equals 3.0: the written
    text may differ, the value does not)."""
    if before.equals(after):
        return 0
    a = before.to_numpy(dtype=object)
    b = after.to_numpy(dtype=object)
    a_missing = pd.isna(a)
    b_missing = pd.isna(b)
    both = ~(a_missing | b_missing)
    same = np.zeros(len(a), dtype=bool)
    if both.any():
        try:
            same[both] = np.asarray(a[both] == b[both], dtype=bool)
        except (TypeError, ValueError):  # a cell that does not compare (a list, an array)
            same[both] = [_same(x, y) for x, y in zip(a[both], b[both], strict=True)]
    return int(((a_missing != b_missing) | (both & ~same)).sum())


def _same(x: object, y: object) -> bool:
    try:
        return bool(x == y)
    except (TypeError, ValueError):  # values that do not compare (arrays, odd objects)
        return False


def _unshown(shown: ExportCheck | None, verdict: ExportCheck) -> list[str]:
    """The problems of ``verdict`` that ``shown`` (the check a user saw) did not list."""
    if shown is None:
        return []
    return [p for p in verdict.problems if p not in shown.problems]


def export_run(
    dataset: Dataset,
    result: RunResult,
    csv_path: str | os.PathLike[str],
    report_path: str | os.PathLike[str] | None = None,
    *,
    group_column: str | None = None,
    override: str | None = None,
    keep_formula_cells: bool = False,
    check: ExportCheck | None = None,
    also_protect: Iterable[str | os.PathLike[str] | None] = (),
    csv_options: CsvOptions | None = None,
    pseudonymize: Sequence[str] = (),
    key_path: str | os.PathLike[str] | None = None,
    extra_reports: Sequence[tuple[str | os.PathLike[str], ReportMaker]] = (),
    table: pd.DataFrame | None = None,
    renames: Mapping[str, str] | None = None,
    rename_invalid: bool = False,
    order: RecordOrder | None = None,
) -> dict[str, Any]:
    """Write the protected CSV (and the report, if ``report_path``); return the report written.

    ``renames`` (issue 30): released name of some columns (``{original: released}``), checked
    against the format's rules (:func:`microgui.core.io.names.check_renames`); with
    ``rename_invalid`` every column SPSS or Stata cannot hold gets the name
    :func:`~microgui.core.io.names.valid_names` proposes. The report's ``variables`` then lists
    each column as ``{"name": original, "released_as": released}`` and ``renamed_columns`` maps
    the renamed ones. Every check and measure is made under the original names.

    Text cells and column names a spreadsheet would run as formulas are neutralized unless
    ``keep_formula_cells`` (see the module docstring); the report says how many.
    The release check (:func:`check_export`) is always made here, on the values about to be
    written (after the group column, pseudonyms and the formula rule), and the report's
    ``k_anonymity`` and ``identifiers_removed`` come from it and from that frame. ``check`` is
    the check a user was shown (the app shows its problems before asking for an override): it
    decides nothing, and an ``override`` given after it covers only the problems it listed, so
    a table with a problem it did not list is refused, the confirmation having been about
    another table. ``table`` is the table to release in place of the run's (an edited copy:
    :func:`released_result` says what may differ and how the report follows it).
    The CSV and the report are one release: both are written, or neither is changed.
    The report's ``fingerprint`` gives the input's (:func:`input_fingerprint`) and the release
    file's name, format, SHA-256 as written, records and columns. ``extra_reports`` are further
    reports of the release, (path, maker): each maker gets the :class:`ReleaseContext` once the
    release file is written (not yet renamed) and returns the writer of its file, written with
    the others as one release.

    ``order`` (issue 31, :mod:`microgui.core.release.order`): the records are written in a random
    order unless ``order.keep`` (None: random, from a fresh seed that is not recorded), the
    households of a household-id column kept together; the report's ``record_order`` says which.
    Checks, measures and extra reports see the records in the run's order.

    Raises :class:`ExportRefused` when the table fails :func:`check_export` and no ``override``
    reason (with words) is given, or when a target is a file the run read (:func:`input_paths`,
    ``also_protect``) or may not be replaced (:func:`~microgui.core.io.check_write_targets`).
    """
    protected = [*input_paths(dataset, result), *(Path(p) for p in also_protect if p is not None)]
    targets = [csv_path] if report_path is None else [csv_path, report_path]
    targets += [path for path, _maker in extra_reports]
    pseudonymize = list(
        dict.fromkeys(
            resolve_columns(pseudonymize, [str(c) for c in dataset.frame.columns], "--pseudonymize")
        )
    )
    _check_pseudonym_request(result, pseudonymize, key_path)
    csv_file = check_write_targets(
        [*targets, *([key_path] if key_path is not None else [])], protect_from=protected
    )[0]
    fmt = release_format(csv_file)  # refuses .xls before anything is computed
    if csv_options is not None and not csv_options.is_default and fmt != "csv":
        raise ExportRefused(
            f"the CSV options (separator, decimal mark, encoding) are for a CSV output, and "
            f"{csv_file.name} is {fmt}; drop them or name the output .csv"
        )
    options = (csv_options or CsvOptions()).for_name(csv_file)
    reason = None if override is None else _override_reason(override)
    result = released_result(dataset, result, table)
    frame = protected_table(result, group_column)
    report = dict(result.report)
    report["output"] = csv_file.name
    if group_column:
        report["group_column"] = group_column
    report["output_format"] = fmt
    keys: dict[str, dict[str, str]] = {}
    if pseudonymize:
        frame, keys = _with_pseudonyms(dataset, frame, pseudonymize)
        report["pseudonymized"] = {c: len(keys[c]) for c in pseudonymize}
        report["pseudonym_warning"] = PSEUDONYM_WARNING
        report["pseudonym_key"] = Path(key_path).name if key_path is not None else None
        if key_path is not None:
            report["pseudonym_key_format"] = KEY_FORMAT
        log.warning("pseudonymised columns %s: %s", pseudonymize, PSEUDONYM_WARNING)
    if keep_formula_cells and fmt == "excel":
        # A workbook runs a cell starting with "=" as a formula: never kept raw there.
        report["formula_cells"] = (
            "neutralized (an Excel workbook runs them; the option is for text files)"
        )
        keep_formula_cells = False
    if fmt == "csv":  # by the columns' own names, before any is neutralized
        frame = whole_numbers_written_plain(frame, result.qi.continuous_names)
    # every kind of column as the format holds it (bytes and nested values as text...) or
    # refused naming it (microgui.core.table.column_types), before the formula rule reads the text
    frame, converted = release_columns(frame, fmt)
    report.update(converted)
    # The table as released, under the columns' own names: what the release report measures
    # (a neutralized name, '=age for =age, is the same column; cells map one to one).
    written = frame
    if keep_formula_cells:
        report["formula_cells"] = "kept raw (--keep-formula-cells)"
    else:
        frame, neutralized = neutralize_formulas(frame)
        written = frame
        frame, renamed = neutralize_column_names(frame)
        report["neutralized_cells"] = neutralized
        report["neutralized_column_names"] = renamed
        if neutralized or renamed:
            log.info("neutralized formula-like cells: %s; column names: %d", neutralized, renamed)
    # No write without a check: measured on the values as written (the formula rule can make
    # two cells one), never taken from an earlier check; the report's figures follow it.
    verdict = check_export(result, written, pseudonymized=pseudonymize)
    report["k_anonymity"] = verdict.k_anonymity
    # the verdict of the table as written (issue 29): a release with a homogeneous class is
    # written (no method promised otherwise, or the user confirmed) and says so
    report["attribute_disclosure"] = verdict.attribute_disclosure
    release = release_verdict(report)
    report["verdict"] = verdict_json(release)
    disclosed = any(
        int(m.get("homogeneous_groups") or 0) > 0 for m in verdict.attribute_disclosure.values()
    )
    report["released_with_attribute_disclosure"] = disclosed
    if disclosed:
        log.warning("released with attribute disclosure: %s", release.text)
    report["identifiers_removed"] = [
        c for c in result.roles.identifiers if c not in written.columns
    ]
    if not verdict.ok:
        if not reason:
            raise ExportRefused(
                f"export to {csv_file.name} refused: {'; '.join(verdict.problems)}. "
                "Re-run with a valid configuration, or override explicitly (the override is recorded in the report)."
            )
        unshown = _unshown(check, verdict)
        if unshown:
            raise ExportRefused(
                f"export to {csv_file.name} refused: the table about to be written is not the "
                f"one whose check was shown ({'; '.join(unshown)}); check it again before "
                "overriding"
            )
        log.warning("export override (%s): %s", reason, "; ".join(verdict.problems))
        report["export_override"] = {"reason": reason, "problems": list(verdict.problems)}
    # issue 31: the records in a random order (households adjacent) unless the input order is
    # kept; only the written file is reordered, after every check (none depends on the order)
    # (the default CSV of numbers is written by blocks of the permutation, never a reordered
    # copy of the whole table: issue 33's 1,000,000-record peak)
    rows, report["record_order"] = _release_rows(dataset, result, frame, order)
    if rows is not None and not (fmt == "csv" and options.is_default):
        frame, rows = _reordered(frame, rows), None
    writer: Any
    stat = _release_stat(dataset, result, pseudonymize)
    if fmt not in ("spss", "stata") and (renames or rename_invalid):
        if renames:
            raise ExportRefused(
                f"renaming columns is for an SPSS or Stata output, and {csv_file.name} is {fmt}"
            )
    if fmt == "csv":
        report["csv_format"] = options.to_json()
        writer = (
            csv_writer(frame, rows)
            if options.is_default
            else csv_options_writer(frame, options, text_input=_text_input(dataset))
        )
    else:
        compress = csv_file.suffix.lower() == ".zsav"
        frame = _dates_back(dataset.frame, frame)
        frame, stat = _renamed_release(frame, stat, fmt, renames, rename_invalid, report)
        writer, notes = release_writer(
            frame, fmt, stat, compress=compress, text_input=_text_input(dataset)
        )
        report.update(notes)
    if fmt not in ("spss", "stata") and stat and stat.get("user_missing_declared"):
        # only SPSS and Stata hold user-missing codes: elsewhere the cells are missing, said
        report["labels"] = {
            "user_missing_kept": [],
            "user_missing_dropped": sorted(
                c for c in stat["user_missing_declared"] if c in written.columns
            ),
        }
    report["fingerprint"] = {"input": input_fingerprint(dataset), "output": None}

    def released(temps: Sequence[Path]) -> None:
        """The release file's fingerprint, from its temporary file (the first item)."""
        if report["fingerprint"]["output"] is None:
            report["fingerprint"]["output"] = {
                "file": csv_file.name,
                "format": fmt,
                "sha256": file_sha256(temps[0]),
                "rows": int(len(written)),
                "columns": int(len(written.columns)),
            }

    def json_writer(temps: Sequence[Path]) -> Callable[[IO[str]], object]:
        released(temps)
        text = json_text(report)  # strict JSON: NaN/inf as null
        return lambda handle: handle.write(text)

    def extra_writer(maker: ReportMaker) -> DerivedWriter:
        def make(temps: Sequence[Path]) -> Any:
            released(temps)
            return maker(ReleaseContext(dataset, result, written, report, verdict.groups))

        return DerivedWriter(make)

    items: list[tuple[str | os.PathLike[str], Any]] = [(csv_path, writer)]
    if report_path is not None:
        items.append((report_path, DerivedWriter(json_writer)))
    items += [(path, extra_writer(maker)) for path, maker in extra_reports]
    if key_path is not None:  # exact, never the formula rule (a program reads it)
        items.append((key_path, key_writer(keys, pseudonymize)))
    # Every file is written before any is renamed, and a failed rename puts the others back: a
    # full disk never leaves a release without its report (or key), nor a new one beside an old
    # report.
    write_files_atomic(items, protect_from=protected)
    return report


def _release_rows(
    dataset: Dataset, result: RunResult, frame: pd.DataFrame, order: RecordOrder | None
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """The positions of ``frame``'s records (the run's order) in the release's record order
    (None: kept as they are), and the report's ``record_order``
    (:mod:`microgui.core.release.order`)."""
    order = order if order is not None else RecordOrder()
    household = result.roles.household
    if household is not None and household not in dataset.frame.columns:
        household = None
    if order.keep:
        return None, order_report(order, household)
    ids = dataset.frame[household] if household is not None else None
    try:
        rows = release_permutation(len(frame), order, ids)
    except InvalidParameter as exc:
        raise ExportRefused(f"the records cannot be put in a random order: {exc}") from exc
    return np.asarray(rows), order_report(order, household)


def _reordered(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame``'s records in the order ``rows``, numbered from 0, its ``attrs`` kept."""
    out = frame.iloc[rows].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def export_job(
    dataset: Dataset,
    result: RunResult,
    path: str | os.PathLike[str],
    *,
    check: ExportCheck,
    override: str | None = None,
    also_protect: Iterable[str | os.PathLike[str]] = (),
    csv_options: CsvOptions | None = None,
    pseudonymize: Sequence[str] = (),
    key_path: str | os.PathLike[str] | None = None,
    renames: Mapping[str, str] | None = None,
    order: RecordOrder | None = None,
) -> Callable[[], dict[str, Any]]:
    """:func:`export_run` of ``result`` to ``path`` and its report beside it
    (:func:`report_path_for`), as a function to call later (the app's file task, in a worker
    thread): everything it writes is given now. ``csv_options`` apply to a CSV release only;
    ``check``: the release check the user saw (the writer checks the table again and refuses a
    problem it did not list). A write error is an :class:`ExportRefused` naming the file."""
    path = Path(path)
    is_csv = release_format(path) == "csv"
    also = list(also_protect)

    def job() -> dict[str, Any]:
        try:
            return export_run(
                dataset,
                result,
                path,
                report_path_for(path),
                override=override or None,
                check=check,
                also_protect=also,
                csv_options=csv_options if is_csv else None,
                pseudonymize=pseudonymize,
                key_path=key_path,
                renames=dict(renames) if renames and not is_csv else None,
                order=order,
            )
        except OSError as exc:
            raise ExportRefused(f"cannot write {path.name}: {exc.strerror or exc}") from exc

    return job


def _text_input(dataset: Dataset) -> bool:
    """Whether the table was read from a text file (CSV, TSV), whose every column is text:
    only then are its number columns typed in a typed release."""
    return dataset.source is not None and dataset.source.suffix.lower() in TEXT_EXTENSIONS


def _dates_back(original: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """A date or date-time column of the input released as text (an ordinal quasi-identifier's
    categories are its values as text) as dates again, for a typed format (SPSS, Stata, Excel,
    Parquet keep the type; found by a newcomer tour: DATETIME20 in, A19 text out), when every
    released value reads back as one."""
    out = frame
    for name in frame.columns:
        if name not in original.columns:
            continue
        source = original[name]
        # an SPSS DATE or Stata %td variable is read as datetime.date objects (issue 27); a
        # date-time with a time zone (summer time: mixed offsets) is left as written
        kind = kind_of(source)
        days = kind == "date" and _all_days(source)
        if not days and (
            kind != "datetime" or not pd.api.types.is_datetime64_any_dtype(source.dtype)
        ):
            continue
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column.dtype) or (days and _all_days(column)):
            continue
        present = column.notna() & (column.astype(str).str.strip() != "")
        # ISO 8601, as str() writes a date: other text (a pseudonym) is no date, and pandas'
        # guessing of a format warns
        parsed = pd.to_datetime(column.where(present), errors="coerce", format="ISO8601")
        if bool((parsed.notna() == present).all()):
            out = frame.copy(deep=False) if out is frame else out
            out[name] = (
                pd.Series(
                    [None if pd.isna(v) else v.date() for v in parsed.tolist()],
                    index=frame.index,
                    dtype=object,
                )
                if days
                else parsed.astype(source.dtype)
            )
    return out


def _all_days(column: pd.Series) -> bool:
    """Whether an object column holds calendar days (``datetime.date``, not date-times) and
    missing cells only, at least one day."""
    # pandas' inference, in C, first: a text column of a million records is not walked here
    if column.dtype != object or pd.api.types.infer_dtype(column, skipna=True) != "date":
        return False
    return not any(isinstance(v, dt.datetime) for v in column.tolist())  # "date" takes both


def _release_stat(
    dataset: Dataset, result: RunResult, pseudonymize: Sequence[str]
) -> dict[str, Any] | None:
    """The input's SPSS/Stata notes (:data:`~microgui.core.io.STAT_ATTR`) as a release uses
    them: no value labels on pseudonyms, and user-missing codes to write back only where the
    column passes through unchanged (a quasi-identifier's cells are aggregates, a pseudonym is
    drawn; those are ``user_missing_dropped``). ``user_missing_declared``: every column with a
    declaration, for a format that holds none."""
    stat = dataset.frame.attrs.get(STAT_ATTR)
    if not stat:
        return None
    stat = dict(stat)
    if pseudonymize:  # pseudonyms carry none of the column's value labels
        stat["codes"] = _without(stat.get("codes", {}), pseudonymize)
        stat["value_labels"] = _without(stat.get("value_labels", {}), pseudonymize)
    declared = dict(stat.get("user_missing") or {})
    if declared:
        changed = {*result.roles.quasi_identifiers, *pseudonymize}
        stat["user_missing"] = _without(declared, list(changed))
        stat["user_missing_dropped"] = sorted(c for c in declared if c in changed)
        stat["user_missing_declared"] = sorted(declared)
    return stat


def _renamed_release(
    frame: pd.DataFrame,
    stat: dict[str, Any] | None,
    fmt: str,
    renames: Mapping[str, str] | None,
    rename_invalid: bool,
    report: dict[str, Any],
) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """``frame`` (and the input's labels ``stat``) under the released names (issue 30): the
    user's ``renames``, else with ``rename_invalid`` the proposals of
    :func:`~microgui.core.io.names.valid_names`; :class:`ExportRefused` listing the problems of
    names the format cannot hold. The report gets ``variables`` and ``renamed_columns``."""
    names = [str(c) for c in frame.columns]
    mapping = dict(renames or {})
    if rename_invalid:
        proposed = valid_names([mapping.get(c, c) for c in names], fmt)
        mapping = {c: proposed.get(mapping.get(c, c), mapping.get(c, c)) for c in names}
    mapping = {str(old): str(new) for old, new in mapping.items() if str(old) != str(new)}
    if not mapping:
        return frame, stat
    problems = check_renames(names, mapping, fmt)
    if problems:
        raise ExportRefused(
            f"the released column names cannot be written as {fmt.upper() if fmt == 'spss' else 'Stata'}"
            f": {'; '.join(problems)}"
        )
    report["renamed_columns"] = dict(mapping)
    report["variables"] = [{"name": c, "released_as": mapping.get(c, c)} for c in names]
    frame = frame.rename(columns=mapping)
    if stat:

        def moved(value: Any) -> Any:
            if isinstance(value, dict):
                return {mapping.get(k, k) if isinstance(k, str) else k: v for k, v in value.items()}
            if isinstance(value, list):
                return [mapping.get(v, v) if isinstance(v, str) else v for v in value]
            return value

        stat = {key: moved(value) for key, value in stat.items()}
    return frame, stat


def _without(mapping: dict[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    return {c: v for c, v in mapping.items() if c not in columns}


def _check_pseudonym_request(
    result: RunResult, columns: Sequence[str], key_path: str | os.PathLike[str] | None
) -> None:
    identifiers = set(result.roles.identifiers)
    for column in columns:
        if column not in identifiers:
            raise ExportRefused(
                f"--pseudonymize {column!r}: only identifier columns are released as "
                f"pseudonyms, and {column!r} is not tagged identifier (tag it with "
                "--identifiers)"
            )
    if key_path is not None and not columns:
        raise ExportRefused(
            "--pseudonym-key is the key of pseudonymised columns; give --pseudonymize COL,... "
            "too, or drop it"
        )


def _with_pseudonyms(
    dataset: Dataset, frame: pd.DataFrame, columns: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, dict[str, str]]]:
    """The release with each of ``columns`` (identifiers, left out of ``frame``) put back at
    its place in the input as pseudonyms, checked (:func:`check_pseudonyms`)."""
    keys: dict[str, dict[str, str]] = {}
    out = frame.copy(deep=False)
    for column in columns:
        original = dataset.frame[column]
        tokens, keys[column] = pseudonymize_column(original)
        check_pseudonyms(tokens, original)
        out[column] = tokens.to_numpy()
    order = [c for c in dataset.frame.columns if c in out.columns]
    order += [c for c in out.columns if c not in order]  # a group column last
    return out[order], keys
