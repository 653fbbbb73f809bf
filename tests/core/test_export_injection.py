"""CSV injection (issue 7): formula-like text cells are neutralized on export unless kept raw."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.export import neutralize_formulas


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
    argv = [
        "protect",
        str(src),
        "-o",
        str(out),
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
    ]
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
