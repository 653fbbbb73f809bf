"""Compiled kernels of the partition refinement (:mod:`microgui.core.methods.refine`).

A partition is held as group statistics that make every SSE change exact and O(d):

- ``lab[i]``: the group of record i; ``cnt[g]``: its size; ``sums[g]``: the sum of its records;
- ``mem[g, 0:cnt[g]]``: its records (any order), ``pos[i]``: where record i stands in that row.

The SSE of a group G is Σ_{x∈G} ‖x − μ_G‖². Moving a record x from A to B changes it by

    Δ = n_B/(n_B + 1)·‖x − μ_B‖² − n_A/(n_A − 1)·‖x − μ_A‖²

(the first term 0 when B is empty, the second 0 when x is A's last record), and swapping x ∈ A
with y ∈ B, with δ = y − x, by

    Δ = 2·δ·(μ_B − μ_A) − ‖δ‖²·(1/n_A + 1/n_B),

both standard (Späth 1980, "Cluster analysis algorithms", exchange method; the swap form follows
from writing each group's SSE as Σ‖x‖² − ‖Σx‖²/n). Every change of the partition goes through
:func:`move`, which can log it so that a tried change can be undone exactly.
"""

from __future__ import annotations

import numpy as np

from microgui.core.methods.jit_cache import njit


