"""The files a command reads and writes, declared once (issue 12).

Every option or positional naming a file is declared a file read or a file written where it is
added (``type=INPUT_FILE``, ``INPUT_COLUMN_FILE``, ``OUTPUT_FILE``: :class:`PathOption`);
:func:`command_inputs` collects what a command reads and no output may be one of them
(:func:`_check_outputs`), so a new option is protected by its declaration (a test fails on an
option left unclassified).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import cast

__all__ = [
    "INPUT_COLUMN_FILE",
    "INPUT_FILE",
    "OUTPUT_FILE",
    "PathOption",
    "command_inputs",
    "command_outputs",
    "declare_paths",
]


class PathOption:
    """The argparse ``type`` of an option or positional that names a file: one the command
    reads (``reads``: its data, roles, hierarchy, project file) or one it writes.

    Declared where the option is added, so that :func:`command_inputs` and
    :func:`command_outputs` find every one, and every writer of every command refuses every
    input (:func:`_check_outputs`). The value is kept as typed. ``column_file``: the value is
    ``COL=FILE`` (``--hierarchy``). ``tests/cli/test_inputs_declared.py`` walks the parser and
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


#: The attribute of a parsed command's namespace that holds its declared paths
#: (:func:`declare_paths`).
_DECLARED = "_path_options"


def declare_paths(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Record on a command's parser (dest, :class:`PathOption`) of every option and positional
    naming a file, read off the parser itself: the declaration is the ``type=`` of the option.

    Kept as a default of the namespace the command parses into, so that the commands that
    check their outputs need not import the parser they are part of; ``build_parser`` calls it
    for every command."""
    declared = tuple((a.dest, a.type) for a in parser._actions if isinstance(a.type, PathOption))
    parser.set_defaults(**{_DECLARED: declared})
    return parser


def _declared_paths(args: argparse.Namespace) -> tuple[tuple[str, PathOption], ...]:
    """The declared paths of the command ``args`` was parsed for (none when no command)."""
    if args.command is None:
        return ()
    declared = getattr(args, _DECLARED, None)
    if declared is None:
        raise TypeError("parse the command line with microgui.cli.build_parser()")
    return cast("tuple[tuple[str, PathOption], ...]", declared)


def command_inputs(args: argparse.Namespace) -> list[Path]:
    """Every file the parsed command reads, collected in this one place: the values of its
    options and positionals declared :data:`INPUT_FILE` or :data:`INPUT_COLUMN_FILE`, and the
    files a ``--project`` names (its table and hierarchy files). Every writer of the command
    refuses each of them as a target (by inode: links and other spellings included)."""
    found: list[str | Path] = []
    for dest, option in _declared_paths(args):
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
    for dest, option in _declared_paths(args):
        if not option.reads and dest not in skip:
            found += option.paths(getattr(args, dest, None))
    return found


def _project_files(path: str) -> list[Path]:
    """The files a project file names (none when it cannot be read: the command refuses it
    then, with its reason)."""
    from microgui.core.errors import MicroguiError
    from microgui.core.runs.project_file import load_project

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


def _read_files(args: argparse.Namespace) -> tuple[Path, ...]:
    """:func:`command_inputs` for ``Dataset.inputs``."""
    return tuple(command_inputs(args))
