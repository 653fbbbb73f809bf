"""Protection plans (issue 31 item 1; ``../shared/design/release-workflow.md``: "a plan is data:
an ordered list of steps, each with its parameters, applied to the original table, with one
verification of the final release against every promise of every step")."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microgui.core.demo import load_demo
from microgui.core.errors import InvalidInput, InvalidParameter, InvalidRoles, MicroguiError
from microgui.core.metrics.missing_match import frequencies_missing_any
from microgui.core.release.check import check_export, export_run
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunSpec, run_protection
from microgui.core.runs.plan import (
    MAX_STEPS,
    load_plan,
    plan_from_json,
    resolve_plan,
    run_plan,
)
from microgui.core.table.dataset import Dataset

N = 400
AGE_BREAKS = [0, 25, 35, 45, 55, 65, "inf"]


@pytest.fixture(scope="module")
def demo() -> Dataset:
    full = load_demo()
    return Dataset(full.frame.head(N).reset_index(drop=True), full.roles)


@pytest.fixture(scope="module")
def three(demo: Dataset) -> Any:
    """The three-step plan's outcome, run once for the tests that read it."""
    return run_plan(demo, plan_from_json(THREE_STEPS), seed=5)


def _plan(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"plan_version": 1, "steps": list(steps)}


THREE_STEPS = _plan(
    {"step": "recode", "column": "age", "breaks": AGE_BREAKS},
    {"step": "top_bottom", "column": "hours_per_week", "top": 55, "top_value": "55+"},
    {"step": "microaggregate", "method": "mdav-generic", "k": 4},
)


# ---- the spec ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], "not a JSON object"),
        ({"plan_version": 2, "steps": []}, "plan_version 2"),
        ({"plan_version": 1}, '"steps"'),
        (_plan(), "no step"),
        (_plan({"step": "shuffle"}), "unknown step kind 'shuffle'"),
        (_plan({"step": "recode", "column": "age", "brakes": [1, 2]}), "unknown key(s) 'brakes'"),
        (_plan({"step": "recode", "column": "age"}), "exactly one of"),
        (_plan({"step": "recode", "column": "age", "bins": 3, "breaks": [1, 2]}), "exactly one"),
        (_plan({"step": "recode", "column": "age", "hierarchy": "h.csv"}), "needs its level"),
        (_plan({"step": "top_bottom", "column": "age"}), "top, bottom or both"),
        (_plan({"step": "microaggregate", "method": "mdav", "k": "five"}), "k='five'"),
        (_plan({"step": "microaggregate", "method": "mdav", "k": 3, "columns": "all"}), "columns"),
        (_plan({"step": "suppress", "k": 3, "combinations": 1.5}), "whole number"),
    ],
)
def test_bad_plans_are_refused_in_one_line(data: Any, words: str) -> None:
    with pytest.raises(InvalidInput) as err:
        plan_from_json(data)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_ten_thousand_steps_refused_at_once(tmp_path: Path) -> None:
    step = {"step": "microaggregate", "method": "mdav", "k": 3}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(_plan(*[step] * 10_000)), encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(InvalidInput, match=f"10,000 steps; a plan holds at most {MAX_STEPS}"):
        load_plan(path)
    assert time.perf_counter() - started < 1.0  # refused before any step is parsed
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        load_plan(path)


def test_plan_json_round_trips(tmp_path: Path) -> None:
    data = _plan(
        {"step": "recode", "column": "age", "breaks": AGE_BREAKS},
        {"step": "recode", "column": "region", "mapping": "regions.csv"},
        {"step": "recode", "column": "education", "hierarchy": "edu.csv", "level": 1},
        {"step": "top_bottom", "column": "income", "bottom": 100, "top": 9000, "top_value": 9000},
        {"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous",
         "parameters": {"refine": "none"}},
        {"step": "suppress", "k": 3, "columns": ["sex"], "importance": ["sex"],
         "combinations": 2},
    )  # fmt: skip
    plan = plan_from_json(data)
    assert plan.to_json() == data
    assert plan_from_json(plan.to_json()) == plan
    assert plan.k == 3 and plan.suppresses
    seeded = plan_from_json({**data, "seed": 42})
    assert seeded.seed == 42 and seeded.to_json()["seed"] == 42 and seeded != plan
    with pytest.raises(InvalidInput, match="seed -1 is out of range"):
        plan_from_json({**data, "seed": -1})


