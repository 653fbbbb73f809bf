"""Export safety (issue 7): CSV injection neutralized unless kept raw; promised p and t verified."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.release.check import neutralize_formulas
from tests.cli_argv import protect_argv


def test_formula_cells_get_an_apostrophe_numbers_do_not() -> None:
    frame = pd.DataFrame(
        {
            "note": [
                "=1+1",
                "+SUM(A1)",
                "-2+3",
                "@cmd",
                "\tx",
                "\rx",
                "plain",
                "-3.5",
                "+1e3",
                "-",
            ],
            "value": [-1.0, 2.0, -3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
        }
    )
    out, counts = neutralize_formulas(frame)
    assert out["note"].tolist() == [
        "'=1+1",
        "'+SUM(A1)",
        "'-2+3",
        "'@cmd",
        "'\tx",
        "'\rx",
        "plain",
        "-3.5",
        "+1e3",
        "'-",
    ]
    assert counts == {"note": 7}
    assert out["value"].tolist() == frame["value"].tolist()  # numeric columns untouched
    assert frame["note"].iloc[0] == "=1+1"  # the input frame is not modified


def test_clean_frame_is_returned_unchanged() -> None:
    frame = pd.DataFrame({"a": ["x", "y"], "b": [1, -2]})
    out, counts = neutralize_formulas(frame)
    assert out is frame
    assert counts == {}


def _write_input(tmp_path: Path) -> Path:
    rows = ["id,age,income,comment"]
    for i in range(12):
        comment = '=HYPERLINK("http://x")' if i == 3 else ("-5" if i == 4 else f"ok {i}")
        rows.append(f"{i},{20 + i},{1000 + 37 * i},{comment}")
    path = tmp_path / "in.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("keep", [False, True])
def test_cli_neutralizes_by_default_and_keeps_raw_on_request(tmp_path: Path, keep: bool) -> None:
    src = _write_input(tmp_path)
    out = tmp_path / "out.csv"
    report = tmp_path / "report.json"
    argv = protect_argv(
        src,
        out,
        "--method",
        "mdav",
        "-k",
        "3",
        "--qi",
        "age,income",
        "--identifiers",
        "id",
        "--report",
        str(report),
        "--seed",
        "1",
    )
    if keep:
        argv.append("--keep-formula-cells")
    assert main(argv) == 0
    written = out.read_text(encoding="utf-8").splitlines()
    comments = [line.rsplit(",", 1)[-1] for line in written[1:]]
    rep = json.loads(report.read_text(encoding="utf-8"))
    if keep:
        assert '=HYPERLINK(""http://x"")"' in written[4]
        assert "neutralized_cells" not in rep
        assert rep["formula_cells"].startswith("kept raw")
    else:
        assert "'=HYPERLINK" in written[4]
        assert rep["neutralized_cells"] == {"comment": 1}
    assert comments[4] == "-5"  # a plain number is never changed


def test_export_check_verifies_promised_p_and_t() -> None:
    """A p-sensitive or t-close run whose released table breaks its promise is refused."""
    from dataclasses import replace

    import numpy as np

    from microgui.core.release.check import check_export
    from microgui.core.runs import RunSpec, run_protection
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import roles_from_lists

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    frame["conf"] = rng.integers(0, 4, 60)
    roles = roles_from_lists(frame.columns, qi=["a", "b"], confidential=["conf"])
    ds = Dataset.from_frame(frame, roles)
    for spec in (
        RunSpec.make("p-sensitive", 3, {"p": 2}, seed=1),
        RunSpec.make("t-closeness", 3, {"t": 0.3}, seed=1),
    ):
        result = run_protection(ds, spec)
        assert check_export(result).ok, check_export(result).problems
        # the same release with the confidential column made constant within groups breaks it
        broken = result.protected.copy()
        broken["conf"] = result.labels % 2 if spec.method == "t-closeness" else 0
        broken.loc[broken.index[0], "conf"] = 9 if spec.method == "t-closeness" else 0
        bad = replace(result, protected=broken)
        problems = check_export(bad).problems
        word = "sensitive" if spec.method == "p-sensitive" else "EMD"
        assert any(word in p for p in problems), problems
