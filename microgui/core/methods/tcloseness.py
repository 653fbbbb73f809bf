"""k-anonymous t-closeness through microaggregation: three algorithms.

Soria-Comas, Domingo-Ferrer, Sánchez & Martínez, "t-Closeness through microaggregation: strict
privacy with enhanced utility preservation", IEEE TKDE 27(11), 2015, 3098-3110, as surveyed in
``002_f464918b99c38812.txt`` §4.16 (which cites it as [19]; its bibliography lists it as [20]).
A group is *t-close* when the Earth Mover's Distance (EMD) between the distribution of each
confidential attribute within the group and its distribution in the whole table is at most t
(Li, Li & Venkatasubramanian, ICDE 2007); see :mod:`microgui.core.metrics.privacy` for the ordered
distance (numerical and ordinal attributes, ranks of the whole table's distinct values) and the
equal distance (nominal attributes).

``002`` only sketches the three algorithms; the steps below follow the original paper as far as
it could be reconstructed (its full text was not at hand, so the details marked *reading* are
microgui's choices, each a faithful completion of the survey's description).

**merge** (``002`` §4.16.1, the paper's Algorithm 1)::

    groups = MDAV-generic(k)                       (003 Algorithm 5.1)
    while some group has EMD > t:
        C  = the group with the largest EMD        (ties: the earliest group)
        C' = the group whose average record is nearest to C's (MDAV-generic distance)
        merge C and C'

**k-first** (``002`` §4.16.2, Algorithm 2: k-anonymity-first, t-closeness-aware)::

    while records remain:
        x0 = the record farthest from the average record;   C = GenerateCluster(x0)
        x1 = the record farthest from x0 (among the rest);  C = GenerateCluster(x1)
    then the merge loop above for any group still farther than t

    GenerateCluster(x): if fewer than 2k records remain, all of them; else C = x and its k-1
    nearest records; while EMD(C) > t, take the next nearest record y not yet considered and
    swap it with the record z of C (x excepted) for which EMD(C - z + y) is smallest, if that is
    smaller than EMD(C); stop when EMD(C) <= t or every remaining record has been considered.

*Reading*: the seed x stays in its cluster (a swap never removes it), and ties of EMD go to the
first record of C in order of distance. Clusters have k records (the last k..2k-1) before merging.
When t cannot be reached with k records the scan would go through every remaining record for
every cluster (O(n) EMD evaluations each); two exact short cuts stop it as soon as no later swap
can be accepted, without changing the result: the cluster has reached the smallest EMD any k
records can have (:func:`smallest_emd`), or every value combination still held by an unconsidered
record has been rejected since the last swap (same values, same EMDs: rejected again; used when
the confidential attributes take at most 4,096 combinations).

**t-first** (``002`` §4.16.3, Algorithm 3: t-closeness-first)::

    k' = max(k, ceil(n / (2(n-1)t + 1)))
    sort the records by the confidential attribute; cut them into k' strata of b = floor(n/k')
    consecutive records, the r = n mod k' extra records going to the middle stratum (the one
    holding the median record, number (k'-1) div 2)
    while records remain:
        x0 = the record farthest from the average record; C = x0 plus, from every stratum, the
             record nearest to x0 (two from the middle stratum for the first r clusters)
        x1 = the record farthest from x0; the same around x1

With n distinct values, a cluster holding one record of each of k strata of n/k consecutive
ranks has EMD <= (n/k - 1) / (2(n-1)) (every unit of mass moves within its stratum), which is <= t
exactly when k >= n / (2(n-1)t + 1): that is where k' comes from. *Reading*: the paper puts the
extra records "close to the median record" and gives them to "the first r clusters"; when r > b
the middle stratum's records are spread evenly (q = (b + r) div b per cluster, one more for the
first (b + r) mod b). Clusters have k' records (k' + 1 or more with the extras).

**Every variant ends with the merge loop**, so that every group is t-close whatever the data.
t-first's bound holds for distinct values with r = 0 (checked by the tests: no merge is then
ever needed); with ties or a nominal attribute a stratum can straddle two values, and the
middle stratum's extra records can push a cluster past the bound (measured: 0.121 against 0.096
for n = 14, k' = 4) and, rarely, past t. k-first may run out of records to swap. The report
gives the number of merges. Merging always terminates: the whole table, as one group, has EMD 0.

**Group sizes** are at least k and, unlike MDAV's, not bounded by 2k-1: t-first's clusters have
k' >= k records, and a merged group has as many as t requires. That is the papers' design:
a group's confidential distribution can only be close to the table's if the group is varied enough.

**Several confidential attributes** (the paper treats one): a group's EMD is the *largest* of its
attributes' EMDs, so every attribute is t-close; k-first minimizes that maximum; t-first cuts
its strata on the first confidential attribute (in table order) and leaves the others to the
merge loop.

**Distance, average record and ties** are MDAV-generic's (:mod:`microgui.core.methods.mdav`): the
farthest record is the largest (distance, -row) pair, records are taken nearest first by
(distance, row). EMDs are compared with a tolerance of 1e-12 (t-closeness holds "up to rounding").
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

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
from microgui.core.methods.confidential import ConfidentialAttribute, prepare_confidential
from microgui.core.methods.jit_cache import first_call_compiles
from microgui.core.methods.jit_cache import njit as _njit
from microgui.core.methods.kernels import (
    average_record,
    check_k,
    farthest,
    group_centroids,
    load_mixed_point,
    make_record_pool,
    mixed_distances,
    ordinal_tables,
    qi_arrays,
    sorted_nearest,
    take_group,
)
from microgui.core.methods.mdav import mdav_generic
from microgui.core.metrics.privacy import emd_by_group, ordered_tables
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.roles import AttributeKind

log = logging.getLogger(__name__)

__all__ = [
    "VARIANTS",
    "EMDTables",
    "emd_tables",
    "cluster_size_for_t",
    "smallest_emd",
    "merge_until_close",
    "tcloseness",
    "warm_up",
    "T_CLOSENESS",
]

VARIANTS = ("merge", "k-first", "t-first")

#: EMDs within this of t count as t-close (rounding of the cumulative sums).
_TOL = 1e-12

#: Work (attribute-record operations) per kernel call before Python reports progress.
_BATCH_WORK = 30_000_000

#: Nearest candidates selected at first for k-first's swaps (more when they run out).
_CANDIDATES = 64

#: k-first skips candidates whose confidential values were rejected since the last swap when
#: the attributes take at most this many value combinations.
_KEYS_MAX = 4096


# --------------------------------------------------------------------------------------------
# EMD of a cluster (numba)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EMDTables:
    """What a cluster's EMD needs of the whole table, per confidential attribute (padded rows).

    ``conf`` (L, n) codes by row; ``ordered`` (L,); ``n_values`` (L,) m; ``q`` (L, W) the
    cumulative distribution for ordered attributes and the value probabilities for nominal ones;
    ``sq`` (L, W + 1) prefix sums of the cumulative distribution.
    """

    conf: np.ndarray
    ordered: np.ndarray
    n_values: np.ndarray
    q: np.ndarray
    sq: np.ndarray


def emd_tables(attrs: tuple[ConfidentialAttribute, ...] | list[ConfidentialAttribute]) -> EMDTables:
    """Build the :class:`EMDTables` of the confidential attributes."""
    n = len(attrs[0].codes)
    width = max(max(a.n_values for a in attrs), 1)
    q = np.zeros((len(attrs), width))
    sq = np.zeros((len(attrs), width + 1))
    for i, a in enumerate(attrs):
        if a.ordered:
            qa, sqa = ordered_tables(a.codes, a.n_values)
            q[i, : a.n_values] = qa
            sq[i, : a.n_values + 1] = sqa
        else:
            q[i, : a.n_values] = np.bincount(a.codes, minlength=a.n_values) / n
    return EMDTables(
        conf=np.ascontiguousarray(np.stack([a.codes for a in attrs]), dtype=np.int64),
        ordered=np.array([a.ordered for a in attrs], dtype=np.bool_),
        n_values=np.array([a.n_values for a in attrs], dtype=np.int64),
        q=q,
        sq=sq,
    )


@_njit
def _emd_ordered_sorted(vals: np.ndarray, s: int, q: np.ndarray, sq: np.ndarray, m: int) -> float:
    # Ordered EMD of a group with sorted ranks vals[:s] (privacy module docstring: the group's
    # cumulative distribution is constant (j+1)/s on [vals[j], vals[j+1]); Q is non-decreasing).
    if m <= 1:
        return 0.0
    last = m - 1
    total = sq[min(vals[0], last)]
    for j in range(s):
        a = min(vals[j], last)
        b = min(vals[j + 1], last) if j + 1 < s else last
        if b <= a:
            continue
        c = (j + 1) / s
        split = a + np.searchsorted(q[a:b], c)
        total += c * (split - a) - (sq[split] - sq[a]) + (sq[b] - sq[split]) - c * (b - split)
    emd: float = max(total / (m - 1), 0.0)
    return emd


@_njit
def _emd_equal_sorted(vals: np.ndarray, s: int, qv: np.ndarray) -> float:
    # ½ Σ |p - q| = ½ (1 + Σ_{values in the group} (|p - q| - q)).
    total = 1.0
    j = 0
    while j < s:
        v = vals[j]
        c = 0
        while j < s and vals[j] == v:
            c += 1
            j += 1
        p = c / s
        total += abs(p - qv[v]) - qv[v]
    return max(0.5 * total, 0.0)


@_njit
def _cluster_emd(
    rows: np.ndarray,
    s: int,
    conf: np.ndarray,
    ordered: np.ndarray,
    ms: np.ndarray,
    q: np.ndarray,
    sq: np.ndarray,
    buf: np.ndarray,
) -> float:
    """The largest EMD over the confidential attributes of the group of rows ``rows[:s]``."""
    worst = 0.0
    for a in range(conf.shape[0]):
        for j in range(s):
            buf[j] = conf[a, rows[j]]
        vals = np.sort(buf[:s])
        if ordered[a]:
            e = _emd_ordered_sorted(vals, s, q[a], sq[a], ms[a])
        else:
            e = _emd_equal_sorted(vals, s, q[a])
        if e > worst:
            worst = e
    return worst


def _group_emds(tables: EMDTables, labels: np.ndarray) -> np.ndarray:
    """EMD (largest over the attributes) of every group, vectorized."""
    out = np.zeros(int(labels.max()) + 1)
    for a in range(tables.conf.shape[0]):
        e = emd_by_group(
            tables.conf[a], labels, int(tables.n_values[a]), ordered=bool(tables.ordered[a])
        )
        out = np.maximum(out, e)
    return out


def smallest_emd(tables: EMDTables, size: int) -> float:
    """The smallest EMD any group of ``size`` records can have (largest over the attributes).

    Over all multisets of ``size`` values of the table, exactly:

    - equal distance: EMD = 1 - Σ_v min(p_v, q_v), largest overlap when every value v gets
      floor(q_v·size) records and the rest go to the largest remainders q_v - floor(q_v·size)/size;
    - ordered distance: Σ_i |P(i) - Q(i)| = ∫_0^1 |P⁻¹(u) - Q⁻¹(u)| du (quantile functions, in
      ranks), which splits into one integral per record j over ((j-1)/size, j/size]: each is
      smallest with the record at Q⁻¹ of the interval's midpoint.

    k-first stops swapping once a cluster is this close: no swap can then improve it.
    """
    worst = 0.0
    for a in range(tables.conf.shape[0]):
        m = int(tables.n_values[a])
        if m <= 1:
            continue
        if not tables.ordered[a]:
            q = tables.q[a, :m]
            base = np.floor(q * size + 1e-12)
            rest = np.sort(q - base / size)[::-1]
            extra = max(size - int(base.sum()), 0)
            overlap = base.sum() / size + rest[:extra].sum()
            worst = max(worst, 1.0 - overlap)
            continue
        cum = tables.q[a, :m]
        lo = np.concatenate([[0.0], cum[:-1]])  # rank i holds the quantiles (lo[i], cum[i]]
        total = 0.0
        for j in range(size):
            left, right = j / size, (j + 1) / size
            best = int(np.searchsorted(cum, (left + right) / 2.0 - 1e-15, side="left"))
            overlap = np.clip(np.minimum(cum, right) - np.maximum(lo, left), 0.0, None)
            total += float((np.abs(np.arange(m) - best) * overlap).sum())
        worst = max(worst, total / (m - 1))
    return worst


# --------------------------------------------------------------------------------------------
# merging (Algorithm 1's loop; the fix-up of the other two)
# --------------------------------------------------------------------------------------------


def merge_until_close(
    labels: npt.ArrayLike,
    continuous: np.ndarray,
    ordinal: np.ndarray,
    ordinal_sizes: np.ndarray,
    nominal: np.ndarray,
    tables: EMDTables,
    t: float,
    *,
    convex: bool = False,
    progress: ProgressFn = no_progress,
    compiled_emd: bool = True,
) -> tuple[np.ndarray, int]:
    """Merge the group with the largest EMD into the group nearest to it until all are t-close.

    The merged groups' EMDs come from the compiled ``_cluster_emd``; the result is then checked
    with the plain numpy EMD of :mod:`microgui.core.metrics.privacy`, and should a group still be
    farther than t (it happened once here: a numba on-disk cache entry of ``_cluster_emd``
    compiled in this session returned 0.013 for a group whose EMD is 0.030, and the release was
    not t-close; a fresh compile of the same source was right), the merging is redone with the
    numpy EMD throughout (``compiled_emd=False``). A release is never less t-close than asked.

    Parameters
    ----------
    labels
        Group label per record, 0..g-1.
    continuous, ordinal, ordinal_sizes, nominal
        The quasi-identifiers (z-scores, ordinal ranks and sizes, nominal codes), for the groups'
        average records and the MDAV-generic distance between them.
    tables
        The confidential attributes (:func:`emd_tables`).
    t
        The t-closeness level.
    convex
        Convex median (else median) for ordinal average records.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled`.

    Returns
    -------
    tuple
        (new labels, renumbered 0..g'-1 in the order of each group's smallest old label;
        number of merges).
    """
    lab = np.asarray(labels, dtype=np.int64)
    n_groups = int(lab.max()) + 1
    emd = _group_emds(tables, lab)
    violating = int((emd > t + _TOL).sum())
    if violating == 0:
        progress(1.0, "groups are t-close")
        return lab.copy(), 0
    order = np.argsort(lab, kind="stable")
    bounds = np.searchsorted(lab[order], np.arange(n_groups + 1))
    members = [order[bounds[g] : bounds[g + 1]] for g in range(n_groups)]
    sizes = np.bincount(lab, minlength=n_groups).astype(np.float64)
    sums = np.zeros((n_groups, continuous.shape[1]))
    for j in range(continuous.shape[1]):
        sums[:, j] = np.bincount(lab, weights=continuous[:, j], minlength=n_groups)
    ofreq = []
    for j in range(ordinal.shape[1]):
        f = np.zeros((n_groups, int(ordinal_sizes[j])), dtype=np.int64)
        np.add.at(f, (lab, ordinal[:, j]), 1)
        ofreq.append(f)
    nfreq = []
    for j in range(nominal.shape[1]):
        f = np.zeros((n_groups, int(nominal[:, j].max()) + 1), dtype=np.int64)
        np.add.at(f, (lab, nominal[:, j]), 1)
        nfreq.append(f)
    cc, co, cn = group_centroids(
        continuous, ordinal, ordinal_sizes, nominal, lab, n_groups, convex=convex
    )
    osq, _ = ordinal_tables(ordinal, np.asarray(ordinal_sizes, dtype=np.int64))
    alive = np.ones(n_groups, dtype=bool)
    score = np.where(alive, emd, -1.0)
    buf = np.empty(len(lab), dtype=np.int64)
    initial = violating
    merges = 0
    progress(0.0, "merging groups until t-close")
    while True:
        g = int(np.argmax(score))  # first maximum: the earliest group among ties
        if score[g] <= t + _TOL or alive.sum() <= 1:
            break
        d = np.zeros(n_groups)
        for j in range(cc.shape[1]):
            diff = cc[:, j] - cc[g, j]
            d += diff * diff
        for j in range(co.shape[1]):
            d += osq[j, np.abs(co[:, j] - co[g, j])]
        for j in range(cn.shape[1]):
            d += (cn[:, j] != cn[g, j]).astype(np.float64)
        d[~alive] = np.inf
        d[g] = np.inf
        h = int(np.argmin(d))
        keep, drop = min(g, h), max(g, h)
        was = int(score[keep] > t + _TOL) + int(score[drop] > t + _TOL)
        rows = np.concatenate([members[keep], members[drop]])
        members[keep] = rows
        members[drop] = rows[:0]
        sizes[keep] += sizes[drop]
        sums[keep] += sums[drop]
        cc[keep] = sums[keep] / sizes[keep]
        for j, f in enumerate(ofreq):
            f[keep] += f[drop]
            freq = f[keep]
            if convex:
                left = np.maximum.accumulate(freq)
                right = np.maximum.accumulate(freq[::-1])[::-1]
                freq = np.minimum(left, right)
            cum = np.cumsum(freq)
            co[keep, j] = int(np.searchsorted(cum, cum[-1] / 2.0, side="left"))
        for j, f in enumerate(nfreq):
            f[keep] += f[drop]
            cn[keep, j] = int(np.argmax(f[keep]))
        alive[drop] = False
        score[drop] = -1.0
        if len(buf) < len(rows):
            buf = np.empty(len(rows), dtype=np.int64)
        if compiled_emd:
            score[keep] = _cluster_emd(
                rows, len(rows), tables.conf, tables.ordered, tables.n_values, tables.q,
                tables.sq, buf,
            )  # fmt: skip
        else:
            score[keep] = _rows_emd_numpy(tables, rows)
        violating += int(score[keep] > t + _TOL) - was
        merges += 1
        if merges % 64 == 0:
            progress(1.0 - violating / initial, "merging groups until t-close")
    new = np.full(n_groups, -1, dtype=np.int64)
    new[alive] = np.arange(int(alive.sum()))
    out = np.empty_like(lab)
    for kept in np.flatnonzero(alive):
        out[members[kept]] = new[kept]
    if compiled_emd and float(_group_emds(tables, out).max()) > t + _TOL:
        log.warning("compiled EMD disagreed with the numpy EMD; merging again with numpy's")
        again, more = merge_until_close(
            out, continuous, ordinal, ordinal_sizes, nominal, tables, t,
            convex=convex, progress=progress, compiled_emd=False,
        )  # fmt: skip
        return again, merges + more
    progress(1.0, "groups are t-close")
    return out, merges


def _rows_emd_numpy(tables: EMDTables, rows: np.ndarray) -> float:
    """The largest EMD over the confidential attributes of one group, in plain numpy, against
    the whole table's distribution in ``tables`` (Li et al. 2007: equal distance ½·Σ|p − q|;
    ordered distance Σ_i |P(i) − Q(i)| / (m − 1) on the cumulative distributions)."""
    worst = 0.0
    for a in range(tables.conf.shape[0]):
        m = int(tables.n_values[a])
        p = np.bincount(tables.conf[a, rows], minlength=m)[:m] / max(len(rows), 1)
        if bool(tables.ordered[a]):
            e = float(np.abs(np.cumsum(p) - tables.q[a, :m]).sum() / max(m - 1, 1))
        else:
            e = float(0.5 * np.abs(p - tables.q[a, :m]).sum())
        worst = max(worst, e)
    return worst


# --------------------------------------------------------------------------------------------
# k-first (Algorithm 2)
# --------------------------------------------------------------------------------------------


@_njit
def _generate_cluster(
    x: int,
    cont: np.ndarray,
    ords: np.ndarray,
    noms: np.ndarray,
    osq: np.ndarray,
    idx: np.ndarray,
    dist: np.ndarray,
    m: int,
    k: int,
    t: float,
    conf: np.ndarray,
    ordered: np.ndarray,
    ms: np.ndarray,
    q: np.ndarray,
    sq: np.ndarray,
    group: np.ndarray,
    crow: np.ndarray,
    ebuf: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    floor: float,
    rkey: np.ndarray,
    ukey: np.ndarray,
    avail: np.ndarray,
    seen: np.ndarray,
    stampbox: np.ndarray,
) -> int:
    """Algorithm 2's GenerateCluster around position x (m >= 2k); group[:k] gets the positions.

    Two exact short cuts end the scan of candidates when no later swap can be accepted:
    ``floor`` (:func:`smallest_emd` for k records: once there, no swap can improve the cluster),
    and, when the confidential attributes take few value combinations ("keys": ``rkey`` by row,
    ``ukey`` their counts among the remaining records, empty when there are too many), the keys
    rejected since the last swap: a candidate with the same values as a rejected one is rejected
    too, and once every key still held by an unconsidered record is rejected the scan stops.

    Returns the work done (attribute-record operations, roughly)."""
    load_mixed_point(cont, ords, noms, x, pc, po, pn)
    mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
    kk = min(m - 1, _CANDIDATES + k)
    hd = np.empty(kk, dtype=np.float64)
    hx = np.empty(kk, dtype=np.int64)
    hp = np.empty(kk, dtype=np.int64)
    cand = np.empty(kk, dtype=np.int64)
    sorted_nearest(dist, idx, m, x, kk, hd, hx, hp, cand)
    work: int = m * (cont.shape[0] + ords.shape[0] + noms.shape[0] + 1)
    group[0] = x
    crow[0] = idx[x]
    for j in range(1, k):
        group[j] = cand[j - 1]
        crow[j] = idx[cand[j - 1]]
    e = _cluster_emd(crow, k, conf, ordered, ms, q, sq, ebuf)
    i = k - 1
    use_keys = ukey.shape[0] > 0
    n_open = 0
    stamp = 0
    if use_keys and e > t + _TOL and e > floor + _TOL:
        # avail: records of each key neither in C nor considered yet.
        avail[:] = ukey
        for j in range(k):
            avail[rkey[crow[j]]] -= 1
        stampbox[0] += 1
        stamp = stampbox[0]
        for v in range(avail.shape[0]):
            if avail[v] > 0:
                n_open += 1
        work += avail.shape[0]
    while e > t + _TOL and e > floor + _TOL:
        if use_keys and n_open == 0:
            break
        if i >= kk:
            if kk == m - 1:
                break
            # More candidates, in the same (distance, row) order: the first kk are unchanged.
            kk = min(m - 1, 4 * kk)
            hd = np.empty(kk, dtype=np.float64)
            hx = np.empty(kk, dtype=np.int64)
            hp = np.empty(kk, dtype=np.int64)
            cand = np.empty(kk, dtype=np.int64)
            sorted_nearest(dist, idx, m, x, kk, hd, hx, hp, cand)
            work += m * 4
        y = cand[i]
        i += 1
        key = 0
        if use_keys:
            key = rkey[idx[y]]
            avail[key] -= 1
            if seen[key] == stamp:
                continue
        best_e = e
        best_j = -1
        for j in range(1, k):
            old = crow[j]
            crow[j] = idx[y]
            e2 = _cluster_emd(crow, k, conf, ordered, ms, q, sq, ebuf)
            crow[j] = old
            if e2 < best_e:
                best_e = e2
                best_j = j
        work += k * k * conf.shape[0] * 4
        if best_j >= 0:
            group[best_j] = y
            crow[best_j] = idx[y]
            e = best_e
            if use_keys:  # C changed: every key may help again
                stampbox[0] += 1
                stamp = stampbox[0]
                n_open = 0
                for v in range(avail.shape[0]):
                    if avail[v] > 0:
                        n_open += 1
                work += avail.shape[0]
        elif use_keys:
            seen[key] = stamp
            n_open -= 1
    return work


@_njit
def _kfirst_batch(
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
    ordered: np.ndarray,
    ms: np.ndarray,
    q: np.ndarray,
    sq: np.ndarray,
    state: np.ndarray,
    k: int,
    t: float,
    floor: float,
    rkey: np.ndarray,
    ukey: np.ndarray,
    avail: np.ndarray,
    seen: np.ndarray,
    stampbox: np.ndarray,
    convex: bool,
    budget: int,
) -> None:
    """Algorithm 2 for about ``budget`` operations. ``state`` = [m, next label, phase]: phase 0
    seeds at the record farthest from the average, phase 1 at the record farthest from the
    previous seed (``dist`` still holds the distances to it)."""
    m = state[0]
    label = state[1]
    phase = state[2]
    dc = cont.shape[0]
    do = ords.shape[0]
    dn = noms.shape[0]
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    group = np.empty(2 * k, dtype=np.int64)
    crow = np.empty(2 * k, dtype=np.int64)
    ebuf = np.empty(2 * k, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    work = 0
    while m > 0 and work < budget:
        if m < 2 * k:
            for i in range(m):
                labels[idx[i]] = label
            label += 1
            m = 0
            break
        if phase == 0:
            average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
            work += m * (dc + do + dn + 1)
        x = farthest(dist, idx, m)
        work += _generate_cluster(
            x, cont, ords, noms, osq, idx, dist, m, k, t, conf, ordered, ms, q, sq, group,
            crow, ebuf, pc, po, pn, floor, rkey, ukey, avail, seen, stampbox,
        )  # fmt: skip
        if ukey.shape[0] > 0:
            for j in range(k):
                ukey[rkey[idx[group[j]]]] -= 1
        take_group(
            group, k, label, m, -1, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
            no_where,
        )  # fmt: skip
        label += 1
        m -= k
        phase = 1 - phase
    state[0] = m
    state[1] = label
    state[2] = phase


def _value_keys(tables: EMDTables) -> tuple[np.ndarray, np.ndarray]:
    """One key per combination of confidential values (by row) and the count of each, or two
    empty arrays when there are more than ``_KEYS_MAX`` combinations."""
    space = 1
    for m in tables.n_values:
        space *= max(int(m), 1)
        if space > _KEYS_MAX:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = np.zeros(tables.conf.shape[1], dtype=np.int64)
    for a in range(tables.conf.shape[0]):
        keys = keys * max(int(tables.n_values[a]), 1) + tables.conf[a]
    return keys, np.bincount(keys, minlength=space).astype(np.int64)


# --------------------------------------------------------------------------------------------
# t-first (Algorithm 3)
# --------------------------------------------------------------------------------------------


def cluster_size_for_t(n: int, t: float, k: int) -> int:
    """k' = max(k, ceil(n / (2(n-1)t + 1))), at most n: the cluster size of t-first.

    With n distinct values, a cluster of one record from each of k' strata of n/k' consecutive
    ranks has EMD <= (n/k' - 1) / (2(n - 1)) <= t.
    """
    if n <= 1:
        return max(1, min(k, n))
    need = math.ceil(n / (2.0 * (n - 1) * t + 1.0)) if t > 0 else n
    return int(min(n, max(k, need)))


@_njit
def _tfirst_batch(
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
    spos: np.ndarray,
    n_strata: int,
    mid: int,
    quota_base: int,
    quota_extra: int,
    state: np.ndarray,
    convex: bool,
    budget: int,
) -> None:
    """Algorithm 3's cluster formation for about ``budget`` operations.

    ``spos[pos]`` is the stratum of the record at position pos (kept in step with the pool);
    cluster j takes one record from every stratum but ``mid``, and quota_base + (j < quota_extra)
    from ``mid``. ``state`` = [m, next label, phase].
    """
    m = state[0]
    label = state[1]
    phase = state[2]
    dc = cont.shape[0]
    do = ords.shape[0]
    dn = noms.shape[0]
    width = dc + do + dn + 2
    pc = np.empty(dc, dtype=np.float64)
    po = np.empty(do, dtype=np.int64)
    pn = np.empty(dn, dtype=np.int64)
    buf = np.empty(max(ocount.shape[1], 1), dtype=np.int64)
    best = np.empty(n_strata, dtype=np.int64)
    bestd = np.empty(n_strata, dtype=np.float64)
    bestx = np.empty(n_strata, dtype=np.int64)
    qmax = quota_base + 1
    md = np.empty(qmax, dtype=np.float64)
    mx = np.empty(qmax, dtype=np.int64)
    mp = np.empty(qmax, dtype=np.int64)
    group = np.empty(n_strata + qmax, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    work = 0
    while m > 0 and work < budget:
        work += 2 * m * width
        if phase == 0:
            average_record(total, m, osizes, ocount, ncount, convex, buf, pc, po, pn)
            mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
        x = farthest(dist, idx, m)
        load_mixed_point(cont, ords, noms, x, pc, po, pn)
        mixed_distances(cont, ords, noms, osq, m, pc, po, pn, dist)
        quota = quota_base + (1 if label < quota_extra else 0)
        for s in range(n_strata):
            best[s] = -1
            bestd[s] = np.inf
            bestx[s] = 0
        size = 0  # the middle stratum's nearest records, sorted ascending by (distance, row)
        for pos in range(m):
            s = spos[pos]
            d = dist[pos]
            r = idx[pos]
            if pos == x:
                d = -1.0  # x first in its own stratum, whatever the ties at distance 0
            if s != mid:
                if d < bestd[s] or (d == bestd[s] and r < bestx[s]):
                    best[s] = pos
                    bestd[s] = d
                    bestx[s] = r
                continue
            if size == quota and (d > md[size - 1] or (d == md[size - 1] and r > mx[size - 1])):
                continue
            j = size if size < quota else quota - 1
            while j > 0 and (d < md[j - 1] or (d == md[j - 1] and r < mx[j - 1])):
                md[j] = md[j - 1]
                mx[j] = mx[j - 1]
                mp[j] = mp[j - 1]
                j -= 1
            md[j] = d
            mx[j] = r
            mp[j] = pos
            if size < quota:
                size += 1
        g = 0
        for s in range(n_strata):
            if s != mid:
                group[g] = best[s]
                g += 1
        for j in range(size):
            group[g] = mp[j]
            g += 1
        # spos follows the records as take_group swap-removes them (same order of moves).
        desc = np.sort(group[:g])[::-1]
        last = m - 1
        for j in range(g):
            if desc[j] != last:
                spos[desc[j]] = spos[last]
            last -= 1
        take_group(
            group, g, label, m, -1, cont, ords, noms, idx, total, ocount, ncount, labels, dist,
            no_where,
        )  # fmt: skip
        label += 1
        m -= g
        phase = 1 - phase
    state[0] = m
    state[1] = label
    state[2] = phase


def _strata(codes: np.ndarray, n_strata: int) -> tuple[np.ndarray, int, int, int, int]:
    """Stratum of every row (sorted by code, then row), the middle stratum, its quotas, and b."""
    n = len(codes)
    b = n // n_strata
    r = n - b * n_strata
    mid = (n_strata - 1) // 2
    sizes = np.full(n_strata, b, dtype=np.int64)
    sizes[mid] += r
    order = np.lexsort((np.arange(n), codes))
    stratum = np.empty(n, dtype=np.int64)
    stratum[order] = np.repeat(np.arange(n_strata, dtype=np.int64), sizes)
    # b clusters take b + r records of the middle stratum: q each, one more for the first rr.
    return stratum, mid, (b + r) // b, (b + r) % b, b


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def tcloseness(
    continuous: npt.ArrayLike | None,
    ordinal: npt.ArrayLike | None,
    ordinal_sizes: npt.ArrayLike | None,
    nominal: npt.ArrayLike | None,
    attrs: tuple[ConfidentialAttribute, ...] | list[ConfidentialAttribute],
    k: int,
    t: float,
    *,
    variant: str = "t-first",
    ordinal_average: str = "median",
    progress: ProgressFn = no_progress,
) -> tuple[np.ndarray, dict[str, object]]:
    """k-anonymous t-close partition (``002`` §4.16; Soria-Comas et al. 2015).

    Parameters
    ----------
    continuous, ordinal, ordinal_sizes, nominal
        The quasi-identifiers as for :func:`microgui.core.methods.mdav.mdav_generic`.
    attrs
        The confidential attributes (:func:`microgui.core.methods.confidential.prepare_confidential`,
        or :class:`ConfidentialAttribute` values built by hand).
    k
        Minimum group size, 2 <= k <= n.
    t
        t-closeness level, 0 <= t <= 1.
    variant
        ``"merge"``, ``"k-first"`` or ``"t-first"`` (module docstring).
    ordinal_average
        ``"median"`` or ``"convex-median"`` for average records.
    progress
        Progress function; may raise :class:`~microgui.core.progress.RunCancelled`.

    Returns
    -------
    tuple
        (int64 group label per record, numbered in the order formed; a dict with the number of
        ``merges`` and, for t-first, the ``cluster_size`` k'). Every group has at least k records
        and an EMD <= t (up to 1e-12) for every confidential attribute.
    """
    n = next(
        (np.asarray(a).shape[0] for a in (continuous, ordinal, nominal) if a is not None), None
    )
    if n is None:
        raise ValueError("tcloseness needs at least one block of quasi-identifiers")
    if variant not in VARIANTS:
        raise InvalidParameter(f"variant={variant!r} must be one of {', '.join(VARIANTS)}")
    if not attrs:
        raise ValueError("tcloseness needs at least one confidential attribute")
    k = check_k(k, n)
    if not 0.0 <= t <= 1.0:
        raise InvalidParameter(f"t={t} must be between 0 and 1")
    cont, ords, sizes, noms = qi_arrays(continuous, ordinal, ordinal_sizes, nominal, n)
    convex = ordinal_average == "convex-median"
    tables = emd_tables(attrs)
    info: dict[str, object] = {}
    forming = sub_progress(progress, 0.0, 0.8)
    if variant == "merge":
        labels = mdav_generic(
            cont, ords, sizes, noms, k, ordinal_average=ordinal_average, progress=forming
        )
    else:
        pool = make_record_pool(cont, ords, sizes, noms, convex=convex)
        state = np.array([n, 0, 0], dtype=np.int64)
        status = "forming clusters (k-anonymity first)"
        floor = smallest_emd(tables, k) if variant == "k-first" else 0.0
        rkey, ukey = _value_keys(tables)
        avail = np.zeros(len(ukey), dtype=np.int64)
        seen = np.zeros(len(ukey), dtype=np.int64)
        stampbox = np.zeros(1, dtype=np.int64)
        if variant == "t-first":
            size = cluster_size_for_t(n, t, k)
            stratum, mid, qbase, qextra, _ = _strata(attrs[0].codes, size)
            spos = stratum.copy()  # by position in the pool, which starts in row order
            info["cluster_size"] = size
            status = f"forming clusters of {size} from {size} strata (t-closeness first)"
        kernel = _kfirst_batch if variant == "k-first" else _tfirst_batch
        if first_call_compiles(kernel, _cluster_emd):
            # Not compiled in this process: numba loads its on-disk cache, or compiles on the
            # very first run (tens of seconds, during which a cancel cannot take effect).
            forming(0.0, f"compiling the {variant} kernel (first run only)")
        forming(0.0, status)
        while state[0] > 0:
            if variant == "k-first":
                _kfirst_batch(
                    pool.cont, pool.ords, pool.noms, pool.sizes, pool.osq, pool.ocount,
                    pool.ncount, pool.idx, pool.total, pool.labels, pool.dist, tables.conf,
                    tables.ordered, tables.n_values, tables.q, tables.sq, state, k, float(t),
                    floor, rkey, ukey, avail, seen, stampbox, convex, _BATCH_WORK,
                )  # fmt: skip
            else:
                _tfirst_batch(
                    pool.cont, pool.ords, pool.noms, pool.sizes, pool.osq, pool.ocount,
                    pool.ncount, pool.idx, pool.total, pool.labels, pool.dist, spos, size,
                    mid, qbase, qextra, state, convex, _BATCH_WORK,
                )  # fmt: skip
            left = int(state[0]) / n
            forming(1.0 - left * left, status)
        labels = pool.labels
    labels, merges = merge_until_close(
        labels, cont, ords, sizes, noms, tables, float(t), convex=convex,
        progress=sub_progress(progress, 0.8, 1.0),
    )  # fmt: skip
    info["merges"] = merges
    return labels, info


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernels of every variant; returns the seconds."""
    import time

    from microgui.core.metrics.privacy import nominal_codes, rank_codes

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, 12)
    ranks, m = rank_codes(values)
    codes, mv = nominal_codes(values)
    attrs = [
        ConfidentialAttribute("a", True, ranks, m, "continuous"),
        ConfidentialAttribute("b", False, codes, mv, "nominal"),
    ]
    for variant in VARIANTS:
        tcloseness(
            rng.normal(size=(12, 2)),
            rng.integers(0, 3, (12, 1)),
            [3],
            rng.integers(0, 2, (12, 1)),
            attrs,
            2,
            0.05,
            variant=variant,
        )
    return time.perf_counter() - started


# --------------------------------------------------------------------------------------------
# registered method
# --------------------------------------------------------------------------------------------


def _run(inp: MethodInput) -> MethodOutput:
    attrs = prepare_confidential(inp.dataset, "t-closeness")
    t = float(inp.params["t"])
    variant = str(inp.params["variant"])
    qi = inp.qi
    labels, info = tcloseness(
        qi.continuous,
        qi.ordinal,
        qi.ordinal_sizes,
        qi.nominal,
        attrs,
        inp.k,
        t,
        variant=variant,
        ordinal_average=str(inp.params.get("ordinal_average", "median")),
        progress=inp.progress,
    )
    by_attr = {
        a.name: float(emd_by_group(a.codes, labels, a.n_values, ordered=a.ordered).max())
        for a in attrs
    }
    extra: dict[str, object] = {
        "t": t,
        "variant": variant,
        "max_emd": max(by_attr.values()),
        "max_emd_by_attribute": by_attr,
        "merges": info["merges"],
        "confidential_kinds": {a.name: a.kind for a in attrs},
    }
    if "cluster_size" in info:
        extra["cluster_size"] = info["cluster_size"]
    return MethodOutput(labels=labels, extra=extra)


T_CLOSENESS = register(
    Method(
        name="t-closeness",
        title="t-closeness (microaggregation)",
        summary="Groups of at least k records whose confidential distributions are within EMD t "
        "of the whole table's: merge, k-first or t-first (Soria-Comas et al. 2015; 002 §4.16)",
        description=(
            "k-anonymous t-closeness through microaggregation (Soria-Comas, Domingo-Ferrer, "
            "Sánchez & Martínez 2015, surveyed in 002 §4.16): every group's distribution of each "
            "confidential attribute is within Earth Mover's Distance t of the whole table's "
            "(ordered distance for numbers and ordinal values, equal distance for nominal ones). "
            "merge: MDAV groups, then the group farthest from t-closeness is merged with its "
            "nearest group until all are t-close. k-first: groups of k built around MDAV seeds, "
            "swapping in nearby records that bring the group's distribution closer. t-first: "
            "records sorted by the confidential attribute are cut into k' strata, k' computed "
            "from t, and each group takes one record of every stratum, which guarantees t for "
            "distinct values. Needs columns tagged confidential."
        ),
        citation="002_f464918b99c38812.txt §4.16; Soria-Comas, Domingo-Ferrer, Sánchez & Martínez, "
        "IEEE TKDE 27(11), 2015",
        kinds=frozenset({AttributeKind.CONTINUOUS, AttributeKind.ORDINAL, AttributeKind.NOMINAL}),
        run=_run,
        params=(
            ParamSpec(
                "variant",
                str,
                "t-first",
                "merge: MDAV then merge groups; k-first: groups of k refined by swaps; "
                "t-first: cluster size from t, one record per confidential stratum.",
                choices=VARIANTS,
            ),
            ParamSpec(
                "t",
                float,
                0.2,
                "Largest Earth Mover's Distance allowed between a group's confidential "
                "distribution and the whole table's (0..1; smaller is stricter).",
                minimum=0.0,
                maximum=1.0,
            ),
        ),
        complexity="t-first (default): O(n²/k') distance evaluations, k' = max(k, n/(2(n-1)t+1)); "
        "k-first: O(n²/k) distance evaluations plus O(k²) EMD evaluations per record considered "
        "for a swap (up to all remaining records per cluster when t is out of reach of k records "
        "and the confidential values are many); merge: MDAV's O(n²/k) plus O(g) per merge for g "
        "groups; every variant ends with merges as needed",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,
        needs_confidential=True,
        release_check=ReleaseCheck("t-closeness", "t"),
    )
)
