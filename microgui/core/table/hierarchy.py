"""Generalization hierarchies (``004_0ca91c7afa3e094f.txt`` §4, Definition 1, Figure 1).

A hierarchy is a tree over the values of one attribute: level 0 holds the values themselves, each
higher level a coarser generalization (``21 -> [20-30] -> [20-40] -> *``), and the top level one
root. microgui reads them in the ARX format and builds simple ones automatically.

**File format** (:func:`load_hierarchy`; the format of the ARX Data Anonymization Tool): a text
file, no header, one row per value: the value, then its generalizations from the most specific to
the most general, separated by ``;`` (a file without any ``;`` may use tabs or commas instead).
Every row has the same number of cells; CRLF and LF line ends, a UTF-8 byte-order mark, blank
lines, a ``;`` closing every row and a missing final newline are accepted; cells are stripped of
surrounding spaces. The height is the number of cells minus one. Rejected, with the file and line:
an empty file, a single column, an empty cell, rows of different lengths, a value listed twice with
different generalizations, and a node with two different parents (``A;X;*`` and ``B;X;Y``: ``X``
cannot generalize to both ``*`` and ``Y``). Nodes are identified by level *and* label, so
``Male;Male;*`` is fine. When the last column holds more than one label, a root ``*`` is added
above it (height + 1), because the distance of ``004`` §5.2 needs a common generalization of
every pair of values.

**Automatic hierarchies** (:func:`build_hierarchy`, :func:`automatic_hierarchy`), used when no
file is given for a quasi-identifier:

- ``intervals`` (continuous attributes): intervals aligned on multiples of a base width, the width
  doubling at each level, labelled in the style of ``004`` Table 1(b): ``[20-29]`` (integers,
  both ends included) or ``[0.5-1)`` (decimals, upper end excluded). The base width is a round
  number (1, 2 or 5 times a power of ten) at least the Freedman-Diaconis histogram width
  2·IQR·n^(-1/3) and at least range/512, so skewed columns still get fine bins where most
  values are.
- ``masking`` (codes such as ZIP codes): ``13053 -> 1305* -> 130** -> *****``.
- ``ordered`` (ordinal attributes): runs of 2, 4, 8 ... consecutive categories, ``[low-mid]``.
- ``flat`` (other nominal attributes): every value generalizes to ``*``.

In the three data-driven kinds a level that groups nothing (as many nodes as the level below) is
left out and the last level with more than one node is topped by the root, so the masking
hierarchy of the ZIP codes of ``004`` Table 1(a) is exactly ``13051;1305*;130**;*****``.
"""

from __future__ import annotations

import csv
import io
import math
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput
from microgui.core.table.dataset import SOURCE_ATTR, rows_text
from microgui.core.table.roles import AttributeKind

__all__ = [
    "Hierarchy",
    "HierarchyCoverage",
    "HierarchyKind",
    "hierarchy_coverage",
    "load_hierarchy",
    "build_hierarchy",
    "automatic_hierarchy",
    "value_key",
    "ROOT",
]

ROOT = "*"
HierarchyKind = Literal["intervals", "masking", "ordered", "flat"]
_MAX_BASE_BINS = 512


