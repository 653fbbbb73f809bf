"""Issue 33 item 3: ``--engine spark`` and ``microgui.protect_spark`` run the partitioned
engine's split (:mod:`microgui.core.release.distributed`) on Spark, each block protected by
``groupBy(block).applyInPandas`` (:mod:`microgui.core.release.spark`), on one local[2] session.

Skipped where pyspark or Java is absent (``.ci/run`` installs both)."""

from __future__ import annotations

import json
import os
import shutil
import sys
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
from microgui.core.release import distributed as dist  # noqa: E402
from microgui.core.release import spark as spark_engine  # noqa: E402
from microgui.core.release.order import RecordOrder  # noqa: E402
from microgui.core.runs import RunSpec, run_protection  # noqa: E402
from microgui.core.table.dataset import Dataset  # noqa: E402
from microgui.core.table.roles import roles_from_lists  # noqa: E402

QI = ["age", "income", "hours"]
COMMON = ["--method", "mdav", "-k", "5", "--qi", ",".join(QI), "--identifiers", "id",
          "--block-size", "300", "--seed", "7", "--group-column", "g"]  # fmt: skip


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local[2] session for the module: quiet, no UI, two shuffle partitions; its Python
    workers run this interpreter."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("microgui-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "ERROR")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        yield session
    finally:
        session.stop()


def _table(n: int, seed: int = 4) -> pd.DataFrame:
    """Correlated quasi-identifiers with few decimals (clean numbers), an identifier, text that
    a spreadsheet would run (formula cells) and the record number, to check the order."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)
    return pd.DataFrame(
        {
            "id": [f"P{i:05d}" for i in range(n)],
            "age": age,
            "income": (rng.lognormal(10, 0.5, n) * (1 + age / 60)).round(2),
            "hours": rng.normal(38, 8, n).round(1),
            "note": [f"=cmd{i}" if i % 11 == 0 else f"x{i}" for i in range(n)],
            "record": np.arange(n),
        }
    )


def _released(folder: Path) -> pd.DataFrame:
    parts = sorted(folder.glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)


def _local(frame: pd.DataFrame, **extra: Any) -> Any:
    roles = roles_from_lists(list(frame.columns), qi=QI, identifiers=["id"])
    spec = RunSpec.make("mdav", 5, seed=7, block_size=300, workers=1, **extra)
    return run_protection(Dataset(frame, roles), spec)


def test_the_release_is_the_local_engines_and_the_dask_engines(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Parquet parts of unequal sizes (Spark packs them largest first; the record numbers put
    them back in name order): the same labels and values as the local blocked run, and as the
    Dask engine's partitioned run on the same folder."""
    frame = _table(1500)
    (tmp_path / "in").mkdir()
    for i, (a, b) in enumerate([(0, 400), (400, 1500)]):
        frame.iloc[a:b].to_parquet(tmp_path / "in" / f"part-{i}.parquet")
    out = tmp_path / "out"
    code = main(["protect", str(tmp_path / "in"), "-o", str(out), "--engine", "spark",
                 "--master", "local[2]", *COMMON, "--report", str(tmp_path / "r.json")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "split on the whole table" in err and "engine spark" in err
    released = _released(out)
    local = _local(frame)
    assert (released["record"] == frame["record"]).all()  # the input's order
    assert np.array_equal(released["g"].to_numpy(), local.labels)
    for col in QI:
        assert np.array_equal(released[col].to_numpy(), local.protected[col].to_numpy(float))
    assert "id" not in released and released["note"].iloc[0] == "'=cmd0"  # neutralized
    # independently of microgui: every released value is its group's mean
    for col in QI:
        means = frame.groupby(released["g"])[col].transform("mean")
        assert np.allclose(released[col], means, rtol=1e-12, atol=1e-9)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["information_loss"] == pytest.approx(local.information_loss, rel=1e-9)
    assert report["n_groups"] == local.report["n_groups"] and report["k_anonymity"] >= 5
    assert report["neutralized_cells"] == {"note": 137}
    assert report["scale"]["n_blocks"] == 5 and report["scale"]["partitioned"] is True
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
        dist.protect_partitioned(
            tmp_path / "in",
            tmp_path / "dask",
            spec,
            qi=QI,
            identifiers=["id"],
            group_column="g",
            order=RecordOrder(keep=True),  # the Spark engine writes the input's order
        )
    finally:
        cluster.close()
    dask = _released(tmp_path / "dask")
    pd.testing.assert_frame_equal(
        released, dask, check_dtype=False, check_exact=True, check_column_type=False
    )


def test_the_api_takes_and_returns_a_spark_dataframe(spark: Any) -> None:
    """microgui.protect_spark on a DataFrame of two partitions gives microgui.protect's release
    of the same records with the same block size and seed."""
    frame = _table(1200, seed=9)
    given = spark.createDataFrame(frame).coalesce(2)
    result = protect_spark(
        given, qi=QI, identifiers="id", method="mdav", k=5, block_size=300, seed=7,
        group_column="g",
    )  # fmt: skip
    from pyspark.sql import DataFrame

    assert isinstance(result.frame, DataFrame)
    released = result.frame.toPandas()
    assert len(released) == 1200 and "id" not in released
    assert (released["record"] == frame["record"]).all()
    local = protect(frame, qi=QI, identifiers="id", k=5, block_size=300, seed=7, workers=1)
    assert np.array_equal(released["g"].to_numpy(), local.partition.to_numpy())
    for col in QI:
        assert np.array_equal(released[col].to_numpy(), local.frame[col].to_numpy(float))
    assert result.report["information_loss"] == pytest.approx(local.report["information_loss"])
    assert result.report["output"] is None


@pytest.mark.slow  # a minute on a busy 2-core machine: its own Spark jobs of every stage
def test_the_sample_split_of_a_larger_table(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SAMPLE_ROWS the blocks come from a sample's split (ties too): every group >= k,
    the input's order kept, the IL close to local blocking."""
    monkeypatch.setattr(dist, "SAMPLE_ROWS", 800)
    frame = _table(4000, seed=2)
    frame["hours"] = np.floor(frame["hours"] / 10)  # heavy ties on the axis
    frame.to_csv(tmp_path / "t.csv", index=False)
    spec = RunSpec.make("mdav", 5, seed=7, block_size=300, engine="spark")
    report = spark_engine.protect_spark(
        tmp_path / "t.csv", tmp_path / "out", spec, qi=QI, identifiers=["id"], group_column="g"
    )
    assert report["scale"]["split"].startswith("sample of")
    assert report["scale"]["n_blocks"] >= 10
    released = _released(tmp_path / "out")
    assert (released["record"] == frame["record"]).all()
    assert released.groupby("g").size().min() >= 5
    assert report["information_loss"] == pytest.approx(_local(frame).information_loss, rel=0.05)


def test_an_executor_with_another_version_is_refused(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spark_engine, "_executor_version", lambda: "0.0.1")
    _table(600).to_parquet(tmp_path / "t.parquet")
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
    frame = _table(600)
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
    odd = frame.astype({"age": object})
    odd.loc[303, "age"] = "abc"
    odd.to_csv(tmp_path / "t.csv", index=False)
    assert main([*base[:1], str(tmp_path / "t.csv"), *base[2:]]) == 2
    err = capsys.readouterr().err
    assert "quasi-identifier 'age'" in err and "record 304 is no number" in err, err
    assert "abc" not in err and len(err.strip().splitlines()) == 1
    assert main([*base, "--strata", "note"]) == 2
    assert "--strata is not available with --engine spark" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.parquet"]
