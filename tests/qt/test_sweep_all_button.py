"""The sweep dialog's "All" (issue 15): it checks only the methods the core says can run on the
current roles (:func:`microgui.core.runs.method_refusal`); the others are shown unchecked and
disabled, with the reason in their tooltip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from microgui.core.methods import get_method
from microgui.core.runs import method_refusal
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.qt.main_window import MainWindow
from microgui.qt.panels.sweep_dialog import SweepDialog


def _open_dialog(window: MainWindow) -> SweepDialog:
    window.sweep_action.trigger()
    dialog = window.sweep_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def _items(dialog: SweepDialog) -> dict[str, Any]:
    items = (dialog.methods_list.item(i) for i in range(dialog.methods_list.count()))
    return {str(item.data(Qt.ItemDataRole.UserRole)): item for item in items}


def test_all_never_checks_a_method_the_roles_refuse(demo_window: MainWindow, qtbot: Any) -> None:
    ctl = demo_window.controller
    roles = ctl.roles
    assert roles is not None
    kinds = {roles[c].kind for c in roles.quasi_identifiers}
    assert AttributeKind.NOMINAL in kinds  # the demo has nominal quasi-identifiers
    dialog = _open_dialog(demo_window)
    qtbot.mouseClick(dialog.all_button, Qt.MouseButton.LeftButton)
    checked = dialog.checked_methods()
    assert "mdav-generic" in checked
    for name in checked:
        method = get_method(name)
        assert method.kinds != frozenset({AttributeKind.CONTINUOUS}), name
        assert kinds <= method.kinds and method_refusal(method, roles) == "", name
    items = _items(dialog)
    refused = [m for m in ctl.methods() if method_refusal(m, roles)]
    assert any(m.name == "mdav" for m in refused)
    for method in refused:  # shown, unchecked, disabled, with the core's reason
        item = items[method.name]
        assert item.checkState() == Qt.CheckState.Unchecked
        assert not item.flags() & Qt.ItemFlag.ItemIsEnabled
        assert method_refusal(method, roles) in item.toolTip()
    # every method the core accepts is checked: "All" leaves none out
    assert set(checked) == {m.name for m in ctl.methods() if not method_refusal(m, roles)}


def test_all_follows_the_roles_and_leaves_out_methods_needing_a_confidential_column(
    window: MainWindow, qtbot: Any
) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    ctl = window.controller
    ctl.set_dataset(Dataset.from_frame(frame, RoleMap.from_dict({"a": qi, "b": qi})))
    dialog = _open_dialog(window)
    qtbot.mouseClick(dialog.all_button, Qt.MouseButton.LeftButton)
    checked = set(dialog.checked_methods())
    assert "mdav" in checked
    needing = {m.name for m in ctl.methods() if m.needs_confidential}
    assert needing and not checked & needing  # p-sensitive, t-closeness: no confidential column
    assert "needs a confidential column" in _items(dialog)["p-sensitive"].toolTip()
    # tagging a nominal quasi-identifier: the continuous-only methods leave the checked ones
    nominal = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)
    frame["c"] = rng.choice(list("xyz"), 60)
    ctl.set_dataset(Dataset.from_frame(frame, RoleMap.from_dict({"a": qi, "b": qi, "c": nominal})))
    qtbot.mouseClick(dialog.all_button, Qt.MouseButton.LeftButton)
    assert dialog.checked_methods()
    for name in dialog.checked_methods():
        assert AttributeKind.NOMINAL in get_method(name).kinds, name


def test_all_leaves_out_methods_whose_table_limits_refuse_the_table(
    demo_window: MainWindow, qtbot: Any
) -> None:
    """On the demo's continuous quasi-identifiers (4,000 records, 4 attributes), optimal (at
    most 25 records) and optimal-univariate (one attribute) accept the kinds but refuse the
    table: "All" leaves them unchecked, with the reason (issue 15: 6 of 51 Census runs)."""
    ctl = demo_window.controller
    roles = ctl.roles
    assert roles is not None
    for col in list(roles.quasi_identifiers):
        if roles[col].kind is not AttributeKind.CONTINUOUS:
            ctl.set_role(col, AttributeRole.NON_CONFIDENTIAL)
    dialog = _open_dialog(demo_window)
    qtbot.mouseClick(dialog.all_button, Qt.MouseButton.LeftButton)
    checked = dialog.checked_methods()
    assert "mdav" in checked
    items = _items(dialog)
    for name, words in (
        ("optimal", "limited to 25 records"),
        ("optimal-univariate", "exactly one"),
    ):
        assert name not in checked
        assert words in items[name].toolTip()


def test_a_grid_value_that_lifts_a_table_limit_enables_the_method(
    window: MainWindow, qtbot: Any
) -> None:
    """Optimal refuses 30 records by default (25); with ``max_records=40`` in the sweep's
    parameter values it can run, and the dialog enables it (adversarial review)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    window.controller.set_dataset(Dataset.from_frame(frame, RoleMap.from_dict({"a": qi, "b": qi})))
    dialog = _open_dialog(window)
    assert not _items(dialog)["optimal"].flags() & Qt.ItemFlag.ItemIsEnabled
    dialog.params_edit.setText("max_records=40")
    assert _items(dialog)["optimal"].flags() & Qt.ItemFlag.ItemIsEnabled
    dialog.params_edit.setText("max_records=20, 28")
    assert not _items(dialog)["optimal"].flags() & Qt.ItemFlag.ItemIsEnabled