def value_key(value: object) -> str:
    """How a cell is matched against a hierarchy: its text, stripped, with 3.0 written as 3."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value).strip()


def _numeric_key(text: str) -> str | None:
    """Canonical text of a number (``'21.50'`` -> ``'21.5'``, ``'7.0'`` -> ``'7'``), else None."""
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return value_key(number)


@dataclass(frozen=True)
class Hierarchy:
    """A generalization hierarchy: for each value, its chain of generalizations up to the root.

    ``paths[i]`` is ``(value, level-1 label, ..., root)``; all paths have ``height + 1`` labels
    and end in the same root. ``name`` says where it came from (file name or automatic kind) and
    ``description`` is the sentence shown in run reports. Build one with :func:`load_hierarchy`,
    :func:`build_hierarchy` or :meth:`from_rows` (which validate); nodes are identified by
    (level, label).
    """

    paths: tuple[tuple[str, ...], ...]
    name: str = "hierarchy"
    description: str = ""
    # set by :meth:`from_rows` when the file's last column was not a single root
    added_root: bool = field(default=False)

    # ---- construction -------------------------------------------------------------------------

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Sequence[str]],
        name: str = "hierarchy",
        *,
        description: str = "",
        line_numbers: Sequence[int] | None = None,
    ) -> Hierarchy:
        """A validated hierarchy from rows ``value;generalization;...;root``.

        Raises :class:`InvalidInput` naming ``name`` and the line for every inconsistency listed
        in the module docstring. Identical repeated rows are kept once.
        """
        clean: list[tuple[str, ...]] = [tuple(str(c).strip() for c in row) for row in rows]
        while clean and all(len(r) > 1 and r[-1] == "" for r in clean):
            clean = [r[:-1] for r in clean]  # a ';' closing every row
        rows = clean
        lines = list(line_numbers) if line_numbers is not None else list(range(1, len(rows) + 1))
        if not rows:
            raise InvalidInput(
                f"hierarchy file {name} is empty; give one row per value: value;generalization;...;*"
            )
        width = len(rows[0])
        for row, line in zip(rows, lines, strict=True):
            if len(row) != width:
                raise InvalidInput(
                    f"hierarchy file {name}, line {line}: {len(row)} cell(s) where line {lines[0]} has "
                    f"{width}; every row must list the value and all its generalizations up to the root"
                )
            for j, cell in enumerate(row):
                if cell == "":
                    raise InvalidInput(
                        f"hierarchy file {name}, line {line}: cell {j + 1} is empty; fill in the "
                        "generalization or remove the row"
                    )
        if width < 2:
            raise InvalidInput(
                f"hierarchy file {name} has a single column; each row needs the value followed by its "
                "generalizations, separated by ';' (e.g. 13053;1305*;130**;*****)"
            )
        first_line: dict[str, int] = {}
        seen: dict[str, tuple[str, ...]] = {}
        parent: dict[tuple[int, str], tuple[str, int]] = {}
        paths: list[tuple[str, ...]] = []
        for row, line in zip(rows, lines, strict=True):
            value = row[0]
            if value in seen:
                if seen[value] != row:
                    raise InvalidInput(
                        f"hierarchy file {name}, line {line}: value {value!r} is listed again with "
                        f"different generalizations (line {first_line[value]}: {';'.join(seen[value])}; "
                        f"line {line}: {';'.join(row)}); keep one row per value"
                    )
                continue
            seen[value] = row
            first_line[value] = line
            for level in range(width - 1):
                node = (level, row[level])
                up = row[level + 1]
                known = parent.get(node)
                if known is None:
                    parent[node] = (up, line)
                elif known[0] != up:
                    raise InvalidInput(
                        f"hierarchy file {name}, line {line}: {row[level]!r} (level {level}) "
                        f"generalizes to {up!r} here but to {known[0]!r} on line {known[1]}; "
                        "every value and group must have one parent"
                    )
            paths.append(row)
        roots = {p[-1] for p in paths}
        added = False
        if len(roots) > 1:
            top = ROOT
            while top in roots:
                top += ROOT
            paths = [p + (top,) for p in paths]
            added = True
        return cls(tuple(paths), name=name, description=description, added_root=added)

    # ---- structure ----------------------------------------------------------------------------

    @property
    def height(self) -> int:
        """Number of generalization steps from a value to the root (``H`` of ``004`` eq. 1)."""
        return len(self.paths[0]) - 1

    @cached_property
    def values(self) -> tuple[str, ...]:
        """The values (leaves, level 0), in file order."""
        return tuple(p[0] for p in self.paths)

    @cached_property
    def generalizations(self) -> Mapping[str, tuple[str, ...]]:
        """value -> its generalizations, level 1 up to the root."""
        return {p[0]: p[1:] for p in self.paths}

    @property
    def root(self) -> str:
        return self.paths[0][-1]

    @cached_property
    def levels(self) -> tuple[tuple[str, ...], ...]:
        """The labels of the nodes at each level (level 0 = the values), in first-seen order."""
        return tuple(
            tuple(dict.fromkeys(p[level] for p in self.paths)) for level in range(self.height + 1)
        )

    @cached_property
    def leaf_counts(self) -> Mapping[tuple[int, str], int]:
        """(level, label) -> number of values under that node (``L_v`` of ``004`` eq. 7)."""
        counts: dict[tuple[int, str], int] = {}
        for p in self.paths:
            for level, label in enumerate(p):
                counts[(level, label)] = counts.get((level, label), 0) + 1
        return counts

    def __contains__(self, value: object) -> bool:
        return value_key(value) in self._leaf_index

    def __len__(self) -> int:
        return len(self.paths)

    # ---- compiled form used by the algorithms -------------------------------------------------

    @cached_property
    def _leaf_index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.values)}

    @cached_property
    def _numeric_leaf_index(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i, v in enumerate(self.values):
            key = _numeric_key(v)
            if key is not None:
                out.setdefault(key, i)
        return out

    @cached_property
    def _nodes(self) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
        """(ancestors, levels, labels) over global node ids; leaves are ids 0..len-1.

        ``ancestors[g, L]`` is the id of node g's ancestor at level L (itself at its own level)
        and -1 below its level.
        """
        h = self.height
        ids: dict[tuple[int, str], int] = {}
        labels: list[str] = []
        levels: list[int] = []
        for level in range(h + 1):
            for label in self.levels[level]:
                ids[(level, label)] = len(labels)
                labels.append(label)
                levels.append(level)
        anc = np.full((len(labels), h + 1), -1, dtype=np.int64)
        for p in self.paths:
            chain = [ids[(level, label)] for level, label in enumerate(p)]
            for level, g in enumerate(chain):
                anc[g, level:] = chain[level:]
        return anc, np.asarray(levels, dtype=np.int64), tuple(labels)

    @property
    def ancestors(self) -> np.ndarray:
        """(n_nodes, height + 1) ancestor ids (see ``_nodes``); leaves are ids 0..len-1."""
        return self._nodes[0]

    @property
    def node_levels(self) -> np.ndarray:
        return self._nodes[1]

    @property
    def node_labels(self) -> tuple[str, ...]:
        return self._nodes[2]

    @cached_property
    def node_leaf_counts(self) -> np.ndarray:
        """Number of values under each node."""
        anc = self.ancestors
        counts = np.zeros(len(self.node_labels), dtype=np.int64)
        for level in range(self.height + 1):
            np.add.at(counts, anc[: len(self), level], 1)
        return counts

    @cached_property
    def node_numeric_span(self) -> np.ndarray | None:
        """(n_nodes, 2) smallest and largest value under each node when every value is a
        number, else None (then the attribute counts as categorical for ``004`` eq. 6-7)."""
        try:
            leaves = np.array([float(v) for v in self.values])
        except ValueError:
            return None
        if not np.isfinite(leaves).all():
            return None
        anc = self.ancestors
        n_nodes = len(self.node_labels)
        lo = np.full(n_nodes, np.inf)
        hi = np.full(n_nodes, -np.inf)
        for level in range(self.height + 1):
            np.minimum.at(lo, anc[: len(self), level], leaves)
            np.maximum.at(hi, anc[: len(self), level], leaves)
        return np.column_stack([lo, hi])

    def encode(self, values: Iterable[object], column: str = "") -> np.ndarray:
        """Leaf id of each value (its index in :attr:`values`).

        A value is matched by its text (:func:`value_key`), else as a number (``21.0`` matches
        ``21``). Raises :class:`InvalidInput` naming the column, the first unmatched value and
        its row, and what to do.
        """
        series = pd.Series(list(values), dtype=object)
        codes_u, uniques = pd.factorize(series, use_na_sentinel=False)
        keys = [value_key(u) for u in uniques]
        mapped = self._leaf_ids(keys)
        out: np.ndarray = np.asarray(mapped[codes_u], dtype=np.int64)
        bad = np.flatnonzero(out < 0)
        if len(bad):
            n_bad = len({keys[j] for j in codes_u[bad]})
            col = f"column {column!r}" if column else "the column"
            # A column of a table read from a file knows its file and lines (dataset.LINES_ATTR).
            attrs = values.attrs if isinstance(values, (pd.Series, pd.DataFrame)) else {}
            source = attrs.get(SOURCE_ATTR)
            if source:
                col += f" of {source}"
            first = bad[:1]
            where = rows_text(values, first) if attrs else f"row {bad[0] + 1}"  # type: ignore[arg-type]
            raise InvalidInput(
                f"{col} holds {keys[codes_u[bad[0]]]!r} ({where}), which is not in its "
                f"hierarchy {self.name} ({n_bad} value(s) missing in {len(bad)} row(s)); add a row "
                "'value;generalization;...;root' for each missing value to the hierarchy file, or "
                "give no hierarchy for this column to use an automatic one"
            )
        return out

    def _leaf_ids(self, keys: Sequence[str]) -> np.ndarray:
        """Leaf id of each :func:`value_key` text (-1: not in the hierarchy), matched as
        :meth:`encode` says: by text, else as a number."""
        leaf = self._leaf_index
        mapped = np.array([leaf.get(k, -1) for k in keys], dtype=np.int64)
        for i in np.flatnonzero(mapped < 0):
            num = _numeric_key(keys[int(i)])
            if num is not None and num in self._numeric_leaf_index:
                mapped[i] = self._numeric_leaf_index[num]
        return mapped

    def lca(self, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """Lowest common generalization (node id) of nodes ``a`` and ``b``, element-wise."""
        anc = self.ancestors
        a_anc = anc[np.asarray(a)]
        b_anc = anc[np.asarray(b)]
        out: np.ndarray = np.asarray(a_anc[..., -1]).copy()
        for level in range(self.height - 1, -1, -1):
            same = (a_anc[..., level] == b_anc[..., level]) & (a_anc[..., level] >= 0)
            out = np.where(same, a_anc[..., level], out)
        return out

    def lowest_common_generalization(self, values: Iterable[object]) -> str:
        """The label of the lowest node that generalizes every one of ``values``."""
        leaves = self.encode(values)
        if not len(leaves):
            raise ValueError("no values")
        anc = self.ancestors[leaves]
        for level in range(self.height + 1):
            if (anc[:, level] == anc[0, level]).all():
                return self.node_labels[int(anc[0, level])]
        raise AssertionError("a hierarchy has one root")  # pragma: no cover

    def to_rows(self) -> list[str]:
        """The hierarchy in the file format, one ``;``-joined row per value."""
        return [";".join(p) for p in self.paths]


# ---- how a column meets a hierarchy ----------------------------------------------------------


@dataclass(frozen=True)
class HierarchyCoverage:
    """How the values of a column meet a hierarchy: what the app shows when one is attached.

    ``missing`` are the column's distinct values that are not values (level 0) of the
    hierarchy, matched as :meth:`Hierarchy.encode` matches them (text, else number), most
    frequent first, and ``missing_rows`` the number of rows holding each; ``where`` says where
    the first of them are (``'line 4, 9'`` of the file, or ``'row 3'``). A run refuses a column
    with such values, as ``microgui protect --hierarchy`` does (:meth:`Hierarchy.encode`), so
    the user adds them to the hierarchy file. ``blank_rows`` counts missing cells, which are not
    matched (the run reports them as for any quasi-identifier); ``n_values`` the distinct
    non-missing values; ``unused`` the hierarchy's values absent from the column (harmless:
    ARX's age hierarchy lists 1..100).
    """

    column: str
    hierarchy: str
    n_rows: int
    n_values: int
    missing: tuple[str, ...] = ()
    missing_rows: tuple[int, ...] = ()
    where: str = ""
    blank_rows: int = 0
    unused: int = 0

    @property
    def complete(self) -> bool:
        """Every non-missing value of the column is in the hierarchy."""
        return not self.missing

    def summary(self, limit: int = 5) -> str:
        """One line for the user: complete, or which values are missing and what to do."""
        col = repr(self.column) if self.column else "the column"
        if self.complete:
            text = f"all {self.n_values:,} values of {col} are in hierarchy {self.hierarchy}" + (
                f" ({self.unused:,} hierarchy value(s) do not occur)" if self.unused else ""
            )
        else:
            shown = ", ".join(
                f"{v!r} ({n:,} row{'s' if n != 1 else ''})"
                for v, n in zip(self.missing[:limit], self.missing_rows[:limit], strict=False)
            )
            more = len(self.missing) - limit
            text = (
                f"{len(self.missing):,} of {self.n_values:,} values of {col} are not in "
                f"hierarchy {self.hierarchy} ({sum(self.missing_rows):,} rows: {self.where}): "
                f"{shown}"
                + (f" and {more:,} more" if more > 0 else "")
                + "; a run refuses them: add a row 'value;generalization;...;root' for each to "
                "the hierarchy file and attach it again, or remove the hierarchy to use an "
                "automatic one"
            )
        if self.blank_rows:
            text += f"; {self.blank_rows:,} row(s) have no value"
        return text


def hierarchy_coverage(
    hierarchy: Hierarchy, values: pd.Series | Sequence[object], column: str = ""
) -> HierarchyCoverage:
    """Which values of a column are missing from ``hierarchy`` (see :class:`HierarchyCoverage`).

    One pass over the distinct values (``pd.factorize``): milliseconds for the 30,162 records
    of Adult.
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    blank = series.isna().to_numpy()
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    keys = [value_key(u) for u in uniques]
    ids = hierarchy._leaf_ids(keys)
    counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
    absent = np.flatnonzero(ids < 0)
    absent = absent[np.argsort(-counts[absent], kind="stable")]
    where = ""
    if len(absent):
        rows = np.flatnonzero(np.isin(codes, absent))
        where = rows_text(series, rows, limit=3)
    used = set(int(i) for i in ids[ids >= 0])
    return HierarchyCoverage(
        column=column or str(series.name or ""),
        hierarchy=hierarchy.name,
        n_rows=len(series),
        n_values=len(uniques),
        missing=tuple(keys[i] for i in absent),
        missing_rows=tuple(int(counts[i]) for i in absent),
        where=where,
        blank_rows=int(blank.sum()),
        unused=len(hierarchy) - len(used),
    )


