"""The benchmark command runs and prints its table (no timing is asserted here)."""

from __future__ import annotations

import pytest

from microgui import bench


def test_bench_quick_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick", "--only", "mdav", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "method" in out and "IL %" in out and "mdav" in out
    assert "stated complexity of each method" in out


def test_bench_unknown_method_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--only", "nosuch"]) == 2


def test_registered_methods_with_bench_sizes_get_rows() -> None:
    names = {c.method for c in bench.CASES + bench.registered_cases()}
    assert {"mdav", "mst", "ama"} <= names
