"""Partitioned runs on Spark (issue 33, item 3): the Dask engine's split, blocks on executors.

``microgui protect INPUT -o OUT --engine spark [--master URL] --block-size N`` (:func:`protect_spark`)
and the API's :func:`microgui.api.protect_spark` (a ``pyspark.sql.DataFrame`` in, one out;
:func:`protect_spark_frame`) run the partitioned engine of :mod:`microgui.core.release.distributed`
on a Spark cluster (a Databricks or Cloudera cluster, or ``local[*]``, this machine's cores):

1. **Record numbers.** Every record gets its number in the input's order, as the local engine
   reads it: records are keyed by their file (``_metadata.file_path``, names in sorted order),
   the byte range Spark split it into (``_metadata.file_block_start``) and
   ``monotonically_increasing_id`` within it; a small table of counts per key turns that into
   0..n-1 (a DataFrame given to the API is numbered by its partitions, in order, and persisted
   first so that the numbers hold).
2. **Global statistics and the split** of the Dask engine: a table of at most
   :data:`~microgui.core.release.distributed.SAMPLE_ROWS` records comes to the driver as its
   continuous quasi-identifiers only and is prepared and split exactly as a local run does it
   (:func:`~microgui.core.table.dataset.prepare_qi`, :func:`~microgui.core.runs.scale.block_rows`);
   a larger one gives its means and deviations (Spark's aggregates), a Bernoulli sample of about
   that many records for :func:`~microgui.core.release.distributed.sample_split`, and the blocks'
   sizes counted on the executors (blocks of fewer than k records merged with their neighbour).
3. **Blocks.** A block column is added on the executors, and ``groupBy(block).applyInPandas``
   protects each block with the Dask engine's block function (``_protect_block``: the same
   seeds, labels and group means as the local engine's blocks), its report travelling on the
   block's first row. The result is persisted; the release check (k-anonymity of every block
   at least k) runs before anything is written.
4. **Release.** The input is joined with the protected values on the record number, put in
   the release's order (``repartitionByRange`` and ``sortWithinPartitions`` on each record's
   place) and composed batch by batch as the Dask engine writes its parts: clean numbers with the whole column's decimals and
   magnitude, ``round``, the group column, identifiers removed, formula cells and column names
   neutralized. The command writes it as a folder of Parquet part files under a hidden name and
   renames it with ``_microgui.json`` (the parts and the run report), as the Dask engine does; the
   API returns the DataFrame and the report.

So a table of at most 200,000 records gives the local engine's groups and values (and the Dask
engine's), value for value; above that the blocks come from the sample's split, as on Dask.

**Record order** (issue 31, as the Dask engine): each record's place is its input partition's
first number plus its place in that partition's permutation (``SeedSequence(entropy,
spawn_key=(i,))`` for partition i, the partitions the Dask engine reads: a CSV file, up to a
million records of a Parquet file; a DataFrame's partitions for the API), so the release read
in part-name order is the Dask engine's with the same seeds; no record moves across input
partitions. ``--keep-order`` (``order=RecordOrder(keep=True)``) keeps the input's order. The
shared job (:class:`~microgui.core.release.distributed.PartitionedJob`) and report code
(:func:`~microgui.core.release.distributed.partitioned_report`) are the Dask engine's.

**Checks.** Before any data is sent, the master URL must be one Spark understands
(:func:`check_master_url`; a ``spark://`` master must accept a connection) and every executor
must run this microgui version (:func:`check_executor_versions`), else one line says which and
what to install. The limits of the Dask engine hold (continuous quasi-identifiers, aggregating
methods, no strata, hierarchies, ``rescale_variance`` or weights:
:func:`~microgui.core.release.distributed.partitioned_refusal`). The command reads and writes
paths that the driver and every executor see at the same place (``local[*]``, or a shared file
system); for ``hdfs://``, ``s3a://`` or ``dbfs:/`` tables use the API and Spark's own reader and
writer.

**Progress and cancel.** Each Spark action runs in a job group; progress is its stages'
finished tasks; a cancel (the progress callback raising :class:`RunCancelled`, or Ctrl-C's
KeyboardInterrupt) cancels the job group and leaves nothing behind. The group, not
``SparkContext.cancelAllJobs``: on a notebook's shared session the user's other jobs go on
(pyspark's own Ctrl-C handler, installed with the session in the main thread, cancels all).
"""

from __future__ import annotations

import base64
import functools
import math
import os
import pickle
import re
import secrets
import shutil
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd

from microgui._version import __version__
from microgui.core.errors import (
    ExportRefused,
    InvalidInput,
    InvalidParameter,
    MicroguiError,
)
from microgui.core.io import write_json_atomic
from microgui.core.methods import Method
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.release import distributed as dist
from microgui.core.release.check import neutralize_column_names, neutralize_formulas
from microgui.core.release.order import RecordOrder
from microgui.core.runs.pool import POLL_SECONDS
from microgui.core.runs.scale import (
    block_rows,
    check_scale_options,
    one_piece_message,
    resolve_block_size,
)
from microgui.core.runs.spec import RunSpec, parse_seed, validate_k
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.numbers import written_decimals
from microgui.core.table.roles import (
    AttributeKind,
    AttributeRole,
    ColumnSpec,
    RoleMap,
)

__all__ = [
    "SPARK_INSTALL_HINT",
    "DEFAULT_MASTER",
    "check_master_url",
    "spark_session",
    "check_executor_versions",
    "protect_spark",
    "protect_spark_frame",
]

