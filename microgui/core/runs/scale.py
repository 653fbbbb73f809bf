"""Scale beyond one block: strata, automatic blocking, and the engines that run the pieces.

A run with ``strata`` or a ``block_size`` (fields of :class:`~microgui.core.runs.RunSpec`) is cut
into *units*, each microaggregated on its own by the chosen method; the units' groups together
partition the table, so every group still has at least k records and k-anonymity holds within
each unit and therefore across them.

**Strata** (``001`` §III; sdcMicro's ``strata_variables``). Records are split by the values of the
strata columns (missing values form a stratum of their own) and each stratum is protected *as if
it were the whole table*: its quasi-identifiers are prepared (z-scored, ranked) on the stratum
alone, the method runs on it and its groups are aggregated on it. A stratum with only one unit
therefore gives exactly what ``run_protection`` gives on that stratum alone (for methods that draw
random numbers, see the seeds below). Every stratum must hold at least k records; a smaller one is
refused, naming it. Strata are numbered in order of first appearance in the table. The strata
columns keep their original values in the output (a quasi-identifier used as a stratum is
constant within each group anyway; copying it back avoids a last-bit change from averaging).

**Automatic blocking.** A stratum (or the whole table) larger than ``block_size`` records is split
into spatially coherent blocks of at most ``block_size`` records by recursive splits along the
principal axis (first principal component, estimated on at most :data:`AXIS_SAMPLE` evenly
spaced records) of the records, in the numeric embedding of the methods' distance
(:func:`qi_embedding`). A set of n > ``block_size`` records is to become
L = ceil(n / block_size) blocks; its split puts about n·floor(L/2)/L records, rounded to a
multiple of k, on the low side of the axis, the rest on the high side (both sides keep ≥ k
records because ``block_size`` ≥ 2k). Multiples of k matter for MDAV: a block of m·k records
becomes m groups of exactly k. Ties on the axis go to the side of the smaller row number, so
blocking is deterministic. Blocks use the stratum's z-scores (not their own: a block is a slice
of space, re-scaling it would change the metric); each block is microaggregated alone and the
stratum's groups are aggregated together. This approximates running the method on the whole
stratum: records near a split cannot be grouped across it. Measured with the benchmark's
``blocking_cost`` (:mod:`microgui.bench`) on its ``correlated_data`` (100,000 × 10, k = 5, MDAV,
IL 6.741 % unblocked): IL +6.9 % (relative) with blocks of 5,000, +4.7 % with 10,000, +2.9 % with
20,000 and +0.9 % with 50,000. Blocks of about 20,000 records are the suggested setting for large
tables (a million records × 10 then take about 15 s on 2 busy cores). Without ``block_size`` a run
is the exact method on the whole table (or stratum), as before. ``block_size="auto"`` (command line
``--block-size auto``) keeps the exact method up to :data:`AUTO_EXACT_MAX` records, where it takes
seconds, and above that uses blocks of :data:`AUTO_BLOCK_SIZE` (+0.9 % IL at 100,000; exact MDAV
grows with n², about 8 minutes at a million records here, blocked about 15 s):
:func:`resolve_block_size`.

**Engines.** Units run in this process one after the other when there is only one, when
``workers == 1``, or (``workers=None``) when the run holds fewer than :data:`IN_PROCESS_BELOW`
records; otherwise ``engine="local"`` runs them in a process pool on this machine's cores (the pool
of :mod:`microgui.core.runs.pool`, shared with sweeps: ``forkserver``/``spawn``, never ``fork``, a
shared cancel event) and ``engine="dask"`` on a Dask distributed cluster
(``scheduler="tcp://HOST:PORT"``; every worker needs this microgui version installed, checked
before any work is sent: :func:`check_worker_versions`;
``pip install "microgui[dask]"`` on the client). Each unit is sent with only its own
quasi-identifier and confidential columns. As for a sweep, a script that uses the local pool needs
the usual ``if __name__ == "__main__":`` guard (the workers start from the caller's ``__main__``
module).

**Progress and cancellation.** Progress is the fraction of records in finished units, reported
after every finished unit and, while units run elsewhere, every
:data:`~microgui.core.runs.pool.POLL_SECONDS`. When the callback raises :class:`RunCancelled`, pending
units are dropped, running ones are told to stop (the pool's shared event; on Dask a distributed
``Event`` that each unit polls at most every half second) and the :class:`RunCancelled`
propagates.

**Seeds and determinism.** With a single unit the method gets ``default_rng(seed)``, as an
unscaled run does. With several, unit i (numbered strata first, then blocks in split order) gets
``default_rng(SeedSequence(seed, spawn_key=(i,)))``: independent streams (two strata never share
Laplace noise, say) that depend on the data and the spec only, so labels are identical whatever
the engine and the number of workers. Labels are numbered unit by unit, each unit's groups in the
method's own order.

**What a multi-unit run reports.** The run report gets a ``scale`` entry (strata, number and
size range of strata and blocks, engine). A method's report entries (``extra``) are kept when
they are equal in every unit; the names of the others are listed in ``scale.extra_not_combined``.
Views' artifacts (an MST, a dependency tree) are kept only for single-unit runs.
"""

