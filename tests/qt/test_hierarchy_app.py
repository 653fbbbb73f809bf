"""Hierarchies in the app (issue 13, item 4): attach a hierarchy file to a quasi-identifier in the
roles panel, see its levels and the values missing from it, run mstk with it, save the project,
reopen it (from a moved folder: the paths are relative) and get the very release that
``microgui protect --method mstk --hierarchy COL=FILE`` writes, byte for byte.

The tables and hierarchy files are made here (no ../shared needed); the same check on ARX's Adult
hierarchies runs when ../shared/data/adult is there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from reference_sets import ADULT_DIR as ADULT

from microgui.cli import main as cli_main
from microgui.core.runs.project_file import load_project
from microgui.core.table.roles import RoleMap, roles_from_lists
from microgui.qt.main_window import MainWindow
from microgui.qt.models.roles_model import RolesColumn
from microgui.qt.panels.hierarchy_panel import HierarchyDialog

TIMEOUT_MS = 120_000

EDUCATION = ["primary", "secondary", "vocational", "bachelor", "master", "phd"]
EDUCATION_ROWS = [
    "primary;basic;*",
    "secondary;basic;*",
    "vocational;basic;*",
    "bachelor;higher;*",
    "master;higher;*",
    "phd;higher;*",
]


def _age_rows() -> list[str]:
    return [
        f"{a};{10 * (a // 10)}-{10 * (a // 10) + 9};{'under 50' if a < 50 else '50 and over'};*"
        for a in range(0, 100)
    ]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A project folder: a 90-record table and hierarchy files for age and education."""
    root = tmp_path / "study"
    (root / "hierarchies").mkdir(parents=True)
    rng = np.random.default_rng(13)
    n = 90
    frame = pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "education": rng.choice(EDUCATION, n),
            "sex": rng.choice(["female", "male"], n),
            "income": np.round(rng.lognormal(10, 0.5, n), 2),
        }
    )
    frame.to_csv(root / "people.csv", index=False)
    (root / "hierarchies" / "education.csv").write_text("\n".join(EDUCATION_ROWS) + "\n")
    (root / "hierarchies" / "age.csv").write_text("\n".join(_age_rows()) + "\n")
    return root


QI = ["age", "education", "sex"]
NOMINAL = ["education", "sex"]


def _roles(columns: list[str]) -> RoleMap:
    return roles_from_lists(
        columns, qi=QI, nominal=NOMINAL, identifiers=["id"], confidential=["income"]
    )


def _cli_release(table: Path, out: Path, k: int, hierarchies: dict[str, Path]) -> bytes:
    argv = [
        "protect", str(table), "-o", str(out), "--keep-order", "--method", "mstk", "-k", str(k), "--seed", "0",
        "--qi", ",".join(QI), "--nominal", ",".join(NOMINAL), "--identifiers", "id",
        "--confidential", "income",
    ]  # fmt: skip
    for column, path in hierarchies.items():
        argv += ["--hierarchy", f"{column}={path}"]
    assert cli_main(argv) == 0
    return out.read_bytes()


def _open(window: MainWindow, qtbot, table: Path) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(table)


def _row(window: MainWindow, column: str) -> int:
    model = window.roles_panel.model
    return next(r for r in range(model.rowCount()) if model.column_name(r) == column)


def _attach(window: MainWindow, qtbot, column: str, path: Path) -> None:  # type: ignore[no-untyped-def]
    panel = window.roles_panel
    panel.view.setCurrentIndex(panel.model.index(_row(window, column), RolesColumn.NAME))
    attachments = window.controller.hierarchies
    done: list[str] = []
    attachments.attached.connect(lambda c: done.append(""))
    attachments.failed.connect(lambda _c, _p, message: done.append(message))
    assert panel.hierarchy.attach(column, path) is not None
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT_MS)
    assert done == [""], done