#: What to install for ``--engine spark``.
SPARK_INSTALL_HINT = 'pip install "microgui-sdc[spark]"'
#: The master of a session the command starts when no ``--master`` is given.
DEFAULT_MASTER = "local[*]"
#: How long to wait for a ``spark://`` master to accept a connection (seconds).
MASTER_CONNECT_SECONDS = 10.0
#: Records per output part file (at least one part per input partition).
OUTPUT_PART_ROWS = 1_000_000
#: Prefix of the columns the run adds inside Spark (a table's own such column is refused).
_PREFIX = "_mg_"
#: How a microgui error raised on an executor travels to the driver (one line, its type).
_ERROR_MARK = "microgui-error"


# --------------------------------------------------------------------------------------------
# the session
# --------------------------------------------------------------------------------------------

_LOCAL = re.compile(r"local(\[(\*|[1-9][0-9]{0,3})(,[0-9]{1,3})?\])?")
_STANDALONE = re.compile(
    r"spark://(?P<hosts>[A-Za-z0-9.\-]{1,253}:[0-9]{1,5}(,[A-Za-z0-9.\-]{1,253}:[0-9]{1,5})*)"
)
_OTHER = re.compile(r"yarn|k8s://https?://[A-Za-z0-9.\-\[\]:]{1,300}(/[!-~]*)?")


def _import_pyspark() -> Any:
    try:
        import pyspark
        import pyspark.sql  # noqa: F401
    except ImportError:
        raise InvalidParameter(
            "engine 'spark' needs pyspark (and Java 17 or later), which is not installed: "
            f"{SPARK_INSTALL_HINT}"
        ) from None
    return pyspark


def check_master_url(master: object) -> str:
    """``master`` when it is a Spark master URL this engine can use: ``local``, ``local[N]``,
    ``local[*]``, ``spark://HOST:PORT[,HOST:PORT...]`` (a standalone cluster, which must accept a
    connection), ``yarn`` or ``k8s://https://HOST[:PORT]``; :class:`InvalidParameter` (one line)
    otherwise, before any session is started."""
    hint = "e.g. local[*] (this machine), spark://HOST:7077, yarn or k8s://https://HOST:443"
    if not isinstance(master, str) or not master.strip():
        raise InvalidParameter(f"the Spark master URL is empty; give one, {hint}")
    shown = repr(master) if len(master) <= 80 else repr(master[:77] + "...")
    if _LOCAL.fullmatch(master) or _OTHER.fullmatch(master):
        return master
    match = _STANDALONE.fullmatch(master)
    if match is None:
        raise InvalidParameter(f"{shown} is not a Spark master URL; {hint}")
    for item in match["hosts"].split(","):
        host, _, port_text = item.rpartition(":")
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise InvalidParameter(f"Spark master {shown} has port {port}, not 1..65535; {hint}")
        try:
            socket.create_connection((host, port), timeout=MASTER_CONNECT_SECONDS).close()
        except OSError as exc:
            why = (
                "connection refused"
                if isinstance(exc, ConnectionRefusedError)
                else (" ".join(str(exc.strerror or exc).split()) or type(exc).__name__)
            )
            raise InvalidParameter(
                f"cannot reach the Spark master at {item!r} ({why}); check the URL in {shown} "
                "and that the master is running"
            ) from None
    return master


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n", 1)[0].split())
    return text if len(text) <= 200 else text[:197] + "..."


