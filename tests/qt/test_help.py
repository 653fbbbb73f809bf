"""Help in the app (issue 32, item 4): Help → Documentation opens the docs offline, F1 over a
measure opens its glossary entry, links are followed, About shows version, license, citation."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtWidgets import QLabel

from microgui._version import __version__
from microgui.core.runs.analysis import measure_catalog
from microgui.qt.about import CITATION, LICENSE
from microgui.qt.help import (
    GLOSSARY,
    HOME,
    docs_folder,
    glossary_anchors,
    help_target,
    measure_key,
    open_help,
    page_html,
)
from microgui.qt.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def _loaded(qtbot, help_window, page: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(
        lambda: help_window.page == page and help_window._wanted == ("", ""), timeout=60_000
    )


def test_the_docs_are_found_offline() -> None:
    assert docs_folder().resolve() == (ROOT / "docs").resolve() or (docs_folder() / HOME).is_file()
    assert (docs_folder() / GLOSSARY).is_file()


def test_a_page_becomes_html_with_anchors_qt_scrolls_to() -> None:
    html = page_html(GLOSSARY)
    # every glossary entry is an <a name> anchor (Qt's rich text scrolls to those, not to ids)
    for key in ("record_linkage", "information_loss_all_qi", "verdict", "t_closeness"):
        assert f'<a name="{key}"></a><h' in html, key
    assert "<table" not in html or 'border="1"' in html
    assert "<img" not in html


def test_generated_and_autodoc_pages_are_made_in_the_app_too() -> None:
    methods = page_html("reference/methods.md")
    assert 'name="mdav-generic"' in methods and "Domingo-Ferrer" in methods
    assert "microgui protect --help" in page_html("reference/cli.md")
    api = page_html("reference/api.md")
    assert "protect(" in api and ":::" not in api


def test_help_menu_opens_the_measure_page_at_its_anchor(window: MainWindow, qtbot) -> None:
    assert window.help_action.text() == "&Documentation"
    assert window.help_action.shortcut().toString() == "F1"
    assert window.help_action in window.menuBar().actions()[-1].menu().actions()
    help_window = open_help(window, f"{GLOSSARY}#record_linkage")
    _loaded(qtbot, help_window, GLOSSARY)
    assert help_window.isVisible() and help_window.anchor == "record_linkage"
    assert "Distance-based record linkage" in help_window.browser.toPlainText()
    # scrolled down to the entry: the top of the page is out of sight
    assert help_window.browser.verticalScrollBar().value() > 0
    help_window.close()


def test_links_between_pages_are_followed_and_back_returns(window: MainWindow, qtbot) -> None:
    help_window = open_help(window, HOME)
    _loaded(qtbot, help_window, HOME)
    help_window._on_link(QUrl("explanations/lower-bound.md"))
    _loaded(qtbot, help_window, "explanations/lower-bound.md")
    assert "Hansen" in help_window.browser.toPlainText()
    help_window._on_link(QUrl("measures.md#information_loss"))  # relative to explanations/
    _loaded(qtbot, help_window, GLOSSARY)
    assert help_window.anchor == "information_loss"
    help_window.back()
    _loaded(qtbot, help_window, "explanations/lower-bound.md")
    help_window.close()


def test_f1_over_a_measure_opens_its_glossary_entry(demo_window: MainWindow) -> None:
    anchors = glossary_anchors()
    labels = {label: key for key, (label, *_rest) in measure_catalog().items()}
    panel = demo_window.results_panel
    # the Results panel's value label of a measure (object name result_<key>)
    value = panel.value_labels["information_loss_all_qi"]
    assert help_target(value, QPoint(), anchors, labels) == f"{GLOSSARY}#information_loss_all_qi"
    # its name label: the tooltip names the key as [key]
    names = [w for w in panel.findChildren(QLabel) if w.text() == "Information loss, all QIs (IL)"]
    assert names
    assert help_target(names[0], QPoint(), anchors, labels) == f"{GLOSSARY}#information_loss_all_qi"
    # a view without a measure under the mouse: the view's page
    assert help_target(demo_window.roles_panel, QPoint(), anchors, labels) == "how-to/roles.md"
    assert help_target(None, QPoint(), anchors, labels) == HOME


def test_a_measure_is_found_by_key_label_or_tooltip() -> None:
    anchors = {"record_linkage", "k_anonymity"}
    labels = {"distance-based record linkage": "record_linkage"}
    assert measure_key(["Share linked [record_linkage]"], anchors, labels) == "record_linkage"
    assert measure_key(["", "distance-based record linkage"], anchors, labels) == "record_linkage"
    assert measure_key(["k_anonymity"], anchors, labels) == "k_anonymity"
    assert measure_key(["[not_a_measure] nothing"], anchors, labels) is None


def test_about_shows_version_license_and_citation(window: MainWindow) -> None:
    box = window.show_about()
    text = box.text()
    assert __version__ in text and f"License: {LICENSE}" in text
    assert "Cite as" in text and "microaggregation for statistical disclosure control" in text
    assert __version__ in CITATION
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert "microgui: microaggregation for statistical disclosure control" in cff
    assert "license: MIT" in cff
    box.close()


def test_f1_opens_the_documentation(window: MainWindow, qtbot) -> None:
    window.help_action.trigger()  # what F1 does (its shortcut), from wherever the mouse is
    help_window = window.help_window
    qtbot.waitUntil(lambda: help_window.page != "", timeout=60_000)
    assert help_window.isVisible() and help_window.browser.toPlainText().strip()
    help_window.close()


def test_every_view_page_and_anchor_exists() -> None:
    from microgui.docs_gen import GENERATED
    from microgui.qt.help import VIEW_PAGES

    for view, target in VIEW_PAGES.items():
        page, _, anchor = target.partition("#")
        assert page in GENERATED or (docs_folder() / page).is_file(), view
        if anchor:
            assert f'<a name="{anchor}"></a>' in page_html(page), (view, target)