from __future__ import annotations

import math
import re
import socket
import struct
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles, MicroguiError
from microgui.core.methods import MethodInput, get_method
from microgui.core.methods.refine import combine_refinements, refine_space, run_and_refine
from microgui.core.progress import ProgressFn, RunCancelled, no_progress, sub_progress
from microgui.core.runs.pool import (
    POLL_SECONDS,
    check_cancel,
    default_workers,
    labelled,
    run_in_pool,
)
from microgui.core.table.aggregate import aggregate
from microgui.core.table.dataset import Dataset, QIMatrix, prepare_qi
from microgui.core.table.roles import AttributeRole, RoleMap

__all__ = [
    "ENGINES",
    "DASK_INSTALL_HINT",
    "DASK_CONNECT_SECONDS",
    "IN_PROCESS_BELOW",
    "NOMINAL_ONE_HOT_MAX",
    "AXIS_SAMPLE",
    "ScaledOutput",
    "check_scale_options",
    "strata_of",
    "qi_embedding",
    "principal_axis",
    "block_rows",
    "run_scaled",
    "protect_unit",
    "dask_client",
    "check_worker_versions",
]

#: Where units can run.
ENGINES = ("local", "dask")
#: ``block_size="auto"``: the exact method up to this many records (of the whole table)...
AUTO_EXACT_MAX = 100_000
#: ...and blocks of this size above it.
AUTO_BLOCK_SIZE = 50_000
#: What to install for ``engine="dask"``.
DASK_INSTALL_HINT = 'pip install "microgui[dask]"'
#: With ``workers=None``, runs of fewer records stay in this process: a pool's start-up (about a
#: second for the workers to load the compiled kernels) costs more than it saves below this.
IN_PROCESS_BELOW = 20_000
#: A nominal quasi-identifier with more categories than this is left out of the blocking
#: embedding (its one-hot columns would dominate the cost of finding the principal axis).
NOMINAL_ONE_HOT_MAX = 64
#: How long to try to reach a Dask scheduler before giving up (seconds).
DASK_CONNECT_SECONDS = 10.0
#: On Dask, how often a running unit asks the scheduler whether the run was cancelled (seconds).
_DASK_CANCEL_CHECK_SECONDS = 0.5


# --------------------------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------------------------


def resolve_block_size(block_size: int | str | None, n: int, k: int) -> int | None:
    """The block size a run uses: ``"auto"`` becomes None (exact) up to :data:`AUTO_EXACT_MAX`
    records and :data:`AUTO_BLOCK_SIZE` (at least 2k) above; anything else is returned as is."""
    if block_size != "auto":
        return block_size  # type: ignore[return-value]
    return None if n <= AUTO_EXACT_MAX else max(AUTO_BLOCK_SIZE, 2 * k)


def check_scale_options(
    dataset: Dataset,
    k: int,
    *,
    strata: Sequence[str] = (),
    block_size: int | str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
) -> None:
    """Refuse, with a message saying what to do, options that cannot work on ``dataset``.

    Raises :class:`InvalidRoles` for strata columns (unknown, identifier) and
    :class:`InvalidParameter` for the block size, engine, scheduler and workers.
    """
    columns = [str(c) for c in dataset.frame.columns]
    for col in strata:
        if col not in columns:
            shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
            raise InvalidRoles(
                f"--strata names column {col!r}, which is not in the table (its columns: {shown})"
            )
        if col in dataset.roles and dataset.roles[col].role is AttributeRole.IDENTIFIER:
            raise InvalidRoles(
                f"strata column {col!r} is an identifier (removed from the output); stratify by "
                "a column that is released, or re-tag it"
            )
    if len(set(strata)) != len(strata):
        raise InvalidParameter(f"--strata names a column twice: {', '.join(strata)}")
    block_size = resolve_block_size(block_size, dataset.n_records, k)
    if block_size is not None:
        if isinstance(block_size, bool) or not isinstance(block_size, int | np.integer):
            raise InvalidParameter(f"block size {block_size!r} is not a whole number")
        if block_size < 2 * k:
            raise InvalidParameter(
                f"block size {block_size} is smaller than 2k = {2 * k}: a block is split only "
                f"while both halves keep k records; give --block-size >= {2 * k} "
                "(thousands of records are typical)"
            )
    if engine not in ENGINES:
        raise InvalidParameter(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if engine == "dask" and not scheduler:
        raise InvalidParameter(
            "engine 'dask' needs the address of a Dask scheduler (--scheduler tcp://HOST:8786)"
        )
    if engine == "dask":
        check_scheduler_address(scheduler)
    if engine != "dask" and scheduler is not None:
        raise InvalidParameter(
            f"a scheduler ({scheduler}) is used only by --engine dask; add --engine dask or drop it"
        )
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int | np.integer) or workers < 1:
            raise InvalidParameter(f"workers={workers!r} must be a whole number >= 1")
        if engine == "dask":
            raise InvalidParameter(
                "--workers sets the local engine's processes; with --engine dask the cluster's "
                "workers run the blocks: drop --workers"
            )


