"""What every reader shares: the checks before a file is opened (it exists, is a regular file
of a supported extension, is not empty), reading errors as one sentence, and the refusal of blank
or duplicate column names and of a table with no records, each an
:class:`~microgui.core.errors.InvalidInput` naming the file.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from microgui.core.errors import InvalidInput
from microgui.core.io.extensions import SUPPORTED_EXTENSIONS

__all__: list[str] = []


def _check_readable(path: Path) -> None:
    name = path.name or str(path)
    if not path.exists():
        folder = (
            "the current folder"
            if str(path.parent) in ("", ".")
            else f"folder {str(path.parent)!r}"
        )
        raise InvalidInput(
            f"file {name!r} was not found in {folder}; check the file name and folder"
        )
    if path.is_dir():
        raise InvalidInput(f"{name!r} is a folder, not a file; choose a table file inside it")
    if not path.is_file():  # a FIFO, device or socket: reading it would block or never end
        raise InvalidInput(
            f"{name!r} is not a regular file (a FIFO, device or socket); save the table to a "
            "file and choose that file"
        )
    ext = path.suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        what = f"extension {path.suffix!r}" if path.suffix else "no extension"
        raise InvalidInput(
            f"file {name!r} has {what}, which microgui cannot read; supported are "
            f"{', '.join(SUPPORTED_EXTENSIONS)} (save the table in one of these formats)"
        )
    with suppress(OSError):
        if path.stat().st_size == 0:
            raise InvalidInput(
                f"file {name!r} is empty (0 bytes); choose the file that holds the table"
            )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _read_error(path, exc) from exc


def _read_error(path: Path, exc: OSError) -> InvalidInput:
    if isinstance(exc, PermissionError):
        return InvalidInput(
            f"file {path.name!r} cannot be opened (permission denied); check its permissions"
        )
    return InvalidInput(f"file {path.name!r} cannot be read ({exc.strerror or exc})")


def _check_columns(names: list[str], name: str, where: Callable[[int], str]) -> None:
    """Refuse blank and duplicate column names; ``where(i)`` names column ``i`` for the message."""
    for i, col in enumerate(names):
        if col.strip() == "":
            hint = (
                " (is there a delimiter at the end of the header line?)"
                if i == len(names) - 1 and len(names) > 1
                else ""
            )
            raise InvalidInput(
                f"{where(i)} of {name!r} has no name{hint}; give every column a name in the header"
            )
    seen: dict[str, int] = {}
    for i, col in enumerate(names):
        if col in seen:
            raise InvalidInput(
                f"{name!r} has two columns named {col!r} ({where(seen[col])} and {where(i)}); "
                "rename one of them so every column name is unique"
            )
        seen[col] = i


def _zero_records(name: str, what: str = "") -> InvalidInput:
    return InvalidInput(
        f"{what}{name!r} has a header but no records (zero data rows); "
        "choose the file that holds the data"
    )
