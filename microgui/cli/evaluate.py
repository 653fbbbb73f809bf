"""``microgui evaluate``: information loss and disclosure risk of a protected table."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microgui.cli.inputs import (
    INPUT_COLUMN_FILE,
    INPUT_FILE,
    OUTPUT_FILE,
    _check_outputs,
    command_inputs,
)
from microgui.cli.options import (
    Subcommands,
    _add_role_options,
    _parse_hierarchies,
    _parse_ordinal,
    _read_input,
    _roles_of,
    _UsageError,
)
from microgui.text_table import text_table

if TYPE_CHECKING:
    import pandas as pd

    from microgui.core.table.dataset import Dataset

__all__ = ["add_parser", "run"]


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``evaluate`` subcommand and its options to ``sub``."""
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
    e.add_argument(
        "--crosstab",
        action="append",
        metavar="A,B",
        help="also compare the two-way table of columns A and B before and after: Cramér's V "
        "(bias-uncorrected) of each and its change, and the total variation of the cells "
        "(numbers enter by their histogram bins); repeatable",
    )
    e.add_argument(
        "--model",
        action="append",
        metavar="'Y ~ X1 + X2'",
        help="also fit this model on both tables: OLS for a numeric Y, logistic regression for "
        "a binary Y (1 = its second category in sorted order); categorical X in treatment "
        "coding, named COLUMN#LEVEL (levels numbered in sorted order, #1 the reference); "
        "coefficients with 95%% intervals and their overlap (Karr et al. 2006); repeatable",
    )
    return e


