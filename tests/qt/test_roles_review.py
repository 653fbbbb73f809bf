"""Issue 13 in the app: suggested roles carry their reason and stay "not yet reviewed" until
confirmed or run on; missing cells of a nominal column can be made a category of their own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeKind, AttributeRole
from microgui.qt.main_window import MainWindow
from microgui.qt.models.roles_model import RolesColumn

TIMEOUT_MS = 60_000


def survey_csv(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    n = 60
    frame = pd.DataFrame(
        {
            "person_id": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east"], n),
            "wave": [3] * n,
        }
    )
    frame.loc[[4, 9], "region"] = ""
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path


def open_survey(window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(survey_csv(tmp_path))


def row_of(window: MainWindow, name: str) -> int:
    model = window.roles_panel.model
    return next(r for r in range(model.rowCount()) if model.column_name(r) == name)


def test_suggested_roles_are_explained_and_not_yet_reviewed(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    open_survey(window, qtbot, tmp_path)
    ctl, panel = window.controller, window.roles_panel
    roles = ctl.dataset.roles  # type: ignore[union-attr]
    assert roles["sex"].role is AttributeRole.QUASI_IDENTIFIER  # never silently passed through
    assert roles["person_id"].role is AttributeRole.IDENTIFIER
    assert roles["wave"].role is AttributeRole.NON_CONFIDENTIAL
    assert not ctl.roles_reviewed
    assert panel.review_note.isVisible() and panel.confirm_button.isVisible()
    model = panel.model
    tip = model.data(
        model.index(row_of(window, "region"), RolesColumn.ROLE), Qt.ItemDataRole.ToolTipRole
    )
    assert "Suggested because" in tip and "2 missing cell(s)" in tip
    panel.confirm_button.click()
    assert ctl.roles_reviewed and not panel.review_note.isVisible()
    panel.reset_button.click()  # a new suggestion is again not reviewed
    assert not ctl.roles_reviewed and panel.review_note.isVisible()


def test_a_run_confirms_the_roles(window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_survey(window, qtbot, tmp_path)
    ctl = window.controller
    ctl.set_role("region", AttributeRole.NON_CONFIDENTIAL)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3, seed=1))
    assert ctl.roles_reviewed and not window.roles_panel.review_note.isVisible()


def test_missing_as_category_checkbox(window: MainWindow, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    open_survey(window, qtbot, tmp_path)
    ctl, panel = window.controller, window.roles_panel
    failures: list[str] = []
    ctl.run_failed.connect(lambda _i, message, _d: failures.append(message))
    with qtbot.waitSignal(ctl.run_failed, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3, seed=1))
    assert "'region'" in failures[0] and "Missing cells are a category" in failures[0]

    panel.view.setCurrentIndex(panel.model.index(row_of(window, "age"), RolesColumn.NAME))
    assert not panel.missing_box.isEnabled()  # continuous: must be filled instead
    panel.view.setCurrentIndex(panel.model.index(row_of(window, "region"), RolesColumn.NAME))
    assert panel.missing_box.isEnabled() and not panel.missing_box.isChecked()
    panel.missing_box.setChecked(True)
    spec = ctl.dataset.roles["region"]  # type: ignore[union-attr]
    assert spec.missing_as_category and spec.kind is AttributeKind.NOMINAL
    kind_text = panel.model.data(panel.model.index(row_of(window, "region"), RolesColumn.KIND))
    assert "missing = category" in kind_text
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS) as blocker:
        ctl.start_run(RunSpec.make("mdav-generic", 3, seed=1))
    result = blocker.args[1]
    assert result.report["missing_as_category"] == {"region": 2}
    assert result.report["k_anonymity"] >= 3


# --- the adversarial review of issue 13 -----------------------------------------------------


def test_export_never_overwrites_an_attached_hierarchy(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    from test_hierarchy_app import EDUCATION, EDUCATION_ROWS, _attach, _open, _run

    from microgui.core.table.roles import roles_from_lists

    rng = np.random.default_rng(1)
    n = 60
    pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "education": rng.choice(EDUCATION, n),
            "sex": rng.choice(["f", "m"], n),
        }
    ).to_csv(tmp_path / "p.csv", index=False)
    hierarchy = tmp_path / "edu.csv"
    hierarchy.write_text("\n".join(EDUCATION_ROWS) + "\n")
    ctl = window.controller
    _open(window, qtbot, tmp_path / "p.csv")
    columns = list(ctl.dataset.frame.columns)  # type: ignore[union-attr]
    ctl.set_roles(
        roles_from_lists(columns, qi=["age", "education", "sex"], nominal=["education", "sex"])
    )
    _attach(window, qtbot, "education", hierarchy)
    window.roles_panel.hierarchy.dialog.close()
    before = hierarchy.read_bytes()
    _run(window, qtbot, "mdav-generic", 3)  # a run that does not use the hierarchy
    assert not window.export_to(hierarchy)
    assert not window.save_report(hierarchy)
    assert hierarchy.read_bytes() == before


def test_suggested_ordinal_codes_run_in_the_app(
    window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(7)
    n = 60
    path = tmp_path / "l.csv"
    pd.DataFrame(
        {"age": rng.integers(18, 80, n), "likert": rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], n)}
    ).to_csv(path, index=False)  # the cells read 1.0, 2.0, ...
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(path)
    ctl = window.controller
    assert ctl.dataset.roles["likert"].kind is AttributeKind.ORDINAL  # type: ignore[union-attr]
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 3, seed=1))


def test_the_method_panel_says_when_the_run_shown_was_made_otherwise(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 15: a p-sensitive run shown under 'mdav, k = 5' misled. Issue 30: following the
    run shown changed the panel behind the user's back. The panel keeps its settings and says
    that the run shown was made with others (tests/qt/test_laptop_layout.py loads them)."""
    ctl, panel = demo_window.controller, demo_window.run_panel
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 4, seed=3))
    first = ctl.shown_run_id
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(
            RunSpec.make("mdav-generic", 6, {"categorical_aggregate": "independent"}, seed=2)
        )
    panel.load_shown_settings()
    assert panel.k_spin.value() == 6 and not panel.shown_box.isVisible()
    assert first is not None
    ctl.show_run(first)
    assert panel.k_spin.value() == 6 and panel.seed_spin.value() == 2
    assert panel.shown_box.isVisible() and f"#{first}" in panel.shown_note.text()


