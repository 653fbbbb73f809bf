"""The fingerprint of the file a table was read from: its SHA-256, kept in ``frame.attrs``
for the release report.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["FINGERPRINT_ATTR", "file_sha256"]


#: ``DataFrame.attrs`` key of the fingerprint of the file a table was read from (issue 18, the
#: release report): {"file": name, "sha256": hex digest of its bytes, "bytes": size}. Taken when
#: the table is read, so a file changed afterwards does not change what the report says was
#: protected. Never a value of the table.
FINGERPRINT_ATTR = "microgui.fingerprint"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes as hex (read in 1 MiB pieces), what ``sha256sum`` prints."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for piece in iter(lambda: handle.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()