def _parse_crosstab(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise _UsageError(f"--crosstab {text!r}: give two columns, A,B")
    return parts[0], parts[1]


def _measure_catalog() -> dict[str, tuple[str, str, str, str]]:
    """``evaluate.MEASURES`` as (label, unit, direction, group) by key."""
    from microgui.core.metrics.evaluate import readable_measures

    return readable_measures()


def _number_text(value: float | int | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or isinstance(value, int):
        return str(int(value))
    from microgui.core.metrics.measure_text import format_measure

    # the app's format (issue 30): four significant digits, so that a lower bound of
    # 0.0001307 % is not "0.0001" here and "0.000 %" there; float noise is 0, never -0.0000
    return format_measure(float(value))


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


def run(args: argparse.Namespace) -> int:
    from microgui.core.io import json_number, write_json_atomic
    from microgui.core.table.dataset import Dataset

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
    for text in args.crosstab or []:
        _parse_crosstab(text)  # malformed before any file is read
    for text in args.model or []:
        if text.count("~") != 1:
            raise _UsageError(f"--model {text!r}: write it as 'Y ~ X1 + X2'")
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
    from microgui.core.metrics.evaluate import evaluate
    from microgui.core.table.hierarchy import load_hierarchy
    from microgui.core.table.roles import resolve_column

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
    _print_verdict(measures, dataset, other, k)
    if isinstance(by_attribute, dict):
        measures["information_loss_by_attribute"] = _print_by_attribute(by_attribute)
    measures.update(_print_correlations_and_regressions(args, dataset, other))
    measures["utility"] = _print_utility(args, dataset, other)
    if args.json:
        write_json_atomic(measures, args.json, protect_from=command_inputs(args))
    return 0


def _print_verdict(
    measures: dict[str, Any], dataset: Dataset, other: pd.DataFrame, k: int | None
) -> None:
    """The release's verdict (issue 29, the words of ``protect``): k-anonymity at ``-k`` (else at
    the level reached) and attribute disclosure per confidential attribute, added to the JSON as
    ``attribute_disclosure`` and ``verdict``."""
    from microgui.core.metrics.disclosure import (
        attribute_disclosure,
        release_verdict,
        verdict_json,
    )

    roles = dataset.roles
    level = measures.get("k_anonymity")
    disclosure = attribute_disclosure(other, roles.quasi_identifiers, roles.confidential, roles)
    verdict = release_verdict(
        {
            "k": k if k is not None else level,
            "k_anonymity": level,
            "attribute_disclosure": disclosure,
        }
    )
    measures["attribute_disclosure"] = disclosure
    measures["verdict"] = verdict_json(verdict)
    print(f"\nverdict: {verdict.text}{' ✓' if verdict.ok else ''}")


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


def _print_utility(
    args: argparse.Namespace, dataset: Dataset, other: pd.DataFrame
) -> dict[str, Any]:
    """Distributions and associations of every quasi-identifier and confidential column
    (:mod:`microgui.core.metrics.categorical_utility`), the --crosstab tables and the --model
    fits (:mod:`microgui.core.metrics.models`), printed and returned JSON-ready (issue 29).
    Neither the print nor the JSON holds a category: coefficients are named COLUMN#LEVEL."""
    from microgui.core.errors import InvalidParameter
    from microgui.core.metrics.categorical_utility import crosstab, utility_summary
    from microgui.core.metrics.models import fit_model

    frame, roles = dataset.frame, dataset.roles
    summary = utility_summary(frame, other, roles)
    out: dict[str, Any] = {
        "distributions": {c: d.summary() for c, d in summary.distributions.items()},
        "associations": summary.associations.summary() if summary.associations else None,
        "crosstabs": [],
        "models": [],
    }
    if summary.distributions:
        print("\ndistributions, original vs released (numbers by histogram bins, the same edges)")
        print(
            text_table(
                ("column", "kind", "positions", "Hellinger", "total variation"),
                [
                    (
                        c,
                        "bins" if d.numeric else "categories",
                        str(len(d.labels)),
                        _number_text(d.hellinger if d.hellinger == d.hellinger else None),
                        _number_text(
                            d.total_variation if d.total_variation == d.total_variation else None
                        ),
                    )
                    for c, d in summary.distributions.items()
                ],
                {2, 3, 4},
            )
        )
    matrix = summary.associations
    if matrix is not None and len(matrix.columns) >= 2:
        pairs = out["associations"]["pairs"]
        ranked = sorted(
            pairs, key=lambda p: -1.0 if p["difference"] is None else -abs(p["difference"])
        )
        shown = ranked[:10]
        print(
            "\nassociations, original vs released (Pearson r for numbers, Cramér's V for "
            f"categories, eta for mixed pairs; {matrix.n_records:,} records): largest change "
            f"{_number_text(matrix.max_abs_difference)}, mean "
            f"{_number_text(matrix.mean_abs_difference)}"
            + (f"; the {len(shown)} largest of {len(pairs)} pairs" if len(pairs) > 10 else "")
        )
        print(
            text_table(
                ("pair", "measure", "original", "released", "difference"),
                [
                    (
                        f"{p['a']} ~ {p['b']}",
                        p["measure"],
                        _number_text(p["original"]),
                        _number_text(p["released"]),
                        _number_text(p["difference"]),
                    )
                    for p in shown
                ],
                {2, 3, 4},
            )
        )
        if matrix.dropped_rows:
            print(f"({matrix.dropped_rows:,} record(s) with a missing value left out)")
    for text in args.crosstab or []:
        a, b = _parse_crosstab(text)
        try:
            table = crosstab(frame, other, roles, a, b)
        except InvalidParameter as exc:
            raise _UsageError(f"--crosstab {text!r}: {exc}") from None
        entry = table.summary()
        out["crosstabs"].append(entry)
        print(
            f"\ncross-tabulation {a} x {b} ({entry['rows']} x {entry['columns']} cells, "
            f"{table.n_records:,} records): Cramér's V (bias-uncorrected) "
            f"{_number_text(entry['cramers_v_original'])} -> "
            f"{_number_text(entry['cramers_v_released'])} "
            f"(change {_number_text(entry['cramers_v_change'])}); total variation of the cells "
            f"{_number_text(entry['total_variation'])}"
        )
    for text in args.model or []:
        try:
            model = fit_model(frame, other, roles, text)
        except InvalidParameter as exc:
            raise _UsageError(f"--model {text!r}: {exc}") from None
        entry = model.summary()
        out["models"].append(entry)
        what = "OLS" if model.kind == "ols" else f"logistic regression, 1 = {model.outcome_one}"
        print(
            f"\nmodel {model.formula.text} ({what}; {model.n_records:,} records; "
            "COLUMN#LEVEL: levels in sorted order, #1 the reference): mean CI overlap "
            f"{_number_text(entry['mean_overlap'])} (Karr et al. 2006)"
        )
        if model.separated:
            print(
                f"(left out: {', '.join(model.separated)}, whose records all share one outcome; "
                f"{model.separated_rows:,} record(s))"
            )
        print(
            text_table(
                ("term", "original", "95% CI", "released", "95% CI", "overlap"),
                [
                    (
                        c["term"],
                        f"{c['original']:.6g}",
                        f"[{c['ci_original'][0]:.4g}, {c['ci_original'][1]:.4g}]",
                        f"{c['released']:.6g}",
                        f"[{c['ci_released'][0]:.4g}, {c['ci_released'][1]:.4g}]",
                        _number_text(c["overlap"]),
                    )
                    for c in entry["coefficients"]
                ],
                {1, 2, 3, 4, 5},
            )
        )
    return out
