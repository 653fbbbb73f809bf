"""Scale (issue 6): strata, automatic blocking, the local and Dask engines, cancellation, errors."""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles
from microgui.core.metrics import k_anonymity_level
from microgui.core.progress import RunCancelled
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.runs.scale import block_rows, qi_embedding, strata_of
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import roles_from_lists

QI = ["age", "income", "hours", "edu", "sector"]
EDU = ["primary", "secondary", "bachelor", "master"]


def _dataset(
    n: int = 900, seed: int = 5, region_sizes: tuple[int, ...] = (), mixed: bool = True
) -> Dataset:
    """Mixed quasi-identifiers, a confidential column, a text column that must pass through
    untouched, and a stratum column ``region`` (by default three strata of random sizes)."""
    rng = np.random.default_rng(seed)
    if region_sizes:
        region = np.repeat(["north", "south", "east", "west"][: len(region_sizes)], region_sizes)
        region = rng.permutation(region)
        n = len(region)
    else:
        region = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])
    age = rng.integers(18, 90, n).astype(float)
    frame = pd.DataFrame(
        {
            "id": [f"P{i:05d}" for i in range(n)],
            "age": age,
            "income": (rng.lognormal(10, 0.6, n) * (1 + age / 50)).round(2),
            "hours": rng.normal(38, 8, n).round(1),
            "edu": rng.choice(EDU, n),
            "sector": rng.choice(["a", "b", "c"], n),
            "region": region,
            "note": [f'0{i}.50, "x"' if i % 7 else None for i in range(n)],
            "health": rng.normal(50, 10, n).round(3),
        },
        index=pd.RangeIndex(1000, 1000 + n),  # a non-default index must survive
    )
    roles = roles_from_lists(
        list(frame.columns),
        qi=QI if mixed else QI[:3],
        identifiers=["id"],
        confidential=["health"],
        ordinal={"edu": EDU} if mixed else None,
        nominal=["sector"] if mixed else (),
    )
    return Dataset(frame, roles)


