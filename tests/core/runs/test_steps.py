"""A run is a plan (issue 28, item 4): :attr:`RunSpec.steps`, today always one method step made
of the spec's fields, executed by ``run_protection`` with the report it gave before steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from microgui.core.demo import load_demo
from microgui.core.runs import MethodStep, RunSpec, run_protection
from microgui.core.runs.project_file import load_project
from microgui.core.table.dataset import Dataset

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_spec_is_one_method_step_equal_to_its_fields() -> None:
    spec = RunSpec.make(
        "mstk", "4", {"b": 2, "a": "x"}, seed=9, hierarchies={"age": "h.csv"}, block_size=500
    )
    assert spec.steps == (MethodStep("mstk", 4, (("a", "x"), ("b", 2)), (("age", "h.csv"),)),)
    (step,) = spec.steps
    assert (step.method, step.k, step.params, step.hierarchies) == (
        spec.method,
        spec.k,
        spec.params,
        spec.hierarchies,
    )
    assert step.param_dict == spec.param_dict
    assert RunSpec("mdav", 3).steps == (MethodStep("mdav", 3),)


def test_steps_leave_equality_hash_and_json_of_a_spec_unchanged() -> None:
    spec = RunSpec.make("mdav", 3, seed=1)
    assert spec == RunSpec.make("mdav", 3, seed=1)
    assert hash(spec) == hash(RunSpec.make("mdav", 3, seed=1))
    assert "steps" not in spec.to_json()  # today's project files and reports keep their keys
    assert list(spec.to_json()) == [
        "method", "k", "parameters", "seed", "hierarchies", "strata", "block_size", "engine",
        "scheduler", "workers",
    ]  # fmt: skip


def test_a_project_file_of_the_previous_version_loads_to_the_same_steps() -> None:
    project = load_project(DATA / "project_v1.json")
    assert [s.steps for s in project.runs] == [
        (MethodStep("mdav-generic", 5, (), ()),),
        (MethodStep("mdav-generic", 10, (("rescale_variance", True),), ()),),
    ]


@pytest.fixture(scope="module")
def demo600() -> Dataset:
    demo = load_demo()
    return Dataset(demo.frame.head(600).reset_index(drop=True), demo.roles)


_COMMON = [
    "citation", "confidential", "group_size_counts", "identifiers_removed", "il_lower_bound",
    "il_lower_bound_basis", "il_lower_bound_best", "information_loss", "information_loss_all_qi",
    "information_loss_all_qi_basis", "information_loss_basis", "information_loss_by_attribute",
    "input", "invented_combinations", "k", "k_anonymity", "max_group_size", "method",
    "microgui_version", "min_group_size", "missing_as_category", "n_groups", "n_records",
    "parameters", "quasi_identifiers", "seconds", "seed", "sse", "sst", "weight",
    "attribute_disclosure", "verdict",  # added by issue 29 (the release's verdict)
    "risk_before", "risk_after",  # added by issue 29 (the file's risk, before and after)
    "threads",  # added by issue 33 (the threads the kernels ran on; the release is the same)
]  # fmt: skip
_MSTK = [
    "cavg", "discernibility", "distinct_qi_combinations", "generalization_il",
    "generalization_il_by_attribute", "generalization_il_categorical", "generalization_il_numeric",
    "hierarchies", "inflexion_point", "mst_edges_pruned", "mst_total_weight",
    "small_subtrees_merged", "subtrees",
]  # fmt: skip

# Computed with run_protection on the commit before steps existed (the first 600 demo records).
EXPECTED: list[tuple[RunSpec, list[str], dict[str, Any]]] = [
    (
        RunSpec.make("mdav-generic", 3, seed=1),
        _COMMON,
        {"n_groups": 200, "min_group_size": 3, "max_group_size": 3, "k_anonymity": 3, "seed": 1,
         "sse": 107.0710086603915, "information_loss": 4.468739927395313,
         "information_loss_all_qi": 6.0581935898942545},
    ),
    (
        RunSpec.make("mdav-generic", 5, {"rescale_variance": True}, seed=2),
        _COMMON,
        {"n_groups": 120, "min_group_size": 5, "max_group_size": 5, "k_anonymity": 5, "seed": 2,
         "sse": 191.55415221648926, "information_loss": 7.994747588334292,
         "information_loss_all_qi": 11.734178981857305},
    ),
    (
        RunSpec.make("mstk", 4, seed=3),
        _COMMON + _MSTK,
        {"n_groups": 122, "min_group_size": 4, "max_group_size": 7, "k_anonymity": 4, "seed": 3,
         "sse": None, "information_loss": None, "generalization_il": 1.7455697188318064,
         "information_loss_all_qi": 35.21314537482471},
    ),
    (
        RunSpec.make("mdav-generic", 3, seed=4, block_size=200),
        [*_COMMON, "scale"],
        {"n_groups": 200, "min_group_size": 3, "max_group_size": 3, "k_anonymity": 3, "seed": 4,
         "sse": 110.21124777829029, "information_loss": 4.599801660195764,
         "information_loss_all_qi": 7.443331360079454},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "keys", "values"), EXPECTED, ids=lambda v: str(v)[:40])
def test_run_protection_gives_the_report_it_gave_before_steps(
    demo600: Dataset, spec: RunSpec, keys: list[str], values: dict[str, Any]
) -> None:
    result = run_protection(demo600, spec)
    assert result.spec == spec
    assert sorted(result.report) == sorted(keys)
    got = {name: result.report[name] for name in values}
    assert got == {
        name: pytest.approx(v, rel=1e-9) if isinstance(v, float) else v
        for name, v in values.items()
    }
    json.dumps(result.report)  # still JSON-ready
