"""Command lines the tests give to ``microgui protect``, spelt once.

Random record order is the default at export (issue 31), so a test that compares bytes, rows or
positions asks for ``--keep-order``; ``protect_argv`` adds it unless the test is about the order.
"""

from __future__ import annotations

from os import PathLike


def protect_argv(
    source: str | PathLike[str], out: str | PathLike[str], *options: str, keep_order: bool = True
) -> list[str]:
    """``["protect", source, "-o", out, "--keep-order", *options]`` as strings."""
    argv = ["protect", str(source), "-o", str(out)]
    if keep_order:
        argv.append("--keep-order")
    return argv + [str(option) for option in options]
