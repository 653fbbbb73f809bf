"""The proven lower bound on information loss (issue 16, :mod:`microgui.core.methods.bound`):
exact on one attribute, below every partition found by exhaustive search, below every registered
method's IL, null where it is not proved, in the report's units and text."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from microgui.core.methods import available_methods, bound
from microgui.core.methods.bound import (
    attribute_bound_sse,
    lower_bound_report,
    principal_axes_searched,
    principal_bound_sse,
    univariate_optimum_sse,
)
from microgui.core.methods.univariate import optimal_univariate
from microgui.core.metrics import sst
from microgui.core.runs import RunSpec, information_loss_text, method_refusal, run_protection
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.reference_data import REFERENCE_FILES
from tests.reference_sets import reference_dataset

QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
CONF = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
NOMINAL_QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
#: The bounds are rounded down by this (relative) so rounding never lifts them over an IL.
SAFETY = 1e-9


def _sse(x: np.ndarray, labels: np.ndarray) -> float:
    total = 0.0
    for g in np.unique(labels):
        part = x[labels == g]
        total += float(((part - part.mean(axis=0)) ** 2).sum())
    return total


def _partitions(items: list[int], k: int) -> Iterator[list[list[int]]]:
    """Every partition of ``items`` into blocks of at least k (of any size, also above 2k−1)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for size in range(k - 1, len(rest) + 1):
        for others in itertools.combinations(rest, size):
            left = [i for i in rest if i not in others]
            for tail in _partitions(left, k):
                yield [[first, *others], *tail]


def _exhaustive_optimum(x: np.ndarray, k: int) -> float:
    best = np.inf
    for blocks in _partitions(list(range(len(x))), k):
        labels = np.empty(len(x), dtype=np.int64)
        for g, block in enumerate(blocks):
            labels[block] = g
        best = min(best, _sse(x, labels))
    return float(best)


def _dataset(values: np.ndarray, extra: dict[str, ColumnSpec] | None = None) -> Dataset:
    frame = pd.DataFrame(values, columns=[f"x{j}" for j in range(values.shape[1])])
    roles = {c: QI for c in frame.columns}
    rng = np.random.default_rng(7)
    for name, spec in (extra or {}).items():
        if spec.kind is AttributeKind.NOMINAL:
            frame[name] = rng.choice(["a", "b", "c"], len(frame))
        else:
            frame[name] = rng.normal(size=len(frame))
        roles[name] = spec
    return Dataset.from_frame(frame, RoleMap.from_dict(roles))


# -- the univariate optimum ---------------------------------------------------------------------


def test_hand_case_two_clusters() -> None:
    # {1, 2, 3} and {10, 11, 12}: SSE 2 + 2; any other 3-partition mixes the clusters
    assert univariate_optimum_sse([12.0, 1.0, 11.0, 2.0, 10.0, 3.0], 3) == pytest.approx(4.0)
    assert univariate_optimum_sse([5.0, 5.0, 5.0, 5.0], 2) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_univariate_optimum_is_the_optimum_over_every_size_at_least_k(seed: int) -> None:
    """Hansen & Mukherjee's k..2k−1 groups give the optimum over *all* groups of ≥ k: checked
    against every partition of 8-9 values (groups of 2k and more included)."""
    rng = np.random.default_rng(seed)
    n, k = (9, 2) if seed % 2 else (8, 3)
    x = np.round(rng.normal(size=(n, 1)) * 3, 1)  # ties on purpose
    assert univariate_optimum_sse(x, k) == pytest.approx(_exhaustive_optimum(x, k), abs=1e-12)


def test_equals_optimal_univariate_run_on_one_attribute() -> None:
    """On one attribute the per-attribute bound is the exact optimum: optimal-univariate's IL."""
    rng = np.random.default_rng(3)
    ds = _dataset(rng.lognormal(size=(500, 1)))
    for k in (2, 3, 5, 10):
        result = run_protection(ds, RunSpec.make("optimal-univariate", k, seed=0))
        report = result.report
        assert report["il_lower_bound"] == pytest.approx(report["information_loss"], rel=1e-8)
        assert report["il_lower_bound"] <= report["information_loss"]
        assert report["il_lower_bound"] <= report["il_lower_bound_best"]
        assert report["il_lower_bound_best"] <= report["information_loss"]
        z = prepare_qi(ds).continuous
        labels = optimal_univariate(z[:, 0], k)
        assert attribute_bound_sse(z, k) == pytest.approx(_sse(z, labels), rel=1e-10)