def spark_session(master: str | None = None) -> Any:
    """The active SparkSession, or a new one on ``master`` (default :data:`DEFAULT_MASTER`):
    quiet logs, no web UI, no console progress bar, few shuffle partitions; in local mode its
    Python workers run this interpreter. :class:`InvalidParameter` (one line) when pyspark or
    Java is missing or the session cannot start."""
    _import_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    url = check_master_url(master or DEFAULT_MASTER)
    if url.startswith("local"):
        # the executors' Python is this one (its packages: microgui, pyarrow), unless set
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    cores = os.cpu_count() or 2
    builder = (
        SparkSession.builder.master(url)
        .appName("microgui")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.shuffle.partitions", str(max(2, min(2 * cores, 64))))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    try:
        return builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - Java's and py4j's errors: one line for the user
        raise InvalidParameter(
            f"cannot start a Spark session on {url!r} ({type(exc).__name__}: "
            f"{_first_line(exc)}); check the master URL and that Java 17 or later is installed"
        ) from None


def _executor_version() -> str:
    """The microgui version an executor's Python runs (what :func:`check_executor_versions`
    asks every executor)."""
    from microgui._version import __version__ as installed

    return installed


def _version_answers(probe: Callable[[], str]) -> Callable[[Iterator[Any]], Iterator[str]]:
    def answer(_rows: Iterator[Any]) -> Iterator[str]:
        where = f"{socket.gethostname()}"
        try:
            yield f"{where}\t{probe()}"
        except BaseException as exc:  # noqa: BLE001 - reported, not raised: one line on the driver
            yield f"{where}\t!{type(exc).__name__}: {' '.join(str(exc).split())[:120]}"

    return answer


def check_executor_versions(spark: Any) -> int:
    """Refuse, before any data is sent, executors whose Python runs another microgui version
    than this driver (or cannot import it); returns the number of hosts that answered. One
    task per slot of the cluster asks (``defaultParallelism``)."""
    here = __version__
    sc = spark.sparkContext
    slots = max(1, int(sc.defaultParallelism))
    probe = _executor_version  # read at call time: a test swaps it
    try:
        answers = sc.parallelize(range(slots), slots).mapPartitions(_version_answers(probe))
        lines = answers.collect()
    except Exception as exc:  # noqa: BLE001 - an executor without pyspark's Python, say
        raise InvalidParameter(
            f"the Spark executors cannot run microgui ({_first_line(exc)}); install microgui "
            f'{here} there (pip install "microgui-sdc[spark]=={here}") or run with --engine local'
        ) from None
    wrong: list[str] = []
    hosts = set()
    for line in lines:
        host, _, answer = str(line).partition("\t")
        hosts.add(host)
        if answer.startswith("!"):
            wrong.append(f"on {host} cannot run microgui ({answer[1:]})")
        elif answer != here:
            wrong.append(f"on {host} runs microgui {answer}")
    if wrong:
        unique = list(dict.fromkeys(wrong))
        more = f" (and {len(unique) - 3} more)" if len(unique) > 3 else ""
        raise InvalidParameter(
            f"a Spark executor {'; '.join(unique[:3])}{more}, but this driver runs microgui "
            f"{here}: every executor must run the same version; install it there "
            f'(pip install "microgui-sdc[spark]=={here}"), or run with --engine local'
        )
    return len(hosts)


# --------------------------------------------------------------------------------------------
# running Spark actions: job groups, progress, cancel, errors
# --------------------------------------------------------------------------------------------


class _Actions:
    """Runs each Spark action of one run in the run's job group, in a thread, reporting its
    stages' finished tasks as progress; a cancel cancels the group."""

    def __init__(self, spark: Any, progress: ProgressFn) -> None:
        self.sc = spark.sparkContext
        self.progress = progress
        self.group = f"microgui-{uuid.uuid4().hex[:12]}"
        self.last = 0.0

    def _tasks_done(self) -> float:
        tracker = self.sc.statusTracker()
        done = total = 0
        for job in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                s = tracker.getStageInfo(stage)
                if s is not None:
                    done, total = done + s.numCompletedTasks, total + s.numTasks
        return done / total if total else 0.0

    def tick(self, fraction: float, status: str) -> None:
        self.last = max(self.last, fraction)  # monotone
        self.progress(self.last, status)

    def run(self, what: Callable[[], Any], start: float, stop: float, status: str) -> Any:
        box: dict[str, Any] = {}

        def target() -> None:
            self.sc.setJobGroup(self.group, status, interruptOnCancel=True)
            try:
                box["value"] = what()
            except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target, name="microgui-spark", daemon=True)
        thread.start()
        try:
            self.tick(start, status)
            while thread.is_alive():
                thread.join(POLL_SECONDS)
                self.tick(start + (stop - start) * min(self._tasks_done(), 1.0), status)
        except BaseException:
            self.sc.cancelJobGroup(self.group)
            thread.join()
            raise
        if "error" in box:
            raise _as_microgui_error(box["error"])
        self.tick(stop, status)
        return box.get("value")


def _as_microgui_error(exc: BaseException) -> BaseException:
    """A microgui error raised on an executor as itself (one line); anything else as it is."""
    text = str(exc)
    match = re.search(_ERROR_MARK + r"\[(\w+)\]: ([^\n]*)", text)
    if match is None:
        return exc
    from microgui.core import errors

    kind = getattr(errors, match[1], None)
    if isinstance(kind, type) and issubclass(kind, MicroguiError):
        return kind(match[2])
    return InvalidInput(match[2])


def _carried(exc: MicroguiError) -> RuntimeError:
    """An executor's microgui error as one marked line that :func:`_as_microgui_error` finds in
    Spark's PythonException on the driver."""
    message = " ".join(str(exc).split())
    return RuntimeError(f"{_ERROR_MARK}[{type(exc).__name__}]: {message}")


# --------------------------------------------------------------------------------------------
# record numbers
# --------------------------------------------------------------------------------------------


def _numbered(
    spark: Any, frame: Any, from_files: bool, persisted: list[Any]
) -> tuple[Any, int, list[tuple[Any, int]]]:
    """``frame`` with ``_mg_id``: its records numbered 0..n-1 in the input's order (module
    docstring, 1.), n, and the records of every key in that order (key: the file's URI, or
    the partition's number). A DataFrame (not files) is persisted with its partitions' numbers
    before they are counted (into ``persisted``): a frame whose partitions come out otherwise
    on each evaluation (``repartitionByRange`` samples its bounds, a ``sample`` or ``rand``
    draws anew) is numbered once."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import LongType, StructField, StructType

    if from_files:
        keys = [
            F.col("_metadata.file_path").alias("_mg_k0"),
            F.col("_metadata.file_block_start").alias("_mg_k1"),
        ]
    else:
        keys = [F.spark_partition_id().alias("_mg_k0")]
    names = [f"_mg_k{i}" for i in range(len(keys))]
    tagged = frame.select("*", *keys, F.monotonically_increasing_id().alias("_mg_mid"))
    if not from_files:
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        persisted.append(tagged)
    counts = tagged.groupBy(*names).agg(
        F.count(F.lit(1)).alias("_mg_n"), F.min("_mg_mid").alias("_mg_min")
    )
    rows = sorted(counts.collect(), key=lambda r: tuple(r[c] for c in names))
    shifts = []
    per_key: list[tuple[Any, int]] = []
    offset = 0
    for row in rows:
        shifts.append((*(row[c] for c in names), offset - int(row["_mg_min"])))
        per_key.append((row[names[0]], int(row["_mg_n"])))
        offset += int(row["_mg_n"])
    schema = StructType(
        [*tagged.select(*names).schema.fields, StructField("_mg_shift", LongType())]
    )
    table = spark.createDataFrame(shifts, schema)
    numbered = (
        tagged.join(F.broadcast(table), on=names)
        .withColumn("_mg_id", F.col("_mg_mid") + F.col("_mg_shift"))
        .drop("_mg_mid", "_mg_shift", *names)
    )
    return numbered, offset, per_key


def _local_path(uri: str) -> str:
    """A file's path from the URI Spark names it by (``file:///a%20b/t.csv``)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else uri


