"""The app's responsiveness probes (``microgui.qt.perf``) on tiny inputs: they run and report
numbers. The targets (100,000 points in 100 ms, no stall over 100 ms) are the benchmark's."""

from __future__ import annotations

from microgui.qt.perf import event_loop_stall, scatter_redraw_times


def test_scatter_redraw_times_reports_numbers(qtbot) -> None:
    out = scatter_redraw_times(n=2000, repeats=2)
    assert out["n"] == 2000 and out["mode"] == "points"
    assert out["first_draw_ms"] > 0 and 0 < out["redraw_ms"] <= out["redraw_max_ms"]


def test_event_loop_stall_measures_a_short_run(qtbot) -> None:
    out = event_loop_stall(n_records=3000, d=4, method="mdav", timeout_s=120)
    assert out["outcome"] == "finished" and out["n_records"] == 3000
    assert out["ticks"] > 0 and out["timer_ms"] == 10
    # every tick is at least about one timer interval after the previous one
    assert out["max_gap_ms"] >= out["p99_gap_ms"] >= out["mean_gap_ms"] >= 5
    assert out["max_gap_phase"] in ("run", "drawing")
    assert out["max_gap_ms"] == max(out["max_gap_during_run_ms"], out["max_gap_while_drawing_ms"])


def test_bench_prints_the_first_minute_rows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's --gui section prints the issue-15 first-run rows from
    ``perf.first_run_times`` (measured in new processes; faked here) with the 2 s target."""
    import microgui.qt.perf as perf
    from microgui.bench.gui import first_run_lines

    fake = {
        "run_at_once_s": 12.6,
        "run_at_once_said_compiling": True,
        "cli_first_run_s": 10.0,
        "run_at_once_max_gap_ms": 291,
        "preparation_s": 58.0,
        "preparation_max_gap_ms": 650,
        "run_after_preparation_s": 2.5,
        "without_preparation_run_at_once_s": 12.7,
        "without_preparation_max_gap_ms": 234,
        "outcome": "ok",
    }
    monkeypatch.setattr(perf, "first_run_times", lambda: fake)
    text = "\n".join(first_run_lines())
    assert "Run pressed at once: 12.60 s (said it compiled)" in text
    assert "app at once <= CLI + 2 s (issue 30) MISS" in text  # 12.6 > 10.0 + 2
    assert "291 ms with Run pressed at once <= 100 ms MISS" in text
    assert "Run pressed after it: 2.50 s <= 2 s MISS" in text
    assert "pressed before the preparation ended" not in text  # pressed on its finished signal
    monkeypatch.setattr(
        perf, "first_run_times", lambda: {**fake, "run_after_preparation_pressed_early": True}
    )
    assert "pressed before the preparation ended" in "\n".join(first_run_lines())


def test_view_stalls_reports_each_phase_and_view(qtbot) -> None:  # type: ignore[no-untyped-def]
    """perf.view_stalls on a tiny table: a gap per phase and one per view of the window."""
    from microgui.core.runs import RunSpec
    from microgui.qt.perf import random_dataset, view_stalls

    out = view_stalls(
        random_dataset(300, 3, 1),
        RunSpec.make("mdav", 3, seed=0),
        settle_s=0.05,
        load_settle_s=0.05,
    )
    assert out["outcome"] == "finished" and out["run_s"] > 0
    # the table's layout is a phase of its own, before Run is pressed
    assert out["load_ms"] > 0 and out["run_ms"] > 0 and out["drawing_ms"] > 0
    assert len(out["views"]) == 10 and "Groups plot" in out["views"]
    assert all(ms > 0 for ms in out["views"].values())


def test_bench_prints_the_stall_per_phase_row(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import microgui.qt.perf as perf
    from microgui.bench.gui import view_stall_lines

    fake = {
        "outcome": "finished",
        "run_s": 3.2,
        "load_ms": 60.0,
        "run_ms": 40.0,
        "drawing_ms": 90.0,
        "views": {"Groups plot": 30.0, "Risk": 140.0},
    }
    monkeypatch.setattr(perf, "view_stalls", lambda: fake)
    (line,) = view_stall_lines()
    assert "the table laid out 60 ms, then Run: run 40 ms, drawing the result 90 ms" in line
    assert "Groups plot 30, Risk 140 ms <= 100 ms MISS" in line


def test_adult_view_stalls_gives_median_and_max_of_sessions(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 29's Adult probe: per phase and view, the median and max over the sessions
    (view_stalls faked: the real one runs mdav-generic on 30,162 records); None without data."""
    import microgui.qt.perf as perf

    sessions = iter(
        [
            {"outcome": "finished", "run_s": 20.0, "drawing_ms": 90.0, "views": {"Risk": 40.0}},
            {"outcome": "finished", "run_s": 30.0, "drawing_ms": 150.0, "views": {"Risk": 60.0}},
            {"outcome": "finished", "run_s": 25.0, "drawing_ms": 100.0, "views": {"Risk": 200.0}},
        ]
    )
    monkeypatch.setattr(perf, "adult_dataset", lambda: object())
    monkeypatch.setattr(perf, "view_stalls", lambda *_a, **_k: next(sessions))
    out = perf.adult_view_stalls(repeat=3)
    assert out is not None and out["outcome"] == "finished" and out["run_s"] == 25.0
    assert out["drawing_ms"] == (100.0, 150.0)
    assert out["views"] == {"Risk": (60.0, 200.0)}
    monkeypatch.setattr(perf, "adult_dataset", lambda: None)
    assert perf.adult_view_stalls() is None


