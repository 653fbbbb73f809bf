"""Sweeps (issue 5): grid expansion, parallel runs, cancellation with partial results, failures."""

from __future__ import annotations

import multiprocessing
import sys
import time
import types

import numpy as np
import pandas as pd
import pytest
from reference_sets import CENSUS_CSV, census

from microgui.core.errors import InvalidParameter
from microgui.core.progress import RunCancelled
from microgui.core.runs.sweep import SweepCancelled, SweepPoint, SweepSpec, run_sweep
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists


def _dataset(n: int = 120, seed: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.lognormal(10, 0.6, n).round(2),
            "hours": rng.normal(38, 8, n).round(1),
            "region": rng.choice(["north", "south", "east"], n),
            "health": rng.normal(50, 10, n).round(2),
        }
    )
    roles = roles_from_lists(frame.columns, qi=["age", "income", "hours"], confidential=["health"])
    return Dataset(frame, roles)


def _same_measures(a: SweepPoint, b: SweepPoint) -> None:
    assert a.spec == b.spec
    assert a.error == b.error
    assert set(a.measures) == set(b.measures)
    for key, value in a.measures.items():
        other = b.measures[key]
        if value is None:
            assert other is None, key
        else:
            assert other == pytest.approx(value, rel=1e-9, abs=1e-12), key


# --- the grid -------------------------------------------------------------------------------------
def test_grid_expands_methods_k_and_only_the_declared_parameters() -> None:
    spec = SweepSpec.make(
        ["mdav", "optimal"],
        [3, "5"],
        {"rescale_variance": ["true", "false"], "max_records": ["20"]},
        seed=4,
    )
    runs = spec.run_specs()
    # mdav: 2 k × 2 rescale values; optimal: 2 k × 2 rescale × 1 max_records
    assert len(runs) == 8
    assert {r.seed for r in runs} == {4}
    assert all("max_records" not in r.param_dict for r in runs if r.method == "mdav")
    assert all(r.param_dict.get("max_records") == "20" for r in runs if r.method == "optimal")
    assert [r.k for r in runs if r.method == "mdav"] == [3, 3, 5, 5]


@pytest.mark.parametrize(
    ("methods", "ks", "grid", "fragment"),
    [
        (["nope"], [3], {}, "unknown method"),
        (["mdav"], [3], {"no_such": ["1"]}, "no_such"),
        (["mdav"], [3], {"rescale_variance": ["maybe"]}, "rescale_variance"),
        ([], [3], {}, "no method"),
        (["mdav"], [], {}, "no k"),
    ],
)
def test_grid_refuses_bad_input_before_running(
    methods: list[str], ks: list[int], grid: dict[str, list[str]], fragment: str
) -> None:
    with pytest.raises(InvalidParameter, match=fragment):
        SweepSpec.make(methods, ks, grid).run_specs()


def test_spec_built_directly_from_lists_and_a_dict() -> None:
    runs = SweepSpec(["mdav", "mst"], [3, 5], {"rescale_variance": [True]}, 7).run_specs()  # type: ignore[arg-type]
    assert [(r.method, r.k) for r in runs] == [("mdav", 3), ("mdav", 5), ("mst", 3), ("mst", 5)]
    assert all(r.param_dict == {"rescale_variance": True} and r.seed == 7 for r in runs)


def test_k_must_be_whole() -> None:
    with pytest.raises(InvalidParameter):
        SweepSpec.make(["mdav"], ["three"])


# --- running --------------------------------------------------------------------------------------
def test_workers_1_and_2_give_the_same_measures() -> None:
    dataset = _dataset()
    specs = SweepSpec.make(["mdav", "mdav-generic", "mst"], [3, 5], seed=1).run_specs()
    fractions: list[float] = []
    seen: list[SweepPoint] = []
    serial = run_sweep(
        dataset,
        specs,
        workers=1,
        progress=lambda f, s="": fractions.append(f),
        on_result=seen.append,
    )
    parallel = run_sweep(dataset, specs, workers=2)
    assert len(serial) == len(parallel) == 6
    assert [p.index for p in parallel] == list(range(6))
    for a, b in zip(serial, parallel, strict=True):
        assert a.error is None and a.report is not None
        assert a.report["min_group_size"] >= a.spec.k
        assert a.measures["k_anonymity"] >= a.spec.k
        _same_measures(a, b)
    assert seen == serial
    assert fractions[-1] == 1.0 and fractions == sorted(fractions)


def test_a_failing_run_is_recorded_not_fatal() -> None:
    dataset = _dataset(n=60)
    nominal = dataset.with_roles(
        roles_from_lists(dataset.frame.columns, qi=["age", "region"], nominal=["region"])
    )
    specs = SweepSpec.make(["optimal", "mdav"], [3], seed=0).run_specs()
    for workers in (1, 2):
        [optimal, mdav] = run_sweep(dataset, specs, workers=workers)
        assert optimal.report is None and "25 records" in (optimal.error or "")  # too large
        assert mdav.error is None
    specs = SweepSpec.make(["mdav-generic", "mdav"], [3], seed=0).run_specs()
    for workers in (1, 2):
        points = run_sweep(nominal, specs, workers=workers)
        by_method = {p.spec.method: p for p in points}
        assert by_method["mdav"].report is None
        assert "region" in (by_method["mdav"].error or "")  # mdav refuses nominal QIs
        assert "\n" not in by_method["mdav"].error  # type: ignore[operator]
        assert by_method["mdav-generic"].error is None
        assert by_method["mdav-generic"].measures["k_anonymity"] >= 3