_ADDRESS = re.compile(
    r"tcp://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])"
    r":(?P<port>[0-9]{1,5})"
)


def check_scheduler_address(address: object) -> tuple[str, int]:
    """``(host, port)`` of a Dask scheduler address ``tcp://HOST:PORT``, or
    :class:`InvalidParameter` before anything is connected to.

    Only plain ``tcp://`` is accepted (microgui offers no TLS credentials, so ``tls://`` could
    not work); no user part, path, white space or control character; port 1..65535. The host is
    a name, an IPv4 address or an IPv6 address in brackets.
    """
    hint = "give it as tcp://HOST:PORT, e.g. tcp://scheduler.example.org:8786"
    if not isinstance(address, str) or not address.strip():
        raise InvalidParameter(f"the Dask scheduler address is empty; {hint}")
    shown = repr(address) if len(address) <= 80 else repr(address[:77] + "...")
    match = _ADDRESS.fullmatch(address)
    if match is None:
        raise InvalidParameter(
            f"scheduler address {shown} is not of the form tcp://HOST:PORT; {hint}"
        )
    port = int(match["port"])
    if not 1 <= port <= 65535:
        raise InvalidParameter(f"scheduler address {shown} has port {port}, not 1..65535; {hint}")
    return match["host"].strip("[]"), port


# --------------------------------------------------------------------------------------------
# strata
# --------------------------------------------------------------------------------------------


def _value_text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "missing"
    return repr(value.item() if isinstance(value, np.generic) else value)


