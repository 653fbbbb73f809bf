"""``microgui suggest-roles``: a role and kind for every column, with the reason."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from microgui.cli.inputs import INPUT_FILE, OUTPUT_FILE, _check_outputs, command_inputs
from microgui.cli.options import Subcommands, _read_input
from microgui.text_table import text_table

__all__ = ["add_parser", "run"]


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``suggest-roles`` subcommand and its options to ``sub``."""
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
    return r


def run(args: argparse.Namespace) -> int:
    """``microgui suggest-roles``: the table of :func:`microgui.core.table.dataset.explain_roles`."""
    from microgui.core.io import write_json_atomic
    from microgui.core.table.dataset import explain_roles

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


def _suggested_options(suggestions: Sequence[Any]) -> str:
    """The ``protect`` role options that tag the columns as suggested (shell-quoted)."""
    import shlex

    from microgui.core.table.roles import AttributeKind, AttributeRole

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
