"""The ``microgui`` command: ``protect`` (batch microaggregation), ``dependency-tree`` (``000`` §3.2),
``gui`` (the app), ``--version``.

Contract (later issues and outside scripts rely on it; extend, never rename)::

    microgui protect INPUT -o OUTPUT --method METHOD -k K --qi COL[,COL...]
        [--identifiers COL,...] [--confidential COL,...]
        [--ordinal COL=V1<V2<...]... [--nominal COL,...] [--missing-as-category COL,...]
        [--weight COL] [--param NAME=VALUE]... [--round source|N] [--seed N] [--group-column NAME] [--report REPORT.json]
        [--strata COL,...] [--block-size N] [--engine local|dask] [--scheduler ADDRESS]
        [--workers N] [--quiet]
        [--report-html REPORT.html] [--report-pdf REPORT.pdf]
    microgui protect --list-methods
    microgui dependency-tree INPUT --attributes COL,... [--bins N] [--json OUT]
    microgui suggest-roles INPUT [--sheet NAME] [--json OUT]
    microgui evaluate ORIGINAL PROTECTED --qi COL,... [--confidential COL,...]
        [--identifiers COL,...] [--ordinal COL=V1<V2...]... [--nominal COL,...] [--json OUT]
        [-k K] [--hierarchy COL=FILE]... [--score-weights il=0.5,id=0.5,dbrl=0.25,prl=0.25]
    microgui sweep INPUT --qi COL,... [--confidential ...] [--identifiers ...] [--ordinal ...]
        [--nominal ...] --methods M1,M2,... --k 3,5,10 [--param NAME=VALUE]...
        [--hierarchy COL=FILE]... [--seed N] [--workers N] [--json OUT]
    microgui gui [FILE] [--demo] [--screenshot PNG]      (also what plain `microgui` does)
    microgui --version

A user error prints one line naming the problem to stderr, exits 2 and writes nothing. Qt is
imported only when the ``gui`` subcommand runs. Every option or positional naming a file is
declared a file read or a file written (``type=INPUT_FILE``, ``INPUT_COLUMN_FILE``,
``OUTPUT_FILE``: :class:`PathOption`); :func:`command_inputs` collects what a command reads and
no output may be one of them (:func:`_check_outputs`), so a new option is protected by its
declaration (a test fails on an option left unclassified).
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, cast

from microgui._version import __version__
from microgui.text_table import text_table

if TYPE_CHECKING:
    import pandas as pd

    from microgui.core.dataset import Dataset
    from microgui.core.roles import RoleMap

__all__ = ["main", "build_parser"]

EXIT_USAGE = 2
#: The subcommands (a first word that is none of them nor an existing file is an error).
COMMANDS = ("protect", "evaluate", "sweep", "suggest-roles", "dependency-tree", "gui")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error on one line (no usage dump) and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Once(argparse.Action):
    """An option given at most once (``--weight``: one survey weight column): a second one is a
    usage error, not a silent replacement of the first."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} is given twice; a table has one survey weight column")
        setattr(namespace, self.dest, values)


class PathOption:
    """The argparse ``type`` of an option or positional that names a file: one the command
    reads (``reads``: its data, roles, hierarchy, project file) or one it writes.

    Declared where the option is added, so that :func:`command_inputs` and
    :func:`command_outputs` find every one, and every writer of every command refuses every
    input (:func:`_check_outputs`). The value is kept as typed. ``column_file``: the value is
    ``COL=FILE`` (``--hierarchy``). ``tests/core/test_inputs_declared.py`` walks the parser and
    fails on an option that is neither declared so nor listed as naming no file.
    """

    def __init__(self, *, reads: bool, column_file: bool = False) -> None:
        self.reads = reads
        self.column_file = column_file
        # argparse names the type by __name__ in its messages
        self.__name__ = "input file" if reads else "output file"

    def __call__(self, text: str) -> str:
        return text

    def paths(self, value: object) -> list[str]:
        """The file names in an option's parsed value (None, one text or a list of them)."""
        out: list[str] = []
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str):
                continue
            if self.column_file:  # as _parse_hierarchies reads it; a malformed one is refused there
                _column, sep, item = item.partition("=")
                item = item.strip() if sep else ""
            if item.strip():
                out.append(item)
        return out

    def __repr__(self) -> str:
        return f"PathOption(reads={self.reads}, column_file={self.column_file})"


#: A file the command reads (never written over), a ``COL=FILE`` one, a file it writes.
INPUT_FILE = PathOption(reads=True)
INPUT_COLUMN_FILE = PathOption(reads=True, column_file=True)
OUTPUT_FILE = PathOption(reads=False)


