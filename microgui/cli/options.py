"""What the commands share: the parser class, the usage error, the role and list options and
their parsing, and the reading of the input table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, cast

from microgui.cli.inputs import INPUT_FILE
from microgui.cli.progress import TerminalProgress, _progress_bar_wanted

if TYPE_CHECKING:
    from microgui.core.table.roles import RoleMap

__all__ = ["EXIT_USAGE", "Subcommands", "roles_from_args"]

#: The subcommands of ``microgui``: each command module's ``add_parser`` adds its own.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

EXIT_USAGE = 2


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
            what = _ONCE_WHY.get(self.dest, "give it once")
            parser.error(f"{option_string} is given twice; {what}")
        setattr(namespace, self.dest, values)


_ONCE_WHY = {
    "weight": "a table has one survey weight column",
    "household": "a table has one household-id column",
}


class _UsageError(Exception):
    pass


def _split(values: Sequence[str] | None) -> list[str]:
    """COL,COL,... lists; a comma inside a column name is written ``\\,`` (``--qi 'a\\,b'``).

    Names are kept as typed, spaces included: the core matches a name exactly first, and only
    when no column has that exact name, after removing spaces at the ends, Unicode NFC and case
    (:func:`microgui.core.table.roles.resolve_column`). So ``--qi 'age, income'`` works, and a column
    named ``' age'`` is selected by quoting it: ``--qi ' age'``.
    """
    out: list[str] = []
    for value in values or ():
        parts = value.replace("\\,", "\x00").split(",")
        out.extend(p.replace("\x00", ",") for p in parts if p.strip())
    return out


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


_HOUSEHOLD_HELP = (
    "the household-id column (records sharing a value are one household): released unchanged; "
    "the household risk (sdcMicro's measure_risk with hhId) combines its persons' individual "
    "risks, and the release's random order keeps each household's records together"
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
    p.add_argument("--household", metavar="COL", action=_Once, help=_HOUSEHOLD_HELP)
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


#: The options a roles file replaces (``--roles FILE``): refused beside it.
_ROLE_OPTIONS = (
    ("qi", "--qi"), ("identifiers", "--identifiers"), ("confidential", "--confidential"),
    ("ordinal", "--ordinal"), ("nominal", "--nominal"),
    ("missing_as_category", "--missing-as-category"), ("weight", "--weight"),
    ("household", "--household"),
)  # fmt: skip


def _roles_file(args: argparse.Namespace, columns: Sequence[str]) -> Any:
    """The roles of ``--roles FILE``, or None when it is not given."""
    if getattr(args, "roles", None) is None:
        return None
    from microgui.core.table.roles import roles_from_file

    given = [flag for name, flag in _ROLE_OPTIONS if getattr(args, name, None)]
    if given:
        raise _UsageError(
            f"--roles {args.roles} tags every column; drop {', '.join(given)} (or drop --roles)"
        )
    return roles_from_file(args.roles, columns)


def roles_from_args(args: argparse.Namespace, columns: Sequence[str]) -> Any:
    """The :class:`~microgui.core.table.roles.RoleMap` that ``protect``'s role options give the
    table's ``columns`` (what the app's "Copy as command" text is checked against)."""
    from microgui.core.table.roles import roles_from_lists

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
        household=getattr(args, "household", None),
    )


def _roles_of(args: argparse.Namespace, columns: Sequence[object]) -> RoleMap:
    """The RoleMap of the role options (or ``--roles``), built exactly as ``protect`` builds
    it (:func:`roles_from_args`)."""
    return cast("RoleMap", roles_from_args(args, [str(c) for c in columns]))


def _read_input(path: Path, args: argparse.Namespace, *, suggest: bool = True) -> Any:
    """``read_table`` with ``--sheet``; says on stderr which sheet of a workbook with several
    sheets was read when none was chosen (only the first is read). ``suggest=False``: no role
    suggested (the caller suggests them for the columns it leaves untagged)."""
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
        loaded = read_table(
            path, sheet=sheet, progress=bar if bar is not None else no_progress, suggest=suggest
        )
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


def _record_order(args: argparse.Namespace) -> Any:
    """The release's record order from ``--keep-order`` and ``--order-seed N`` (issue 31), or
    the order of a project run's last export (``protect --project``, issue 30)."""
    from microgui.core.release.order import RecordOrder

    keep = bool(getattr(args, "keep_order", False))
    raw = getattr(args, "order_seed", None)
    kept = getattr(args, "project_order_seed", None)  # protect --project's (issue 30)
    if raw is None and not keep and kept is not None:
        return RecordOrder(seed=int(kept), origin="project")
    if raw is None:
        return RecordOrder(keep=keep)
    if keep:
        raise _UsageError(
            "--order-seed draws a random record order and --keep-order keeps the input's; "
            "give one of them"
        )
    text = str(raw).strip()
    if not text.isdigit() or len(text) > 20 or int(text) >= 2**64:
        raise _UsageError(f"--order-seed {raw!r}: give a whole number from 0 to 2**64 - 1")
    return RecordOrder(seed=int(text))
