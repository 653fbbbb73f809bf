"""The record order of a release (issue 31 items 4-5; :mod:`microgui.core.release.order`): random by
default, households kept together (sdcMicro ``extractManipData(randomizeRecords="byHH")``,
``R/aux_functions.r``), the input's with ``keep``; applied by the one writer
(:func:`~microgui.core.release.check.export_run`) so that every format gets it; the seed recorded
only when the user gave it."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microgui
from microgui.api import ProtectionResult
from microgui.core.errors import ExportRefused, InvalidInput, InvalidParameter
from microgui.core.release.check import export_run
from microgui.core.release.order import (
    INPUT_TEXT,
    RANDOM_TEXT,
    RecordOrder,
    order_report,
    release_permutation,
)


def _households_adjacent(ids: np.ndarray) -> bool:
    """Every household's records form one run of consecutive rows."""
    seen: set[object] = set()
    previous: object = object()
    for value in ids.tolist():
        if value != previous:
            if value in seen:
                return False
            seen.add(value)
            previous = value
    return True


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=30),
    seed=st.integers(0, 2**32),
    interleave=st.booleans(),
)
def test_permutation_keeps_every_record_and_households_adjacent(
    sizes: list[int], seed: int, interleave: bool
) -> None:
    ids = np.repeat(np.arange(len(sizes)), sizes)
    if interleave:  # the input need not hold a household's records together
        ids = np.random.default_rng(seed).permutation(ids)
    rows = release_permutation(len(ids), RecordOrder(seed=seed), ids)
    assert sorted(rows.tolist()) == list(range(len(ids)))  # no record lost or repeated
    assert _households_adjacent(ids[rows])
    for hh in np.unique(ids):  # inside a household: the input order (sdcMicro "byHH")
        mine = rows[ids[rows] == hh]
        assert mine.tolist() == sorted(mine.tolist())


def test_keep_is_the_identity_and_a_seed_repeats_its_order() -> None:
    assert release_permutation(7, RecordOrder(keep=True)).tolist() == list(range(7))
    a = release_permutation(200, RecordOrder(seed=5))
    assert a.tolist() == release_permutation(200, RecordOrder(seed=5)).tolist()
    assert a.tolist() != release_permutation(200, RecordOrder(seed=6)).tolist()
    assert a.tolist() != list(range(200))
    # no seed: a fresh one from the operating system each time (200! orders)
    assert (
        release_permutation(200, RecordOrder()).tolist()
        != release_permutation(200, RecordOrder()).tolist()
    )


def test_households_are_shuffled_not_only_kept() -> None:
    ids = np.repeat(np.arange(50), 3)
    rows = release_permutation(len(ids), RecordOrder(seed=1), ids)
    order = list(dict.fromkeys(ids[rows].tolist()))
    assert sorted(order) == list(range(50)) and order != list(range(50))


def test_order_options_refused_with_a_reason() -> None:
    with pytest.raises(InvalidParameter, match="order seed"):
        RecordOrder(seed=-1)
    with pytest.raises(InvalidParameter, match="order seed"):
        RecordOrder(seed=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="--keep-order"):
        RecordOrder(keep=True, seed=3)
    assert RecordOrder.from_json(RecordOrder(seed=9).to_json()) == RecordOrder(seed=9)
    assert RecordOrder.from_json({"keep": True}) == RecordOrder(keep=True)


def test_report_says_the_order_and_holds_a_seed_only_when_given() -> None:
    assert order_report(RecordOrder(keep=True), "hh")["text"] == INPUT_TEXT
    drawn = order_report(RecordOrder(), None)
    assert drawn["order"] == "random" and drawn["text"] == RANDOM_TEXT and drawn["seed"] is None
    given_ = order_report(RecordOrder(seed=42), "hh")
    assert given_["seed"] == 42 and given_["households_kept_together"] == "hh"
    assert "households kept together" in given_["text"]


def test_an_app_export_and_its_replay_use_a_seed_no_report_holds() -> None:
    """Issue 30: the app's export draws a seed the project keeps; the report (of the export
    and of its replay from the project) says so without the seed."""
    seed = 2**64 - 5
    for origin in ("session", "project"):
        order = RecordOrder(seed=seed, origin=origin)
        said = order_report(order, "hh")
        assert said["order"] == "random" and said["seed"] is None
        assert said["seed_kept_in_project"] is True and str(seed) not in json.dumps(said)
        assert said.get("replayed_from_project") is (True if origin == "project" else None)
        # the same seed, the same permutation, whoever draws it
        assert np.array_equal(
            release_permutation(50, order), release_permutation(50, RecordOrder(seed=seed))
        )
    assert "seed_kept_in_project" not in order_report(RecordOrder(seed=3), None)
    for bad in (RecordOrder(keep=True), RecordOrder()):
        with pytest.raises(ValueError, match="random one with its seed"):
            replace(bad, origin="session")
    with pytest.raises(ValueError, match="unknown seed origin"):
        RecordOrder(seed=1, origin="file")