# ---- reading --------------------------------------------------------------------------------


def _decode(raw: bytes) -> str:
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


#: The largest hierarchy file read (a hierarchy lists each value once: millions of values fit).
MAX_HIERARCHY_BYTES = 256 * 1024 * 1024


def load_hierarchy(path: str | Path) -> Hierarchy:
    """Read a hierarchy file in the ARX format (see the module docstring).

    Raises :class:`InvalidInput` naming the file (and the line) when it cannot be read or is
    not a consistent hierarchy.
    """
    p = Path(path)
    try:
        info = p.stat()
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_HIERARCHY_BYTES:
            raise InvalidInput(
                f"hierarchy file {p.name} is {info.st_size:,} bytes, more than a hierarchy can be "
                f"({MAX_HIERARCHY_BYTES:,}); choose the hierarchy file of this column"
            )
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            raise InvalidInput(
                f"hierarchy file {p.name} is not a regular file (a FIFO, device or socket); save "
                "the hierarchy to a file and choose that file"
            )
        with p.open("rb") as fh:
            raw = fh.read(MAX_HIERARCHY_BYTES + 1)
        if len(raw) > MAX_HIERARCHY_BYTES:
            raise InvalidInput(
                f"hierarchy file {p.name} is larger than a hierarchy can be "
                f"({MAX_HIERARCHY_BYTES:,} bytes); choose the hierarchy file of this column"
            )
    except FileNotFoundError:
        raise InvalidInput(
            f"hierarchy file {p.name} was not found in folder {str(p.parent)!r}; check the path "
            "given for the column's hierarchy"
        ) from None
    except IsADirectoryError:
        raise InvalidInput(
            f"hierarchy file {p.name} is a folder, not a file; choose the hierarchy file in it"
        ) from None
    except OSError as exc:
        raise InvalidInput(
            f"hierarchy file {p.name} cannot be read ({exc.strerror or exc}); check its permissions"
        ) from None
    text = _decode(raw)
    if "\x00" in text:
        raise InvalidInput(
            f"hierarchy file {p.name} is not a text file; save it as text, one row per value: "
            "value;generalization;...;*"
        )
    delimiter = ";" if ";" in text else ("\t" if "\t" in text else ",")
    rows: list[list[str]] = []
    lines: list[int] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue  # blank line
            rows.append(cells)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InvalidInput(f"hierarchy file {p.name}, line {reader.line_num}: {exc}") from None
    hierarchy = Hierarchy.from_rows(rows, name=p.name, line_numbers=lines)
    note = ", root '*' added above the last column" if hierarchy.added_root else ""
    return Hierarchy(
        hierarchy.paths,
        name=p.name,
        description=f"file {p.name} (height {hierarchy.height}, {len(hierarchy)} values{note})",
        added_root=hierarchy.added_root,
    )


