"""Probe: can two threads split one query of the pruned MDAV loop? (issue 33 item 1)

Two measurements behind the conclusion in :mod:`microgui.core.methods.threads` (why two threads
do not reach 1.5x on exact pruned MDAV at 100,000 records):

- **Barrier**: two threads in one parallel region cross a spin barrier (each publishes the round
  it reached with an atomic release store and spins on the other's with atomic acquire loads:
  numba has no atomics, so they are :func:`numba.extending.intrinsic` on llvmlite's atomic
  load and store, which LLVM may not hoist out of the loop). Thread 0 times each crossing with
  the cycle counter; percentiles, in ns (the counter's rate is measured against the clock).
- **k-1 nearest, split in two**: for random query records of the standard table (100,000 x 10,
  k = 5, the whole table remaining), the time of
  :func:`~microgui.core.methods.spatial.block_nearest` against each half of a two-way split of
  the same search, run one after the other on one thread (no barrier, no second core: a
  lower bound of the split's time). Each half is given the final k-1-th distance as its bound
  from the start (a perfectly shared bound, the best a split can do); the halves take either
  half of every visited block's records, or whole blocks in turn; and a traversal with no
  distances gives the bounds' share. Each time is the minimum of 3 repeats (robust to other
  programs taking the core). The merged halves must be the serial answer (checked).

The probe does not run the split on two threads: the ratios show it cannot pay (see the
module named above). Times are only comparable within a run.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from microgui.bench.data import correlated_data
from microgui.core.methods.kernels import (
    heap_push,
    heap_sift_down,
    load_mixed_point,
    mixed_distances_block,
    ordinal_tables,
)
from microgui.core.methods.spatial import (
    _lower_bounds,
    _rotate_point,
    block_nearest,
    build_blocks,
    work_arrays,
)
from microgui.text_table import text_table

__all__ = ["barrier_ns", "nearest_split", "knn_split", "split_queries_text"]


def _item_pointer(context, builder, aryty, ary, idx):  # type: ignore[no-untyped-def]
    a = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, a, [idx])


@intrinsic
def _load_acquire(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """arr[idx] (int64) by an atomic acquire load: never hoisted out of a spin loop."""
    sig = types.int64(arr, idx)

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", 8)

    return sig, codegen


@intrinsic
def _store_release(typingctx, arr, idx, val):  # type: ignore[no-untyped-def]
    """arr[idx] = val (int64) by an atomic release store."""
    sig = types.void(arr, idx, val)

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
        builder.store_atomic(args[2], ptr, "release", 8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _cycles(typingctx):  # type: ignore[no-untyped-def]
    """The processor's cycle counter (``llvm.readcyclecounter``; 0 where there is none)."""
    sig = types.int64()

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


@njit(nogil=True)
def _now() -> int:
    return _cycles()  # type: ignore[no-any-return]


@njit(parallel=True, nogil=True)
def _barrier_rounds(flags: np.ndarray, rounds: int, out: np.ndarray) -> None:
    # Thread t publishes its round in flags[8 t] (its own cache line) and waits for the other's.
    for tid in prange(2):
        other = (1 - tid) * 8
        for i in range(rounds):
            c0 = _cycles()
            _store_release(flags, tid * 8, i + 1)
            while _load_acquire(flags, other) < i + 1:
                pass
            if tid == 0:
                out[i] = _cycles() - c0


def _cycles_per_ns() -> float:
    c0, t0 = _now(), time.perf_counter()
    time.sleep(0.05)
    c1, t1 = _now(), time.perf_counter()
    return (c1 - c0) / (t1 - t0) / 1e9


def barrier_ns(rounds: int = 200_000) -> np.ndarray:
    """Nanoseconds of each of ``rounds`` crossings of the two-thread spin barrier, as thread 0
    saw them (empty without a cycle counter or a second numba thread)."""
    import numba

    rate = _cycles_per_ns()
    if rate <= 0.0 or numba.config.NUMBA_NUM_THREADS < 2:  # type: ignore[attr-defined]
        return np.empty(0)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        out = np.zeros(rounds, dtype=np.int64)
        _barrier_rounds(np.zeros(16, dtype=np.int64), rounds, out)
    finally:
        numba.set_num_threads(before)
    return out / rate


