"""The command line reference page of the documentation site (issue 32, item 3): every command
and option of ``microgui``, walked from the argparse parser (:func:`microgui.cli.build_parser`),
with its help text. ``docs/hooks.py`` adds it to the site beside the pages of
:mod:`microgui.docs_gen`; it lives here, in the command line's package, because the parser holds
the ``gui`` command, which opens the app, whose help imports :mod:`microgui.docs_gen`.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping

from microgui.docs_gen import markdown_code, markdown_text

__all__ = ["cli_options", "cli_reference", "option_anchor"]


def _sentence(text: str) -> str:
    return (text[:1].upper() + text[1:] + ".") if text else ""


def option_anchor(command: str, option: str) -> str:
    """The anchor of ``option`` of ``command`` in the CLI reference ("protect--qi")."""
    return f"{command}-{re.sub(r'[^A-Za-z0-9-]', '', option.lstrip('-') or option)}"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_options() -> dict[str, list[str]]:
    """Every documented option string of every command (positional arguments by their name),
    ``""`` for the top-level command: what the CLI reference must show."""
    from microgui.cli import build_parser

    parser = build_parser()
    out: dict[str, list[str]] = {"": _options_of(parser)}
    for name, sub in _subparsers(parser).items():
        out[name] = _options_of(sub)
    return out


def _options_of(parser: argparse.ArgumentParser) -> list[str]:
    names: list[str] = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        names += list(action.option_strings) or [str(action.metavar or action.dest)]
    return names


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest).upper()
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return ", ".join(f"{o} {metavar}" for o in action.option_strings)


def _action_lines(command: str, parser: argparse.ArgumentParser) -> list[str]:
    lines: list[str] = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        first = (action.option_strings or [str(action.metavar or action.dest)])[0]
        anchor = option_anchor(command or "microgui", first)
        extra = []
        if action.option_strings and action.required:
            extra.append("required")
        if action.choices is not None and not isinstance(action.choices, Mapping):
            extra.append("one of " + ", ".join(markdown_code(c) for c in action.choices))
        default = action.default
        if (
            action.option_strings
            and action.nargs != 0
            and default not in (None, argparse.SUPPRESS, [], ())
        ):
            extra.append(f"default {markdown_code(default)}")
        if getattr(action, "action_kind", None) is None and action.nargs in ("*", "+"):
            extra.append("several values")
        if isinstance(action, argparse._AppendAction):
            extra.append("may be repeated")
        help_text = (action.help or "").replace("%(default)s", str(default))
        help_text = help_text.replace("%(prog)s", parser.prog)
        tail = f" ({'; '.join(extra)})" if extra else ""
        lines.append(
            f'- <a id="{anchor}"></a>{markdown_code(_invocation(action))}: {markdown_text(help_text)}{tail}'
        )
    return lines


def cli_reference() -> str:
    """The CLI reference page: every command, its usage and every option, from the parser."""
    from microgui.cli import build_parser

    parser = build_parser()
    out = [
        "# Command line reference",
        "",
        "Generated from the command's argparse parser (`microgui.cli.build_parser`; `microgui.cli.reference`) when the site "
        "is built: every command and every option `microgui` accepts, with its help text. "
        "`microgui COMMAND --help` prints the same.",
        "",
        "A user error prints one line naming the problem (file, row, column) to stderr, exits "
        "with status 2 and writes nothing.",
        "",
        "## microgui {#microgui}",
        "",
        "```text",
        parser.format_usage().strip(),
        "```",
        "",
        *_action_lines("", parser),
        "",
    ]
    helps = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in action._choices_actions}
    for name, sub in _subparsers(parser).items():
        out += [
            f"## microgui {name} {{#{name}}}",
            "",
            _sentence(markdown_text(helps.get(name, ""))),
            "",
            "```text",
            sub.format_usage().strip(),
            "```",
            "",
            markdown_text(sub.description or ""),
            "",
            *_action_lines(name, sub),
            "",
        ]
    return "\n".join(out)
