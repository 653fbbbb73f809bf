"""Partitioned runs on a Dask cluster: tables that never pass through the client (issue 17).

``microgui protect INPUT -o OUT --engine dask --scheduler tcp://HOST:8786 --block-size N``
(:func:`protect_partitioned`) reads INPUT in partitions **on the workers**, places every record
in a spatially coherent block by one global split, moves the records to their blocks on the
cluster, protects each block there and writes the release in partitions. The client (the
machine running the command) holds a sample of the records and the blocks' reports, never the
table.

**Input.** A Parquet file (its row groups in partitions of about :data:`PARQUET_PART_ROWS`
records), a CSV/TSV/TXT file, or a folder of such files, all of one format (names starting with
``.`` or ``_`` are skipped, as Spark and Dask write them): one partition per CSV file, read by
microgui's own reader (:func:`microgui.core.io.read_frame`: the same encoding and delimiter
detection, text kept as text, the same one-line errors with the file's line numbers). To read a
large CSV in parallel, give it as a folder of several files, or convert it to Parquet. Every
worker must see the input at the same path as the client (a shared file system).

**What is computed where.** The workers read their partitions and check the quasi-identifiers
(the checks of a local run, naming the file), and return per column the count, mean and sum of
squared deviations (combined on the client, Chan et al.'s pairwise update: the z-scores' mean
and standard deviation) and the decimals the values are written with (for the clean numbers of
:mod:`microgui.core.table.numbers`). The global split into blocks is computed on the client from a
sample of :data:`SAMPLE_ROWS` records (drawn on the workers, each partition in proportion to
its size): recursive principal-axis splits as :func:`microgui.core.runs.scale.block_rows` makes
them, each node keeping its axis and a cut value between the sample's two middle scores; the
workers then apply that tree to every record. Records whose score equals a cut (tied data) go
to the low side with the sample's own share, chosen by a hash of the record number, so that the
assignment is deterministic. The sample's block sizes are estimates: a block of fewer than k
records is merged with the next block in split order, and a block larger than
:data:`OVERSIZE` × ``block_size`` is split again on its worker by ``block_rows``. The records
(the quasi-identifiers only) are shuffled by block with Dask's shuffle
(``DataFrame.set_index`` on the block with one partition per block); each block is protected by
the same code path as the local engine's blocks (:func:`microgui.core.runs.scale.protect_unit`:
``run_and_refine``, then the group means) on the whole table's z-scores; the protected values
are shuffled back to their input partitions and written, one part file per input partition,
pass-through columns as read.

**Record order** (issue 31, decided): each part's records are written in a random order (the
release's :class:`~microgui.core.release.order.RecordOrder`: random by default, ``--keep-order``
keeps the input's, ``--order-seed N`` draws it reproducibly; part i's permutation comes from
``SeedSequence(entropy, spawn_key=(i,))``), so no record's position in its part is its input
position. A record stays in the part of its input partition: a global permutation across parts
would send every column (not only the quasi-identifiers) through the cluster's shuffle and is
not made; which part a record is in tells what the input's partitioning tells (the report says
so in ``record_order.note``). A single output file (``-o release.csv``) is shuffled as a whole
as any release is.

**Identical to the local engine on small tables.** When the table has at most
:data:`SAMPLE_ROWS` records the sample is the whole table: the client then prepares the
quasi-identifiers exactly as a local run does (:func:`microgui.core.table.dataset.prepare_qi`) and
takes the blocks of ``block_rows`` itself, so blocks, seeds (block i gets
``SeedSequence(seed, spawn_key=(i,))``), labels (numbered block by block) and released values
are those of ``microgui protect ... --block-size N`` with the local engine, value for value
(the clean numbers use the same global decimals and magnitudes). Above that size the blocks come
from the sample's split; the information loss stays close to local blocking (the benchmark's
``--dask`` row measures it).

**Output.** ``OUT`` is a folder of part files ``part-00000.csv`` ... (CSV: UTF-8, ``,``, the
local engine's writer, formula cells neutralized unless ``keep_formula_cells``) or
``part-00000.parquet`` (continuous quasi-identifiers as float64), the format from OUT's
extension (``.csv``, ``.parquet``) or else the input's. The workers write into a hidden
temporary folder beside OUT, which the client renames to OUT once every part is written, with
``_microgui.json`` (the parts and the run report); an existing OUT is replaced only when it is
empty or such a folder, never when it holds or is inside the input. A failed or cancelled run
leaves nothing.

**Release check and report.** Every block's release is checked before anything is written: its
k-anonymity level, measured on the block, must be at least k (records of different blocks with
equal values only raise the level of the whole table, so the run reports the smallest block's
level, ``k_anonymity_basis``). The report has the keys of a local run's report, computed from
the blocks' and parts' sums (SSE, group sizes; SST from the global statistics); the proven
lower bound is not computed (``il_lower_bound_basis`` says so). ``scale`` gains
``partitioned``, ``input_partitions``, ``workers``, ``split``, ``sample_size``,
``blocks_merged``, ``blocks_split_again`` and ``output``.

**Limits.** Continuous quasi-identifiers only (an ordinal or nominal one is refused, naming
it); methods that aggregate and promise no privacy model over the whole table (not p-sensitive,
t-closeness, mstk or the masking methods); no strata, hierarchies or
``rescale_variance`` (each needs the whole table at once). Those run with ``--engine local``.
Before anything is sent, the scheduler must greet as one and every worker must run this
microgui version (:func:`microgui.core.runs.scale.dask_client`).
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microgui._version import __version__
from microgui.core.errors import ExportRefused, InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.io import (
    PARQUET_EXTENSIONS,
    SUPPORTED_EXTENSIONS,
    TEXT_EXTENSIONS,
    check_width,
    check_write_targets,
    csv_writer,
    json_text,
    read_frame,
    write_json_atomic,
)
from microgui.core.methods import Method, get_method, resolve_params
from microgui.core.methods.refine import combine_refinements
from microgui.core.metrics import k_anonymity_level
from microgui.core.metrics.disclosure import release_verdict, verdict_json
from microgui.core.metrics.mixed_loss import ALL_QI_BASIS
from microgui.core.progress import ProgressFn, RunCancelled, no_progress
from microgui.core.release.check import neutralize_column_names, neutralize_formulas
from microgui.core.release.order import RecordOrder, order_report
from microgui.core.runs.pool import POLL_SECONDS
from microgui.core.runs.protect import method_refusal
from microgui.core.runs.scale import (
    AXIS_SAMPLE,
    block_rows,
    check_scale_options,
    dask_client,
    one_piece_message,
    principal_axis,
    protect_unit,
    resolve_block_size,
)
from microgui.core.runs.spec import MethodStep, RunSpec, parse_seed, validate_k
from microgui.core.table.column_types import release_columns
from microgui.core.table.dataset import Dataset, QIMatrix, prepare_qi
from microgui.core.table.numbers import (
    clean_decimals,
    round_decimals,
    whole_numbers_written_plain,
    written_decimals,
)
from microgui.core.table.roles import (
    AttributeKind,
    AttributeRole,
    ColumnSpec,
    RoleMap,
    roles_from_lists,
)

__all__ = [
    "SAMPLE_ROWS",
    "OVERSIZE",
    "PARQUET_PART_ROWS",
    "MARKER",
    "Partition",
    "SplitPlan",
    "list_partitions",
    "check_output_folder",
    "partitioned_refusal",
    "sample_split",
    "assign_leaves",
    "merge_small_blocks",
    "record_uniform",
    "PartitionedJob",
    "RunFacts",
    "protect_partitioned",
    "partitioned_report",
]

#: Tables of at most this many records are split exactly as the local engine splits them (the
#: sample is the whole table); larger ones by the split of a sample of this size.
SAMPLE_ROWS = 200_000
#: A block more than this many times ``block_size`` (the sample's estimate was short) is split
#: again on its worker.
OVERSIZE = 1.25
#: Parquet row groups are read in partitions of about this many records.
PARQUET_PART_ROWS = 1_000_000
#: The file in an output folder that says microgui wrote it (and so may replace it).
MARKER = "_microgui.json"
_CANCEL_CHECK_SECONDS = 0.5
_KINDS = {"csv": "CSV", "parquet": "Parquet"}


# --------------------------------------------------------------------------------------------
# input and output
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """One partition of the input: a file, or some row groups of a Parquet file."""

    path: str
    kind: str  # "csv" or "parquet"
    row_groups: tuple[int, ...] | None = None
    #: first record (0-based, within the file) and number of records, when known
    first: int = 0
    rows: int | None = None

    @property
    def name(self) -> str:
        """How messages name it: the file, and the records of a part of a file."""
        base = Path(self.path).name
        if self.row_groups is None or self.rows is None:
            return base
        return f"{base} (records {self.first + 1:,}-{self.first + self.rows:,})"


def _kind_of(path: Path) -> str | None:
    ext = path.suffix.lower()
    if ext in PARQUET_EXTENSIONS:
        return "parquet"
    if ext in TEXT_EXTENSIONS:
        return "csv"
    return None


def _refuse_kind(path: Path) -> InvalidInput:
    if path.suffix.lower() in SUPPORTED_EXTENSIONS:
        return InvalidInput(
            f"{path.name!r}: --engine dask reads Parquet or CSV files in partitions on the "
            "workers; save the table as Parquet (or CSV), or run with --engine local"
        )
    return InvalidInput(
        f"{path.name!r} is neither a Parquet nor a CSV/TSV/TXT file; --engine dask reads those "
        "(one file, or a folder of files of one format)"
    )


def list_partitions(source: str | os.PathLike[str]) -> list[Partition]:
    """The partitions of ``source``: a Parquet or CSV file, or a folder of files of one of
    these formats (names starting with ``.`` or ``_`` skipped). Reads only Parquet footers.

    Raises :class:`InvalidInput` naming the file for a missing input, a folder without such
    files or with files of several formats, another format, or a Parquet file whose footer
    cannot be read.
    """
    path = Path(source)
    if not path.exists():
        raise InvalidInput(f"input {str(path)!r} does not exist; check the path")
    if path.is_dir():
        entries = sorted(p for p in path.iterdir() if not p.name.startswith((".", "_")))
        nested = [p for p in entries if p.is_dir()]
        if nested:  # never drop records in silence
            raise InvalidInput(
                f"folder {path.name!r} holds the folder {nested[0].name!r}; --engine dask reads "
                "the part files of one folder, not nested folders: move the parts into one folder"
            )
        files = [p for p in entries if p.is_file()]
        if not files:
            raise InvalidInput(
                f"folder {path.name!r} holds no table files; give a folder of Parquet or CSV files"
            )
        kinds = {p: _kind_of(p) for p in files}
        other = [p for p, kind in kinds.items() if kind is None]
        if other:
            raise InvalidInput(
                f"folder {path.name!r} holds {other[0].name!r}, which is neither a Parquet nor a "
                "CSV/TSV/TXT file; keep only the table's part files in the folder"
            )
        if len(set(kinds.values())) > 1:
            first = {kind: p.name for p, kind in reversed(list(kinds.items()))}
            raise InvalidInput(
                f"folder {path.name!r} holds both Parquet ({first['parquet']!r}) and CSV "
                f"({first['csv']!r}) files; keep the parts of one table in one format"
            )
    else:
        if _kind_of(path) is None:
            raise _refuse_kind(path)
        files = [path]
    parts: list[Partition] = []
    for file in files:
        if _kind_of(file) == "csv":
            parts.append(Partition(str(file), "csv"))
        else:
            parts.extend(_parquet_partitions(file))
    if not parts:
        raise InvalidInput(f"{path.name!r} holds no records; choose the files that hold the table")
    return parts


def _parquet_partitions(file: Path) -> list[Partition]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        meta = pq.ParquetFile(file).metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        width = len(meta.schema.to_arrow_schema())
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError, ...
        raise _unreadable_parquet(file.name, exc) from None
    check_width(repr(file.name), width)  # as a local read refuses it, from the footer
    out: list[Partition] = []
    groups: list[int] = []
    first = count = 0
    for i, size in enumerate(sizes):
        if size == 0:
            continue
        groups.append(i)
        count += size
        if count >= PARQUET_PART_ROWS:
            out.append(Partition(str(file), "parquet", tuple(groups), first, count))
            first, groups, count = first + count, [], 0
    if groups:
        out.append(Partition(str(file), "parquet", tuple(groups), first, count))
    if len(out) == 1:  # the whole file: named by its name alone
        out = [replace(out[0], row_groups=None)]
    return out


def _unreadable_parquet(name: str, exc: BaseException) -> InvalidInput:
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 200 else detail[:197] + "..."
    return InvalidInput(
        f"{name!r} cannot be read as a Parquet file ({type(exc).__name__}: {detail}); check "
        "that it is a complete Parquet file"
    )


def _output_kind(output: Path) -> str | None:
    return _kind_of(output)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_output_folder(output: str | os.PathLike[str], source: str | os.PathLike[str]) -> Path:
    """``output`` as the folder a partitioned run may write (it is created, or replaced when it
    is empty or a folder microgui wrote: it holds :data:`MARKER`); :class:`ExportRefused` with
    what to do otherwise: an existing file, a folder holding other files, a missing parent
    folder, and any folder that is, holds or lies inside the input."""
    text = os.fspath(output)
    if not text.strip():
        raise ExportRefused("no output folder was given; choose a folder name (-o OUT)")
    target = Path(text.rstrip("/" + (os.altsep or "")) or text)
    parent = target.parent
    if not parent.is_dir():
        raise ExportRefused(
            f"cannot write {text!r}: folder {str(parent)!r} does not exist; create it or choose "
            "another place"
        )
    real_out = Path(os.path.realpath(target))
    real_in = Path(os.path.realpath(source))
    if _inside(real_in, real_out) or _inside(real_out, real_in):
        raise ExportRefused(
            f"refusing to write {target.name!r}: it is, holds or lies inside the input "
            f"{real_in.name!r}, and the original data must stay intact; choose a folder "
            "outside the input"
        )
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ExportRefused(
            f"cannot write {text!r}: it is a file; --engine dask writes a folder of part files "
            "there, so choose a new name"
        )
    if target.is_dir():
        entries = [p.name for p in target.iterdir()]
        if entries and MARKER not in entries:
            raise ExportRefused(
                f"cannot write {text!r}: the folder holds other files ({entries[0]!r}); choose "
                "a new or empty folder (a folder microgui wrote before is replaced)"
            )
    return target


def partitioned_refusal(
    method: Method,
    params: Mapping[str, Any],
    *,
    ordinal: Sequence[str] = (),
    nominal: Sequence[str] = (),
    missing_as_category: Sequence[str] = (),
    strata: Sequence[str] = (),
    hierarchies: Mapping[str, str] | None = None,
    engine: str = "dask",
) -> str:
    """Why a partitioned run (``engine`` "dask" or "spark") cannot do this ("" when it can); see
    the module docstring."""
    local = "run it with --engine local (the default)"
    for option, cols in (("--ordinal", ordinal), ("--nominal", nominal)):
        if cols:
            kind = option[2:]
            return (
                f"quasi-identifier {cols[0]!r} is {kind}, and --engine {engine} reads the input in "
                "partitions with continuous quasi-identifiers only for now; tag it continuous "
                f"if it is a number, or {local}"
            )
    if missing_as_category:
        return (
            f"--missing-as-category {missing_as_category[0]!r} is for ordinal and nominal "
            f"quasi-identifiers, which --engine {engine} does not take yet; {local}"
        )
    if strata:
        return f"--strata is not available with --engine {engine} yet; {local}"
    if hierarchies:
        return (
            f"--hierarchy ({next(iter(hierarchies))!r}) is for mstk, which --engine {engine} does "
            f"not run; drop it, or {local}"
        )
    if (
        not method.aggregates
        or method.release_check is not None
        or AttributeKind.CONTINUOUS not in method.kinds
    ):
        return (
            f"method {method.name} cannot run block by block on a partitioned table (it does "
            "not aggregate, or promises a privacy model measured on the whole table); choose "
            f"mdav, md, cbfs, vmdav, mst, gsms or another aggregating method, or {local}"
        )
    if params.get("rescale_variance", False):
        return (
            f"rescale_variance rescales with the whole release's variance, which --engine {engine} "
            f"never holds in one place; drop --param rescale_variance, or {local}"
        )
    if params.get("weighted_means", False):
        return (
            "weighted_means needs the survey weight column, which a partitioned run does not "
            f"read; drop --param weighted_means, or {local}"
        )
    return ""


# --------------------------------------------------------------------------------------------
# the global split
# --------------------------------------------------------------------------------------------


def record_uniform(ids: np.ndarray) -> np.ndarray:
    """A fixed number in [0, 1) per record number (splitmix64 of the number): how a record whose
    score equals a cut picks its side, the same on every worker and in every run."""
    x = np.asarray(ids, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    out: np.ndarray = (x >> np.uint64(11)).astype(np.float64) / 2.0**53
    return out


def _scores(z: np.ndarray, axis: np.ndarray) -> np.ndarray:
    # Column by column (elementwise): a record's score is the same whichever rows it is
    # computed with, which a matrix product (BLAS blocking) does not promise, and ties must be
    # recognised on the workers exactly as on the client.
    s: np.ndarray = z[:, 0] * axis[0]
    for j in range(1, z.shape[1]):
        s = s + z[:, j] * axis[j]
    return s


@dataclass(frozen=True)
class SplitPlan:
    """A tree of principal-axis splits: node 0 is the root; a leaf has ``leaf >= 0`` (its block
    in split order), an inner node sends a record low when its score (z @ ``axis``) is below
    ``cut``, or equal to it and its :func:`record_uniform` is below ``tie``."""

    axis: np.ndarray  # (nodes, d)
    cut: np.ndarray  # (nodes,)
    tie: np.ndarray  # (nodes,)
    low: np.ndarray  # (nodes,) child node, -1 for a leaf
    high: np.ndarray  # (nodes,)
    leaf: np.ndarray  # (nodes,) block of a leaf, -1 for an inner node

    @property
    def n_leaves(self) -> int:
        return int((self.leaf >= 0).sum())


def sample_split(
    z: np.ndarray, ids: np.ndarray, n_total: int, k: int, block_size: int
) -> SplitPlan:
    """The split of ``n_total`` records into blocks of about ``block_size``, computed on a
    sample (``z``: its z-scores, ``ids``: its record numbers) as :func:`block_rows` splits the
    whole table: each set of about n records goes into L = ceil(n / block_size) blocks, the low
    side of its principal axis taking floor(L/2)/L of them (module docstring)."""
    x = np.asarray(z, dtype=np.float64)
    u = record_uniform(ids)
    d = x.shape[1]
    axes: list[np.ndarray] = []
    cuts: list[float] = []
    ties: list[float] = []
    lows: list[int] = []
    highs: list[int] = []
    leaves: list[int] = []
    n_leaves = 0

    def node(rows: np.ndarray, n_est: int) -> int:
        nonlocal n_leaves
        me = len(axes)
        axes.append(np.zeros(d))
        cuts.append(0.0)
        ties.append(0.0)
        lows.append(-1)
        highs.append(-1)
        leaves.append(-1)
        parts = math.ceil(n_est / block_size)
        m = len(rows)
        low_side = None
        if parts > 1 and m >= 2:
            fraction = (parts // 2) / parts
            step = max(1, m // AXIS_SAMPLE)
            axis = principal_axis(x[rows[::step]])
            if axis is None:
                axis = principal_axis(x[rows])
            if axis is None:  # every sampled record equal: the tie share decides
                axis = np.eye(d)[0]
            score = _scores(x[rows], axis)
            ordered = np.sort(score, kind="stable")
            want = min(max(round(m * fraction), 1), m - 1)
            a, b = float(ordered[want - 1]), float(ordered[want])
            cut = a + (b - a) / 2 if a < b else a
            below = score < cut
            tied = score == cut
            n_tied = int(tied.sum())
            tie = (want - int(below.sum())) / n_tied if n_tied else 0.0
            mask = below | (tied & (u[rows] < tie))
            if 0 < int(mask.sum()) < m:
                low_side = mask
                axes[me], cuts[me], ties[me] = axis, cut, tie
        if low_side is None:
            leaves[me] = n_leaves
            n_leaves += 1
            return me
        # The children's sizes are the planned ones (as block_rows plans them, a multiple of
        # k low), not the sample's counts: its noise would otherwise tip a set of about
        # L x block_size records into L + 1 blocks.
        planned = min(max(k * round(n_est * (parts // 2) / parts / k), k), n_est - k)
        lows[me] = node(rows[low_side], planned)
        highs[me] = node(rows[~low_side], n_est - planned)
        return me

    node(np.arange(len(x), dtype=np.int64), int(n_total))
    return SplitPlan(
        axis=np.array(axes).reshape(len(axes), d),
        cut=np.array(cuts),
        tie=np.array(ties),
        low=np.array(lows, dtype=np.int64),
        high=np.array(highs, dtype=np.int64),
        leaf=np.array(leaves, dtype=np.int64),
    )


def assign_leaves(z: np.ndarray, ids: np.ndarray, plan: SplitPlan) -> np.ndarray:
    """The block (leaf of ``plan``) of every record (``z``: z-scores, ``ids``: record numbers)."""
    out = np.empty(len(z), dtype=np.int64)
    u = record_uniform(ids)
    stack = [(0, np.arange(len(z), dtype=np.int64))]
    while stack:
        node, rows = stack.pop()
        if plan.leaf[node] >= 0:
            out[rows] = plan.leaf[node]
            continue
        score = _scores(z[rows], plan.axis[node])
        cut = plan.cut[node]
        low = (score < cut) | ((score == cut) & (u[rows] < plan.tie[node]))
        stack.append((int(plan.high[node]), rows[~low]))
        stack.append((int(plan.low[node]), rows[low]))
    return out


def merge_small_blocks(sizes: Sequence[int], k: int) -> tuple[np.ndarray, int]:
    """Blocks in split order, each block of fewer than k records merged with the next (the
    last with the previous): the new block of every old one, and how many merges were made."""
    unit = np.empty(len(sizes), dtype=np.int64)
    current = filled = 0
    merges = 0
    start = 0
    for i, size in enumerate(sizes):
        unit[i] = current
        filled += int(size)
        if filled >= k:
            merges += i - start
            current += 1
            filled = 0
            start = i + 1
    if filled or start < len(sizes):  # a short tail joins the last block
        merges += len(sizes) - start
        unit[start:] = max(current - 1, 0)
    return unit, merges


# --------------------------------------------------------------------------------------------
# one partitioned job, for either engine
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionedJob:
    """One partitioned run as the command line or the API asks for it: built once (by
    :mod:`microgui.cli.protect_partitioned`, :func:`protect_partitioned`,
    :func:`microgui.core.release.spark.protect_spark` or :func:`microgui.api.protect_spark`) and
    run by the engine of ``spec.engine`` (:meth:`run`: ``"dask"`` or ``"spark"``). Both engines
    check it with the same code (:func:`checked_method`, :func:`job_roles`), measure into a
    :class:`RunFacts` and report with :func:`partitioned_report`.

    ``source`` and ``output`` are None for a Spark DataFrame given to the API; the role
    arguments are those of :func:`microgui.core.table.roles.roles_from_lists`; ``order`` is the
    records' order within each input partition (random by default, as every release's)."""

    source: str | os.PathLike[str] | None
    output: str | os.PathLike[str] | None
    spec: RunSpec
    qi: tuple[str, ...]
    identifiers: tuple[str, ...] = ()
    confidential: tuple[str, ...] = ()
    ordinal: Mapping[str, Sequence[str] | None] | None = None
    nominal: tuple[str, ...] = ()
    missing_as_category: tuple[str, ...] = ()
    group_column: str | None = None
    report_path: str | os.PathLike[str] | None = None
    override: str | None = None
    keep_formula_cells: bool = False
    order: RecordOrder = field(default_factory=RecordOrder)

    @classmethod
    def make(
        cls,
        source: str | os.PathLike[str] | None,
        output: str | os.PathLike[str] | None,
        spec: RunSpec,
        *,
        qi: Sequence[str],
        identifiers: Sequence[str] = (),
        confidential: Sequence[str] = (),
        ordinal: Mapping[str, Sequence[str] | None] | None = None,
        nominal: Sequence[str] = (),
        missing_as_category: Sequence[str] = (),
        group_column: str | None = None,
        report_path: str | os.PathLike[str] | None = None,
        override: str | None = None,
        keep_formula_cells: bool = False,
        order: RecordOrder | None = None,
    ) -> PartitionedJob:
        """The job from the keyword arguments of :func:`protect_partitioned` (lists as tuples,
        ``order`` None as random)."""
        return cls(
            source=source,
            output=output,
            spec=spec,
            qi=tuple(qi),
            identifiers=tuple(identifiers),
            confidential=tuple(confidential),
            ordinal=ordinal,
            nominal=tuple(nominal),
            missing_as_category=tuple(missing_as_category),
            group_column=group_column,
            report_path=report_path,
            override=override,
            keep_formula_cells=keep_formula_cells,
            order=order if order is not None else RecordOrder(),
        )

    @property
    def engine(self) -> str:
        """``"spark"`` or ``"dask"`` (the spec's engine)."""
        return "spark" if self.spec.engine == "spark" else "dask"

    def run(self, progress: ProgressFn = no_progress) -> dict[str, Any]:
        """Run the job on Dask (a file or folder ``source`` written to the folder ``output``);
        returns the run report. A Spark job runs through
        :func:`microgui.core.release.spark.run_spark_job` (which imports this module: calling it
        from here would make an import cycle)."""
        if self.engine == "spark":
            raise ValueError("a Spark job runs through core.release.spark.run_spark_job")
        return _run_dask_job(self, progress)


@dataclass
class RunFacts:
    """What an engine measured in a partitioned run, filled in as the run goes: everything
    :func:`partitioned_report` needs beyond the :class:`PartitionedJob`."""

    method: Method
    params: Mapping[str, Any]
    seed: int
    engine: str  # as the report's scale.engine says it: "dask (tcp://...)", "spark (local[2])"
    engine_name: str  # "Dask" or "Spark"
    source_name: str
    folder_name: str
    out_kind: str
    roles: RoleMap = field(default_factory=lambda: RoleMap(()))
    names: tuple[str, ...] = ()
    n: int = 0
    m2: np.ndarray = field(default_factory=lambda: np.zeros(0))
    std: np.ndarray = field(default_factory=lambda: np.zeros(0))
    written: tuple[int | None, ...] = ()
    block_size: int = 0
    split: str = ""
    sample_size: int = 0
    merged: int = 0
    input_partitions: int = 0
    n_workers: int = 0
    reports: list[Mapping[str, Any]] = field(default_factory=list)
    level: int = 0
    problems: list[str] = field(default_factory=list)
    reason: str | None = None
    mode: str = "none"
    written_parts: list[Mapping[str, Any]] = field(default_factory=list)
    order_note: str | None = None


def checked_method(job: PartitionedJob) -> tuple[Method, dict[str, Any]]:
    """The job's one method step and its parameters, refused (one line) when a partitioned run
    cannot run it (:func:`partitioned_refusal`) or k is below 2."""
    steps = job.spec.steps
    if len(steps) != 1 or not isinstance(steps[0], MethodStep):
        raise InvalidParameter("a partitioned run executes a plan of one method step only")
    method = get_method(steps[0].method)
    params = resolve_params(method, steps[0].param_dict)
    why = partitioned_refusal(
        method,
        params,
        ordinal=list(job.ordinal or {}),
        nominal=list(job.nominal),
        missing_as_category=list(job.missing_as_category),
        strata=job.spec.strata,
        hierarchies=dict(job.spec.hierarchies),
        engine=job.engine,
    )
    if why:
        raise InvalidParameter(why)
    if int(job.spec.k) < 2:
        validate_k(int(job.spec.k), 2)  # the local run's message
    return method, dict(params)


def job_roles(job: PartitionedJob, facts: RunFacts, columns: Sequence[str]) -> None:
    """The roles of the table's ``columns`` and its continuous quasi-identifiers into
    ``facts``, refused as a local run refuses them, and the group column refused when it names
    a column of the table."""
    roles = roles_from_lists(
        list(columns),
        qi=list(job.qi),
        identifiers=list(job.identifiers),
        confidential=list(job.confidential),
    )
    why = method_refusal(facts.method, roles)
    if why:
        raise InvalidRoles(f"method {facts.method.name!r}: {why}")
    if job.group_column and job.group_column in columns:
        raise ExportRefused(
            f"--group-column {job.group_column!r} already names a column of the table; choose "
            "another name"
        )
    facts.roles = roles
    facts.names = tuple(roles.qi_of_kind(AttributeKind.CONTINUOUS))


def check_blocks(
    job: PartitionedJob, facts: RunFacts, reports: Sequence[Mapping[str, Any]]
) -> None:
    """The release check on the blocks' reports, before anything is written: every block at
    least k-anonymous, else :class:`ExportRefused` unless the job's override gives a reason."""
    facts.reports = sorted(reports, key=lambda r: int(r["unit"]))
    k = int(job.spec.k)
    facts.level = min(int(r["k_anonymity"]) for r in reports)
    facts.problems = []
    if facts.level < k:
        facts.problems.append(
            f"a block is only {facts.level}-anonymous on its quasi-identifiers, below the "
            f"chosen k = {k}"
        )
    facts.reason = None
    if facts.problems:
        facts.reason = " ".join((job.override or "").split())
        if not any(ch.isalnum() for ch in facts.reason):
            raise ExportRefused(
                f"export to {facts.folder_name} refused: {'; '.join(facts.problems)}. Re-run "
                "with a valid configuration, or override explicitly (the override is recorded "
                "in the report)."
            )


def release_job(blocks: _Job, job: PartitionedJob, facts: RunFacts) -> _Job:
    """The block tasks' job with what writing the release needs: the clean numbers' decimals
    and magnitudes, the rounding, the group labels' offsets, the record order."""
    names = facts.names
    n_groups = np.array([int(r["n_groups"]) for r in facts.reports], dtype=np.int64)
    facts.mode = str(facts.params.get("round", "none"))
    round_to: tuple[int | None, ...] | None = None
    if facts.mode == "source":
        round_to = facts.written
    elif facts.mode != "none":
        round_to = tuple(int(facts.mode) for _ in names)
    return replace(
        blocks,
        written=facts.written,
        scale=tuple(max(float(r["max_abs"][j]) for r in facts.reports) for j in range(len(names))),
        round_to=round_to,
        identifiers=tuple(facts.roles.identifiers),
        group_column=job.group_column,
        label_offsets=np.concatenate([[0], np.cumsum(n_groups)[:-1]]).astype(np.int64),
        keep_formula_cells=job.keep_formula_cells,
        out_kind=facts.out_kind,
        keep_order=job.order.keep,
        # a fresh entropy (never written) unless the user gave the order's seed
        order_entropy=0 if job.order.keep else _order_entropy(job.order),
    )


def report_path_checked(
    job: PartitionedJob, folder: Path, partitions: Sequence[Partition]
) -> Path | None:
    """Where the job's JSON report goes (None: nowhere), refused when it would overwrite an
    input file or lie inside the output folder."""
    if job.report_path is None:
        return None
    to = check_write_targets([job.report_path], protect_from=[p.path for p in partitions])[0]
    if _inside(Path(os.path.realpath(to)), Path(os.path.realpath(folder))):
        raise ExportRefused(
            f"the report {to.name!r} would be inside the output folder, which the run "
            "replaces; write it beside the folder"
        )
    return to


# --------------------------------------------------------------------------------------------
# worker tasks (module functions: pickled by reference)
# --------------------------------------------------------------------------------------------


def _read_partition(part: Partition) -> pd.DataFrame:
    """A partition as a local run reads its file: every column, pass-through values as read."""
    if part.kind == "csv":
        return read_frame(part.path)
    try:
        import pyarrow.parquet as pq

        file = pq.ParquetFile(part.path)
        table = file.read() if part.row_groups is None else file.read_row_groups(part.row_groups)
        frame: pd.DataFrame = table.to_pandas()
    except Exception as exc:  # noqa: BLE001 - one message naming the file
        raise _unreadable_parquet(part.name, exc) from None
    index = frame.index
    if not (isinstance(index, pd.RangeIndex) and index.name is None):
        # as microgui.core.io reads Parquet: a saved index comes back as a column
        frame = frame.reset_index()
    frame = frame.reset_index(drop=True)
    frame.columns = pd.Index([str(c) for c in frame.columns], dtype=object)
    return frame


def _columns(frame: pd.DataFrame) -> tuple[int, list[str]]:
    return len(frame), [str(c) for c in frame.columns]


def _qi_values(frame: pd.DataFrame, part: Partition, names: Sequence[str]) -> pd.DataFrame:
    """The continuous quasi-identifiers of a partition as float64, checked as a local run
    checks them (missing values, text, magnitudes; :func:`prepare_qi`), messages naming the
    file and its lines."""
    spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    sub = frame.loc[:, list(names)]
    sub.attrs = dict(frame.attrs)
    try:
        qi = prepare_qi(
            Dataset(sub, RoleMap.from_dict({c: spec for c in names}), source=Path(part.path))
        )
    except (InvalidInput, InvalidRoles) as exc:
        if part.row_groups is None:
            raise
        raise type(exc)(f"{part.name}: {exc}") from None
    assert qi.cont_values is not None
    return pd.DataFrame(qi.cont_values, columns=list(names))


def _stats(values: pd.DataFrame) -> dict[str, Any]:
    x = values.to_numpy(dtype=np.float64)
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    return {
        "n": len(x),
        "mean": mean,
        "m2": ((x - mean) ** 2).sum(axis=0),
        "written": [written_decimals(values[c]) for c in values.columns],
    }


def _sample(values: pd.DataFrame, count: int, seed: int, part: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, part)))
    rows = np.sort(rng.choice(len(values), size=count, replace=False))
    return rows