# ---- automatic hierarchies ------------------------------------------------------------------


def _number_text(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.12g}"


def _nice_ceil(x: float) -> float:
    """Smallest of 1, 2, 5 times a power of ten that is >= x (x > 0)."""
    exp = math.floor(math.log10(x))
    for mult in (1, 2, 5, 10):
        w = mult * 10.0**exp
        if w >= x * (1 - 1e-12):
            return w
    return 10.0 ** (exp + 1)  # pragma: no cover


def _default_width(numbers: np.ndarray) -> float:
    span = float(numbers.max() - numbers.min())
    q75, q25 = np.percentile(numbers, [75, 25])
    iqr = float(q75 - q25)
    fd = 2.0 * iqr * len(numbers) ** (-1.0 / 3.0) if iqr > 0 else span / 32.0
    return _nice_ceil(max(fd, span / _MAX_BASE_BINS))


def _grouping_levels(
    leaves: Sequence[str], levels: Iterable[Sequence[str]]
) -> list[tuple[str, ...]]:
    """Rows value;level...;root keeping only levels that group (fewer nodes than below) and
    stopping below the first level with a single node."""
    kept: list[Sequence[str]] = []
    n_prev = len(set(leaves))
    for labels in levels:
        n = len(set(labels))
        if n <= 1:
            break
        if n < n_prev:
            kept.append(labels)
            n_prev = n
    return [(leaf, *(lab[i] for lab in kept), ROOT) for i, leaf in enumerate(leaves)]