# -- exhaustive multivariate checks -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_both_bounds_below_the_exhaustive_multivariate_optimum(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n, d, k = (9, 2 + seed % 2, 2 + seed % 3 // 2)
    x = rng.normal(size=(n, d)) * rng.uniform(0.2, 3, d)
    if seed % 4 == 3:
        x[1] = x[0]  # a duplicate record
    best = _exhaustive_optimum(x, k)
    assert attribute_bound_sse(x, k) <= best * (1 + 1e-12)
    principal, p = principal_bound_sse(x, k)
    assert p == d  # small tables: nearest neighbours on every axis
    assert principal <= best * (1 + 1e-12)


def test_principal_axes_rule() -> None:
    assert principal_axes_searched(4092, 11, 3) == 11  # EIA: every axis
    assert principal_axes_searched(1080, 13, 10) == 13  # Census
    assert principal_axes_searched(100_000, 10, 3) == 3
    assert principal_axes_searched(100_000, 10, 10) == 2
    assert principal_axes_searched(10_000_000, 10, 3) == 0  # then the principal axes alone
    x = np.random.default_rng(0).normal(size=(40, 3))
    assert principal_bound_sse(x, 3)[0] > 0


# -- every registered method --------------------------------------------------------------------


def _every_method(ds: Dataset, k: int) -> Iterator[tuple[str, dict[str, object]]]:
    for method in available_methods():
        if method_refusal(method, ds.roles, ds.n_records):
            continue
        yield method.name, dict(run_protection(ds, RunSpec.make(method.name, k, seed=1)).report)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_bound_below_every_registered_method(k: int) -> None:
    rng = np.random.default_rng(k)
    base = rng.normal(size=(60, 3)) @ rng.normal(size=(3, 3))
    base[:5] = base[0]  # duplicates
    ds = _dataset(base, {"s": CONF})
    seen = set()
    for name, report in _every_method(ds, k):
        seen.add(name)
        il, lb, best = (
            report["information_loss"],
            report["il_lower_bound"],
            report["il_lower_bound_best"],
        )
        if lb is None:
            assert best is None and str(report["il_lower_bound_basis"]).startswith("none"), name
            continue
        assert isinstance(il, float) and isinstance(lb, float) and isinstance(best, float)
        assert 0.0 <= lb <= best <= il, name
    assert {"mdav", "individual-ranking", "hybrid", "mstk"} <= seen


def test_optimal_multivariate_run_is_above_the_best_bound() -> None:
    rng = np.random.default_rng(11)
    ds = _dataset(rng.normal(size=(14, 3)))
    for k in (2, 3):
        report = run_protection(ds, RunSpec.make("optimal", k, seed=0)).report
        assert report["il_lower_bound"] <= report["il_lower_bound_best"]
        assert report["il_lower_bound_best"] <= report["information_loss"]


def test_which_runs_get_a_bound() -> None:
    rng = np.random.default_rng(5)
    ds = _dataset(rng.normal(size=(80, 3)), {"s": CONF})
    reports = {name: report for name, report in _every_method(ds, 4)}
    # one partition of the records: the principal-axis bound adds to the per-attribute one
    assert reports["mdav"]["il_lower_bound_best"] > reports["mdav"]["il_lower_bound"]
    # individual ranking groups each attribute on its own: per-attribute bound only
    ir = reports["individual-ranking"]
    assert ir["il_lower_bound"] == reports["mdav"]["il_lower_bound"]
    assert ir["il_lower_bound_best"] == ir["il_lower_bound"]
    assert "not one k-partition" in str(ir["il_lower_bound_basis"])
    # the DP release adds one Laplace draw per group: still a grouping by k of each attribute
    assert reports["dp-individual-ranking"]["il_lower_bound"] == ir["il_lower_bound"]
    # synthetic values within a group: not proved, so null with the reason
    hybrid = reports["hybrid"]
    assert hybrid["il_lower_bound"] is None and hybrid["il_lower_bound_best"] is None
    assert "fewer than k records" in str(hybrid["il_lower_bound_basis"])
    # generalized to text: no SSE, no bound
    assert reports["mstk"]["information_loss"] is None
    assert reports["mstk"]["il_lower_bound"] is None


@pytest.mark.parametrize(
    "params", [{"rescale_variance": True}, {"round": "0"}, {"round": "source"}]
)
def test_rescaled_and_rounded_releases_keep_the_bound(params: dict[str, object]) -> None:
    """Variance rescaling is an affine map of each column and rounding a function of the
    value: the release stays constant within groups, so the bound holds (module docstring)."""
    rng = np.random.default_rng(9)
    ds = _dataset(np.round(rng.normal(size=(90, 3)) * [1, 10, 100], 1))
    for method in ("mdav", "mst"):
        report = run_protection(ds, RunSpec.make(method, 3, params=params, seed=1)).report
        assert report["il_lower_bound"] is not None, method
        assert report["il_lower_bound"] <= report["il_lower_bound_best"]
        assert report["il_lower_bound_best"] <= report["information_loss"], method


