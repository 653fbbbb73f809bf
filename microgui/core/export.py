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

No file the run read is written: the data file and every hierarchy file of the run
(:func:`input_paths`), plus whatever the caller adds (``also_protect``: a project file), are
compared with the targets by inode. A reason given to override the release check must hold
words; it is recorded on one line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from microgui.core.column_types import kind_of, release_columns
from microgui.core.dataset import Dataset
from microgui.core.errors import ExportRefused, InvalidParameter
from microgui.core.formulas import FORMULA_PREFIXES
from microgui.core.formulas import neutralized as _neutralized
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
from microgui.core.methods import get_method
from microgui.core.metrics import k_anonymity_level
from microgui.core.numbers import whole_numbers_written_plain
from microgui.core.pseudonyms import PSEUDONYM_WARNING, check_pseudonyms, key_frame
from microgui.core.pseudonyms import pseudonymize as pseudonymize_column
from microgui.core.release import CsvOptions, csv_options_writer, release_format, release_writer
from microgui.core.roles import resolve_columns
from microgui.core.runs import RunResult

__all__ = [
    "report_path_for",
    "ExportCheck",
    "check_export",
    "protected_table",
    "export_run",
    "neutralize_formulas",
    "neutralize_column_names",
    "input_paths",
    "input_fingerprint",
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
    for position, column in enumerate(frame.columns):
        values = text_cells(frame.iloc[:, position])
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


#: Makes the writer of one further report of a release (the HTML or PDF release report).
ReportMaker = Callable[[ReleaseContext], Callable[[IO[str]], object] | FileWriter | EncodedWriter]


def input_paths(dataset: Dataset, result: RunResult) -> list[Path]:
    """The files a run read: the data file first, then each hierarchy file of its spec."""
    paths = [Path(dataset.source)] if dataset.source is not None else []
    return paths + [Path(path) for _column, path in result.spec.hierarchies]


def report_path_for(csv_path: Path) -> Path:
    """The JSON report written beside an exported CSV: ``name.csv`` → ``name.report.json``."""
    return csv_path.with_name(csv_path.stem + ".report.json")


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
) -> dict[str, Any]:
    """Write the protected CSV (and the report, if ``report_path``); return the report written.

    Text cells and column names a spreadsheet would run as formulas are neutralized unless
    ``keep_formula_cells`` (see the module docstring); the report says how many.
    ``check`` is :func:`check_export` of this result when the caller has already made it (the app
    shows its problems before asking for an override); it is then not computed again.
    The CSV and the report are one release: both are written, or neither is changed.
    The report's ``fingerprint`` gives the input's (:func:`input_fingerprint`) and the release
    file's name, format, SHA-256 as written, records and columns. ``extra_reports`` are further
    reports of the release, (path, maker): each maker gets the :class:`ReleaseContext` once the
    release file is written (not yet renamed) and returns the writer of its file, written with
    the others as one release.

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
    frame = protected_table(result, group_column)
    if check is None:  # a group column is no quasi-identifier: the result's check stands
        check = check_export(result, frame)
    report = dict(result.report)
    report["k_anonymity"] = check.k_anonymity
    report["output"] = csv_file.name
    if group_column:
        report["group_column"] = group_column
    if not check.ok:
        if not reason:
            raise ExportRefused(
                f"export to {csv_file.name} refused: {'; '.join(check.problems)}. "
                "Re-run with a valid configuration, or override explicitly (the override is recorded in the report)."
            )
        log.warning("export override (%s): %s", reason, "; ".join(check.problems))
        report["export_override"] = {"reason": reason, "problems": list(check.problems)}
    report["output_format"] = fmt
    keys: dict[str, dict[str, str]] = {}
    if pseudonymize:
        frame, keys = _with_pseudonyms(dataset, frame, pseudonymize)
        report["pseudonymized"] = {c: len(keys[c]) for c in pseudonymize}
        report["identifiers_removed"] = [  # released as pseudonyms: not removed
            c for c in report.get("identifiers_removed", []) if c not in pseudonymize
        ]
        report["pseudonym_warning"] = PSEUDONYM_WARNING
        report["pseudonym_key"] = Path(key_path).name if key_path is not None else None
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
    # refused naming it (microgui.core.column_types), before the formula rule reads the text
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
    writer: Any
    if fmt == "csv":
        report["csv_format"] = options.to_json()
        writer = (
            csv_writer(frame)
            if options.is_default
            else csv_options_writer(frame, options, text_input=_text_input(dataset))
        )
    else:
        stat = dataset.frame.attrs.get(STAT_ATTR)
        if stat and pseudonymize:  # pseudonyms carry none of the column's value labels
            stat = {**stat, "codes": _without(stat.get("codes", {}), pseudonymize)}
            stat["value_labels"] = _without(stat.get("value_labels", {}), pseudonymize)
        if stat and stat.get("user_missing"):
            # SPSS user-missing codes go back only where the column is passed through
            # unchanged: a quasi-identifier's cells are aggregates, a pseudonym is drawn
            changed = {*result.roles.quasi_identifiers, *pseudonymize}
            stat = {
                **stat,
                "user_missing": _without(stat["user_missing"], list(changed)),
                "user_missing_dropped": sorted(c for c in stat["user_missing"] if c in changed),
            }
        compress = csv_file.suffix.lower() == ".zsav"
        frame = _dates_back(dataset.frame, frame)
        writer, notes = release_writer(
            frame, fmt, stat, compress=compress, text_input=_text_input(dataset)
        )
        report.update(notes)
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
            return maker(ReleaseContext(dataset, result, written, report))

        return DerivedWriter(make)

    items: list[tuple[str | os.PathLike[str], Any]] = [(csv_path, writer)]
    if report_path is not None:
        items.append((report_path, DerivedWriter(json_writer)))
    items += [(path, extra_writer(maker)) for path, maker in extra_reports]
    if key_path is not None:
        key, _count = neutralize_formulas(key_frame(keys, pseudonymize))
        # the key re-identifies every record: readable by its owner only
        items.append((key_path, EncodedWriter(csv_writer(key), "utf-8", private=True)))
    # Every file is written before any is renamed, and a failed rename puts the others back: a
    # full disk never leaves a release without its report (or key), nor a new one beside an old
    # report.
    write_files_atomic(items, protect_from=protected)
    return report


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
        if kind_of(source) != "datetime":
            continue  # with a time zone (summer time: mixed offsets): left as written
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column.dtype):
            continue
        present = column.notna() & (column.astype(str).str.strip() != "")
        parsed = pd.to_datetime(column.where(present), errors="coerce")
        if bool((parsed.notna() == present).all()):
            out = frame.copy(deep=False) if out is frame else out
            out[name] = parsed.astype(source.dtype)
    return out


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
