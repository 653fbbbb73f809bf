"""Issue 12, output paths through the app: the export, the HTML report and the project file never
replace a file the run read (the data or a hierarchy file), and a table with dates, decimals and
carriage returns in its text exports (no "internal error"). No sleeps: every wait is on a signal.
"""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from microgui.core.io import read_frame
from microgui.core.release.check import neutralize_formulas
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
TIMEOUT_MS = 60_000
HIERARCHY = "north;*\nsouth;*\neast;*\n"


def _run_with_hierarchy(window: MainWindow, qtbot, folder: Path) -> Path:  # type: ignore[no-untyped-def]
    src = folder / "people.csv"
    shutil.copy(BAD / "people.csv", src)
    hierarchy = folder / "h.csv"
    hierarchy.write_text(HIERARCHY, encoding="utf-8")
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(src)
    columns = list(ctl.dataset.frame.columns)  # type: ignore[union-attr]
    roles = roles_from_lists(
        columns, qi=["age", "income", "region"], nominal=["region"], identifiers=["id"]
    )
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mstk", 2, {}, 1, {"region": str(hierarchy)}))
    return hierarchy


def _refused(window: MainWindow) -> None:
    message = window.last_error
    assert "input file" in message and "choose another" in message, message
    assert "Traceback" not in message and "internal error" not in message
    window.error_box.close()  # type: ignore[union-attr]


def test_app_never_writes_the_hierarchy_file(window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hierarchy = _run_with_hierarchy(window, qtbot, tmp_path)
    link = tmp_path / "link.csv"
    link.symlink_to(hierarchy)
    for target in (hierarchy, link, tmp_path / "." / "h.csv"):
        assert not window.export_to(target)
        _refused(window)
        assert not window.save_report(target, comparison=False)
        _refused(window)
        assert not window.save_project_to(target)
        _refused(window)
    assert hierarchy.read_text(encoding="utf-8") == HIERARCHY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "link.csv", "people.csv"]
    assert window.export_to(tmp_path / "out.csv")  # the window stays usable


@pytest.mark.parametrize("fmt", ["parquet", "xlsx"])
def test_app_exports_dates_decimals_and_cr(
    fmt: str, window: MainWindow, qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    else:
        pytest.importorskip("openpyxl")
    n = 8
    frame = pd.DataFrame(
        {
            "age": [20 + i for i in range(n)],
            "income": [1000.0 + 10 * i for i in range(n)],
            "born": [dt.date(1990, 1, 1) + dt.timedelta(days=i) for i in range(n)],
            "seen": pd.date_range("2024-01-01", periods=n, freq="D"),
            "note": ["a\rb", "=cmd", "x\r=y", "plain"] * (n // 4),
        }
    )
    src = tmp_path / f"in.{fmt}"
    if fmt == "parquet":
        frame.to_parquet(src)
    else:
        frame.to_excel(src, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(src)
    columns = list(ctl.dataset.frame.columns)  # type: ignore[union-attr]
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles_from_lists(columns, qi=["age", "income"]))
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav", 2, {}, 1))
    out = tmp_path / "out.csv"
    # read back row for row beside the input: the input order kept (issue 31)
    ctl.export_options = replace(ctl.export_options, keep_order=True)
    assert window.export_to(out), window.last_error
    back = read_frame(out)
    assert len(back) == n
    # what the reader gave (an .xlsx turns CR into LF, and "=cmd" into a formula cell), neutralized
    loaded = neutralize_formulas(ctl.dataset.frame[["note"]])[0]["note"]  # type: ignore[index]
    assert back["note"].fillna("").tolist() == loaded.fillna("").tolist()
    if fmt == "parquet":
        assert back["note"].tolist() == ["a\rb", "'=cmd", "x\r'=y", "plain"] * (n // 4)
    assert str(back["born"].iloc[0]).startswith("1990-01-01")