def _run(window: MainWindow, qtbot, method: str, k: int):  # type: ignore[no-untyped-def]
    panel = window.run_panel
    panel.select_method(method)
    panel.k_spin.setValue(k)
    panel.seed_spin.setValue(0)
    ctl = window.controller
    done: list[object] = []
    ctl.run_finished.connect(lambda _i, result: done.append(result))
    ctl.run_failed.connect(lambda _i, message, details: done.append(f"{message}\n{details}"))
    assert panel.run() is not None
    qtbot.waitUntil(lambda: bool(done), timeout=TIMEOUT_MS)
    assert not isinstance(done[0], str), done[0]
    return done[0]


def _export(window: MainWindow, path: Path) -> bytes:
    from dataclasses import replace

    # compared byte for byte with a command line run given --keep-order (issue 31)
    ctl = window.controller
    ctl.export_options = replace(ctl.export_options, keep_order=True)
    if not window.export_to(path):
        # a release with attribute disclosure asks first (issue 29): export anyway, as the CLI
        dialog = window.disclosure_dialog
        assert dialog is not None and dialog.isVisible(), window.last_error
        dialog.accept()
    return path.read_bytes()


def test_attach_run_save_reopen_gives_the_cli_release(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path, tmp_path: Path
) -> None:
    ctl = window.controller
    table = folder / "people.csv"
    files = {"age": folder / "hierarchies" / "age.csv", "education": folder / "hierarchies" / "education.csv"}  # fmt: skip
    _open(window, qtbot, table)
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))

    # attach: the levels dialog opens with the file's rows, its levels and the coverage
    _attach(window, qtbot, "education", files["education"])
    dialog = window.roles_panel.hierarchy.dialog
    assert isinstance(dialog, HierarchyDialog) and dialog.isVisible()
    assert dialog.table.rowCount() == 6 and dialog.table.columnCount() == 3
    assert dialog.table.horizontalHeaderItem(0).text() == "Level 0 (value)"
    assert [dialog.table.item(3, c).text() for c in range(3)] == ["bachelor", "higher", "*"]
    assert "6 values → 2 → 1 (*)" in dialog.info.text()
    assert "are in hierarchy education.csv" in dialog.coverage_label.text()
    assert dialog.missing_list.isHidden()
    dialog.close()
    _attach(window, qtbot, "age", files["age"])
    window.roles_panel.hierarchy.dialog.close()

    # the roles table says which columns have a hierarchy
    model = window.roles_panel.model
    # (its levels: the file's name, cut at 1366 × 768, is in the tooltip)
    text = model.index(_row(window, "education"), RolesColumn.HIERARCHY).data()
    assert text == "✓ 2 levels"
    tip = model.index(_row(window, "education"), RolesColumn.HIERARCHY).data(
        Qt.ItemDataRole.ToolTipRole
    )
    assert "education.csv" in tip
    assert model.index(_row(window, "age"), RolesColumn.HIERARCHY).data().startswith("✓ ")
    assert model.index(_row(window, "sex"), RolesColumn.HIERARCHY).data() == ""
    tip = model.index(_row(window, "age"), RolesColumn.HIERARCHY).data(Qt.ItemDataRole.ToolTipRole)
    assert str(files["age"]) in tip and "Used by mstk" in tip

    # mstk gets the files; the run panel says so; a method that does not generalize gets none
    window.run_panel.select_method("mstk")
    assert "age (age.csv)" in window.run_panel.hierarchy_note.text()
    spec = window.run_panel.spec()
    assert dict(spec.hierarchies) == {c: str(p) for c, p in files.items()}
    window.run_panel.select_method("mdav-generic")
    assert window.run_panel.spec().hierarchies == ()
    assert "used by mstk only" in window.run_panel.hierarchy_note.text()
    mstk = window.run_panel._methods["mstk"]
    assert "roles panel" in mstk.description and "--hierarchy COL=FILE" in mstk.description
    generic = _run(window, qtbot, "mdav-generic", 5)  # attached hierarchies never refuse it
    assert generic.spec.hierarchies == ()

    result = _run(window, qtbot, "mstk", 5)
    assert dict(result.spec.hierarchies) == {c: str(p) for c, p in files.items()}
    assert set(result.report["hierarchies"]) == set(QI)
    assert result.report["hierarchies"]["education"].startswith("file education.csv")
    assert set(result.protected["education"]) <= {*EDUCATION, "basic", "higher", "*"}
    # the history and the risk-utility map keep the run's generalization IL
    assert ctl.measures["generalization_il"] == pytest.approx(result.report["generalization_il"])
    app_bytes = _export(window, tmp_path / "app.csv")
    cli_bytes = _cli_release(table, tmp_path / "cli.csv", 5, files)
    assert app_bytes == cli_bytes

    # save: the attached hierarchies and the runs' files are stored relative to the project
    project_path = folder / "study.microgui.json"
    assert window.save_project_to(project_path)
    saved = json.loads(project_path.read_text(encoding="utf-8"))
    assert saved["schema_version"] >= 2
    assert saved["hierarchies"] == {
        "age": "hierarchies/age.csv",
        "education": "hierarchies/education.csv",
    }
    assert saved["runs"][1]["hierarchies"] == saved["hierarchies"]
    assert saved["runs"][0]["hierarchies"] == {}
    assert load_project(project_path).resolved_hierarchies(folder) == files

    # move the whole folder, then reopen: the hierarchies are attached again from the new place
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    shutil.rmtree(folder)
    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    other.resize(1366, 768)
    other.show()
    octl = other.controller
    # issue 30: the runs come back at once with their numbers and reports (no re-computation)
    with qtbot.waitSignal(octl.history_changed, timeout=TIMEOUT_MS):
        assert other.open_project(moved / "study.microgui.json")
    assert [e.run_id for e in octl.history] == [e.run_id for e in ctl.history]
    qtbot.waitUntil(lambda: len(octl.hierarchies.items()) == 2, timeout=TIMEOUT_MS)
    assert octl.hierarchies.paths() == {
        "age": str(moved / "hierarchies" / "age.csv"),
        "education": str(moved / "hierarchies" / "education.csv"),
    }
    assert octl.dataset is not None and octl.dataset.roles == ctl.dataset.roles
    restored = octl.history[1]
    assert dict(restored.spec.hierarchies) == octl.hierarchies.paths()
    assert restored.report["generalization_il"] == pytest.approx(result.report["generalization_il"])
    again = _run(other, qtbot, "mstk", 5)
    assert dict(again.spec.hierarchies) == octl.hierarchies.paths()
    pd.testing.assert_frame_equal(again.protected, result.protected)
    assert _export(other, tmp_path / "reopened.csv") == cli_bytes


