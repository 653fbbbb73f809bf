"""p-sensitive k-anonymity through microaggregation (MDAV-based heuristic).

Solanas, Sebé & Domingo-Ferrer, "Micro-aggregation-based heuristics for p-sensitive k-anonymity:
one step beyond", Proc. PAIS 2008, pp. 61-69, as given in ``002_f464918b99c38812.txt`` §4.11
(Algorithm 1). A table is *p-sensitive k-anonymous* (Truta & Vinay 2006) when every group of
records sharing their quasi-identifier values has at least k records and, for every confidential
attribute, at least p distinct values of it. (``002`` §4.11 cites it as its reference [14]; its
bibliography lists the paper as [19] - the survey's reference numbers are off there.)

**Algorithm** (``002`` §4.11, Algorithm 1, with the MDAV-based record selection)::

    UR = all records
    while |UR| >= k and UR holds >= p distinct values of every confidential attribute:
        x_r = the record of UR farthest from the average record of UR      (MDAV's selection)
        C   = {x_r}
        while C has < p distinct values of some confidential attribute:
            add the record of UR nearest to x_r that contributes to p-sensitivity
        while |C| < k:
            add the record of UR nearest to x_r
        UR = UR minus C; C is the next group
    every record left in UR joins the group whose average record is nearest to it

A record *contributes* when, for some confidential attribute that C holds fewer than p distinct
values of, its value is not yet in C. Records only stop contributing as C grows, so the nearest
contributing record at each step is simply the next contributing one in order of distance to x_r;
the p-phase is one pass over UR in that order.

Reading of the paper's loose ends:

- **Seed.** ``002`` describes two seed selections, the MDAV-like one (the record farthest from the
  average of the unassigned records) and random seeds. microgui implements the MDAV-like one, one
  group per round (not MDAV's pair of groups around r and s): Algorithm 1 forms one cluster per
  iteration of its loop.
- **Fix-up.** Lines 17-20 of Algorithm 1 are the only repair step: the records left when fewer
  than k remain, or when the remaining records no longer hold p distinct values of some
  attribute, join their closest group ("ClosestGroup": the group whose average record - mean,
  median or mode as in MDAV-generic - is nearest, computed once after the last group is formed;
  ties go to the earliest group). Every group formed in the loop is already p-sensitive with at
  least k records, and adding records keeps it so; no merging is needed.
- **Group sizes.** Groups have at least k records. They are not bounded by 2k-1: the p-phase adds
  up to L·(p-1) records (L confidential attributes) before the k-phase, so a group formed in the
  loop has k..max(k, 1 + L·(p-1)) records, and the fix-up enlarges the groups that receive left-over
  records. When a confidential value is rare (say p = 2 and 1 % of the records hold the second
  value of a binary attribute), the loop stops once that value is used up and most records join
  the existing groups: the paper's heuristic, and the price of p-sensitivity on such data.

**Refusals.** A run is refused, naming the attribute, when some confidential attribute has fewer
than p distinct values in the whole table (no grouping can be p-sensitive), and when p > k (the
paper's setting is p <= k; a group of k records could not hold p distinct values). Otherwise the
first round always succeeds, and the output is p-sensitive k-anonymous.

**Distance and ties** are those of MDAV-generic (:mod:`microgui.core.methods.mdav`, ``003`` §5.2-5.4):
squared z-score differences, the ordinal rank distance over the number of categories, 0/1
equality for nominal attributes; the average record is the mean / median (or convex median) /
mode, kept as running sums. The farthest record is the largest (distance, -row) pair; records are
taken nearest first by (distance, row). The implementation reuses MDAV's numba distance kernels
and running sums (two passes over the remaining records per group: to the average, then to x_r);
the nearest 64 + k records of x_r are selected with a bounded heap, and only when rare values
exhaust them does the p-phase scan the rest for the nearest contributing record (one pass per
record it adds). :func:`psensitive_reference` is a plain numpy version with the same arithmetic
and rules; the tests check that both give the same partition.

**search=pruned** (issue 17; ``--param search=auto|pruned|brute``, default auto, the rule of
:func:`~microgui.core.methods.spatial.choose_search`): the same groups from the spatial searches
of :mod:`microgui.core.methods.spatial` instead of the two passes: x_r by the anchor walk from the
average record (as MDAV's r), the 64 + k candidates by the k-d blocks' nearest search, put in
(distance, row) order; the rare-value pass beyond them stays a pass over the remaining records.

**Confidential attributes** (``--confidential``) are compared by value: two records hold the same
value when their cells are equal (numbers as numbers, text as text). See
:func:`microgui.core.methods.confidential.prepare_confidential` for kinds and missing values.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import (
    Method,
    MethodInput,
    MethodOutput,
    ParamSpec,
    ReleaseCheck,
    register,
)
from microgui.core.methods.confidential import prepare_confidential
from microgui.core.methods.jit_cache import first_call_compiles
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import (
    average_record,
    check_k,
    column_sums,
    farthest,
    group_centroids,
    heap_drain_sorted,
    load_mixed_point,
    make_record_pool,
    mixed_distances,
    mixed_distances_block,
    ordinal_tables,
    qi_arrays,
    qi_blocks,
    sorted_nearest,
    take_group,
)
from microgui.core.methods.spatial import (
    block_nearest,
    build_blocks,
    choose_search,
    farthest_from_average,
    make_anchor,
    take_rows,
    work_arrays,
)
from microgui.core.metrics.privacy import distinct_by_group
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

__all__ = [
    "closest_groups",
    "psensitive",
    "psensitive_reference",
    "warm_up",
    "P_SENSITIVE",
]

#: Work (attribute-record operations) per kernel call before Python reports progress.
_BATCH_WORK = 30_000_000

#: Candidates selected per group before the full (distance, row) order is needed.
_CANDIDATES = 64

#: Work per call of the pruned kernel (issue 17; as MDAV's).
_PRUNED_BATCH_WORK = 8_000_000


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@_njit
def _add_member(
    row: int, conf: np.ndarray, mark: np.ndarray, stamp: int, cdist: np.ndarray
) -> None:
    for a in range(conf.shape[0]):
        v = conf[a, row]
        if mark[a, v] != stamp:
            mark[a, v] = stamp
            cdist[a] += 1


@_njit
def _contributes(
    row: int, conf: np.ndarray, mark: np.ndarray, stamp: int, cdist: np.ndarray, p: int
) -> bool:
    for a in range(conf.shape[0]):
        if cdist[a] < p and mark[a, conf[a, row]] != stamp:
            return True
    return False


@_njit
def _sensitive(cdist: np.ndarray, p: int) -> bool:
    for a in range(cdist.shape[0]):
        if cdist[a] < p:
            return False
    return True


@_njit
def _psensitive_batch(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osizes: np.ndarray,
    osq: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    idx: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    dist: np.ndarray,
    conf: np.ndarray,
    ucount: np.ndarray,
    udistinct: np.ndarray,
    mark: np.ndarray,
    state: np.ndarray,
    k: int,
    p: int,
    convex: bool,
    budget: int,
) -> None:
    """Form groups (Algorithm 1, lines 2-16) for about ``budget`` operations.

    ``state`` = [records remaining m, next label, finished flag]. ``conf`` (L, n) holds the
    confidential codes by original row; ``ucount``/``udistinct`` count them among the remaining
    records; ``mark[a, v] == label + 1`` says value v of attribute a is in the group being formed.
    """
    m = state[0]
    label = state[1]
    n_attr = conf.shape[0]
    dc = cont.shape[0]
    do = ords.shape[0]
    dn = noms.shape[0]
    width = dc + do + dn + 1
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    cap = _CANDIDATES + k
    hd = np.empty(cap, dtype=np.float64)
    hx = np.empty(cap, dtype=np.int64)
    hp = np.empty(cap, dtype=np.int64)
    cand = np.empty(cap, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    taken = np.zeros(cap, dtype=np.bool_)
    cdist = np.zeros(n_attr, dtype=np.int64)
    group = np.empty(k + n_attr * p + 1, dtype=np.int64)
    work = 0
    while work < budget:
        feasible = m >= k
        for a in range(n_attr):
            if udistinct[a] < p:
                feasible = False
        if not feasible:
            state[2] = 1
            break
        work += 2 * m * width
        # x_r: the record farthest from the average record of UR.
        average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
        mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
        r = farthest(dist, idx, m)
        load_mixed_point(cont, ords, noms, r, pc, po, pn)
        mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
        # Candidates nearest first: the kk smallest (distance, row) pairs, in order.
        kk = min(m - 1, cap)
        sorted_nearest(dist, idx, m, r, kk, hd, hx, hp, cand)
        stamp = label + 1
        for a in range(n_attr):
            cdist[a] = 0
        taken[:kk] = False
        g = 1
        group[0] = r
        _add_member(idx[r], conf, mark, stamp, cdist)
        i = 0
        while not _sensitive(cdist, p) and i < kk:
            pos = cand[i]
            if _contributes(idx[pos], conf, mark, stamp, cdist, p):
                group[g] = pos
                g += 1
                taken[i] = True
                _add_member(idx[pos], conf, mark, stamp, cdist)
            i += 1
        if not _sensitive(cdist, p):
            # The candidates ran out (rare values): the next contributing record lies beyond them.
            # Records only stop contributing as the group grows, so it is the smallest (distance,
            # row) pair beyond the last candidate among those that contribute now.
            last_d = dist[cand[kk - 1]]
            last_x = idx[cand[kk - 1]]
            while not _sensitive(cdist, p):
                work += m * (n_attr + 1)
                best = -1
                for pos in range(m):
                    d = dist[pos]
                    x = idx[pos]
                    if pos == r or d < last_d or (d == last_d and x <= last_x):
                        continue
                    if best >= 0 and (d > dist[best] or (d == dist[best] and x > idx[best])):
                        continue
                    if _contributes(x, conf, mark, stamp, cdist, p):
                        best = pos
                group[g] = best
                g += 1
                _add_member(idx[best], conf, mark, stamp, cdist)
        i = 0
        while g < k:
            if not taken[i]:
                group[g] = cand[i]
                g += 1
                taken[i] = True
            i += 1
        for j in range(g):
            row = idx[group[j]]
            for a in range(n_attr):
                v = conf[a, row]
                ucount[a, v] -= 1
                if ucount[a, v] == 0:
                    udistinct[a] -= 1
        take_group(
            group, g, label, m, -1, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
            no_where,
        )  # fmt: skip
        label += 1
        m -= g
    state[0] = m
    state[1] = label


@_njit
def _psensitive_pruned_batch(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    work_arrays: tuple,  # type: ignore[type-arg]
    anchor: tuple,  # type: ignore[type-arg]
    osizes: np.ndarray,
    osq: np.ndarray,
    ocount: np.ndarray,
    ncount: np.ndarray,
    total: np.ndarray,
    labels: np.ndarray,
    conf: np.ndarray,
    ucount: np.ndarray,
    udistinct: np.ndarray,
    mark: np.ndarray,
    state: np.ndarray,
    k: int,
    p: int,
    convex: bool,
    budget: int,
) -> None:
    """:func:`_psensitive_batch` with its two queries answered by the pruned searches of
    :mod:`microgui.core.methods.spatial` (issue 17): x_r by the anchor walk from the average
    record, its nearest 64 + k candidates by the blocks' nearest search (then put in (distance,
    row) order); only when rare values exhaust them, a pass over the remaining records. The same
    groups, bit for bit (same distances, same order, same rules). ``state`` as there."""
    xcol, ocol, ncol, rowat, _where, _posblock = records
    bstart = blocks[0]
    bcnt = blocks[1]
    dist = work_arrays[2]
    m = state[0]
    label = state[1]
    start_label = label
    n_attr = conf.shape[0]
    dc = xcol.shape[0]
    do = ocol.shape[0]
    dn = ncol.shape[0]
    width = dc + do + dn + 1
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    qc = np.empty(dc, dtype=np.float64)
    qo = np.empty(do, dtype=np.int64)
    qn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    cap = _CANDIDATES + k
    hd = np.empty(cap, dtype=np.float64)
    hx = np.empty(cap, dtype=np.int64)
    hp = np.empty(cap, dtype=np.int64)
    cand = np.empty(cap, dtype=np.int64)
    taken = np.zeros(cap, dtype=np.bool_)
    cdist = np.zeros(n_attr, dtype=np.int64)
    gcap = k + n_attr * p + 1
    group = np.empty(gcap, dtype=np.int64)
    rows = np.empty(gcap, dtype=np.int64)
    touched = np.empty(gcap, dtype=np.int64)
    counted = work_arrays[3][0]
    examined = 0
    extra = 0
    work = 0
    while work < budget:
        feasible = m >= k
        for a in range(n_attr):
            if udistinct[a] < p:
                feasible = False
        if not feasible:
            state[2] = 1
            break
        # x_r: the record farthest from the average record of UR.
        average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
        r, w = farthest_from_average(records, osq, anchor, pc, po, pn, m)
        examined += w
        load_mixed_point(xcol, ocol, ncol, r, qc, qo, qn)
        # Candidates nearest first: the kk smallest (distance, row) pairs, in order.
        kk = min(m - 1, cap)
        if kk > 0:
            block_nearest(records, blocks, supers, osq, qc, qo, qn, r, kk, hd, hx, hp, work_arrays)
            heap_drain_sorted(hd, hx, hp, kk, cand)
        stamp = label + 1
        for a in range(n_attr):
            cdist[a] = 0
        taken[:kk] = False
        g = 1
        group[0] = r
        _add_member(rowat[r], conf, mark, stamp, cdist)
        i = 0
        while not _sensitive(cdist, p) and i < kk:
            pos = cand[i]
            if _contributes(rowat[pos], conf, mark, stamp, cdist, p):
                group[g] = pos
                g += 1
                taken[i] = True
                _add_member(rowat[pos], conf, mark, stamp, cdist)
            i += 1
        if not _sensitive(cdist, p):
            # The candidates ran out (rare values): a pass over the remaining records, as the
            # brute-force kernel's.
            # the last candidate's distance (the search computed it: dist holds it by position)
            last_d = dist[cand[kk - 1]]
            last_x = rowat[cand[kk - 1]]
            nb = bstart.shape[0]
            for b in range(nb):
                c = bcnt[b]
                if c:
                    mixed_distances_block(
                        xcol, ocol, ncol, osq, bstart[b], bstart[b] + c, qc, qo, qn, dist
                    )
            examined += m
            while not _sensitive(cdist, p):
                extra += m * (n_attr + 1)
                best = -1
                best_d = 0.0
                best_x = 0
                for b in range(nb):
                    for pos in range(bstart[b], bstart[b] + bcnt[b]):
                        d = dist[pos]
                        x = rowat[pos]
                        if pos == r or d < last_d or (d == last_d and x <= last_x):
                            continue
                        if best >= 0 and (d > best_d or (d == best_d and x > best_x)):
                            continue
                        if _contributes(x, conf, mark, stamp, cdist, p):
                            best = pos
                            best_d = d
                            best_x = x
                group[g] = best
                g += 1
                _add_member(rowat[best], conf, mark, stamp, cdist)
        i = 0
        while g < k:
            if not taken[i]:
                group[g] = cand[i]
                g += 1
                taken[i] = True
            i += 1
        for j in range(g):
            row = rowat[group[j]]
            rows[j] = row
            for a in range(n_attr):
                v = conf[a, row]
                ucount[a, v] -= 1
                if ucount[a, v] == 0:
                    udistinct[a] -= 1
        take_rows(
            records, blocks, supers, anchor, rows, g, label, ocount, ncount, total, labels, touched
        )
        label += 1
        m -= g
        work = extra + (examined + work_arrays[3][0] - counted) * width
        work += (label - start_label) * 256 * width
    state[0] = m
    state[1] = label


@_njit
def _closest_groups_kernel(
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    rows: np.ndarray,
    cc: np.ndarray,
    co: np.ndarray,
    cn: np.ndarray,
    out: np.ndarray,
) -> None:
    # cont/ords/noms: (n, d) row-major originals; cc/co/cn: (g, d) group average records.
    n_groups = cc.shape[0]
    for a in range(rows.shape[0]):
        row = rows[a]
        best = 0
        best_d = np.inf
        for g in range(n_groups):
            d = 0.0
            for j in range(cont.shape[1]):
                t = cont[row, j] - cc[g, j]
                d += t * t
            for j in range(ords.shape[1]):
                d += osq[j, abs(ords[row, j] - co[g, j])]
            for j in range(noms.shape[1]):
                d += np.float64(noms[row, j] != cn[g, j])
            if d < best_d:
                best_d = d
                best = g
        out[a] = best


def closest_groups(
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    rows: np.ndarray,
    centroids: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    progress: ProgressFn = no_progress,
) -> np.ndarray:
    """For each of ``rows``, the group whose average record is nearest (ties: smallest group)."""
    osq, _ = ordinal_tables(ordinal, np.asarray(ordinal_sizes, dtype=np.int64))
    cont = np.ascontiguousarray(continuous, dtype=np.float64)
    ords = np.ascontiguousarray(ordinal, dtype=np.int64)
    noms = np.ascontiguousarray(nominal, dtype=np.int64)
    cc, co, cn = (np.ascontiguousarray(c) for c in centroids)
    out = np.empty(len(rows), dtype=np.int64)
    width = max(1, len(cc) * (cont.shape[1] + ords.shape[1] + noms.shape[1] + 1))
    step = max(1, 20_000_000 // width)
    for start in range(0, len(rows), step):
        stop = min(start + step, len(rows))
        _closest_groups_kernel(cont, ords, noms, osq, rows[start:stop], cc, co, cn, out[start:stop])
        progress(stop / len(rows), "assigning the remaining records")
    return out


# --------------------------------------------------------------------------------------------
# drivers
# --------------------------------------------------------------------------------------------


def _check(k: int, p: int, n: int, conf: np.ndarray, names: list[str] | None) -> None:
    check_k(k, n)
    if p < 1:
        raise InvalidParameter(f"p={p} must be at least 1")
    if p > k:
        raise InvalidParameter(
            f"p={p} is larger than k={k}: a group of k records cannot be required to hold p "
            "distinct confidential values; give p <= k (or raise k)"
        )
    for a in range(conf.shape[1]):
        distinct = len(np.unique(conf[:, a]))
        if distinct < p:
            name = repr(names[a]) if names is not None else f"#{a}"
            raise InvalidParameter(
                f"confidential attribute {name} has only {distinct} distinct value(s) in the whole "
                f"table, fewer than p={p}, so no group can hold {p}: give p <= {distinct} or do not "
                f"tag {name} confidential"
            )


def _as_codes(confidential: npt.ArrayLike, n: int) -> np.ndarray:
    conf = np.asarray(confidential, dtype=np.int64)
    if conf.ndim == 1:
        conf = conf[:, None]
    if conf.ndim != 2 or conf.shape[0] != n or conf.shape[1] == 0:
        raise ValueError(f"expected confidential codes of shape ({n}, L >= 1), got {conf.shape}")
    if conf.min() < 0:
        raise ValueError("confidential codes must be >= 0")
    # Re-code each attribute to 0..m-1 so the kernel's tables stay small.
    out = np.empty_like(conf)
    for a in range(conf.shape[1]):
        _, out[:, a] = np.unique(conf[:, a], return_inverse=True)
    return out


def psensitive(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    confidential: npt.ArrayLike,
    k: int,
    p: int,
    *,
    ordinal_average: str = "median",
    names: list[str] | None = None,
    progress: ProgressFn = no_progress,
    search: str = "auto",
) -> np.ndarray:
    """p-sensitive k-anonymous partition (``002`` §4.11, Algorithm 1, MDAV-based seeds).

    Parameters
    ----------
    continuous, ordinal, ordinal_sizes, nominal
        The quasi-identifiers as for :func:`microgui.core.methods.mdav.mdav_generic` (z-scores,
        ordinal ranks with their numbers of categories, nominal codes; None for an absent block).
    confidential
        (n, L) int codes of the L confidential attributes (equal codes = equal values).
    k, p
        Minimum group size and minimum number of distinct values of each confidential attribute
        per group, 1 <= p <= k.
    ordinal_average
        ``"median"`` or ``"convex-median"`` for the average record.
    names
        Names of the confidential attributes, for messages.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled`.
    search
        ``"brute"`` (passes over the remaining records), ``"pruned"`` (the spatial searches of
        :mod:`microgui.core.methods.spatial`) or ``"auto"``
        (:func:`~microgui.core.methods.spatial.choose_search`); the same groups, bit for bit.

    Returns
    -------
    numpy.ndarray
        int64 group label per record, groups numbered in the order formed; every group has at
        least k records and at least p distinct values of every confidential attribute.
    """
    n = next(
        (np.asarray(a).shape[0] for a in (continuous, ordinal, nominal) if a is not None), None
    )
    if n is None:
        raise ValueError("psensitive needs at least one block of quasi-identifiers")
    cont, ords, sizes, noms = qi_arrays(continuous, ordinal, ordinal_sizes, nominal, n)
    conf = _as_codes(confidential, n)
    _check(int(k), int(p), n, conf, names)
    convex = ordinal_average == "convex-median"
    if search not in ("auto", "pruned", "brute"):
        raise InvalidParameter(f"search={search!r} must be one of auto, pruned, brute")
    categorical = ords.shape[1] + noms.shape[1]
    if search == "auto":
        search = choose_search(n, cont.shape[1] + categorical, int(k), categorical)
    if search == "pruned" and not np.isfinite(cont).all():
        raise InvalidParameter("p-sensitive needs finite numbers (drop or impute missing values)")
    conf_t = np.ascontiguousarray(conf.T)
    width = int(conf.max()) + 1
    ucount = np.zeros((conf.shape[1], width), dtype=np.int64)
    for a in range(conf.shape[1]):
        ucount[a] = np.bincount(conf[:, a], minlength=width)
    udistinct = (ucount > 0).sum(axis=1).astype(np.int64)
    mark = np.zeros((conf.shape[1], width), dtype=np.int64)
    state = np.array([n, 0, 0], dtype=np.int64)
    forming = sub_progress(progress, 0.0, 0.9)
    kernel = _psensitive_pruned_batch if search == "pruned" else _psensitive_batch
    if first_call_compiles(kernel):
        # Not compiled in this process: numba loads its on-disk cache, or compiles on the very
        # first run (tens of seconds, during which a cancel cannot take effect); see warm_up().
        forming(0.0, "compiling the p-sensitive kernel (first run only)")
    forming(0.0, "forming p-sensitive groups")
    if search == "pruned":
        labels = _pruned_groups(
            cont, ords, sizes, noms, conf_t, ucount, udistinct, mark, state, int(k), int(p),
            convex, forming,
        )  # fmt: skip
        rest = np.flatnonzero(labels < 0)
    else:
        labels, rest = _brute_groups(
            cont, ords, sizes, noms, conf_t, ucount, udistinct, mark, state, int(k), int(p),
            convex, forming,
        )  # fmt: skip
    if len(rest):
        n_groups = int(state[1])
        formed = labels >= 0
        cents = group_centroids(
            cont[formed], ords[formed], sizes, noms[formed], labels[formed], n_groups, convex=convex
        )
        labels[rest] = closest_groups(
            cont, ords, sizes, noms, rest, cents, progress=sub_progress(progress, 0.9, 1.0)
        )
    progress(1.0, "p-sensitive groups formed")
    return labels


def _pruned_groups(
    cont: np.ndarray,
    ords: np.ndarray,
    sizes: np.ndarray,
    noms: np.ndarray,
    conf_t: np.ndarray,
    ucount: np.ndarray,
    udistinct: np.ndarray,
    mark: np.ndarray,
    state: np.ndarray,
    k: int,
    p: int,
    convex: bool,
    forming: ProgressFn,
) -> np.ndarray:
    n = cont.shape[0]
    osq, ocount = ordinal_tables(ords, sizes)
    ncat = int(noms.max()) + 1 if noms.size else 1
    ncount = np.zeros((noms.shape[1], ncat), dtype=np.int64)
    for j in range(noms.shape[1]):
        ncount[j] = np.bincount(noms[:, j], minlength=ncat)
    total = column_sums(cont)
    labels = np.full(n, -1, dtype=np.int64)
    index = build_blocks(cont, ords, sizes, noms)
    work = work_arrays(index)
    anchor = make_anchor(n, cont, ords.shape[1], noms.shape[1])
    while state[2] == 0:
        _psensitive_pruned_batch(
            index.records, index.blocks, index.supers, work, anchor, sizes, osq, ocount, ncount,
            total, labels, conf_t, ucount, udistinct, mark, state, k, p, convex,
            _PRUNED_BATCH_WORK,
        )  # fmt: skip
        left = int(state[0]) / n
        forming(1.0 - left * left, "forming p-sensitive groups")
    return labels


def _brute_groups(
    cont: np.ndarray,
    ords: np.ndarray,
    sizes: np.ndarray,
    noms: np.ndarray,
    conf_t: np.ndarray,
    ucount: np.ndarray,
    udistinct: np.ndarray,
    mark: np.ndarray,
    state: np.ndarray,
    k: int,
    p: int,
    convex: bool,
    forming: ProgressFn,
) -> tuple[np.ndarray, np.ndarray]:
    n = cont.shape[0]
    pool = make_record_pool(cont, ords, sizes, noms, convex=convex)
    while state[2] == 0:
        _psensitive_batch(
            pool.cont,
            pool.ords,
            pool.noms,
            pool.sizes,
            pool.osq,
            pool.ocount,
            pool.ncount,
            pool.idx,
            pool.total,
            pool.labels,
            pool.dist,
            conf_t,
            ucount,
            udistinct,
            mark,
            state,
            k,
            p,
            convex,
            _BATCH_WORK,
        )
        left = int(state[0]) / n
        forming(1.0 - left * left, "forming p-sensitive groups")
    return pool.labels, np.sort(pool.idx[: int(state[0])])


def psensitive_reference(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    confidential: npt.ArrayLike,
    k: int,
    p: int,
    *,
    ordinal_average: str = "median",
) -> np.ndarray:
    """Algorithm 1 of ``002`` §4.11 written out in plain numpy, for tests: same partition and
    tie rules as :func:`psensitive` (O(n²) with a full sort per group; small tables only)."""
    from microgui.core.table.aggregate import convex_median, mode, ordinal_median

    n = next(
        (np.asarray(a).shape[0] for a in (continuous, ordinal, nominal) if a is not None), None
    )
    if n is None:
        raise ValueError("psensitive_reference needs at least one block of quasi-identifiers")
    x, o, sizes, v = qi_arrays(continuous, ordinal, ordinal_sizes, nominal, n)
    conf = _as_codes(confidential, n)
    _check(int(k), int(p), n, conf, None)
    average = convex_median if ordinal_average == "convex-median" else ordinal_median
    ncat = [int(v[:, j].max()) + 1 for j in range(v.shape[1])]
    total = column_sums(x)
    alive = np.ones(n, dtype=bool)
    labels = np.full(n, -1, dtype=np.int64)
    label = 0

    def distances(pc: np.ndarray, po: np.ndarray, pn: np.ndarray) -> np.ndarray:
        d = np.zeros(n)
        for j in range(x.shape[1]):
            t = x[:, j] - pc[j]
            d += t * t
        for j in range(o.shape[1]):
            t = np.abs(o[:, j] - po[j]) / sizes[j]
            d += t * t
        for j in range(v.shape[1]):
            d += (v[:, j] != pn[j]).astype(np.float64)
        return d

    def feasible() -> bool:
        if alive.sum() < k:
            return False
        return all(len(np.unique(conf[alive, a])) >= p for a in range(conf.shape[1]))

    while feasible():
        m = int(alive.sum())
        pc = total / m
        po = np.array([average(o[alive, j], sizes[j]) for j in range(o.shape[1])], dtype=np.int64)
        pn = np.array([mode(v[alive, j], ncat[j]) for j in range(v.shape[1])], dtype=np.int64)
        d = distances(pc, po, pn)
        rows = np.flatnonzero(alive)
        r = int(rows[np.argmax(d[rows])])  # first maximum: the smallest row among ties
        d = distances(x[r], o[r], v[r])
        others = rows[rows != r]
        order = others[np.lexsort((others, d[others]))]
        group = [r]
        values = [{int(conf[r, a])} for a in range(conf.shape[1])]
        for y in order:
            if all(len(s) >= p for s in values):
                break
            if any(
                len(values[a]) < p and int(conf[y, a]) not in values[a] for a in range(len(values))
            ):
                group.append(int(y))
                for a in range(len(values)):
                    values[a].add(int(conf[y, a]))
        for y in order:
            if len(group) >= k:
                break
            if int(y) not in group:
                group.append(int(y))
        members = np.array(sorted(group))
        for i in members:
            total = total - x[i]
        labels[members] = label
        alive[members] = False
        label += 1
    rest = np.flatnonzero(alive)
    if len(rest):
        formed = ~alive
        cents = group_centroids(
            x[formed], o[formed], sizes, v[formed], labels[formed], label,
            convex=ordinal_average == "convex-median",
        )  # fmt: skip
        cc, co, cn = cents
        for i in rest:
            d = np.zeros(label)
            for j in range(x.shape[1]):
                t = x[i, j] - cc[:, j]
                d += t * t
            for j in range(o.shape[1]):
                t = np.abs(o[i, j] - co[:, j]) / sizes[j]
                d += t * t
            for j in range(v.shape[1]):
                d += (v[i, j] != cn[:, j]).astype(np.float64)
            labels[i] = int(np.argmin(d))
    return labels


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels; returns the seconds it took."""
    import time

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    psensitive(
        rng.normal(size=(12, 2)),
        rng.integers(0, 3, (12, 1)),
        [3],
        rng.integers(0, 2, (12, 1)),
        np.arange(12) % 3,
        2,
        2,
    )
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run(inp: MethodInput) -> MethodOutput:
    attrs = prepare_confidential(inp.dataset, "p-sensitive")
    names = [a.name for a in attrs]
    conf = np.column_stack([a.codes for a in attrs])
    p = int(inp.params["p"])
    qi = inp.qi
    cont, ords, sizes, noms = qi_blocks(qi)
    labels = psensitive(
        cont,
        ords,
        sizes,
        noms,
        conf,
        inp.k,
        p,
        ordinal_average=str(inp.params.get("ordinal_average", "median")),
        names=names,
        progress=inp.progress,
        search=str(inp.params.get("search", "auto")),
    )
    achieved = {a.name: int(distinct_by_group(a.codes, labels).min()) for a in attrs}
    return MethodOutput(
        labels=labels,
        extra={
            "p": p,
            "p_achieved": achieved,
            "p_sensitivity": min(achieved.values()),
            "confidential_kinds": {a.name: a.kind for a in attrs},
        },
    )


P_SENSITIVE = register(
    Method(
        name="p-sensitive",
        title="p-sensitive k-anonymity",
        summary="MDAV-based groups of at least k records holding at least p distinct values of "
        "every confidential attribute (Solanas, Sebé & Domingo-Ferrer 2008; 002 §4.11)",
        description=(
            "Microaggregation that also protects the confidential attributes (Solanas, Sebé & "
            "Domingo-Ferrer 2008, surveyed in 002 §4.11): each group is built around the record "
            "farthest from the average of the records left, first adding its nearest records that "
            "bring a new confidential value until the group holds p distinct values of every "
            "confidential attribute, then its nearest records until it has k. Records left at "
            "the end join their closest group. Every group then has at least k records and p "
            "distinct values of each confidential attribute (p-sensitive k-anonymity); groups "
            "can exceed 2k-1 records. Needs columns tagged confidential."
        ),
        citation="002_f464918b99c38812.txt §4.11 (Algorithm 1); Solanas, Sebé & Domingo-Ferrer, "
        "PAIS 2008",
        kinds=frozenset({AttributeKind.CONTINUOUS, AttributeKind.ORDINAL, AttributeKind.NOMINAL}),
        run=_run,
        params=(
            ParamSpec(
                "p",
                int,
                2,
                "Minimum number of distinct values of each confidential attribute in every group "
                "(1 <= p <= k).",
                minimum=1,
            ),
            ParamSpec(
                "search",
                str,
                "auto",
                "How the farthest and nearest records are found: brute = a pass over all "
                "remaining records each time; pruned = a spatial index that skips the records "
                "that cannot be the answer; auto = pruned on large tables of up to 12 "
                "attributes (as mdav). The groups are the same bit for bit.",
                choices=("auto", "pruned", "brute"),
            ),
        ),
        complexity="O(n²/k) distance evaluations (two passes over the remaining records per "
        "group, as MDAV), plus O(r·g) for r records left over and g groups",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
        needs_confidential=True,
        release_check=ReleaseCheck("p-sensitive", "p"),
    )
)