# ---------------------------------------------------------------------------------------------
# the writer


@pytest.fixture(scope="module")
def run() -> ProtectionResult:
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "hh": np.repeat([f"H{j:02d}" for j in range(20)], 3),
            "age": rng.integers(20, 70, n),
            "income": rng.normal(50, 10, n).round(1),
            "row": np.arange(n),  # the input position, passed through to follow the records
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
        return microgui.protect(
            frame, qi=["age", "income"], identifiers="id", household="hh", k=3, seed=1
        )


def _write(res: ProtectionResult, path: Path, order: RecordOrder | None) -> dict[str, object]:
    assert res.dataset is not None
    return export_run(res.dataset, res.run, path, path.with_suffix(".json"), order=order)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_release_is_a_permutation_with_households_together(
    run: ProtectionResult, tmp_path: Path, suffix: str
) -> None:
    before = run.run.protected.copy()
    out = tmp_path / f"out{suffix}"
    report = _write(run, out, None)
    released = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert list(released.columns) == ["hh", "age", "income", "row"]  # no index column leaked
    assert sorted(released["row"]) == list(range(60))
    assert released["row"].tolist() != list(range(60))
    assert _households_adjacent(released["hh"].to_numpy())
    # each released record is the run's record of that row, values untouched
    by_row = run.run.protected.set_index("row")
    for col in ("age", "income", "hh"):
        expected = by_row.loc[released["row"], col].to_numpy()
        assert (released[col].to_numpy() == expected).all()
    # the run's own result keeps the input order
    pd.testing.assert_frame_equal(run.run.protected, before)
    written = json.loads(out.with_suffix(".json").read_text())
    assert written["record_order"]["order"] == "random"
    assert written["record_order"]["seed"] is None  # drawn, never written down
    assert written["record_order"]["households_kept_together"] == "hh"
    assert report["fingerprint"]["output"]["rows"] == 60


def test_keep_order_writes_the_input_order(run: ProtectionResult, tmp_path: Path) -> None:
    out = tmp_path / "kept.csv"
    report = _write(run, out, RecordOrder(keep=True))
    assert pd.read_csv(out)["row"].tolist() == list(range(60))
    assert report["record_order"] == {
        "order": "input",
        "text": INPUT_TEXT,
        "households_kept_together": None,
    }


def test_the_same_seed_writes_the_same_bytes(run: ProtectionResult, tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    _write(run, a, RecordOrder(seed=7))
    _write(run, b, RecordOrder(seed=7))
    _write(run, c, RecordOrder(seed=8))
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert json.loads(a.with_suffix(".json").read_text())["record_order"]["seed"] == 7


def test_api_export_options(run: ProtectionResult, tmp_path: Path) -> None:
    kept = run.export(tmp_path / "k.csv", keep_order=True)
    assert kept["record_order"]["order"] == "input"
    seeded = run.export(tmp_path / "s.csv", order_seed=11)
    assert seeded["record_order"]["seed"] == 11
    with pytest.raises(InvalidParameter):
        run.export(tmp_path / "x.csv", keep_order=True, order_seed=1)


def test_one_household_for_all_records_cannot_be_shuffled(tmp_path: Path) -> None:
    frame = pd.DataFrame({"hh": ["A"] * 12, "age": np.arange(12) % 4 + 30, "row": np.arange(12)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
        res = microgui.protect(frame, qi="age", household="hh", k=3, seed=1)
    _write(res, tmp_path / "one.csv", None)
    assert pd.read_csv(tmp_path / "one.csv")["row"].tolist() == list(range(12))
    note = res.report["risk_before"].get("household_risk")
    assert note is not None and "one household" in note["note"]


def test_missing_household_ids_refused_before_the_run() -> None:
    frame = pd.DataFrame({"hh": ["A", "A", None, "B", "B", "B"], "age": [30, 31, 32, 30, 31, 32]})
    with pytest.raises(InvalidInput, match=r"household-id column 'hh' is missing in 1"):
        microgui.protect(frame, qi="age", household="hh", k=2, seed=1)


def test_export_refuses_household_ids_it_cannot_order(
    run: ProtectionResult, tmp_path: Path
) -> None:
    # a household id lost after the run (a dataset rebuilt in a script): refused, nothing written
    assert run.dataset is not None
    frame = run.dataset.frame.copy()
    frame.loc[5, "hh"] = None
    dataset = replace(run.dataset, frame=frame)
    with pytest.raises(ExportRefused, match="household"):
        export_run(dataset, run.run, tmp_path / "bad.csv")
    assert not (tmp_path / "bad.csv").exists()
    with pytest.raises(InvalidParameter, match="household"):
        release_permutation(3, RecordOrder(seed=1), np.array([None, "a", "a"], dtype=object))