def _split(values: Sequence[str] | None) -> list[str]:
    """COL,COL,... lists; a comma inside a column name is written ``\\,`` (``--qi 'a\\,b'``).

    Names are kept as typed, spaces included: the core matches a name exactly first, and only
    when no column has that exact name, after removing spaces at the ends, Unicode NFC and case
    (:func:`microgui.core.roles.resolve_column`). So ``--qi 'age, income'`` works, and a column
    named ``' age'`` is selected by quoting it: ``--qi ' age'``.
    """
    out: list[str] = []
    for value in values or ():
        parts = value.replace("\\,", "\x00").split(",")
        out.extend(p.replace("\x00", ",") for p in parts if p.strip())
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="microgui", description="Microaggregation for statistical disclosure control."
    )
    parser.add_argument("--version", action="version", version=f"microgui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    p = sub.add_parser(
        "protect",
        help="microaggregate a table on its quasi-identifiers and write the protected CSV",
        description="Microaggregate INPUT on its quasi-identifiers and write the protected table to OUTPUT.",
    )
    p.add_argument(
        "input",
        nargs="?",
        type=INPUT_FILE,
        metavar="INPUT",
        help="CSV, TSV, Excel, Parquet, SPSS (.sav) or Stata (.dta) file",
    )
    p.add_argument(
        "-o",
        "--output",
        type=OUTPUT_FILE,
        metavar="OUTPUT",
        help="the protected table to write, in the format its extension names: .csv (any other "
        "name too), .tsv, .xlsx, .parquet, .sav/.zsav, .dta; never the input",
    )
    p.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    p.add_argument("--method", default=None, help="method name (see --list-methods)")
    p.add_argument("-k", dest="k", default=None, help="minimum group size k >= 2")
    p.add_argument(
        "--qi",
        action="append",
        metavar="COL[,COL...]",
        help="quasi-identifier columns (continuous unless --ordinal/--nominal)",
    )
    p.add_argument(
        "--identifiers",
        action="append",
        metavar="COL,...",
        help="identifier columns (removed from the output)",
    )
    p.add_argument(
        "--confidential",
        action="append",
        metavar="COL,...",
        help="confidential columns (passed through unchanged)",
    )
    p.add_argument("--weight", metavar="COL", action=_Once, help=_WEIGHT_HELP)
    p.add_argument("--roles", type=INPUT_FILE, metavar="FILE", help=_ROLES_HELP)
    p.add_argument(
        "--ordinal",
        action="append",
        metavar="COL=V1<V2<...",
        help="ordinal quasi-identifier with its category order (lowest first); COL alone: numeric order",
    )
    p.add_argument(
        "--nominal", action="append", metavar="COL,...", help="nominal quasi-identifiers"
    )
    p.add_argument(
        "--missing-as-category",
        action="append",
        metavar="COL,...",
        help=_MISSING_HELP,
    )
    p.add_argument(
        "--param", action="append", metavar="NAME=VALUE", help="method parameter (repeatable)"
    )
    p.add_argument("--round", metavar="source|N", help=_ROUND_HELP)
    p.add_argument(
        "--hierarchy",
        action="append",
        type=INPUT_COLUMN_FILE,
        metavar="COL=FILE",
        help="generalization hierarchy for COL: ';'-separated CSV, one row per value then its "
        "generalizations up to the root (the ARX format); repeatable",
    )
    p.add_argument(
        "--seed", default=None, help="random seed (for methods that draw random numbers)"
    )
    p.add_argument(
        "--group-column", metavar="NAME", help="add each record's group id as column NAME"
    )
    p.add_argument(
        "--report", type=OUTPUT_FILE, metavar="REPORT.json", help="write the run report as JSON"
    )
    p.add_argument(
        "--report-html",
        type=OUTPUT_FILE,
        metavar="REPORT.html",
        help="also write the release report as HTML: the data's fingerprint (SHA-256 of input and "
        "release), roles, method with its references, k and the promised p/l/t verified on the "
        "released table, information loss and disclosure risk, charts, overrides; never a value",
    )
    p.add_argument(
        "--report-pdf",
        type=OUTPUT_FILE,
        metavar="REPORT.pdf",
        help="also write the release report as PDF (the HTML report printed through Qt, A4), "
        "with room for the release board's decision",
    )
    p.add_argument(
        "--allow-unsafe",
        metavar="REASON",
        help="export even if the output fails the k-anonymity check; REASON is recorded in the report",
    )
    p.add_argument(
        "--keep-formula-cells",
        action="store_true",
        help="write text cells starting with = + - @ tab or CR as they are; by default they get a "
        "leading ' so that a spreadsheet does not run them as formulas (CSV injection)",
    )
    p.add_argument(
        "--project",
        type=INPUT_FILE,
        metavar="FILE",
        help="replay a project saved in the app: its table (or --input), roles, hierarchies and "
        "its last run (or --run N), headless; no --method/-k/--qi/... then",
    )
    p.add_argument(
        "--input",
        dest="input_option",
        type=INPUT_FILE,
        metavar="NEW",
        help="with --project: protect this table (today's extract) instead of the project's",
    )
    p.add_argument(
        "--run",
        dest="run_number",
        metavar="N",
        help="with --project: the run of the project's history to replay, numbered from 1 as in "
        "the app (default: the last)",
    )
    p.add_argument(
        "--pseudonymize",
        action="append",
        metavar="COL,...",
        help="release these identifier columns as random pseudonyms (PSN-...) instead of "
        "leaving them out; the same value gets the same pseudonym, nothing of the value is in it "
        "(drawn, never hashed). Pseudonymised data are still personal data",
    )
    p.add_argument(
        "--pseudonym-key",
        type=OUTPUT_FILE,
        metavar="FILE",
        help="also write the key (column, original, pseudonym) to FILE, a CSV of its own: the "
        "only way back to the identities, so keep it apart from the release",
    )
    p.add_argument(
        "--csv-sep",
        metavar="SEP",
        help="separator of a CSV output: one character such as ; or |, or 'tab' (default , ; "
        "a .tsv output: tab)",
    )
    p.add_argument(
        "--csv-decimal",
        metavar="MARK",
        choices=(".", ","),
        help="decimal mark of the numbers of a CSV output: . (default) or , (with --csv-sep ';')",
    )
    p.add_argument(
        "--csv-encoding",
        metavar="ENC",
        help="encoding of a CSV output: utf-8 (default), utf-8-sig (Excel), utf-16, cp1252 or "
        "latin-1; a cell it cannot hold is refused, naming its column and record",
    )
    p.add_argument(
        "--strata",
        action="append",
        metavar="COL,...",
        help="microaggregate each stratum of these columns on its own (each needs >= k records)",
    )
    p.add_argument(
        "--block-size",
        metavar="N|auto",
        help="split larger sets of records into spatially coherent blocks of at most N "
        "records (N >= 2k; e.g. 20000 for a million records) and microaggregate each block; "
        "auto: exact up to 100,000 records, blocks of 50,000 above",
    )
    p.add_argument(
        "--engine",
        default="local",
        metavar="local|dask",
        help="where blocks and strata run: this machine's cores (local, default) or a Dask "
        "cluster (dask, with --scheduler)",
    )
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://HOST:8786"
    )
    p.add_argument(
        "--workers",
        metavar="N",
        help="local processes for blocks and strata (default: one per core)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bar on stderr (shown on a terminal for runs longer than a few seconds)",
    )
    p.add_argument(
        "--list-methods", action="store_true", help="list the available methods and exit"
    )

    t = sub.add_parser(
        "dependency-tree",
        help="print the dependency matrix, best dependency tree and key attributes (AMA, 000 §3.2)",
        description="Compute the dependency matrix (entropy distance H(A|B) + H(B|A)) of the attributes of INPUT, "
        "its minimum spanning tree (the best dependency tree) and the key attributes that the "
        "ama method would microaggregate on (000_d23cf301593eeda4.txt §3.2). Columns whose values "
        "are all numbers are continuous (cut into N equal-frequency bins); others are categories.",
    )
    t.add_argument(
        "input",
        type=INPUT_FILE,
        metavar="INPUT",
        help="CSV, TSV, Excel, Parquet, SPSS (.sav) or Stata (.dta) file",
    )
    t.add_argument(
        "--attributes",
        action="append",
        metavar="COL,...",
        help="the attributes (quasi-identifiers), in the order that breaks ties (required)",
    )
    t.add_argument(
        "--bins",
        default=None,
        metavar="N",
        help="equal-frequency bins per continuous attribute, N >= 2 (default 10)",
    )
    t.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    t.add_argument(
        "--json", type=OUTPUT_FILE, metavar="OUT", help="also write the tree as JSON to OUT"
    )

    r = sub.add_parser(
        "suggest-roles",
        help="suggest a role and kind for every column, with the reason",
        description="Print microgui's conservative suggestion of a role (identifier, "
        "quasi-identifier, confidential, non-confidential) and kind (continuous, ordinal, "
        "nominal) for every column of INPUT, with a one-line reason, and the protect options "
        "that tag the columns so. Text and few-valued columns are quasi-identifier candidates; "
        "names, keys and near-unique text are identifiers; constant columns pass through. "
        "Review every line before a release.",
    )
    r.add_argument(
        "input",
        type=INPUT_FILE,
        metavar="INPUT",
        help="CSV, TSV, Excel, Parquet, SPSS (.sav) or Stata (.dta) file",
    )
    r.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    r.add_argument(
        "--json",
        type=OUTPUT_FILE,
        metavar="OUT",
        help='also write {"columns": [{"name", "role", "kind", "order", "reason"}, ...]} to OUT',
    )

    e = sub.add_parser(
        "evaluate",
        help="measure information loss and disclosure risk of a protected table",
        description="Compare PROTECTED with ORIGINAL (same records, same order) and print every "
        "utility and disclosure-risk measure that applies; risks are in percent.",
    )
    e.add_argument("original", type=INPUT_FILE, metavar="ORIGINAL", help="the original table")
    e.add_argument(
        "protected",
        type=INPUT_FILE,
        metavar="PROTECTED",
        help="the protected table, row for row (identifier columns may be absent)",
    )
    _add_role_options(e)
    e.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    e.add_argument(
        "--json",
        type=OUTPUT_FILE,
        metavar="OUT",
        help="also write the measures as a flat JSON object to OUT",
    )
    e.add_argument(
        "-k",
        default=None,
        metavar="K",
        help="the k the release was made for: adds CAVG = n/(classes·k) (004 §7)",
    )
    e.add_argument(
        "--hierarchy",
        action="append",
        type=INPUT_COLUMN_FILE,
        metavar="COL=FILE",
        help="generalization hierarchy of COL (as for protect): adds the generalization IL of "
        "004 §7; repeatable",
    )
    e.add_argument(
        "--score-weights",
        metavar="NAME=W,...",
        help="weights of the score (003 §3.1): il (IL in the score; DR gets 1-il) and id, dbrl, "
        "prl (interval disclosure, distance-based and probabilistic linkage in DR, summing to 1); "
        "default il=0.5,id=0.5,dbrl=0.25,prl=0.25",
    )
    e.add_argument(
        "--regression",
        action="append",
        metavar="Y~X1+X2",
        help="also fit this linear regression (OLS with intercept) on both tables and print the "
        "coefficients side by side; repeat for several models",
    )

    w = sub.add_parser(
        "sweep",
        help="run a grid of methods x k x parameters in parallel and measure every run",
        description="Protect INPUT with every method at every k (and every combination of the "
        "--param values a method declares), in parallel processes, measure each run as "
        "`microgui evaluate` does, and print a summary. A run that fails is recorded, not fatal.",
    )
    w.add_argument("input", type=INPUT_FILE, metavar="INPUT", help="the table to protect")
    _add_role_options(w)
    w.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    w.add_argument(
        "--methods",
        action="append",
        metavar="M1,M2,...",
        help="methods to run (see microgui protect --list-methods)",
    )
    w.add_argument("--k", action="append", metavar="K1,K2,...", help="values of k, e.g. 3,5,10")
    w.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="method parameter; repeat NAME (or give V1,V2) to try several values; it varies "
        "only the methods that declare it",
    )
    w.add_argument(
        "--hierarchy",
        action="append",
        type=INPUT_COLUMN_FILE,
        metavar="COL=FILE",
        help="generalization hierarchy of COL (as for protect), given to the runs of the methods "
        "that use hierarchies (mstk); the other methods run without it; repeatable",
    )
    w.add_argument("--round", metavar="source|N", help=_ROUND_HELP)
    w.add_argument("--seed", default=None, help="random seed of every run")
    w.add_argument(
        "--workers", default=None, metavar="N", help="processes to use (default: one per core)"
    )
    w.add_argument(
        "--json",
        type=OUTPUT_FILE,
        metavar="OUT",
        help="write one JSON object per run to OUT (a list)",
    )

    g = sub.add_parser(
        "gui", help="open the app (the default)", description="Open the microgui app."
    )
    g.add_argument("file", nargs="?", type=INPUT_FILE, metavar="FILE", help="table to open")
    g.add_argument("--demo", action="store_true", help="open the bundled demo data")
    g.add_argument(
        "--screenshot",
        type=OUTPUT_FILE,
        metavar="PNG",
        help="run the default method, save a PNG of the window and exit",
    )
    _readable_help(parser)
    return parser


