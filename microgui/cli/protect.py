"""``microgui protect``: microaggregate a table and write the release (also ``--project``, the
replay of a project saved in the app, and ``--list-methods``)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microgui.cli import collection
from microgui.cli.inputs import (
    INPUT_COLUMN_FILE,
    INPUT_FILE,
    OUTPUT_FILE,
    _check_outputs,
    _read_files,
)
from microgui.cli.options import (
    _HOUSEHOLD_HELP,
    _MISSING_HELP,
    _ROLES_HELP,
    _ROUND_HELP,
    _WEIGHT_HELP,
    Subcommands,
    _Once,
    _parse_hierarchies,
    _parse_ordinal,
    _parse_params,
    _read_input,
    _record_order,
    _split,
    _UsageError,
    roles_from_args,
)
from microgui.cli.progress import TerminalProgress, _compile_notice, _progress_bar_wanted
from microgui.cli.protect_partitioned import _partitioned_wanted, _protect_partitioned

if TYPE_CHECKING:
    import threading

    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import RoleMap

__all__ = ["add_parser", "run", "spec_from_args"]


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``protect`` subcommand and its options to ``sub``."""
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
    p.add_argument("--household", metavar="COL", action=_Once, help=_HOUSEHOLD_HELP)
    p.add_argument(
        "--household-size-key",
        action="store_true",
        help="the report's risk before and after counts the number of records of each "
        "record's household (--household COL, or the project's) as one more key, as "
        "assess --household-size-key does",
    )
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
        "--rename-invalid",
        action="store_true",
        help="SPSS (.sav) or Stata (.dta) output: write each column the format cannot name under "
        "a valid proposed name (marital-status -> marital_status); the report lists the original "
        "and released names. Without it such a column refuses the export, naming it",
    )
    p.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="COLUMN=NAME",
        help="SPSS or Stata output: write COLUMN under NAME (repeatable); checked against the "
        "format's naming rules",
    )
    p.add_argument(
        "--keep-order",
        action="store_true",
        help="write the records in the input's order; by default a release lists them in a "
        "random order (households of --household kept together), so that an input sorted by "
        "identifier, area or date does not leak its order; the report says which",
    )
    p.add_argument(
        "--order-seed",
        metavar="N",
        help="draw the random record order from seed N (a whole number >= 0), recorded in the "
        "report so that the release can be written again byte for byte; without it the order's "
        "seed comes from the operating system and is not recorded (with --project: the order of "
        "the run's last export from the app, whose seed only the project file keeps)",
    )
    p.add_argument(
        "--keep-formula-cells",
        action="store_true",
        help="write text cells starting with = + - @ tab or CR as they are; by default they get a "
        "leading ' so that a spreadsheet does not run them as formulas (CSV injection)",
    )
    p.add_argument(
        "--plan",
        type=INPUT_FILE,
        metavar="PLAN.json",
        help="run a protection plan instead of one method: a JSON file of ordered steps "
        "(recode, top_bottom, microaggregate, suppress), applied to the input in order and "
        "verified once; no --method/-k/--param/--hierarchy then (the plan gives them)",
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
        help="with --project: the run of the project's history to replay, by its number: the "
        "'#N' of the app's history and reports (default: the last); 'plan' (or planN): the "
        "protection plan the project keeps",
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
        metavar="local|dask|spark",
        help="where blocks and strata run: this machine's cores (local, default), a Dask "
        "cluster (dask, with --scheduler) or Spark (spark, with --master; the output is a "
        "folder of Parquet part files)",
    )
    p.add_argument(
        "--master",
        metavar="URL",
        help="Spark master URL for --engine spark: local[*] (default: this machine's cores), "
        "spark://HOST:7077, yarn or k8s://https://HOST:443",
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
        "--threads",
        metavar="N",
        help="threads for the exact kernels (MDAV's searches and passes; default: "
        "MICROGUI_THREADS, else every core); the release is the same for any N, only the "
        "time differs (recorded in the report as threads)",
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
    return p


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


def _check_threads(args: argparse.Namespace) -> None:
    """--threads (or MICROGUI_THREADS) as a whole number >= 1, before any file is read."""
    from microgui.core.methods.threads import requested_threads

    value = getattr(args, "threads", None)
    requested_threads(None if value is None else _threads_value(value))


def _threads_value(value: str) -> int:
    from microgui.core.methods.threads import parse_threads

    return parse_threads(value, "--threads")


def run(args: argparse.Namespace) -> int:
    from microgui.core.io import map_large_blocks
    from microgui.core.runs import parse_seed

    if args.list_methods:
        return _list_methods()
    map_large_blocks()  # freed arrays go back to the system (issue 33)
    if args.project is not None or args.input_option is not None or args.run_number is not None:
        return _protect_project(args)
    if getattr(args, "plan", None) is not None:
        return _protect_plan(args)
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
    if args.engine == "spark" or (args.engine == "dask" and _partitioned_wanted(args)):
        # issue 17: the table is read and written in partitions on the workers (issue 33: or
        # on Spark's executors, always)
        collection.release()
        return _protect_partitioned(args)
    if args.master is not None:
        raise _UsageError("--master is the Spark master URL: add --engine spark, or drop it")
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
    _check_threads(args)
    csv_options = _csv_options(args)  # checked before any file is read too
    _parse_ordinal(args.ordinal)
    _run_params(args)
    preload = _preload_kernels(args, src)  # loaded while the table is read (issue 33)
    try:
        return _read_and_protect(args, src, out, csv_options)
    finally:
        preload.join()


def _preload_kernels(args: argparse.Namespace, src: Path) -> threading.Thread:
    """:func:`~microgui.core.runs.preload.preload_kernels` for the method and input asked."""
    from microgui.core.runs.preload import preload_kernels

    try:
        size = src.stat().st_size
    except OSError:  # the reader says what is wrong with the path
        size = 0
    return preload_kernels(str(args.method).strip().lower(), size)


def _read_and_protect(args: argparse.Namespace, src: Path, out: Path, csv_options: Any) -> int:
    """The table read, its roles and numbers prepared, then the run and its release."""
    from microgui.core.io import release_unused_memory
    from microgui.core.metrics.file_risk import FEW_VALUES
    from microgui.core.table.dataset import Dataset, continuous_as_numbers

    # roles are suggested below only for the columns no option tags (issue 33: suggesting
    # reads every cell of every column)
    collection.imports_done()  # the collection after the read looks at what it made only
    loaded = _read_input(src, args, suggest=False)
    _check_release_size(args.output, len(loaded.frame), len(loaded.frame.columns))
    roles = roles_from_args(args, [str(c) for c in loaded.frame.columns])
    # the files read travel with the table: the release refuses each of them again
    dataset = Dataset(
        loaded.frame, roles, loaded.source, loaded.value_labels, inputs=_read_files(args)
    )
    del loaded  # the continuous quasi-identifiers' text is freed next, once nothing holds it
    dataset = continuous_as_numbers(dataset, more_distinct_than=FEW_VALUES)
    release_unused_memory()  # the text freed, given back rather than kept for reuse
    spec = spec_from_args(args)
    return _run_and_export(args, None, dataset, spec, csv_options, out)


#: ``protect`` options a plan gives (its steps): refused beside --plan.
_PLAN_GIVES = (
    ("method", "--method"), ("k", "-k"), ("param", "--param"), ("round", "--round"),
    ("hierarchy", "--hierarchy"), ("strata", "--strata"), ("block_size", "--block-size"),
    ("group_column", "--group-column"),
)  # fmt: skip


def _protect_plan(args: argparse.Namespace) -> int:
    """``protect INPUT --plan PLAN.json [role options] -o OUT`` (issue 31): the plan's steps in
    order, one release verified once, a report with ``plan`` and ``steps``."""
    from microgui.core.runs import parse_seed
    from microgui.core.runs.plan import load_plan
    from microgui.core.table.dataset import Dataset

    given = [flag for name, flag in _PLAN_GIVES if getattr(args, name, None) is not None]
    if args.project is not None or args.input_option is not None or args.run_number is not None:
        given.append("--project/--input/--run")
    if args.engine != "local":
        given.append("--engine")
    if given:
        raise _UsageError(
            f"--plan gives the steps of the run; drop {', '.join(given)} (or drop --plan)"
        )
    missing = [
        name
        for name, val in (
            ("INPUT", args.input),
            ("-o OUTPUT", args.output),
            ("--qi (or --roles FILE)", args.qi or args.roles),
        )
        if not val
    ]
    if missing:
        raise _UsageError(
            f"protect --plan needs {', '.join(missing)} (see microgui protect --help)"
        )
    _check_outputs(args)
    if args.allow_unsafe is not None and not any(ch.isalnum() for ch in args.allow_unsafe):
        raise _UsageError(
            f"--allow-unsafe {args.allow_unsafe!r}: give the reason in words (it is recorded in "
            "the report), e.g. --allow-unsafe 'internal test file, not released'"
        )
    parse_seed(args.seed, "--seed")
    csv_options = _csv_options(args)
    _parse_ordinal(args.ordinal)
    plan = load_plan(args.plan)  # before the table is read: a bad plan is refused at once
    from microgui.cli.inputs import command_inputs, command_outputs
    from microgui.core.io import check_write_targets

    # no output over a file the plan's steps read (a mapping, a hierarchy) either
    check_write_targets(
        command_outputs(args), protect_from=[*command_inputs(args), *plan.side_files()]
    )
    src, out = Path(args.input), Path(args.output)
    loaded = _read_input(src, args)
    _check_release_size(args.output, len(loaded.frame), len(loaded.frame.columns))
    roles = roles_from_args(args, [str(c) for c in loaded.frame.columns])
    # the plan's own side files (mappings, hierarchies) are read too: never written over
    inputs = (*_read_files(args), *plan.side_files())
    dataset = Dataset(loaded.frame, roles, loaded.source, loaded.value_labels, inputs=inputs)
    return _run_and_export(args, loaded, dataset, plan, csv_options, out)


def _run_params(args: argparse.Namespace) -> dict[str, str]:
    params = _parse_params(args.param)
    if args.round is not None:
        if "round" in params:
            raise _UsageError("give the rounding once: --round or --param round=, not both")
        params["round"] = args.round.strip()
    return params


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
    ("roles", "--roles"), ("plan", "--plan"), ("household", "--household"),
)  # fmt: skip


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

    from microgui.core.errors import InvalidInput, InvalidParameter
    from microgui.core.runs.project_file import load_project
    from microgui.core.table.dataset import Dataset

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
    if str(args.run_number or "").strip().lower().startswith("plan"):
        if not _order_chosen(args):
            _project_export_option(args, project)
        return _protect_project_plan(args, project, project_path, src)
    runs = project.resolved_runs(folder)
    if not runs:
        raise _UsageError(
            f"{project_path.name} holds no run; run a method in the app, save the project, "
            "then replay it"
        )
    # issue 30: N is the run's number for life, the "#N" of the app and its reports (a project
    # of before has none: its runs are 1, 2, ... in order)
    index = len(runs) - 1
    if args.run_number is not None:
        listed = ", ".join(str(i) for i in project.ids)
        try:
            index = project.run_index(int(args.run_number))
        except (ValueError, InvalidParameter):
            raise _UsageError(
                f"--run {args.run_number!r}: {project_path.name} holds no such run; its runs "
                f"are {listed}"
            ) from None
    _project_order(args, project, project.ids[index], src, folder)
    spec = replace(
        runs[index],
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
        f"replaying run #{project.ids[index]} ({index + 1} of {len(runs)}) of "
        f"{project_path.name}: {spec.method}, "
        f"k = {spec.k} on {src.name}",
        file=sys.stderr,
    )
    return _run_and_export(args, loaded, dataset, spec, csv_options, Path(args.output))


