"""Pseudonyms instead of deleted identifiers (issue 18, item 4; ARX #110/#449).

An identifier column is normally left out of a release. With ``--pseudonymize COL`` (the API's
``pseudonymize=``) it is released instead as *pseudonyms*: each distinct value of the column gets
a random token ``PSN-`` + 16 hexadecimal digits drawn from the operating system's cryptographic
generator (:mod:`secrets`), the same token for every record holding that value (so the records
of one person stay linked); missing cells (empty, ``NA``, ``N/A``, ``NaN``, ``.``: the app's
policy, :func:`~microgui.core.dataset.is_missing`) stay missing, written empty. A token is drawn, never computed from the
value: no hash, no seed, nothing of the original can be derived from it, and a second release of
the same table gets other tokens (so two releases cannot be linked through them either; a
release with pseudonyms is therefore not byte-reproducible).

The **key** (original value -> pseudonym) is the only way back; it is written only on request
(``--pseudonym-key FILE``), as a file of its own (CSV: column, original, pseudonym), with the
release and atomically, never into the report. The report names the pseudonymised columns and
how many distinct values each had (never a value), the key file's name if one was written, and
warns that pseudonymised data are still personal data (GDPR Art. 4(5), Recital 26): whoever holds
the key, or can link the released records otherwise, can re-identify them.

The release check (:func:`microgui.core.export.check_export`) refuses an identifier column in a
release; a pseudonymised column passes only in the form made here: every cell a token of this
pattern or missing, none equal to a value of the original column.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

import pandas as pd

from microgui.core.dataset import is_missing
from microgui.core.errors import ExportRefused
from microgui.core.release import is_missing_value

__all__ = [
    "PSEUDONYM_PATTERN",
    "PSEUDONYM_WARNING",
    "pseudonymize",
    "check_pseudonyms",
    "key_frame",
]

#: Every pseudonym: ``PSN-`` and 16 lower-case hexadecimal digits (64 random bits).
PSEUDONYM_PATTERN = re.compile(r"PSN-[0-9a-f]{16}")
PSEUDONYM_WARNING = (
    "pseudonymised data are still personal data (GDPR Art. 4(5), Recital 26): whoever holds the "
    "key file, or can link the released records to other data, can re-identify people; keep the "
    "key apart from the release and release the table only as personal data"
)


def pseudonymize(values: pd.Series) -> tuple[pd.Series, dict[str, str]]:
    """(the column as pseudonyms, {original value as text: pseudonym}). Each distinct value
    gets its own random token; missing cells stay missing (None)."""
    # the policy of the whole app: empty, NA, N/A, NaN, nan, "."
    missing = is_missing(values)
    cells = values.tolist()
    originals = {_text(v) for v, m in zip(cells, missing, strict=True) if not m}
    key: dict[str, str] = {}
    used: set[str] = set()
    for original in sorted(originals):
        while True:
            token = "PSN-" + secrets.token_hex(8)
            if token not in used and token not in originals:
                break
        used.add(token)
        key[original] = token
    out = [None if m else key[_text(v)] for v, m in zip(cells, missing, strict=True)]
    return pd.Series(out, index=values.index, name=values.name, dtype=object), key


def check_pseudonyms(released: pd.Series, original: pd.Series) -> None:
    """Refuse (:class:`ExportRefused`) a pseudonymised column that is not in the form
    :func:`pseudonymize` makes: a cell that is no token, or a token equal to an original value."""
    name = str(released.name)
    originals = {_text(v) for v in original.tolist() if not is_missing_value(v)}
    for row, value in enumerate(released.tolist()):
        if is_missing_value(value):
            continue
        if not isinstance(value, str) or not PSEUDONYM_PATTERN.fullmatch(value):
            raise ExportRefused(
                f"column {name!r} (identifier) is to be released as pseudonyms, but record "
                f"{row + 1:,} holds something else; nothing was written"
            )
        if value in originals:
            raise ExportRefused(
                f"column {name!r}: a pseudonym equals an original value; nothing was written"
            )


def key_frame(keys: dict[str, dict[str, str]], columns: Sequence[str]) -> pd.DataFrame:
    """The key file's table: one row per (column, original value), in column order."""
    rows = [
        (column, original, token)
        for column in columns
        for original, token in keys.get(column, {}).items()
    ]
    return pd.DataFrame(rows, columns=["column", "original", "pseudonym"], dtype=object)


def _text(value: object) -> str:
    """A value as the key file writes it: 3.0 as 3."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