def _continuous(n: int, d: int = 4, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)) @ np.linalg.cholesky(0.5 + 0.5 * np.eye(d)).T
    names = [f"x{j}" for j in range(d)]
    frame = pd.DataFrame(x, columns=names)
    frame["keep"] = np.arange(n)
    return Dataset(frame, roles_from_lists(list(frame.columns), qi=names))


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to renumbering: the pairs (a, b) are one-to-one."""
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _check_release(dataset: Dataset, result: RunResult, k: int) -> None:
    """Rows neither lost nor reordered, non-QI columns the very same data, groups >= k."""
    frame, out = dataset.frame, result.protected
    qi = dataset.roles.quasi_identifiers
    assert list(out.index) == list(frame.index)
    assert "id" not in out.columns
    for col in ("region", "note", "health"):
        pd.testing.assert_series_equal(out[col], frame[col])
    assert np.bincount(result.labels).min() >= k
    assert sorted(set(result.labels.tolist())) == list(range(result.n_groups))
    assert k_anonymity_level(out, qi) >= k
    assert result.report["k_anonymity"] >= k


# --- strata ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "params"),
    [("mdav-generic", {}), ("mdav-generic", {"rescale_variance": "true"}), ("mst", {})],
)
def test_strata_equal_each_stratum_run_alone(method: str, params: dict[str, str]) -> None:
    dataset = _dataset(mixed=method != "mst")
    qi = dataset.roles.quasi_identifiers
    k = 4
    result = run_protection(
        dataset, RunSpec.make(method, k, params, seed=3, strata=["region"], workers=1)
    )
    _check_release(dataset, result, k)
    region = dataset.frame["region"].to_numpy()
    groups_seen = 0
    for value in ("north", "south", "east"):
        mask = region == value
        alone = run_protection(
            Dataset(dataset.frame[mask], dataset.roles), RunSpec.make(method, k, params, seed=3)
        )
        assert _same_partition(result.labels[mask], alone.labels)
        pd.testing.assert_frame_equal(result.protected.loc[mask, qi], alone.protected[qi])
        # a group never spans two strata
        assert not set(result.labels[mask].tolist()) & set(result.labels[~mask].tolist())
        groups_seen += alone.n_groups
    assert result.n_groups == groups_seen
    scale = result.report["scale"]
    assert scale["strata"] == ["region"] and scale["n_strata"] == 3
    assert scale["stratum_sizes"]["min"] == min(np.unique(region, return_counts=True)[1])


def test_a_stratum_column_that_is_a_quasi_identifier_keeps_its_values() -> None:
    dataset = _dataset()
    result = run_protection(dataset, RunSpec.make("mdav-generic", 3, seed=0, strata="sector,edu"))
    _check_release(dataset, result, 3)
    for col in ("sector", "edu"):
        pd.testing.assert_series_equal(result.protected[col], dataset.frame[col])
    assert result.report["scale"]["n_strata"] == dataset.frame.groupby(["sector", "edu"]).ngroups


def test_strata_numbered_by_first_appearance_with_missing_values_as_a_stratum() -> None:
    frame = pd.DataFrame({"a": ["x", None, "y", "x", None], "b": [1, 1, 1, 1, 1]})
    codes, names = strata_of(frame, ["a", "b"])
    assert codes.tolist() == [0, 1, 2, 0, 1]
    assert names == ["a='x', b=1", "a=missing, b=1", "a='y', b=1"]


def test_a_stratum_smaller_than_k_is_refused_by_name_and_size() -> None:
    dataset = _dataset(region_sizes=(300, 200, 3))
    with pytest.raises(
        InvalidInput, match=r"stratum region='east' has 3 record\(s\), fewer than k=5"
    ):
        run_protection(dataset, RunSpec.make("mdav-generic", 5, strata=["region"]))


# --- blocking -------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(6, 400),
    k=st.integers(2, 6),
    factor=st.integers(2, 10),
    d=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    ties=st.booleans(),
)
def test_blocks_partition_the_rows_with_sizes_between_k_and_the_block_size(
    n: int, k: int, factor: int, d: int, seed: int, ties: bool
) -> None:
    if n < k:
        return
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (n, d)).astype(float) if ties else rng.normal(size=(n, d))
    size = factor * k
    blocks = block_rows(x, k, size)
    rows = np.concatenate(blocks)
    assert sorted(rows.tolist()) == list(range(n))
    for block in blocks:
        assert np.all(np.diff(block) > 0)
        assert len(block) <= size or n <= size
        assert len(block) >= k
    if n % k == 0:  # every split lands on a multiple of k
        assert all(len(b) % k == 0 for b in blocks)
    again = block_rows(x, k, size)  # deterministic
    assert len(again) == len(blocks)
    assert all(np.array_equal(a, b) for a, b in zip(again, blocks, strict=True))


def test_blocks_are_spatially_coherent() -> None:
    """On a line the principal axis is the line: every block is an interval of the values."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1000, 1))
    blocks = block_rows(x, 5, 100)
    assert [len(b) for b in blocks] == [100] * 10  # 1000 = 10 full blocks: 500|500, 200|300, ...
    spans = sorted((x[b, 0].min(), x[b, 0].max()) for b in blocks)
    assert all(hi < lo for (_, hi), (lo, _) in zip(spans, spans[1:], strict=False))


def test_embedding_reproduces_the_mdav_generic_distance() -> None:
    dataset = _dataset(n=50)
    qi = prepare_qi(dataset)
    e = qi_embedding(qi)
    i, j = 3, 17
    want = np.sum((qi.continuous[i] - qi.continuous[j]) ** 2)
    want += np.sum(((qi.ordinal[i] - qi.ordinal[j]) / qi.ordinal_sizes) ** 2)
    want += np.sum(qi.nominal[i] != qi.nominal[j])
    assert np.sum((e[i] - e[j]) ** 2) == pytest.approx(want)


def test_blocked_run_is_k_anonymous_and_reports_its_blocks() -> None:
    dataset = _dataset(n=1200)
    result = run_protection(
        dataset, RunSpec.make("mdav-generic", 5, seed=0, block_size=250, workers=1)
    )
    _check_release(dataset, result, 5)
    scale = result.report["scale"]
    assert scale["n_blocks"] == 5 and scale["block_size"] == 250  # ceil(1200 / 250)
    assert 5 <= scale["block_sizes"]["min"] <= scale["block_sizes"]["max"] <= 250
    assert scale["engine"] == "in-process"


def test_no_blocking_by_default_and_one_block_is_the_exact_run() -> None:
    dataset = _continuous(700)
    exact = run_protection(dataset, RunSpec.make("mdav", 5, seed=0))
    assert "scale" not in exact.report
    one = run_protection(dataset, RunSpec.make("mdav", 5, seed=0, block_size=700))
    assert np.array_equal(one.labels, exact.labels)
    pd.testing.assert_frame_equal(one.protected, exact.protected)
    assert one.report["scale"]["n_blocks"] == 1


def test_strata_and_blocks_together() -> None:
    dataset = _dataset(n=1500)
    result = run_protection(
        dataset, RunSpec.make("mdav-generic", 4, seed=0, strata=["region"], block_size=200)
    )
    _check_release(dataset, result, 4)
    scale = result.report["scale"]
    assert scale["n_strata"] == 3 and scale["n_blocks"] > 3
    assert scale["block_sizes"]["max"] <= 200