def _interval_rows(
    keys: Sequence[str], numbers: np.ndarray, base_width: float
) -> list[tuple[str, ...]]:
    integral = bool(np.all(np.floor(numbers) == numbers)) and float(base_width).is_integer()
    levels: list[list[str]] = []
    width = float(base_width)
    span = float(numbers.max() - numbers.min())
    # The bin at the base width is computed once and coarser bins by integer halving of its
    # index, so that every interval nests in the one above (a tolerance applied per level put
    # -6e-05 below 0 at one width and above it at another: two parents).
    index = np.floor(numbers / width + 1e-9).astype(np.int64)
    factor = 1
    while True:
        lo = np.floor_divide(index, factor) * (float(base_width) * factor)
        if integral:
            labels = [f"[{_number_text(a)}-{_number_text(a + width - 1)}]" for a in lo]
        else:
            labels = [f"[{_number_text(a)}-{_number_text(a + width)})" for a in lo]
        levels.append(labels)
        # Stop at one interval, or once the intervals are wider than the data; doubling further
        # cannot merge a negative bin with a non-negative one (floor division keeps them -1
        # and 0), which with a tiny span (1e-195) took ~650 doublings and overflowed int64.
        spread = int(index.max()) - int(index.min()) + 1
        if len(set(labels)) <= 1 or width > 4 * span + 1 or factor > 4 * spread:
            break
        width *= 2
        factor *= 2
    return _grouping_levels(keys, levels)