@njit(nogil=True)
def nearest_split(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    exclude: int,
    kk: int,
    hd: np.ndarray,
    hx: np.ndarray,
    hp: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    part: int,
    parts: int,
    by_blocks: bool,
    bound: float,
) -> tuple[int, int]:
    """Part ``part`` of ``parts`` of :func:`~microgui.core.methods.spatial.block_nearest`'s
    search (the same traversal): half of each visited block's records (``by_blocks`` False) or
    whole blocks in turn (True; the query's own block to part 0), pruning with the smaller of
    its own k-1-th distance and ``bound`` (np.inf: none). Returns (entries in the heap
    hd/hx/hp, distances computed). ``parts`` = 1, no bound: ``block_nearest`` itself."""
    xcol, ocol, ncol, rowat, _where, posblock = records
    bstart = blocks[0]
    bcnt = blocks[1]
    blevel = blocks[2:8]
    slot_sb = supers[1]
    sb_slot = supers[2]
    meta = supers[9]
    slevel = supers[3:9]
    m = meta[0]
    g = meta[1]
    nb = meta[2]
    sbound, bbound, dist, _counter, cand, qz = work
    delta = _rotate_point(blocks, pc, qz)
    _lower_bounds(slevel, 0, m, osq, qz, po, pn, delta, sbound)
    size = 0
    done = 0
    dealt = 0
    start = sb_slot[posblock[exclude] // g]
    ncand = 0
    for i in range(-1, m):
        worst = min(hd[0] if size >= kk else np.inf, bound)
        if i < 0:
            s = start
        else:
            if i == 0:
                for t in range(m):
                    if t != start and sbound[t] <= worst:
                        cand[ncand] = t
                        ncand += 1
                cand[:ncand] = cand[:ncand][np.argsort(sbound[cand[:ncand]])]
            if i >= ncand:
                break
            s = cand[i]
            if sbound[s] > worst:
                break
        b0 = slot_sb[s] * g
        b1 = min(b0 + g, nb)
        _lower_bounds(blevel, b0, b1, osq, qz, po, pn, delta, bbound)
        top = -1
        if b0 <= posblock[exclude] < b1:
            top = posblock[exclude] - b0
        for jj in range(-1, b1 - b0):
            j = top if jj < 0 else jj
            if j < 0 or (jj >= 0 and j == top):
                continue
            b = b0 + j
            c = bcnt[b]
            worst = min(hd[0] if size >= kk else np.inf, bound)
            if c == 0 or bbound[j] > worst:
                continue
            a = bstart[b]
            if by_blocks:
                mine = part == 0 if jj < 0 else dealt % parts == part
                if jj >= 0:
                    dealt += 1
                if not mine:
                    continue
                e = a + c
            else:
                e = a + (part + 1) * c // parts
                a = a + part * c // parts
            if e <= a:
                continue
            mixed_distances_block(xcol, ocol, ncol, osq, a, e, pc, po, pn, dist)
            done += e - a
            for p in range(a, e):
                if p == exclude:
                    continue
                d = dist[p]
                x = rowat[p]
                if size < kk:
                    heap_push(hd, hx, hp, size, d, x, p)
                    size += 1
                elif d < hd[0] or (d == hd[0] and x < hx[0]):
                    hd[0] = d
                    hx[0] = x
                    hp[0] = p
                    heap_sift_down(hd, hx, hp, size)
    return size, done


@njit(nogil=True)
def nearest_lockstep(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    pc: np.ndarray,
    po: np.ndarray,
    pn: np.ndarray,
    exclude: int,
    kk: int,
    hd2: np.ndarray,
    hx2: np.ndarray,
    hp2: np.ndarray,
    size: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    done: np.ndarray,
) -> None:
    """Two halves of :func:`~microgui.core.methods.spatial.block_nearest`'s search run in
    lock-step at equal speed, on one thread: whole blocks dealt out in turn in the serial
    traversal order (the query's own block to half 0), each half with its own heap (row h of
    hd2, hx2, hp2; ``size[h]`` entries) and both pruning with the smaller of the two k-1-th
    distances, as two threads sharing their bounds would. done[h] = distances half h computed."""
    xcol, ocol, ncol, rowat, _where, posblock = records
    bstart = blocks[0]
    bcnt = blocks[1]
    blevel = blocks[2:8]
    slot_sb = supers[1]
    sb_slot = supers[2]
    meta = supers[9]
    slevel = supers[3:9]
    m = meta[0]
    g = meta[1]
    nb = meta[2]
    sbound, bbound, dist, _counter, cand, qz = work
    delta = _rotate_point(blocks, pc, qz)
    _lower_bounds(slevel, 0, m, osq, qz, po, pn, delta, sbound)
    size[:] = 0
    done[:] = 0
    dealt = 0
    start = sb_slot[posblock[exclude] // g]
    ncand = 0
    for i in range(-1, m):
        worst = min(hd2[0, 0] if size[0] >= kk else np.inf, hd2[1, 0] if size[1] >= kk else np.inf)
        if i < 0:
            s = start
        else:
            if i == 0:
                for t in range(m):
                    if t != start and sbound[t] <= worst:
                        cand[ncand] = t
                        ncand += 1
                cand[:ncand] = cand[:ncand][np.argsort(sbound[cand[:ncand]])]
            if i >= ncand:
                break
            s = cand[i]
            if sbound[s] > worst:
                break
        b0 = slot_sb[s] * g
        b1 = min(b0 + g, nb)
        _lower_bounds(blevel, b0, b1, osq, qz, po, pn, delta, bbound)
        top = -1
        if b0 <= posblock[exclude] < b1:
            top = posblock[exclude] - b0
        for jj in range(-1, b1 - b0):
            j = top if jj < 0 else jj
            if j < 0 or (jj >= 0 and j == top):
                continue
            b = b0 + j
            c = bcnt[b]
            worst = min(
                hd2[0, 0] if size[0] >= kk else np.inf, hd2[1, 0] if size[1] >= kk else np.inf
            )
            if c == 0 or bbound[j] > worst:
                continue
            h = 0
            if jj >= 0:
                h = dealt % 2
                dealt += 1
            a = bstart[b]
            mixed_distances_block(xcol, ocol, ncol, osq, a, a + c, pc, po, pn, dist)
            done[h] += c
            for p in range(a, a + c):
                if p == exclude:
                    continue
                d = dist[p]
                x = rowat[p]
                if size[h] < kk:
                    heap_push(hd2[h], hx2[h], hp2[h], size[h], d, x, p)
                    size[h] += 1
                elif d < hd2[h, 0] or (d == hd2[h, 0] and x < hx2[h, 0]):
                    hd2[h, 0] = d
                    hx2[h, 0] = x
                    hp2[h, 0] = p
                    heap_sift_down(hd2[h], hx2[h], hp2[h], size[h])


@njit(nogil=True)
def _merged_rows(gd: np.ndarray, gx: np.ndarray, used: int, kk: int) -> np.ndarray:
    """The rows of the kk smallest (distance, row) pairs of gd, gx [:used], sorted by row."""
    order = np.argsort(gx[:used], kind="mergesort")
    order = order[np.argsort(gd[:used][order], kind="mergesort")]
    return np.sort(gx[:used][order][:kk])


@njit(nogil=True)
def _knn_times(
    records: tuple,  # type: ignore[type-arg]
    blocks: tuple,  # type: ignore[type-arg]
    supers: tuple,  # type: ignore[type-arg]
    osq: np.ndarray,
    work: tuple,  # type: ignore[type-arg]
    queries: np.ndarray,
    kk: int,
    repeats: int,
    out: np.ndarray,
) -> int:
    """out[i] = cycles of query i: [serial, records split part 0, part 1, blocks split part 0,
    part 1, bounds only], then distances computed: [serial, larger half of the blocks split
    with the final bound, on its own bound, in lock-step with a shared bound]; returns the
    queries whose merged halves differ from the serial answer (as sets of (distance, row))."""
    xcol, ocol, ncol, rowat = records[0], records[1], records[2], records[3]
    pc = np.empty(xcol.shape[0])
    po = np.empty(ocol.shape[0], dtype=np.int64)
    pn = np.empty(ncol.shape[0], dtype=np.int64)
    hd = np.empty(kk)
    hx = np.empty(kk, dtype=np.int64)
    hp = np.empty(kk, dtype=np.int64)
    gd = np.empty(2 * kk)
    gx = np.empty(2 * kk, dtype=np.int64)
    hd2 = np.empty((2, kk))
    hx2 = np.empty((2, kk), dtype=np.int64)
    hp2 = np.empty((2, kk), dtype=np.int64)
    size2 = np.zeros(2, dtype=np.int64)
    done2 = np.zeros(2, dtype=np.int64)
    wrong = 0
    for i in range(queries.shape[0]):
        p = queries[i]
        load_mixed_point(xcol, ocol, ncol, p, pc, po, pn)
        best = 1 << 62
        for _ in range(repeats):
            c0 = _cycles()
            block_nearest(records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work)
            best = min(best, _cycles() - c0)
        out[i, 0] = best
        kth = hd[0]
        serial = np.sort(hx.copy())
        col = 1
        for by_blocks in (False, True):
            used = 0
            for part in range(2):
                best = 1 << 62
                for _ in range(repeats):
                    c0 = _cycles()
                    size, _done = nearest_split(
                        records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work,
                        part, 2, by_blocks, kth,
                    )  # fmt: skip
                    best = min(best, _cycles() - c0)
                out[i, col] = best
                col += 1
                for a in range(size):
                    gd[used] = hd[a]
                    gx[used] = hx[a]
                    used += 1
            # Merge by the serial tie rule: the kk smallest (distance, row) pairs.
            if used < kk or not np.array_equal(_merged_rows(gd, gx, used, kk), serial):
                wrong += 1
        best = 1 << 62
        for _ in range(repeats):
            c0 = _cycles()
            nearest_split(
                records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work, 0, 1 << 30,
                False, kth,
            )  # fmt: skip
            best = min(best, _cycles() - c0)
        out[i, 5] = best
        _size, out[i, 6] = nearest_split(
            records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work, 0, 1, False,
            np.inf,
        )  # fmt: skip
        for own in (False, True):
            most = 0
            for part in range(2):
                _size, done = nearest_split(
                    records, blocks, supers, osq, pc, po, pn, p, kk, hd, hx, hp, work, part, 2,
                    True, np.inf if own else kth,
                )  # fmt: skip
                most = max(most, done)
            out[i, 8 if own else 7] = most
        nearest_lockstep(
            records, blocks, supers, osq, pc, po, pn, p, kk, hd2, hx2, hp2, size2, work, done2
        )
        out[i, 9] = max(done2[0], done2[1])
        used = 0
        for h in range(2):
            for a in range(size2[h]):
                gd[used] = hd2[h, a]
                gx[used] = hx2[h, a]
                used += 1
        if used < kk or not np.array_equal(_merged_rows(gd, gx, used, kk), serial):
            wrong += 1
    _ = rowat
    return wrong


def knn_split(
    n: int = 100_000, queries: int = 2000, k: int = 5, repeats: int = 3, seed: int = 1
) -> tuple[np.ndarray, np.ndarray, int]:
    """Microseconds per query ((queries, 6): serial, records split halves, blocks split halves,
    bounds only) on the standard table of n x 10 records; distances computed per query
    ((queries, 4): serial, then the larger half of the whole-blocks split with the final bound,
    on its own bound and in lock-step with a shared bound, :func:`nearest_lockstep`); and the
    number of split searches whose merged halves were not the serial answer."""
    x = correlated_data(n, 10).continuous
    empty = np.empty((n, 0), dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    osq, _ocount = ordinal_tables(empty, sizes)
    index = build_blocks(x, empty, sizes, empty)
    work = work_arrays(index)
    rows = np.random.default_rng(seed).choice(n, min(queries, n), replace=False)
    positions = index.records[4][rows]
    out = np.zeros((len(positions), 10), dtype=np.int64)
    wrong = _knn_times(
        index.records, index.blocks, index.supers, osq, work, positions, k - 1, repeats, out
    )
    rate = _cycles_per_ns()
    us = out[:, :6] / (rate * 1e3) if rate > 0 else out[:, :6] * 0.0
    return us, out[:, 6:].astype(np.float64), int(wrong)


def split_queries_text(n: int = 100_000) -> str:
    """The probe's two tables as text."""
    lines = []
    ns = barrier_ns()
    if ns.size:
        q = np.percentile(ns, [25, 50, 90, 99])
        lines.append(
            "two-thread spin barrier, ns per crossing (thread 0; p25 / p50 / p90 / p99): "
            + " / ".join(f"{v:.0f}" for v in q)
            + f"; crossings over 10 us: {100 * np.mean(ns > 10_000):.1f} %"
        )
    else:
        lines.append("two-thread spin barrier: no cycle counter or one numba thread only")
    us, counts, wrong = knn_split(n)
    if not us.any():
        return "\n".join(lines + ["k-1 nearest split: no cycle counter"])
    serial = us[:, 0].sum()
    rows = [
        ["serial (block_nearest)", f"{us[:, 0].mean():.1f}", "1.000"],
        [
            "records of each block halved: larger half",
            f"{np.maximum(us[:, 1], us[:, 2]).mean():.1f}",
            f"{np.maximum(us[:, 1], us[:, 2]).sum() / serial:.3f}",
        ],
        [
            "whole blocks in turn: larger half",
            f"{np.maximum(us[:, 3], us[:, 4]).mean():.1f}",
            f"{np.maximum(us[:, 3], us[:, 4]).sum() / serial:.3f}",
        ],
        ["bounds only (no distance)", f"{us[:, 5].mean():.1f}", f"{us[:, 5].sum() / serial:.3f}"],
    ]
    lines.append(
        f"k-1 nearest split in two, {n:,} x 10, k = 5, {len(us)} queries, each half given the "
        f"final bound; merged halves equal to the serial answer: "
        f"{'all' if wrong == 0 else f'NOT {wrong}'}"
    )
    lines.append(text_table(["search", "us per query", "of serial"], rows, right={1, 2}))
    total = counts.sum(axis=0)
    lines.append(
        f"distances per query: serial {total[0] / len(counts):.0f}; larger half of the "
        f"whole-blocks split / serial: final bound {total[1] / total[0]:.3f}, own bound "
        f"{total[2] / total[0]:.3f}, shared bound in lock-step {total[3] / total[0]:.3f}"
    )
    return "\n".join(lines)