# --- engines --------------------------------------------------------------------------------------
def test_local_pool_gives_the_labels_of_the_in_process_run() -> None:
    """Also for a seeded method: each block's generator comes from the spec seed and the block."""
    for method in ("mdav-generic", "dp-individual-ranking"):
        dataset = _dataset(n=1200, mixed=method == "mdav-generic")
        spec = RunSpec.make(method, 4, seed=11, strata=["region"], block_size=250)
        one = run_protection(dataset, replace(spec, workers=1))
        two = run_protection(dataset, replace(spec, workers=2))
        assert two.report["scale"]["engine"] == "local" and two.report["scale"]["processes"] == 2
        assert np.array_equal(one.labels, two.labels)
        pd.testing.assert_frame_equal(one.protected, two.protected)
    assert not multiprocessing.active_children()


@pytest.fixture(scope="module")
def dask_scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,  # one worker thread pool in this process: light, and loopback only
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def test_dask_run_equals_the_local_run(dask_scheduler: str) -> None:
    dataset = _dataset(n=1200)
    spec = RunSpec.make("mdav-generic", 4, seed=2, strata=["region"], block_size=250)
    local = run_protection(dataset, spec)
    remote = run_protection(
        dataset,
        RunSpec.make(
            "mdav-generic",
            4,
            seed=2,
            strata=["region"],
            block_size=250,
            engine="dask",
            scheduler=dask_scheduler,
        ),
    )
    assert remote.report["scale"]["engine"] == f"dask ({dask_scheduler})"
    assert np.array_equal(local.labels, remote.labels)
    pd.testing.assert_frame_equal(local.protected, remote.protected)


def test_dask_cancel_raises_and_leaves_the_cluster_usable(dask_scheduler: str) -> None:
    dataset = _continuous(4000)
    spec = RunSpec.make("mdav", 5, seed=0, block_size=500, engine="dask", scheduler=dask_scheduler)

    def cancel(fraction: float, status: str = "") -> None:
        if "blocks" in status:
            raise RunCancelled()

    with pytest.raises(RunCancelled):
        run_protection(dataset, spec, cancel)
    assert run_protection(dataset, spec).report["scale"]["n_blocks"] == 8


def test_dask_errors_are_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    import microgui.core.runs.scale

    monkeypatch.setattr(microgui.core.runs.scale, "DASK_CONNECT_SECONDS", 1.0)
    dataset = _continuous(400)
    spec = RunSpec.make("mdav", 5, block_size=100, engine="dask", scheduler="tcp://127.0.0.1:9")
    with pytest.raises(InvalidParameter, match="cannot reach the Dask scheduler"):
        run_protection(dataset, spec)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(InvalidParameter, match=r'pip install "microgui\[dask\]"'):
        run_protection(dataset, spec)


# --- progress and cancellation --------------------------------------------------------------------
def test_progress_per_block_and_cancel_in_process() -> None:
    dataset = _continuous(2000)
    statuses: list[str] = []

    def record(fraction: float, status: str = "") -> None:
        statuses.append(status)

    run_protection(dataset, RunSpec.make("mdav", 5, block_size=250, workers=1), record)
    finished = [s for s in statuses if s.endswith(" blocks")]
    assert finished == [f"{i}/8 blocks" for i in range(1, 9)]

    started: list[str] = []

    def cancel_after_two(fraction: float, status: str = "") -> None:
        if status.startswith("block ") and not status.endswith(" blocks"):
            started.append(status.split(":")[0])
        if status == "2/8 blocks":
            raise RunCancelled()

    with pytest.raises(RunCancelled):
        run_protection(
            dataset, RunSpec.make("mdav", 5, block_size=250, workers=1), cancel_after_two
        )
    assert len(set(started)) == 2  # the third block never started


def test_cancel_in_pool_stops_the_running_blocks() -> None:
    """Three blocks of 60,000 records (about a second of MDAV each): the cancel comes while
    they run, and the workers stop at their next checkpoint instead of finishing."""
    dataset = _continuous(180_000, d=4)
    ticks: list[float] = []

    def cancel(fraction: float, status: str = "") -> None:
        if status.endswith(" blocks"):
            ticks.append(time.perf_counter())
            if len(ticks) == 5:  # half a second into the pool
                raise RunCancelled()

    with pytest.raises(RunCancelled):
        run_protection(dataset, RunSpec.make("mdav", 5, block_size=60_000, workers=2), cancel)
    assert time.perf_counter() - ticks[-1] < 3.0
    assert not multiprocessing.active_children()