def test_history_parameters_show_what_differs_from_the_defaults(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    ctl = demo_window.controller
    model = demo_window.history_panel.model
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, {"ordinal_average": "median"}, seed=1))
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5, {"round": "0"}, seed=1))
    texts = [model.index(row, 3).data() for row in range(model.rowCount())]
    assert "defaults" in texts and "round=0" in texts


def test_the_app_offers_the_command_line_blocking(
    demo_window: MainWindow,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 15: the app had no block-size option (300,000 × 5 exact took 88 s in the app, 19 s
    with the CLI's --block-size auto)."""
    ctl, panel = demo_window.controller, demo_window.run_panel
    assert panel.spec().block_size is None  # exact by default
    panel.blocks_combo.setCurrentIndex(panel.blocks_combo.findData(50_000))
    assert panel.spec().block_size == 50_000
    panel.set_spec(RunSpec.make("mdav-generic", 5, seed=1, block_size=2_000))
    assert panel.spec().block_size == 2_000 and "2,000" in panel.blocks_combo.currentText()
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS) as blocker:
        panel.run()
    report = blocker.args[1].report
    assert report["scale"]["n_blocks"] == 2 and report["k_anonymity"] >= 5
    texts = [demo_window.history_panel.model.index(r, 3).data() for r in range(1)]
    assert "blocks=2000" in texts[0]
    panel.set_spec(RunSpec.make("mdav-generic", 5, seed=1, block_size="auto"))
    assert panel.spec().block_size == "auto"
    panel.set_spec(RunSpec.make("mdav-generic", 5, seed=1))
    assert panel.spec().block_size is None


def test_the_opening_message_follows_the_roles(demo_window: MainWindow) -> None:
    """Issue 30 (review): "Opened ... 7 quasi-identifiers" stayed in the status bar beside a roles
    dock that had one quasi-identifier fewer once the user retagged it."""
    from microgui.qt.panels.roles_panel import roles_summary

    window = demo_window
    assert window.statusBar().currentMessage().startswith("Opened ")
    window.controller.set_role("sex", AttributeRole.NON_CONFIDENTIAL)
    roles = window.controller.dataset.roles
    assert len(roles.quasi_identifiers) == 6
    name = window.controller.dataset.name
    assert window.statusBar().currentMessage() == f"Opened {name}. {roles_summary(roles)}."
    assert "6 quasi-identifiers" in window.statusBar().currentMessage()