def _z(x: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    z: np.ndarray = (x - mean) / std  # as prepare_qi: elementwise, the same on any rows
    return z


def _leaf_counts(
    values: pd.DataFrame, offset: int, plan: SplitPlan, mean: np.ndarray, std: np.ndarray
) -> np.ndarray:
    x = values.to_numpy(dtype=np.float64)
    leaves = assign_leaves(_z(x, mean, std), offset + np.arange(len(x)), plan)
    counts: np.ndarray = np.bincount(leaves, minlength=plan.n_leaves)
    return counts


def _with_units(
    values: pd.DataFrame,
    part: int,
    offset: int,
    plan: SplitPlan | np.ndarray,
    unit_of_leaf: np.ndarray | None,
    mean: np.ndarray,
    std: np.ndarray,
) -> pd.DataFrame:
    """The partition's quasi-identifiers with each record's partition, row and block."""
    x = values.to_numpy(dtype=np.float64)
    if isinstance(plan, SplitPlan):
        units = assign_leaves(_z(x, mean, std), offset + np.arange(len(x)), plan)
        if unit_of_leaf is not None:
            units = unit_of_leaf[units]
    else:  # the blocks of every record (the whole table was the sample)
        units = np.asarray(plan, dtype=np.int64)
    out = values.copy()
    out["_part"] = np.int64(part)
    out["_row"] = np.arange(len(x), dtype=np.int64)
    out["_unit"] = units.astype(np.int64)
    return out


def _cancel_check(event_name: str) -> ProgressFn:
    if not event_name:  # Spark (microgui.core.release.spark) cancels its job group instead
        return no_progress
    from distributed import Event

    event = Event(event_name)
    last = [time.monotonic()]

    def check(fraction: float, status: str = "", /) -> None:
        now = time.monotonic()
        if now - last[0] < _CANCEL_CHECK_SECONDS:
            return
        last[0] = now
        if event.is_set():
            raise RunCancelled()

    return check


@dataclass(frozen=True)
class _Job:
    """What every block task needs (the same for all of them)."""

    names: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    offsets: np.ndarray
    method: str
    k: int
    params: Mapping[str, Any]
    seed: int
    block_size: int
    n_units: int
    cancel_event: str
    # written at the end: per column the decimals of the input, the magnitude of the release,
    # the decimals of round=...
    written: tuple[int | None, ...] = ()
    scale: tuple[float, ...] = ()
    round_to: tuple[int | None, ...] | None = None
    identifiers: tuple[str, ...] = ()
    group_column: str | None = None
    label_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    keep_formula_cells: bool = False
    out_kind: str = "csv"
    folder: str = ""
    #: the record order of every part: kept, or drawn from this entropy (part i: spawn key i)
    keep_order: bool = True
    order_entropy: int = 0


def _protect_block(
    frame: pd.DataFrame, unit: int, job: _Job
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One block on its worker: its records in table order, the method on the whole table's
    z-scores (split again when far larger than the block size), the group means."""
    names = list(job.names)
    parts = frame["_part"].to_numpy(dtype=np.int64)
    rows = frame["_row"].to_numpy(dtype=np.int64)
    order = np.lexsort((rows, parts))
    ids = job.offsets[parts[order]] + rows[order]
    x = np.ascontiguousarray(frame[names].to_numpy(dtype=np.float64)[order])
    z = _z(x, job.mean, job.std)
    m = len(x)
    if m > OVERSIZE * job.block_size:
        pieces = block_rows(z, job.k, job.block_size)
    else:
        pieces = [np.arange(m, dtype=np.int64)]
    check = _cancel_check(job.cancel_event)
    spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    roles = RoleMap.from_dict({c: spec for c in names})
    labels = np.empty(m, dtype=np.int64)
    protected = np.empty((m, len(names)), dtype=np.float64)
    extras: list[dict[str, Any]] = []
    offset = 0
    for j, piece in enumerate(pieces):
        qi = QIMatrix(
            continuous_names=tuple(names),
            continuous=np.ascontiguousarray(z[piece]),
            cont_mean=job.mean,
            cont_std=job.std,
            ordinal_names=(),
            ordinal=np.empty((len(piece), 0), dtype=np.int64),
            ordinal_orders=(),
            nominal_names=(),
            nominal=np.empty((len(piece), 0), dtype=np.int64),
            nominal_categories=(),
            cont_values=np.ascontiguousarray(x[piece]),
        )
        data = Dataset(pd.DataFrame(qi.cont_values, columns=names, index=ids[piece]), roles)
        if len(pieces) == 1:
            seed, index, label = job.seed, unit, f"block {unit + 1}/{job.n_units}"
        else:  # an independent stream for each piece of a block split again
            seed = int(np.random.SeedSequence(job.seed, spawn_key=(unit, j)).generate_state(1)[0])
            index, label = j, f"block {unit + 1}/{job.n_units}, piece {j + 1}/{len(pieces)}"
        piece_labels, columns, extra = protect_unit(
            data, qi, job.method, job.k, job.params, seed, index, label, check
        )
        labels[piece] = piece_labels + offset
        offset += int(piece_labels.max()) + 1 if len(piece_labels) else 0
        for c, col in enumerate(names):
            protected[piece, c] = np.asarray(columns[col], dtype=np.float64)
        extras.append(extra)
    out = pd.DataFrame(protected, columns=names)
    out["_part"] = parts[order]
    out["_row"] = rows[order]
    out["_unit"] = np.int64(unit)
    out["_label"] = labels
    sizes = np.bincount(labels) if m else np.zeros(0, dtype=np.int64)
    values, counts = np.unique(sizes, return_counts=True)
    finite = np.where(np.isfinite(protected), np.abs(protected), 0.0)
    report = {
        "unit": unit,
        "size": m,
        "n_groups": offset,
        "group_size_counts": {int(s): int(c) for s, c in zip(values, counts, strict=True)},
        "k_anonymity": k_anonymity_level(out, names),
        "max_abs": finite.max(axis=0).tolist() if m else [0.0] * len(names),
        "pieces": [len(p) for p in pieces],
        "extras": extras,
    }
    return out, report


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _second(pair: tuple[Any, Any]) -> Any:
    return pair[1]


def _release(raw: np.ndarray, job: _Job, j: int) -> np.ndarray:
    """A column of group means as released: clean numbers with the whole column's decimals and
    magnitude (:func:`microgui.core.table.numbers.release_numbers`), rounded as asked."""
    cleaned = clean_decimals(raw, job.written[j], job.scale[j])
    if job.round_to is not None and job.round_to[j] is not None:
        cleaned = round_decimals(cleaned, int(job.round_to[j]))  # type: ignore[arg-type]
    out: np.ndarray = cleaned + 0.0  # -0.0 is written 0
    return out


def _order_entropy(order: RecordOrder) -> int:
    """The entropy of the parts' permutations: the user's order seed, or a fresh one (never
    written anywhere)."""
    if order.seed is not None:
        return int(order.seed)
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)
    return entropy


def _write_part(
    protected: pd.DataFrame,
    frame: pd.DataFrame,
    values: pd.DataFrame,
    part: int,
    name: str,
    job: _Job,
) -> dict[str, Any]:
    """Write one output part (the input partition ``part`` with its protected values) into the
    run's temporary folder; returns its sums for the report."""
    names = list(job.names)
    protected = protected.sort_values("_row", kind="stable")
    if len(protected) != len(frame) or not bool(
        (protected["_row"].to_numpy() == np.arange(len(frame))).all()
    ):
        raise RuntimeError(
            f"partition {name}: {len(protected)} protected records for {len(frame)} read"
        )
    raw = protected[names].to_numpy(dtype=np.float64)
    original = values.to_numpy(dtype=np.float64)
    z = _z(original, job.mean, job.std)
    released = np.column_stack([_release(raw[:, j], job, j) for j in range(len(names))])
    sse = ((z - _z(released, job.mean, job.std)) ** 2).sum(axis=0)
    sse_raw = ((z - _z(raw, job.mean, job.std)) ** 2).sum(axis=0)
    removed = set(job.identifiers)  # once: per column it was quadratic (issue 27)
    keep = [c for c in frame.columns if str(c) not in removed]
    out = frame.loc[:, keep].copy(deep=False)
    for j, col in enumerate(names):
        out[col] = pd.Series(released[:, j], index=out.index)
    if job.group_column:
        units = protected["_unit"].to_numpy(dtype=np.int64)
        out[job.group_column] = job.label_offsets[units] + protected["_label"].to_numpy()
    # every kind of column as the format holds it (microgui.core.table.column_types), as export_run
    out, converted = release_columns(out, job.out_kind)
    neutralized: dict[str, int] = {}
    renamed = 0
    if not job.keep_formula_cells:
        out, neutralized = neutralize_formulas(out)
        out, renamed = neutralize_column_names(out)
    if not job.keep_order and len(out) > 1:  # the part's records in a random order (issue 31)
        rng = np.random.default_rng(np.random.SeedSequence(job.order_entropy, spawn_key=(part,)))
        out = out.iloc[rng.permutation(len(out))].reset_index(drop=True)
    folder = Path(job.folder)
    target = folder / f"part-{part:05d}.{job.out_kind}"
    if job.out_kind == "csv":
        write = csv_writer(whole_numbers_written_plain(out, names))
        with open(target, "w", encoding="utf-8", newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
    else:
        out.to_parquet(target, index=False)
    return {
        "file": target.name,
        "rows": len(out),
        "sse": sse.tolist(),
        "sse_raw": sse_raw.tolist(),
        "neutralized": neutralized,
        "renamed": renamed,
        "converted": converted,
    }


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


class _Run:
    """Book-keeping of one partitioned run on a client: futures to release, progress."""

    def __init__(self, client: Any, progress: ProgressFn) -> None:
        self.client = client
        self.progress = progress
        self.token = uuid.uuid4().hex[:12]
        self.count = 0

    def keys(self, what: str, n: int) -> list[str]:
        self.count += 1
        return [f"microgui-{what}-{self.token}-{self.count}-{i}" for i in range(n)]

    def map(
        self, what: str, func: Callable[..., Any], *iterables: Sequence[Any], **kw: Any
    ) -> list[Any]:
        n = len(iterables[0])
        return list(self.client.map(func, *iterables, key=self.keys(what, n), pure=False, **kw))

    def wait(self, futures: Sequence[Any], start: float, stop: float, status: str) -> None:
        """Wait for ``futures``, reporting progress; a task's error is raised here at once."""
        pending = set(futures)
        total = max(len(futures), 1)
        self.progress(start, status)
        while pending:
            done = [f for f in pending if f.done()]
            for f in done:
                pending.discard(f)
                if f.status != "finished":
                    f.result()  # re-raises the task's exception (InvalidInput names the file)
            if pending and not done:
                time.sleep(POLL_SECONDS)
            finished = total - len(pending)
            self.progress(
                start + (stop - start) * finished / total, f"{status}: {finished}/{total}"
            )


def _combine_stats(
    stats: Sequence[Mapping[str, Any]], d: int
) -> tuple[int, np.ndarray, np.ndarray]:
    """Count, mean and sum of squared deviations of the whole table from the partitions'
    (Chan, Golub & LeVeque's pairwise update)."""
    n = 0
    mean = np.zeros(d)
    m2 = np.zeros(d)
    for s in stats:
        nb = int(s["n"])
        if nb == 0:
            continue
        delta = np.asarray(s["mean"]) - mean
        total = n + nb
        mean = mean + delta * (nb / total)
        m2 = m2 + np.asarray(s["m2"]) + delta**2 * (n * nb / total)
        n = total
    return n, mean, m2


def _combined_written(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else max(int(v) for v in values)  # type: ignore[arg-type]


def _reshuffle(
    client: Any, futures: Sequence[Any], meta: pd.DataFrame, on: str, n: int
) -> list[Any]:
    """Dask's shuffle: the frames of ``futures`` regrouped so that partition i holds the rows
    whose column ``on`` is i (``set_index`` on given divisions), as futures."""
    import dask.dataframe as dd

    frame = dd.from_delayed(list(futures), meta=meta, verify_meta=False)
    moved = frame.set_index(on, divisions=list(range(n + 1)))
    return list(client.compute(moved.to_delayed()))


def protect_partitioned(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    spec: RunSpec,
    *,
    qi: Sequence[str],
    identifiers: Sequence[str] = (),
    confidential: Sequence[str] = (),
    ordinal: Mapping[str, Sequence[str] | None] | None = None,
    nominal: Sequence[str] = (),
    missing_as_category: Sequence[str] = (),
    group_column: str | None = None,
    report_path: str | os.PathLike[str] | None = None,
    override: str | None = None,
    keep_formula_cells: bool = False,
    progress: ProgressFn = no_progress,
    order: RecordOrder | None = None,
) -> dict[str, Any]:
    """Protect the partitioned table ``source`` on the Dask cluster of ``spec.scheduler`` and
    write the release as the folder ``output`` (module docstring); returns the run report.
    ``order``: the records' order within each part (default: random, as every release's).

    ``spec`` gives the method, k, parameters, seed and block size (``engine="dask"``);
    the role arguments are those of :func:`microgui.core.table.roles.roles_from_lists`.

    Raises :class:`InvalidParameter`, :class:`InvalidRoles` or :class:`InvalidInput` (one line,
    naming the file, column or worker, saying what to do) and :class:`ExportRefused` before
    anything is written; lets :class:`RunCancelled` from ``progress`` propagate (the cluster's
    tasks are cancelled and nothing is left behind).
    """
    job = PartitionedJob.make(
        source, output, spec, qi=qi, identifiers=identifiers, confidential=confidential,
        ordinal=ordinal, nominal=nominal, missing_as_category=missing_as_category,
        group_column=group_column, report_path=report_path, override=override,
        keep_formula_cells=keep_formula_cells, order=order,
    )  # fmt: skip
    if job.engine != "dask":
        raise InvalidParameter("a partitioned run needs engine 'dask' and its --scheduler")
    return _run_dask_job(job, progress)


def _run_dask_job(job: PartitionedJob, progress: ProgressFn) -> dict[str, Any]:
    """:meth:`PartitionedJob.run` on Dask: :func:`protect_partitioned`."""
    started = time.perf_counter()
    spec = job.spec
    method, params = checked_method(job)
    if spec.engine != "dask":
        raise InvalidParameter("a partitioned run needs engine 'dask' and its --scheduler")
    empty = Dataset(pd.DataFrame(), RoleMap(()))
    check_scale_options(
        empty,
        int(spec.k),
        block_size=spec.block_size,
        engine=spec.engine,
        scheduler=spec.scheduler,
        workers=spec.workers,
    )
    if spec.block_size is None:
        raise InvalidParameter(one_piece_message())
    if job.source is None or job.output is None:
        raise InvalidParameter("a partitioned Dask run reads a file or folder and writes a folder")
    folder = check_output_folder(job.output, job.source)
    partitions = list_partitions(job.source)
    reports_to = report_path_checked(job, folder, partitions)
    out_kind = _output_kind(folder) or partitions[0].kind
    seed = parse_seed(spec.seed)
    seed = seed if seed is not None else secrets.randbits(63)
    assert spec.scheduler is not None
    client = dask_client(spec.scheduler)
    run = _Run(client, progress)
    temp = folder.parent / f".{folder.name[:40]}.{run.token}.tmp"
    event = None
    committed = False
    facts = RunFacts(
        method=method,
        params=params,
        seed=seed,
        engine=f"dask ({spec.scheduler})",
        engine_name="Dask",
        source_name=Path(job.source).name,
        folder_name=folder.name,
        out_kind=out_kind,
    )
    try:
        from distributed import Event

        event = Event(f"microgui-cancel-{run.token}", client=client)
        _run(run, job, facts, partitions, temp, event.name)
        report = partitioned_report(job, facts)
        report["seconds"] = round(time.perf_counter() - started, 4)
        _commit(temp, folder, report)
        committed = True
    except BaseException:
        if event is not None:
            try:
                event.set()
            except Exception:  # noqa: BLE001,S110 - the cluster may be gone; cleaning up anyway
                pass
        raise
    finally:
        client.close()
        if not committed:
            shutil.rmtree(temp, ignore_errors=True)
    if reports_to is not None:
        write_json_atomic(report, reports_to, protect_from=[p.path for p in partitions])
    progress(1.0, "done")
    return report


def _commit(temp: Path, folder: Path, report: Mapping[str, Any]) -> None:
    """Put the written parts in place: the marker last in the temporary folder, then one
    rename (the old folder, if any, moved aside first and removed after)."""
    marker = temp / MARKER
    text = json_text(
        {"microgui": __version__, "parts": report["scale"]["output"]["parts"], "report": report}
    )
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    old = None
    if folder.exists():
        old = folder.parent / f".{folder.name[:40]}.{uuid.uuid4().hex[:8]}.old"
        os.replace(folder, old)
    try:
        os.replace(temp, folder)
    except OSError:
        if old is not None:
            os.replace(old, folder)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    fd = os.open(folder.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _run(
    run: _Run,
    job: PartitionedJob,
    facts: RunFacts,
    partitions: list[Partition],
    temp: Path,
    cancel_event: str,
) -> None:
    """The Dask run of ``job``, measured into ``facts``; the parts written into ``temp``."""
    client = run.client
    spec, k, seed = job.spec, int(job.spec.k), facts.seed
    source_name = facts.source_name

    # 1. read on the workers; the columns of every partition
    frames = run.map("read", _read_partition, partitions)
    run.wait(frames, 0.0, 0.08, "reading")
    shapes = client.gather(run.map("columns", _columns, frames))
    columns = shapes[0][1]
    for part, (_n, cols) in zip(partitions, shapes, strict=True):
        if cols != columns:
            missing = [c for c in columns if c not in cols]
            surplus = [c for c in cols if c not in columns]
            what = (
                f"lacks column {missing[0]!r}"
                if missing
                else f"has column {surplus[0]!r}, which {partitions[0].name} lacks"
                if surplus
                else "has the columns in another order"
            )
            raise InvalidInput(
                f"{part.name} {what}: every file of the input must have the same columns "
                f"(those of {partitions[0].name}: {', '.join(columns[:8])}"
                f"{', ...' if len(columns) > 8 else ''})"
            )
    job_roles(job, facts, columns)
    names = facts.names
    keep = [i for i, (n, _c) in enumerate(shapes) if n > 0]  # empty files add nothing
    partitions = [partitions[i] for i in keep]
    frames = [frames[i] for i in keep]
    sizes = np.array([shapes[i][0] for i in keep], dtype=np.int64)

    # 2. the quasi-identifiers, checked; the global statistics
    values = run.map("qi", _qi_values, frames, partitions, [names] * len(frames))
    run.wait(values, 0.08, 0.12, "checking the quasi-identifiers")
    stats = client.gather(run.map("stats", _stats, values))
    n, mean, m2 = _combine_stats(stats, len(names))
    validate_k(k, n, source_name)
    block_size = resolve_block_size(spec.block_size, n, k)
    if block_size is None or n <= block_size:
        raise InvalidParameter(one_piece_message())
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    written = tuple(_combined_written([s["written"][j] for s in stats]) for j in range(len(names)))

    # 3. the split
    run.progress(0.12, "splitting into blocks")
    merged = 0
    plan: SplitPlan | None = None
    unit_of_leaf: np.ndarray | None = None
    if n <= SAMPLE_ROWS:  # the sample is the table: prepared and split as the local engine
        whole = pd.concat(client.gather(values), ignore_index=True)
        spec_c = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
        prepared = prepare_qi(Dataset(whole, RoleMap.from_dict({c: spec_c for c in names})))
        del whole
        mean, std = prepared.cont_mean, prepared.cont_std
        assert prepared.cont_values is not None
        # the decimals as a local run reads them: from the whole columns
        written = tuple(
            written_decimals(pd.Series(prepared.cont_values[:, j])) for j in range(len(names))
        )
        blocks = block_rows(prepared.continuous, k, block_size)
        unit_of_row = np.empty(n, dtype=np.int64)
        for b, rows in enumerate(blocks):
            unit_of_row[rows] = b
        del prepared
        n_units = len(blocks)
        sample_size, split = n, "whole table (as the local engine)"
        assignments: list[Any] = [
            unit_of_row[o : o + s] for o, s in zip(offsets, sizes, strict=True)
        ]
    else:
        std = np.sqrt(m2 / (n - 1))
        std = np.where(std > 0, std, 1.0)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
        counts = rng.multivariate_hypergeometric(sizes, SAMPLE_ROWS)
        picked = run.map(
            "sample", _sample, values, list(counts), [seed] * len(values), list(range(len(values)))
        )
        rows_of = client.gather(picked)
        takes = run.map("take", _take, values, picked)
        xs = client.gather(takes)
        x = np.vstack(xs)
        ids = np.concatenate([o + r for o, r in zip(offsets, rows_of, strict=True)])
        plan = sample_split(_z(x, mean, std), ids, n, k, block_size)
        del x, xs
        leaf_counts = client.gather(
            run.map(
                "count",
                _leaf_counts,
                values,
                list(offsets),
                [plan] * len(values),
                [mean] * len(values),
                [std] * len(values),
            )
        )
        leaf_sizes = np.sum(leaf_counts, axis=0)
        unit_of_leaf, merged = merge_small_blocks(leaf_sizes.tolist(), k)
        n_units = int(unit_of_leaf.max()) + 1
        sample_size, split = SAMPLE_ROWS, f"sample of {SAMPLE_ROWS:,} records"
        assignments = [plan] * len(values)
    if n_units < 2:
        raise InvalidParameter(one_piece_message())

    # 4. every record to its block (Dask's shuffle), each block protected on its worker
    with_units = run.map(
        "assign",
        _with_units,
        values,
        list(range(len(values))),
        list(offsets),
        assignments,
        [unit_of_leaf] * len(values),
        [mean] * len(values),
        [std] * len(values),
    )
    meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in names})
    meta["_part"] = pd.Series(dtype=np.int64)
    meta["_row"] = pd.Series(dtype=np.int64)
    meta["_unit"] = pd.Series(dtype=np.int64)
    run.progress(0.14, "moving records to their blocks")
    units = _reshuffle(client, with_units, meta, "_unit", n_units)
    blocks_job = _Job(
        names=names,
        mean=mean,
        std=std,
        offsets=offsets,
        method=facts.method.name,
        k=k,
        params=dict(facts.params),
        seed=seed,
        block_size=block_size,
        n_units=n_units,
        cancel_event=cancel_event,
    )
    outputs = run.map("block", _protect_block, units, list(range(n_units)), [blocks_job] * n_units)
    del with_units
    run.wait(outputs, 0.15, 0.85, "blocks")
    reports = client.gather(run.map("report", _second, outputs))
    protected = run.map("protected", _first, outputs)
    del units, outputs

    # 5. the release check, before anything is written
    facts.n, facts.m2, facts.std, facts.written = n, m2, std, written
    facts.block_size, facts.split, facts.sample_size, facts.merged = (
        block_size, split, sample_size, merged,
    )  # fmt: skip
    check_blocks(job, facts, reports)

    # 6. back to the input's partitions, written
    job_w = replace(release_job(blocks_job, job, facts), folder=str(temp))
    out_meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in names})
    for c in ("_part", "_row", "_unit", "_label"):
        out_meta[c] = pd.Series(dtype=np.int64)
    run.progress(0.85, "moving records back to their partitions")
    back = _reshuffle(client, protected, out_meta, "_part", len(frames))
    del protected
    temp.mkdir()
    parts = run.map(
        "write",
        _write_part,
        back,
        frames,
        values,
        list(range(len(frames))),
        [p.name for p in partitions],
        [job_w] * len(frames),
    )
    run.wait(parts, 0.87, 0.99, "writing")
    facts.written_parts = list(client.gather(parts))
    facts.input_partitions = len(frames)
    facts.n_workers = len(client.scheduler_info(n_workers=-1).get("workers", {}))


def partitioned_report(job: PartitionedJob, facts: RunFacts) -> dict[str, Any]:
    """The run report of a partitioned run (Dask, or Spark: :mod:`microgui.core.release.spark`)
    from the job and what its engine measured: the blocks' reports (:func:`_protect_block`)
    and the parts' sums (``sse``, ``sse_raw``, ``neutralized``, ``renamed``, ``converted``,
    ``file``): the keys of a local run's report."""
    method, k, params, seed, n = facts.method, int(job.spec.k), facts.params, facts.seed, facts.n
    names, roles, reports, m2, std = facts.names, facts.roles, facts.reports, facts.m2, facts.std
    written_parts, level, engine_name = facts.written_parts, facts.level, facts.engine_name
    mode, written, group_column = facts.mode, facts.written, job.group_column
    reason, problems, keep_formula_cells = facts.reason, facts.problems, job.keep_formula_cells
    folder_name, out_kind, block_size = facts.folder_name, facts.out_kind, facts.block_size
    order, order_note = job.order, facts.order_note
    n_groups = np.array([int(r["n_groups"]) for r in reports], dtype=np.int64)
    sst_j = m2 / std**2
    sse_j = np.sum([p["sse"] for p in written_parts], axis=0)
    sse_raw_j = np.sum([p["sse_raw"] for p in written_parts], axis=0)
    sse_total, sst_total = float(sse_j.sum()), float(sst_j.sum())

    def il(a: float, b: float) -> float:
        return 100.0 * a / b if b > 0 else 0.0

    counts_by_size: dict[int, int] = {}
    for r in reports:
        for s, c in r["group_size_counts"].items():
            counts_by_size[int(s)] = counts_by_size.get(int(s), 0) + int(c)
    extras = [e for r in reports for e in r["extras"]]
    extra, not_combined = _combine_extra(extras, sst_total)
    block_sizes = [s for r in reports for s in r["pieces"]]
    report: dict[str, Any] = {
        "method": method.name,
        "k": k,
        "parameters": dict(params),
        "seed": seed,
        "n_records": n,
        "n_groups": int(n_groups.sum()),
        "min_group_size": min(counts_by_size),
        "max_group_size": max(counts_by_size),
        "group_size_counts": {str(s): counts_by_size[s] for s in sorted(counts_by_size)},
        "sse": sse_total,
        "sst": sst_total,
        "information_loss": il(sse_total, sst_total),
        "information_loss_basis": "z-scored continuous quasi-identifiers",
        "il_lower_bound": None,
        "il_lower_bound_best": None,
        "il_lower_bound_basis": f"none (not computed for a partitioned {engine_name} run)",
        "information_loss_all_qi": il(sse_total, sst_total),
        "information_loss_all_qi_basis": ALL_QI_BASIS,
        "information_loss_by_attribute": {
            c: {
                "kind": "continuous",
                "generalized": False,
                "sse": float(sse_j[j]),
                "sst": float(sst_j[j]),
                "information_loss": il(float(sse_j[j]), float(sst_j[j])),
            }
            for j, c in enumerate(names)
        },
        "k_anonymity": level,
        "k_anonymity_basis": "the smallest level of a block (equal records of different "
        "blocks only raise the whole table's)",
        "invented_combinations": 0,
        "seconds": 0.0,
        "microgui_version": __version__,
        "input": facts.source_name,
        "quasi_identifiers": {c: "continuous" for c in names},
        "missing_as_category": {},
        "identifiers_removed": list(roles.identifiers),
        "confidential": list(roles.confidential),
        "citation": method.reference,
        **extra,
        "scale": {
            "strata": [],
            "n_strata": 1,
            "stratum_sizes": {"min": n, "max": n},
            "block_size": block_size,
            "n_blocks": len(block_sizes),
            "block_sizes": {"min": min(block_sizes), "max": max(block_sizes)},
            "engine": facts.engine,
            "processes": 0,
            "partitioned": True,
            "input_partitions": facts.input_partitions,
            "workers": facts.n_workers,
            "split": facts.split,
            "sample_size": facts.sample_size,
            "blocks_merged": facts.merged,
            "blocks_split_again": sum(1 for r in reports if len(r["pieces"]) > 1),
            "output": {
                "folder": folder_name,
                "format": out_kind,
                "parts": [p["file"] for p in written_parts],
            },
            **({"extra_not_combined": not_combined} if not_combined else {}),
        },
        "output": folder_name,
        # the release's fingerprint (issue 18): partitions are read and written on the workers,
        # so no file is hashed here; the counts are the whole table's
        "fingerprint": {
            "input": {
                "file": facts.source_name,
                "sha256": None,
                "bytes": None,
                "rows": n,
                "columns": None,
                "note": "partitioned input: not hashed",
            },
            "output": {
                "file": folder_name,
                "format": out_kind,
                "sha256": None,
                "rows": n,
                "columns": None,
                "note": "a folder of parts: hash each part file",
            },
        },
        # the keys of a single-file release (issue 18): the parts' format; CSV parts are
        # written with the default options
        "output_format": out_kind,
        **(
            {"csv_format": {"separator": ",", "decimal": ".", "encoding": "utf-8"}}
            if out_kind == "csv"
            else {}
        ),
    }
    if mode != "none":
        used = {c: (written[j] if mode == "source" else int(mode)) for j, c in enumerate(names)}
        report["rounding"] = {
            "round": mode,
            "decimals": used,
            "information_loss_unrounded": il(float(sse_raw_j.sum()), sst_total),
        }
    if group_column:
        report["group_column"] = group_column
    if reason:
        report["export_override"] = {"reason": reason, "problems": list(problems)}
    report.update(_converted_in_parts(written_parts))
    if keep_formula_cells:
        report["formula_cells"] = "kept raw (--keep-formula-cells)"
    else:
        neutralized: dict[str, int] = {}
        for p in written_parts:
            for c, count in p["neutralized"].items():
                neutralized[c] = neutralized.get(c, 0) + int(count)
        report["neutralized_cells"] = neutralized
        report["neutralized_column_names"] = int(written_parts[0]["renamed"])
    # the verdict's keys (issue 29): a partitioned run never reads the confidential columns
    # into its blocks, so attribute disclosure is "not measured" (null), never a ✓
    # issue 31: each part shuffled, no record moved between parts; the report says so
    report["record_order"] = {
        **order_report(order, None),
        "note": order_note
        or (
            "a partitioned release keeps each part's input order"
            if order.keep
            else "each part's records shuffled within the part; a record stays in the part "
            "of its input partition (no permutation across parts)"
        ),
    }
    report["attribute_disclosure"] = None if roles.confidential else {}
    report["verdict"] = verdict_json(release_verdict(report))
    report["released_with_attribute_disclosure"] = None if roles.confidential else False
    # the file's risk (issue 29) needs every record's key cell at once: not measured by the
    # partitioned engine (null, with why); `microgui assess` on the input measures it
    note = "not measured by the partitioned engine: run `microgui assess` on the file"
    report["risk_before"] = {"keys": [], "keys_note": note, "measured": False}
    report["risk_after"] = {"keys": [], "keys_note": note, "measured": False}
    return report


def _converted_in_parts(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The columns converted in any part (:func:`~microgui.core.table.column_types.release_columns`),
    as one report: lists joined, and for a column converted differently in two parts (bytes
    all UTF-8 text in one, not in another) each way, joined by "; "."""
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in (part.get("converted") or {}).items():
            if isinstance(value, list):
                merged[key] = sorted({*merged.get(key, []), *value})
                continue
            entry = merged.setdefault(key, {})
            for column, says in value.items():
                if says not in entry.get(column, "").split("; "):
                    entry[column] = f"{entry[column]}; {says}" if column in entry else says
    return merged


def _take(values: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = values.to_numpy(dtype=np.float64)[rows]
    return out


def _combine_extra(extras: list[dict[str, Any]], sst: float) -> tuple[dict[str, Any], list[str]]:
    """The method's report entries equal in every block (as the local engine keeps them), one
    ``refinement`` entry for the whole table, and the names of the others."""
    keys = list(dict.fromkeys(key for e in extras for key in e))
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key in keys:
        if key == "refinement" and all(key in e for e in extras):
            kept[key] = combine_refinements([e[key] for e in extras], sst)
            continue
        present = [e[key] for e in extras if key in e]
        try:
            same = len(present) == len(extras) and all(bool(v == present[0]) for v in present)
        except (ValueError, TypeError):
            same = False
        if same:
            kept[key] = present[0]
        else:
            dropped.append(key)
    return kept, dropped
