"""The papers microgui's methods and measures come from, for text a user reads.

Docstrings and tests cite the papers by the file names of the project's reference texts
(``003_309fe4adb430bc25.txt §5.3``); a statistician reads authors and year. :func:`readable`
turns the first form into the second ("Domingo-Ferrer & Torra 2005, §5.3") wherever a method's
citation or description reaches a user: ``--list-methods``, the method panel, run reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Reference", "REFERENCES", "cited", "readable"]


@dataclass(frozen=True)
class Reference:
    """One source paper: ``key`` is the number its reference text starts with."""

    key: str
    authors: str
    year: int | None
    title: str
    venue: str = ""

    @property
    def short(self) -> str:
        """'Domingo-Ferrer & Torra 2005' (authors alone when the year is not known)."""
        return f"{self.authors} {self.year}" if self.year else self.authors

    @property
    def full(self) -> str:
        year = f" ({self.year})" if self.year else ""
        venue = f", {self.venue}" if self.venue else ""
        return f"{self.authors}{year}. {self.title}{venue}."


REFERENCES: dict[str, Reference] = {
    r.key: r
    for r in (
        Reference(
            "000",
            "Sun, Wang, Li & Zhang",
            2012,
            "An approximate microaggregation approach for microdata protection",
            "Expert Systems with Applications 39(2)",
        ),
        Reference(
            "001",
            "Ramya, Selvaraj & Anandh",
            None,
            "Microaggregation for the protection of microdata",
        ),
        Reference(
            "002",
            "Sulekha & Arumugam",
            None,
            "A survey on microaggregation based privacy preserving data mining techniques",
        ),
        Reference(
            "003",
            "Domingo-Ferrer & Torra",
            2005,
            "Ordinal, continuous and heterogeneous k-anonymity through microaggregation",
            "Data Mining and Knowledge Discovery 11(2)",
        ),
        Reference(
            "004",
            "Ramana & Valli Kumari",
            2013,
            "Achieving k-anonymity using Minimum Spanning Tree based Partitioning",
            "International Journal of Computer Applications 76(6)",
        ),
    )
}

#: A reference text's file name (``003_309fe4adb430bc25.txt``), or its number where a section,
#: algorithm, table, definition, equation or figure follows (``003 §5.3``, ``004 eqs. 6-9``).
_FILE = re.compile(r"(?<![\w,.])(00[0-4])_[0-9a-f]{16}\.txt\b")
_NUMBER = re.compile(
    r"(?<![\w,.])(00[0-4])(?=\s*(?:§|Algorithm|Alg\.|Table|Tab\.|Definition|Def\.|eqs?\.|Eq|Theorem|"
    r"Figure|Fig\.|Proposition|section|,|;|\)))"
)


def readable(text: str) -> str:
    """``text`` with every reference-text name or number replaced by authors and year:
    "003_309fe4adb430bc25.txt, Algorithm 5.1" → "Domingo-Ferrer & Torra 2005, Algorithm 5.1";
    "(003 §5.3)" → "(Domingo-Ferrer & Torra 2005 §5.3)"."""

    def named(match: re.Match[str]) -> str:
        rest = match.string[match.end() :].lstrip(" ")
        comma = "" if rest[:1] in (",", ";", ")", "") else ","
        return REFERENCES[match.group(1)].short + comma

    return _NUMBER.sub(named, _FILE.sub(named, text))


def cited(text: str) -> list[Reference]:
    """The source papers ``text`` cites by reference-text name or number, in order of first
    mention, each once (for a report's list of references)."""
    mentions = sorted(
        (m.start(), m.group(1)) for pattern in (_FILE, _NUMBER) for m in pattern.finditer(text)
    )
    keys = dict.fromkeys(key for _start, key in mentions)
    return [REFERENCES[key] for key in keys if key in REFERENCES]
