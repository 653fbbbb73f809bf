"""A run rebuilt from the partition its project kept (issue 30, item 2): the same labels, the
same release (byte for byte once exported), no method run; a partition that does not fit the
table, is damaged or rebuilds another release is refused with a one-line reason."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.core.demo import demo_path, demo_roles
from microgui.core.errors import InvalidInput
from microgui.core.io import read_table
from microgui.core.methods.artifacts import CLASSES, DEPENDENCY_TREE, SPANNING_TREE
from microgui.core.release.check import export_run
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunSpec, run_protection
from microgui.core.runs.project_file import Project, load_project, save_project
from microgui.core.runs.spec import RunResult
from microgui.core.runs.stored_partition import (
    ENCODING,
    decode_partition,
    not_restorable,
    partition_json,
    release_digest,
    restore_result,
)
from microgui.core.table.dataset import Dataset

N = 240  # records of the demo table used: every method here runs in well under a second


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first records of the demo table, as a file (so the table has a file fingerprint)."""
    source = read_table(demo_path()).frame.head(N)
    path = tmp_path_factory.mktemp("data") / "persons.csv"
    source.to_csv(path, index=False)
    return path


def _dataset(path: Path) -> Dataset:
    return read_table(path).with_roles(demo_roles())


@pytest.fixture(scope="module")
def dataset(demo_file: Path) -> Dataset:
    return _dataset(demo_file)