def test_validation_against_the_table(demo: Dataset) -> None:
    columns = list(demo.frame.columns)
    with pytest.raises(MicroguiError, match="'agee'"):
        resolve_plan(
            plan_from_json(_plan({"step": "recode", "column": "agee", "bins": 3},
                                 {"step": "microaggregate", "method": "mdav", "k": 3})),
            demo.roles, columns,
        )  # fmt: skip
    with pytest.raises(InvalidRoles, match="'health_score', which is confidential"):
        resolve_plan(
            plan_from_json(_plan({"step": "top_bottom", "column": "health_score", "top": 90},
                                 {"step": "microaggregate", "method": "mdav", "k": 3})),
            demo.roles, columns,
        )  # fmt: skip
    with pytest.raises(InvalidParameter, match="no step giving k-anonymity"):
        resolve_plan(
            plan_from_json(_plan({"step": "recode", "column": "age", "bins": 3})),
            demo.roles,
            columns,
        )
    with pytest.raises(InvalidParameter, match="after a local suppression"):
        resolve_plan(
            plan_from_json(_plan({"step": "suppress", "k": 3, "columns": ["sex"]},
                                 {"step": "recode", "column": "sex", "mapping": "m.csv"})),
            demo.roles, columns,
        )  # fmt: skip
    # names are matched as every option matches them (case, spaces)
    plan = resolve_plan(
        plan_from_json(_plan({"step": "recode", "column": " AGE", "bins": 3},
                             {"step": "microaggregate", "method": "mdav", "k": 3,
                              "columns": ["Income"]})),
        demo.roles, columns,
    )  # fmt: skip
    assert plan.steps[0].column == "age" and plan.steps[1].columns == ("income",)


# ---- running -----------------------------------------------------------------------------------


def test_one_step_plan_is_todays_run_byte_for_byte(demo: Dataset, tmp_path: Path) -> None:
    plan = plan_from_json(_plan({"step": "microaggregate", "method": "mdav-generic", "k": 5}))
    planned = run_plan(demo, plan, seed=11).result
    today = run_protection(demo, RunSpec.make("mdav-generic", 5, seed=11))
    kept = RecordOrder(keep=True)  # the input order: byte for byte
    export_run(demo, today, tmp_path / "today.csv", tmp_path / "today.json", order=kept)
    export_run(demo, planned, tmp_path / "plan.csv", tmp_path / "plan.json", order=kept)
    assert (tmp_path / "plan.csv").read_bytes() == (tmp_path / "today.csv").read_bytes()
    before = json.loads((tmp_path / "today.json").read_text(encoding="utf-8"))
    after = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert set(after) - set(before) == {"plan", "steps"}  # today's keys all kept
    assert after["method"] == "mdav-generic" and after["steps"][0]["n_groups"] == today.n_groups


def test_three_step_plan_steps_and_figures(demo: Dataset, three: Any) -> None:
    out = three
    frame, report = out.result.protected, out.result.report
    assert "person_id" not in frame.columns  # identifiers removed
    # the recoded column is homogeneous: every value one of the intervals (it tabulates)
    assert set(frame["age"]) <= {"[0, 25)", "[25, 35)", "[35, 45)", "[45, 55)", "[55, 65)",
                                 "[65, inf)"}  # fmt: skip
    s1, s2, s3 = out.steps
    assert s1["values_changed"] == N and s1["distinct_after"] <= 6
    assert s2["values_changed"] == int((pd.to_numeric(demo.frame["hours_per_week"]) > 55).sum())
    assert s3["columns"] == demo.roles.quasi_identifiers and s3["n_groups"] >= 1
    assert s3["records_below_k_after"] == 0 and report["k_anonymity"] >= 4
    assert [s["index"] for s in report["steps"]] == [1, 2, 3]
    assert report["plan"] == THREE_STEPS and report["method"] == "plan"
    assert check_export(out.result).ok
    # columns that are not quasi-identifiers are the input's, untouched
    for col in ("household_size", "health_score", "survey_weight"):
        assert frame[col].equals(demo.frame[col])


def test_microaggregating_a_subset_leaves_the_other_keys(demo: Dataset) -> None:
    plan = plan_from_json(
        _plan({"step": "recode", "column": "age", "breaks": AGE_BREAKS},
              {"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous"})
    )  # fmt: skip
    out = run_plan(demo, plan, seed=2)
    (_, step) = out.steps
    assert step["columns"] == ["hours_per_week", "income", "wealth"]  # age is ordinal now
    frame = out.result.protected
    for col in ("sex", "region", "education"):
        assert frame[col].equals(demo.frame[col])
    assert (frame[["hours_per_week", "income", "wealth"]].value_counts() >= 3).all()
    # the categorical keys were not protected: the release check says so, naming the k
    check = check_export(out.result)
    assert not check.ok and "below the chosen k = 3" in check.problems[0]