def _part_sizes(
    partitions: Sequence[dist.Partition], per_key: Sequence[tuple[Any, int]]
) -> list[int]:
    """The records of every partition the Dask engine reads the input in
    (:func:`~microgui.core.release.distributed.list_partitions`: a CSV file, up to a million
    records of a Parquet file; empty ones left out, as the Dask engine leaves them), from
    Spark's counts per file; Spark's own files when the two disagree."""
    per_file: dict[str, int] = {}
    for uri, count in per_key:
        path = _local_path(str(uri))
        per_file[path] = per_file.get(path, 0) + count
    sizes = [
        int(p.rows)
        if p.kind == "parquet" and p.rows is not None
        else per_file.get(str(Path(p.path).resolve()), 0)
        for p in partitions
    ]
    if sum(sizes) != sum(per_file.values()):  # a CSV file that Spark reads otherwise, say
        sizes = [per_file[k] for k in sorted(per_file)]
    return [s for s in sizes if s > 0]


# --------------------------------------------------------------------------------------------
# executor functions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Split:
    """How records find their block: ``unit_of_row`` (the whole table was split on the driver)
    or ``plan`` with ``unit_of_leaf`` (a sample's split)."""

    mean: np.ndarray
    std: np.ndarray
    unit_of_row: np.ndarray | None = None
    plan: dist.SplitPlan | None = None
    unit_of_leaf: np.ndarray | None = None


def _units_of(
    split: _Split, qcols: Sequence[str]
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def units(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            ids = batch["_mg_id"].to_numpy(dtype=np.int64)
            if split.unit_of_row is not None:
                unit = split.unit_of_row[ids]
            else:
                assert split.plan is not None
                x = batch[list(qcols)].to_numpy(dtype=np.float64)
                unit = dist.assign_leaves(dist._z(x, split.mean, split.std), ids, split.plan)
                if split.unit_of_leaf is not None:
                    unit = split.unit_of_leaf[unit]
            out = batch.copy()
            out["_mg_unit"] = unit.astype(np.int64)
            yield out

    return units


def _block_of(job: dist._Job, qcols: Sequence[str]) -> Callable[[Any, pd.DataFrame], pd.DataFrame]:
    names = list(job.names)

    def block(key: Any, frame: pd.DataFrame) -> pd.DataFrame:
        unit = int(key[0])
        inner = frame.rename(columns=dict(zip(qcols, names, strict=True)))
        inner["_part"] = np.int64(0)
        inner["_row"] = frame["_mg_id"].to_numpy(dtype=np.int64)
        try:
            out, report = dist._protect_block(inner, unit, job)
        except MicroguiError as exc:
            raise _carried(exc) from None
        result = pd.DataFrame({"_mg_id": out["_row"].to_numpy(dtype=np.int64)})
        result["_mg_unit"] = np.int64(unit)
        result["_mg_label"] = out["_label"].to_numpy(dtype=np.int64)
        for q, name in zip(qcols, names, strict=True):
            result["_mg_p" + q[len("_mg_q") :]] = out[name].to_numpy(dtype=np.float64)
        text: list[str | None] = [None] * len(result)
        if len(result):
            text[0] = base64.b64encode(pickle.dumps(report)).decode("ascii")
        result["_mg_report"] = pd.Series(text, dtype=object)
        return result

    return block


def _written_of(qcols: Sequence[str]) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def written(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            values = [written_decimals(batch[q].astype(np.float64)) for q in qcols]
            yield pd.DataFrame({"_mg_w": [",".join("n" if v is None else str(v) for v in values)]})

    return written


#: ``record_order.note`` of a Spark release in random order.
SHUFFLED_NOTE = (
    "the records of each input partition shuffled among themselves (the Dask engine's "
    "permutation of that partition) and written in that order; no record moved before or after "
    "another partition's records (no permutation across partitions)"
)


@functools.lru_cache(maxsize=4)
def _inverse_permutation(entropy: int, part: int, size: int) -> np.ndarray:
    """Where each record of input partition ``part`` goes among its ``size`` records: the
    inverse of the Dask engine's permutation (``_write_part``: ``SeedSequence(entropy,
    spawn_key=(part,))``); kept for the next batches of the same partition."""
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(part,)))
    inverse = np.empty(size, dtype=np.int64)
    inverse[rng.permutation(size)] = np.arange(size, dtype=np.int64)
    return inverse


def _positions(
    offsets: np.ndarray, sizes: np.ndarray, entropy: int
) -> Callable[[pd.Series], pd.Series]:
    """Every record's place in the release (a pandas UDF of the record numbers): its input
    partition's first number plus its place in that partition's permutation."""

    def positions(ids: pd.Series) -> pd.Series:
        x = ids.to_numpy(dtype=np.int64)
        part = np.searchsorted(offsets, x, side="right") - 1
        out = np.empty_like(x)
        for p in np.unique(part):
            rows = part == p
            inverse = _inverse_permutation(entropy, int(p), int(sizes[p]))
            out[rows] = offsets[p] + inverse[x[rows] - offsets[p]]
        return pd.Series(out, index=ids.index)

    return positions


@dataclass(frozen=True)
class _Compose:
    """What every batch of the release needs."""

    job: dist._Job
    qi: tuple[str, ...]  # the quasi-identifiers' own names, in job.names order
    kept: tuple[str, ...]  # the released columns (identifiers dropped), in input order
    renamed: tuple[str, ...]  # their names as released
    group_column: str | None
    neutralize: bool


def _compose(batch: pd.DataFrame, c: _Compose) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One batch of records (the input's columns, ``_mg_id``, ``_mg_unit``, ``_mg_label`` and the
    raw protected values ``_mg_p{j}``) as released, and its sums (as the Dask engine's
    ``_write_part``)."""
    job = c.job
    d = len(c.qi)
    raw = np.column_stack([batch[f"_mg_p{j}"].to_numpy(dtype=np.float64) for j in range(d)])
    original = np.column_stack([pd.to_numeric(batch[q]).to_numpy(dtype=np.float64) for q in c.qi])
    released = np.column_stack([dist._release(raw[:, j], job, j) for j in range(d)])
    z = dist._z(original, job.mean, job.std)
    sse = ((z - dist._z(released, job.mean, job.std)) ** 2).sum(axis=0)
    sse_raw = ((z - dist._z(raw, job.mean, job.std)) ** 2).sum(axis=0)
    out = batch.loc[:, list(c.kept)].copy(deep=False)
    for j, q in enumerate(c.qi):
        out[q] = pd.Series(released[:, j], index=out.index)
    if c.group_column:
        units = batch["_mg_unit"].to_numpy(dtype=np.int64)
        out[c.group_column] = job.label_offsets[units] + batch["_mg_label"].to_numpy(np.int64)
    neutralized: dict[str, int] = {}
    if c.neutralize:
        out, neutralized = neutralize_formulas(out)
    out.columns = pd.Index([*c.renamed, *([c.group_column] if c.group_column else [])])
    sums = {"sse": sse.tolist(), "sse_raw": sse_raw.tolist(), "neutralized": neutralized}
    return out.reset_index(drop=True), sums


def _release_rows(c: _Compose) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def rows(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            yield _compose(batch, c)[0]

    return rows


def _release_sums(c: _Compose) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    def sums(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        total: dict[str, Any] = {"sse": 0.0, "sse_raw": 0.0, "neutralized": {}}
        for batch in batches:
            s = _compose(batch, c)[1]
            total["sse"] = np.add(total["sse"], s["sse"])
            total["sse_raw"] = np.add(total["sse_raw"], s["sse_raw"])
            for col, count in s["neutralized"].items():
                total["neutralized"][col] = total["neutralized"].get(col, 0) + count
        yield pd.DataFrame({"_mg_s": [base64.b64encode(pickle.dumps(total)).decode("ascii")]})

    return sums


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def _decoded(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))  # noqa: S301 - written by this run's own tasks


def _check_method(job: dist.PartitionedJob) -> tuple[Method, dict[str, Any]]:
    """The job's method and parameters (the refusals shared with the Dask engine,
    :func:`~microgui.core.release.distributed.checked_method`), and Spark's own."""
    spec = job.spec
    method, params = dist.checked_method(job)
    empty = Dataset(pd.DataFrame(), RoleMap(()))
    check_scale_options(empty, int(spec.k), block_size=spec.block_size)
    if spec.block_size is None:
        raise InvalidParameter(one_piece_message().replace("--engine dask", "--engine spark"))
    if spec.workers is not None:
        raise InvalidParameter(
            "--workers sets the local engine's processes; with --engine spark the cluster's "
            "executors run the blocks: drop --workers"
        )
    return method, params