def strata_of(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Stratum number of every record and a readable name per stratum.

    Strata are the distinct combinations of the values of ``columns`` (missing values form a
    stratum of their own), numbered in order of first appearance in the table; names read
    ``region='north', sex=2``.
    """
    cols = list(columns)
    grouped = frame.groupby(cols, sort=False, dropna=False, observed=True)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    first = np.unique(codes, return_index=True)[1]
    names = []
    for row in first:
        names.append(", ".join(f"{c}={_value_text(frame[c].iloc[row])}" for c in cols))
    return codes, names


# --------------------------------------------------------------------------------------------
# blocking
# --------------------------------------------------------------------------------------------


def qi_embedding(qi: QIMatrix) -> np.ndarray:
    """The records as points whose Euclidean distance is MDAV-generic's (``003`` §5.2-5.4).

    Continuous quasi-identifiers: their z-scores; ordinal ones: rank / |D(V)| (so a difference is
    d_ORD of ``003`` eq. 1); nominal ones: one-hot columns scaled by 1/sqrt(2) (two different
    categories are at distance 1, the equality distance of §5.4), left out above
    :data:`NOMINAL_ONE_HOT_MAX` categories. For continuous-only data this is the z-score matrix
    MDAV itself works on.
    """
    n = qi.n
    parts: list[np.ndarray] = [qi.continuous]
    if qi.ordinal.shape[1]:
        parts.append(qi.ordinal / np.maximum(qi.ordinal_sizes, 1).astype(np.float64))
    for j, cats in enumerate(qi.nominal_categories):
        if len(cats) <= NOMINAL_ONE_HOT_MAX:
            one_hot = np.zeros((n, len(cats)), dtype=np.float64)
            one_hot[np.arange(n), qi.nominal[:, j]] = 1.0 / math.sqrt(2.0)
            parts.append(one_hot)
    out = np.hstack([p for p in parts if p.shape[1]]) if any(p.shape[1] for p in parts) else None
    return out if out is not None else np.zeros((n, 1))


def principal_axis(x: np.ndarray) -> np.ndarray | None:
    """Unit vector of the first principal component of the rows of ``x`` (largest loading
    positive), or None when the rows do not vary."""
    centred = x - x.mean(axis=0)
    cov = centred.T @ centred
    values, vectors = np.linalg.eigh(cov)
    if not values[-1] > 0:
        return None
    axis: np.ndarray = vectors[:, -1]
    return -axis if axis[np.argmax(np.abs(axis))] < 0 else axis


#: The principal axis of a set of records is estimated on at most this many of them (evenly
#: spaced in row order): the direction is all a split needs, and it settles long before n.
AXIS_SAMPLE = 8192


def _split_size(n: int, k: int, block_size: int) -> int:
    """Records for the low side of a split of n > block_size records (see the module docstring)."""
    leaves = math.ceil(n / block_size)
    target = n * (leaves // 2) / leaves
    low = k * round(target / k)
    return int(min(max(low, k), n - k))


def block_rows(
    embedding: np.ndarray, k: int, block_size: int, progress: ProgressFn = no_progress
) -> list[np.ndarray]:
    """Split records into blocks of k..``block_size`` records by recursive principal-axis splits.

    Parameters
    ----------
    embedding
        (n, d) points (:func:`qi_embedding`).
    k, block_size
        Minimum group size and maximum block size, ``block_size >= 2k``, ``n >= k``.

    Returns
    -------
    list of numpy.ndarray
        Row numbers of each block, ascending; blocks in split order (low side first). Together
        they hold every row once.
    """
    x = np.asarray(embedding, dtype=np.float64)
    n = len(x)
    if block_size < 2 * k:
        raise InvalidParameter(f"block size {block_size} must be >= 2k = {2 * k}")
    blocks: list[np.ndarray] = []
    stack = [np.arange(n, dtype=np.int64)]
    done = 0
    while stack:
        rows = stack.pop()
        if len(rows) <= block_size:
            blocks.append(rows)
            done += len(rows)
            progress(done / max(n, 1), "blocking")
            continue
        low = _split_size(len(rows), k, block_size)
        step = max(1, len(rows) // AXIS_SAMPLE)
        axis = principal_axis(x[rows[::step]])
        if axis is None:
            axis = principal_axis(x[rows])
        if axis is None:  # every record equal: any split is as good; keep table order
            stack.append(rows[low:])
            stack.append(rows[:low])
            continue
        score = x[rows] @ axis
        # The `low` smallest scores go low; among scores equal to the cut value, the smaller
        # row numbers do (rows are ascending), so both sides stay ascending and the split is
        # that of a stable sort, in O(n) instead of O(n log n).
        cut = np.partition(score, low - 1)[low - 1]
        mask = score < cut
        ties = np.flatnonzero(score == cut)[: low - int(mask.sum())]
        mask[ties] = True
        # pushed high side first so that the low side is split (and numbered) first
        stack.append(rows[~mask])
        stack.append(rows[mask])
    return blocks


# --------------------------------------------------------------------------------------------
# units
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    """One piece of work: a method run on some records (self-contained, picklable)."""

    index: int
    label: str
    method: str
    k: int
    params: Mapping[str, Any]
    seed: int
    single: bool
    dataset: Dataset
    qi: QIMatrix
    hierarchies: Mapping[str, Any]
    #: the unit's records on the whole table's scale, when ``qi`` has its own (a stratum's
    #: z-scores): what a refinement (``--param refine``) works and checks on
    measure_qi: QIMatrix | None = None

    @property
    def size(self) -> int:
        return self.dataset.n_records


@dataclass(frozen=True)
class _UnitOutput:
    labels: np.ndarray
    protected_qi: dict[str, np.ndarray] | None
    extra: dict[str, Any]
    artifacts: dict[str, Any]


def _run_unit(unit: _Unit, progress: ProgressFn) -> _UnitOutput:
    """Run the method on one unit (in whichever process the engine chose)."""
    method = get_method(unit.method)
    if unit.single:
        rng = np.random.default_rng(unit.seed)
    else:
        rng = np.random.default_rng(np.random.SeedSequence(unit.seed, spawn_key=(unit.index,)))
    try:
        output = run_and_refine(
            method,
            MethodInput(
                dataset=unit.dataset,
                qi=unit.qi,
                k=unit.k,
                params=unit.params,
                rng=rng,
                progress=progress,
                hierarchies=unit.hierarchies,
            ),
            measure_qi=unit.measure_qi,
        )
    except MicroguiError as exc:
        if unit.single:
            raise
        raise type(exc)(f"{unit.label}: {exc}") from exc
    labels = np.asarray(output.labels, dtype=np.int64)
    if labels.shape != (unit.size,):
        raise RuntimeError(
            f"method {unit.method} returned {labels.shape} labels for {unit.size} records"
        )
    protected = None
    if output.protected_qi is not None:
        protected = {str(c): output.protected_qi[c].to_numpy() for c in output.protected_qi}
    return _UnitOutput(
        labels=labels,
        protected_qi=protected,
        extra=dict(output.extra),
        artifacts=dict(output.artifacts) if unit.single else {},
    )


def protect_unit(
    dataset: Dataset,
    qi: QIMatrix,
    method_name: str,
    k: int,
    params: Mapping[str, Any],
    seed: int,
    index: int,
    label: str,
    progress: ProgressFn = no_progress,
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, Any]]:
    """One block of a multi-unit run, protected as :func:`run_scaled` protects it: the method
    (through ``run_and_refine``) seeded by the unit's ``index``, the groups aggregated on the
    block alone (group means only read their own records, so this equals aggregating the whole
    table), a method's own released values kept. Returns the labels (0..g-1), the protected
    quasi-identifier columns and the method's report entries. ``qi`` holds the block on the
    whole table's scale. (The partitioned Dask engine, :mod:`microgui.core.release.distributed`, runs
    its blocks through this.)"""
    unit = _Unit(
        index=index,
        label=label,
        method=method_name,
        k=k,
        params=dict(params),
        seed=seed,
        single=False,
        dataset=dataset,
        qi=qi,
        hierarchies={},
    )
    out = _run_unit(unit, progress)
    protected = aggregate(dataset, qi, out.labels, params)
    columns = {str(c): protected[c].to_numpy() for c in dataset.roles.quasi_identifiers}
    columns.update(out.protected_qi or {})
    return out.labels, columns, dict(out.extra)


def _subset(dataset: Dataset, rows: np.ndarray | None, columns: Sequence[str]) -> Dataset:
    """``dataset`` restricted to some rows and columns (roles kept for those columns)."""
    frame = dataset.frame if rows is None else dataset.frame.iloc[rows]
    wanted = set(columns)  # once: per column it was quadratic (issue 27)
    frame = frame.loc[:, [c for c in frame.columns if str(c) in wanted]]
    roles = RoleMap(tuple((c, dataset.roles[c]) for c in dataset.roles if c in wanted))
    return Dataset(frame, roles, dataset.source, dataset.value_labels)


def _slice_qi(qi: QIMatrix, rows: np.ndarray) -> QIMatrix:
    """The records ``rows`` of ``qi``, on the same scale (means, deviations, orders kept)."""
    return QIMatrix(
        continuous_names=qi.continuous_names,
        continuous=np.ascontiguousarray(qi.continuous[rows]),
        cont_mean=qi.cont_mean,
        cont_std=qi.cont_std,
        ordinal_names=qi.ordinal_names,
        ordinal=np.ascontiguousarray(qi.ordinal[rows]),
        ordinal_orders=qi.ordinal_orders,
        nominal_names=qi.nominal_names,
        nominal=np.ascontiguousarray(qi.nominal[rows]),
        nominal_categories=qi.nominal_categories,
        cont_values=None if qi.cont_values is None else qi.cont_values[rows],
    )


# --------------------------------------------------------------------------------------------
# engines
# --------------------------------------------------------------------------------------------


def one_piece_message() -> str:
    """Why a Dask run that is one piece is refused (nothing would reach the scheduler)."""
    return (
        "this run is one piece (no strata, and no --block-size smaller than the table), so "
        "nothing would be sent to the scheduler: give --block-size or --strata to split it, or "
        "drop --engine dask to run it here"
    )


def _execute(
    units: list[_Unit],
    engine: str,
    scheduler: str | None,
    workers: int | None,
    progress: ProgressFn,
) -> tuple[list[_UnitOutput], str, int]:
    """Run every unit; returns the outputs in unit order, the engine's description and the
    number of processes used (1: this process)."""
    total = sum(u.size for u in units)
    if engine == "dask":
        if len(units) == 1:
            raise InvalidParameter(one_piece_message())
        assert scheduler is not None
        return _execute_dask(units, scheduler, progress), f"dask ({scheduler})", 0
    n_workers = default_workers(len(units)) if workers is None else int(workers)
    if workers is None and total < IN_PROCESS_BELOW:
        n_workers = 1
    if len(units) == 1 or n_workers <= 1:
        return _execute_in_process(units, progress), "in-process", 1
    n_workers = min(n_workers, len(units))
    return _execute_pool(units, n_workers, progress), "local", n_workers


def _status(done: int, total: int) -> str:
    return f"{done}/{total} blocks"


def _execute_in_process(units: list[_Unit], progress: ProgressFn) -> list[_UnitOutput]:
    total = sum(u.size for u in units)
    outputs: list[_UnitOutput] = []
    done = 0
    for i, unit in enumerate(units):
        stage = sub_progress(progress, done / total, (done + unit.size) / total)
        if len(units) > 1:
            stage = labelled(stage, unit.label)
        outputs.append(_run_unit(unit, stage))
        done += unit.size
        if len(units) > 1:
            progress(done / total, _status(i + 1, len(units)))
    return outputs


def _pool_task(unit: _Unit) -> _UnitOutput:
    """A unit in a worker process of the local pool; stops when the shared event is set."""
    return _run_unit(unit, check_cancel)


def _execute_pool(units: list[_Unit], n_workers: int, progress: ProgressFn) -> list[_UnitOutput]:
    total = sum(u.size for u in units)
    outputs: dict[int, _UnitOutput] = {}
    done = 0

    def on_done(i: int, future: Future[_UnitOutput]) -> None:
        nonlocal done
        outputs[i] = future.result()  # a unit's error stops the run
        done += units[i].size

    def tick() -> None:
        progress(done / total, _status(len(outputs), len(units)))

    run_in_pool(_pool_task, [(unit,) for unit in units], n_workers, on_done=on_done, tick=tick)
    return [outputs[i] for i in range(len(units))]


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise InvalidParameter(
            "engine 'dask' needs the Dask distributed package, which is not installed: "
            f"{DASK_INSTALL_HINT}"
        ) from None
    return distributed


def _dask_task(unit: _Unit, cancel_event: str) -> _UnitOutput:
    """A unit on a Dask worker; polls the run's distributed Event to stop on a cancel."""
    from distributed import Event

    event = Event(cancel_event)
    last = [time.monotonic()]

    def check(fraction: float, status: str = "", /) -> None:
        now = time.monotonic()
        if now - last[0] < _DASK_CANCEL_CHECK_SECONDS:
            return
        last[0] = now
        if event.is_set():
            raise RunCancelled()

    return _run_unit(unit, check)