def _order_chosen(args: argparse.Namespace) -> bool:
    """Whether the command line chose the record order (``--order-seed`` or ``--keep-order``)."""
    return getattr(args, "order_seed", None) is not None or bool(args.keep_order)


def _project_export_option(args: argparse.Namespace, project: Any) -> bool:
    """The project's export option (issue 31), when the command line chose no order and no
    export of the run is replayed: the input order when the project keeps it; whether it does."""
    if project.keep_order:
        args.keep_order = True
    return bool(project.keep_order)


def _project_order(
    args: argparse.Namespace, project: Any, run_id: int, src: Path, folder: Path
) -> None:
    """The record order of ``protect --project P --run N`` without ``--order-seed`` or
    ``--keep-order`` (issue 30): that of run N's last export from the app, whose seed the
    project keeps (:mod:`microgui.core.release.order`; said in one line on stderr, never the
    seed), so that the replay writes the app's file byte for byte; else the project's export
    option (issue 31: the input order), else a fresh random order."""
    from microgui.core.runs.project_file import last_export_order

    if _order_chosen(args):
        return  # the user's choice
    exports = project.exports_of(run_id)
    last = last_export_order(exports)
    if last is None:
        _project_export_option(args, project)
        return
    own = project.resolved_data_path(folder)
    if own is None or Path(src).resolve() != own.resolve():
        kept = _project_export_option(args, project)
        how = "the input order (the project's export option)" if kept else "a fresh random order"
        print(
            f"note: {Path(src).name} is not the project's table: {how}, not the record order "
            f"of run #{run_id}'s export",
            file=sys.stderr,
        )
        return
    keep, seed = last
    export = exports[-1]
    if keep:
        args.keep_order = True
    else:
        args.project_order_seed = seed
    how = "the input order" if keep else "its random order (the seed the project keeps)"
    print(
        f"record order: {how}, as run #{run_id}'s last export from the app "
        f"({export['file']}, {export['exported']}); --order-seed N or --keep-order to choose",
        file=sys.stderr,
    )


