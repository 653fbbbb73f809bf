"""Reading a small side file of a run (a roles file today; hierarchies, mapping files and plans
alike): never a FIFO, device or socket (reading one blocks or never ends: ``--roles /dev/zero``
filled the memory, issue 27), never more than the bytes such a file can hold, and an error that
names the file and says what to do. Data tables have their own readers (:mod:`microgui.core.io`),
which apply the same rule."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from microgui.core.errors import InvalidInput, MicroguiError

__all__ = ["read_side_file"]


def read_side_file(
    path: str | os.PathLike[str],
    what: str,
    max_bytes: int,
    error: type[MicroguiError] = InvalidInput,
) -> bytes:
    """The bytes of the side file ``path`` (``what`` names it in messages: "roles file"),
    read only when it is a regular file of at most ``max_bytes``; raises ``error`` naming it."""
    p = Path(path)
    name = p.name or str(p)
    try:
        info = p.stat()
        if stat.S_ISDIR(info.st_mode):
            raise error(f"the {what} {name!r} is a folder, not a file; choose the file in it")
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"the {what} {name!r} is not a regular file (a FIFO, device or socket); save it "
                "to a file and choose that file"
            )
        if info.st_size > max_bytes:
            raise error(
                f"the {what} {name!r} is {info.st_size:,} bytes, more than a {what} can be "
                f"({max_bytes:,}); check that you chose the right file"
            )
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(
            f"the {what} {name!r} was not found in folder {str(p.parent)!r}; check the path"
        ) from None
    except OSError as exc:
        raise error(
            f"cannot read the {what} {name!r} ({exc.strerror or exc}); check its permissions"
        ) from None
    if len(raw) > max_bytes:  # grew while being read
        raise error(f"the {what} {name!r} is larger than a {what} can be ({max_bytes:,} bytes)")
    return raw