def build_hierarchy(
    values: Iterable[object],
    kind: HierarchyKind,
    *,
    base_width: float | None = None,
    name: str | None = None,
) -> Hierarchy:
    """An automatic hierarchy over the distinct ``values`` (see the module docstring).

    ``kind``: ``"intervals"`` (numbers; ``base_width`` overrides the automatic width),
    ``"masking"`` (codes of equal length), ``"ordered"`` (``values`` in their order, lowest
    first; runs of consecutive categories) or ``"flat"``. Raises :class:`InvalidInput` when the
    values do not suit the kind.
    """
    vals = list(values)
    keys = list(dict.fromkeys(value_key(v) for v in vals))
    if not keys:
        raise InvalidInput("cannot build a hierarchy without values")
    label = name or f"automatic {kind}"
    if kind == "flat" or len(keys) == 1:
        top = "*" * len(keys[0]) if kind == "masking" and keys[0] else ROOT
        rows: list[tuple[str, ...]] = [(k, top) for k in keys]
        desc = f"automatic: every value generalizes to {ROOT}"
        return Hierarchy.from_rows(rows, label, description=desc)
    if kind == "intervals":
        numbers_all = []
        for v in vals:
            num = _numeric_key(value_key(v))
            if num is None:
                raise InvalidInput(
                    f"{label}: intervals need numbers, but {value_key(v)!r} is not a number"
                )
            numbers_all.append(float(num))
        arr = np.asarray(numbers_all, dtype=np.float64)
        if base_width is None:
            width = _default_width(arr)
        elif base_width > 0:
            width = float(base_width)
        else:
            raise InvalidInput(f"{label}: the base width must be > 0, not {base_width}")
        # one leaf per distinct number; its label is the canonical text of the number
        distinct = np.unique(arr)
        leaf_keys = [value_key(float(x)) for x in distinct]
        rows = _interval_rows(leaf_keys, distinct, width)
        # values given as other text of the same number (21.50) still match through encode()
        desc = (
            f"automatic: intervals of width {_number_text(width)}, doubling at each level "
            f"(height {len(rows[0]) - 1})"
        )
        return Hierarchy.from_rows(rows, label, description=desc)
    if kind == "masking":
        lengths = {len(k) for k in keys}
        if len(lengths) != 1:
            raise InvalidInput(
                f"{label}: masking needs codes of one length, but lengths {sorted(lengths)} occur"
            )
        size = lengths.pop()
        levels = [[k[: size - i] + "*" * i for k in keys] for i in range(1, size)]
        rows = [r[:-1] + ("*" * size,) for r in _grouping_levels(keys, levels)]
        desc = f"automatic: digits masked from the right (height {len(rows[0]) - 1})"
        return Hierarchy.from_rows(rows, label, description=desc)
    if kind == "ordered":
        levels = []
        size = 2
        while size < 2 * len(keys):
            group = []
            for i in range(len(keys)):
                start = (i // size) * size
                stop = min(start + size, len(keys)) - 1
                group.append(keys[start] if start == stop else f"[{keys[start]}-{keys[stop]}]")
            levels.append(group)
            size *= 2
        rows = _grouping_levels(keys, levels)
        desc = f"automatic: runs of consecutive categories, doubling (height {len(rows[0]) - 1})"
        return Hierarchy.from_rows(rows, label, description=desc)
    raise ValueError(f"unknown hierarchy kind {kind!r}")


def _looks_like_codes(keys: Sequence[str]) -> bool:
    lengths = {len(k) for k in keys}
    return len(lengths) == 1 and lengths.pop() >= 3 and all(k.isdigit() for k in keys)


def automatic_hierarchy(
    values: Iterable[object],
    kind: AttributeKind,
    order: Sequence[str] | None = None,
    *,
    name: str | None = None,
) -> Hierarchy:
    """The hierarchy microgui uses for a quasi-identifier given without a hierarchy file.

    Continuous: ``intervals``; ordinal: ``ordered`` over ``order`` (else the values' order of
    appearance); nominal: ``masking`` when every value is a digit code of one length (at least 3
    digits, like ZIP codes), else ``flat``.
    """
    vals: Any = list(values)
    if kind is AttributeKind.CONTINUOUS:
        return build_hierarchy(vals, "intervals", name=name)
    if kind is AttributeKind.ORDINAL:
        cats = list(order) if order is not None else list(dict.fromkeys(value_key(v) for v in vals))
        return build_hierarchy(cats, "ordered", name=name)
    keys = list(dict.fromkeys(value_key(v) for v in vals))
    return build_hierarchy(keys, "masking" if _looks_like_codes(keys) else "flat", name=name)
