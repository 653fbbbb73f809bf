"""Issue 18, item 1, in the app: the export dialog offers every release format, a table read from
SPSS or Stata is offered back in its own format, and an export to .sav keeps the labels (the
same writer as the command line: :mod:`microgui.core.release`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat

from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import EXPORT_FILTERS, MainWindow, with_export_suffix

TIMEOUT_MS = 60_000


def test_every_format_is_offered_and_the_chosen_extension_added() -> None:
    assert [exts[0] for _f, exts in EXPORT_FILTERS] == [".csv", ".xlsx", ".parquet", ".sav", ".dta"]
    excel = EXPORT_FILTERS[1][0]
    assert with_export_suffix("/x/release", excel) == "/x/release.xlsx"
    assert with_export_suffix("/x/release.dta", excel) == "/x/release.dta"  # typed: kept
    assert with_export_suffix("/x/r.v2", EXPORT_FILTERS[3][0]) == "/x/r.v2.sav"


def test_a_labelled_sav_goes_back_as_sav_with_its_labels(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame(
        {
            "sex": rng.integers(1, 3, n).astype(float),
            "age": rng.integers(18, 90, n).astype(float),
            "income": np.round(rng.lognormal(10, 1, n), 2),
        }
    )
    source = tmp_path / "survey.sav"
    pyreadstat.write_sav(
        frame, source, variable_value_labels={"sex": {1: "male", 2: "female"}},
        column_labels={"sex": "Sex", "age": "Age", "income": "Income"},
    )  # fmt: skip
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    roles = roles_from_lists(list(frame.columns), qi=["sex", "age", "income"], nominal=["sex"])
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 4))
    default = window.default_export_path()
    # issue 30: the method in the name, so that two runs' releases do not share one
    assert default.suffix == ".sav" and default.name == "survey_mdav-generic_k4.sav"
    out = tmp_path / default.name
    assert window.export_to(out)
    released, meta = pyreadstat.read_sav(out)
    assert {int(k): v for k, v in meta.variable_value_labels["sex"].items()} == {
        1: "male",
        2: "female",
    }
    assert meta.column_names_to_labels == {"sex": "Sex", "age": "Age", "income": "Income"}
    assert set(released["sex"].unique()) <= {1.0, 2.0} and len(released) == n
