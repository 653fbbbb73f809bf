"""Arrays whose memory a run lends out while nothing reads them, rebuilt the same afterwards.

Issue 33 (the 1,000,000 x 10 command's peak resident memory <= 4x its CSV): the z-scores of a
run (:attr:`~microgui.core.table.dataset.QIMatrix.continuous`, 80 MB there) are read by the
kernel only to build its own layout, and by the IL bound only to centre them; for the minutes
that follow they sit unread beside the arrays made of them, at the command's peak. Two sides
cooperate:

- the *owner* of an array, who knows that no other thread reads it and how to write it again
  with the same arithmetic (hence the same bits), declares it spare for a stretch of code:
  ``with droppable(array, rebuild): ...``;
- code inside that stretch which no longer needs the array's contents says so for a block:
  ``with borrowed(array) as mine:`` (when ``mine``, the block may write the array as scratch
  space) or ``with dropped(array):`` (its pages go back to the system, Linux
  ``madvise(MADV_DONTNEED)``: a private anonymous page then reads as zeros and holds no memory
  until written). Either way ``rebuild()`` writes the array again on leaving the block, also
  when the block raises (a cancelled run). For an array not declared spare nothing happens.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar

import numpy as np

__all__ = ["borrowed", "droppable", "dropped"]

_PAGE = mmap.PAGESIZE

#: The arrays declared spare in this thread's context, with their rebuild, and whether each is
#: lent now (a list of one bool: a nested ``borrowed`` of the same array gets nothing).
_SPARE: ContextVar[tuple[tuple[np.ndarray, Callable[[], None], list[bool]], ...]] = ContextVar(
    "microgui_spare", default=()
)


@contextlib.contextmanager
def droppable(array: np.ndarray, rebuild: Callable[[], None]) -> Iterator[None]:
    """Inside the block, ``array``'s contents may be dropped or overwritten by code that no
    longer needs them (:func:`borrowed`, :func:`dropped`); ``rebuild()`` writes them again, the
    same bits. The caller guarantees that no other thread reads ``array`` meanwhile (threads
    started inside do not see the declaration: a context variable). Only an array owning a
    writable C-contiguous buffer is declared; for any other the block runs as it is."""
    if not (array.flags.c_contiguous and array.flags.writeable and array.flags.owndata):
        yield
        return
    token = _SPARE.set((*_SPARE.get(), (array, rebuild, [False])))
    try:
        yield
    finally:
        _SPARE.reset(token)


@contextlib.contextmanager
def borrowed(array: np.ndarray) -> Iterator[bool]:
    """The caller does not read ``array``'s contents inside the block, except what it writes
    there itself. Yields True when its owner declared it :func:`droppable`: the block may then
    use it as scratch space, and it is rebuilt on leaving the block."""
    entry = _spare_entry(array)
    if entry is None or entry[2][0]:
        yield False
        return
    _owner, rebuild, lent = entry
    lent[0] = True
    try:
        yield True
    finally:
        lent[0] = False
        rebuild()


@contextlib.contextmanager
def dropped(array: np.ndarray) -> Iterator[bool]:
    """The caller does not read ``array`` inside the block: when its owner declared it
    :func:`droppable`, its pages are given back for the block (Linux) and it is rebuilt on
    leaving it. Yields whether they were."""
    if not sys.platform.startswith("linux"):
        yield False
        return
    with borrowed(array) as mine:
        yield mine and _drop_pages(array)


def _spare_entry(
    array: np.ndarray,
) -> tuple[np.ndarray, Callable[[], None], list[bool]] | None:
    """The declaration covering exactly ``array``'s buffer (the owner's array or a view of all
    of it, e.g. ``np.asarray`` of it), if any."""
    start = array.__array_interface__["data"][0]
    for entry in _SPARE.get():
        owner = entry[0]
        if (
            owner.__array_interface__["data"][0] == start
            and owner.nbytes == array.nbytes
            and array.flags.c_contiguous
        ):
            return entry
    return None


def _drop_pages(array: np.ndarray) -> bool:
    """Give back the whole pages inside ``array``'s buffer (Linux); False when none is."""
    start = array.__array_interface__["data"][0]
    first = -(-start // _PAGE) * _PAGE
    last = (start + array.nbytes) // _PAGE * _PAGE
    if last <= first:
        return False
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return False
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return bool(madvise(first, last - first, mmap.MADV_DONTNEED) == 0)
