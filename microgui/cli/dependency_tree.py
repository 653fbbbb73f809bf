"""``microgui dependency-tree``: the dependency matrix, best dependency tree and key attributes
of AMA (000 §3.2)."""

from __future__ import annotations

import argparse
from pathlib import Path

from microgui.cli.inputs import INPUT_FILE, OUTPUT_FILE, _check_outputs, command_inputs
from microgui.cli.options import Subcommands, _read_input, _split, _UsageError

__all__ = ["add_parser", "run"]


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``dependency-tree`` subcommand and its options to ``sub``."""
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
    return t


def run(args: argparse.Namespace) -> int:
    from microgui.core.io import write_json_atomic
    from microgui.core.table.dependency import DEFAULT_BINS, dependency_tree

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