@pytest.mark.parametrize("ext", [".csv", ".tsv", ".xlsx", ".parquet", ".sav", ".dta"])
def test_plan_release_passes_the_release_check_in_every_format(
    demo: Dataset, three: Any, ext: str, tmp_path: Path
) -> None:
    out = three
    report = export_run(demo, out.result, tmp_path / f"release{ext}", tmp_path / "r.json")
    assert report["k_anonymity"] >= 4 and "export_override" not in report
    assert [s["step"] for s in report["steps"]] == ["recode", "top_bottom", "microaggregate"]


def test_plan_report_holds_no_record_value(demo: Dataset, three: Any, tmp_path: Path) -> None:
    """Issue 7's rule for the new keys: ``steps`` holds counts and measures; ``plan`` is the
    user's spec (breaks, thresholds), left out of the search as the parameters are."""
    export_run(demo, three.result, tmp_path / "o.csv", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    report.pop("plan")
    text = json.dumps(report)
    for value in demo.frame["person_id"].astype(str):
        assert value not in text
    for col in ("income", "wealth"):
        for value in demo.frame[col].astype(str):
            if len(value) >= 5:
                assert not re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text), value


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(*[st.one_of(st.none(), st.sampled_from("ab")) for _ in range(3)]),
        min_size=1,
        max_size=25,
    )
)
def test_missing_matches_any_value(rows: list[tuple[str | None, ...]]) -> None:
    """sdcMicro's convention (freqCalc): record j counts for record i when on every key they
    agree or either is missing; checked against the pairwise definition."""
    frame = pd.DataFrame(rows, columns=["x", "y", "z"])
    got = frequencies_missing_any(frame, ["x", "y", "z"])
    want = [
        sum(all(a is None or b is None or a == b for a, b in zip(r, s, strict=True)) for s in rows)
        for r in rows
    ]
    assert got.tolist() == want
    if not any(v is None for r in rows for v in r):
        plain = frame.groupby(["x", "y", "z"])["x"].transform("size").to_numpy()
        assert np.array_equal(got, plain)


def test_a_project_keeps_its_plans(demo: Dataset, tmp_path: Path) -> None:
    from microgui.core.runs.project_file import Project, load_project, save_project

    project = Project(None, tuple(demo.frame.columns), demo.roles, plans=(THREE_STEPS,))
    save_project(project, tmp_path / "p.microgui.json")
    assert load_project(tmp_path / "p.microgui.json").plans == (THREE_STEPS,)
    saved = json.loads((tmp_path / "p.microgui.json").read_text(encoding="utf-8"))
    saved["plans"] = [_plan({"step": "shuffle"})]
    (tmp_path / "bad.microgui.json").write_text(json.dumps(saved), encoding="utf-8")
    with pytest.raises(InvalidInput, match="unknown step kind 'shuffle'"):
        load_project(tmp_path / "bad.microgui.json")
    # a project without plans is written as before: no new key
    plain = Project(None, tuple(demo.frame.columns), demo.roles)
    assert "plans" not in plain.to_json()


def test_suppression_plan_verified_with_missing_matching_any(demo: Dataset, tmp_path: Path) -> None:
    """A plan ending in local suppression (sdcMicro's localSuppression: missing matches any
    value) is released by the release check in every sense: k on all keys with that rule, the
    suppressed cells only in key columns, and a broken promise refused."""
    plan = plan_from_json(
        _plan({"step": "recode", "column": "age", "breaks": AGE_BREAKS},
              {"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous"},
              {"step": "suppress", "k": 3, "importance": ["sex"]})
    )  # fmt: skip
    out = run_plan(demo, plan, seed=1)
    frame, report = out.result.protected, out.result.report
    keys = demo.roles.quasi_identifiers
    assert int(frequencies_missing_any(frame, keys).min()) >= 3
    assert report["k_anonymity"] >= 3 and "missing matches any" in report["k_anonymity_rule"]
    last = out.steps[-1]
    assert last["total"] == sum(last["suppressed"].values()) > 0
    assert last["records_below_k_after"] == 0
    for col in frame.columns:
        if col not in keys:
            assert frame[col].equals(demo.frame[col]), col
    check = check_export(out.result)
    assert check.ok, check.problems
    written = export_run(demo, out.result, tmp_path / "release.parquet", tmp_path / "r.json")
    assert written["steps"][-1]["total"] == last["total"]
    # a release with one suppressed cell put back breaks the suppress step's promise
    tampered = frame.copy()
    hit = tampered[keys].isna().any(axis=1).to_numpy().nonzero()[0][0]
    col = next(c for c in keys if pd.isna(tampered.at[hit, c]))
    tampered.at[hit, col] = "a value no other record has"
    problems = check_export(out.result, tampered).problems
    assert any("below the chosen k = 3" in p for p in problems)
    assert any("plan step 3 (suppress) promised k = 3" in p for p in problems)