#: The largest first message a Dask scheduler sends (its handshake is a few hundred bytes).
_HANDSHAKE_MAX_BYTES = 65_536


def _unreachable(scheduler: str, why: str) -> InvalidParameter:
    return InvalidParameter(
        f"cannot reach the Dask scheduler at {scheduler!r} ({why}); check the address "
        "(tcp://HOST:PORT) and that the scheduler is running"
    )


def probe_dask_scheduler(scheduler: str, timeout: float | None = None) -> None:
    """Check that a Dask scheduler answers at ``scheduler`` before any data is sent there.

    A Dask comm greets every new connection with a small handshake message (8-byte total
    length, 8-byte frame count, frame lengths, msgpack frames naming ``pickle-protocol``:
    ``distributed/comm/core.py`` ``handshake_info`` and ``comm/tcp.py`` ``read``). This probe
    connects a plain socket, reads that greeting with a bounded size and time, and closes: a
    refused port, a host that does not answer, an HTTP server or any other service gives one
    :class:`InvalidParameter` line within ``timeout`` seconds, instead of a Dask client that
    allocates whatever length a stranger announces (``MemoryError: 3.07 EiB``) or fails in
    ``__del__``. Nothing is sent.
    """
    host, port = check_scheduler_address(scheduler)
    limit = DASK_CONNECT_SECONDS if timeout is None else timeout
    deadline = time.monotonic() + limit
    try:
        conn = socket.create_connection((host, port), timeout=limit)
    except ConnectionRefusedError:
        raise _unreachable(scheduler, "connection refused: nothing listens on that port") from None
    except TimeoutError:
        raise _unreachable(scheduler, f"no answer within {limit:g} s") from None
    except OSError as exc:
        raise _unreachable(scheduler, " ".join(str(exc.strerror or exc).split())) from None

    def read(n: int) -> bytes:
        data = b""
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            conn.settimeout(left)
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise ConnectionResetError
            data += chunk
        return data

    not_dask = (
        f"the service at {scheduler!r} is not a Dask scheduler (it did not greet as one); "
        "check the address and port (Dask's default port is 8786)"
    )
    with conn:
        try:
            (total,) = struct.unpack("<Q", read(8))
            if not 16 <= total <= _HANDSHAKE_MAX_BYTES:
                raise InvalidParameter(not_dask)
            body = read(total)
        except TimeoutError:
            raise InvalidParameter(
                f"the service at {scheduler!r} did not greet as a Dask scheduler within "
                f"{limit:g} s; check the address and port (Dask's default port is 8786)"
            ) from None
        except OSError:
            raise InvalidParameter(not_dask) from None
    (n_frames,) = struct.unpack_from("<Q", body)
    if not 1 <= n_frames <= 64 or 8 * (1 + n_frames) > total:
        raise InvalidParameter(not_dask)
    lengths = struct.unpack_from(f"<{n_frames}Q", body, 8)
    if 8 * (1 + n_frames) + sum(lengths) != total or b"pickle-protocol" not in body:
        raise InvalidParameter(not_dask)


