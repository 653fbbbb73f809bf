"""The ordinal order editor orders in one step (issue 30 item 5: 16 education categories took
48 clicks): from the attached hierarchy's leaf order, from the categories' codes, or from
pasted text, each refused with the categories it cannot place named
(:mod:`microgui.core.table.ordering`)."""

from __future__ import annotations

from typing import Any

from microgui.core.table.hierarchy import Hierarchy
from microgui.qt.panels.roles_panel import OrderDialog


def test_order_dialog_from_hierarchy_codes_and_paste(qtbot: Any) -> None:
    education = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th"]
    hierarchy = Hierarchy.from_rows([[c, "school", "*"] for c in education], "education.csv")
    dialog = OrderDialog("education", sorted(education), hierarchy=hierarchy)
    qtbot.addWidget(dialog)
    assert dialog.order_from_hierarchy() and dialog.order() == education
    assert not dialog.order_from_codes()  # "Preschool" has no number: refused, order kept
    assert "'Preschool'" in dialog.message.text() and dialog.order() == education
    dialog.paste_button.setChecked(True)
    assert dialog.paste_edit.toPlainText().splitlines() == education  # starts from the list
    assert not dialog.apply_text("9th, 10th, Masters")
    assert "not a category of the column: 'Masters'" in dialog.message.text()
    assert "missing: " in dialog.message.text()
    assert dialog.apply_text("\n".join(reversed(education)))
    assert dialog.order() == education[::-1]
    grades = OrderDialog("grade", sorted(education[1:]))
    qtbot.addWidget(grades)
    assert not grades.hierarchy_button.isEnabled()
    assert grades.order_from_codes() and grades.order() == education[1:]


def test_order_dialog_from_an_unranked_hierarchy_file_warns_instead_of_success(qtbot: Any) -> None:
    rows = [
        ["Bachelors", "Undergraduate", "Higher", "*"],
        ["11th", "High School", "Secondary", "*"],
        ["Masters", "Graduate", "Higher", "*"],
        ["9th", "High School", "Secondary", "*"],
        ["Preschool", "Primary School", "Primary", "*"],
    ]
    hierarchy = Hierarchy.from_rows(rows, "education.csv")
    dialog = OrderDialog("education", sorted(r[0] for r in rows), hierarchy=hierarchy)
    qtbot.addWidget(dialog)
    assert dialog.order_from_hierarchy()
    assert dialog.order() == [r[0] for r in rows]  # the file order is still applied
    text = dialog.message.text()
    assert "not a ranking" in text and "High School" in text
    assert "#2e7d32" not in dialog.message.styleSheet()  # not shown in the success green
