"""``microgui gui`` (also plain ``microgui``): open the app; Qt is imported only here, when the
command runs."""

from __future__ import annotations

import argparse
import os
import sys

from microgui.cli.inputs import INPUT_FILE, OUTPUT_FILE, _check_outputs
from microgui.cli.options import EXIT_USAGE, Subcommands

__all__ = ["add_parser", "run"]


def add_parser(sub: Subcommands) -> argparse.ArgumentParser:
    """Add the ``gui`` subcommand and its options to ``sub``."""
    g = sub.add_parser(
        "gui", help="open the app (the default)", description="Open the microgui app."
    )
    g.add_argument(
        "file",
        nargs="?",
        type=INPUT_FILE,
        metavar="FILE",
        help="table, or project saved by the app (.json), to open",
    )
    g.add_argument("--demo", action="store_true", help="open the bundled demo data")
    g.add_argument(
        "--screenshot",
        type=OUTPUT_FILE,
        metavar="PNG",
        help="run the default method, save a PNG of the window and exit",
    )
    return g


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


def run(args: argparse.Namespace) -> int:
    if args.screenshot:  # never over the table opened
        _check_outputs(args)
    problem = _no_display()
    if problem is not None:
        print(f"microgui: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from microgui.qt.app import run_app

    return run_app(file=args.file, demo=bool(args.demo), screenshot=args.screenshot)