def _readable_help(parser: argparse.ArgumentParser) -> None:
    """Paper numbers in help texts as authors and year ("003 §5.2" → "Domingo-Ferrer & Torra
    2005, §5.2"), for every option and subcommand (issue 15)."""
    from microgui.core.references import readable

    if parser.description:
        parser.description = readable(parser.description)
    for action in parser._actions:
        if action.help:
            action.help = readable(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the one-line help of each subcommand
                if choice.help:
                    choice.help = readable(choice.help)
            for sub in action.choices.values():
                _readable_help(sub)


def _read_input(path: Path, args: argparse.Namespace) -> Any:
    """``read_table`` with ``--sheet``; says on stderr which sheet of a workbook with several
    sheets was read when none was chosen (only the first is read)."""
    from microgui.core.io import EXCEL_EXTENSIONS, SHEETS_ATTR, read_table
    from microgui.core.progress import no_progress

    sheet = getattr(args, "sheet", None)
    if sheet is not None and path.suffix.lower() not in EXCEL_EXTENSIONS:
        raise _UsageError(
            f"--sheet is for Excel workbooks, and {path.name!r} is not one; drop --sheet"
        )
    # A long load (a big CSV or workbook) shows the run's progress bar on a terminal (issue 17).
    bar = TerminalProgress(sys.stderr) if _progress_bar_wanted(args) else None
    try:
        loaded = read_table(path, sheet=sheet, progress=bar if bar is not None else no_progress)
    finally:
        if bar is not None:
            bar.close()
    read, sheets = loaded.frame.attrs.get(SHEETS_ATTR, ("", ()))
    if sheet is None and len(sheets) > 1:
        print(
            f"note: {path.name} has {len(sheets)} sheets; read the first, {read!r} "
            "(choose another with --sheet NAME)",
            file=sys.stderr,
        )
    return loaded


_ROUND_HELP = (
    "round the aggregated continuous values to each column's own decimals in the input "
    "(source: integers stay integers) or to N decimals (0-10); the report gives the IL before "
    "rounding. Without it values are only cleaned of float noise (1565.4, not "
    "1565.4000000000008). The same as --param round=..."
)
_ROLES_HELP = (
    'a roles file (JSON: {"columns": {COL: {"role": ..., "kind": ..., "order": [...]}}}, '
    "as resources/demo_persons.roles.json) tagging every column, instead of --qi, --identifiers, "
    "--confidential, --ordinal, --nominal, --missing-as-category and --weight"
)
_WEIGHT_HELP = (
    "the survey (sampling) weight column: released unchanged; the risk measures use it to "
    "estimate population frequencies and individual risk (as sdcMicro's freqCalc/indivRisk), "
    "and --param weighted_means=yes aggregates by weighted means"
)
_WEIGHT_MEASURE_HELP = (
    "the survey (sampling) weight column: the risk measures use it to estimate population "
    "frequencies and individual risk (as sdcMicro's freqCalc/indivRisk)"
)
_MISSING_HELP = (
    "nominal or ordinal quasi-identifiers whose missing cells form a category of their own "
    "(released as empty cells; last in an ordinal order) instead of refusing the run; "
    "recorded in the report"
)


def _add_role_options(p: argparse.ArgumentParser) -> None:
    """--qi, --identifiers, --confidential, --ordinal, --nominal as ``protect`` reads them."""
    p.add_argument(
        "--qi",
        action="append",
        metavar="COL[,COL...]",
        help="quasi-identifier columns (continuous unless --ordinal/--nominal)",
    )
    p.add_argument("--identifiers", action="append", metavar="COL,...", help="identifier columns")
    p.add_argument(
        "--confidential", action="append", metavar="COL,...", help="confidential columns"
    )
    p.add_argument("--weight", metavar="COL", action=_Once, help=_WEIGHT_MEASURE_HELP)
    p.add_argument("--roles", type=INPUT_FILE, metavar="FILE", help=_ROLES_HELP)
    p.add_argument(
        "--ordinal",
        action="append",
        metavar="COL=V1<V2<...",
        help="ordinal quasi-identifier with its category order (lowest first); COL alone: numeric order",
    )
    p.add_argument(
        "--nominal", action="append", metavar="COL,...", help="nominal quasi-identifiers"
    )
    p.add_argument(
        "--missing-as-category",
        action="append",
        metavar="COL,...",
        help=_MISSING_HELP,
    )


def _parse_ordinal(values: Sequence[str] | None) -> dict[str, list[str] | None]:
    """--ordinal COL=V1<V2<...: ``\\<`` is a '<' inside a category, ``\\=`` a '=' inside the
    column name (``--ordinal 'score=\\<10<10-20<20+'``); the column name is matched as in
    :func:`_split`."""
    out: dict[str, list[str] | None] = {}
    for value in values or ():
        col, sep, order = value.replace("\\=", "\x00").partition("=")
        col = col.replace("\x00", "=")
        order = order.replace("\x00", "=")
        if not col.strip():
            raise _UsageError(f"--ordinal {value!r}: give COL=V1<V2<... (lowest category first)")
        if col in out:
            raise _UsageError(f"--ordinal gives column {col!r} twice; give one order")
        if not sep:
            out[col] = None
            continue
        cats = [c.replace("\x00", "<").strip() for c in order.replace("\\<", "\x00").split("<")]
        if any(c == "" for c in cats) or len(cats) < 2:
            raise _UsageError(
                f"--ordinal {value!r}: give at least two categories, lowest first, separated by '<'"
            )
        if len(set(cats)) != len(cats):
            raise _UsageError(f"--ordinal {value!r}: a category is listed twice")
        out[col] = cats
    return out


def _parse_params(values: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or ():
        name, sep, raw = value.partition("=")
        if not sep or not name.strip():
            raise _UsageError(f"--param {value!r}: give NAME=VALUE")
        out[name.strip()] = raw.strip()
    return out


def _parse_hierarchies(values: Sequence[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or ():
        col, sep, path = value.partition("=")
        if not sep or not col.strip() or not path.strip():
            raise _UsageError(f"--hierarchy {value!r}: give COL=FILE")
        if col.strip() in out:
            raise _UsageError(f"--hierarchy gives two files for column {col.strip()!r}")
        out[col.strip()] = path.strip()
    return out


class _UsageError(Exception):
    pass


@functools.cache
def _declared_paths() -> dict[str, tuple[tuple[str, PathOption], ...]]:
    """Per command, (dest, :class:`PathOption`) of every option and positional naming a file,
    read off the parser itself: the declaration is the ``type=`` of the option."""
    out: dict[str, tuple[tuple[str, PathOption], ...]] = {}
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = tuple(
                    (a.dest, a.type) for a in sub._actions if isinstance(a.type, PathOption)
                )
    return out


def command_inputs(args: argparse.Namespace) -> list[Path]:
    """Every file the parsed command reads, collected in this one place: the values of its
    options and positionals declared :data:`INPUT_FILE` or :data:`INPUT_COLUMN_FILE`, and the
    files a ``--project`` names (its table and hierarchy files). Every writer of the command
    refuses each of them as a target (by inode: links and other spellings included)."""
    found: list[str | Path] = []
    for dest, option in _declared_paths().get(str(args.command), ()):
        if option.reads:
            found += option.paths(getattr(args, dest, None))
    project = getattr(args, "project", None)
    if project:
        found += _project_files(project)
    return list(dict.fromkeys(Path(p) for p in found))


def command_outputs(args: argparse.Namespace, *, skip: Sequence[str] = ()) -> list[str]:
    """Every file the parsed command was asked to write (options declared
    :data:`OUTPUT_FILE`), as typed; ``skip``: dests left out (a partitioned run's -o folder)."""
    found: list[str] = []
    for dest, option in _declared_paths().get(str(args.command), ()):
        if not option.reads and dest not in skip:
            found += option.paths(getattr(args, dest, None))
    return found


def _project_files(path: str) -> list[Path]:
    """The files a project file names (none when it cannot be read: the command refuses it
    then, with its reason)."""
    from microgui.core.errors import MicroguiError
    from microgui.core.project_file import load_project

    try:
        project = load_project(path)
    except MicroguiError:
        return []
    return project.read_files(Path(path).resolve().parent)


def _check_outputs(args: argparse.Namespace, *, skip: Sequence[str] = ()) -> None:
    """The one check of a command's outputs, made before anything is read or computed and
    again before writing: no output is one of :func:`command_inputs` (by inode), no two
    outputs name one file, none is a folder, a special file or in a missing folder; the core's
    :func:`~microgui.core.io.check_write_targets` gives the one-line reason."""
    from microgui.core.io import check_write_targets

    check_write_targets(command_outputs(args, skip=skip), protect_from=command_inputs(args))


def _same_file(a: Path, b: Path) -> bool:
    """True when a and b name one file (hard links and symlinks included)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _list_methods() -> int:
    from microgui.core.methods import available_methods
    from microgui.core.references import readable

    for m in available_methods():
        kinds = ", ".join(sorted(k.value for k in m.kinds))
        print(f"{m.name:<20} {m.headline}")
        print(f"{'':<20} quasi-identifiers: {kinds}; source: {m.reference}")
        for prm in m.all_params:
            extra = f" ({'|'.join(prm.choices)})" if prm.choices else ""
            print(f"{'':<20} --param {prm.name}={prm.default}{extra}: {readable(prm.help)}")
    return 0


def _protect(args: argparse.Namespace) -> int:
    from microgui.core.dataset import Dataset
    from microgui.core.runs import parse_seed

    if args.list_methods:
        return _list_methods()
    if args.project is not None or args.input_option is not None or args.run_number is not None:
        return _protect_project(args)
    missing = [
        name
        for name, val in (
            ("INPUT", args.input),
            ("-o OUTPUT", args.output),
            ("--method", args.method),
            ("-k", args.k),
            ("--qi (or --roles FILE)", args.qi or args.roles),
        )
        if not val
    ]
    if missing:
        raise _UsageError(f"protect needs {', '.join(missing)} (see microgui protect --help)")
    if args.engine == "dask" and _partitioned_wanted(args):
        # issue 17: the table is read and written in partitions on the workers
        return _protect_partitioned(args)
    src, out = Path(args.input), Path(args.output)
    _parse_hierarchies(args.hierarchy)  # a malformed COL=FILE is refused first
    # Output targets are checked before anything is read or computed: never a file the command
    # reads (by inode), never a folder, a special file or a missing folder (issue 12).
    _check_outputs(args)
    if args.allow_unsafe is not None and not any(ch.isalnum() for ch in args.allow_unsafe):
        raise _UsageError(
            f"--allow-unsafe {args.allow_unsafe!r}: give the reason in words (it is recorded in "
            "the report), e.g. --allow-unsafe 'internal test file, not released'"
        )
    parse_seed(args.seed, "--seed")  # before any file is read
    csv_options = _csv_options(args)  # checked before any file is read too
    _parse_ordinal(args.ordinal)
    _run_params(args)
    loaded = _read_input(src, args)
    _check_release_size(args.output, len(loaded.frame), len(loaded.frame.columns))
    roles = roles_from_args(args, [str(c) for c in loaded.frame.columns])
    # the files read travel with the table: the release refuses each of them again
    dataset = Dataset(
        loaded.frame, roles, loaded.source, loaded.value_labels, inputs=_read_files(args)
    )
    spec = spec_from_args(args)
    return _run_and_export(args, loaded, dataset, spec, csv_options, out)


def _run_params(args: argparse.Namespace) -> dict[str, str]:
    params = _parse_params(args.param)
    if args.round is not None:
        if "round" in params:
            raise _UsageError("give the rounding once: --round or --param round=, not both")
        params["round"] = args.round.strip()
    return params


#: The options a roles file replaces (``--roles FILE``): refused beside it.
_ROLE_OPTIONS = (
    ("qi", "--qi"), ("identifiers", "--identifiers"), ("confidential", "--confidential"),
    ("ordinal", "--ordinal"), ("nominal", "--nominal"),
    ("missing_as_category", "--missing-as-category"), ("weight", "--weight"),
)  # fmt: skip


def _roles_file(args: argparse.Namespace, columns: Sequence[str]) -> Any:
    """The roles of ``--roles FILE``, or None when it is not given."""
    if getattr(args, "roles", None) is None:
        return None
    from microgui.core.roles import roles_from_file

    given = [flag for name, flag in _ROLE_OPTIONS if getattr(args, name, None)]
    if given:
        raise _UsageError(
            f"--roles {args.roles} tags every column; drop {', '.join(given)} (or drop --roles)"
        )
    return roles_from_file(args.roles, columns)


def roles_from_args(args: argparse.Namespace, columns: Sequence[str]) -> Any:
    """The :class:`~microgui.core.roles.RoleMap` that ``protect``'s role options give the
    table's ``columns`` (what the app's "Copy as command" text is checked against)."""
    from microgui.core.roles import roles_from_lists

    from_file = _roles_file(args, columns)
    if from_file is not None:
        return from_file
    return roles_from_lists(
        list(columns),
        qi=_split(args.qi),
        identifiers=_split(args.identifiers),
        confidential=_split(args.confidential),
        ordinal=_parse_ordinal(args.ordinal),
        nominal=_split(args.nominal),
        missing_as_category=_split(args.missing_as_category),
        weight=args.weight,
    )


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~microgui.core.runs.RunSpec` that ``protect``'s options give."""
    from microgui.core.runs import RunSpec, parse_seed

    return RunSpec.make(
        args.method,
        args.k,
        _run_params(args),
        parse_seed(args.seed, "--seed"),
        _parse_hierarchies(args.hierarchy),
        strata=_split(args.strata),
        block_size=args.block_size,
        engine=args.engine,
        scheduler=args.scheduler,
        workers=args.workers,
    )


#: ``protect`` options a project gives (roles and the run): refused beside --project.
_PROJECT_GIVES = (
    ("method", "--method"), ("k", "-k"), ("qi", "--qi"), ("identifiers", "--identifiers"),
    ("confidential", "--confidential"), ("ordinal", "--ordinal"), ("nominal", "--nominal"),
    ("missing_as_category", "--missing-as-category"), ("param", "--param"),
    ("round", "--round"), ("hierarchy", "--hierarchy"), ("seed", "--seed"),
    ("strata", "--strata"), ("block_size", "--block-size"), ("weight", "--weight"),
    ("roles", "--roles"),
)  # fmt: skip


def _read_files(args: argparse.Namespace) -> tuple[Path, ...]:
    """:func:`command_inputs` for ``Dataset.inputs``."""
    return tuple(command_inputs(args))


def _check_release_size(output: str, rows: int, columns: int) -> None:
    """An Excel output that cannot hold the table is refused before the run, not after it."""
    from microgui.core.release import EXCEL_MAX_COLUMNS, EXCEL_MAX_ROWS, release_format

    try:
        fmt = release_format(output)
    except Exception:  # noqa: BLE001 - refused again, with its message, by the export
        return
    if fmt == "excel" and (rows + 1 > EXCEL_MAX_ROWS or columns > EXCEL_MAX_COLUMNS):
        raise _UsageError(
            f"an Excel sheet holds at most {EXCEL_MAX_ROWS - 1:,} records and "
            f"{EXCEL_MAX_COLUMNS:,} columns; {Path(output).name} would need {rows:,} x "
            f"{columns:,}: write .csv or .parquet"
        )


def _protect_project(args: argparse.Namespace) -> int:
    """``protect --project FILE [--input NEW] [--run N] -o OUT``: the project's roles and run
    (issue 18, replay), headless. The table is the project's unless --input (or INPUT) names
    another with the same columns; engine, scheduler and workers are this machine's choice, as
    in the app (a project never carries them)."""
    from dataclasses import replace

    from microgui.core.dataset import Dataset
    from microgui.core.errors import InvalidInput
    from microgui.core.project_file import load_project

    if args.project is None:
        raise _UsageError("--input and --run replay a project: give --project FILE too")
    given = [flag for name, flag in _PROJECT_GIVES if getattr(args, name, None) is not None]
    if given:
        raise _UsageError(
            f"--project gives the roles and the run; drop {', '.join(given)} (or drop --project "
            "and give them all)"
        )
    if args.input is not None and args.input_option is not None:
        raise _UsageError("give the table once: INPUT or --input, not both")
    if not args.output:
        raise _UsageError("protect --project needs -o OUTPUT (see microgui protect --help)")
    project_path = Path(args.project)
    project = load_project(project_path)
    folder = project_path.resolve().parent
    table = args.input_option or args.input
    src = Path(table) if table is not None else project.resolved_data_path(folder)
    if src is None:
        raise _UsageError(f"{project_path.name} names no table; give the table with --input FILE")
    runs = project.resolved_runs(folder)
    if not runs:
        raise _UsageError(
            f"{project_path.name} holds no run; run a method in the app, save the project, "
            "then replay it"
        )
    number = len(runs)
    if args.run_number is not None:
        try:
            number = int(args.run_number)
        except ValueError:
            number = 0
        if not 1 <= number <= len(runs):
            raise _UsageError(
                f"--run {args.run_number!r}: {project_path.name} holds runs 1 to {len(runs)}"
            )
    spec = replace(
        runs[number - 1],
        engine=args.engine,
        scheduler=args.scheduler,
        workers=int(args.workers) if args.workers is not None else None,
    )
    _check_outputs(args)
    csv_options = _csv_options(args)
    loaded = _read_input(src, args)
    columns = [str(c) for c in loaded.frame.columns]
    known = list(project.roles)
    missing = [c for c in known if c not in columns]
    extra = [c for c in columns if c not in known]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks the project's column(s) {', '.join(map(repr, missing))}")
        if extra:
            parts.append(f"has column(s) the project does not know: {', '.join(map(repr, extra))}")
        raise InvalidInput(
            f"{src.name} {' and '.join(parts)}; open it in the app, tag its columns and save "
            "the project again"
        )
    _check_release_size(args.output, len(loaded.frame), len(loaded.frame.columns))
    dataset = Dataset(
        loaded.frame, project.roles, loaded.source, loaded.value_labels, inputs=_read_files(args)
    )
    print(
        f"replaying run {number} of {len(runs)} of {project_path.name}: {spec.method}, "
        f"k = {spec.k} on {src.name}",
        file=sys.stderr,
    )
    return _run_and_export(args, loaded, dataset, spec, csv_options, Path(args.output))


def _run_and_export(
    args: argparse.Namespace,
    loaded: Any,
    dataset: Any,
    spec: Any,
    csv_options: Any,
    out: Path,
) -> int:
    """The run and the release of ``protect`` (also of ``protect --project``)."""
    from microgui.core.export import export_run
    from microgui.core.methods.jit_cache import on_first_compile
    from microgui.core.progress import no_progress
    from microgui.core.runs import information_loss_text, run_protection

    bar = TerminalProgress(sys.stderr) if _progress_bar_wanted(args) else None

    def notice(kernel: str) -> None:
        if bar is not None:
            bar.break_line()
        _compile_notice(kernel)

    stop = on_first_compile(notice)
    try:
        result = run_protection(dataset, spec, bar if bar is not None else no_progress)
    finally:
        stop()
        if bar is not None:
            bar.close()
    if args.engine == "dask":
        print(
            f"note: -o {args.output!r} names one file, so the table was read here and only its "
            "blocks ran on the cluster; give an output folder (no extension) to read, protect "
            "and write in partitions on the workers",
            file=sys.stderr,
        )
    report = export_run(
        dataset,
        result,
        args.output,  # as typed: a trailing "/" names a folder
        args.report,
        group_column=args.group_column,
        override=args.allow_unsafe,
        keep_formula_cells=args.keep_formula_cells,
        csv_options=csv_options,
        pseudonymize=_split(args.pseudonymize),
        key_path=args.pseudonym_key,
        extra_reports=_release_reports(args),
    )
    print(
        f"{report['method']}: k={report['k']}, {report['n_records']} records in {report['n_groups']} groups "
        f"(sizes {report['min_group_size']}-{report['max_group_size']}), {information_loss_text(report)}, "
        f"k-anonymity {report['k_anonymity']}, {report['seconds']:.2f} s -> {out}",
        file=sys.stderr,
    )
    if args.roles is None and args.project is None:  # else every column was tagged on purpose
        _note_untagged(dataset, loaded.roles)  # after the release: a user error stays one line
    if report.get("invented_combinations"):  # only independent aggregation can invent them
        how = report["parameters"].get("categorical_aggregate")
        print(
            f"  invented categorical combinations: {report['invented_combinations']} of "
            f"{report['n_groups']} groups" + (f" (categorical_aggregate={how})" if how else ""),
            file=sys.stderr,
        )
    scale = report.get("scale")
    if scale:
        print(
            f"  {scale['n_strata']} strata, {scale['n_blocks']} blocks of "
            f"{scale['block_sizes']['min']}-{scale['block_sizes']['max']} records, "
            f"engine {scale['engine']}",
            file=sys.stderr,
        )
    return 0


def _release_reports(args: argparse.Namespace) -> list[tuple[Any, Any]]:
    """``--report-html`` and ``--report-pdf``: (path, maker) for ``export_run``
    (:func:`~microgui.core.release_report.release_report_makers`; the PDF printed by Qt)."""
    if not (args.report_html or args.report_pdf):
        return []
    from microgui.core.release_report import release_report_makers

    printer: Any = None
    if args.report_pdf:
        from microgui.qt.report_pdf import headless_printer

        printer = headless_printer()  # Qt started before any file is written
    return release_report_makers(args.report_html, args.report_pdf, printer)


def _csv_options(args: argparse.Namespace) -> Any:
    """``--csv-sep/--csv-decimal/--csv-encoding`` as checked
    :class:`~microgui.core.release.CsvOptions` (None when none is given); refused with a
    non-CSV output."""
    from microgui.core.errors import ExportRefused
    from microgui.core.release import CsvOptions, release_format

    given = [getattr(args, n, None) for n in ("csv_sep", "csv_decimal", "csv_encoding")]
    if all(v is None for v in given):
        return None
    try:
        options = CsvOptions.make(*given)
        fmt = release_format(args.output)
    except ExportRefused as exc:
        raise _UsageError(str(exc)) from exc
    if fmt != "csv":
        raise _UsageError(
            f"--csv-sep/--csv-decimal/--csv-encoding are for a CSV output, and {args.output!r} "
            f"is written as {fmt}; drop them or name the output .csv"
        )
    return options


#: Output names that are one file: with --engine dask they keep the single-file release of
#: before issue 17 (the table loaded here, the blocks run on the cluster).
_FILE_OUTPUT_SUFFIXES = (
    ".csv",
    ".tsv",
    ".txt",
    ".parquet",
    ".pq",
    ".xlsx",
    ".xls",
    ".json",
    ".sav",
    ".zsav",
    ".dta",
)


def _partitioned_wanted(args: argparse.Namespace) -> bool:
    """``protect --engine dask``: partitions on the workers (a folder of part files out) when
    the input is a folder or OUTPUT names a folder; a single output file keeps the contract of
    before issue 17 (the table read here, its blocks and strata run on the cluster, one file
    written), and the run ends with a note saying how to get the partitioned run."""
    if Path(args.input).is_dir():
        return True
    out = Path(args.output)
    return out.is_dir() or out.suffix.lower() not in _FILE_OUTPUT_SUFFIXES


def _protect_partitioned(args: argparse.Namespace) -> int:
    """``protect --engine dask``: INPUT read in partitions on the workers, OUTPUT written as a
    folder of part files (:mod:`microgui.core.distributed`); the table never comes here."""
    from microgui.core.distributed import protect_partitioned
    from microgui.core.progress import no_progress
    from microgui.core.runs import RunSpec, information_loss_text, parse_seed

    if args.sheet is not None:
        raise _UsageError(
            "--sheet is for Excel workbooks, which --engine dask does not read; save the sheet "
            "as Parquet or CSV, or run with --engine local"
        )
    unsupported = [
        flag
        for name, flag in (
            ("pseudonymize", "--pseudonymize"),
            ("pseudonym_key", "--pseudonym-key"),
            ("report_html", "--report-html"),
            ("report_pdf", "--report-pdf"),
            ("weight", "--weight"),
            ("roles", "--roles"),
            ("csv_sep", "--csv-sep"),
            ("csv_decimal", "--csv-decimal"),
            ("csv_encoding", "--csv-encoding"),
            ("project", "--project"),
        )  # fmt: skip
        if getattr(args, name, None) is not None
    ]
    if unsupported:
        raise _UsageError(
            f"{', '.join(unsupported)}: not available when the table is read and written in "
            "partitions on the workers (an output folder); name one output file, or drop them"
        )
    if args.allow_unsafe is not None and not any(ch.isalnum() for ch in args.allow_unsafe):
        raise _UsageError(
            f"--allow-unsafe {args.allow_unsafe!r}: give the reason in words (it is recorded in "
            "the report), e.g. --allow-unsafe 'internal test file, not released'"
        )
    _parse_hierarchies(args.hierarchy)
    _check_outputs(args, skip=("output",))  # -o names a folder here, checked below
    from microgui.core.distributed import check_output_folder

    for path in command_inputs(args):  # no file the run reads in (or as) the output folder
        check_output_folder(args.output, path)
    seed = parse_seed(args.seed, "--seed")
    params = _parse_params(args.param)
    if args.round is not None:
        if "round" in params:
            raise _UsageError("give the rounding once: --round or --param round=, not both")
        params["round"] = args.round.strip()
    spec = RunSpec.make(
        args.method,
        args.k,
        params,
        seed,
        _parse_hierarchies(args.hierarchy),
        strata=_split(args.strata),
        block_size=args.block_size,
        engine=args.engine,
        scheduler=args.scheduler,
        workers=args.workers,
    )
    bar = TerminalProgress(sys.stderr) if _progress_bar_wanted(args) else None
    try:
        report = protect_partitioned(
            args.input,
            args.output,
            spec,
            qi=_split(args.qi),
            identifiers=_split(args.identifiers),
            confidential=_split(args.confidential),
            ordinal=_parse_ordinal(args.ordinal),
            nominal=_split(args.nominal),
            missing_as_category=_split(args.missing_as_category),
            group_column=args.group_column,
            report_path=args.report,
            override=args.allow_unsafe,
            keep_formula_cells=args.keep_formula_cells,
            progress=bar if bar is not None else no_progress,
        )
    finally:
        if bar is not None:
            bar.close()
    scale = report["scale"]
    print(
        f"{report['method']}: k={report['k']}, {report['n_records']} records in {report['n_groups']} groups "
        f"(sizes {report['min_group_size']}-{report['max_group_size']}), {information_loss_text(report)}, "
        f"k-anonymity {report['k_anonymity']}, {report['seconds']:.2f} s -> {args.output} "
        f"({len(scale['output']['parts'])} {scale['output']['format']} parts)",
        file=sys.stderr,
    )
    print(
        f"  {scale['n_blocks']} blocks of {scale['block_sizes']['min']}-"
        f"{scale['block_sizes']['max']} records (split on the {scale['split']}), "
        f"engine {scale['engine']}, {scale['workers']} workers",
        file=sys.stderr,
    )
    return 0


def _dependency_tree(args: argparse.Namespace) -> int:
    from microgui.core.dependency import DEFAULT_BINS, dependency_tree
    from microgui.core.io import write_json_atomic

    bins = DEFAULT_BINS
    if args.bins is not None:
        try:
            bins = int(str(args.bins).strip())
        except ValueError:
            raise _UsageError(f"--bins {args.bins!r} is not a whole number; give N >= 2") from None
        if bins < 2:
            raise _UsageError(f"--bins {bins}: give at least 2 bins")
    if not args.attributes:
        raise _UsageError("dependency-tree needs --attributes COL,COL,... (see --help)")
    attributes = _split(args.attributes)
    if not attributes:
        raise _UsageError("--attributes names no column; give COL,COL,...")
    src = Path(args.input)
    _check_outputs(args)
    loaded = _read_input(src, args)
    tree = dependency_tree(loaded.frame, attributes, bins=bins)
    names = list(tree.attributes)
    width = max(max(len(a) for a in names), 7)
    print(
        "dependency matrix: entropy distance H(A|B) + H(B|A) (the paper's MI(A,B), not mutual "
        f"information), bits ({len(loaded.frame)} records, {bins} bins):"
    )
    print(" " * width + "".join(f"  {a:>{width}}" for a in names))
    for a, row in zip(names, tree.matrix, strict=True):
        print(f"{a:<{width}}" + "".join(f"  {v:>{width}.4f}" for v in row))
    print("best dependency tree (Kruskal, in the order the edges were taken):")
    if not tree.edges:
        print("  (no edge)")
    for a, b, w in tree.edges:
        print(f"  {a} - {b}  {w:.4f}")
    print("degrees: " + ", ".join(f"{a} {d}" for a, d in tree.degrees.items()))
    if tree.constant_attributes:
        print("constant (left out of the tree): " + ", ".join(tree.constant_attributes))
    print("key attributes: " + (", ".join(tree.key_attributes) or "none"))
    if args.json:
        write_json_atomic(tree.to_json(), args.json, protect_from=command_inputs(args))
    return 0


def _suggest_roles(args: argparse.Namespace) -> int:
    """``microgui suggest-roles``: the table of :func:`microgui.core.dataset.explain_roles`."""
    from microgui.core.dataset import explain_roles
    from microgui.core.io import write_json_atomic

    src = Path(args.input)
    _check_outputs(args)
    loaded = _read_input(src, args)
    suggestions = explain_roles(loaded.frame)
    rows = [[s.name, s.spec.role.value, s.spec.kind.value, s.reason] for s in suggestions]
    print(text_table(["column", "role", "kind", "reason"], rows, set()))
    print(_suggested_options(suggestions))
    if args.json:
        write_json_atomic(
            {"columns": [s.to_json() for s in suggestions]},
            args.json,
            protect_from=command_inputs(args),
        )
    return 0


def _note_untagged(dataset: Dataset, suggested: RoleMap) -> None:
    """A note on stderr naming the columns no option tags (they pass through unchanged, the
    documented default) that the suggestion made when the table was read
    (:func:`microgui.core.dataset.explain_roles`) calls identifiers or quasi-identifiers:
    released verbatim, they could single people out."""
    from microgui.core.roles import AttributeRole

    risky = [
        (name, suggested[name].role)
        for name in dataset.roles.columns_with(AttributeRole.NON_CONFIDENTIAL)
        if name in suggested
        and suggested[name].role in (AttributeRole.IDENTIFIER, AttributeRole.QUASI_IDENTIFIER)
    ]
    if not risky:
        return
    risky.sort(key=lambda item: item[1] is not AttributeRole.IDENTIFIER)  # identifiers first
    shown = ", ".join(
        f"{name!r} ({'identifier' if role is AttributeRole.IDENTIFIER else 'quasi-identifier'})"
        for name, role in risky[:8]
    )
    more = f" and {len(risky) - 8} more" if len(risky) > 8 else ""
    print(
        f"microgui: note: {len(risky)} column(s) named by no option pass through unchanged "
        f"though they look identifying: {shown}{more}; tag them (--identifiers, --qi, "
        "--confidential), or every column in a roles file (--roles FILE), or see "
        "`microgui suggest-roles`",
        file=sys.stderr,
    )


def _suggested_options(suggestions: Sequence[Any]) -> str:
    """The ``protect`` role options that tag the columns as suggested (shell-quoted)."""
    import shlex

    from microgui.core.roles import AttributeKind, AttributeRole

    def names(cols: list[str]) -> str:
        return shlex.quote(",".join(c.replace(",", "\\,") for c in cols))

    by_role: dict[AttributeRole, list[str]] = {}
    for s in suggestions:
        by_role.setdefault(s.spec.role, []).append(s.name)
    parts: list[str] = []
    qi = by_role.get(AttributeRole.QUASI_IDENTIFIER, [])
    if qi:
        parts.append(f"--qi {names(qi)}")
    nominal = [
        s.name
        for s in suggestions
        if s.spec.role is AttributeRole.QUASI_IDENTIFIER and s.spec.kind is AttributeKind.NOMINAL
    ]
    if nominal:
        parts.append(f"--nominal {names(nominal)}")
    for s in suggestions:
        if s.spec.role is AttributeRole.QUASI_IDENTIFIER and s.spec.kind is AttributeKind.ORDINAL:
            col = s.name.replace("=", "\\=")
            order = "<".join(c.replace("<", "\\<") for c in s.spec.order or ())
            parts.append(f"--ordinal {shlex.quote(col + ('=' + order if order else ''))}")
    blanks = [
        s.name
        for s in suggestions
        if s.spec.role is AttributeRole.QUASI_IDENTIFIER and s.spec.missing_is_category
    ]
    if blanks:
        parts.append(f"--missing-as-category {names(blanks)}")
    for role, option in (
        (AttributeRole.IDENTIFIER, "--identifiers"),
        (AttributeRole.CONFIDENTIAL, "--confidential"),
    ):
        if by_role.get(role):
            parts.append(f"{option} {names(by_role[role])}")
    if not parts:
        return "no column is suggested as a quasi-identifier"
    return "as protect options: " + " ".join(parts)


def _roles_of(args: argparse.Namespace, columns: Sequence[object]) -> RoleMap:
    """The RoleMap of the role options (or ``--roles``), built exactly as ``protect`` builds
    it (:func:`roles_from_args`)."""
    return cast("RoleMap", roles_from_args(args, [str(c) for c in columns]))


def _measure_catalog() -> dict[str, tuple[str, str, str, str]]:
    """``evaluate.MEASURES`` as (label, unit, direction, group) by key."""
    from microgui.core.metrics.evaluate import readable_measures

    return readable_measures()


def _number_text(value: float | int | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or isinstance(value, int):
        return str(int(value))
    return f"{0.0 if abs(value) < 1e-12 else value:.4f}"  # never -0.0000 for float noise


def _print_by_attribute(by_attribute: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Print ``information_loss_by_attribute`` as a table; return it JSON-ready."""
    from microgui.core.io import json_number

    print("\ninformation loss by quasi-identifier (SSE/SST % in the distance of IL, all QIs)")
    rows = []
    out: dict[str, dict[str, Any]] = {}
    for col, values in by_attribute.items():
        out[str(col)] = {
            k: v if isinstance(v, str | bool) or v is None else json_number(v)
            for k, v in values.items()
        }
        rows.append(
            (
                str(col),
                str(values.get("kind", ""))
                + (" (generalized)" if values.get("generalized") else ""),
                *(
                    _number_text(json_number(values.get(k)))
                    for k in ("information_loss", "changed_percent", "dist", "ctbil", "ebil")
                ),
            )
        )
    header = ("column", "kind", "SSE/SST %", "changed %", "Dist", "CTBIL'", "EBIL")
    print(text_table(header, rows, set(range(2, 7))))
    return out


def _evaluate(args: argparse.Namespace) -> int:
    from microgui.core.dataset import Dataset
    from microgui.core.io import json_number, write_json_atomic

    if not args.qi and not args.roles:
        raise _UsageError(
            "evaluate needs --qi COL,... or --roles FILE (see microgui evaluate --help)"
        )
    original, protected = Path(args.original), Path(args.protected)
    _parse_hierarchies(args.hierarchy)  # a malformed COL=FILE is refused first
    _check_outputs(args)
    _parse_ordinal(args.ordinal)  # malformed options fail before any file is read
    from microgui.core.metrics.evaluate import parse_score_weights

    weights = parse_score_weights(args.score_weights) if args.score_weights else None
    k = None
    if args.k is not None:
        try:
            k = int(args.k)
        except ValueError:
            raise _UsageError(f"-k {args.k!r} is not a whole number") from None
        if k < 1:
            raise _UsageError(f"-k {k} must be at least 1")
    hierarchy_files = _parse_hierarchies(args.hierarchy)
    loaded = _read_input(original, args)
    roles = _roles_of(args, list(loaded.frame.columns))
    other = _read_input(protected, args).frame
    other.columns = [str(c) for c in other.columns]
    if len(other) != len(loaded.frame):
        raise _UsageError(
            f"ORIGINAL {original.name} has {len(loaded.frame)} records but PROTECTED "
            f"{protected.name} has {len(other)}; they must match row for row"
        )
    needed = roles.quasi_identifiers + roles.confidential
    absent = [c for c in needed if c not in other.columns]
    if absent:
        raise _UsageError(
            f"PROTECTED {protected.name} has no column {absent[0]!r} (a quasi-identifier or "
            f"confidential column of ORIGINAL {original.name})"
        )
    dataset = Dataset(loaded.frame, roles, loaded.source, loaded.value_labels)
    from microgui.core.hierarchy import load_hierarchy
    from microgui.core.metrics.evaluate import evaluate
    from microgui.core.roles import resolve_column

    hierarchy_files = {
        resolve_column(col, list(loaded.frame.columns), "--hierarchy"): path
        for col, path in hierarchy_files.items()
    }
    for col in hierarchy_files:
        if col not in roles.quasi_identifiers:
            raise _UsageError(f"--hierarchy names {col!r}, which is not a quasi-identifier (--qi)")
    hierarchies = {col: load_hierarchy(path) for col, path in hierarchy_files.items()}
    result = evaluate(dataset, other, score_weights=weights, k=k, hierarchies=hierarchies)
    by_attribute = result.pop("information_loss_by_attribute", None)
    measures: dict[str, Any] = {str(key): json_number(v) for key, v in result.items()}
    catalog = _measure_catalog()
    rows = []
    for key, value in measures.items():
        if value is None:
            continue
        label, unit = (catalog[key][0], catalog[key][1]) if key in catalog else (key, "")
        rows.append((label, _number_text(value), unit, key))
    print(
        f"{protected.name} against {original.name}: {len(other)} records, "
        f"quasi-identifiers {', '.join(roles.quasi_identifiers)}"
    )
    print(text_table(("measure", "value", "unit", "key"), rows, {1}))
    if isinstance(by_attribute, dict):
        measures["information_loss_by_attribute"] = _print_by_attribute(by_attribute)
    measures.update(_print_correlations_and_regressions(args, dataset, other))
    if args.json:
        write_json_atomic(measures, args.json, protect_from=command_inputs(args))
    return 0


def _parse_model(text: str, columns: Sequence[str]) -> tuple[str, list[str]]:
    if text.count("~") != 1:
        raise _UsageError(f"--regression {text!r}: write it as Y~X1+X2")
    left, right = (part.strip() for part in text.split("~"))
    xs = [x.strip() for x in right.split("+") if x.strip()]
    if not left or not xs:
        raise _UsageError(f"--regression {text!r}: write it as Y~X1+X2")
    for name in (left, *xs):
        if name not in columns:
            raise _UsageError(f"--regression {text!r}: there is no column {name!r}")
    return left, xs


def _print_correlations_and_regressions(
    args: argparse.Namespace, dataset: Dataset, other: pd.DataFrame
) -> dict[str, float | None]:
    """Correlations (:func:`microgui.core.metrics.association.correlations`: the continuous
    quasi-identifiers and the confidential columns, on the records complete in both tables) and
    the --regression models, original and protected side by side (what statisticians ask
    first); returns flat JSON keys."""
    import pandas as pd

    from microgui.core.errors import InvalidParameter
    from microgui.core.io import json_number
    from microgui.core.metrics.association import correlations, fit_regression

    out: dict[str, float | None] = {}
    found = correlations(dataset.frame, other, dataset.roles)
    if not found.table.empty:
        print("\ncorrelations of the continuous quasi-identifiers and confidential columns")
        print(
            text_table(
                ("pair", "original", "protected", "difference"),
                [
                    (
                        f"{r.column_a} ~ {r.column_b}",
                        f"{r.original:.4f}",
                        f"{r.protected:.4f}",
                        f"{r.difference:+.4f}",
                    )
                    for r in found.table.itertuples()
                ],
                {1, 2, 3},
            )  # fmt: skip
        )
        if found.dropped_rows:
            print(f"({found.dropped_rows:,} record(s) with a missing value left out)")
    for column, why in found.skipped.items():
        print(f"(correlations: {column!r} left out: {why})")
    worst: float | None = None
    for text in args.regression or []:
        y, xs = _parse_model(text, [str(c) for c in dataset.frame.columns])
        try:
            coef = fit_regression(dataset.frame, other, y, xs).table
        except InvalidParameter as exc:
            raise _UsageError(f"--regression {text!r}: {exc}") from None
        print(f"\nregression {y} ~ {' + '.join(xs)} (OLS with intercept)")
        print(
            text_table(
                ("term", "original", "protected", "difference", "relative"),
                [
                    (
                        str(term),
                        f"{r.original:.6g}",
                        f"{r.protected:.6g}",
                        f"{r.difference:+.6g}",
                        "" if pd.isna(r.relative_difference) else f"{r.relative_difference:+.2%}",
                    )
                    for term, r in coef.iterrows()
                ],
                {1, 2, 3, 4},
            )  # fmt: skip
        )
        for term, r in coef.iterrows():
            out[f"regression {y}~{'+'.join(xs)} {term} original"] = json_number(r.original)
            out[f"regression {y}~{'+'.join(xs)} {term} protected"] = json_number(r.protected)
        rel = coef["relative_difference"].abs().max()
        if pd.notna(rel):
            worst = float(rel) if worst is None else max(worst, float(rel))
    if args.regression:
        out["regression_max_relative_change"] = json_number(
            None if worst is None else 100.0 * worst
        )
    return out


def _parse_list(values: Sequence[str] | None, option: str) -> list[str]:
    items = [item.strip() for item in _split(values)]  # method names and numbers, not columns
    if not items:
        raise _UsageError(f"sweep needs {option} (see microgui sweep --help)")
    return items


def _sweep(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from microgui.core.dataset import Dataset
    from microgui.core.io import write_json_atomic
    from microgui.core.runs import parse_seed, validate_k
    from microgui.core.sweep import (
        SweepPoint,
        SweepSpec,
        parse_k_list,
        parse_param_grid,
        run_sweep,
    )

    if not args.qi and not args.roles:
        raise _UsageError("sweep needs --qi COL,... or --roles FILE (see microgui sweep --help)")
    methods = _parse_list(args.methods, "--methods M1,M2,...")
    _parse_list(args.k, "--k K1,K2,...")
    ks = parse_k_list(args.k)
    grid = parse_param_grid(args.param, "--param")
    if args.round is not None:
        if "round" in grid:
            raise _UsageError("give the rounding once: --round or --param round=, not both")
        grid["round"] = [args.round.strip()]
    seed = parse_seed(args.seed, "--seed")  # before any file is read
    workers = None
    if args.workers is not None:
        try:
            workers = int(str(args.workers).strip())
        except ValueError:
            raise _UsageError(f"--workers {args.workers!r} is not a whole number") from None
        if workers < 1:
            raise _UsageError(f"--workers {workers}: give at least 1")
    src = Path(args.input)
    # absolute: the runs read them in worker processes, whatever their folder
    hierarchy_files = {c: os.path.abspath(p) for c, p in _parse_hierarchies(args.hierarchy).items()}
    _check_outputs(args)  # never a file the sweep reads (by inode), as for protect
    _parse_ordinal(args.ordinal)
    spec = SweepSpec.make(methods, ks, grid, seed, hierarchy_files)
    specs = spec.run_specs()  # unknown methods, parameters and values fail before reading
    loaded = _read_input(src, args)
    roles = _roles_of(args, list(loaded.frame.columns))
    dataset = Dataset(loaded.frame, roles, loaded.source, loaded.value_labels)
    for k in spec.ks:
        validate_k(k, dataset.n_records)
    if hierarchy_files:  # bad files and values missing from them: one message, not one per run
        checked = _checked_hierarchies(dataset, hierarchy_files)
        spec = replace(spec, hierarchies=tuple(sorted(checked.items())))
        specs = spec.run_specs()
    _check_outputs(args)  # again after reading: the folder may have gone meanwhile
    total = len(specs)

    def announce(point: SweepPoint) -> None:
        what = "failed" if point.report is None else "done"
        print(
            f"  {what}: {point.spec.method} k={point.spec.k} ({point.seconds:.2f} s)",
            file=sys.stderr,
            flush=True,
        )

    print(f"sweep: {total} runs on {src.name}", file=sys.stderr, flush=True)
    points = run_sweep(dataset, specs, workers=workers, on_result=announce)
    try:
        catalog = _measure_catalog()
    except ImportError:
        catalog = {}
    keys = list(dict.fromkeys([*catalog, *(k for p in points for k in p.measures)]))
    records = []
    for p in points:
        record: dict[str, object] = {
            "method": p.spec.method,
            "k": p.spec.k,
            "parameters": dict(p.report["parameters"]) if p.report else p.spec.param_dict,
            "seed": p.report["seed"] if p.report else p.spec.seed,
            "hierarchies": dict(p.spec.hierarchies),
        }
        record.update({key: p.measures.get(key) for key in keys})
        for entry in ("information_loss_by_attribute", "missing_as_category", "rounding"):
            # what the run report says of the run (as protect --report), when it says it
            if p.report and p.report.get(entry) is not None:
                record[entry] = p.report[entry]
        record["seconds"] = round(p.seconds, 4)
        record["measure_seconds"] = round(p.measure_seconds, 4)
        record["error"] = p.error
        records.append(record)
    shown = [
        k
        for k in (
            "information_loss_all_qi",
            "information_loss",
            "il_lower_bound_best",
            "il",
            "record_linkage",
            "interval_disclosure",
            "reidentification_risk_max",
            "k_anonymity",
        )
        if k in keys
    ]
    rows = []
    for p, record in zip(points, records, strict=True):
        params = ",".join(f"{n}={v}" for n, v in p.spec.params)
        rows.append(
            (
                p.spec.method,
                str(p.spec.k),
                params,
                *(_number_text(record[k]) for k in shown),  # type: ignore[arg-type]
                f"{p.seconds:.2f}",
                p.error or "",
            )
        )
    header = ("method", "k", "parameters", *shown, "seconds", "error")
    print(text_table(header, rows, {1, *range(3, 4 + len(shown))}))
    failed = sum(p.error is not None for p in points)
    if failed:
        print(
            f"{failed} of {total} runs failed or were not measured (see 'error')", file=sys.stderr
        )
    if args.json:
        write_json_atomic(records, args.json, protect_from=command_inputs(args))
    return 0


def _checked_hierarchies(dataset: Dataset, files: dict[str, str]) -> dict[str, str]:
    """``--hierarchy`` files by resolved column, checked as a run of ``protect`` checks them:
    each names a quasi-identifier, reads as a hierarchy and holds every value of its column."""
    from microgui.core.hierarchy import load_hierarchy
    from microgui.core.roles import resolve_column

    out: dict[str, str] = {}
    for name, path in files.items():
        column = resolve_column(name, list(dataset.frame.columns), "--hierarchy")
        if column not in dataset.roles.quasi_identifiers:
            raise _UsageError(
                f"--hierarchy names {column!r}, which is not a quasi-identifier (--qi), so its "
                "hierarchy would be ignored; tag the column a quasi-identifier or drop its hierarchy"
            )
        load_hierarchy(path).encode(dataset.frame[column], column)
        out[column] = path
    return out


def _compile_notice(_kernel: str) -> None:
    """One line on stderr when a run compiles kernels (a first run after installing)."""
    print(
        "microgui: preparing the method's compiled kernels, once after installing or updating "
        "(up to a minute); later runs start at once",
        file=sys.stderr,
        flush=True,
    )


#: A run shows its progress bar once it has lasted this long (seconds).
PROGRESS_AFTER_S = 2.0


class TerminalProgress:
    """A progress function drawing one plain-text progress bar line on a terminal (stderr), for
    runs longer than ``after_s`` (default :data:`PROGRESS_AFTER_S`): rewritten in place with ``\\r`` (at most ten times a second),
    ended with a newline by :meth:`close`. Thread-safe."""

    def __init__(
        self,
        stream: Any,
        after_s: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        import time

        self.stream = stream
        self.after_s = PROGRESS_AFTER_S if after_s is None else after_s
        self._clock = clock or time.monotonic
        self._started = self._clock()
        self._state = (0.0, "")
        self._line = ""  # what the current terminal line shows
        self._drawn_at = float("-inf")
        self._lock = threading.Lock()
        #: a bar was drawn (and so a newline ends it)
        self.drawn = False

    def __call__(self, fraction: float, status: str = "", /) -> None:
        with self._lock:
            self._state = (min(max(float(fraction), 0.0), 1.0), status)
            now = self._clock()
            if now - self._started >= self.after_s and now - self._drawn_at >= 0.1:
                self._draw(now)

    def _draw(self, now: float) -> None:
        import shutil

        fraction, status = self._state
        filled = int(fraction * 24)
        seconds = int(now - self._started)
        text = f"[{'#' * filled}{'-' * (24 - filled)}] {fraction:4.0%}  {status}  {seconds} s"
        text = "".join(ch if ch.isprintable() else " " for ch in text)
        text = text[: max(shutil.get_terminal_size((80, 24)).columns - 1, 20)]
        if text == self._line:
            return
        padding = " " * max(len(self._line) - len(text), 0)  # wipe a longer previous line
        self.stream.write(f"\r{text}{padding}")
        self.stream.flush()
        self._line, self._drawn_at, self.drawn = text, now, True

    def break_line(self) -> None:
        """End the bar's line so that another message starts on its own line (the bar goes on
        below it)."""
        with self._lock:
            if self._line:
                self.stream.write("\n")
                self.stream.flush()
                self._line = ""

    def close(self) -> None:
        """Draw the last state and end the line (nothing when no bar was drawn)."""
        with self._lock:
            if not self.drawn:
                return
            self._draw(self._clock())
            if self._line:
                self.stream.write("\n")
                self.stream.flush()
                self._line = ""


def _progress_bar_wanted(args: argparse.Namespace) -> bool:
    """A progress bar on stderr: not with ``--quiet``, and only when stderr is a terminal
    (never in a pipe, a log file or a test's captured output)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return not getattr(args, "quiet", False) and callable(isatty) and bool(isatty())


def _unknown_command(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"unknown command {word!r}{hint}; the commands are {', '.join(COMMANDS)}; a table to "
        "open in the app must be an existing file"
    )


def _no_display() -> str | None:
    """Why the app cannot open a window here (Linux without X11 or Wayland), or None."""
    if sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM"):
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            return (
                "no display to open the app on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
                "run it in a desktop session, use the command line (microgui protect --help), "
                "or set QT_QPA_PLATFORM=offscreen for a screenshot"
            )
    return None


def _gui(args: argparse.Namespace) -> int:
    if args.screenshot:  # never over the table opened
        _check_outputs(args)
    problem = _no_display()
    if problem is not None:
        print(f"microgui: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from microgui.qt.app import run_app

    return run_app(file=args.file, demo=bool(args.demo), screenshot=args.screenshot)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``microgui`` console script; returns the exit code."""
    from microgui.core.errors import MicroguiError

    logging.basicConfig(level=logging.WARNING, format="microgui: %(message)s")
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        if not Path(argv[0]).exists():  # `microgui evalute ...`: a typo, not a table to open
            print(f"microgui: error: {_unknown_command(argv[0])}", file=sys.stderr)
            return EXIT_USAGE
        argv = ["gui", *argv]  # `microgui data.csv` opens the table in the app
    if not argv:
        argv = ["gui"]
    elif argv[0] not in ("protect", "gui", "--version", "-h", "--help") and argv[0].startswith("-"):
        argv = ["gui", *argv]  # `microgui --demo` opens the app on the demo
    args = parser.parse_args(argv)
    previous = _catch_sigterm() if args.command != "gui" else None
    # The console script (no argv given): the process ends when this returns.
    exits_next = argv_given is None and args.command != "gui"
    try:
        if args.command == "protect":
            return _protect(args)
        if args.command == "dependency-tree":
            return _dependency_tree(args)
        if args.command == "suggest-roles":
            return _suggest_roles(args)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command == "sweep":
            return _sweep(args)
        return _gui(args)
    except (MicroguiError, _UsageError) as exc:
        print(f"microgui: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        # The last guard (issue 27): readers refuse what their metadata says cannot fit, but a
        # run can still exhaust memory; one line, never a traceback. Writers are atomic, so no
        # half-written file is left under its final name.
        print(
            "microgui: error: memory ran out before the command finished; close other "
            "programs, or protect a subset of the records or columns",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except _Terminated:
        print("microgui: terminated; no file was written", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("microgui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `microgui suggest-roles FILE | head`: the reader has gone, which is no error; stdout
        # is pointed at devnull so that Python's own flush at exit does not complain
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if exits_next:
            # Spare the garbage collector's passes over every object at exit (pandas, numba,
            # scipy: 0.3-0.4 s of the command's time, issue 17); each file is closed already.
            gc.freeze()


EXIT_TERMINATED = 128 + 15


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C so that ``finally`` blocks run: a
    temporary file being written is removed, never left behind (issue 12)."""


def _catch_sigterm() -> signal.Handlers | Callable[[int, FrameType | None], Any] | int | None:
    """Make SIGTERM raise :class:`_Terminated`; return the handler to restore (None: not set)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return None
    pid = os.getpid()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != pid:  # a forked worker: die as SIGTERM asks
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise _Terminated()

    return signal.signal(signal.SIGTERM, on_sigterm)


if __name__ == "__main__":
    sys.exit(main())