# -- units, keys, text, cache -------------------------------------------------------------------


def test_report_keys_and_units() -> None:
    rng = np.random.default_rng(2)
    ds = _dataset(rng.normal(size=(50, 2)), {"region": NOMINAL_QI})
    report = run_protection(ds, RunSpec.make("mdav-generic", 3, seed=1)).report
    z = prepare_qi(ds).continuous  # the continuous QIs only, like information_loss
    expected = 100.0 * attribute_bound_sse(z, 3) / sst(z) * (1 - SAFETY)
    assert report["il_lower_bound"] == pytest.approx(expected, rel=1e-12)
    best = max(attribute_bound_sse(z, 3), principal_bound_sse(z, 3)[0])
    assert report["il_lower_bound_best"] == pytest.approx(100 * best / sst(z) * (1 - SAFETY))
    assert report["il_lower_bound_best"] <= report["information_loss"]
    assert "Hansen & Mukherjee" in report["il_lower_bound_basis"]
    keys = list(report)
    assert keys.index("il_lower_bound") == keys.index("information_loss_basis") + 1


def test_no_continuous_quasi_identifier_gives_null() -> None:
    frame = pd.DataFrame({"a": list("xyzxyzxyzx"), "b": list("ppqqppqqpp")})
    ds = Dataset.from_frame(frame, RoleMap.from_dict({"a": NOMINAL_QI, "b": NOMINAL_QI}))
    report = run_protection(ds, RunSpec.make("mdav-generic", 2, seed=1)).report
    assert report["il_lower_bound"] is None
    assert "no continuous" in report["il_lower_bound_basis"]


def test_release_checked_not_trusted() -> None:
    """lower_bound_report checks the release: a value shared by fewer than k gives null even
    when the labels claim groups of k."""
    rng = np.random.default_rng(4)
    qi = prepare_qi(_dataset(rng.normal(size=(12, 2))))
    labels = np.repeat(np.arange(4), 3)
    means = np.vstack([qi.continuous[labels == g].mean(axis=0) for g in range(4)])[labels]
    ok = lower_bound_report(qi, means, labels, 3)
    assert ok["il_lower_bound"] is not None
    assert ok["il_lower_bound_best"] >= ok["il_lower_bound"]
    # without labels the rows are counted: the same answer
    assert lower_bound_report(qi, means, None, 3) == ok
    noisy = means.copy()
    noisy[0, 1] += 1e-6
    out = lower_bound_report(qi, noisy, labels, 3)
    assert out["il_lower_bound"] is None and "'x1'" in out["il_lower_bound_basis"]
    # a column-wise grouping that is not one partition: per-attribute bound only
    shifted = means.copy()
    shifted[:, 1] = np.roll(means[:, 1], 1)
    part = lower_bound_report(qi, shifted, labels, 3)
    assert part["il_lower_bound"] == ok["il_lower_bound"]
    assert part["il_lower_bound_best"] == part["il_lower_bound"]
    assert lower_bound_report(qi, None, labels, 3)["il_lower_bound"] is None


