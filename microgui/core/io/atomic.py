"""Writing files atomically.

Writers go through a temporary file in the target folder, ``fsync`` and ``os.replace``, so a crash
or a full disk never leaves a half-written file under the final name, and they refuse to overwrite
the input file. Several files of one release are written all or none
(:func:`write_files_atomic`); targets are checked before anything is computed
(:func:`check_write_targets`).
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from microgui.core.errors import ExportRefused

__all__ = [
    "ProtectedPaths",
    "check_write_targets",
    "FileWriter",
    "EncodedWriter",
    "DerivedWriter",
    "write_files_atomic",
    "write_text_atomic",
]


#: What ``protect_from`` takes: one path, or a collection of paths (``None`` items are skipped).
ProtectedPaths = str | os.PathLike[str] | Iterable[str | os.PathLike[str] | None] | None

# Linux pseudo-file systems: a path that resolves into one is never replaced by an output.
_PSEUDO_ROOTS = ("proc", "sys")


def _same_file(a: Path, b: Path) -> bool:
    with suppress(OSError):  # exists() raises for a name too long
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _protected_paths(protect_from: ProtectedPaths) -> list[Path]:
    if protect_from is None:
        return []
    if isinstance(protect_from, (str, os.PathLike)):
        return [Path(protect_from)]
    return [Path(p) for p in protect_from if p is not None]


def _shown(text: str) -> str:
    """A path for a one-line message: repr, shortened in the middle when very long."""
    return repr(text if len(text) <= 80 else f"{text[:38]}…{text[-38:]}")


def _write_error(exc: OSError, target: Path, folder: Path) -> ExportRefused:
    code = exc.errno
    if code == errno.ENOSPC or code == getattr(errno, "EDQUOT", -1):
        return ExportRefused(
            f"the disk is full: {_shown(str(target))} could not be written (no space left on "
            "device); free some space or choose another folder"
        )
    if code in (errno.EACCES, errno.EPERM) or isinstance(exc, PermissionError):
        return ExportRefused(
            f"cannot write {_shown(str(target))}: permission denied in folder {str(folder)!r}; "
            "choose a folder you can write to"
        )
    if code == errno.EROFS:
        return ExportRefused(
            f"cannot write {_shown(str(target))}: folder {str(folder)!r} is on a read-only disk; "
            "choose another folder"
        )
    if code == errno.ENAMETOOLONG:
        return ExportRefused(
            f"cannot write {_shown(str(target))}: the file name is too long; choose a shorter name"
        )
    if isinstance(exc, IsADirectoryError):
        return ExportRefused(
            f"cannot write {_shown(str(target))}: it is a folder; choose a file name"
        )
    return ExportRefused(
        f"cannot write {_shown(str(target))} ({exc.strerror or exc}); choose another file name "
        "or folder"
    )


def _create_temp(folder: Path, name: str) -> tuple[int, Path]:
    # Like tempfile.NamedTemporaryFile(dir=folder, delete=False), but created with mode 0o666
    # minus the umask, so the final file gets the user's usual permissions rather than 0o600.
    # The name is short whatever the target's: a valid 250-character name must not fail
    # because of its temporary file (issue 12).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        candidate = folder / f".{name[:16]}~{secrets.token_hex(4)}.tmp"
        try:
            return os.open(candidate, flags, 0o666), candidate
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def _fsync_folder(folder: Path) -> None:
    if os.name == "nt":
        return  # folders cannot be opened for fsync on Windows
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _name_max(folder: Path) -> int:
    with suppress(OSError, ValueError, AttributeError):
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    return 255


def _special_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "a special file"


def _check_target(raw: str | os.PathLike[str], protected: Sequence[Path]) -> Path:
    """``raw`` as a Path once it is safe to replace; :class:`ExportRefused` otherwise."""
    text = os.fspath(raw)
    target = Path(text)
    if not text.strip():
        raise ExportRefused("no output file name was given; choose a file name")
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if text.endswith(seps) or target.name in ("", ".", ".."):
        raise ExportRefused(
            f"cannot write {_shown(text)}: it names a folder (it ends with {text[-1]!r}); choose "
            "a file name, not a folder"
        )
    for index, path in enumerate(protected):
        if _same_file(target, path):
            what = "the input file" if index == 0 else f"an input file of this run ({path.name!r})"
            raise ExportRefused(
                f"refusing to write {target.name!r}: it is {what}, and the original data must "
                "stay intact; choose another output name"
            )
    folder = target.parent
    size, limit = len(os.fsencode(target.name)), _name_max(folder if folder.is_dir() else Path("."))
    if size > limit:
        raise ExportRefused(
            f"cannot write {_shown(text)}: the file name is too long ({size} bytes, at most "
            f"{limit}); choose a shorter name"
        )
    if not folder.is_dir():
        if folder.exists():
            raise ExportRefused(
                f"cannot write {_shown(text)}: {str(folder)!r} is a file, not a folder; choose "
                "another folder"
            )
        raise ExportRefused(
            f"cannot write {_shown(text)}: folder {str(folder)!r} does not exist; create it or "
            "choose another folder"
        )
    try:
        mode: int | None = os.stat(target).st_mode  # follows a symlink to what it names
    except OSError:
        mode = None  # nothing there, or a dangling symlink: a new file
    if mode is not None and stat.S_ISDIR(mode):
        raise ExportRefused(f"cannot write {_shown(text)}: it is a folder; choose a file name")
    real = Path(os.path.realpath(target))
    if mode is not None and not stat.S_ISREG(mode):
        kind = _special_kind(mode)
    elif len(real.parts) > 1 and real.parts[0] == os.sep and real.parts[1] in _PSEUDO_ROOTS:
        kind = f"a system file in /{real.parts[1]}"
    else:
        return target
    raise ExportRefused(
        f"cannot write {_shown(text)}: it is not a regular file ({kind}); choose a file name "
        "in one of your folders"
    )


def check_write_targets(
    paths: Sequence[str | os.PathLike[str]], *, protect_from: ProtectedPaths = None
) -> list[Path]:
    """Check output paths before anything is computed or written; return them as Paths.

    Refused with :class:`ExportRefused` (one line, naming the path and what to do): a path that
    is the same file as one of ``protect_from`` (compared by inode: symlinks, hard links and
    other spellings included), a folder or a name ending in ``/``, a missing folder, a name
    longer than the file system allows, a non-regular file (device, FIFO, socket, or a symlink
    to one, or a file in ``/proc`` or ``/sys``), and two targets naming the same file. An
    existing regular file, or a symlink to one, is fine: the symlink itself is replaced by the
    new file, and the file it pointed to is left untouched.
    """
    protected = _protected_paths(protect_from)
    targets = [_check_target(path, protected) for path in paths]
    for i, first in enumerate(targets):
        for second in targets[i + 1 :]:
            if _same_file(first, second):
                raise ExportRefused(
                    f"{str(first)!r} and {str(second)!r} are the same file; give each output its "
                    "own name"
                )
    return targets


def _set_mode(tmp: Path, target: Path, private: bool, *, written: bool) -> None:
    """The temporary file's permissions: a private file (a pseudonym key) 0600 before a byte is
    written, whatever an older file's mode; any other keeps the mode of the file it replaces,
    once written."""
    if private and not written:
        os.chmod(tmp, 0o600)
    elif not private and written:
        with suppress(OSError):
            if target.exists():
                os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))  # keep the old permissions


def _write_temp(
    target: Path, write: Callable[[IO[str]], object], encoding: str, private: bool = False
) -> Path:
    """Write a flushed, fsynced temporary file beside ``target``; removed again on failure."""
    folder = target.parent
    tmp: Path | None = None
    try:
        fd, tmp = _create_temp(folder, target.name)
        _set_mode(tmp, target, private, written=False)
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        _set_mode(tmp, target, private, written=True)
        done, tmp = tmp, None
        return done
    except OSError as exc:
        raise _write_error(exc, target, folder) from exc
    finally:
        if tmp is not None:  # also on KeyboardInterrupt and the CLI's SIGTERM exception
            with suppress(OSError):
                os.unlink(tmp)


def _backup(target: Path) -> tuple[bool, Path | None]:
    """(whether ``target`` exists, a hard link keeping its old content, if one can be made)."""
    if not os.path.lexists(target):
        return False, None
    for _ in range(100):
        backup = target.parent / f".{target.name[:16]}~{secrets.token_hex(4)}.bak.tmp"
        try:
            os.link(target, backup, follow_symlinks=False)
            return True, backup
        except FileExistsError:
            continue
        except (OSError, NotImplementedError):
            break  # no hard links here: the file is replaced without a way back
    return True, None


@dataclass(frozen=True)
class FileWriter:
    """A writer of a binary release file (Excel, Parquet, SPSS, Stata) for
    :func:`write_files_atomic`: ``write`` gets the temporary file's path and writes the whole
    file there (a library that wants a path, not a text handle). ``what`` names the format in
    messages ("an Excel workbook")."""

    write: Callable[[Path], object]
    what: str


@dataclass(frozen=True)
class EncodedWriter:
    """A text writer for :func:`write_files_atomic` whose file has its own encoding (a CSV
    release in cp1252, say, beside its UTF-8 report)."""

    write: Callable[[IO[str]], object]
    encoding: str
    #: only its owner may read the file (0600, set before it is written): a key
    private: bool = False


@dataclass(frozen=True)
class DerivedWriter:
    """A file of a release made from the files written before it, for
    :func:`write_files_atomic`: ``make`` gets the temporary paths of the items before it (in
    order, not yet renamed) and returns the writer of this one. The run report uses it to state
    the SHA-256 of the release file it goes with, as written."""

    make: Callable[[Sequence[Path]], Callable[[IO[str]], object] | FileWriter | EncodedWriter]


def _write_temp_file(target: Path, writer: FileWriter) -> Path:
    """:func:`_write_temp` for a :class:`FileWriter`: the library writes the temporary path,
    which is then fsynced; an error of the library is an :class:`ExportRefused` naming the
    format, and the temporary file is removed."""
    folder = target.parent
    tmp: Path | None = None
    try:
        fd, tmp = _create_temp(folder, target.name)
        os.close(fd)
        try:
            writer.write(tmp)
        except (OSError, ExportRefused):
            raise
        except Exception as exc:  # the library's own errors (pyarrow, openpyxl, pyreadstat)
            full = ""
            with suppress(OSError):
                if shutil.disk_usage(folder).free < 16 * 1024 * 1024:
                    full = "the disk is full or nearly: free space, or write elsewhere; "
            raise ExportRefused(
                f"{target.name} could not be written as {writer.what}: {full}{exc}; choose "
                "another format (e.g. .csv) or fix the column named"
            ) from exc
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        _set_mode(tmp, target, False, written=True)
        done, tmp = tmp, None
        return done
    except OSError as exc:
        raise _write_error(exc, target, folder) from exc
    finally:
        if tmp is not None:
            with suppress(OSError):
                os.unlink(tmp)


def write_files_atomic(
    items: Sequence[
        tuple[
            str | os.PathLike[str],
            Callable[[IO[str]], object] | FileWriter | EncodedWriter | DerivedWriter,
        ]
    ],
    *,
    protect_from: ProtectedPaths = None,
    encoding: str = "utf-8",
) -> None:
    """Write several files as one release: all of them, or none of them changed.

    Every target is checked first (:func:`check_write_targets`), every temporary file is
    written before any is renamed, and when a rename fails after others succeeded, those are
    put back (the old files from hard links kept until the end, new ones removed). So a full
    disk, a refused target or a failed rename never leaves a protected CSV without its report,
    nor an old CSV replaced beside a failed report. Errors as
    :func:`~microgui.core.io.write_csv_atomic`.
    """
    targets = check_write_targets([path for path, _ in items], protect_from=protect_from)
    temps: list[Path] = []
    renamed: list[tuple[Path, bool, Path | None]] = []  # (target, existed, backup)
    backups: list[Path] = []
    committed = False
    try:
        for target, (_path, item) in zip(targets, items, strict=True):
            write = item.make(list(temps)) if isinstance(item, DerivedWriter) else item
            if isinstance(write, FileWriter):
                temps.append(_write_temp_file(target, write))
            elif isinstance(write, EncodedWriter):
                temps.append(_write_temp(target, write.write, write.encoding, write.private))
            else:
                temps.append(_write_temp(target, write, encoding))
        for target, tmp in zip(targets, list(temps), strict=True):
            existed, backup = _backup(target) if len(targets) > 1 else (True, None)
            if backup is not None:
                backups.append(backup)
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise _write_error(exc, target, target.parent) from exc
            temps.remove(tmp)
            renamed.append((target, existed, backup))
        committed = True
    finally:
        if not committed:
            for target, existed, backup in reversed(renamed):
                with suppress(OSError):
                    if backup is not None:
                        os.replace(backup, target)
                        backups.remove(backup)
                    elif not existed:
                        os.unlink(target)
        for leftover in [*temps, *backups]:
            with suppress(OSError):
                os.unlink(leftover)
    for folder in dict.fromkeys(t.parent for t in targets):
        _fsync_folder(folder)


def _atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[IO[str]], object],
    *,
    protect_from: ProtectedPaths,
    encoding: str = "utf-8",
) -> None:
    write_files_atomic([(path, write)], protect_from=protect_from, encoding=encoding)


def write_text_atomic(
    text: str,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
    encoding: str = "utf-8",
) -> None:
    """Write ``text`` to ``path`` atomically (no newline translation); errors as
    :func:`~microgui.core.io.write_csv_atomic`."""
    _atomic_write(
        path, lambda handle: handle.write(text), protect_from=protect_from, encoding=encoding
    )