def _check_qi_columns(frame: Any, names: Sequence[str], source_name: str) -> None:
    """Every quasi-identifier numeric and present in every record, else one line naming the
    column and the first record (never a value)."""
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import NumericType

    types = {f.name: f.dataType for f in frame.schema.fields}
    for q in names:
        kind = types[q]
        col = F.col(f"`{q}`")
        if not isinstance(kind, NumericType):
            number = F.expr(f"try_cast(`{q}` AS DOUBLE)")  # ANSI mode: no error, a null
            bad = frame.where(col.isNotNull() & number.isNull())
            first = bad.agg(F.min("_mg_id")).collect()[0][0]
            where = f" (record {int(first) + 1:,} is no number)" if first is not None else ""
            raise InvalidInput(
                f"quasi-identifier {q!r} of {source_name} is read by Spark as "
                f"{kind.simpleString()}, not as numbers{where}; continuous quasi-identifiers "
                "must be numbers: correct the file, or tag the column otherwise"
            )
    # one Spark job for every column: how many records miss it, and the first
    aggs = []
    for q in names:
        col = F.col(f"`{q}`")
        missing = col.isNull() | F.isnan(col.cast("double"))
        aggs += [F.count(F.when(missing, 1)), F.min(F.when(missing, F.col("_mg_id")))]
    row = frame.agg(*aggs).collect()[0]
    for j, q in enumerate(names):
        count, first = int(row[2 * j]), row[2 * j + 1]
        if count:
            raise InvalidInput(
                f"quasi-identifier {q!r} of {source_name} is missing in {count:,} "
                f"record(s) (the first: record {int(first) + 1:,}); fill them in or drop those "
                "records (or use --engine local, which says more)"
            )


