"""Issue 7: run reports (JSON) hold aggregates and measures, never a record's raw value.

For every registered method that runs on the demo's quasi-identifiers, the JSON report written by
export_run is searched for identifier values and for the raw values of the quasi-identifiers and
of the confidential column (numbers of five characters or more, so that k = 5 or a group count
does not match by chance; every category label except the ordinal order and nominal category
names, which the report may name as part of the spec). The spec itself (parameters, hierarchy
descriptions) is the user's configuration and is left out of the search.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from microgui.core.demo import load_demo
from microgui.core.errors import MicroguiError
from microgui.core.methods import available_methods
from microgui.core.release.check import export_run
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole

N = 300


@pytest.fixture(scope="module")
def mixed() -> Dataset:
    demo = load_demo()
    frame = demo.frame.iloc[:N].reset_index(drop=True)
    return Dataset.from_frame(frame, roles=demo.roles, source=None)


@pytest.fixture(scope="module")
def continuous(mixed: Dataset) -> Dataset:
    """The demo with only its continuous quasi-identifiers tagged (for continuous-only methods)."""
    roles = mixed.roles
    for column in roles.quasi_identifiers:
        if roles[column].kind is not AttributeKind.CONTINUOUS:
            roles = roles.replace(column, roles[column].with_role(AttributeRole.NON_CONFIDENTIAL))
    return Dataset.from_frame(mixed.frame, roles=roles, source=None)


def _raw_tokens(frame: pd.DataFrame, columns: list[str]) -> set[str]:
    tokens: set[str] = set()
    for column in columns:
        for value in frame[column].astype(str):
            if re.fullmatch(r"-?\d+(\.\d+)?", value):
                if len(value) >= 5:
                    tokens.add(value)
            # category labels are part of the spec (the ordinal order), so they may appear
    return tokens


@pytest.mark.parametrize("method", [m.name for m in available_methods()])
def test_json_report_holds_no_record_value(
    mixed: Dataset, continuous: Dataset, method: str, tmp_path: Path
) -> None:
    kinds = next(m for m in available_methods() if m.name == method).kinds
    dataset = mixed if AttributeKind.NOMINAL in kinds else continuous
    try:
        result = run_protection(dataset, RunSpec.make(method, 5, seed=3))
    except MicroguiError as exc:  # a method that refuses the demo's kinds or size
        pytest.skip(f"{method}: {exc}")
    report_path = tmp_path / "report.json"
    export_run(dataset, result, tmp_path / "out.csv", report_path, override="test of the report")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    # the spec is the user's configuration (e.g. "intervals of width 100000"), not record values
    for key in ("parameters", "hierarchies"):
        report.pop(key, None)
    text = json.dumps(report, ensure_ascii=False)
    roles = dataset.roles
    for value in dataset.frame[roles.identifiers[0]].astype(str):
        assert not re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", text), value
    leaked = [
        t
        for t in _raw_tokens(dataset.frame, roles.quasi_identifiers + roles.confidential)
        if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w.])", text)
    ]
    assert not leaked, f"{method} report holds raw values {leaked[:5]}"
    # the verdict's keys (issue 29) are part of what was searched
    assert set(report["attribute_disclosure"]) == set(roles.confidential)
    assert {"level", "text"} <= set(report["verdict"])
    assert isinstance(report["released_with_attribute_disclosure"], bool)


def test_attribute_disclosure_names_no_confidential_category(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29: a homogeneous group discloses a category; the report, the release report, the
    log and the verdict count it and name its column, never the category itself."""
    from microgui.core.release.report import release_report_makers
    from microgui.core.table.roles import ColumnSpec, RoleMap

    labels = ["DIAGNOSIS-ALPHA", "DIAGNOSIS-BETA", "DIAGNOSIS-GAMMA"]
    frame = pd.DataFrame(
        {
            "age": [20 + (i % 30) for i in range(60)],
            "zone": [f"ZONE-{i % 3}" for i in range(60)],
            # every record of zone 0 has ALPHA: groups there are homogeneous
            "diagnosis": [labels[0] if i % 3 == 0 else labels[1 + i % 2] for i in range(60)],
        }
    )
    roles = RoleMap.from_dict(
        {
            "age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS),
            "zone": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL),
            "diagnosis": ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.NOMINAL),
        }
    )
    dataset = Dataset.from_frame(frame, roles=roles, source=None)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 3, seed=1))
    html = tmp_path / "out.html"
    with caplog.at_level("INFO"):
        report = export_run(
            dataset,
            result,
            tmp_path / "out.csv",
            tmp_path / "out.json",
            extra_reports=release_report_makers(html, None),
        )
    assert report["released_with_attribute_disclosure"] is True
    assert report["attribute_disclosure"]["diagnosis"]["homogeneous_groups"] > 0
    assert "diagnosis" in report["verdict"]["text"]
    texts = [
        (tmp_path / "out.json").read_text(encoding="utf-8"),
        html.read_text(encoding="utf-8"),
        "\n".join(r.getMessage() for r in caplog.records),
        json.dumps(result.report),
    ]
    assert any("released with attribute disclosure" in r.getMessage() for r in caplog.records)
    for text in texts:
        for value in [*labels, "ZONE-0", "ZONE-1", "ZONE-2"]:
            assert value not in text


