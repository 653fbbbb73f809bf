"""Issue 17 item 3: ``--engine dask`` reads, protects and writes a table in partitions on a
Dask cluster (:mod:`microgui.core.release.distributed`), on a loopback LocalCluster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.dataframe")

from microgui._version import __version__  # noqa: E402
from microgui.cli import main  # noqa: E402
from microgui.core import distributed as partitioned  # noqa: E402
from microgui.core import scale  # noqa: E402
from microgui.core.errors import ExportRefused, InvalidInput, InvalidParameter  # noqa: E402
from microgui.core.progress import RunCancelled  # noqa: E402
from microgui.core.release.order import RecordOrder  # noqa: E402
from microgui.core.runs import RunSpec, run_protection  # noqa: E402
from microgui.core.runs.scale import block_rows  # noqa: E402
from microgui.core.table.dataset import Dataset  # noqa: E402
from microgui.core.table.roles import roles_from_lists  # noqa: E402
from tests.partitioned_tables import partitioned_table  # noqa: E402

QI = ["age", "income", "hours"]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,  # in this process: light, loopback only
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


_table = partitioned_table


def _write_csv_parts(frame: pd.DataFrame, folder: Path, parts: int) -> None:
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[chunk].to_csv(folder / f"part-{i}.csv", index=False)


def _spec(scheduler: str | None = None, **extra: object) -> RunSpec:
    options: dict[str, object] = {"block_size": 300, **extra}
    if scheduler is not None:
        options.update(engine="dask", scheduler=scheduler)
    return RunSpec.make("mdav", 5, seed=7, **options)  # type: ignore[arg-type]


def _protect(source: Path, out: Path, spec: RunSpec, **extra: object) -> dict[str, object]:
    """The partitioned run, each part in the input's order unless ``order`` is given (these
    tests compare rows with the input and the local engine)."""
    extra = {"order": RecordOrder(keep=True), **extra}
    return partitioned.protect_partitioned(
        source,
        out,
        spec,
        qi=QI,
        identifiers=["id"],
        **extra,  # type: ignore[arg-type]
    )


def _parts(folder: Path) -> list[Path]:
    return sorted(folder.glob("part-*"))


# --- identical to the local engine ---------------------------------------------------------------
def test_csv_parts_are_byte_identical_to_the_local_engine(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _table(1500)
    frame.to_csv(tmp_path / "whole.csv", index=False)
    _write_csv_parts(frame, tmp_path / "in", 3)
    common = ["--method", "mdav", "-k", "5", "--qi", ",".join(QI), "--identifiers", "id",
              "--block-size", "300", "--seed", "7", "--group-column", "g"]  # fmt: skip
    local, out = tmp_path / "local.csv", tmp_path / "out.csv"
    assert main(["protect", str(tmp_path / "whole.csv"), "-o", str(local), "--keep-order", "--workers", "1",
                 *common, "--report", str(tmp_path / "local.json")]) == 0  # fmt: skip
    code = main(["protect", str(tmp_path / "in"), "-o", str(out), "--keep-order", "--engine", "dask",
                 "--scheduler", scheduler, *common, "--report", str(tmp_path / "dask.json")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "3 csv parts" in err and "split on the whole table" in err
    parts = _parts(out)
    assert [p.name for p in parts] == ["part-00000.csv", "part-00001.csv", "part-00002.csv"]
    expected = local.read_text().splitlines()
    header, rows = None, []
    for part in parts:
        lines = part.read_text().splitlines()
        header = header or lines[0]
        assert lines[0] == header
        rows.extend(lines[1:])
    assert header == expected[0] and rows == expected[1:]  # the same text, record by record
    ours, theirs = (
        json.loads((tmp_path / "dask.json").read_text()),
        json.loads((tmp_path / "local.json").read_text()),
    )
    # threads: how many the local kernels ran on (issue 33); the partitioned engine's workers keep
    # their own, and the release is the same on any number
    assert set(theirs) - set(ours) <= {"export_override", "threads"}
    for key in ("n_groups", "group_size_counts", "k_anonymity", "neutralized_cells", "seed"):
        assert ours[key] == theirs[key], key
    for key in ("sse", "sst", "information_loss", "information_loss_all_qi"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-9), key
    for key in ("strata", "n_strata", "stratum_sizes", "block_size", "n_blocks", "block_sizes"):
        assert ours["scale"][key] == theirs["scale"][key], key
    assert ours["scale"]["partitioned"] is True and ours["scale"]["input_partitions"] == 3
    marker = json.loads((out / partitioned.MARKER).read_text())
    assert marker["parts"] == [p.name for p in parts]
    # independently: every group's released values are the means of its records' values
    released = pd.concat([pd.read_csv(p) for p in parts], ignore_index=True)
    assert (released["record"] == frame["record"]).all()
    for col in QI:
        means = frame.groupby(released["g"])[col].transform("mean")
        assert np.allclose(released[col], means, rtol=1e-12, atol=1e-9)
    assert released.groupby("g").size().min() >= 5 and "id" not in released


def test_parquet_row_groups_give_the_local_run(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partitioned, "PARQUET_PART_ROWS", 500)
    frame = _table(2000, seed=9)
    frame.to_parquet(tmp_path / "t.parquet", row_group_size=250)
    spec = _spec(scheduler)
    report = _protect(
        tmp_path / "t.parquet", tmp_path / "out.parquet", spec, group_column="g",
        keep_formula_cells=True,
    )  # fmt: skip
    parts = _parts(tmp_path / "out.parquet")
    assert report["scale"]["input_partitions"] == 4 and len(parts) == 4  # type: ignore[index]
    released = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    roles = roles_from_lists(list(frame.columns), qi=QI, identifiers=["id"])
    local = run_protection(Dataset(frame, roles), RunSpec.make("mdav", 5, seed=7, block_size=300))
    assert np.array_equal(released["g"].to_numpy(), local.labels)
    for col in QI:
        assert np.array_equal(
            released[col].to_numpy(dtype=float), local.protected[col].to_numpy(dtype=float)
        )
    pd.testing.assert_series_equal(released["note"], frame["note"], check_dtype=False)
    assert report["information_loss"] == pytest.approx(local.information_loss, rel=1e-9)


# --- the split of a table larger than the sample ---------------------------------------------------
def test_a_table_larger_than_the_sample_is_split_from_the_sample(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partitioned, "SAMPLE_ROWS", 800)
    frame = _table(4000, seed=2)
    frame["hours"] = np.floor(frame["hours"] / 10)  # heavy ties on the axis
    _write_csv_parts(frame, tmp_path / "in", 4)
    report = _protect(tmp_path / "in", tmp_path / "out", _spec(scheduler), group_column="g")
    scale_entry = report["scale"]
    assert isinstance(scale_entry, dict)
    assert scale_entry["split"].startswith("sample of 800") and scale_entry["sample_size"] == 800
    assert scale_entry["n_blocks"] >= 10 and scale_entry["block_sizes"]["min"] >= 5
    assert scale_entry["block_sizes"]["max"] <= partitioned.OVERSIZE * 300
    released = pd.concat([pd.read_csv(p) for p in _parts(tmp_path / "out")], ignore_index=True)
    assert (released["record"] == frame["record"]).all()  # rows in the input's order
    assert released.groupby("g").size().min() >= 5
    assert released.groupby(QI).size().min() >= 5
    roles = roles_from_lists(list(frame.columns), qi=QI, identifiers=["id"])
    local = run_protection(
        Dataset(frame, roles), RunSpec.make("mdav", 5, seed=7, block_size=300, workers=1)
    )
    assert report["information_loss"] == pytest.approx(local.information_loss, rel=0.05)


def test_the_sample_split_applied_to_its_sample_and_to_ties() -> None:
    rng = np.random.default_rng(0)
    z = rng.standard_normal((5000, 3))
    ids = np.arange(5000)
    plan = partitioned.sample_split(z, ids, 5000, 5, 500)
    leaves = partitioned.assign_leaves(z, ids, plan)
    sizes = np.bincount(leaves)
    assert plan.n_leaves == 10 and sizes.sum() == 5000
    assert abs(sizes - 500).max() <= 2  # the sample is the table: the planned sizes
    # the same leaves as an exact split of the same records would give, up to ties
    exact = block_rows(z, 5, 500)
    agree = sum(
        len(np.intersect1d(rows, np.flatnonzero(leaves == b))) for b, rows in enumerate(exact)
    )
    assert agree >= 0.99 * 5000
    # a grid of ties: shared by the hash of the record number, in the sample's proportions
    grid = np.repeat(np.arange(4.0), 1000)[:, None] * np.ones((1, 2))
    plan = partitioned.sample_split(grid[::4], ids[:4000:4], 4000, 5, 1000)
    sizes = np.bincount(partitioned.assign_leaves(grid, ids[:4000], plan), minlength=4)
    assert np.abs(sizes - 1000).max() < 120
    again = partitioned.assign_leaves(grid, ids[:4000], plan)
    assert np.array_equal(again, partitioned.assign_leaves(grid, ids[:4000], plan))


def test_small_blocks_merge_with_their_neighbours() -> None:
    unit, merges = partitioned.merge_small_blocks([10, 2, 9, 1, 8, 0, 3], 5)
    sizes = np.bincount(unit, weights=[10, 2, 9, 1, 8, 0, 3])
    assert (sizes >= 5).all() and sizes.sum() == 33 and merges == 4
    assert list(unit) == sorted(unit)  # neighbours in split order only
    assert list(partitioned.merge_small_blocks([5, 6, 7], 5)[0]) == [0, 1, 2]


# --- versions ------------------------------------------------------------------------------------
#: The worker that reports an old version (the first to answer).
_ODD: list[str] = []


def _reported_version(dask_worker: Any) -> str:
    """Runs on each worker (in this process; ``client.run`` passes the worker): the first one
    to answer reports 0.0.1."""
    address = str(dask_worker.address)
    if not _ODD:
        _ODD.append(address)
    return "0.0.1" if address == _ODD[0] else __version__


def test_a_worker_with_another_version_is_refused(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ODD.clear()
    monkeypatch.setattr(scale, "_worker_version", _reported_version)
    _write_csv_parts(_table(600), tmp_path / "in", 2)
    with pytest.raises(InvalidParameter) as info:
        _protect(tmp_path / "in", tmp_path / "out", _spec(scheduler))
    text = str(info.value)
    assert f"worker {_ODD[0]} runs microgui 0.0.1" in text and f"microgui {__version__}" in text
    assert f'pip install "microgui[dask]=={__version__}"' in text and "\n" not in text
    assert sum(w in text for w in scale_workers(scheduler)) == 1  # only the odd one is named
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # nothing written


def scale_workers(address: str) -> list[str]:
    import distributed

    with distributed.Client(address, set_as_default=False) as client:
        return list(client.scheduler_info(n_workers=-1)["workers"])


# --- bad input -----------------------------------------------------------------------------------
def test_bad_partitions_are_named(scheduler: str, tmp_path: Path) -> None:
    frame = _table(600)
    _write_csv_parts(frame.drop(columns=["hours"]), tmp_path / "a", 1)
    frame.iloc[300:].to_csv(tmp_path / "a" / "part-1.csv", index=False)
    with pytest.raises(
        InvalidInput, match=r"part-1\.csv has column 'hours', which part-0\.csv lacks"
    ):
        _protect(tmp_path / "a", tmp_path / "out", _spec(scheduler))
    bad = tmp_path / "b"
    bad.mkdir()
    frame.iloc[:300].to_parquet(bad / "p0.parquet")
    (bad / "p1.parquet").write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(InvalidInput, match=r"'p1\.parquet' cannot be read as a Parquet file"):
        _protect(bad, tmp_path / "out", _spec(scheduler))
    text = tmp_path / "c"
    odd = frame.astype({"age": object})
    odd.loc[303, "age"] = "abc"  # the 4th record of part-1.csv: its line 5
    _write_csv_parts(odd, text, 2)
    with pytest.raises(InvalidInput, match=r"'age' of part-1\.csv .*line 5 holds 'abc'"):
        _protect(text, tmp_path / "out", _spec(scheduler))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]  # nothing left behind


def test_what_the_partitioned_engine_cannot_do_is_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = _table(300)
    _write_csv_parts(frame, tmp_path / "in", 1)
    base = ["protect", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--method", "mdav",
            "-k", "5", "--qi", "age,income,note", "--engine", "dask",
            "--scheduler", "tcp://127.0.0.1:9", "--block-size", "100"]  # fmt: skip
    for extra, message in [
        (["--nominal", "note"], "quasi-identifier 'note' is nominal"),
        (["--strata", "note"], "--strata is not available with --engine dask"),
        (["--param", "rescale_variance=true"], "rescale_variance"),
    ]:
        argv = [*base, *extra]
        if extra[0] != "--nominal":
            argv[argv.index("age,income,note")] = "age,income"
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    argv = [*base[:5], "p-sensitive", *base[6:]]
    argv[argv.index("age,income,note")] = "age,income"
    assert main([*argv, "--confidential", "note"]) == 2
    assert "method p-sensitive cannot run block by block" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ExportRefused, match="inside the input"):
        partitioned.check_output_folder(tmp_path / "in" / "out", tmp_path / "in")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("x")
    with pytest.raises(ExportRefused, match="holds other files"):
        partitioned.check_output_folder(tmp_path / "busy", tmp_path / "in")
    with pytest.raises(InvalidInput, match="--engine dask reads Parquet or CSV"):
        partitioned.list_partitions(_xlsx(tmp_path))
    (tmp_path / "in" / "year=2020").mkdir()  # records there would be dropped in silence
    with pytest.raises(InvalidInput, match="holds the folder 'year=2020'"):
        partitioned.list_partitions(tmp_path / "in")


def test_the_benchmark_writes_its_table_in_parts(tmp_path: Path) -> None:
    from microgui.bench.partitioned import write_parts

    names = write_parts(tmp_path / "t", 1000, d=4, parts=3)
    parts = [pd.read_parquet(p) for p in sorted((tmp_path / "t").iterdir())]
    assert [len(p) for p in parts] == [334, 333, 333] and names == ["x0", "x1", "x2", "x3"]
    x = pd.concat(parts).to_numpy()
    assert np.corrcoef(x[:, 0], x[:, 1])[0, 1] == pytest.approx(0.6, abs=0.08)
    assert (x[:, 2] > 0).all()  # every third column log-normal


def _xlsx(tmp_path: Path) -> Path:
    path = tmp_path / "t.xlsx"
    path.write_bytes(b"PK\x03\x04")
    return path


# --- output folder, cancel -----------------------------------------------------------------------
def test_a_cancelled_run_leaves_nothing_and_a_rerun_replaces_its_folder(
    scheduler: str, tmp_path: Path
) -> None:
    _write_csv_parts(_table(1500), tmp_path / "in", 3)

    def cancel(fraction: float, status: str = "") -> None:
        if status.startswith("blocks"):
            raise RunCancelled()

    with pytest.raises(RunCancelled):
        _protect(tmp_path / "in", tmp_path / "out", _spec(scheduler), progress=cancel)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
    first = _protect(tmp_path / "in", tmp_path / "out", _spec(scheduler))
    again = _protect(tmp_path / "in", tmp_path / "out", _spec(scheduler))  # replaces it
    assert first["information_loss"] == again["information_loss"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]
    assert len(_parts(tmp_path / "out")) == 3


def test_one_file_in_and_one_file_out_keeps_the_single_file_release(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The contract of --engine dask before the partitioned run: a table file in, one release
    # file out (the blocks on the cluster), an Excel input included; a note says how to get the
    # partitioned run. Same release as the local engine.
    frame = _table(900)
    frame.to_csv(tmp_path / "whole.csv", index=False)
    common = ["--method", "mdav", "-k", "5", "--qi", ",".join(QI), "--identifiers", "id",
              "--block-size", "300", "--seed", "7"]  # fmt: skip
    local, out = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert main(["protect", str(tmp_path / "whole.csv"), "-o", str(local), "--keep-order", "--workers", "1",
                 *common]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["protect", str(tmp_path / "whole.csv"), "-o", str(out), "--keep-order", "--engine", "dask",
                 "--scheduler", scheduler, *common]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "names one file, so the table was read here" in err
    assert out.is_file() and out.read_bytes() == local.read_bytes()
    frame.to_excel(tmp_path / "whole.xlsx", index=False)
    assert main(["protect", str(tmp_path / "whole.xlsx"), "-o", str(tmp_path / "x.csv"), "--keep-order",
                 "--engine", "dask", "--scheduler", scheduler, *common]) == 0  # fmt: skip
    assert (tmp_path / "x.csv").read_bytes() == local.read_bytes()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_every_column_kind_goes_through_the_same_treatment_in_parts(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """The parts get the column treatments of a single-file release
    (microgui.core.table.column_types): bytes that are no UTF-8 and lists crashed nothing, and the
    report names the columns converted."""
    monkeypatch.setattr(partitioned, "PARQUET_PART_ROWS", 500)
    frame = _table(1000, seed=3)
    frame["blob"] = [bytes([0xFF, i % 3]) for i in range(len(frame))]
    frame["tags"] = [[i % 2, 1] for i in range(len(frame))]
    frame.to_parquet(tmp_path / "t.parquet", row_group_size=250)
    out = tmp_path / f"out{suffix}"
    report = _protect(tmp_path / "t.parquet", out, _spec(scheduler))
    converted = report.get("columns_converted", {})
    assert isinstance(converted, dict)
    if suffix == ".csv":
        assert set(converted) == {"blob", "tags"}
        released = pd.concat([pd.read_csv(p, dtype=str) for p in _parts(out)], ignore_index=True)
        assert released["blob"].tolist()[:2] == ["ff00", "ff01"]
    else:
        assert converted == {}
        released = pd.concat([pd.read_parquet(p) for p in _parts(out)], ignore_index=True)
        assert released["blob"].tolist()[:2] == [b"\xff\x00", b"\xff\x01"]


# --- record order (issue 31) ------------------------------------------------------------------------
def test_parts_are_shuffled_within_each_part(scheduler: str, tmp_path: Path) -> None:
    """The default random order shuffles each part's records (a record stays in its input
    partition's part: no permutation across parts, as the report says); a given order seed
    writes the same bytes again; the seed is recorded only when given."""
    frame = _table(900, seed=4)
    _write_csv_parts(frame, tmp_path / "in", 3)
    spec = _spec(scheduler)
    report = _protect(tmp_path / "in", tmp_path / "a", spec, order=RecordOrder(seed=11))
    order = report["record_order"]
    assert order["order"] == "random" and order["seed"] == 11  # type: ignore[index]
    assert "within the part" in order["note"]  # type: ignore[index]
    chunks = np.array_split(np.arange(len(frame)), 3)
    moved = 0
    for part, rows in zip(_parts(tmp_path / "a"), chunks, strict=True):
        released = pd.read_csv(part)["record"].to_numpy()
        assert sorted(released) == list(frame["record"].to_numpy()[rows])  # same records
        moved += int((released != frame["record"].to_numpy()[rows]).sum())
    assert moved > 0.9 * len(frame)
    _protect(tmp_path / "in", tmp_path / "b", spec, order=RecordOrder(seed=11))
    for a, b in zip(_parts(tmp_path / "a"), _parts(tmp_path / "b"), strict=True):
        assert a.read_bytes() == b.read_bytes()
    fresh = _protect(tmp_path / "in", tmp_path / "c", spec, order=RecordOrder())
    assert fresh["record_order"]["seed"] is None  # type: ignore[index]
