"""The command line as a package (issue 28): one module per command, and the names outside
scripts and tests import from ``microgui.cli`` still there."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import microgui.cli as cli

#: What ``microgui.cli`` offered as one module, before it became a package.
OLD_NAMES = (
    "main", "build_parser", "COMMANDS", "EXIT_USAGE", "PathOption", "INPUT_FILE",
    "INPUT_COLUMN_FILE", "OUTPUT_FILE", "command_inputs", "command_outputs", "roles_from_args",
    "spec_from_args", "TerminalProgress", "PROGRESS_AFTER_S",
)  # fmt: skip


def test_the_old_names_are_still_there() -> None:
    missing = [name for name in OLD_NAMES if not hasattr(cli, name)]
    assert not missing, missing
    assert cli.PathOption is importlib.import_module("microgui.cli.inputs").PathOption
    assert cli.TerminalProgress is importlib.import_module("microgui.cli.progress").TerminalProgress


def test_every_command_is_a_module_with_its_parser_and_its_run() -> None:
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert tuple(sorted(sub.choices)) == tuple(sorted(cli.COMMANDS))
    for command in cli.COMMANDS:
        module = importlib.import_module(f"microgui.cli.{command.replace('-', '_')}")
        assert callable(module.add_parser) and callable(module.run), command


def test_python_m_microgui_cli_runs_the_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "microgui.cli", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("microgui "), out.stderr
