"""Issue 14 (item 4): the registry is the only plug-in point. A method declares its warm-up, the
release check it promises and the artifacts it leaves; nothing else names methods."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import InvalidParameter
from microgui.core.methods import (
    REGISTERED,
    Method,
    MethodInput,
    MethodOutput,
    ParamSpec,
    ReleaseCheck,
    available_methods,
    get_method,
    registered,
    warm_ups,
)
from microgui.core.methods import optimal as optimal_module
from microgui.core.methods.artifacts import CLASSES, SPANNING_TREE, SpanningTree
from microgui.core.release.check import check_export
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, roles_from_lists

METHODS = Path(__file__).resolve().parents[3] / "microgui" / "core" / "methods"


def _fake(name: str, run: Callable[[MethodInput], MethodOutput], **kwargs: object) -> Method:
    return Method(
        name=name,
        title="Fake (test)",
        summary="test only",
        description="test only",
        citation="none",
        kinds=frozenset(AttributeKind),
        run=run,
        **kwargs,  # type: ignore[arg-type]
    )


def _pairs(inp: MethodInput) -> MethodOutput:
    return MethodOutput(labels=np.arange(inp.dataset.n_records, dtype=np.int64) // 2)


def test_no_module_of_the_package_imports_the_package() -> None:
    for path in sorted(METHODS.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "microgui.core":
                assert all(a.name != "methods" for a in node.names), path.name
            if isinstance(node, ast.ImportFrom) and node.module == "microgui.core.methods":
                # ``from microgui.core.methods import mdav``: a module, not the package's names
                assert all((METHODS / f"{a.name}.py").exists() for a in node.names), path.name
            if isinstance(node, ast.Import):
                assert all(a.name != "microgui.core.methods" for a in node.names), path.name


def test_registered_adds_a_method_for_a_block_only() -> None:
    method = _fake("test-registry-pairs", _pairs)
    with registered(method):
        assert get_method("test-registry-pairs") is method
        assert method in available_methods()
    assert "test-registry-pairs" not in REGISTERED
    with pytest.raises(InvalidParameter, match="unknown method 'test-registry-pairs'"):
        get_method("test-registry-pairs")


def test_the_fixture_removes_what_it_registered(register_method: Callable[[Method], str]) -> None:
    name = register_method(_fake("test-registry-fixture", _pairs))
    assert get_method(name).name == name


def test_warm_ups_come_from_the_registry_each_once() -> None:
    found = warm_ups()
    assert len(found) == len(set(found))
    assert optimal_module.warm_up in found  # the benchmark's own list had left it out
    assert all(m.warm_up in found for m in available_methods() if m.warm_up is not None)
    assert get_method("ama").warm_up is get_method("mdav").warm_up  # ama composes mdav


def test_release_checks_and_artifacts_are_declared() -> None:
    checks = {m.name: m.release_check for m in available_methods() if m.release_check}
    assert checks == {
        "p-sensitive": ReleaseCheck("p-sensitive", "p"),
        "t-closeness": ReleaseCheck("t-closeness", "t"),
    }
    assert get_method("mstk").artifacts == (CLASSES, SPANNING_TREE)
    assert get_method("mst").artifacts == (SPANNING_TREE,)


def test_a_new_promise_needs_no_edit_of_export(register_method: Callable[[Method], str]) -> None:
    """A method promising distinct l-diversity is checked on export by its declaration alone."""
    name = register_method(
        _fake(
            "test-registry-l",
            _pairs,
            params=(ParamSpec("l", int, 2, "promised l"),),
            release_check=ReleaseCheck("l-diversity", "l"),
        )
    )
    frame = pd.DataFrame({"a": np.arange(8.0), "conf": [0, 1, 0, 1, 1, 0, 1, 0]})
    roles = roles_from_lists(frame.columns, qi=["a"], confidential=["conf"])
    ds = Dataset.from_frame(frame, roles)
    result = run_protection(ds, RunSpec.make(name, 2, {"l": 2}, seed=0))
    assert check_export(result).ok, check_export(result).problems
    strict = run_protection(ds, RunSpec.make(name, 2, {"l": 3}, seed=0))
    assert check_export(strict).problems == (
        "the table is only 2-diverse on 'conf', below the promised l = 3",
    )


def test_an_artifact_has_one_type() -> None:
    tree = SpanningTree(np.zeros((1, 2), np.int64), np.ones(1), np.zeros(1, bool))
    assert SPANNING_TREE.of(SPANNING_TREE.entry(tree)) is tree
    assert SPANNING_TREE.of({"mst": "not a tree"}) is None and CLASSES.of({}) is None
    with pytest.raises(TypeError, match="artifact 'classes' must be a DataFrame"):
        CLASSES.entry(tree)  # type: ignore[arg-type]


def test_table_limits_are_declared_and_asked_before_a_run() -> None:
    """A sweep's "All" must not pick methods that refuse the table (issue 15: 6 of 51 Census
    runs failed): optimal's largest table and optimal-univariate's one attribute are declared
    in the registry and answered by runs.method_refusal given the table's size."""
    from microgui.core.methods import get_method
    from microgui.core.runs import method_refusal
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    two = RoleMap.from_dict({"a": qi, "b": qi})
    one = RoleMap.from_dict({"a": qi})
    optimal, univariate = get_method("optimal"), get_method("optimal-univariate")
    assert "limited to 25 records" in method_refusal(optimal, two, 300)
    assert method_refusal(optimal, two, 20) == ""
    assert method_refusal(optimal, two, 40, {"max_records": 40}) == ""
    assert method_refusal(optimal, two) == ""  # without the table's size: the kinds only
    assert "exactly one continuous" in method_refusal(univariate, two, 300)
    assert method_refusal(univariate, one, 300) == ""
