"""Valid variable names for SPSS and Stata (issue 30): proposals for the columns a format refuses.

The rules are those :func:`microgui.core.release.formats._check_names` enforces (IBM SPSS
Statistics Command Syntax Reference, "Variable names"; Stata User's Guide [U] 11.3 "Naming
conventions"):

* SPSS: starts with a letter or ``@``, then letters, digits or ``_ . @ # $``, not ending with
  ``.``, at most 64 bytes (UTF-8), unique ignoring case, not a reserved word (ALL AND BY EQ GE
  GT LE LT NE NOT OR TO WITH).
* Stata: ``[A-Za-z_][A-Za-z0-9_]{0,31}`` (Unicode letters accepted by Stata 14+), unique, not a
  reserved word (``_all _b byte _coef _cons double float if in int long _n _N _pi _pred _rc
  _skip strL using with``, ``str#``).

:func:`valid_names` is pure: column names in, ``{old: new}`` out for the names to change only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

__all__ = ["NAME_FORMATS", "is_valid_name", "name_problem", "valid_names", "check_renames"]

NAME_FORMATS = ("spss", "stata")
_STATA_NAME = re.compile(r"[^\W\d]\w{0,31}")
_SPSS_NAME = re.compile(r"(?:[^\W\d_]|@)[\w.@#$]*")
STATA_RESERVED = frozenset(
    "_all _b byte _coef _cons double float if in int long _n _N _pi _pred _rc _skip strL "
    "using with".split()
)
SPSS_RESERVED = frozenset("ALL AND BY EQ GE GT LE LT NE NOT OR TO WITH".split())
_SPSS_BYTES = 64
_STATA_CHARS = 32
_STATA_BYTES = 128


def name_problem(name: str, fmt: str) -> str | None:
    """Why ``name`` alone is no valid ``fmt`` variable name, or None (uniqueness aside)."""
    if fmt == "stata":
        if _STATA_NAME.fullmatch(name) is None or len(name.encode("utf-8")) > _STATA_BYTES:
            return "letters, digits and _, not starting with a digit, at most 32 characters"
        if name in STATA_RESERVED or re.fullmatch(r"str\d+", name):
            return "a Stata reserved word"
        return None
    if fmt == "spss":
        if len(name.encode("utf-8")) > _SPSS_BYTES:
            return "longer than 64 bytes"
        if _SPSS_NAME.fullmatch(name) is None or name.endswith("."):
            return "starts with a letter or @, then letters, digits or _ . @ # $, no final dot"
        if name.upper() in SPSS_RESERVED:
            return "an SPSS reserved word"
        return None
    raise ValueError(f"no name rules for format {fmt!r}; give one of {NAME_FORMATS}")


def is_valid_name(name: str, fmt: str) -> bool:
    """``name`` alone is a valid ``fmt`` variable name."""
    return name_problem(name, fmt) is None


def _key(name: str, fmt: str) -> str:
    return name.upper() if fmt == "spss" else name


def _truncate(text: str, fmt: str, room: int = 0) -> str:
    """``text`` cut to the format's length, keeping ``room`` characters/bytes for a suffix."""
    if fmt == "stata":
        return text[: _STATA_CHARS - room]
    limit = _SPSS_BYTES - room
    data = text.encode("utf-8")[:limit]
    return data.decode("utf-8", errors="ignore")  # never half a character


def _base(name: str, fmt: str) -> str:
    """A valid name made of ``name``: other characters as ``_``, a letter prefix if needed."""
    text = unicodedata.normalize("NFC", name)
    if fmt == "stata":
        text = re.sub(r"\W", "_", text)
    else:
        text = re.sub(r"[^\w.@#$]", "_", text)
    text = re.sub(r"_{2,}", "_", text).strip("_") or "v"
    if fmt == "spss":
        text = text.rstrip(".") or "v"
        if not re.match(r"[^\W\d_]|@", text):
            text = "v_" + text
    elif not re.match(r"[^\W\d]", text):
        text = "v_" + text
    text = _truncate(text, fmt).rstrip(".") if fmt == "spss" else _truncate(text, fmt)
    if not is_valid_name(text, fmt):  # a reserved word
        text = _truncate(text + "_", fmt)
        if not is_valid_name(text, fmt):
            text = "v_" + text
    return text


def valid_names(columns: Iterable[object], fmt: str) -> dict[str, str]:
    """``{old: proposed}`` for each column whose name ``fmt`` (``"spss"`` or ``"stata"``) cannot
    hold: invalid characters become ``_``, a leading digit gets ``v_``, a reserved word gets a
    final ``_``, a long name is cut (SPSS at a UTF-8 character boundary), and a name another column
    holds (SPSS: ignoring case) gets ``_2``, ``_3``... Valid names are kept and never taken by a
    proposal; an empty dict means every name is valid."""
    if fmt not in NAME_FORMATS:
        raise ValueError(f"no name rules for format {fmt!r}; give one of {NAME_FORMATS}")
    names = [str(c) for c in columns]
    taken: set[str] = set()
    keep: list[bool] = []
    for name in names:
        ok = is_valid_name(name, fmt) and _key(name, fmt) not in taken
        keep.append(ok)
        if ok:
            taken.add(_key(name, fmt))
    out: dict[str, str] = {}
    for name, ok in zip(names, keep, strict=True):
        if ok:
            continue
        base = _base(name, fmt)
        proposal, n = base, 1
        while _key(proposal, fmt) in taken or not is_valid_name(proposal, fmt):
            n += 1
            suffix = f"_{n}"
            proposal = _truncate(base, fmt, len(suffix)).rstrip(".") + suffix
        taken.add(_key(proposal, fmt))
        out[name] = proposal
    return out


def check_renames(columns: Iterable[object], renames: Mapping[str, str], fmt: str) -> list[str]:
    """Problems of the names ``columns`` get under ``renames`` (a user's edit): each invalid or
    duplicate name, in words; an empty list when ``fmt`` holds them all."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    names = [str(c) for c in columns]
    for old in renames:
        if old not in names:
            problems.append(f"{old!r} is no column of the table")
    for old in names:
        new = str(renames.get(old, old))
        why = name_problem(new, fmt)
        if why:
            problems.append(f"{new!r} (column {old!r}): {why}")
        other = seen.get(_key(new, fmt))
        if other is not None:
            problems.append(f"{new!r} is given to both {other!r} and {old!r}")
        seen[_key(new, fmt)] = old
    return problems