def test_default_suppression_blanks_categorical_keys_only(demo: Dataset, tmp_path: Path) -> None:
    """A suppress step without columns (issue 31 decision, after sdcMicro's localSuppression,
    which works on categorical keys): only categorical key cells are blanked; the continuous
    keys, microaggregated before, are kept whole, and k holds on every key (missing matching
    any value) because the suppression works within each group of equal continuous values."""
    from microgui.core.table.roles import AttributeKind

    roles = demo.roles
    continuous = [c for c in roles.quasi_identifiers if roles[c].kind is AttributeKind.CONTINUOUS]
    assert continuous  # the demo has continuous keys
    plan = plan_from_json(
        _plan({"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous"},
              {"step": "suppress", "k": 3})
    )  # fmt: skip
    out = run_plan(demo, plan, seed=1)
    frame, last = out.result.protected, out.steps[-1]
    assert last["total"] > 0 and set(last["suppressed"]).isdisjoint(continuous)
    assert set(last["k_on"]) == set(roles.quasi_identifiers)
    for c in continuous:  # no microaggregated numeric cell blanked
        assert not frame[c].isna().any() or demo.frame[c].isna().any(), c
    assert int(frequencies_missing_any(frame, roles.quasi_identifiers).min()) >= 3
    check = check_export(out.result)
    assert check.ok, check.problems
    # the new keys (k_on, group_measures_rule) hold column names and words, never a category
    export_run(demo, out.result, tmp_path / "o.csv", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "suppressed (missing) key cell" in report["group_measures_rule"]
    # group sizes and attribute disclosure follow k's rule: a suppressed cell matches any value
    # (microgui.core.metrics.disclosure, module docstring; sdcMicro freqCalc)
    assert report["min_group_size"] == report["k_anonymity"] >= 3
    from microgui.core.metrics.disclosure import attribute_disclosure

    conf = [c for c in roles.confidential if c in frame.columns]
    assert conf
    rule = attribute_disclosure(
        frame, roles.quasi_identifiers, conf, roles, missing_matches_any=True
    )
    plain = attribute_disclosure(frame, roles.quasi_identifiers, conf, roles)
    assert report["attribute_disclosure"] == json.loads(json.dumps(rule))
    assert rule != plain  # the demo's suppressions change the figures
    assert check.attribute_disclosure == rule
    from microgui.core.release.report import _notes
    from microgui.core.release.report_steps import steps_html

    assert any(n.startswith("Groups after the suppression: ") for n in _notes(report))
    assert "matching any value" in steps_html(report)
    report.pop("plan")
    text = json.dumps(report)
    for col in ("region", "education"):
        for value in demo.frame[col].dropna().astype(str).unique():
            assert not re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text), value
    # without the microaggregation the continuous keys leave groups below k: refused, one line
    alone = plan_from_json(_plan({"step": "suppress", "k": 3}))
    with pytest.raises(MicroguiError, match="microaggregate the continuous keys first"):
        run_plan(demo, alone, seed=1)


def test_combinations_suppression_passes_the_check_it_promised(demo: Dataset) -> None:
    """A suppress step with ``combinations = m`` (sdcMicro ``combs``) promises k over every
    combination of at most m keys: the release check and the report measure that, and say so;
    the combination of all keys may stay below k."""
    from itertools import combinations

    plan = plan_from_json(
        _plan({"step": "microaggregate", "method": "mdav", "k": 3, "columns": "continuous"},
              {"step": "suppress", "k": 3, "combinations": 2})
    )  # fmt: skip
    out = run_plan(demo, plan, seed=1)
    frame, report = out.result.protected, out.result.report
    keys = out.steps[-1]["k_on"]
    assert set(keys) == {
        c for c in demo.roles.quasi_identifiers if demo.roles[c].kind.value != "continuous"
    }
    pairs = min(
        int(frequencies_missing_any(frame, list(c)).min())
        for r in (1, 2)
        for c in combinations(keys, r)
    )
    assert report["k_anonymity"] == pairs >= 3
    assert "at most 2 of the suppress step's keys" in report["k_anonymity_rule"]
    check = check_export(out.result)
    assert check.ok, check.problems