def _worker_version() -> str:
    """The microgui version of the process this runs in (sent to every worker by
    :func:`check_worker_versions`)."""
    from microgui._version import __version__ as installed

    return installed


def check_worker_versions(client: Any, scheduler: str) -> int:
    """Refuse, before any work is sent, a cluster whose workers run another microgui version
    than this client (or none: the check itself then fails there); returns the number of
    workers. Waits at most :data:`DASK_CONNECT_SECONDS` for a first worker."""
    from microgui._version import __version__ as here

    try:
        client.wait_for_workers(1, timeout=DASK_CONNECT_SECONDS)
    except Exception:  # noqa: BLE001 - a TimeoutError of whichever flavour
        raise InvalidParameter(
            f"the Dask scheduler at {scheduler!r} has no worker; start workers with "
            f"'dask worker {scheduler}' (each with microgui {here} installed) and run again"
        ) from None
    answers = client.run(_worker_version, on_error="return")
    wrong: list[str] = []
    for worker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            why = " ".join(f"{type(answer).__name__}: {answer}".split())[:120]
            wrong.append(f"{worker} cannot run microgui ({why})")
        elif answer != here:
            wrong.append(f"{worker} runs microgui {answer}")
    if wrong:
        more = f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else ""
        raise InvalidParameter(
            f"worker {'; '.join(wrong[:3])}{more}, but this client runs microgui {here}: every "
            "worker must run the same version; install it there "
            f'(pip install "microgui[dask]=={here}") and restart the workers, or run with '
            "--engine local"
        )
    return len(answers)