def _run(
    spark: Any,
    actions: _Actions,
    numbered: Any,
    n: int,
    part_sizes: Sequence[int],
    job: dist.PartitionedJob,
    facts: dist.RunFacts,
    persisted: list[Any],
) -> Any:
    """The Spark run of ``job`` on the numbered table (``part_sizes``: the records of each input
    partition, in order), measured into ``facts``; returns the released DataFrame (lazy)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    spec, k, source_name = job.spec, int(job.spec.k), facts.source_name
    group_column, keep_formula_cells = job.group_column, job.keep_formula_cells
    columns = [c for c in numbered.columns if c != "_mg_id"]
    ours = [c for c in columns if c.startswith(_PREFIX)]
    if ours:
        raise InvalidInput(
            f"column {ours[0]!r} of {source_name} starts with {_PREFIX!r}, which --engine spark "
            "keeps for its own columns; rename it"
        )
    dist.job_roles(job, facts, columns)
    names, roles = facts.names, facts.roles
    validate_k(k, n, source_name)
    block_size = resolve_block_size(spec.block_size, n, k)
    if block_size is None or n <= block_size:
        raise InvalidParameter(one_piece_message().replace("--engine dask", "--engine spark"))
    seed = facts.seed
    actions.run(lambda: _check_qi_columns(numbered, names, source_name), 0.02, 0.08, "checking")

    # the continuous quasi-identifiers as doubles under internal names, persisted
    qcols = [f"_mg_q{j}" for j in range(len(names))]
    qi_frame = numbered.select(
        "_mg_id",
        *[F.col(f"`{c}`").cast("double").alias(q) for c, q in zip(names, qcols, strict=True)],
    ).persist(StorageLevel.MEMORY_AND_DISK)
    persisted.append(qi_frame)
    spec_c = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    merged = 0
    if n <= dist.SAMPLE_ROWS:  # the whole table on the driver, split as the local engine
        whole = actions.run(
            lambda: qi_frame.orderBy("_mg_id").toPandas(), 0.08, 0.2, "reading the table"
        )
        ids = whole["_mg_id"].to_numpy(dtype=np.int64)
        if not np.array_equal(ids, np.arange(n)):
            raise RuntimeError(f"record numbers of {source_name} are not 0..{n - 1}")
        values = whole[qcols].set_axis(list(names), axis=1)
        del whole
        prepared = prepare_qi(Dataset(values, RoleMap.from_dict({c: spec_c for c in names})))
        mean, std = prepared.cont_mean, prepared.cont_std
        assert prepared.cont_values is not None
        x = prepared.cont_values
        m2 = ((x - x.mean(axis=0)) ** 2).sum(axis=0)
        written = tuple(written_decimals(pd.Series(x[:, j])) for j in range(len(names)))
        blocks = block_rows(prepared.continuous, k, block_size)
        unit_of_row = np.empty(n, dtype=np.int64)
        for b, rows in enumerate(blocks):
            unit_of_row[rows] = b
        del prepared, values, x
        n_units = len(blocks)
        split = _Split(mean=mean, std=std, unit_of_row=unit_of_row)
        sample_size, split_text = n, "whole table (as the local engine)"
    else:
        aggs = []
        for q in qcols:
            aggs += [F.avg(q), F.var_samp(q)]
        row = actions.run(lambda: qi_frame.agg(*aggs).collect()[0], 0.08, 0.14, "statistics")
        mean = np.array([float(row[2 * j]) for j in range(len(qcols))])
        var = np.array([float(row[2 * j + 1]) for j in range(len(qcols))])
        m2 = var * (n - 1)
        std = np.sqrt(var)
        std = np.where(std > 0, std, 1.0)
        lines = actions.run(
            lambda: qi_frame.mapInPandas(_written_of(qcols), "_mg_w string").collect(),
            0.14,
            0.16,
            "decimals",
        )
        per = [[None if v == "n" else int(v) for v in r[0].split(",")] for r in lines]
        written = tuple(dist._combined_written([p[j] for p in per]) for j in range(len(names)))
        fraction = min(1.0, dist.SAMPLE_ROWS / n)
        sample = actions.run(
            lambda: qi_frame.sample(fraction=fraction, seed=seed % (2**31)).toPandas(),
            0.16,
            0.2,
            "sampling",
        )
        sample = sample.sort_values("_mg_id", kind="stable")
        z = dist._z(sample[qcols].to_numpy(dtype=np.float64), mean, std)
        plan = dist.sample_split(z, sample["_mg_id"].to_numpy(dtype=np.int64), n, k, block_size)
        sample_size = len(sample)
        del sample, z
        leaf_split = _Split(mean=mean, std=std, plan=plan)
        schema = StructType([*qi_frame.schema.fields, StructField("_mg_unit", LongType())])
        counted = actions.run(
            lambda: (
                qi_frame.mapInPandas(_units_of(leaf_split, qcols), schema)
                .groupBy("_mg_unit")
                .count()
                .collect()
            ),
            0.2,
            0.25,
            "counting blocks",
        )
        leaf_sizes = np.zeros(plan.n_leaves, dtype=np.int64)
        for r in counted:
            leaf_sizes[int(r[0])] = int(r[1])
        unit_of_leaf, merged = dist.merge_small_blocks(leaf_sizes.tolist(), k)
        n_units = int(unit_of_leaf.max()) + 1
        split = _Split(mean=mean, std=std, plan=plan, unit_of_leaf=unit_of_leaf)
        split_text = f"sample of {sample_size:,} records"
    if n_units < 2:
        raise InvalidParameter(one_piece_message().replace("--engine dask", "--engine spark"))

    # blocks: a block column, then groupBy(block).applyInPandas
    blocks_job = dist._Job(
        names=names,
        mean=mean,
        std=std,
        offsets=np.zeros(1, dtype=np.int64),
        method=facts.method.name,
        k=k,
        params=dict(facts.params),
        seed=seed,
        block_size=block_size,
        n_units=n_units,
        cancel_event="",
    )
    with_units = qi_frame.mapInPandas(
        _units_of(split, qcols),
        StructType([*qi_frame.schema.fields, StructField("_mg_unit", LongType())]),
    )
    out_schema = StructType(
        [
            StructField("_mg_id", LongType()),
            StructField("_mg_unit", LongType()),
            StructField("_mg_label", LongType()),
            *[StructField(f"_mg_p{j}", DoubleType()) for j in range(len(names))],
            StructField("_mg_report", StringType()),
        ]
    )
    protected = (
        with_units.groupBy("_mg_unit")
        .applyInPandas(_block_of(blocks_job, qcols), out_schema)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    persisted.append(protected)
    texts = actions.run(
        lambda: protected.where(F.col("_mg_report").isNotNull()).select("_mg_report").collect(),
        0.25,
        0.8,
        "blocks",
    )
    reports = sorted((_decoded(r[0]) for r in texts), key=lambda r: int(r["unit"]))
    if [int(r["unit"]) for r in reports] != list(range(n_units)):
        raise RuntimeError(f"{len(reports)} block reports for {n_units} blocks")

    # the release check, before anything is released
    facts.n, facts.m2, facts.std, facts.written = n, m2, std, written
    facts.block_size, facts.split, facts.sample_size, facts.merged = (
        block_size, split_text, sample_size, merged,
    )  # fmt: skip
    dist.check_blocks(job, facts, reports)
    release_job = dist.release_job(blocks_job, job, facts)
    removed = set(roles.identifiers)
    kept = tuple(c for c in columns if c not in removed)
    renamed = tuple(kept)
    n_renamed = 0
    if not keep_formula_cells:
        probe, n_renamed = neutralize_column_names(pd.DataFrame(columns=list(kept)))
        renamed = tuple(str(c) for c in probe.columns)
    compose = _Compose(
        job=release_job,
        qi=names,
        kept=kept,
        renamed=renamed,
        group_column=group_column,
        neutralize=not keep_formula_cells,
    )
    types = {f.name: f for f in numbered.schema.fields}
    fields = [
        StructField(new, DoubleType() if old in names else types[old].dataType)
        for old, new in zip(kept, renamed, strict=True)
    ]
    if group_column:
        fields.append(StructField(group_column, LongType()))
    joined = numbered.drop(*[c for c in columns if c in removed]).join(
        protected.drop("_mg_report"), on="_mg_id"
    )
    sums = actions.run(
        lambda: joined.mapInPandas(_release_sums(compose), "_mg_s string").collect(),
        0.8,
        0.88,
        "measuring",
    )
    totals = [_decoded(r[0]) for r in sums]
    neutralized: dict[str, int] = {}
    for t in totals:
        for col, count in t["neutralized"].items():
            neutralized[col] = neutralized.get(col, 0) + int(count)
    n_parts = max(int(numbered.rdd.getNumPartitions()), math.ceil(n / OUTPUT_PART_ROWS))
    facts.written_parts = [
        {
            "file": "",
            "sse": np.sum([np.broadcast_to(t["sse"], len(names)) for t in totals], axis=0),
            "sse_raw": np.sum([np.broadcast_to(t["sse_raw"], len(names)) for t in totals], axis=0),
            "neutralized": neutralized,
            "renamed": n_renamed,
            "converted": {},
        }
    ]
    facts.input_partitions = int(numbered.rdd.getNumPartitions())
    # "workers" of a Spark run: its task slots (defaultParallelism); the report renames the key
    facts.n_workers = int(spark.sparkContext.defaultParallelism)
    facts.order_note = None if job.order.keep else SHUFFLED_NOTE
    key = "_mg_id"
    if not job.order.keep:  # the Dask engine's permutation of every input partition
        offsets = np.concatenate([[0], np.cumsum(part_sizes)[:-1]]).astype(np.int64)
        from pyspark.sql.pandas.functions import pandas_udf

        positions = pandas_udf(  # type: ignore[call-overload]
            _positions(offsets, np.asarray(part_sizes, dtype=np.int64), release_job.order_entropy),
            LongType(),
        )
        joined = joined.withColumn("_mg_pos", positions(F.col("_mg_id")))
        key = "_mg_pos"
    return (
        joined.repartitionByRange(n_parts, key)
        .sortWithinPartitions(key)
        .mapInPandas(_release_rows(compose), StructType(fields))
    )


def _unpersist(frames: Sequence[Any]) -> None:
    for frame in frames:
        try:
            frame.unpersist()
        except Exception:  # noqa: BLE001,S110 - the session may be gone; cleaning up anyway
            pass


def protect_spark_frame(
    frame: Any,
    spec: RunSpec,
    *,
    qi: Sequence[str],
    identifiers: Sequence[str] = (),
    confidential: Sequence[str] = (),
    group_column: str | None = None,
    override: str | None = None,
    keep_formula_cells: bool = False,
    progress: ProgressFn = no_progress,
    order: RecordOrder | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Protect the ``pyspark.sql.DataFrame`` ``frame`` on its own session (module docstring):
    returns the released DataFrame (identifiers removed; the records of each of ``frame``'s
    partitions in a random order, or with ``order=RecordOrder(keep=True)`` in the input's;
    computed from persisted frames: ``unpersist`` them by dropping the session or leave them to
    Spark) and the run report. Raises as :func:`protect_spark`."""
    job = dist.PartitionedJob.make(
        None, None, spec, qi=qi, identifiers=identifiers, confidential=confidential,
        group_column=group_column, override=override, keep_formula_cells=keep_formula_cells,
        order=order,
    )  # fmt: skip
    return _protect_frame(frame, job, progress)


