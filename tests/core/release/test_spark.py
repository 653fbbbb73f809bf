"""Issue 33 item 3: ``--engine spark`` and ``microgui.protect_spark`` run the partitioned
engine's split (:mod:`microgui.core.release.distributed`) on Spark, each block protected by
``groupBy(block).applyInPandas`` (:mod:`microgui.core.release.spark`).

One local[1] session for the whole run and tiny tables: every Spark job costs about a second,
so each test makes the fewest runs that still check what it names. Skipped where pyspark or
Java is absent (``.ci/run`` installs both)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (17 or later)", allow_module_level=True)

from microgui._version import __version__  # noqa: E402
from microgui.api import protect, protect_spark  # noqa: E402
from microgui.cli import main  # noqa: E402
from microgui.core.errors import InvalidParameter  # noqa: E402
from microgui.core.progress import RunCancelled  # noqa: E402
from microgui.core.release import distributed as dist  # noqa: E402
from microgui.core.release import spark as spark_engine  # noqa: E402
from microgui.core.release.order import RecordOrder  # noqa: E402
from microgui.core.runs import RunSpec, run_protection  # noqa: E402
from microgui.core.table.dataset import Dataset  # noqa: E402
from microgui.core.table.roles import roles_from_lists  # noqa: E402
from tests.partitioned_tables import partitioned_table  # noqa: E402

QI = ["age", "income", "hours"]
COMMON = ["--method", "mdav", "-k", "5", "--qi", ",".join(QI), "--identifiers", "id",
          "--block-size", "300", "--seed", "7", "--group-column", "g"]  # fmt: skip


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[1] session for the test run (one executor slot: one Python worker to start
    and warm): quiet, no UI, one shuffle partition, no adaptive planning (half the time of a
    run on these tiny tables); its Python workers run this interpreter."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[1]")
        .appName("microgui-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.adaptive.enabled", "false")  # tiny tables: fewer planning jobs
        .getOrCreate()
    )
    try:
        yield session
    finally:
        session.stop()


def _released(folder: Path) -> pd.DataFrame:
    parts = sorted(folder.glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)


def _local(frame: pd.DataFrame) -> Any:
    roles = roles_from_lists(list(frame.columns), qi=QI, identifiers=["id"])
    spec = RunSpec.make("mdav", 5, seed=7, block_size=300, workers=1)
    return run_protection(Dataset(frame, roles), spec)


def test_the_release_is_the_local_engines_and_the_dask_engines(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Parquet parts of unequal sizes (Spark packs them into one split; the record numbers put
    them back in name order), random order with an order seed: each part's records are the
    part's own, shuffled; sorted back, the labels and values are the local blocked run's; and
    the parts, read in order, are the Dask engine's release with the same seeds, row for row."""
    frame = partitioned_table(1500)
    (tmp_path / "in").mkdir()
    bounds = [(0, 400), (400, 1500)]
    for i, (a, b) in enumerate(bounds):
        frame.iloc[a:b].to_parquet(tmp_path / "in" / f"part-{i}.parquet")
    out = tmp_path / "out"
    code = main(["protect", str(tmp_path / "in"), "-o", str(out), "--engine", "spark",
                 "--master", "local[1]", *COMMON, "--order-seed", "11",
                 "--report", str(tmp_path / "r.json")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "split on the whole table" in err and "engine spark" in err
    assert "input's order" not in err  # the note of the engine that did not shuffle is gone
    released = _released(out)
    record = released["record"].to_numpy()
    for a, b in bounds:  # every input partition's records stay together, shuffled
        assert sorted(record[a:b]) == list(range(a, b))
        assert (record[a:b] != np.arange(a, b)).mean() > 0.9
    back = released.set_index("record").sort_index()
    local = _local(frame)
    assert np.array_equal(back["g"].to_numpy(), local.labels)
    for col in QI:
        assert np.array_equal(back[col].to_numpy(), local.protected[col].to_numpy(float))
        # independently of microgui: every released value is its group's mean
        means = frame.groupby(back["g"].to_numpy())[col].transform("mean")
        assert np.allclose(back[col], means, rtol=1e-12, atol=1e-9)
    assert "id" not in released and back["note"].iloc[0] == "'=cmd0"  # neutralized
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["information_loss"] == pytest.approx(local.information_loss, rel=1e-9)
    assert report["n_groups"] == local.report["n_groups"] and report["k_anonymity"] >= 5
    assert report["neutralized_cells"] == {"note": 137}
    assert report["scale"]["n_blocks"] == 5 and report["scale"]["partitioned"] is True
    assert report["record_order"]["order"] == "random" and report["record_order"]["seed"] == 11
    assert "shuffled among themselves" in report["record_order"]["note"]
    marker = json.loads((out / dist.MARKER).read_text())
    assert marker["parts"] == sorted(p.name for p in out.glob("part-*"))
    text = (tmp_path / "r.json").read_text()
    assert "P00001" not in text and "cmd" not in text  # no value of a record in the report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out", "r.json"]  # no temp left

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
        host="127.0.0.1", dashboard_address=None,
    )  # fmt: skip
    try:
        spec = RunSpec.make(
            "mdav", 5, seed=7, block_size=300, engine="dask", scheduler=cluster.scheduler_address
        )
        job = dist.PartitionedJob.make(
            tmp_path / "in", tmp_path / "dask", spec, qi=QI, identifiers=["id"],
            group_column="g", order=RecordOrder(seed=11),
        )  # fmt: skip
        dask_report = job.run()
    finally:
        cluster.close()
    dask = _released(tmp_path / "dask")
    pd.testing.assert_frame_equal(
        released, dask, check_dtype=False, check_exact=True, check_column_type=False
    )
    # the one report code of both engines: the same keys, the same measures
    assert set(dask_report) == set(report)
    for key in ("n_groups", "group_size_counts", "k_anonymity"):
        assert dask_report[key] == report[key], key
    dask_order, spark_order = dict(dask_report["record_order"]), dict(report["record_order"])
    assert dask_order.pop("note") != spark_order.pop("note")  # each engine says how it shuffles
    assert dask_order == spark_order
    assert dask_report["information_loss"] == pytest.approx(report["information_loss"], rel=1e-12)


def test_the_api_takes_and_returns_a_spark_dataframe(spark: Any) -> None:
    """microgui.protect_spark on a DataFrame of two range partitions (whose bounds Spark samples
    anew on every evaluation: numbered once) with keep_order gives microgui.protect's release
    of the same records, in their order, with the same block size and seed."""
    frame = partitioned_table(700, seed=9)
    given = (
        spark.createDataFrame(frame).repartitionByRange(2, "record").sortWithinPartitions("record")
    )
    assert given.rdd.getNumPartitions() == 2
    result = protect_spark(
        given, qi=QI, identifiers="id", method="mdav", k=5, block_size=300, seed=7,
        group_column="g", keep_order=True,
    )  # fmt: skip
    from pyspark.sql import DataFrame

    assert isinstance(result.frame, DataFrame)
    released = result.frame.toPandas()
    assert len(released) == 700 and "id" not in released
    assert (released["record"] == frame["record"]).all()  # the input's order kept
    local = protect(frame, qi=QI, identifiers="id", k=5, block_size=300, seed=7, workers=1)
    assert np.array_equal(released["g"].to_numpy(), local.partition.to_numpy())
    for col in QI:
        assert np.array_equal(released[col].to_numpy(), local.frame[col].to_numpy(float))
    assert result.report["information_loss"] == pytest.approx(local.report["information_loss"])
    assert result.report["output"] is None
    assert result.report["record_order"]["order"] == "input"


def test_the_sample_split_of_a_larger_table(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SAMPLE_ROWS (made small here) the blocks come from a sample's split, on a CSV
    input with heavy ties on the axis: every group has at least k records, every record is
    released once, the order is the input's (--keep-order), the IL close to local blocking."""
    monkeypatch.setattr(dist, "SAMPLE_ROWS", 300)
    frame = partitioned_table(1000, seed=2)
    frame["hours"] = np.floor(frame["hours"] / 10)  # heavy ties on the axis
    frame.to_csv(tmp_path / "t.csv", index=False)
    spec = RunSpec.make("mdav", 5, seed=7, block_size=250, engine="spark")
    report = spark_engine.protect_spark(
        tmp_path / "t.csv", tmp_path / "out", spec, qi=QI, identifiers=["id"],
        group_column="g", order=RecordOrder(keep=True),
    )  # fmt: skip
    assert report["scale"]["split"].startswith("sample of")
    assert report["scale"]["n_blocks"] >= 3
    assert report["record_order"]["order"] == "input"
    released = _released(tmp_path / "out")
    assert (released["record"] == frame["record"]).all()
    assert released.groupby("g").size().min() >= 5
    roles = roles_from_lists(list(frame.columns), qi=QI, identifiers=["id"])
    local = run_protection(Dataset(frame, roles), RunSpec.make("mdav", 5, seed=7, block_size=250))
    assert report["information_loss"] == pytest.approx(local.information_loss, rel=0.1)


def test_the_positions_are_the_dask_engines_permutations() -> None:
    """Without Spark: the place of every record (the pandas UDF) is where the Dask engine's
    ``_write_part`` puts it (part i permuted by ``SeedSequence(entropy, spawn_key=(i,))``),
    whatever batches the records come in; the same entropy, the same places."""
    sizes = np.array([5, 1, 9], dtype=np.int64)
    offsets = np.array([0, 5, 6], dtype=np.int64)
    ids = np.arange(15)
    place = spark_engine._positions(offsets, sizes, 123)
    whole = place(pd.Series(ids)).to_numpy()
    assert sorted(whole) == list(range(15))
    for batch in ([7, 0, 14], [3, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13]):
        assert np.array_equal(place(pd.Series(ids[batch])).to_numpy(), whole[batch])
    released = np.empty(15, dtype=np.int64)
    released[whole] = ids  # the record at each place
    for part, (o, m) in enumerate(zip(offsets, sizes, strict=True)):
        rng = np.random.default_rng(np.random.SeedSequence(123, spawn_key=(part,)))
        assert np.array_equal(released[o : o + m], o + rng.permutation(m))
    assert not np.array_equal(whole, spark_engine._positions(offsets, sizes, 124)(pd.Series(ids)))


def test_an_executor_with_another_version_is_refused(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spark_engine, "_executor_version", lambda: "0.0.1")
    partitioned_table(600).to_parquet(tmp_path / "t.parquet")
    spec = RunSpec.make("mdav", 5, seed=7, block_size=300, engine="spark")
    with pytest.raises(InvalidParameter) as info:
        spark_engine.protect_spark(tmp_path / "t.parquet", tmp_path / "out", spec, qi=QI)
    text = str(info.value)
    assert "runs microgui 0.0.1" in text and f"this driver runs microgui {__version__}" in text
    assert f'pip install "microgui-sdc[spark]=={__version__}"' in text and "\n" not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]  # nothing written


def test_a_bad_master_url_or_input_is_one_line(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any Spark job: bad master URLs, strata; refused by the first jobs: text in
    a quasi-identifier (the record named, never the value)."""
    frame = partitioned_table(600)
    frame.to_parquet(tmp_path / "t.parquet")
    base = ["protect", str(tmp_path / "t.parquet"), "-o", str(tmp_path / "out"),
            "--engine", "spark", *COMMON]  # fmt: skip
    for master, message in [
        ("bogus://x", "is not a Spark master URL"),
        ("spark://127.0.0.1:9", "cannot reach the Spark master at '127.0.0.1:9'"),
        ("local[0]", "is not a Spark master URL"),
    ]:
        assert main([*base, "--master", master]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert main([*base, "--strata", "note"]) == 2
    assert "--strata is not available with --engine spark" in capsys.readouterr().err
    odd = frame.astype({"age": object})
    odd.loc[303, "age"] = "abc"
    odd.to_csv(tmp_path / "t.csv", index=False)
    assert main([*base[:1], str(tmp_path / "t.csv"), *base[2:]]) == 2
    err = capsys.readouterr().err
    assert "quasi-identifier 'age'" in err and "record 304 is no number" in err, err
    assert "abc" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.parquet"]


def test_a_cancel_stops_the_running_spark_job_and_leaves_nothing(
    spark: Any, tmp_path: Path
) -> None:
    """The progress callback raises RunCancelled while the blocks' job runs (the app's and the
    API's cancel; Ctrl-C raises KeyboardInterrupt the same way): the run's job group is
    cancelled at once, the session stays usable, nothing is written."""
    partitioned_table(600).to_parquet(tmp_path / "t.parquet")
    spec = RunSpec.make("mdav", 5, seed=7, block_size=300, engine="spark")
    seen: list[str] = []

    def cancel(fraction: float, status: str = "") -> None:
        seen.append(status)
        if status == "blocks" and seen.count("blocks") > 1:  # the job has started
            raise RunCancelled()

    started = time.monotonic()
    with pytest.raises(RunCancelled):
        spark_engine.protect_spark(
            tmp_path / "t.parquet", tmp_path / "out", spec, qi=QI, progress=cancel
        )
    assert "blocks" in seen and time.monotonic() - started < 60
    tracker = spark.sparkContext.statusTracker()
    assert tracker.getActiveJobsIds() == []  # cancelled, not left running
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
    assert spark.range(3).count() == 3  # the session goes on
