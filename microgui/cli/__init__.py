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
    microgui assess INPUT [--qi ... | --roles FILE] [-k K] [--keys COL,...]
        [--suda-max-size N] [--no-suda] [--json OUT]
    microgui gui [FILE] [--demo] [--screenshot PNG]      (also what plain `microgui` does)
    microgui --version

A user error prints one line naming the problem to stderr, exits 2 and writes nothing. Qt is
imported only when the ``gui`` subcommand runs. Every option or positional naming a file is
declared a file read or a file written (``type=INPUT_FILE``, ``INPUT_COLUMN_FILE``,
``OUTPUT_FILE``: :class:`~microgui.cli.inputs.PathOption`);
:func:`~microgui.cli.inputs.command_inputs` collects what a command reads and no output may be
one of them (:func:`~microgui.cli.inputs._check_outputs`), so a new option is protected by its
declaration (a test fails on an option left unclassified).

This module assembles the parser and runs a command; each command is a module of its own
(:mod:`~microgui.cli.protect` with :mod:`~microgui.cli.protect_partitioned`,
:mod:`~microgui.cli.evaluate`, :mod:`~microgui.cli.sweep`, :mod:`~microgui.cli.suggest_roles`,
:mod:`~microgui.cli.dependency_tree`, :mod:`~microgui.cli.assess`, :mod:`~microgui.cli.gui`) with its ``add_parser(sub)`` and
``run(args)``; what they share is in :mod:`~microgui.cli.options` (the parser class, role and list
options, reading the table), :mod:`~microgui.cli.inputs` (the declared files) and
:mod:`~microgui.cli.progress` (the terminal progress bar). Their heavy imports stay inside
functions, so ``microgui --help`` imports no numpy, pandas or Qt.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from microgui._version import __version__
from microgui.cli import (
    assess,
    collection,
    dependency_tree,
    evaluate,
    gui,
    protect,
    suggest_roles,
    sweep,
)
from microgui.cli.inputs import (
    INPUT_COLUMN_FILE,
    INPUT_FILE,
    OUTPUT_FILE,
    PathOption,
    command_inputs,
    command_outputs,
    declare_paths,
)
from microgui.cli.options import EXIT_USAGE, _Parser, _UsageError, roles_from_args
from microgui.cli.progress import PROGRESS_AFTER_S, TerminalProgress
from microgui.cli.protect import _PROJECT_GIVES as _PROJECT_GIVES
from microgui.cli.protect import spec_from_args

__all__ = [
    "COMMANDS",
    "EXIT_USAGE",
    "INPUT_COLUMN_FILE",
    "INPUT_FILE",
    "OUTPUT_FILE",
    "PROGRESS_AFTER_S",
    "PathOption",
    "TerminalProgress",
    "build_parser",
    "command_inputs",
    "command_outputs",
    "main",
    "roles_from_args",
    "spec_from_args",
]


#: The subcommands (a first word that is none of them nor an existing file is an error).
COMMANDS = ("protect", "evaluate", "sweep", "suggest-roles", "dependency-tree", "assess", "gui")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="microgui", description="Microaggregation for statistical disclosure control."
    )
    parser.add_argument("--version", action="version", version=f"microgui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for command in (protect, dependency_tree, suggest_roles, evaluate, sweep, assess, gui):
        declare_paths(command.add_parser(sub))
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


def _unknown_command(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"unknown command {word!r}{hint}; the commands are {', '.join(COMMANDS)}; a table to "
        "open in the app must be an existing file"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``microgui`` console script; returns the exit code."""
    from microgui.core import process_start
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
    # after the options are checked: a usage error imports nothing (numpy included)
    process_start.start()
    previous = _catch_sigterm() if args.command != "gui" else None
    # The console script (no argv given): the process ends when this returns.
    exits_next = argv_given is None and args.command != "gui"
    if exits_next and args.command == "protect":
        # no automatic collection until the imports are done and the table is read (issue 33)
        collection.hold()
    try:
        if args.command == "protect":
            return protect.run(args)
        if args.command == "dependency-tree":
            return dependency_tree.run(args)
        if args.command == "suggest-roles":
            return suggest_roles.run(args)
        if args.command == "evaluate":
            return evaluate.run(args)
        if args.command == "sweep":
            return sweep.run(args)
        if args.command == "assess":
            return assess.run(args)
        return gui.run(args)
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
        collection.release()  # a command that did not release it (a usage error, say)
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