@njit
def build_state(
    x: np.ndarray, lab: np.ndarray, n_slots: int, cap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """cnt, sums, mem, pos of the partition ``lab`` (groups 0..g-1) with room for ``n_slots``
    groups of up to ``cap`` records each."""
    n, d = x.shape
    cnt = np.zeros(n_slots, dtype=np.int64)
    sums = np.zeros((n_slots, d))
    mem = np.full((n_slots, cap), -1, dtype=np.int64)
    pos = np.zeros(n, dtype=np.int64)
    for i in range(n):
        g = lab[i]
        mem[g, cnt[g]] = i
        pos[i] = cnt[g]
        cnt[g] += 1
        for c in range(d):
            sums[g, c] += x[i, c]
    return cnt, sums, mem, pos


@njit
def group_sse(x: np.ndarray, members: np.ndarray, m: int) -> float:
    """The SSE of the ``m`` records ``members[:m]`` about their mean (two passes, exact)."""
    d = x.shape[1]
    if m <= 1:
        return 0.0
    mu = np.zeros(d)
    for t in range(m):
        for c in range(d):
            mu[c] += x[members[t], c]
    for c in range(d):
        mu[c] /= m
    s = 0.0
    for t in range(m):
        for c in range(d):
            v = x[members[t], c] - mu[c]
            s += v * v
    return s


@njit
def partition_sse(x: np.ndarray, lab: np.ndarray, n_groups: int) -> float:
    """Σ over groups of Σ ‖x − μ‖² (two passes: means first, then squared deviations)."""
    n, d = x.shape
    sums = np.zeros((n_groups, d))
    cnt = np.zeros(n_groups, dtype=np.int64)
    for i in range(n):
        g = lab[i]
        cnt[g] += 1
        for c in range(d):
            sums[g, c] += x[i, c]
    s = 0.0
    for i in range(n):
        g = lab[i]
        for c in range(d):
            v = x[i, c] - sums[g, c] / cnt[g]
            s += v * v
    return s


@njit
def move_delta(x: np.ndarray, i: int, a: int, b: int, cnt: np.ndarray, sums: np.ndarray) -> float:
    """The exact SSE change of moving record i from group a to group b."""
    d = x.shape[1]
    na = cnt[a]
    nb = cnt[b]
    da = 0.0
    db = 0.0
    for c in range(d):
        xi = x[i, c]
        if na > 1:
            u = xi - sums[a, c] / na
            da += u * u
        if nb > 0:
            w = xi - sums[b, c] / nb
            db += w * w
    out = 0.0
    if nb > 0:
        out += nb / (nb + 1.0) * db
    if na > 1:
        out -= na / (na - 1.0) * da
    return out


@njit
def swap_delta(
    x: np.ndarray, i: int, j: int, a: int, b: int, cnt: np.ndarray, sums: np.ndarray
) -> float:
    """The exact SSE change of swapping record i (in a) with record j (in b)."""
    d = x.shape[1]
    na = cnt[a]
    nb = cnt[b]
    lin = 0.0
    sq = 0.0
    for c in range(d):
        delta = x[j, c] - x[i, c]
        lin += delta * (sums[b, c] / nb - sums[a, c] / na)
        sq += delta * delta
    return float(2.0 * lin - sq * (1.0 / na + 1.0 / nb))


@njit
def move(
    x: np.ndarray,
    i: int,
    b: int,
    lab: np.ndarray,
    cnt: np.ndarray,
    sums: np.ndarray,
    mem: np.ndarray,
    pos: np.ndarray,
    log: np.ndarray,
    n_log: int,
) -> int:
    """Move record i to group b (statistics kept exact); logs (i, old group) when ``log`` has
    room and returns the new log length (-1 when the log overflowed)."""
    d = x.shape[1]
    a = lab[i]
    p = pos[i]
    last = mem[a, cnt[a] - 1]
    mem[a, p] = last
    pos[last] = p
    mem[a, cnt[a] - 1] = -1
    cnt[a] -= 1
    mem[b, cnt[b]] = i
    pos[i] = cnt[b]
    cnt[b] += 1
    lab[i] = b
    for c in range(d):
        v = x[i, c]
        sums[a, c] -= v
        sums[b, c] += v
    if cnt[a] == 0:
        for c in range(d):
            sums[a, c] = 0.0  # an empty group's sum is exactly zero, not the rounding left over
    if n_log < 0:
        return n_log
    if n_log >= log.shape[0]:
        return -1
    log[n_log, 0] = i
    log[n_log, 1] = a
    return n_log + 1


@njit
def undo(
    x: np.ndarray,
    lab: np.ndarray,
    cnt: np.ndarray,
    sums: np.ndarray,
    mem: np.ndarray,
    pos: np.ndarray,
    log: np.ndarray,
    n_log: int,
) -> None:
    """Undo the logged moves, newest first."""
    dummy = np.empty((0, 2), dtype=np.int64)
    for t in range(n_log - 1, -1, -1):
        move(x, log[t, 0], log[t, 1], lab, cnt, sums, mem, pos, dummy, -1)


@njit
def add_distinct(out: np.ndarray, m: int, g: int) -> int:
    """Append ``g`` to ``out[:m]`` unless it is there already (or ``out`` is full); the new
    length."""
    for u in range(m):
        if out[u] == g:
            return m
    if m < out.shape[0]:
        out[m] = g
        return m + 1
    return m


@njit
def centroid_sq_distance(x: np.ndarray, i: int, g: int, cnt: np.ndarray, sums: np.ndarray) -> float:
    """‖x_i − μ_g‖², μ_g the centroid of the non-empty group g."""
    s = 0.0
    for c in range(x.shape[1]):
        v = x[i, c] - sums[g, c] / cnt[g]
        s += v * v
    return s


@njit
def candidate_groups(i: int, lab: np.ndarray, nbr: np.ndarray, own: int, out: np.ndarray) -> int:
    """The distinct groups (other than ``own``) of record i's listed neighbours, into ``out``."""
    m = 0
    for t in range(nbr.shape[1]):
        j = nbr[i, t]
        if j < 0:
            break
        g = lab[j]
        if g != own:
            m = add_distinct(out, m, g)
    return m


@njit
def local_search(
    x: np.ndarray,
    lab: np.ndarray,
    cnt: np.ndarray,
    sums: np.ndarray,
    mem: np.ndarray,
    pos: np.ndarray,
    nbr: np.ndarray,
    kmin: int,
    kmax: int,
    queue: np.ndarray,
    in_queue: np.ndarray,
    q_head: int,
    q_len: int,
    budget: int,
    tol: float,
    log: np.ndarray,
    n_log: int,
) -> tuple[int, int, float, int]:
    """Best-improvement moves and swaps, record by record, until no record can improve.

    ``queue`` is a circular work list of records (length n; ``in_queue`` marks its members):
    for the record taken from it, every group of its listed neighbours is tried - moving it there
    (sizes stay in kmin..kmax) and swapping it with each of that group's records - and the best
    change that lowers the SSE by more than ``tol`` is made. The records of both groups it touched
    then go back on the list. Stops when the list is empty (a local optimum for these
    neighbourhoods) or after ``budget`` evaluated changes; returns (q_head, q_len, SSE change,
    new log length) so that the caller can report progress and call again.
    """
    n = x.shape[0]
    buf = np.empty(nbr.shape[1], dtype=np.int64)
    total = 0.0
    work = 0
    while q_len > 0 and work < budget:
        if n_log >= 0 and n_log + 4 > log.shape[0]:
            break  # the caller's log is full: it decides (keep or undo) before going on
        i = queue[q_head]
        q_head = (q_head + 1) % n
        q_len -= 1
        in_queue[i] = False
        a = lab[i]
        m = candidate_groups(i, lab, nbr, a, buf)
        best = -tol
        best_b = -1
        best_j = -1
        for u in range(m):
            b = buf[u]
            if cnt[a] > kmin and cnt[b] < kmax:
                dlt = move_delta(x, i, a, b, cnt, sums)
                work += 1
                if dlt < best:
                    best = dlt
                    best_b = b
                    best_j = -1
            for t in range(cnt[b]):
                j = mem[b, t]
                dlt = swap_delta(x, i, j, a, b, cnt, sums)
                work += 1
                if dlt < best:
                    best = dlt
                    best_b = b
                    best_j = j
        if best_b < 0:
            continue
        n_log = move(x, i, best_b, lab, cnt, sums, mem, pos, log, n_log)
        if best_j >= 0:
            n_log = move(x, best_j, a, lab, cnt, sums, mem, pos, log, n_log)
        total += best
        for g in (a, best_b):
            for t in range(cnt[g]):
                r = mem[g, t]
                if not in_queue[r]:
                    in_queue[r] = True
                    queue[(q_head + q_len) % n] = r
                    q_len += 1
    return q_head, q_len, total, n_log


@njit
def push_group(
    g: int, cnt: np.ndarray, mem: np.ndarray, queue: np.ndarray, in_queue: np.ndarray,
    q_head: int, q_len: int,
) -> int:  # fmt: skip
    """Put the records of group g on the work list; returns the new list length."""
    n = queue.shape[0]
    for t in range(cnt[g]):
        r = mem[g, t]
        if not in_queue[r]:
            in_queue[r] = True
            queue[(q_head + q_len) % n] = r
            q_len += 1
    return q_len


@njit
def nearest_group(
    x: np.ndarray, i: int, lab: np.ndarray, cnt: np.ndarray, sums: np.ndarray, nbr: np.ndarray,
    exclude: int, cap: int, buf: np.ndarray,
) -> int:  # fmt: skip
    """The group (not ``exclude``, with fewer than ``cap`` records) whose centroid is nearest to
    record i, among the groups of its listed neighbours; when none of them qualifies, among all
    groups (a scan). -1 when no group qualifies."""
    m = candidate_groups(i, lab, nbr, exclude, buf)
    best = np.inf
    best_g = -1
    for u in range(m):
        g = buf[u]
        if 0 < cnt[g] < cap:
            dist = centroid_sq_distance(x, i, g, cnt, sums)
            if dist < best:
                best, best_g = dist, g
    if best_g >= 0:
        return best_g
    for g in range(cnt.shape[0]):  # none of the neighbours' groups qualifies: scan them all
        if g != exclude and 0 < cnt[g] < cap:
            dist = centroid_sq_distance(x, i, g, cnt, sums)
            if dist < best:
                best, best_g = dist, g
    return best_g


@njit
def free_slot(cnt: np.ndarray, hint: int) -> int:
    """An empty group slot (searched from ``hint`` on, then from 0); -1 when there is none."""
    g_all = cnt.shape[0]
    for t in range(g_all):
        g = (hint + t) % g_all
        if cnt[g] == 0:
            return int(g)
    return -1


@njit
def split_large(
    x: np.ndarray,
    g: int,
    k: int,
    lab: np.ndarray,
    cnt: np.ndarray,
    sums: np.ndarray,
    mem: np.ndarray,
    pos: np.ndarray,
    log: np.ndarray,
    n_log: int,
) -> tuple[float, int]:
    """Split group g while it has 2k or more records (IGD's SplitLargeGroups, Khomnotai et al.
    2018 §4, Figure 3): the record r farthest from g's centroid starts a new group, which then
    takes, k - 1 times, the record of g nearest to its own centroid. Returns (SSE change, log
    length). Splitting never raises the SSE."""
    total = 0.0
    hint = g
    while cnt[g] >= 2 * k:
        far = -1.0
        r = -1
        for t in range(cnt[g]):
            dist = centroid_sq_distance(x, mem[g, t], g, cnt, sums)
            if dist > far:
                far, r = dist, mem[g, t]
        h = free_slot(cnt, hint)
        hint = h + 1
        total += move_delta(x, r, g, h, cnt, sums)
        n_log = move(x, r, h, lab, cnt, sums, mem, pos, log, n_log)
        for _ in range(k - 1):
            near = np.inf
            r = -1
            for t in range(cnt[g]):
                dist = centroid_sq_distance(x, mem[g, t], h, cnt, sums)
                if dist < near:
                    near, r = dist, mem[g, t]
            total += move_delta(x, r, g, h, cnt, sums)
            n_log = move(x, r, h, lab, cnt, sums, mem, pos, log, n_log)
    return total, n_log


@njit
def split_all_large(
    x: np.ndarray, k: int, lab: np.ndarray, cnt: np.ndarray, sums: np.ndarray, mem: np.ndarray,
    pos: np.ndarray, touched: np.ndarray, n_touched: int, log: np.ndarray, n_log: int,
) -> tuple[float, int]:  # fmt: skip
    """:func:`split_large` on the groups listed in ``touched[:n_touched]``."""
    total = 0.0
    for t in range(n_touched):
        g = touched[t]
        if cnt[g] >= 2 * k:
            dlt, n_log = split_large(x, g, k, lab, cnt, sums, mem, pos, log, n_log)
            total += dlt
    return total, n_log


@njit
def igd_decompose(
    x: np.ndarray, p: int, k: int, cap: int, lab: np.ndarray, cnt: np.ndarray,
    sums: np.ndarray, mem: np.ndarray, pos: np.ndarray, nbr: np.ndarray, log: np.ndarray,
    tol: float, touched: np.ndarray, buf: np.ndarray,
) -> float:  # fmt: skip
    """IGD's Decompose on group p (Khomnotai et al. 2018 §4, Figure 2): each record of p joins
    its nearest other group (by centroid), groups of 2k or more are split; the change is kept
    when it lowers the SSE by more than ``tol`` and undone otherwise. Returns the SSE change
    made (0 when undone)."""
    n_log = 0
    total = 0.0
    n_touched = 0
    members = mem[p, : cnt[p]].copy()
    for t in range(members.shape[0]):
        i = members[t]
        b = nearest_group(x, i, lab, cnt, sums, nbr, p, cap, buf)
        if b < 0:
            undo(x, lab, cnt, sums, mem, pos, log, n_log)
            return 0.0
        total += move_delta(x, i, p, b, cnt, sums)
        n_log = move(x, i, b, lab, cnt, sums, mem, pos, log, n_log)
        if n_log < 0:
            return float(total)  # the log overflowed (it cannot with its size): keep what was done
        n_touched = add_distinct(touched, n_touched, b)
    dlt, n_log = split_all_large(x, k, lab, cnt, sums, mem, pos, touched, n_touched, log, n_log)
    total += dlt
    if total < -tol:
        return float(total)
    undo(x, lab, cnt, sums, mem, pos, log, n_log)
    return 0.0


@njit
def igd_shrink(
    x: np.ndarray, p: int, k: int, cap: int, lab: np.ndarray, cnt: np.ndarray,
    sums: np.ndarray, mem: np.ndarray, pos: np.ndarray, nbr: np.ndarray, log: np.ndarray,
    tol: float, touched: np.ndarray, buf: np.ndarray,
) -> float:  # fmt: skip
    """IGD's Shrink on group p (Khomnotai et al. 2018 §4, Figure 4): while p has more than k
    records, move out the record whose move to another group lowers the SSE most (the groups of
    its listed neighbours are the candidates), as long as one does; then split the groups that
    reached 2k records. Returns the SSE change (never positive)."""
    total = 0.0
    n_touched = 0
    n_log = -1  # not logged: every step lowers the SSE
    while cnt[p] > k:
        best = -tol
        best_i = -1
        best_b = -1
        for t in range(cnt[p]):
            i = mem[p, t]
            m = candidate_groups(i, lab, nbr, p, buf)
            for u in range(m):
                b = buf[u]
                if cnt[b] >= cap:
                    continue
                dlt = move_delta(x, i, p, b, cnt, sums)
                if dlt < best:
                    best = dlt
                    best_i = i
                    best_b = b
        if best_i < 0:
            break
        total += best
        move(x, best_i, best_b, lab, cnt, sums, mem, pos, log, n_log)
        n_touched = add_distinct(touched, n_touched, best_b)
    dlt, _ = split_all_large(x, k, lab, cnt, sums, mem, pos, touched, n_touched, log, n_log)
    return float(total + dlt)


@njit
def igd_pass(
    x: np.ndarray, k: int, cap: int, lab: np.ndarray, cnt: np.ndarray, sums: np.ndarray,
    mem: np.ndarray, pos: np.ndarray, nbr: np.ndarray, log: np.ndarray, tol: float,
    order: np.ndarray, lo: int, hi: int, decompose: bool,
) -> float:  # fmt: skip
    """Decompose (or Shrink) every group ``order[lo:hi]`` that is not empty; the SSE change."""
    touched = np.empty(4 * k + 2, dtype=np.int64)
    buf = np.empty(nbr.shape[1], dtype=np.int64)
    total = 0.0
    for t in range(lo, hi):
        p = order[t]
        if cnt[p] == 0:
            continue
        if decompose:
            total += igd_decompose(
                x, p, k, cap, lab, cnt, sums, mem, pos, nbr, log, tol, touched, buf
            )
        elif cnt[p] > k:
            total += igd_shrink(x, p, k, cap, lab, cnt, sums, mem, pos, nbr, log, tol, touched, buf)
    return total


@njit
def resplit_pair(
    x: np.ndarray, a: int, b: int, kmin: int, kmax: int, lab: np.ndarray, cnt: np.ndarray,
    sums: np.ndarray, mem: np.ndarray, pos: np.ndarray, tol: float, ws: np.ndarray,
    log: np.ndarray, n_log: int,
) -> tuple[float, int]:  # fmt: skip
    """The best re-partition of groups a and b together into two groups of kmin..kmax records
    (or one, when they fit), found by enumerating every split (2^(m-1) subsets of the m records,
    sums built incrementally); applied when it lowers the SSE by more than ``tol``. ``ws`` is
    workspace of at least 2^(m-1) × d. Returns the SSE change (0 when kept as is) and the new log
    length (moves logged as by :func:`move`)."""
    d = x.shape[1]
    na = cnt[a]
    nb = cnt[b]
    m = na + nb
    rec = np.empty(m, dtype=np.int64)
    for t in range(na):
        rec[t] = mem[a, t]
    for t in range(nb):
        rec[na + t] = mem[b, t]
    # current SSE of the two groups
    q_all = 0.0
    tot = np.zeros(d)
    for t in range(m):
        for c in range(d):
            v = x[rec[t], c]
            q_all += v * v
            tot[c] += v
    cur = 0.0
    for c in range(d):
        cur -= sums[a, c] * sums[a, c] / na + sums[b, c] * sums[b, c] / nb
    cur += q_all
    best = cur - tol
    best_mask = -1
    if m <= kmax:
        s1 = 0.0
        for c in range(d):
            s1 += tot[c] * tot[c]
        one = q_all - s1 / m
        if one < best:
            best = one
            best_mask = (1 << m) - 1
    # subsets T of rec[1:], with rec[0] always in T: mask bit t = rec[t+1]
    half = 1 << (m - 1)
    lo_size = max(kmin, m - kmax)
    hi_size = min(kmax, m - kmin)
    if lo_size <= hi_size:
        for c in range(d):
            ws[0, c] = x[rec[0], c]
        size = np.zeros(half, dtype=np.int64)
        size[0] = 1
        for mask in range(1, half):
            low = mask & (-mask)
            bit = 0
            while (1 << bit) != low:
                bit += 1
            prev = mask ^ low
            size[mask] = size[prev] + 1
            for c in range(d):
                ws[mask, c] = ws[prev, c] + x[rec[bit + 1], c]
            st = size[mask]
            if st < lo_size or st > hi_size:
                continue
            s_in = 0.0
            s_out = 0.0
            for c in range(d):
                u = ws[mask, c]
                w = tot[c] - u
                s_in += u * u
                s_out += w * w
            val = q_all - s_in / st - s_out / (m - st)
            if val < best:
                best = val
                best_mask = mask
    if best_mask < 0:
        return 0.0, n_log
    if best_mask == (1 << m) - 1 and m <= kmax:
        for t in range(nb):
            n_log = move(x, rec[na + t], a, lab, cnt, sums, mem, pos, log, n_log)
        return best - cur, n_log
    # rec[0] and the records of the mask go to a, the others to b
    for t in range(1, m):
        in_t = (best_mask >> (t - 1)) & 1
        r = rec[t]
        target = a if in_t else b
        if lab[r] != target:
            n_log = move(x, r, target, lab, cnt, sums, mem, pos, log, n_log)
    return best - cur, n_log


@njit
def pairs_around(
    x: np.ndarray, groups: np.ndarray, n_groups: int, kmin: int, kmax: int, limit: int,
    lab: np.ndarray, cnt: np.ndarray, sums: np.ndarray, mem: np.ndarray, pos: np.ndarray,
    nbr: np.ndarray, width: int, tol: float, ws: np.ndarray, log: np.ndarray, n_log: int,
    queue: np.ndarray, in_queue: np.ndarray, q_head: int, q_len: int,
) -> tuple[float, int, int]:  # fmt: skip
    """:func:`resplit_pair` of each group of ``groups[:n_groups]`` with every group of its
    records' ``width`` nearest listed neighbours (two groups of at most ``limit`` records
    together); the records of re-split groups go on the work list. Returns (SSE change, log
    length, work-list length)."""
    buf = np.empty(nbr.shape[1] * (2 * kmax + 2), dtype=np.int64)
    total = 0.0
    for t in range(n_groups):
        a = groups[t]
        if cnt[a] == 0:
            continue
        # the distinct other groups of a's records' neighbours
        m = 0
        for u in range(cnt[a]):
            i = mem[a, u]
            for v in range(min(width, nbr.shape[1])):
                j = nbr[i, v]
                if j < 0:
                    break
                if lab[j] != a:
                    m = add_distinct(buf, m, lab[j])
        for w in range(m):
            b = buf[w]
            if cnt[a] == 0 or cnt[b] == 0 or cnt[a] + cnt[b] > limit:
                continue
            if n_log >= 0 and n_log + 2 * limit + 2 > log.shape[0]:
                return total, n_log, q_len
            dlt, n_log = resplit_pair(
                x, a, b, kmin, kmax, lab, cnt, sums, mem, pos, tol, ws, log, n_log
            )
            if dlt < 0.0:
                total += dlt
                q_len = push_group(a, cnt, mem, queue, in_queue, q_head, q_len)
                q_len = push_group(b, cnt, mem, queue, in_queue, q_head, q_len)
    return total, n_log, q_len


@njit
def perturb_rounds(
    x: np.ndarray, k: int, kmax: int, limit: int, lab: np.ndarray, cnt: np.ndarray,
    sums: np.ndarray, mem: np.ndarray, pos: np.ndarray, nbr: np.ndarray, queue: np.ndarray,
    in_queue: np.ndarray, width: int, tol: float, ws: np.ndarray, log: np.ndarray,
    seeds: np.ndarray, sizes: np.ndarray, rand: np.ndarray, threshold: float,
) -> tuple[float, int]:  # fmt: skip
    """Iterated local search rounds (see ``deep`` in :mod:`microgui.core.methods.refine`).

    Round r dissolves group ``seeds[r]`` (skipped when empty) and its ``sizes[r] - 1`` nearest
    groups (by centroid, among the groups of its records' listed neighbours), rebuilds their
    records by a randomized MDAV (a random remaining record and its nearest remaining records
    form a group of k, while 2k or more remain; the rest is the last group), then runs local
    search and pair re-splitting from those records. The round is kept when the SSE fell by more
    than ``tol``, or rose by less than ``threshold`` (threshold accepting; 0: only improvements),
    and undone exactly otherwise. ``rand`` supplies the random numbers (uniform in
    [0, 1), one per group built). Returns (SSE change, rounds kept)."""
    n, d = x.shape
    buf = np.empty(nbr.shape[1], dtype=np.int64)
    region = np.empty(64, dtype=np.int64)
    rec = np.empty(64 * (2 * kmax + 2), dtype=np.int64)
    dist = np.empty(rec.shape[0])
    slots = np.empty(rec.shape[0] // k + 2, dtype=np.int64)
    total = 0.0
    kept = 0
    r_idx = 0
    for r in range(seeds.shape[0]):
        g0 = seeds[r]
        if cnt[g0] == 0:
            continue
        # the region: g0 and its nearest groups by centroid
        n_reg = 1
        region[0] = g0
        want = min(sizes[r], region.shape[0])
        while n_reg < want:
            best = np.inf
            best_g = -1
            for u in range(cnt[g0]):
                i = mem[g0, u]
                m = candidate_groups(i, lab, nbr, g0, buf)
                for w in range(m):
                    g = buf[w]
                    taken = False
                    for v in range(n_reg):
                        if region[v] == g:
                            taken = True
                            break
                    if taken:
                        continue
                    s = 0.0
                    for c in range(d):
                        v2 = sums[g, c] / cnt[g] - sums[g0, c] / cnt[g0]
                        s += v2 * v2
                    if s < best:
                        best = s
                        best_g = g
            if best_g < 0:
                break
            region[n_reg] = best_g
            n_reg += 1
        m_rec = 0
        for v in range(n_reg):
            g = region[v]
            for u in range(cnt[g]):
                rec[m_rec] = mem[g, u]
                m_rec += 1
            slots[v] = g
        n_slots = n_reg
        # randomized MDAV on rec[:m_rec]: groups of k while 2k or more records remain
        n_log = 0
        delta = 0.0
        remaining = m_rec
        s_idx = 0
        while remaining >= 2 * k:
            pick = int(rand[r_idx % rand.shape[0]] * remaining)
            r_idx += 1
            if pick >= remaining:
                pick = remaining - 1
            centre = rec[pick]
            for u in range(remaining):
                s = 0.0
                for c in range(d):
                    v2 = x[rec[u], c] - x[centre, c]
                    s += v2 * v2
                dist[u] = s
            # target slot
            if s_idx < n_slots:
                target = slots[s_idx]
            else:
                target = free_slot(cnt, g0)
                slots[s_idx] = target
                n_slots += 1
            s_idx += 1
            # the k nearest of the remaining (selection by repeated minimum; k is small)
            for _ in range(k):
                best = np.inf
                bu = -1
                for u in range(remaining):
                    if dist[u] < best:
                        best = dist[u]
                        bu = u
                i = rec[bu]
                if lab[i] != target:
                    delta += move_delta(x, i, lab[i], target, cnt, sums)
                    n_log = move(x, i, target, lab, cnt, sums, mem, pos, log, n_log)
                remaining -= 1
                rec[bu] = rec[remaining]
                dist[bu] = dist[remaining]
                rec[remaining] = i
        # the rest: one group
        if s_idx < n_slots:
            target = slots[s_idx]
        else:
            target = free_slot(cnt, g0)
        for u in range(remaining):
            i = rec[u]
            if lab[i] != target:
                delta += move_delta(x, i, lab[i], target, cnt, sums)
                n_log = move(x, i, target, lab, cnt, sums, mem, pos, log, n_log)
        # the slots not used must be empty now (their records all moved); local search from the
        # region's records
        q_head = 0
        q_len = 0
        for u in range(m_rec):
            i = rec[u]
            if not in_queue[i]:
                in_queue[i] = True
                queue[(q_head + q_len) % n] = i
                q_len += 1
        for _ in range(8):
            q_head, q_len, dl, n_log = local_search(
                x,
                lab,
                cnt,
                sums,
                mem,
                pos,
                nbr,
                k,
                kmax,
                queue,
                in_queue,
                q_head,
                q_len,
                1 << 40,
                tol,
                log,
                n_log,
            )
            delta += dl
            if n_log < 0 or n_log + 4 > log.shape[0]:
                break
            n_grp = 0
            for u in range(m_rec):
                n_grp = add_distinct(slots, n_grp, lab[rec[u]])
            dl, n_log, q_len = pairs_around(
                x,
                slots,
                n_grp,
                k,
                kmax,
                limit,
                lab,
                cnt,
                sums,
                mem,
                pos,
                nbr,
                width,
                tol,
                ws,
                log,
                n_log,
                queue,
                in_queue,
                q_head,
                q_len,
            )
            delta += dl
            if q_len == 0:
                break
        # empty the work list (left over when stopped early)
        while q_len > 0:
            in_queue[queue[q_head]] = False
            q_head = (q_head + 1) % n
            q_len -= 1
        if delta < max(-tol, threshold) and n_log >= 0:
            total += delta
            kept += 1
        elif n_log >= 0:
            undo(x, lab, cnt, sums, mem, pos, log, n_log)
        else:
            total += delta  # log overflowed: cannot undo; the caller re-checks the final SSE
    return total, kept
