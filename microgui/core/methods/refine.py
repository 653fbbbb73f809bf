"""Refinement of a microaggregation partition: lower SSE, group sizes kept in k..2k-1.

Every partitioning method (MDAV, MST, CBFS, …) builds its groups greedily and stops. A partition
can then still be improved record by record. ``--param refine=…`` runs one of these after the
method, on the same records (the z-scored quasi-identifiers the method grouped):

``local``
    Local search with exact SSE changes (:mod:`~microgui.core.methods.refine_kernels`): for each
    record, moving it to another group and swapping it with each record of another group are
    evaluated, and the best change that lowers the SSE is made, until no record can improve - a
    local optimum of the move and swap neighbourhoods (the "exchange" refinement of k-means,
    Späth 1980; for microaggregation with size bounds e.g. Mortazavi, Jalili & Gholami 2014).
    The other groups tried for a record are those of its ``neighbours`` nearest records (a k-d
    tree, :class:`scipy.spatial.cKDTree`): a group none of whose records is among them is too
    far away to gain from the record on any data we measured, and the limit keeps a pass linear
    in n. So the optimum is local with respect to these candidates.
``igd``
    Iterative group decomposition, Khomnotai, Lin & Leu, "Iterative group decomposition for
    refining microaggregation solutions", Symmetry 10(7):262, 2018, §4 (Figures 1-4): repeat
    *Decompose* (dissolve a group into its neighbours' groups, split those that reach 2k records,
    keep the change if the SSE fell) and *Shrink* (move out of a group, one by one, the record
    whose move lowers the SSE most, while the group has more than k records) over all groups,
    until neither lowers the SSE. Ambiguities of the paper and our readings: its
    SplitLargeGroups carves groups of k off a group "until |p| ≤ k"; we carve while the group has
    2k or more records, so the remainder (k..2k-1 records) stays a group - the paper then adds
    the remaining records to their nearest groups, which could make another group too large. A
    record's "nearest group" is searched among the groups of its nearest records (as above),
    falling back to all groups when none qualifies.
``deep`` (beyond the papers; documented here)
    ``local`` from the method's groups is kept aside as a candidate (the result is never worse
    than it); then ``igd``, ``local``, *pair re-splitting*: for each group and each group near
    it, the records of both are re-partitioned optimally into one or two groups of k..2k-1 (every split
    enumerated, when the two hold at most :data:`PAIR_LIMIT` records; the exact small-n idea of
    :mod:`~microgui.core.methods.optimal` on two groups at a time). Then *perturbation and
    restart* (iterated local search, Lourenço, Martin & Stützle 2003): a random group and its
    nearest groups are dissolved and rebuilt by a randomized MDAV on their records, followed by
    local search and pair re-splitting around them; the change is kept when the SSE fell (or,
    early on, rose by a little: threshold accepting, :data:`ACCEPT_WORSE`), and undone exactly
    otherwise; the best partition met is the result. ``refine_rounds`` such rounds per group, for at most
    :data:`ROUND_GROUPS` groups (:func:`round_count`), seeded by the run's seed: the same seed
    gives the same partition.

**Guarantees** (tested): every group of the result has k..2k-1 records (a group larger than
2k-1 in the method's partition is first split as in IGD, which never raises the SSE); every
record is in exactly one group; the SSE never exceeds the starting partition's - the result is
recomputed from scratch at the end, and the starting partition is returned if rounding made it
worse. A cancelled refinement raises :class:`~microgui.core.progress.RunCancelled` and returns
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from microgui.core.errors import InvalidParameter
from microgui.core.methods import refine_kernels as rk
from microgui.core.methods.base import (
    REFINE_CHOICES,
    REFINE_PARAMS,
    Method,
    MethodInput,
    MethodOutput,
)
from microgui.core.methods.jit_cache import compile_seconds
from microgui.core.metrics.mixed_loss import mixed_information_loss
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.aggregate import aggregate
from microgui.core.table.dataset import QIMatrix

__all__ = [
    "REFINE_CHOICES",
    "RefineResult",
    "refine_partition",
    "refine_space",
    "run_and_refine",
    "combine_refinements",
    "refinement_losses",
    "warm_up",
    "PAIR_LIMIT",
]
#: The ``space`` of the report's ``refinement`` entry.
CONTINUOUS_SPACE = "z-scored continuous quasi-identifiers"
MIXED_SPACE = "MDAV-generic's distance (z-scores, ordinal rank / |D|, nominal one-hot / √2)"
#: Two groups are re-split exactly only when they hold at most this many records together (the
#: enumeration looks at 2^(m-1) splits: 16 records 32,768 splits).
PAIR_LIMIT = 16
#: The same limit inside a perturbation round (rounds are many: they re-split cheaper pairs).
ROUND_PAIR_LIMIT = 12
#: From this many records on, a record's neighbours are found approximately (see ``_State``).
APPROXIMATE_FROM = 20_000
#: Above this many coordinates, neighbours are searched on the principal axes (_search_space).
SEARCH_DIMS = 16
#: The widest refinement space (coordinates; nominal attributes count one per category) and the
#: most cells (records × coordinates, 8 bytes each) a refinement accepts (:func:`space_refusal`).
MAX_DIMS = 256
MAX_CELLS = 25_000_000
#: How many nearest records give a record's candidate groups.
NEIGHBOURS = 16
#: Perturbation rounds per group of ``deep``: the default of ``refine_rounds``.
DEFAULT_ROUNDS = int(next(p.default for p in REFINE_PARAMS if p.name == "refine_rounds"))
#: ``deep`` perturbs as if the table had at most this many groups (:func:`round_count`): on
#: 100,000 records × 10 attributes a round takes about 1 ms, so the default 100 rounds come to
#: 30,000 rounds, about half a minute; on Census at k = 3 (360 groups), 83 rounds per group.
ROUND_GROUPS = 300
#: How many groups (fewest, most) a perturbation round dissolves and rebuilds, drawn uniformly:
#: on Census, Tarragona and EIA at k = 3, rounds of 2-3 groups stalled about 1 % higher than
#: rounds of 2-7 (Census 4.79 against 4.72 % at the same number of rounds).
REGION_GROUPS = (2, 7)
#: Threshold accepting (Dueck & Scheuer, "Threshold accepting", J. Comput. Phys. 90, 1990) in
#: the perturbation: a round that raises the SSE by less than this fraction of the mean group
#: SSE (at the start, falling linearly to 0 by the last round) is kept too, so that the search
#: can leave a local optimum; the best partition met is returned. Census k = 3, 1,000 rounds per
#: group: 4.72 % with only improvements kept, 4.69 % with 0.1.
ACCEPT_WORSE = 0.1
#: Rounds per call of the compiled kernel (a Cancel acts between calls).
ROUND_BATCH = 200
#: A group is re-split with the groups of its records' this many nearest neighbours (in the
#: sweeps and inside a round; all 16 cost 1.5 × the time on 100,000 records for no gain on the
#: reference sets).
PAIR_WIDTH = 6
#: Sweeps of pair re-splitting (each followed by local search) before the perturbation.
PAIR_SWEEPS = 2
#: Changes evaluated between two progress reports (a Cancel acts within one such slice).
SLICE = 2_000_000


@dataclass(frozen=True)
class RefineResult:
    """A refined partition and what the refinement did."""

    labels: np.ndarray
    mode: str
    sse_before: float
    sse_after: float
    seconds: float
    rounds: int = 0

    def report(self, sst: float) -> dict[str, Any]:
        """The report's ``refinement`` entry (IL in the report's units: 100·SSE/SST)."""
        scale = 100.0 / sst if sst > 0 else 0.0
        return {
            "mode": self.mode,
            "information_loss_before": self.sse_before * scale,
            "information_loss_after": self.sse_after * scale,
            "sse_before": self.sse_before,
            "sse_after": self.sse_after,
            "seconds": round(self.seconds, 3),
            "rounds": self.rounds,
        }


def _search_space(x: np.ndarray) -> np.ndarray:
    """Where a record's nearest records are looked for: ``x`` itself, or, when it has more than
    :data:`SEARCH_DIMS` coordinates (nominal attributes one-hot), its projection on its first
    :data:`SEARCH_DIMS` principal axes - a k-d tree is no faster than a scan in hundreds of
    dimensions (review: 5,000 records with a 2,500-category attribute held a run 40 s). Only
    the candidates come from there; every SSE change is computed in ``x``."""
    if x.shape[1] <= SEARCH_DIMS:
        return x
    centred = x - x.mean(axis=0)
    _, axes = np.linalg.eigh(centred.T @ centred)
    return np.ascontiguousarray(centred @ axes[:, ::-1][:, :SEARCH_DIMS])


def space_refusal(qi: QIMatrix) -> str:
    """Why a table cannot be refined (its refinement space too wide), "" when it can."""
    widths = [int(qi.nominal[:, j].max()) + 1 if qi.n else 0 for j in range(qi.nominal.shape[1])]
    dims = qi.continuous.shape[1] + qi.ordinal.shape[1] + sum(widths)
    if dims <= MAX_DIMS and qi.n * dims <= MAX_CELLS:
        return ""
    if widths:
        j = int(np.argmax(widths))
        name = qi.nominal_names[j]
        return (
            f"refine works with one coordinate per category of a nominal quasi-identifier, and "
            f"{name!r} has {widths[j]:,} categories ({dims:,} coordinates in all, at most "
            f"{MAX_DIMS} and {MAX_CELLS:,.0f} cells of records × coordinates): recode {name!r} "
            "into fewer categories, or run with refine=none"
        )
    return f"refine: {dims:,} coordinates for {qi.n:,} records is too large; run with refine=none"


class _State:
    """The partition as group statistics (see :mod:`refine_kernels`), with its work list."""

    def __init__(
        self,
        x: np.ndarray,
        labels: np.ndarray,
        k: int,
        neighbours: int,
        nbr: np.ndarray | None = None,
    ) -> None:
        n = x.shape[0]
        self.x = x
        self.k = k
        self.kmax = 2 * k - 1
        sizes = np.bincount(labels)
        self.cap = max(4 * k + 2, int(sizes.max()))
        n_slots = n // k + 2
        self.lab = labels.astype(np.int64).copy()
        self.cnt, self.sums, self.mem, self.pos = rk.build_state(x, self.lab, n_slots, self.cap)
        m = min(neighbours, n - 1)
        if nbr is not None:  # another state's, on the same records
            self.nbr = nbr
        elif m > 0:
            search = _search_space(x)
            # exact neighbours up to APPROXIMATE_FROM records; (1+eps)-approximate ones above
            # (in 10-D, 100,000 records: 18 s exact, 1.1 s with eps = 1 on two threads)
            eps = 0.0 if n <= APPROXIMATE_FROM else 1.0
            from scipy.spatial import cKDTree  # here: scipy.spatial takes 0.3 s to import

            _, idx = cKDTree(search).query(search, k=m + 1, eps=eps, workers=-1)
            self.nbr = np.ascontiguousarray(idx[:, 1:], dtype=np.int64)
        else:
            self.nbr = np.full((n, 1), -1, dtype=np.int64)
        self.queue = np.arange(n, dtype=np.int64)
        self.in_queue = np.ones(n, dtype=np.bool_)
        self.q_head = 0
        self.q_len = n
        self.log = np.empty((4 * n + 16, 2), dtype=np.int64)
        self.tol = 1e-12 * max(float(np.einsum("ij,ij->", x, x)), 1.0)
        self.ws = np.empty(((1 << (PAIR_LIMIT - 1)), x.shape[1]))

    def labels(self) -> np.ndarray:
        """Labels 0..g-1 in order of each group's first record."""
        groups, first = np.unique(self.lab, return_index=True)
        order = np.argsort(first, kind="stable")
        remap = np.empty(int(self.lab.max()) + 1, dtype=np.int64)
        remap[groups[order]] = np.arange(order.size)
        return remap[self.lab]

    def split_all(self) -> None:
        touched = np.flatnonzero(self.cnt >= 2 * self.k).astype(np.int64)
        rk.split_all_large(
            self.x, self.k, self.lab, self.cnt, self.sums, self.mem, self.pos,
            touched, touched.size, self.log, -1,
        )  # fmt: skip

    def local(self, progress: ProgressFn) -> None:
        """Local search until the work list is empty (``progress``: this phase's own 0..1)."""
        n = self.x.shape[0]
        while self.q_len > 0:
            self.q_head, self.q_len, _, _ = rk.local_search(
                self.x, self.lab, self.cnt, self.sums, self.mem, self.pos, self.nbr,
                self.k, self.kmax, self.queue, self.in_queue, self.q_head, self.q_len,
                SLICE, self.tol, self.log, -1,
            )  # fmt: skip
            progress(1.0 - self.q_len / n, "moves and swaps")

    def igd(self, progress: ProgressFn, max_iter: int = 1000) -> None:
        """Decompose and Shrink over all groups until neither lowers the SSE (``progress``:
        this phase's own 0..1, its status naming the sweep: "sweep 2 of ~3")."""
        step = max(1, 2000 // self.k)
        gains: list[float] = []
        for it in range(max_iter):
            gain = 0.0
            passes = _igd_passes(gains)
            for decompose in (True, False):
                order = np.flatnonzero(self.cnt > 0).astype(np.int64)
                for start in range(0, order.size, step):
                    gain += rk.igd_pass(
                        self.x, self.k, self.cap - 1, self.lab, self.cnt, self.sums, self.mem,
                        self.pos, self.nbr, self.log, self.tol, order, start,
                        min(order.size, start + step), decompose,
                    )  # fmt: skip
                    done = min(1.0, (start + step) / max(order.size, 1))
                    frac = (it + 0.5 * (not decompose) + 0.5 * done) / passes
                    progress(frac, f"group decomposition, sweep {it + 1} of ~{passes}")
            gains.append(gain)
            if gain > -self.tol:
                break
        self.requeue_all()

    def requeue_all(self) -> None:
        n = self.x.shape[0]
        self.queue[:] = np.arange(n)
        self.in_queue[:] = True
        self.q_head, self.q_len = 0, n

    def pairs(self, progress: ProgressFn) -> float:
        """Re-split every group with each group near it (exactly); the SSE change. The records
        of re-split groups are put on the work list for the local search that follows."""
        total = 0.0
        groups = np.flatnonzero(self.cnt > 0).astype(np.int64)
        step = 512
        for start in range(0, groups.size, step):
            part = groups[start : start + step]
            dlt, _, self.q_len = rk.pairs_around(
                self.x, part, part.size, self.k, self.kmax, PAIR_LIMIT, self.lab, self.cnt,
                self.sums, self.mem, self.pos, self.nbr, PAIR_WIDTH, self.tol, self.ws,
                self.log, -1, self.queue, self.in_queue, self.q_head, self.q_len,
            )  # fmt: skip
            total += dlt
            progress((start + part.size) / groups.size, "pair re-splits")
        return total


def refine_partition(
    x: np.ndarray,
    labels: np.ndarray,
    k: int,
    mode: str,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = 0,
    progress: ProgressFn = no_progress,
    neighbours: int = NEIGHBOURS,
) -> RefineResult:
    """Refine the partition ``labels`` (0..g-1, every group ≥ k records) of the rows of ``x``
    (n × d, the method's z-scores) by ``mode`` (one of :data:`REFINE_CHOICES`). See the module
    docstring for the modes and the guarantees."""
    started = time.perf_counter()
    x = np.ascontiguousarray(x, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if mode not in REFINE_CHOICES:
        raise ValueError(f"refine={mode!r}; expected one of {', '.join(REFINE_CHOICES)}")
    n = x.shape[0]
    g0 = int(labels.max()) + 1 if n else 0
    before = float(rk.partition_sse(x, labels, g0)) if n else 0.0
    if mode == "none" or n < 2 * k or x.shape[1] == 0:
        return RefineResult(labels, mode, before, before, time.perf_counter() - started)
    sizes = np.bincount(labels, minlength=g0)
    if sizes.min() < k:
        raise ValueError(f"a group of the partition has {int(sizes.min())} records, below k={k}")
    progress(0.0, "refining")
    state = _State(x, labels, k, neighbours)
    state.split_all()
    done_rounds = 0
    if mode == "local":
        state.local(_Timeline(progress, [("", 1.0)]).phase(0))
    elif mode == "igd":
        state.igd(_Timeline(progress, [("", 1.0)]).phase(0))
    else:
        groups = int(np.count_nonzero(state.cnt))
        line = _Timeline(progress, _deep_phases(rounds, groups, n))
        # local search from the method's own groups, a candidate deep must beat: deep begins
        # with IGD, which can lead elsewhere (the review: 20 records, local 13.40, deep 13.85)
        first = _State(x, labels, k, neighbours, nbr=state.nbr)
        first.split_all()
        first.local(line.phase(0))
        candidate = first.labels()
        line.calibrate()
        state.igd(line.phase(1))
        state.local(line.phase(2))
        for sweep in range(PAIR_SWEEPS):
            report = line.phase(3 + sweep)
            if state.pairs(sub_progress(report, 0.0, 0.8)) > -state.tol:
                line.skip(range(4 + sweep, 3 + PAIR_SWEEPS))
                break
            state.local(sub_progress(report, 0.8, 1.0))
        perturbing = line.phase(3 + PAIR_SWEEPS)
        done_rounds = _perturb(state, rng or np.random.default_rng(0), rounds, perturbing)
    out = state.labels()
    after = float(rk.partition_sse(x, out, int(out.max()) + 1))
    if mode == "deep":
        local_sse = float(rk.partition_sse(x, candidate, int(candidate.max()) + 1))
        if local_sse < after:
            out, after = candidate, local_sse
    if not after <= before:  # rounding only: every accepted change lowered the SSE
        out, after = labels, before
    progress(1.0, "refined")
    return RefineResult(out, mode, before, after, time.perf_counter() - started, done_rounds)


#: deep's phases before any is timed: (name, cost in units of its first local search).
#: Measured (rough; random tables of 5,000-60,000 records × 5-10 and the demo, k = 3-10): IGD
#: 2-8 local searches, the second local search 0.5-1.2, each pair sweep 3-17; a perturbation
#: round 50-200 local searches of one record (PERTURB_ROUND_COST), so that the perturbation is
#: 70-1,200 times the first local search: the bar and the time left hang on it, and it is
#: re-timed by its own pace once it runs.
DEEP_PHASES = (
    ("local search", 1.0),
    ("group decomposition", 4.0),
    ("local search", 1.0),
    ("pair re-splits", 8.0),
    ("pair re-splits", 8.0),
)
PERTURB_ROUND_COST = 100.0
#: IGD passes expected before the first is done (measured: 2-4 on the reference sets).
IGD_PASSES = 3
#: The time left is said once the refinement has run this long (seconds; earlier it is noise).
ETA_AFTER_S = 1.0


def _deep_phases(rounds: int, groups: int, n: int) -> list[tuple[str, float]]:
    """deep's phases with their costs before any is timed (see :data:`DEEP_PHASES`)."""
    per_round = PERTURB_ROUND_COST / max(n, 1)
    return [*DEEP_PHASES, ("perturbation", round_count(rounds, groups) * per_round)]


def _igd_passes(gains: list[float]) -> int:
    """How many IGD passes there will be, guessed from the SSE gains of those done: the gains
    fall about geometrically, and IGD stops when a pass gains nothing; the guess is the passes
    until a pass would gain under 1 % of the first (never below the passes done + 1)."""
    done = len(gains)
    if done < 2 or not gains[0] < 0 or not gains[-1] < 0:
        return max(IGD_PASSES, done + 1)
    ratio = gains[-1] / gains[-2]
    if not 0 < ratio < 1:
        return done + 1
    more = np.log(0.01 * gains[0] / gains[-1]) / np.log(ratio)
    return done + 1 + max(0, min(20, int(np.ceil(more))))


def _time_left(seconds: float) -> str:
    """ "about 20 s left", rounded as a person would say it."""
    if seconds < 5:
        return "a few seconds left"
    if seconds < 20:
        return f"about {seconds:.0f} s left"
    if seconds < 90:
        return f"about {5 * round(seconds / 5):.0f} s left"
    return f"about {max(2, round(seconds / 60)):.0f} min left"


class _Timeline:
    """A refinement's progress in proportion to its time, with an estimate of the time left.

    ``phases``: (name, cost) in any unit; each phase reports its own fraction 0..1 (and a
    short status) through :meth:`phase`. The time left is the running phase's, from its own
    pace once it has run a little (a perturbation's rounds are even work), else from its cost,
    plus the costs of the phases after it, converted to seconds at the pace measured so far;
    the bar is elapsed / (elapsed + left), never going back. Kernel compiles in this thread
    (a first run, :func:`~microgui.core.methods.jit_cache.compile_seconds`) are not counted:
    the run's status says it compiles meanwhile.
    """

    def __init__(self, progress: ProgressFn, phases: list[tuple[str, float]]) -> None:
        self._progress = _monotone(progress)
        self.names = [name for name, _cost in phases]
        self.cost = [max(float(cost), 1e-9) for _name, cost in phases]
        self.skipped: set[int] = set()
        self.started = self._now()
        self.phase_started = self.started
        self.current = -1
        self.pace: float | None = None  # seconds per unit of cost, once measured

    @staticmethod
    def _now() -> float:
        return time.perf_counter() - compile_seconds()

    def skip(self, phases: Any) -> None:
        """Leave ``phases`` out (deep's second pair sweep when the first changed nothing)."""
        self.skipped.update(int(i) for i in phases)

    def calibrate(self) -> None:
        """Rescale the costs of the phases to come by the time the first one took against its
        cost (the priors are relative; the table's size and width set the real pace)."""
        if self.current >= 0:
            spent = self._now() - self.started
            self.pace = spent / sum(self.cost[: self.current + 1]) if spent > 0 else None

    def phase(self, index: int) -> ProgressFn:
        """The progress function of phase ``index`` (its own fraction 0..1)."""

        def report(fraction: float, status: str = "", /) -> None:
            if index != self.current:
                self.current = index
                self.phase_started = self._now()
            self._report(index, min(max(float(fraction), 0.0), 1.0), status)

        return report

    def _report(self, index: int, fraction: float, status: str) -> None:
        now = self._now()
        elapsed = max(now - self.started, 0.0)
        in_phase = max(now - self.phase_started, 0.0)
        done_cost = sum(c for i, c in enumerate(self.cost[:index]) if i not in self.skipped)
        cost_here = self.cost[index]
        pace = self.pace
        if pace is None and done_cost + cost_here * fraction > 0 and elapsed > 0:
            pace = elapsed / (done_cost + cost_here * fraction)
        later = sum(c for i, c in enumerate(self.cost) if i > index and i not in self.skipped)
        if pace is None:  # nothing measured yet: the costs alone
            total = done_cost + cost_here + later
            share = (done_cost + cost_here * fraction) / total if total > 0 else 0.0
            left = None
        else:
            if fraction > 0.02 and in_phase > 0.5:
                here_left = in_phase * (1.0 - fraction) / fraction
            else:
                here_left = pace * cost_here * (1.0 - fraction)
            left = here_left + pace * later
            share = elapsed / (elapsed + left) if elapsed + left > 0 else 0.0
        shown = [i for i in range(len(self.cost)) if i not in self.skipped]
        what = status
        if len(shown) > 1:
            number = shown.index(index) + 1 if index in shown else index + 1
            name = self.names[index]
            detail = status[len(name) + 2 :] if status.startswith(f"{name}, ") else status
            inner = f" ({detail})" if detail and detail != name else ""
            what = f"pass {number} of ~{len(shown)}, {name}{inner}"
        text = f"refining: {what}" if what else "refining"
        if left is not None and elapsed >= ETA_AFTER_S:
            text += f" · {_time_left(left)}"
        self._progress(share, text)


def _monotone(progress: ProgressFn) -> ProgressFn:
    """``progress`` that never goes back (a phase's work list can grow again)."""
    high = [0.0]

    def report(fraction: float, text: str = "") -> None:
        high[0] = max(high[0], fraction)
        progress(high[0], text)

    return report


def round_count(rounds: int, groups: int) -> int:
    """The perturbation rounds of ``deep``: ``rounds`` per group, for at most
    :data:`ROUND_GROUPS` groups (a table of more groups gets that total, spread over them)."""
    return max(0, rounds) * min(groups, ROUND_GROUPS)


def _perturb(state: _State, rng: np.random.Generator, rounds: int, progress: ProgressFn) -> int:
    """Iterated local search (see ``deep``): :func:`round_count` rounds, each seeded at a group
    drawn at random among the current ones, with threshold accepting (:data:`ACCEPT_WORSE`);
    the best partition met (at the end of a batch of rounds) is the one kept."""
    groups = int((state.cnt > 0).sum())
    total = round_count(rounds, groups)
    current = float(rk.partition_sse(state.x, state.lab, state.cnt.shape[0]))
    scale = ACCEPT_WORSE * current / max(groups, 1)
    best, best_lab = current, state.lab.copy()
    done = 0
    while done < total:
        m = min(ROUND_BATCH, total - done)
        alive = np.flatnonzero(state.cnt > 0)
        seeds = alive[rng.integers(0, alive.size, size=m)].astype(np.int64)
        sizes = rng.integers(REGION_GROUPS[0], REGION_GROUPS[1] + 1, size=m).astype(np.int64)
        rand = rng.random(m * 8)
        change, _ = rk.perturb_rounds(
            state.x, state.k, state.kmax, ROUND_PAIR_LIMIT, state.lab, state.cnt, state.sums,
            state.mem, state.pos, state.nbr, state.queue, state.in_queue, PAIR_WIDTH, state.tol,
            state.ws, state.log, seeds, sizes, rand, scale * (1.0 - done / total),
        )  # fmt: skip
        current += float(change)
        if current < best:
            best, best_lab = current, state.lab.copy()
        done += m
        progress(done / total, f"perturbation, round {done:,} of {total:,}")
    if not np.array_equal(best_lab, state.lab):
        state.lab[:] = best_lab
        state.cnt, state.sums, state.mem, state.pos = rk.build_state(
            state.x, state.lab, state.cnt.shape[0], state.cap
        )
    state.q_head, state.q_len = 0, 0
    return done


def warm_up() -> float:
    """Compile (or load) the refinement kernels on a tiny partition; the seconds it took."""
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 3))
    labels = np.repeat(np.arange(8), 3)
    for mode in ("local", "igd", "deep"):
        refine_partition(x, labels, 3, mode, rng=rng, rounds=1)
    return time.perf_counter() - started


