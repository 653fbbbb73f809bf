"""Probabilistic record linkage (Fellegi–Sunter with EM): EM on known parameters, linkage rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from reference_sets import CENSUS_CSV, census

import microgui
from microgui.core.metrics.linkage import (
    comparison_levels,
    fellegi_sunter_em,
    prl_details,
    probabilistic_record_linkage,
)

M_TRUE = np.array([[0.80, 0.15, 0.05], [0.70, 0.20, 0.10], [0.90, 0.10, 0.0], [0.60, 0.30, 0.10]])
U_TRUE = np.array([[0.05, 0.15, 0.80], [0.10, 0.30, 0.60], [0.20, 0.80, 0.0], [0.15, 0.25, 0.60]])
SIZES = [3, 3, 2, 3]


def _simulate(rng: np.random.Generator, n: int, pi: float) -> tuple[np.ndarray, np.ndarray]:
    match = rng.random(n) < pi
    levels = np.empty((n, 4), dtype=np.int64)
    for j, size in enumerate(SIZES):
        levels[match, j] = rng.choice(size, match.sum(), p=M_TRUE[j, :size])
        levels[~match, j] = rng.choice(size, (~match).sum(), p=U_TRUE[j, :size])
    return levels, match


def test_em_recovers_known_m_u_and_share() -> None:
    levels, match = _simulate(np.random.default_rng(3), 60_000, 0.15)
    em = fellegi_sunter_em(levels, SIZES, match_share=0.5)
    assert em.converged
    assert em.match_share == pytest.approx(0.15, abs=0.01)
    assert np.abs(em.m - M_TRUE).max() < 0.02
    assert np.abs(em.u - U_TRUE).max() < 0.02
    # the weights order matches above non-matches
    w = em.weights(levels)
    assert w[match].mean() > 0 > w[~match].mean()


def test_em_on_distinct_vectors_with_counts_equals_em_on_rows() -> None:
    levels, _ = _simulate(np.random.default_rng(4), 5_000, 0.2)
    full = fellegi_sunter_em(levels, SIZES)
    vecs, counts = np.unique(levels, axis=0, return_counts=True)
    packed = fellegi_sunter_em(vecs, SIZES, counts=counts)
    assert np.allclose(full.m, packed.m, atol=1e-9) and np.allclose(full.u, packed.u, atol=1e-9)


def test_em_with_blocks_recovers_parameters() -> None:
    # blocks of 5 candidates, the first one the match in 80 % of the blocks
    rng = np.random.default_rng(8)
    blocks, c = 12_000, 5
    match = np.zeros((blocks, c), dtype=bool)
    has = rng.random(blocks) < 0.8
    match[has, rng.integers(0, c, blocks)[has]] = True
    levels = np.empty((blocks * c, 4), dtype=np.int64)
    flat = match.ravel()
    for j, size in enumerate(SIZES):
        levels[flat, j] = rng.choice(size, flat.sum(), p=M_TRUE[j, :size])
        levels[~flat, j] = rng.choice(size, (~flat).sum(), p=U_TRUE[j, :size])
    em = fellegi_sunter_em(levels, SIZES, block_size=c, match_share=0.1)
    assert em.match_share == pytest.approx(0.8 / c, abs=0.01)
    assert np.abs(em.m - M_TRUE).max() < 0.03
    assert np.abs(em.u - U_TRUE).max() < 0.02


def test_em_rejects_bad_levels() -> None:
    with pytest.raises(ValueError, match="outside"):
        fellegi_sunter_em(np.array([[0, 3]]), [2, 3])
    with pytest.raises(ValueError, match="blocks"):
        fellegi_sunter_em(np.zeros((5, 1), dtype=int), [2], block_size=2)


def test_comparison_levels_by_hand() -> None:
    # originals 1..10 (n=10): tolerances 10 % and 30 % -> 1 and 3 ranks
    x = np.arange(1.0, 11.0).reshape(-1, 1)
    y = np.array([[1.0], [2.5], [7.0], [10.0]])
    ip = np.array([0, 1, 1, 1, 2, 3])
    io = np.array([0, 1, 2, 4, 2, 0])
    levels, sizes = comparison_levels(x, y, ip, io, tolerances=(10.0, 30.0))
    assert sizes == [4]
    # 1 vs 1: rank distance 0; 2.5 vs 2 and vs 3: adjacent (1); 2.5 vs 5: 3 ranks (2);
    # 7 vs 3: 4 ranks (beyond 30 %: 3); 10 vs 1: 9 ranks (3)
    assert levels[:, 0].tolist() == [0, 1, 1, 2, 3, 3]
    cat, csizes = comparison_levels(
        np.array([[1], [2]]), np.array([[1], [1]]), [0, 0], [0, 1], categorical=[True]
    )
    assert csizes == [2] and cat[:, 0].tolist() == [0, 1]


def _frame(n: int = 600, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 3))
    return pd.DataFrame({"a": z[:, 0] * 10 + 50, "b": z[:, 0] + z[:, 1], "c": np.exp(z[:, 2])})


def test_unprotected_copy_links_all_and_noise_links_less() -> None:
    x = _frame().to_numpy()
    assert probabilistic_record_linkage(x, x) == pytest.approx(100.0)
    rng = np.random.default_rng(2)
    light = x + rng.normal(0, 0.05, x.shape) * x.std(axis=0)
    heavy = x + rng.normal(0, 1.0, x.shape) * x.std(axis=0)
    r_light = probabilistic_record_linkage(x, light)
    r_heavy = probabilistic_record_linkage(x, heavy)
    # (distance-based linkage: 87 % and 3 %; the coarse levels leave PRL the weaker attack)
    assert r_light > 40.0
    assert r_heavy < 10.0


def test_copy_of_two_attributes_links_all_on_many_records() -> None:
    # a single coarse "agree" level would tie the near neighbours here; the exact level does not
    x = np.random.default_rng(6).normal(size=(20_000, 2))
    assert probabilistic_record_linkage(x, x) == pytest.approx(100.0)


def test_duplicated_originals_share_the_credit() -> None:
    x = np.array([[1.0, 1.0], [1.0, 1.0], [5.0, 2.0], [9.0, 7.0], [3.0, 4.0]])
    # records 0 and 1 are identical: each links to either, credited 1/2
    assert probabilistic_record_linkage(x, x, candidates=3) == pytest.approx(100.0 * 4 / 5)


def test_deterministic_and_blocked() -> None:
    x = _frame(400, 3).to_numpy()
    y = x + np.random.default_rng(9).normal(0, 0.3, x.shape) * x.std(axis=0)
    a = prl_details(x, y)
    b = prl_details(x, y)
    assert a.rate == b.rate and np.array_equal(a.em.m, b.em.m)
    assert a.pairs == 400 * a.candidates  # O(n·c) pairs, not n²
    assert 0.0 <= a.rate <= 100.0


def test_rate_falls_as_k_grows_after_mdav() -> None:
    frame = _frame(900, 4)
    x = frame.to_numpy()
    rates = []
    # (k = 2 and 3 score alike here: at 900 records the rank levels are too coarse to tell the
    # two members of a pair from their near neighbours)
    for k in (3, 5, 10, 20):
        out = microgui.protect(frame, qi=list(frame.columns), method="mdav", k=k).frame
        rate = probabilistic_record_linkage(x, out[list(frame.columns)].to_numpy())
        assert rate <= 100.0 / k + 1e-9  # k members share one released point
        rates.append(rate)
    assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]


@pytest.mark.shared
@pytest.mark.skipif(not CENSUS_CSV.exists(), reason="reference data ../shared/data not present")
def test_census_mdav() -> None:
    frame = census()
    x = frame.to_numpy(dtype=float)
    assert probabilistic_record_linkage(x, x) == pytest.approx(100.0)
    previous = 101.0
    for k in (3, 5, 10):
        out = microgui.protect(frame, qi=list(frame.columns), method="mdav", k=k).frame
        rate = probabilistic_record_linkage(x, out[list(frame.columns)].to_numpy(dtype=float))
        assert rate <= 100.0 / k and rate < previous
        previous = rate


def test_mixed_categorical_attributes() -> None:
    rng = np.random.default_rng(12)
    n = 500
    x = np.column_stack([rng.normal(size=n), rng.integers(0, 4, n), rng.integers(0, 3, n)])
    y = x.copy()
    y[:, 0] += rng.normal(0, 0.2, n)
    flip = rng.random(n) < 0.3
    y[flip, 1] = rng.integers(0, 4, flip.sum())
    cat = [False, True, True]
    copy = probabilistic_record_linkage(x, x, categorical=cat)
    masked = probabilistic_record_linkage(x, y, categorical=cat)
    assert copy > 90.0 and masked < copy