def _protect_project_plan(
    args: argparse.Namespace, project: Any, project_path: Path, src: Path
) -> int:
    """``protect --project FILE --run plan[N]`` (issue 31): the plan the project keeps (the
    app's plan editor, with the seed of its last run), on the project's table and roles."""
    from microgui.core.errors import InvalidInput
    from microgui.core.runs.plan import plan_from_json
    from microgui.core.table.dataset import Dataset

    word = str(args.run_number).strip().lower()[4:].strip(" :#") or "1"
    plans = project.plans
    if not word.isdigit() or not 1 <= int(word) <= len(plans):
        raise _UsageError(
            f"--run {args.run_number!r}: {project_path.name} holds "
            f"{len(plans)} plan(s)"
            + (f"; give --run plan1 to --run plan{len(plans)}" if plans else "")
        )
    plan = plan_from_json(plans[int(word) - 1], source=project_path.name,
                          folder=project_path.resolve().parent)  # fmt: skip
    _check_outputs(args)
    csv_options = _csv_options(args)
    loaded = _read_input(src, args)
    columns = [str(c) for c in loaded.frame.columns]
    if sorted(columns) != sorted(project.roles):
        raise InvalidInput(
            f"{src.name} does not have the project's columns; open it in the app, tag its "
            "columns and save the project again"
        )
    dataset = Dataset(loaded.frame, project.roles, loaded.source, loaded.value_labels,
                      inputs=(*_read_files(args), *plan.side_files()))  # fmt: skip
    print(f"replaying plan {word} of {project_path.name}: {len(plan.steps)} step(s) on "
          f"{src.name}", file=sys.stderr)  # fmt: skip
    return _run_and_export(args, loaded, dataset, plan, csv_options, Path(args.output))