def test_values_missing_from_the_hierarchy_are_shown_and_refused_like_the_cli(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path, tmp_path: Path
) -> None:
    ctl = window.controller
    table = folder / "people.csv"
    partial = folder / "hierarchies" / "partial.csv"
    partial.write_text("primary;basic;*\nsecondary;basic;*\nbachelor;higher;*\n")
    _open(window, qtbot, table)
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))
    _attach(window, qtbot, "education", partial)

    attached = ctl.hierarchies.get("education")
    assert attached is not None
    counts = ctl.dataset.frame["education"].value_counts()
    assert set(attached.coverage.missing) == {"vocational", "master", "phd"}
    assert attached.coverage.missing_rows == tuple(
        int(counts[v]) for v in attached.coverage.missing
    )
    assert list(attached.coverage.missing_rows) == sorted(attached.coverage.missing_rows)[::-1]
    dialog = window.roles_panel.hierarchy.dialog
    assert dialog is not None and not dialog.missing_list.isHidden()
    items = [dialog.missing_list.item(i).text() for i in range(dialog.missing_list.count())]
    assert items[0].startswith(attached.coverage.missing[0] + "  (")
    assert "An mstk run refuses them" in dialog.coverage_label.text()
    assert "line " in dialog.coverage_label.text()  # where, in the file's lines
    dialog.close()
    index = window.roles_panel.model.index(_row(window, "education"), RolesColumn.HIERARCHY)
    assert index.data() == "⚠ 3 values missing"
    assert "partial.csv" in index.data(Qt.ItemDataRole.ToolTipRole)
    assert index.data(Qt.ItemDataRole.ForegroundRole).color().name() == "#b00020"

    # the run refuses them with the message of the command line
    window.run_panel.select_method("mstk")
    assert "missing from the hierarchy" in window.run_panel.hierarchy_note.text()
    with qtbot.waitSignal(ctl.run_failed, timeout=TIMEOUT_MS) as blocker:
        window.run_panel.run()
    message = blocker.args[1]
    assert "not in its hierarchy partial.csv" in message and "education" in message
    code = cli_main([
        "protect", str(table), "-o", str(tmp_path / "x.csv"), "--keep-order", "--method", "mstk", "-k", "5",
        "--qi", ",".join(QI), "--nominal", ",".join(NOMINAL), "--identifiers", "id",
        "--hierarchy", f"education={partial}",
    ])  # fmt: skip
    assert code == 2 and not (tmp_path / "x.csv").exists()

    # removing it: mstk builds an automatic hierarchy and runs
    window.roles_panel.hierarchy.remove("education")
    assert "education" not in ctl.hierarchies
    assert index.data() == ""
    result = _run(window, qtbot, "mstk", 5)
    assert result.spec.hierarchies == ()
    assert result.report["hierarchies"]["education"].startswith("automatic")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "was not found in folder"),
        ("primary\nsecondary\n", "single column"),
        ("primary;basic;*\nsecondary;higher;*\nprimary;other;*\n", "listed again"),
        (b"\x00\x01\x02binary", "not a text file"),
    ],
)
def test_a_bad_hierarchy_file_is_one_message_naming_it(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path, content: str | bytes | None, expected: str
) -> None:
    ctl = window.controller
    _open(window, qtbot, folder / "people.csv")
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))
    bad = folder / "bad_h.csv"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content is not None:
        bad.write_text(content)
    panel = window.roles_panel
    panel.view.setCurrentIndex(panel.model.index(_row(window, "education"), RolesColumn.NAME))
    with qtbot.waitSignal(window.error_shown, timeout=TIMEOUT_MS) as blocker:
        panel.hierarchy.attach("education", bad)
    message = blocker.args[0]
    assert "bad_h.csv" in message and expected in message
    assert "Attach hierarchy" in message  # what to do
    assert "education" not in ctl.hierarchies
    assert panel.hierarchy.dialog is None
    # the window stays usable: a good file attaches afterwards
    _attach(window, qtbot, "education", folder / "hierarchies" / "education.csv")
    assert "education" in ctl.hierarchies