def test_bench_prints_the_adult_view_row(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import microgui.qt.perf as perf
    from microgui.bench.gui import adult_view_stall_lines

    fake = {
        "outcome": "finished",
        "run_s": 21.0,
        "drawing_ms": (80.0, 95.0),
        "views": {"Groups plot": (30.0, 41.0), "Risk": (70.0, 99.0)},
    }
    monkeypatch.setattr(perf, "adult_view_stalls", lambda repeat: fake)
    (line,) = adult_view_stall_lines()
    assert "drawing the result 80/95 ms" in line
    assert "Groups plot 30/41, Risk 70/99 ms <= 100 ms PASS" in line
    fake["views"]["Risk"] = (70.0, 130.0)
    assert adult_view_stall_lines()[0].endswith("MISS")
    monkeypatch.setattr(perf, "adult_view_stalls", lambda repeat: None)
    assert "skipped" in adult_view_stall_lines()[0]


def test_adult_dataset_has_the_issue_roles() -> None:
    """UCI Adult as issue 29 uses it (skipped without ../shared): age continuous, 7 nominal
    keys, salary-class confidential."""
    import pytest

    from microgui.core.table.roles import AttributeKind
    from microgui.qt.perf import adult_dataset

    dataset = adult_dataset()
    if dataset is None:
        pytest.skip("../shared/data/adult is absent")
    roles = dataset.roles
    assert len(dataset.frame) == 30_162
    assert len(roles.quasi_identifiers) == 8 and roles.confidential == ["salary-class"]
    assert roles["age"].kind is AttributeKind.CONTINUOUS


def test_adult_compare_records_times_draws_two_runs(monkeypatch, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The probe on a small stand-in table (the Adult file is the bench's): two runs drawn,
    each phase (median, max); below the density threshold every record is a point."""
    import numpy as np
    import pandas as pd

    import microgui.qt.perf as perf
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"age": rng.integers(17, 90, 200).astype(float), "sex": rng.choice(["F", "M"], 200)}
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "sex": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
        }
    )
    monkeypatch.setattr(perf, "adult_dataset", lambda: Dataset.from_frame(frame, roles))
    out = perf.adult_compare_records_times(repeat=2)
    assert out is not None and out["density"] is False
    for name in ("make", "build", "paint", "next", "again"):
        median, top = out[name]
        assert 0.0 < median <= top
    monkeypatch.setattr(perf, "adult_dataset", lambda: None)
    assert perf.adult_compare_records_times() is None


def test_bench_prints_the_adult_compare_row(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import microgui.qt.perf as perf
    from microgui.bench.gui import adult_compare_lines

    fake = {
        "make": (40.0, 50.0),
        "build": (60.0, 80.0),
        "paint": (30.0, 41.0),
        "next": (35.0, 45.0),
        "again": (20.0, 25.0),
        "density": True,
    }
    monkeypatch.setattr(perf, "adult_compare_records_times", lambda repeat: fake)
    (line,) = adult_compare_lines()
    assert "density images" in line and "plots made 40/50 ms, draw 60/80 ms, paint 30/41" in line
    assert line.endswith("PASS")
    fake["paint"] = (90.0, 130.0)
    assert adult_compare_lines()[0].endswith("MISS")
    monkeypatch.setattr(perf, "adult_compare_records_times", lambda repeat: None)
    assert "skipped" in adult_compare_lines()[0]
