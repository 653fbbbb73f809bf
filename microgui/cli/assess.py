"""``microgui assess``: the disclosure risk of one table before any protection
(:func:`microgui.core.metrics.file_risk.assess_risk`): k-anonymity on the categorical keys and
the worst key combinations, individual risk, SUDA2 per-variable contributions, l-diversity of
the confidential attributes. Counts, measures and column names only, never a value."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from microgui.cli.inputs import INPUT_FILE, OUTPUT_FILE, _check_outputs, command_inputs
from microgui.cli.options import (
    Subcommands,
    _add_role_options,
    _parse_ordinal,
    _read_input,
    _roles_of,
    _split,
    _UsageError,
)
from microgui.text_table import text_table

__all__ = ["add_parser", "run", "summary_lines"]

# A column name longer than this is cut in the printed summary (the JSON keeps it whole).
_NAME_WIDTH = 60


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``assess`` subcommand and its options to ``sub``."""
    a = sub.add_parser(
        "assess",
        help="measure the disclosure risk of a table before protecting it",
        description="Disclosure risk of INPUT on its categorical key variables (the nominal and "
        "ordinal quasi-identifiers, and continuous ones with at most 20 distinct values): "
        "records in key cells of size 1, 2 and below k, the smallest key combinations that break "
        "k, individual risk (weighted with --weight), household risk (with --household), SUDA2 per-variable contributions, and the "
        "l-diversity of the confidential columns. A missing key value matches any value "
        "(sdcMicro's default). Counts and column names only, never a value.",
    )
    a.add_argument("input", type=INPUT_FILE, metavar="INPUT", help="the table to assess")
    _add_role_options(a)
    a.add_argument(
        "--sheet",
        metavar="NAME",
        help="Excel only: the sheet to read, by name or by position from 1 (default: the first)",
    )
    a.add_argument(
        "-k", "--k", dest="k", default="3", metavar="K",
        help="the k of the k-anonymity counts (default 3)",
    )  # fmt: skip
    a.add_argument(
        "--keys",
        action="append",
        metavar="COL,...",
        help="the key variables to count on (default: chosen from the quasi-identifiers)",
    )
    a.add_argument(
        "--suda-max-size",
        default=None,
        metavar="N",
        help="SUDA2: the largest minimal sample unique searched (default: SUDA2's own)",
    )
    a.add_argument(
        "--household-size-key",
        action="store_true",
        help="add the number of records of each record's household (--household COL) to the "
        "key variables",
    )
    a.add_argument(
        "--no-suda",
        action="store_true",
        help="leave SUDA2 out (its search grows with the number of key variables)",
    )
    a.add_argument(
        "--json", type=OUTPUT_FILE, metavar="OUT", help="also write the figures as JSON to OUT"
    )
    return a