def test_only_quasi_identifiers_take_a_hierarchy(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path
) -> None:
    ctl = window.controller
    _open(window, qtbot, folder / "people.csv")
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))
    panel = window.roles_panel
    panel.view.setCurrentIndex(panel.model.index(_row(window, "income"), RolesColumn.NAME))
    assert not panel.hierarchy.attach_action.isEnabled()
    with qtbot.waitSignal(window.error_shown, timeout=5_000) as blocker:
        assert panel.hierarchy.attach("income", folder / "hierarchies" / "age.csv") is None
    assert "not a quasi-identifier" in blocker.args[0]
    # a hierarchy of a column that stops being a quasi-identifier stays attached, unused
    _attach(window, qtbot, "education", folder / "hierarchies" / "education.csv")
    window.roles_panel.hierarchy.dialog.close()
    columns = list(ctl.dataset.frame.columns)
    ctl.set_roles(roles_from_lists(columns, qi=["age", "sex"], nominal=["sex"], identifiers=["id"]))
    index = panel.model.index(_row(window, "education"), RolesColumn.HIERARCHY)
    assert index.data() == "not used"
    window.run_panel.select_method("mstk")
    assert window.run_panel.spec().hierarchies == ()
    # another table drops the attachments
    other = folder / "other.csv"
    pd.DataFrame({"a": range(10), "b": list("xyxyxyxyxy")}).to_csv(other, index=False)
    _open(window, qtbot, other)
    assert ctl.hierarchies.items() == {}