def _fake_evaluate_module(fail: bool) -> types.ModuleType:
    module = types.ModuleType("microgui.core.metrics.evaluate")

    def evaluate(original, protected, *, labels=None, progress=None, k=None, groups=None):  # type: ignore[no-untyped-def]
        if fail:
            raise ValueError("stand-in failure\nsecond line")
        return {"information_loss": 1.0, "record_linkage": np.float64(12.5), "t_closeness": None}

    module.evaluate = evaluate  # type: ignore[attr-defined]
    module.MEASURES = {"record_linkage": ("linkage", "%", "lower is better", "risk")}  # type: ignore[attr-defined]
    return module


def test_measures_come_from_evaluate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules, "microgui.core.metrics.evaluate", _fake_evaluate_module(fail=False)
    )
    [point] = run_sweep(_dataset(), SweepSpec.make(["mdav"], [3], seed=0).run_specs(), workers=1)
    assert point.error is None
    assert point.measures["record_linkage"] == 12.5
    assert point.measures["t_closeness"] is None
    assert point.measures["information_loss"] == 1.0


def test_a_failing_measure_keeps_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules, "microgui.core.metrics.evaluate", _fake_evaluate_module(fail=True)
    )
    [point] = run_sweep(_dataset(), SweepSpec.make(["mdav"], [3], seed=0).run_specs(), workers=1)
    assert point.report is not None
    assert point.error == "measures not computed: ValueError: stand-in failure second line"
    assert point.measures["k_anonymity"] >= 3  # the report's own figures stay


def test_cancel_in_process_keeps_the_finished_runs() -> None:
    specs = SweepSpec.make(["mdav", "mst"], [3, 4, 5], seed=0).run_specs()
    got: list[SweepPoint] = []

    def progress(fraction: float, status: str = "") -> None:
        if len(got) >= 2:
            raise RunCancelled()

    with pytest.raises(SweepCancelled) as info:
        run_sweep(_dataset(), specs, workers=1, progress=progress, on_result=got.append)
    assert isinstance(info.value, RunCancelled)
    assert info.value.points == got
    assert len(got) == 2 and info.value.total == 6


def test_cancel_in_pool_keeps_partial_results_and_stops_the_workers() -> None:
    dataset = _dataset(n=400)
    specs = SweepSpec.make(["mdav", "mst", "mdav-generic", "tfrp"], [3, 4, 5, 6, 7], seed=0)
    runs = specs.run_specs()
    got: list[SweepPoint] = []
    cancelled_at: list[float] = []

    def progress(fraction: float, status: str = "") -> None:
        if got:
            cancelled_at.append(time.perf_counter())
            raise RunCancelled()

    with pytest.raises(SweepCancelled) as info:
        run_sweep(dataset, runs, workers=2, progress=progress, on_result=got.append)
    stopped = time.perf_counter() - cancelled_at[0]
    points = info.value.points
    assert 1 <= len(points) < len(runs)
    assert {p.index for p in got} <= {p.index for p in points}
    assert [p.index for p in points] == sorted(p.index for p in points)
    assert stopped < 5.0
    assert not multiprocessing.active_children()


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.skipif(not CENSUS_CSV.is_file(), reason="shared reference data absent")
def test_every_method_on_census_gives_a_result_or_an_error() -> None:
    """Every registered method at k = 3, 5, 10 on Census (13 continuous QIs). Methods that need a
    confidential column (p-sensitive, t-closeness) run on a second dataset where the last
    column is confidential and the other 12 are the quasi-identifiers. About 15-30 s on 2 cores
    (mstk dominates)."""
    from microgui.core.methods import available_methods

    frame = census()
    cols = [str(c) for c in frame.columns]
    plain = Dataset(frame, roles_from_lists(cols, qi=cols))
    with_conf = Dataset(frame, roles_from_lists(cols, qi=cols[:-1], confidential=cols[-1:]))
    methods = available_methods()
    started = time.perf_counter()
    points: list[SweepPoint] = []
    for dataset, chosen in (
        (plain, [m.name for m in methods if not m.needs_confidential]),
        (with_conf, [m.name for m in methods if m.needs_confidential]),
    ):
        specs = SweepSpec.make(chosen, [3, 5, 10], seed=1).run_specs()
        points += run_sweep(dataset, specs)
    elapsed = time.perf_counter() - started
    assert len(points) == 3 * len(methods)
    for p in points:
        if p.report is None:
            assert p.error and "\n" not in p.error, p.spec
        else:
            assert p.error is None, (p.spec, p.error)
            assert p.report["n_records"] == len(frame)
    ok = [p for p in points if p.report is not None]
    assert {p.spec.method for p in ok} >= {"mdav", "mst", "mdav-generic"}
    assert elapsed < 300, f"Census sweep took {elapsed:.1f} s"