# --- options and messages -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"strata": ["nope"]},
            InvalidRoles,
            "--strata names column 'nope', which is not in the table",
        ),
        ({"strata": ["id"]}, InvalidRoles, "strata column 'id' is an identifier"),
        ({"strata": ["region", "region"]}, InvalidParameter, "names a column twice"),
        ({"block_size": 9}, InvalidParameter, "block size 9 is smaller than 2k = 10"),
        ({"block_size": "many"}, InvalidParameter, "block size 'many' is not a whole number"),
        ({"engine": "spark"}, InvalidParameter, "unknown engine 'spark'"),
        (
            {"engine": "dask", "block_size": 100},
            InvalidParameter,
            "needs the address of a Dask scheduler",
        ),
        ({"scheduler": "tcp://h:1"}, InvalidParameter, "used only by --engine dask"),
        ({"workers": 0}, InvalidParameter, "workers=0 must be a whole number >= 1"),
        (
            {"engine": "dask", "scheduler": "tcp://h:1", "workers": 2},
            InvalidParameter,
            "drop --workers",
        ),
    ],
)
def test_bad_options_are_refused_with_a_message(
    options: dict[str, object], error: type[Exception], message: str
) -> None:
    dataset = _dataset(n=200)
    with pytest.raises(error, match=message.replace("[", r"\[")):
        run_protection(dataset, RunSpec.make("mdav-generic", 5, **options))  # type: ignore[arg-type]


def test_block_errors_name_the_block() -> None:
    """A method refusing one block says which (p-sensitive needs distinct confidential values)."""
    dataset = _dataset(n=600)
    frame = dataset.frame.copy()
    frame["health"] = np.where(frame["region"] == "east", 1.0, frame["health"])
    dataset = Dataset(frame, dataset.roles)
    with pytest.raises(InvalidParameter, match="stratum region=.east."):
        run_protection(
            dataset,
            RunSpec.make("p-sensitive", 3, {"p": 2}, seed=0, strata=["region"], workers=1),
        )


def test_spec_json_has_the_new_fields_and_old_specs_get_the_defaults() -> None:
    spec = RunSpec.make(
        "mdav", 5, seed=1, strata="region, sex", block_size="20000", engine="dask",
        scheduler="tcp://h:8786",
    )  # fmt: skip
    data = spec.to_json()
    assert data["strata"] == ["region", "sex"] and data["block_size"] == 20000
    assert data["engine"] == "dask" and data["scheduler"] == "tcp://h:8786"
    assert data["workers"] is None
    old = RunSpec.make("mdav", 5, {}, 1)  # a spec saved before issue 6 has none of them
    assert (old.strata, old.block_size, old.engine, old.scheduler, old.workers) == (
        (),
        None,
        "local",
        None,
        None,
    )
    assert not old.scaled and spec.scaled


def test_python_api_takes_the_scale_options() -> None:
    import microgui

    frame = _dataset(n=400).frame
    res = microgui.protect(
        frame,
        qi=["age", "income"],
        identifiers=["id"],
        method="mdav",
        k=4,
        seed=0,
        strata=["region"],
        block_size=60,
    )
    scale = res.report["scale"]
    assert scale["n_strata"] == 3 and scale["block_sizes"]["max"] <= 60
    assert res.run.spec.strata == ("region",) and res.run.spec.block_size == 60
    assert res.report["k_anonymity"] >= 4


def test_block_size_auto_is_exact_on_small_tables_and_blocks_large_ones() -> None:
    from microgui.core.runs.scale import AUTO_BLOCK_SIZE, AUTO_EXACT_MAX, resolve_block_size

    assert resolve_block_size("auto", AUTO_EXACT_MAX, 5) is None
    assert resolve_block_size("auto", AUTO_EXACT_MAX + 1, 5) == AUTO_BLOCK_SIZE
    assert resolve_block_size(None, 10**7, 5) is None
    assert resolve_block_size(1234, 10, 5) == 1234
    spec = RunSpec.make("mdav", 3, seed=1, block_size="AUTO")
    assert spec.block_size == "auto" and spec.to_json()["block_size"] == "auto"
    assert not spec.scaled_for(AUTO_EXACT_MAX) and spec.scaled_for(AUTO_EXACT_MAX + 1)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    ds = Dataset.from_frame(frame, roles_from_lists(frame.columns, qi=["a", "b", "c"]))
    auto = run_protection(ds, spec)
    exact = run_protection(ds, RunSpec.make("mdav", 3, seed=1))
    np.testing.assert_array_equal(auto.labels, exact.labels)
    assert "scale" not in auto.report
