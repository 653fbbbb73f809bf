"""Issue 15 (part): the method panel names papers by authors and year."""

from __future__ import annotations

import re

from microgui.core.methods import available_methods
from microgui.qt.main_window import MainWindow

PAPER = re.compile(r"(?<![\w,.])00[0-4](_[0-9a-f]{16}\.txt|\s*(§|Algorithm|Table|eqs?\.|Def))")


def test_method_panel_names_authors(demo_window: MainWindow) -> None:
    panel = demo_window.run_panel
    for method in available_methods():
        panel.select_method(method.name)
        text = panel.summary.text() + panel.summary.toolTip()
        assert "Source:" in panel.summary.text()
        assert not PAPER.search(text), (method.name, PAPER.search(text))