def refine_space(qi: QIMatrix) -> np.ndarray:
    """The records as points whose squared distances are MDAV-generic's (``003`` §5.2-5.4): the
    continuous z-scores; each ordinal attribute as rank / |D(V)| (so that a coordinate
    difference is d_ORD); each nominal attribute as its categories one-hot scaled by 1/√2 (two
    different categories are at squared distance 1, the equality distance). On continuous data
    the refinement's SSE is the report's SSE exactly; with ordinal or nominal attributes it is the
    SSE about group means in this space, a stand-in for the loss about medians and modes that the
    report measures (see :func:`run_and_refine` for the check that follows)."""
    blocks = [np.asarray(qi.continuous, dtype=np.float64)]
    if qi.ordinal.shape[1]:
        sizes = qi.ordinal_sizes.astype(np.float64)
        blocks.append(qi.ordinal.astype(np.float64) / np.maximum(sizes, 1.0))
    for j in range(qi.nominal.shape[1]):
        codes = qi.nominal[:, j]
        width = int(codes.max()) + 1 if codes.size else 0
        onehot = np.zeros((codes.size, width))
        onehot[np.arange(codes.size), codes] = np.sqrt(0.5)
        blocks.append(onehot)
    return np.ascontiguousarray(np.hstack(blocks)) if blocks else np.zeros((qi.n, 0))