def test_bounds_are_kept_per_data_and_k(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = bound.attribute_bound_sse

    def counting(values: np.ndarray, k: int, threads: int = 1) -> float:
        calls.append(k)
        return real(values, k, threads)

    monkeypatch.setattr(bound, "attribute_bound_sse", counting)
    bound.clear_cache()
    ds = _dataset(np.random.default_rng(8).normal(size=(40, 2)))
    for method in ("mdav", "mst", "md"):
        run_protection(ds, RunSpec.make(method, 3, seed=1))
    run_protection(ds, RunSpec.make("mdav", 4, seed=1))
    assert calls == [3, 4]


def test_information_loss_text_shows_the_bound() -> None:
    report = {
        "information_loss_all_qi": 7.5,
        "information_loss": 7.5,
        "quasi_identifiers": {"a": "continuous"},
        "il_lower_bound": 0.1,
        "il_lower_bound_best": 3.44,
    }
    text = information_loss_text(report)
    assert text == ("IL (all QIs) = 7.5 %, SSE/SST (continuous QIs) = 7.5 % (lower bound 3.44 %)")
    report["il_lower_bound"] = report["il_lower_bound_best"] = None
    assert "bound" not in information_loss_text(report)


# -- the CASC reference sets --------------------------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize("k", [3, 4, 5, 10])
@pytest.mark.parametrize("name", sorted(REFERENCE_FILES))
def test_reference_sets_bound_below_every_method(name: str, k: int) -> None:
    """Census, Tarragona, EIA: both bounds lie below the IL of every method that aggregates
    (mstk generalizes: no IL); the per-attribute bound equals the test's own sum of
    Hansen-Mukherjee optima, and the best bound is the tighter one on these sets."""
    ds = reference_dataset(REFERENCE_FILES[name], QI, PASS)
    z = prepare_qi(ds).continuous
    expected = 100.0 * sum(univariate_optimum_sse(z[:, j], k) for j in range(z.shape[1])) / sst(z)
    checked = 0
    for method in available_methods():
        if method.uses_hierarchies or method_refusal(method, ds.roles, ds.n_records):
            continue
        report = run_protection(ds, RunSpec.make(method.name, k, seed=1)).report
        il, lb, best = (
            report["information_loss"],
            report["il_lower_bound"],
            report["il_lower_bound_best"],
        )
        if lb is None:
            assert method.name == "hybrid"
            continue
        assert lb == pytest.approx(expected, rel=1e-8)
        assert lb <= best <= il, method.name
        checked += 1
        if method.name == "mdav":
            assert best > 1.5 * lb  # the nearest-neighbour part is much tighter here
    assert checked >= 10


def test_bound_is_not_computed_when_it_would_hold_up_the_run() -> None:
    """n·k·d above the budget: null with the reason, at once (review: 24 s at n = 40,000,
    k = 10,000, d = 3)."""
    import time

    from microgui.core.methods import bound as bound_module

    rng = np.random.default_rng(0)
    z = rng.normal(size=(40_000, 3))
    qi = SimpleNamespace(continuous_names=("a", "b", "c"), continuous=z)
    labels = np.repeat(np.arange(4), 10_000)
    release = np.repeat(z.reshape(4, 10_000, 3).mean(axis=1), 10_000, axis=0)
    started = time.perf_counter()
    out = bound_module.lower_bound_report(qi, release, labels, 10_000)  # type: ignore[arg-type]
    assert time.perf_counter() - started < 2.0
    assert out["il_lower_bound"] is None and "not computed" in out["il_lower_bound_basis"]


@pytest.mark.parametrize("rows", [2, 3, 7, 4096])
@pytest.mark.parametrize("n", [1, 2, 4097, 9001])
def test_projection_by_blocks_of_rows_is_the_whole_product(
    monkeypatch: pytest.MonkeyPatch, rows: int, n: int
) -> None:
    """The principal axes' projection, written over the centred records a block of rows at a
    time (issue 33), is bit for bit the one product, whatever the block size, also when the
    last block would hold a single row (numpy multiplies one row another way)."""
    monkeypatch.setattr(bound, "_PROJECT_ROWS", rows)
    x = np.random.default_rng(n).standard_normal((n, 6)) * np.arange(1.0, 7.0)
    centred = x - x.mean(axis=0)
    _, axes = np.linalg.eigh(centred.T @ centred)
    expected = centred @ axes[:, ::-1]
    got = bound._projected_in_place(centred.copy(), axes[:, ::-1])
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("k", [2, 5])
def test_principal_bound_is_the_same_for_any_block_size_and_thread_count(
    monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    """The bound (and p) is the same float for any block of rows and any thread count."""
    x = np.random.default_rng(k).standard_normal((20_001, 5))
    values = set()
    for rows, threads in itertools.product([2, 1000, 1 << 16], [1, 2]):
        monkeypatch.setattr(bound, "_PROJECT_ROWS", rows)
        values.add(principal_bound_sse(x, k, threads))
    assert len(values) == 1


def test_principal_bound_holds_one_copy_of_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """The principal-axis bound's peak (tracemalloc) is one (n, d) block and a column's work,
    not the centred records and their projection at once (issue 33: 80 MB of the
    1,000,000 x 10 command's peak), with no nearest-neighbour search (p = 0, as there)."""
    import tracemalloc

    monkeypatch.setattr(bound, "_TREE_WORK", 1)
    monkeypatch.setattr(bound, "_FULL_SEARCH_WORK", 0)
    monkeypatch.setattr(bound, "_PROJECT_ROWS", 1024)
    n, d = 60_000, 8
    x = np.random.default_rng(9).standard_normal((n, d))
    assert principal_axes_searched(n, d, 5) == 0
    principal_bound_sse(x[:500], 5)  # warm
    tracemalloc.start()
    try:
        principal_bound_sse(x, 5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    block = x.nbytes
    assert peak < 1.6 * block, f"the principal bound peaked at {peak / block:.2f}x the records"


def test_univariate_sse_is_the_shortest_paths() -> None:
    """hansen_mukherjee_sse (the bound's, without the groups) is hansen_mukherjee's SSE bit for
    bit."""
    from microgui.core.methods.univariate import hansen_mukherjee, hansen_mukherjee_sse

    rng = np.random.default_rng(11)
    for n, k in [(2, 2), (17, 3), (5000, 5), (5000, 40)]:
        v = np.sort(rng.standard_normal(n) * 100)
        assert hansen_mukherjee_sse(v, k) == hansen_mukherjee(v, k)[1]