def _run_and_export(
    args: argparse.Namespace,
    loaded: Any,
    dataset: Any,
    spec: Any,
    csv_options: Any,
    out: Path,
) -> int:
    """The run and the release of ``protect`` (also of ``protect --project``)."""
    _record_order(args)  # a usage error before the run, not after it
    if getattr(args, "household_size_key", False) and dataset.roles.household is None:
        raise _UsageError(
            "--household-size-key needs a household-id column: tag one with --household COL"
        )
    from microgui.core.methods.jit_cache import on_first_compile
    from microgui.core.progress import no_progress
    from microgui.core.release.check import export_run
    from microgui.core.runs import RunSpec, information_loss_text

    bar = TerminalProgress(sys.stderr) if _progress_bar_wanted(args) else None

    def notice(kernel: str) -> None:
        if bar is not None:
            bar.break_line()
        _compile_notice(kernel)

    from microgui.core.methods.threads import using_threads

    stop = on_first_compile(notice)
    # the imports are done and the table read: one collection of what the read made, the
    # survivors frozen, the run's garbage collected as it comes (issue 33)
    collection.release()
    try:
        threads = getattr(args, "threads", None)
        asked = None if threads is None else _threads_value(threads)
        with using_threads(asked) as used:
            if asked is not None and used < asked:  # said, not silently changed (issue 33)
                print(
                    f"note: --threads {asked}: the kernels run on {used} thread(s), the most "
                    "this process can use here (cores or NUMBA_NUM_THREADS)",
                    file=sys.stderr,
                )
            if isinstance(spec, RunSpec):  # one method, or a plan run the app kept (issue 31)
                from microgui.core.runs.plan import run_spec

                result = run_spec(dataset, spec, bar if bar is not None else no_progress)
            else:  # a plan (issue 31)
                from microgui.core.runs.plan import run_plan

                seed = getattr(args, "seed", None)
                result = run_plan(
                    dataset, spec, bar if bar is not None else no_progress, seed=seed
                ).result
    finally:
        stop()
        if bar is not None:
            bar.close()
    if getattr(args, "household_size_key", False):
        result = _with_household_size_key(dataset, result)
    if args.engine == "dask":
        print(
            f"note: -o {args.output!r} names one file, so the table was read here and only its "
            "blocks ran on the cluster; give an output folder (no extension) to read, protect "
            "and write in partitions on the workers",
            file=sys.stderr,
        )
    with _verdict_printed_here():
        report = _export(args, dataset, result, csv_options, export_run)
    print(
        f"{report['method']}: k={report['k']}, {report['n_records']} records in {report['n_groups']} groups "
        f"(sizes {report['min_group_size']}-{report['max_group_size']}), {information_loss_text(report)}, "
        f"k-anonymity {report['k_anonymity']}, {report['seconds']:.2f} s -> {out}",
        file=sys.stderr,
    )
    _print_steps(report)
    _print_verdict(report)
    if report.get("renamed_columns"):
        renamed = ", ".join(f"{o} -> {n}" for o, n in report["renamed_columns"].items())
        print(f"  columns renamed for {report['output_format']}: {renamed}", file=sys.stderr)
    if args.roles is None and args.project is None:  # else every column was tagged on purpose
        # after the release: a user error stays one line
        _note_untagged(dataset, loaded.roles if loaded is not None else None)
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