def test_reopening_a_project_whose_hierarchy_is_gone_says_so(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path
) -> None:
    ctl = window.controller
    _open(window, qtbot, folder / "people.csv")
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))
    _attach(window, qtbot, "education", folder / "hierarchies" / "education.csv")
    _attach(window, qtbot, "age", folder / "hierarchies" / "age.csv")
    window.roles_panel.hierarchy.dialog.close()
    project_path = folder / "p.microgui.json"
    assert window.save_project_to(project_path)
    (folder / "hierarchies" / "education.csv").unlink()

    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    octl = other.controller
    with qtbot.waitSignal(other.error_shown, timeout=TIMEOUT_MS) as blocker:
        assert other.open_project(project_path)
    message = blocker.args[0]
    assert "'education'" in message and "education.csv" in message
    assert "was not found in folder" in message and "Attach hierarchy" in message
    qtbot.waitUntil(lambda: "age" in octl.hierarchies, timeout=TIMEOUT_MS)
    assert "education" not in octl.hierarchies
    assert octl.dataset is not None and octl.dataset.roles == ctl.dataset.roles


@pytest.mark.shared
def test_adult_hierarchies_in_the_app_give_the_cli_release(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, tmp_path: Path
) -> None:
    table = ADULT / "adult_subset.csv"
    if not table.exists():
        pytest.skip("shared Adult data not available")
    ctl = window.controller
    qi = ["age", "sex", "race", "marital-status", "education"]
    files = {c: ADULT / f"adult_hierarchy_{c}.csv" for c in qi}
    _open(window, qtbot, table)
    columns = list(ctl.dataset.frame.columns)
    ctl.set_roles(roles_from_lists(columns, qi=qi, nominal=qi[1:], confidential=["salary-class"]))
    for column, path in files.items():
        _attach(window, qtbot, column, path)
        assert ctl.hierarchies.get(column).complete
    window.roles_panel.hierarchy.dialog.close()
    age = ctl.hierarchies.get("age").coverage
    assert age.unused == 100 - ctl.dataset.frame["age"].nunique()  # ARX lists ages 1..100
    result = _run(window, qtbot, "mstk", 5)
    assert result.report["k_anonymity"] >= 5
    app_bytes = _export(window, tmp_path / "app.csv")
    argv = [
        "protect", str(table), "-o", str(tmp_path / "cli.csv"), "--keep-order", "--method", "mstk", "-k", "5",
        "--seed", "0", "--qi", ",".join(qi), "--nominal", ",".join(qi[1:]),
        "--confidential", "salary-class",
    ]  # fmt: skip
    for column, path in files.items():
        argv += ["--hierarchy", f"{column}={path}"]
    assert cli_main(argv) == 0
    assert app_bytes == (tmp_path / "cli.csv").read_bytes()


def test_the_sweep_dialog_gives_attached_hierarchies_to_mstk_only(  # type: ignore[no-untyped-def]
    window: MainWindow, qtbot, folder: Path
) -> None:
    ctl = window.controller
    _open(window, qtbot, folder / "people.csv")
    ctl.set_roles(_roles(list(ctl.dataset.frame.columns)))
    edu = folder / "hierarchies" / "education.csv"
    _attach(window, qtbot, "education", edu)
    window.roles_panel.hierarchy.dialog.close()
    dialog = window.open_sweep_dialog()
    dialog.check_methods(["mstk", "mdav-generic"])
    dialog.k_edit.setText("3, 5")
    specs = dialog.run_specs()
    assert {(s.method, s.k): s.hierarchies for s in specs} == {
        ("mstk", 3): (("education", str(edu)),),
        ("mstk", 5): (("education", str(edu)),),
        ("mdav-generic", 3): (),
        ("mdav-generic", 5): (),
    }
    dialog.check_methods(["mdav-generic"])  # no method generalizes: none, and no refusal
    assert all(s.hierarchies == () for s in dialog.run_specs())
    dialog.close()
