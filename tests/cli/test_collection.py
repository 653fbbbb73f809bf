"""Automatic garbage collection during ``microgui protect``'s start-up (:mod:`microgui.cli.collection`)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui.cli.protect as protect_cli
import microgui.core.runs.plan as plan
from microgui.cli import collection, main


@pytest.fixture
def restored_collector() -> Iterator[None]:
    """The console script's path freezes the objects it made (:func:`gc.freeze`) and may leave
    collection off when a test fails midway: both undone after the test."""
    yield
    gc.unfreeze()
    gc.enable()
    collection._held = False


def _table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    path = tmp_path / "t.csv"
    pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"]).to_csv(path, index=False)
    return path


def _as_console_script(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    """``main()`` as the ``microgui`` console script calls it: no argv, ``sys.argv``'s."""
    monkeypatch.setattr(sys, "argv", ["microgui", *argv])
    return main()


def test_console_script_protect_reads_without_automatic_collection_and_runs_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restored_collector: None
) -> None:
    enabled: dict[str, bool] = {}
    read_input, run_spec = protect_cli._read_input, plan.run_spec

    def spy_read(*args: Any, **kwargs: Any) -> Any:
        enabled["reading"] = gc.isenabled()
        return read_input(*args, **kwargs)

    def spy_run(*args: Any, **kwargs: Any) -> Any:
        enabled["running"] = gc.isenabled()
        return run_spec(*args, **kwargs)

    monkeypatch.setattr(protect_cli, "_read_input", spy_read)
    monkeypatch.setattr(plan, "run_spec", spy_run)
    src = _table(tmp_path)
    argv = ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--qi", "a,b", "-k", "3",
            "--method", "mdav", "-q"]  # fmt: skip
    assert _as_console_script(monkeypatch, argv) == 0
    assert enabled == {"reading": False, "running": True}
    assert gc.isenabled() and not collection.held()
    assert (tmp_path / "o.csv").exists()


def test_console_script_protect_refused_collects_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restored_collector: None
) -> None:
    src = _table(tmp_path)
    argv = ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--qi", "a,b", "--method", "mdav"]
    assert _as_console_script(monkeypatch, argv) == 2  # no -k: refused before the run
    assert gc.isenabled() and not collection.held()


def test_protect_called_with_argv_never_holds_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enabled: list[bool] = []
    read_input = protect_cli._read_input

    def spy_read(*args: Any, **kwargs: Any) -> Any:
        enabled.append(gc.isenabled())
        return read_input(*args, **kwargs)

    monkeypatch.setattr(protect_cli, "_read_input", spy_read)
    src = _table(tmp_path)
    argv = ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--qi", "a,b", "-k", "3",
            "--method", "mdav", "-q"]  # fmt: skip
    assert main(argv) == 0
    assert enabled == [True]


def test_release_without_hold_freezes_nothing(restored_collector: None) -> None:
    frozen = gc.get_freeze_count()
    collection.release()
    assert gc.get_freeze_count() == frozen and gc.isenabled()


def test_hold_leaves_a_collector_someone_else_stopped(restored_collector: None) -> None:
    gc.disable()
    collection.hold()
    assert not collection.held()
    collection.release()
    assert not gc.isenabled()  # still the other holder's to enable


def test_cyclic_garbage_made_after_the_imports_is_freed_at_release(
    restored_collector: None,
) -> None:
    import weakref

    class Node:
        pass

    collection.hold()
    collection.imports_done()
    node = Node()
    node.self = node  # type: ignore[attr-defined]  # a cycle, as a reader's workbook and sheets
    gone = weakref.ref(node)
    del node
    assert gone() is not None  # held: not collected yet
    collection.release()
    assert gone() is None and gc.isenabled()