def _with_household_size_key(dataset: Any, result: Any) -> Any:
    """The run with its report's ``risk_before``/``risk_after`` measured with the household
    size as one more key (``--household-size-key``)."""
    from dataclasses import replace

    from microgui.core.runs.protect import risk_before_after

    risk = risk_before_after(dataset, result.protected, int(result.report["k"]),
                             household_size_key=True)  # fmt: skip
    return replace(result, report={**result.report, **risk})


def _renames(items: list[str] | None) -> dict[str, str]:
    """``--rename COLUMN=NAME`` items as ``{COLUMN: NAME}`` (the last ``=`` splits: a name may hold one)."""
    from microgui.core.errors import ExportRefused

    out: dict[str, str] = {}
    for item in items or []:
        old, sep, new = item.rpartition("=")
        if not sep or not old or not new:
            raise ExportRefused(f"--rename {item!r}: give COLUMN=NAME")
        out[old] = new
    return out


def _export(
    args: argparse.Namespace, dataset: Any, result: Any, csv_options: Any, export_run: Any
) -> dict[str, Any]:
    return export_run(
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
        renames=_renames(getattr(args, "rename", None)),
        rename_invalid=bool(getattr(args, "rename_invalid", False)),
        order=_record_order(args),
    )


def _print_steps(report: dict[str, Any]) -> None:
    """A plan's steps, one line each on stderr (counts and measures only)."""
    from microgui.core.release.report_steps import step_line

    steps = report.get("steps")
    if not isinstance(steps, list) or len(steps) < 2:
        return
    for fig in steps:
        print(f"  {step_line(fig)}", file=sys.stderr)
    if "missing matches" in str(report.get("k_anonymity_rule", "")):
        print(
            "  k-anonymity, group sizes and attribute disclosure count a suppressed (missing) "
            "key cell as matching any value (sdcMicro's convention)",
            file=sys.stderr,
        )