def dask_client(scheduler: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``scheduler``, once the address greets as
    a Dask scheduler (:func:`probe_dask_scheduler`) and every worker runs this microgui version
    (:func:`check_worker_versions`); :class:`InvalidParameter` (one line) otherwise."""
    distributed = _import_distributed()
    probe_dask_scheduler(scheduler)
    try:
        client = distributed.Client(scheduler, timeout=DASK_CONNECT_SECONDS, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 - whatever the client raises, the user gets one line
        raise _unreachable(scheduler, " ".join(str(exc).split())[:200]) from None
    try:
        check_worker_versions(client, scheduler)
    except BaseException:
        client.close()
        raise
    return client


def _execute_dask(units: list[_Unit], scheduler: str, progress: ProgressFn) -> list[_UnitOutput]:
    distributed = _import_distributed()
    client = dask_client(scheduler)
    total = sum(u.size for u in units)
    token = uuid.uuid4().hex
    event = distributed.Event(f"microgui-cancel-{token}", client=client)
    outputs: dict[int, _UnitOutput] = {}
    futures: list[Any] = []
    done = 0
    try:
        # Scattered first: units travel straight to the workers, not through the task graph.
        data = client.scatter(units, hash=False)
        futures = [
            client.submit(_dask_task, d, event.name, key=f"microgui-unit-{token}-{i}", pure=False)
            for i, d in enumerate(data)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        pending = set(futures)
        progress(0.0, _status(0, len(units)))
        while pending:
            ready = [f for f in pending if f.done()]
            if not ready:
                time.sleep(POLL_SECONDS)  # (distributed.wait would need a default client)
            for future in ready:
                pending.discard(future)
                i = index[future.key]
                outputs[i] = future.result()  # re-raises a unit's error here
                done += units[i].size
            progress(done / total, _status(len(outputs), len(units)))
    except BaseException:
        try:
            event.set()
            client.cancel(futures)
        finally:
            client.close()
        raise
    client.close()
    return [outputs[i] for i in range(len(units))]


# --------------------------------------------------------------------------------------------
# the scaled run
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaledOutput:
    """What :func:`run_scaled` gives ``run_protection``: labels (0..g-1, table order), the
    protected table, the method's report entries and artifacts (see the module docstring) and
    the ``scale`` report entry."""

    labels: np.ndarray
    protected: pd.DataFrame
    extra: dict[str, Any]
    artifacts: dict[str, Any]
    summary: dict[str, Any] = field(default_factory=dict)


def _size_range(sizes: Sequence[int]) -> dict[str, int]:
    return {"min": int(min(sizes)), "max": int(max(sizes))}


def _combine_extra(outputs: list[_UnitOutput]) -> tuple[dict[str, Any], list[str]]:
    """Entries equal in every unit, and the names of the others."""
    keys = list(dict.fromkeys(k for o in outputs for k in o.extra))
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key in keys:
        values = [o.extra.get(key, _MISSING) for o in outputs]
        try:
            same = all(bool(v == values[0]) for v in values[1:])
        except (ValueError, TypeError):  # arrays and the like
            same = False
        if same and values[0] is not _MISSING:
            kept[key] = values[0]
        else:
            dropped.append(key)
    return kept, dropped


_MISSING = object()


def run_scaled(
    dataset: Dataset,
    qi: QIMatrix,
    method_name: str,
    k: int,
    params: Mapping[str, Any],
    seed: int,
    hierarchies: Mapping[str, Any],
    *,
    strata: Sequence[str] = (),
    block_size: int | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    progress: ProgressFn = no_progress,
) -> ScaledOutput:
    """Protect ``dataset`` stratum by stratum and block by block (see the module docstring).

    ``qi`` is the whole table's :class:`QIMatrix` (used as it is when there are no strata).
    Progress runs over [0, 1]: blocking, the units, then aggregation. Raises
    :class:`InvalidInput` for a stratum of fewer than k records, the method's own errors
    (prefixed with the stratum and block), and lets :class:`RunCancelled` propagate.
    """
    check_scale_options(
        dataset,
        k,
        strata=strata,
        block_size=block_size,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
    )
    roles = dataset.roles
    n = dataset.n_records
    progress(0.0, "blocking")
    if strata:
        codes, names = strata_of(dataset.frame, strata)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
        stratum_rows = [order[bounds[s] : bounds[s + 1]] for s in range(len(names))]
        small = [s for s, rows in enumerate(stratum_rows) if len(rows) < k]
        if small:
            s = small[0]
            more = f" (and {len(small) - 1} more strata below k)" if len(small) > 1 else ""
            raise InvalidInput(
                f"stratum {names[s]} has {len(stratum_rows[s])} record(s), fewer than k={k}{more}: "
                f"merge it with another stratum (recode {', '.join(strata)}), lower k, or "
                "stratify by fewer columns"
            )
    else:
        names = ["all records"]
        stratum_rows = [np.arange(n, dtype=np.int64)]

    # the survey weight too: the aggregation (and a refinement's) may take weighted means
    used = set(roles.quasi_identifiers) | set(roles.confidential)
    used |= {roles.weight} if roles.weight is not None else set()
    # Per stratum: its dataset and quasi-identifiers, and its blocks (rows within the stratum).
    plans: list[tuple[Dataset, QIMatrix, list[np.ndarray]]] = []
    for s, rows in enumerate(stratum_rows):
        if strata:
            sub = _subset(dataset, rows, [str(c) for c in dataset.frame.columns])
            sub_qi = prepare_qi(sub)
        else:
            sub, sub_qi = dataset, qi
        if block_size is not None and len(rows) > block_size:
            blocks = block_rows(
                qi_embedding(sub_qi),
                k,
                block_size,
                sub_progress(progress, 0.05 * s / len(names), 0.05 * (s + 1) / len(names)),
            )
        else:
            blocks = [np.arange(len(rows), dtype=np.int64)]
        plans.append((sub, sub_qi, blocks))

    n_units = sum(len(b) for _, _, b in plans)
    refining = str(params.get("refine", "none")) != "none"
    units: list[_Unit] = []
    for s, (sub, sub_qi, blocks) in enumerate(plans):
        for b, block in enumerate(blocks):
            if n_units == 1:
                unit_data, unit_qi = sub, sub_qi
            else:
                whole = len(blocks) == 1
                unit_data = _subset(sub, None if whole else block, sorted(used))
                unit_qi = sub_qi if whole else _slice_qi(sub_qi, block)
            where = [f"stratum {names[s]}"] if strata else []
            if len(blocks) > 1:
                where.append(f"block {b + 1}/{len(blocks)}")
            units.append(
                _Unit(
                    index=len(units),
                    label=", ".join(where) or "all records",
                    method=method_name,
                    k=k,
                    params=dict(params),
                    seed=seed,
                    single=n_units == 1,
                    dataset=unit_data,
                    qi=unit_qi,
                    hierarchies=dict(hierarchies),
                    measure_qi=(
                        _slice_qi(qi, stratum_rows[s][block]) if strata and refining else None
                    ),
                )
            )

    outputs, engine_text, n_processes = _execute(
        units, engine, scheduler, workers, sub_progress(progress, 0.05, 0.95)
    )

    progress(0.95, "aggregating groups")
    labels = np.empty(n, dtype=np.int64)
    qi_names = list(roles.quasi_identifiers)
    columns: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {c: [] for c in qi_names}
    offset = 0
    u = 0
    for s, (sub, sub_qi, blocks) in enumerate(plans):
        rows = stratum_rows[s]
        local = np.empty(len(rows), dtype=np.int64)
        unit_outputs = outputs[u : u + len(blocks)]
        u += len(blocks)
        stratum_offset = 0
        for block, out in zip(blocks, unit_outputs, strict=True):
            local[block] = out.labels + stratum_offset
            stratum_offset += int(out.labels.max()) + 1 if len(out.labels) else 0
        kept = [*qi_names, *([roles.weight] if roles.weight is not None else [])]
        qi_only = _subset(sub, None, kept) if strata else sub
        protected_s = aggregate(qi_only, sub_qi, local, params)
        for block, out in zip(blocks, unit_outputs, strict=True):
            for col, values in (out.protected_qi or {}).items():
                column = protected_s[col].to_numpy()
                if column.dtype != values.dtype:
                    column = column.astype(object)
                column = column.copy()
                column[block] = values
                protected_s[col] = pd.Series(column, index=protected_s.index, dtype=column.dtype)
        for col in qi_names:
            columns[col].append((rows, protected_s[col].to_numpy()))
        labels[rows] = local + offset
        offset += stratum_offset

    frame = dataset.frame
    removed = set(roles.identifiers)  # once: per column it was quadratic (issue 27)
    keep = [c for c in frame.columns if str(c) not in removed]
    protected = frame.loc[:, keep].copy(deep=False)
    for col in qi_names:
        parts = columns[col]
        if len(parts) == 1:
            values = parts[0][1]
        else:
            dtype = (
                parts[0][1].dtype if all(p.dtype == parts[0][1].dtype for _, p in parts) else object
            )
            values = np.empty(n, dtype=dtype)
            for rows, part in parts:
                values[rows] = part
        protected[col] = pd.Series(values, index=protected.index, dtype=values.dtype)
    for col in strata:  # strata keep their values (constant within every group anyway)
        if col in protected.columns and col in qi_names:
            protected[col] = frame[col]

    dropped: list[str]
    artifacts: dict[str, Any]
    if len(outputs) == 1:
        extra, dropped, artifacts = dict(outputs[0].extra), [], dict(outputs[0].artifacts)
    else:
        extra, dropped = _combine_extra(outputs)
        artifacts = {}
        pieces = [o.extra["refinement"] for o in outputs if "refinement" in o.extra]
        if pieces and len(pieces) == len(outputs):  # issue 16: one entry for the whole table
            space = refine_space(qi)
            sst = float(((space - space.mean(axis=0)) ** 2).sum()) if space.size else 0.0
            extra["refinement"] = combine_refinements(pieces, sst)
            dropped = [d for d in dropped if d != "refinement"]
    block_sizes = [len(b) for _, _, blocks in plans for b in blocks]
    summary: dict[str, Any] = {
        "strata": list(strata),
        "n_strata": len(stratum_rows),
        "stratum_sizes": _size_range([len(r) for r in stratum_rows]),
        "block_size": block_size,
        "n_blocks": len(block_sizes),
        "block_sizes": _size_range(block_sizes),
        "engine": engine_text,
        "processes": n_processes,
    }
    if dropped:
        summary["extra_not_combined"] = dropped
    progress(1.0, "done")
    return ScaledOutput(
        labels=labels, protected=protected, extra=extra, artifacts=artifacts, summary=summary
    )