def _whole(text: str, option: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _UsageError(f"{option} {text!r} is not a whole number") from None
    if value < least:
        raise _UsageError(f"{option} {value} must be at least {least}")
    return value


def _shown(name: object) -> str:
    """A column name as printed: control characters escaped, very long names cut."""
    text = str(name)
    if not text.isprintable():
        text = repr(text)[1:-1]
    if len(text) > _NAME_WIDTH:
        text = text[: _NAME_WIDTH - 1] + "…"
    return text


def _columns(cols: list[str]) -> str:
    return " × ".join(_shown(c) for c in cols)


def summary_lines(risk: dict[str, Any]) -> list[str]:
    """The printed summary of an :func:`~microgui.core.metrics.file_risk.assess_risk` result."""
    from microgui.core.metrics.file_risk import format_expected  # numpy: not at start-up

    n = int(risk["n_records"])
    k = int(risk["k"])
    ka = risk["k_anonymity"]
    ir = risk["individual_risk"]

    def pct(x: int) -> str:
        return f"{100.0 * x / n:.1f} %" if n else "-"

    out = [
        f"{n:,} records; key variables ({len(risk['keys'])}): "
        + ", ".join(_shown(c) for c in risk["keys"]),
        f"  ({_note(risk)})",
        "",
        f"k-anonymity on the keys: level {ka['level']} (missing key values match any value)",
        text_table(
            ("records", "count", "share"),
            [
                (
                    "in key cells of size 1 (sample uniques)",
                    f"{ka['records_in_cells_of_size_1']:,}",
                    pct(ka["records_in_cells_of_size_1"]),
                ),
                (
                    "in key cells of size 2",
                    f"{ka['records_in_cells_of_size_2']:,}",
                    pct(ka["records_in_cells_of_size_2"]),
                ),
                (
                    f"in key cells below k = {k}",
                    f"{ka['records_below_k']:,}",
                    pct(ka["records_below_k"]),
                ),
                (f"key cells below k = {k}", f"{ka['cells_below_k']:,}", ""),
                ("with a missing key value", f"{ka['records_with_missing_key']:,}", ""),
            ],
            {1, 2},
        ),  # fmt: skip
    ]
    worst = ka["worst_combinations"]
    if worst:
        out += ["", f"smallest key combinations that break k = {k}:"]
        out.append(
            text_table(
                ("variables", "cells < k", "records < k"),
                [
                    (_columns(w["columns"]), f"{w['cells_below_k']:,}", f"{w['records_below_k']:,}")
                    for w in worst
                ],
                {1, 2},
            )
        )
    out += [
        "",
        f"individual risk ({ir['method']}):",
        f"  mean {ir['mean']:.4g}, max {ir['max']:.4f}, expected re-identifications "
        f"{format_expected(ir['expected_reidentifications'])}",
        "  records above " + ", ".join(f"{t}: {c:,}" for t, c in ir["records_above"].items()),
    ]
    hr = risk.get("household_risk")
    if hr:
        size = hr["household_size"]
        out += [
            "",
            f"household risk (households of {_shown(hr['column'])}: {hr['households']:,}, "
            f"{size['min']}-{size['max']} records, mean {size['mean']:.2f}; 1 - prod(1 - r) "
            "over each household, as sdcMicro's hier_risk):",
            f"  mean {hr['mean']:.4g}, max {hr['max']:.4f}, expected re-identifications "
            f"{format_expected(hr['expected_reidentifications'])} (records), "
            f"{format_expected(hr['expected_households'])} (households)",
            "  records above " + ", ".join(f"{t}: {c:,}" for t, c in hr["records_above"].items()),
        ]
        if hr.get("note"):
            out.append(f"  note: {_printable(hr['note'])}")
    suda = risk.get("suda2")
    if suda:
        out += [
            "",
            f"SUDA2 (max MSU size {suda['max_size']}, DIS fraction {suda['dis_fraction']}): "
            f"{suda['records_with_msu']:,} records with a minimal sample unique; DIS-SUDA mean "
            f"{_g(suda['dis_score_mean'])}, max {_g(suda['dis_score_max'])}",
            "per-variable contribution (%), the variables to protect first:",
            text_table(
                ("variable", "contribution"),
                [(_shown(c), f"{v:.2f}") for c, v in suda["contributions"].items()],
                {1},
            ),
        ]
    ld = risk["l_diversity"]
    if ld:
        out += ["", "l-diversity of the confidential columns over the key cells:"]
        out.append(
            text_table(
                (
                    "column",
                    "distinct l",
                    "entropy l",
                    "t-closeness",
                    "records in one-value cells",
                    "share",
                ),
                [
                    (
                        _shown(c),
                        str(v["distinct_l_diversity"]),
                        f"{v['entropy_l_diversity']:.3g}" if "entropy_l_diversity" in v else "-",
                        "-" if v.get("t_closeness") is None else f"{v['t_closeness']:.3f}",
                        f"{v['homogeneous_records']:,}",
                        f"{v['homogeneous_percent']:.1f} %",
                    )
                    for c, v in ld.items()
                ],
                {1, 2, 3, 4, 5},
            )  # fmt: skip
        )
    return out


def _g(value: float | None) -> str:
    return (
        "undefined (no sample unique in sdcMicro's DIS count)" if value is None else f"{value:.4g}"
    )


def _printable(text: str) -> str:
    return text if text.isprintable() else repr(text)[1:-1]


def _note(risk: dict[str, Any]) -> str:
    note = str(risk["keys_note"])
    return note if note.isprintable() else repr(note)[1:-1]


def run(args: argparse.Namespace) -> int:
    from microgui.core.io import write_json_atomic
    from microgui.core.metrics.file_risk import assess_risk

    if not args.qi and not args.roles and not args.keys:
        raise _UsageError(
            "assess needs --qi COL,... (with --nominal/--ordinal for categorical ones) or "
            "--roles FILE (see microgui assess --help)"
        )
    _check_outputs(args)
    _parse_ordinal(args.ordinal)  # malformed options fail before any file is read
    k = _whole(args.k, "-k", 1)
    max_size = (
        None if args.suda_max_size is None else _whole(args.suda_max_size, "--suda-max-size", 1)
    )
    loaded = _read_input(Path(args.input), args)
    frame = loaded.frame
    frame.columns = [str(c) for c in frame.columns]
    keys = None
    if args.keys:
        from microgui.core.table.roles import resolve_columns

        keys = resolve_columns(_split(args.keys), list(frame.columns), "--keys")
    if not args.qi and not args.roles:  # --keys alone: the keys are nominal quasi-identifiers
        args.qi = [",".join(k.replace(",", "\\,") for k in keys or [])]
        args.nominal = [*(args.nominal or []), *args.qi]
    roles = _roles_of(args, list(frame.columns))
    risk = assess_risk(
        frame,
        roles,
        k=k,
        keys=keys,
        max_suda_size=max_size,
        suda=not args.no_suda,
        household_size_key=bool(args.household_size_key),
    )
    print(f"{Path(args.input).name}: disclosure risk")
    print("\n".join(summary_lines(risk)))
    if args.json:
        write_json_atomic(risk, args.json, protect_from=command_inputs(args))
    return 0
