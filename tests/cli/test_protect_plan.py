"""``microgui protect INPUT --plan PLAN.json`` (issue 31 item 1): the demo table end to end, the
plan's refusals in one line, and the same release as the API."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.demo import demo_path, demo_roles_path

PLAN = {
    "plan_version": 1,
    "steps": [
        {"step": "recode", "column": "age", "breaks": [0, 25, 35, 45, 55, 65, "inf"]},
        {"step": "recode", "column": "region", "mapping": "regions.json"},
        {"step": "top_bottom", "column": "hours_per_week", "top": 55},
        {"step": "microaggregate", "method": "mdav-generic", "k": 5},
    ],
}


@pytest.fixture
def plan_dir(tmp_path: Path) -> Path:
    """A small copy of the demo (600 records), its roles, a plan and the plan's mapping file."""
    frame = pd.read_csv(demo_path(), dtype=str).head(600)
    frame.to_csv(tmp_path / "persons.csv", index=False)
    (tmp_path / "persons.roles.json").write_bytes(demo_roles_path().read_bytes())
    regions = sorted(frame["region"].unique())
    mapping = {r: ("A" if i % 2 else "B") for i, r in enumerate(regions)}
    (tmp_path / "regions.json").write_text(json.dumps(mapping), encoding="utf-8")
    (tmp_path / "plan.json").write_text(json.dumps(PLAN), encoding="utf-8")
    return tmp_path


def _protect(d: Path, *extra: str) -> list[str]:
    return ["protect", str(d / "persons.csv"), "--roles", str(d / "persons.roles.json"),
            "--plan", str(d / "plan.json"), "--seed", "4", "--keep-order", "-q", *extra]  # fmt: skip


def test_plan_end_to_end(plan_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_dir / "release.csv"
    code = main(_protect(plan_dir, "-o", str(out), "--report", str(plan_dir / "r.json"),
                         "--report-html", str(plan_dir / "r.html")))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    released = pd.read_csv(out, dtype=str)
    assert set(released["region"]) <= {"A", "B"} and "person_id" not in released.columns
    report = json.loads((plan_dir / "r.json").read_text(encoding="utf-8"))
    assert report["plan"] == PLAN
    assert [s["step"] for s in report["steps"]] == ["recode", "recode", "top_bottom",
                                                    "microaggregate"]  # fmt: skip
    assert report["steps"][1]["distinct_after"] == 2 and report["k_anonymity"] >= 5
    for n in range(1, 5):  # every step listed on stderr and in the HTML report
        assert f"step {n}: " in err
    page = (plan_dir / "r.html").read_text(encoding="utf-8")
    assert "<h2>Protection plan</h2>" in page and "top/bottom-code hours_per_week" in page
    # the same plan, the same seed: the same release, byte for byte
    again = plan_dir / "again.csv"
    assert main(_protect(plan_dir, "-o", str(again))) == 0
    assert again.read_bytes() == out.read_bytes()


def test_plan_refusals_one_line_nothing_written(
    plan_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = plan_dir / "release.csv"
    assert main(_protect(plan_dir, "-o", str(out), "--method", "mdav", "-k", "3")) == 2
    assert "--plan gives the steps of the run; drop --method, -k" in capsys.readouterr().err
    bad = dict(PLAN, steps=[*PLAN["steps"], {"step": "shuffle"}])
    (plan_dir / "plan.json").write_text(json.dumps(bad), encoding="utf-8")
    assert main(_protect(plan_dir, "-o", str(out))) == 2
    err = capsys.readouterr().err
    assert "step 5: unknown step kind 'shuffle'" in err and len(err.strip().splitlines()) == 1
    (plan_dir / "regions.json").write_text('{"North": "A"}', encoding="utf-8")
    (plan_dir / "plan.json").write_text(json.dumps(PLAN), encoding="utf-8")
    assert main(_protect(plan_dir, "-o", str(out))) == 2
    err = capsys.readouterr().err
    assert "are not in the mapping" in err and "Lakeland" not in err
    assert not out.exists()


def test_api_and_copied_command_give_the_same_release(
    plan_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One plan, one seed: the CLI, the API (``protect(plan=...)``) and the command the app
    copies (:func:`command_for_plan`) write the same bytes."""
    import microgui
    from microgui.core.release.order import RecordOrder
    from microgui.core.release.replay import command_for_plan
    from microgui.core.table.roles import roles_from_file

    cli_out = plan_dir / "cli.csv"
    assert main(_protect(plan_dir, "-o", str(cli_out))) == 0
    frame = pd.read_csv(plan_dir / "persons.csv", dtype=str, keep_default_na=False)
    roles = roles_from_file(plan_dir / "persons.roles.json", list(frame.columns))
    result = microgui.protect(frame, roles=roles, plan=plan_dir / "plan.json", seed=4)
    assert result.report["plan"] == PLAN and result.check.ok
    result.export(plan_dir / "api.csv", keep_order=True)
    assert (plan_dir / "api.csv").read_bytes() == cli_out.read_bytes()
    command = command_for_plan(plan_dir / "persons.csv", roles, plan_dir / "plan.json",
                               plan_dir / "copied.csv", seed=4,
                               order=RecordOrder(keep=True))  # fmt: skip
    assert "--plan" in command.args and "--method" not in command.args
    assert main([*command.args, "-q"]) == 0
    capsys.readouterr()
    assert (plan_dir / "copied.csv").read_bytes() == cli_out.read_bytes()