def _protect_frame(
    frame: Any, job: dist.PartitionedJob, progress: ProgressFn
) -> tuple[Any, dict[str, Any]]:
    started = time.perf_counter()
    _import_pyspark()
    from pyspark.sql import DataFrame

    if not isinstance(frame, DataFrame):
        raise InvalidInput(
            f"microgui.protect_spark takes a pyspark.sql.DataFrame, not a {type(frame).__name__}; "
            "for a pandas DataFrame use microgui.protect"
        )
    facts = _facts(job, *_check_method(job), frame.sparkSession, "the DataFrame", "parquet")
    spark = frame.sparkSession
    check_executor_versions(spark)
    actions = _Actions(spark, progress)
    persisted: list[Any] = []
    try:
        numbered, n, per_key = actions.run(
            lambda: _numbered(spark, frame, False, persisted), 0.0, 0.02, "numbering"
        )
        sizes = [count for _key, count in per_key if count > 0]
        release = _run(spark, actions, numbered, n, sizes, job, facts, persisted)
    except BaseException:
        _unpersist(persisted)
        raise
    report = _report(job, facts)
    report["output"] = None
    report["scale"]["output"] = {"format": "pyspark DataFrame", "parts": []}
    report["seconds"] = round(time.perf_counter() - started, 4)
    progress(1.0, "done")
    return release, report