def run_and_refine(
    method: Method, inp: MethodInput, *, measure_qi: QIMatrix | None = None
) -> MethodOutput:
    """Run ``method`` and, when its ``refine`` parameter asks for it, refine its partition.

    ``measure_qi``: the records of ``inp`` on the scale the run's report measures (a stratum's
    records z-scored over the whole table); by default ``inp.qi``. The refinement works and
    checks on that scale, so that the report's loss is the one that does not rise (a stratum's
    own z-scores weigh the attributes differently).

    The method gets the first half of the progress bar and the refinement the second. A
    refinement changes the groups, so the method's view artifacts (a spanning tree and its cut,
    classes), which describe the method's own groups, are dropped; the report's ``refinement``
    entry gives the IL before and after. With ordinal or nominal quasi-identifiers the refined
    partition is kept only when the report's headline loss over every quasi-identifier
    (``information_loss_all_qi``) is not higher than the method's own partition's, and the entry
    says which was kept.
    """
    mode = str(inp.params.get("refine", "none"))
    if mode == "none":
        return method.run(inp)
    why = space_refusal(inp.qi if measure_qi is None else measure_qi)
    if why:
        raise InvalidParameter(why)
    output = method.run(replace(inp, progress=sub_progress(inp.progress, 0.0, 0.5)))
    if output.protected_qi is not None:  # the method made its own values: nothing to refine
        return output
    labels = np.asarray(output.labels, dtype=np.int64)
    qi = inp.qi if measure_qi is None else measure_qi
    x = refine_space(qi)
    result = refine_partition(
        x,
        labels,
        inp.k,
        mode,
        rng=inp.rng,
        rounds=int(inp.params.get("refine_rounds", DEFAULT_ROUNDS)),
        progress=sub_progress(inp.progress, 0.5, 1.0),
    )
    sst = float(((x - x.mean(axis=0)) ** 2).sum()) if x.size else 0.0
    entry = result.report(sst)
    entry["space"] = CONTINUOUS_SPACE if x.shape[1] == qi.continuous.shape[1] else MIXED_SPACE
    refined = result.labels
    # the released values are not the group means of the space (ordinal medians, nominal modes,
    # variance rescaling): the report's loss of both partitions decides (rescaling: the
    # release's SSE per column is SSW + (√SST − √(SST − SSW))², convex in SSW, so a lower SSW
    # can give a higher loss; 19 of 900 small random tables in the review)
    rescaled = bool(inp.params.get("rescale_variance", False))
    if rescaled:
        entry["release"] = "variance rescaled: the report's loss of both partitions compared"
    if (rescaled or x.shape[1] != qi.continuous.shape[1]) and not np.array_equal(refined, labels):
        before = _headline(inp, qi, labels)
        after = _headline(inp, qi, refined)
        entry["information_loss_all_qi_before"] = before
        entry["information_loss_all_qi_after"] = after
        if before is not None and after is not None and after > before:
            refined = labels
            entry["kept"] = "the method's partition (the refined one lost more in the release)"
    entry.setdefault("kept", "refined")
    changed = not np.array_equal(refined, labels)
    return MethodOutput(
        labels=refined,
        protected_qi=None,
        extra={**output.extra, "refinement": entry},
        artifacts={} if changed else dict(output.artifacts),
    )


