"""The GIL-hold probe of the benchmark (:mod:`microgui.bench.gil`, issue 30)."""

from __future__ import annotations

import time

import pytest

import microgui.bench.gil as gil
from microgui.bench.gil import GilHolds, gil_holds


def test_gil_holds_runs_fn_in_another_thread_and_reports_its_holds() -> None:
    import threading

    seen: list[int] = []
    r = gil_holds(lambda: seen.append(threading.get_ident()) or sum(range(200_000)))
    assert r is not None
    assert seen and seen[0] != threading.get_ident()
    assert r.longest_ms >= 0 and r.gaps >= r.over_ms >= 0 and r.seconds >= 0


def test_gil_holds_raises_what_fn_raised() -> None:
    def fail() -> None:
        raise ValueError("in the worker")

    with pytest.raises(ValueError, match="in the worker"):
        gil_holds(fail)


def test_gil_holds_is_none_without_a_thread_cpu_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(time, "pthread_getcpuclockid", raising=False)
    assert gil_holds(lambda: None) is None


def test_worker_hold_row_names_the_hold_and_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    import microgui.core.runs.analysis as analysis
    import microgui.qt.perf as perf

    monkeypatch.setattr(analysis, "analyse_run", lambda dataset, spec: None)
    monkeypatch.setattr(perf, "adult_dataset", lambda: None)
    fake = GilHolds(12.3, "dataset.py:1 is_missing", 40, 0, 20.0, 1.5)
    monkeypatch.setattr(gil, "gil_holds", lambda fn, **_k: fake)
    demo, adult = gil.worker_hold_lines()
    assert "demo 4,000 records" in demo
    assert "12 ms at dataset.py:1 is_missing; 0 of 40 gaps over 20 ms <= 50 ms PASS" in demo
    assert "UCI Adult" in adult and "skipped" in adult