def _facts(
    job: dist.PartitionedJob,
    method: Method,
    params: dict[str, Any],
    spark: Any,
    folder_name: str,
    out_kind: str,
    source_name: str = "the DataFrame",
) -> dist.RunFacts:
    seed = parse_seed(job.spec.seed)
    return dist.RunFacts(
        method=method,
        params=params,
        seed=seed if seed is not None else secrets.randbits(63),
        engine=f"spark ({spark.sparkContext.master})",
        engine_name="Spark",
        source_name=source_name,
        folder_name=folder_name,
        out_kind=out_kind,
    )


def _report(job: dist.PartitionedJob, facts: dist.RunFacts) -> dict[str, Any]:
    report = dist.partitioned_report(job, facts)
    # "workers" of a Spark run: its task slots (defaultParallelism)
    report["scale"]["task_slots"] = report["scale"].pop("workers")
    return report


def protect_spark(
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
    """Protect the Parquet or CSV table ``source`` (a file or a folder of part files) on the
    Spark master ``spec.scheduler`` (None: the active session, or :data:`DEFAULT_MASTER`) and
    write the release as the folder ``output`` of Parquet part files (module docstring);
    returns the run report. ``order``: the records' order within each input partition
    (default: random, as every release's and as the Dask engine's).

    Raises :class:`InvalidParameter`, :class:`InvalidRoles` or :class:`InvalidInput` (one line)
    and :class:`ExportRefused` before anything is written; lets :class:`RunCancelled` from
    ``progress`` propagate (the run's Spark jobs are cancelled, nothing is left behind).
    """
    job = dist.PartitionedJob.make(
        source, output, spec, qi=qi, identifiers=identifiers, confidential=confidential,
        ordinal=ordinal, nominal=nominal, missing_as_category=missing_as_category,
        group_column=group_column, report_path=report_path, override=override,
        keep_formula_cells=keep_formula_cells, order=order,
    )  # fmt: skip
    return run_spark_job(job, progress)


def run_spark_job(job: dist.PartitionedJob, progress: ProgressFn = no_progress) -> dict[str, Any]:
    """:meth:`~microgui.core.release.distributed.PartitionedJob.run` on Spark:
    :func:`protect_spark`."""
    started = time.perf_counter()
    method, params = _check_method(job)
    if job.source is None or job.output is None:
        raise InvalidParameter("a Spark run of files reads a file or folder and writes a folder")
    folder = dist.check_output_folder(job.output, job.source)
    if dist._output_kind(folder) not in (None, "parquet"):
        raise ExportRefused(
            f"--engine spark writes a folder of Parquet part files; name the folder without "
            f"an extension or with .parquet, not {folder.name!r}"
        )
    partitions = dist.list_partitions(job.source)  # the same refusals as the Dask engine
    reports_to = dist.report_path_checked(job, folder, partitions)
    spark = spark_session(job.spec.scheduler)
    check_executor_versions(spark)
    actions = _Actions(spark, progress)
    name = Path(job.source).name
    facts = _facts(job, method, params, spark, folder.name, "parquet", name)
    files = sorted({str(Path(p.path).resolve()) for p in partitions})
    reader = spark.read
    if partitions[0].kind == "parquet":
        frame = reader.parquet(*files)
    else:
        frame = reader.csv(files, header=True, inferSchema=True, escape='"', encoding="UTF-8")
    token = uuid.uuid4().hex[:12]
    temp = folder.parent / f".{folder.name[:40]}.{token}.tmp"
    persisted: list[Any] = []
    committed = False
    try:
        numbered, n, per_key = actions.run(
            lambda: _numbered(spark, frame, True, persisted), 0.0, 0.02, "numbering"
        )
        sizes = _part_sizes(partitions, per_key)
        release = _run(spark, actions, numbered, n, sizes, job, facts, persisted)
        actions.run(lambda: release.write.parquet(str(temp)), 0.88, 0.99, "writing")
        for extra in temp.iterdir():  # Spark's own marker and checksums: not parts
            if extra.name.startswith((".", "_")):
                extra.unlink()
        report = _report(job, facts)
        report["scale"]["output"]["parts"] = sorted(p.name for p in temp.iterdir())
        report["seconds"] = round(time.perf_counter() - started, 4)
        dist._commit(temp, folder, report)
        committed = True
    finally:
        _unpersist(persisted)
        if not committed:
            shutil.rmtree(temp, ignore_errors=True)
    if reports_to is not None:
        write_json_atomic(report, reports_to, protect_from=[p.path for p in partitions])
    progress(1.0, "done")
    return report