def _headline(inp: MethodInput, qi: QIMatrix, labels: np.ndarray) -> float | None:
    """The report's loss over every quasi-identifier of the release these groups give."""
    protected = aggregate(inp.dataset, qi, labels, inp.params)
    return mixed_information_loss(qi, protected).information_loss


def refinement_losses(entry: Mapping[str, Any]) -> tuple[float, float, bool] | None:
    """(before, after, headline) of a report's ``refinement`` entry in figures the report shows:
    the IL over all quasi-identifiers when the entry has it (headline True: mixed data, variance
    rescaling), else the entry's own IL when it is the report's SSE/SST (its space is the
    z-scored continuous QIs and the release is the group means); None when neither."""
    before, after = (
        entry.get("information_loss_all_qi_before"),
        entry.get("information_loss_all_qi_after"),
    )
    if before is not None and after is not None:
        return float(before), float(after), True
    if entry.get("space") == CONTINUOUS_SPACE and "release" not in entry:
        return (
            float(entry["information_loss_before"]),
            float(entry["information_loss_after"]),
            False,
        )
    return None


def combine_refinements(entries: list[dict[str, Any]], sst: float) -> dict[str, Any]:
    """One ``refinement`` entry for a run made of pieces (strata, blocks), from each piece's:
    SSEs and seconds summed, IL = 100·SSE/``sst`` (the whole table's SST in the refinement's
    space), ``kept`` = "refined" when every piece kept its refined groups."""
    scale = 100.0 / sst if sst > 0 else 0.0
    before = sum(float(e["sse_before"]) for e in entries)
    after = sum(float(e["sse_after"]) for e in entries)
    kept = {str(e.get("kept", "refined")) for e in entries}
    out: dict[str, Any] = {
        "mode": entries[0]["mode"],
        "information_loss_before": before * scale,
        "information_loss_after": after * scale,
        "sse_before": before,
        "sse_after": after,
        "seconds": round(sum(float(e["seconds"]) for e in entries), 3),
        "rounds": sum(int(e["rounds"]) for e in entries),
        "space": entries[0]["space"],
        "pieces": len(entries),
        **({"release": entries[0]["release"]} if "release" in entries[0] else {}),
        "kept": "refined" if kept == {"refined"} else "the method's groups in some pieces",
    }
    return out