def test_risk_before_and_after_hold_no_category_or_value(mixed: Dataset) -> None:
    """Issue 29: ``risk_before`` / ``risk_after`` (``assess_risk``) hold counts, measures and
    column names only: no category of a key or confidential column appears in them, not even
    the ones the spec may name, and no number of five characters or more of a record."""
    result = run_protection(mixed, RunSpec.make("mdav-generic", 5, seed=3))
    roles = mixed.roles
    columns = roles.quasi_identifiers + roles.confidential
    for section in ("risk_before", "risk_after"):
        risk = result.report[section]
        assert risk["keys"] and risk["k_anonymity"]["level"] >= 1, section
        text = json.dumps(risk, ensure_ascii=False)
        for column in columns:
            for value in mixed.frame[column].dropna().astype(str).unique():
                if value in columns or len(value) < 2:
                    continue
                assert json.dumps(value, ensure_ascii=False) not in text, (section, value)
        leaked = [
            t for t in _raw_tokens(mixed.frame, columns)
            if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w.])", text)
        ]  # fmt: skip
        assert not leaked, (section, leaked[:5])
    assert result.report["risk_after"]["k_anonymity"]["level"] >= 5


def test_renamed_columns_in_the_report_are_names_only(mixed: Dataset, tmp_path: Path) -> None:
    """Issue 30: ``variables`` and ``renamed_columns`` (an SPSS release under valid names) hold
    column names, original and released, and nothing of a record."""
    result = run_protection(mixed, RunSpec.make("mdav-generic", 5, seed=3))
    written = [str(c) for c in result.protected.columns]
    report_path = tmp_path / "report.json"
    export_run(
        mixed, result, tmp_path / "out.sav", report_path, override="test of the report",
        renames={written[0]: "first_column"}, rename_invalid=True,
    )  # fmt: skip
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["renamed_columns"][written[0]] == "first_column"
    assert [v["name"] for v in report["variables"]] == written
    names = set(written) | set(report["renamed_columns"].values())
    for entry in report["variables"]:
        assert set(entry) == {"name", "released_as"} and set(entry.values()) <= names
    text = json.dumps({k: report[k] for k in ("variables", "renamed_columns")}, ensure_ascii=False)
    roles = mixed.roles
    tokens = _raw_tokens(mixed.frame, roles.quasi_identifiers + roles.confidential)
    assert not [t for t in tokens if t in text]


def test_household_risk_and_record_order_hold_no_id(mixed: Dataset, tmp_path: Path) -> None:
    """Issue 31: ``household_risk`` (in ``risk_before``/``risk_after``) and ``record_order``
    hold counts, measures and column names: no household id, no position of a record, and the
    order's seed only when the user gave one."""
    from dataclasses import replace

    from microgui.core.release.order import RecordOrder
    from microgui.core.release.report import release_report_makers
    from microgui.core.table.roles import ColumnSpec

    n = 90
    ids = [f"HH-{70000 + i // 3}" for i in range(n)]
    frame = mixed.frame.iloc[:n].assign(hh=ids)
    roles = replace(mixed.roles).__class__(
        (*mixed.roles.specs, ("hh", ColumnSpec(AttributeRole.HOUSEHOLD, AttributeKind.NOMINAL)))
    )
    dataset = Dataset.from_frame(frame, roles=roles, source=None)
    result = run_protection(dataset, RunSpec.make("mdav-generic", 5, seed=3))
    for order, seed in ((RecordOrder(), None), (RecordOrder(seed=123456789), 123456789)):
        html = tmp_path / "r.html"
        export_run(
            dataset, result, tmp_path / "r.csv", tmp_path / "r.json",
            extra_reports=release_report_makers(html if seed is None else None, None),
            order=order,
        )  # fmt: skip
        report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        assert set(report["record_order"]) == {
            "order", "text", "households_kept_together", "seed", "seed_note"
        }  # fmt: skip
        assert report["record_order"]["seed"] == seed
        assert report["risk_before"]["household_risk"]["households"] == n // 3
        for text in ((tmp_path / "r.json").read_text(encoding="utf-8"), html.read_text("utf-8")):
            for value in dict.fromkeys(ids):
                assert value not in text, value
                assert not re.search(rf"(?<![\w.]){value[3:]}(?![\w.])", text), value
        if seed is None:
            assert "123456789" not in (tmp_path / "r.json").read_text(encoding="utf-8")