@contextlib.contextmanager
def _verdict_printed_here() -> Iterator[None]:
    """The export's log line on attribute disclosure left out: :func:`_print_verdict` prints the
    same words as a ``warning:`` line, with the methods that protect the attribute."""
    check_log = logging.getLogger("microgui.core.release.check")

    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("released with attribute disclosure")

    check_log.addFilter(keep)
    try:
        yield
    finally:
        check_log.removeFilter(keep)


def _print_verdict(report: dict[str, Any]) -> None:
    """The release's verdict on stderr, in the words of the JSON report's ``verdict``
    (:func:`microgui.core.metrics.disclosure.release_verdict`): a ``warning:`` line when a group
    discloses a confidential value (the release is written, not refused: the method did not
    promise otherwise; the report records ``released_with_attribute_disclosure``), naming the
    registered methods that protect the attribute; else an indented ``verdict:`` line (none
    without a confidential attribute: the summary's k-anonymity says it all)."""
    verdict = report.get("verdict")
    if not isinstance(verdict, dict) or not verdict.get("text"):
        return
    if report.get("attribute_disclosure") == {}:
        return  # no confidential attribute: the summary's k-anonymity is the whole verdict
    if report.get("released_with_attribute_disclosure"):
        from microgui.core.methods import available_methods

        protecting = [m.name for m in available_methods() if m.release_check is not None]
        print(
            f"warning: {verdict['text']}; released anyway (the report records "
            f"released_with_attribute_disclosure); "
            + (
                f"{' and '.join(protecting)} protect the attribute (--method {protecting[0]})"
                if protecting
                else "a method with a privacy model on the confidential attributes protects it"
            ),
            file=sys.stderr,
        )
    else:
        print(f"  verdict: {verdict['text']}", file=sys.stderr)


def _release_reports(args: argparse.Namespace) -> list[tuple[Any, Any]]:
    """``--report-html`` and ``--report-pdf``: (path, maker) for ``export_run``
    (:func:`~microgui.core.release.report.release_report_makers`; the PDF printed by Qt)."""
    if not (args.report_html or args.report_pdf):
        return []
    from microgui.core.release.report import release_report_makers

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


def _note_untagged(dataset: Dataset, suggested: RoleMap | None) -> None:
    """A note on stderr naming the columns no option tags (they pass through unchanged, the
    documented default) that the suggestion made when the table was read
    (:func:`microgui.core.table.dataset.explain_roles`) calls identifiers or quasi-identifiers:
    released verbatim, they could single people out. ``suggested`` None: the untagged columns'
    suggestions are made here (they are the columns the run left as read)."""
    from microgui.core.table.roles import AttributeRole

    if suggested is None:
        from microgui.core.table.dataset import explain_roles
        from microgui.core.table.roles import RoleMap

        untagged = dataset.roles.columns_with(AttributeRole.NON_CONFIDENTIAL)
        if not untagged:
            return
        wanted = set(untagged)
        explained = explain_roles(
            dataset.frame[[c for c in dataset.frame.columns if str(c) in wanted]]
        )
        suggested = RoleMap.from_dict({s.name: s.spec for s in explained})

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
