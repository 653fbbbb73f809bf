"""``protect --keep-order / --order-seed N / --household COL`` and ``assess --household COL
[--household-size-key]`` (issue 31 items 4-5): the record order of a release and the household
risk from the command line, the options of "Copy as command", and bad input as one line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import build_parser, main
from microgui.core.release.order import RecordOrder
from microgui.core.release.replay import command_for_run
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    n = 48
    frame = pd.DataFrame(
        {
            "pid": [f"P{i:03d}" for i in range(n)],
            "hh": np.repeat([f"HSECRET{j:02d}" for j in range(16)], 3),
            "sex": rng.choice(["m", "f"], n),
            "age": rng.integers(20, 70, n),
            "row": np.arange(n),
        }
    )
    path = tmp_path / "persons.csv"
    frame.to_csv(path, index=False)
    return path


def _protect(table: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "protect", str(table), "-o", str(out), "--qi", "age,sex", "--nominal", "sex",
            "--identifiers", "pid", "--household", "hh", "--method", "mdav-generic", "-k", "3", "--seed", "1",
            "--report", str(out.with_suffix(".json")), "-q", *extra,
        ]
    )  # fmt: skip


def test_default_random_order_households_together(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.csv"
    assert _protect(table, out) == 0
    released = pd.read_csv(out)
    assert sorted(released["row"]) == list(range(48)) and released["row"].tolist() != list(
        range(48)
    )
    runs = (released["hh"] != released["hh"].shift()).sum()
    assert runs == 16  # each household one block of rows
    report = json.loads(out.with_suffix(".json").read_text())
    assert (
        report["record_order"]["text"]
        == "records released in random order, households kept together"
    )
    assert report["record_order"]["seed"] is None
    # household risk before and after, beside the individual risk; never an id
    for when in ("risk_before", "risk_after"):
        assert report[when]["household_risk"]["households"] == 16
        assert (
            report[when]["household_risk"]["expected_reidentifications"]
            >= (report[when]["individual_risk"]["expected_reidentifications"])
        )
    assert "HSECRET" not in out.with_suffix(".json").read_text()


def test_keep_order_and_seed(table: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept.csv"
    assert _protect(table, kept, "--keep-order") == 0
    assert pd.read_csv(kept)["row"].tolist() == list(range(48))
    assert json.loads(kept.with_suffix(".json").read_text())["record_order"]["text"] == (
        "input order kept"
    )
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert _protect(table, a, "--order-seed", "99") == 0
    assert _protect(table, b, "--order-seed", "99") == 0
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.with_suffix(".json").read_text())["record_order"]["seed"] == 99


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--keep-order", "--order-seed", "3"], "give one of them"),
        (["--order-seed", "x1"], "--order-seed 'x1': give a whole number"),
        (["--order-seed", "-4"], "give a whole number"),
        (["--household", "sex"], "--household is given twice; a table has one household-id column"),
        (["--weight", "hh"], "named by both --weight and --household"),
    ],
)
def test_bad_order_options_are_one_line(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    out = tmp_path / "bad.csv"
    with pytest.raises(SystemExit) as info:
        code = _protect(table, out, *extra)
        raise SystemExit(code)
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_missing_household_id_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gaps.csv"
    pd.DataFrame({"hh": ["a", "a", "", "b", "b", "b"], "age": [30, 31, 32, 33, 34, 35]}).to_csv(
        path, index=False
    )
    code = main(["protect", str(path), "-o", str(tmp_path / "o.csv"), "--qi", "age",
                 "--household", "hh", "--method", "mdav", "-k", "2", "-q"])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "household-id column 'hh' is missing in 1 record(s) (line 4)" in err
    assert "Traceback" not in err


def test_assess_household_risk_json(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "risk.json"
    code = main(["assess", str(table), "--qi", "sex", "--nominal", "sex", "--household", "hh",
                 "--household-size-key", "--no-suda", "--json", str(out)])  # fmt: skip
    assert code == 0
    risk = json.loads(out.read_text())
    assert risk["keys"] == ["sex", "household size"]
    hr = risk["household_risk"]
    assert hr["households"] == 16 and hr["household_size"] == {"min": 3, "mean": 3.0, "max": 3}
    assert hr["expected_reidentifications"] >= risk["individual_risk"]["expected_reidentifications"]
    assert "household risk" in capsys.readouterr().out
    assert "HSECRET" not in out.read_text()
    code = main(["assess", str(table), "--qi", "sex", "--nominal", "sex", "--household-size-key"])
    assert code != 0 and "needs a household-id column" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("order", "flags"),
    [
        (RecordOrder(keep=True), ["--keep-order"]),
        (RecordOrder(seed=12), ["--order-seed", "12"]),
        (RecordOrder(), []),
    ],
)
def test_copy_as_command_carries_the_order(order: RecordOrder, flags: list[str]) -> None:
    columns = ["hh", "age", "sex", "band"]
    # an ordinal column too: its categories are written before the order's flags
    roles = roles_from_lists(columns, qi=["age", "band"], ordinal={"band": ["lo", "hi"]},
                             household="hh")  # fmt: skip
    spec = RunSpec.make("mdav", 3, {}, 1)
    command = command_for_run("t.csv", roles, spec, "o.csv", order=order)
    args = list(command.args)
    assert ["--household", "hh"] == args[args.index("--household") : args.index("--household") + 2]
    for flag in ("--keep-order", "--order-seed"):
        assert (flag in args) == (flag in flags)
    parsed = build_parser().parse_args(shlex.split(command.text)[1:])
    assert parsed.keep_order == (order.keep is True)
    assert parsed.order_seed == (None if order.seed is None else str(order.seed))
    assert parsed.household == "hh"


def test_protect_household_size_key(table: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``protect --household-size-key`` (issue 31): the report's risk before and after count
    the household size as one more key, as ``assess --household-size-key`` does; without a
    household-id column it is refused in one line."""
    out = tmp_path / "r.csv"
    assert _protect(table, out, "--household-size-key") == 0
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert _protect(table, tmp_path / "plain.csv") == 0
    plain = json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))
    for when in ("risk_before", "risk_after"):
        assert "household size" not in plain[when]["keys"]
        assert report[when]["keys"] == [*plain[when]["keys"], "household size"]
        assert report[when]["household_risk"]["households"] == 16
    code = main(["protect", str(table), "-o", str(tmp_path / "x.csv"), "--qi", "age,sex",
                 "--nominal", "sex", "--method", "mdav-generic", "-k", "3",
                 "--household-size-key", "-q"])  # fmt: skip
    assert code != 0 and "needs a household-id column" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