@pytest.fixture(scope="module")
def hierarchy(tmp_path_factory: pytest.TempPathFactory, dataset: Dataset) -> Path:
    """An ARX hierarchy of the demo's ``region`` (value; north/south; *)."""
    regions = sorted(set(map(str, dataset.frame["region"])))
    path = tmp_path_factory.mktemp("h") / "region.csv"
    lines = [f"{r};{'north' if i % 2 else 'south'};*" for i, r in enumerate(regions)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _spy_methods(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every method run from now on (the one entry point of run_protection to a method, exact
    or in blocks): none expected."""
    import microgui.core.runs.protect as protect

    called: list[str] = []

    def refuse(method: object, *_a: object, **_k: object) -> None:
        called.append(str(getattr(method, "name", method)))
        raise AssertionError("a method ran")

    monkeypatch.setattr(protect, "run_and_refine", refuse)
    monkeypatch.setattr(protect, "run_scaled", refuse)
    return called


@pytest.mark.parametrize(
    "spec",
    [
        RunSpec.make("mdav-generic", 3, seed=1),
        RunSpec.make("mdav-generic", 5, {"ordinal_average": "median"}, seed=2),
        RunSpec.make("ama", 4, seed=3),
        RunSpec.make("mdav-generic", 3, {"round": "source", "rescale_variance": True}, seed=4),
    ],
    ids=["mdav-generic", "ordinal-median", "ama", "rounded-rescaled"],
)
def test_rebuilt_run_is_the_run_and_exports_byte_for_byte(
    dataset: Dataset, spec: RunSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_protection(dataset, spec)
    block = json.loads(json.dumps(partition_json(run, dataset)))  # as a project file holds it
    called = _spy_methods(monkeypatch)
    rebuilt = restore_result(dataset, run.spec, json.loads(json.dumps(run.report)), block)
    assert called == []  # no method ran
    np.testing.assert_array_equal(rebuilt.labels, run.labels)
    pd.testing.assert_frame_equal(rebuilt.protected, run.protected)
    assert sorted(rebuilt.artifacts) == sorted(run.artifacts)
    if DEPENDENCY_TREE.of(run.artifacts) is not None:
        kept, tree = DEPENDENCY_TREE.of(rebuilt.artifacts), DEPENDENCY_TREE.of(run.artifacts)
        assert kept is not None and kept.to_json() == tree.to_json()
    _same_release(dataset, run, rebuilt, tmp_path)


def _same_release(dataset: Dataset, run: RunResult, rebuilt: RunResult, tmp_path: Path) -> None:
    """Both exported under the same name in two folders: the same bytes, release and report."""
    for name, result in (("original", run), ("rebuilt", rebuilt)):
        (tmp_path / name).mkdir()
        # the same order seed for both (a release is shuffled by default, issue 31)
        export_run(
            dataset, result, tmp_path / name / "r.csv", tmp_path / name / "r.json",
            order=RecordOrder(seed=7),
        )  # fmt: skip
    for file in ("r.csv", "r.json"):
        data = (tmp_path / "original" / file).read_bytes()
        assert (tmp_path / "rebuilt" / file).read_bytes() == data, file


def test_mstk_run_with_a_hierarchy_is_rebuilt_with_its_classes_and_tree(
    dataset: Dataset, hierarchy: Path, tmp_path: Path
) -> None:
    """mstk (``004`` Algorithm 2): each class published with the lowest common generalization
    of its records, so the release is a function of the labels and the hierarchies."""
    spec = RunSpec.make("mstk", 4, seed=0, hierarchies={"region": str(hierarchy)})
    run = run_protection(dataset, spec)
    block = json.loads(json.dumps(partition_json(run, dataset)))
    rebuilt = restore_result(dataset, run.spec, run.report, block)
    pd.testing.assert_frame_equal(rebuilt.protected, run.protected)
    pd.testing.assert_frame_equal(CLASSES.of(rebuilt.artifacts), CLASSES.of(run.artifacts))
    tree, kept = SPANNING_TREE.of(run.artifacts), SPANNING_TREE.of(rebuilt.artifacts)
    assert tree is not None and kept is not None
    np.testing.assert_array_equal(kept.edges, tree.edges)
    np.testing.assert_array_equal(kept.cut, tree.cut)
    np.testing.assert_array_equal(kept.weights, tree.weights)
    _same_release(dataset, run, rebuilt, tmp_path)


def test_project_keeps_the_partition_and_reads_it_back(dataset: Dataset, tmp_path: Path) -> None:
    run = run_protection(dataset, RunSpec.make("mdav-generic", 3, seed=1))
    block = partition_json(run, dataset)
    assert block["encoding"] == ENCODING and block["records"] == N
    assert block["groups"] == run.n_groups and block["dtype"] == "uint8"
    project = Project(
        data_path=str(dataset.source),
        columns=tuple(map(str, dataset.frame.columns)),
        roles=dataset.roles,
        runs=(run.spec,),
        run_ids=(7,),
        run_reports=(run.report,),
        run_partitions=(block,),
        run_from_sweep=(True,),
    )
    path = tmp_path / "p.microgui.json"
    save_project(project, path)
    loaded = load_project(path)
    assert loaded.run_from_sweep == (True,)
    stored = decode_partition(loaded.run_partitions[0], dataset)
    np.testing.assert_array_equal(stored.labels, run.labels)
    assert stored.release_sha256 == release_digest(run.protected)
    text = path.read_text(encoding="utf-8")
    for value in set(map(str, dataset.frame["region"])):  # labels, never values
        assert f'"{value}"' not in text


def _damaged(block: dict[str, object], **change: object) -> dict[str, object]:
    return {**block, **change}


def test_a_partition_that_does_not_fit_is_refused_with_a_reason(
    dataset: Dataset, demo_file: Path, tmp_path: Path
) -> None:
    run = run_protection(dataset, RunSpec.make("mdav-generic", 3, seed=1))
    block = json.loads(json.dumps(partition_json(run, dataset)))
    labels = np.frombuffer(zlib.decompress(base64.b64decode(block["labels"])), dtype=np.uint8)
    shuffled = labels.copy()
    shuffled[[0, 1]] = shuffled[[1, 0]] if shuffled[0] != shuffled[1] else shuffled[[0, 2]]
    repacked = base64.b64encode(zlib.compress(shuffled.tobytes())).decode()
    cases = {
        "not an object": [1, 2],
        "unknown encoding": _damaged(block, encoding="pickle"),
        "for 239 records": _damaged(block, records=N - 1),
        "not valid base64": _damaged(block, labels="%%%"),
        "cannot be inflated": _damaged(block, labels=base64.b64encode(b"xx").decode()),
        "bytes, not the": _damaged(
            block, labels=base64.b64encode(zlib.compress(b"\0" * (N + 1))).decode()
        ),
        "do not number": _damaged(block, groups=block["groups"] + 1),
        "unknown field": _damaged(block, values=["x"]),
        "differs from the one saved": _damaged(block, labels=repacked),
    }
    for reason, bad in cases.items():
        with pytest.raises(InvalidInput, match=reason):
            restore_result(dataset, run.spec, run.report, bad)
    # the table's file changed since (one cell): refused before anything is rebuilt
    frame = pd.read_csv(demo_file)
    frame.loc[0, "age"] = int(frame.loc[0, "age"]) + 1
    changed = tmp_path / "persons.csv"
    frame.to_csv(changed, index=False)
    with pytest.raises(InvalidInput, match="table's file changed"):
        decode_partition(block, _dataset(changed))


def test_methods_with_values_of_their_own_and_plans_are_not_rebuilt() -> None:
    assert not_restorable(RunSpec.make("mdav-generic", 3)) == ""
    assert "values of its own" in not_restorable(RunSpec.make("median", 3))
    assert "values of its own" in not_restorable(RunSpec.make("individual-ranking", 3))


@pytest.mark.shared
def test_partition_of_adult_is_compact() -> None:
    """Bytes a project keeps per run of Adult (30,162 records, mdav-generic k=5): labels as
    uint16 deflated, base64; measured ~72 kB."""
    import reference_sets

    data = reference_sets.adult_dataset()
    rng = np.random.default_rng(0)
    # a partition like MDAV's (~6,000 groups of 5 in no particular row order)
    labels = rng.permutation(np.arange(data.n_records) // 5)
    fake = RunResult(
        RunSpec.make("mdav-generic", 5),
        data.roles,
        labels,
        data.frame,
        {},
        qi=None,  # type: ignore[arg-type]
    )
    block = partition_json(fake, data)
    size = len(json.dumps(block))
    assert block["dtype"] == "uint16"
    assert size < 2.5 * data.n_records, size  # < 2.5 bytes per record
