"""Help in the app (issue 32, item 4): *Help → Documentation* and F1.

The documentation is shown by an in-app browser (:class:`HelpWindow`, a ``QTextBrowser``) from the
docs' own Markdown pages, shipped with the package (``docs/`` is the package ``microgui.docs``,
and lies beside the package in a source tree or an installer). Why not the built HTML site: it
would have to be built into every wheel and installer (MkDocs and its theme at build time), and
its pages need a web engine (JavaScript, CSS), which PySide6-Essentials does not include; the
Markdown pages need only the ``markdown`` package and render in Qt's rich text, offline. The
reference pages the site generates from the code are generated here alike
(:mod:`microgui.docs_gen`), so the app and the site show one text.

Pages are read, generated and converted to HTML in a worker thread (:class:`TaskSlot` on the
window's own one-thread pool); the GUI thread only shows the HTML.

F1 (:func:`help_target`) opens the page of what is under the mouse: a measure (a tooltip naming
its key as ``[key]``, a label or header naming it) opens its glossary entry
(``explanations/measures.md#key``), anything else in a view or panel that view's page.
"""

from __future__ import annotations

import html
import inspect
import posixpath
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QCursor, QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from microgui.core.progress import ProgressFn
from microgui.qt.workers import TaskSlot, make_run_pool

__all__ = [
    "GLOSSARY",
    "HOME",
    "HelpWindow",
    "VIEW_PAGES",
    "docs_folder",
    "glossary_anchors",
    "help_target",
    "help_under_mouse",
    "measure_key",
    "open_help",
    "page_html",
    "read_page",
]

HOME = "index.md"
GLOSSARY = "explanations/measures.md"

#: The page of each view or panel (by class name, so that this module imports none of them).
VIEW_PAGES: dict[str, str] = {
    "ResultsPanel": GLOSSARY,
    "ComparePanel": GLOSSARY,
    "HistoryPanel": "tutorials/app-demo.md#6-compare-runs",
    "RiskPanel": f"{GLOSSARY}#risk-view",
    "UtilityPanel": f"{GLOSSARY}#categorical-utility",
    "AssociationPanel": "explanations/views.md",
    "TransitionPanel": "explanations/views.md",
    "DependencyTreePanel": "explanations/views.md",
    "ClassesPanel": "how-to/hierarchies.md",
    "HierarchyPanel": "how-to/hierarchies.md",
    "RolesPanel": "how-to/roles.md",
    "RunPanel": "reference/methods.md",
    "SweepDialog": "tutorials/app-demo.md#6-compare-runs",
    "GroupsPlot": "explanations/views.md",
    "MstPlot": "explanations/views.md",
    "RuChart": "explanations/measures.md#score",
    "DataPanel": "how-to/roles.md",
}


def docs_folder() -> Path:
    """The folder of the documentation's Markdown pages: the installed package ``microgui.docs``,
    else ``docs/`` beside the package (a source tree, an installer's folder)."""
    import importlib.resources

    try:
        candidate = importlib.resources.files("microgui.docs")
        if isinstance(candidate, Path) and (candidate / HOME).is_file():
            return candidate
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        pass
    return Path(__file__).resolve().parents[2] / "docs"


#: The command line reference in the app: where to find it.
CLI_PAGE = """# Command line reference

The documentation site lists every command and option of `microgui`, generated from its parser
(`microgui.cli.reference`). On this machine the command prints the same:

```text
microgui --help
microgui protect --help
microgui protect --list-methods
microgui evaluate --help
microgui sweep --help
microgui assess --help
microgui suggest-roles --help
microgui dependency-tree --help
```

The tutorial [A survey file to SPSS](../tutorials/survey-to-spss.md) walks through the main ones.
"""

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_AUTODOC = re.compile(r"^::: ([\w.]+)\s*$", re.M)


def _autodoc(match: re.Match[str]) -> str:
    """An mkdocstrings ``::: module.object`` line as the object's signature and docstring."""
    import importlib

    module_name, _, name = match.group(1).rpartition(".")
    try:
        obj = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return f"`{match.group(1)}`"
    try:
        signature = str(inspect.signature(obj))
    except (TypeError, ValueError):
        signature = ""
    doc = inspect.getdoc(obj) or ""
    return f"## {name}\n\n```text\n{name}{signature}\n\n{doc}\n```\n"


def read_page(page: str, folder: Path | None = None) -> str:
    """The Markdown of ``page`` (a path in the site, e.g. ``explanations/measures.md``): its file,
    or the generated text of a generated page. Runs in a worker (generating the method catalogue
    imports every method; the report page protects the demo twice)."""
    from microgui import docs_gen

    folder = docs_folder() if folder is None else folder
    if page == "reference/cli.md":
        # generated from the command line's parser, which the app does not import (its `gui`
        # command opens the app: an import cycle); the site has the page
        return CLI_PAGE
    if page == "reference/methods.md":
        return docs_gen.methods_reference()
    if page == "reference/report.md":
        return docs_gen.report_reference()
    if page == "explanations/benchmark.md":
        return docs_gen.benchmark_page(folder / "benchmarks")
    path = (folder / page).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        return f"# Page not found\n\n`{page}` is not part of this documentation."
    text = _FRONT_MATTER.sub("", path.read_text(encoding="utf-8"))
    return _AUTODOC.sub(_autodoc, text)


_ID = re.compile(r'<(h[1-6]|a)([^>]*?) id="([^"]+)"([^>]*)>')
_IMG = re.compile(r"<img [^>]*?alt=\"([^\"]*)\"[^>]*>")


def page_html(page: str, folder: Path | None = None, progress: ProgressFn | None = None) -> str:
    """``page`` as the HTML Qt's rich text shows: Markdown converted, every id an anchor Qt can
    scroll to (``<a name>``), images left out (the app's own screenshots, in the app)."""
    import markdown

    if progress is not None:
        progress(0.0, f"reading {page}")
    text = read_page(page, folder)
    body = markdown.markdown(
        text, extensions=["attr_list", "tables", "fenced_code", "admonition", "toc"]
    )

    def anchor(m: re.Match[str]) -> str:
        tag, before, ident, after = m.groups()
        if tag == "a":
            return f'<a name="{ident}"{before}{after}>'
        return f'<a name="{ident}"></a><{tag}{before}{after}>'

    body = _ID.sub(anchor, body)
    body = _IMG.sub(lambda m: f"<p><i>[{html.escape(m.group(1))}]</i></p>", body)
    body = body.replace("<table>", '<table border="1" cellspacing="0" cellpadding="3">')
    return f"<html><body>{body}</body></html>"


def glossary_anchors(folder: Path | None = None) -> set[str]:
    """The anchors (``{#key}``) of the glossary's entries: the measure keys it explains."""
    text = read_page(GLOSSARY, folder)
    return set(re.findall(r"\{#([A-Za-z0-9_-]+)\}", text))


_KEY_IN_TIP = re.compile(r"\[([a-z][a-z0-9_]*)\]")


def measure_key(texts: list[str], anchors: set[str], labels: dict[str, str]) -> str | None:
    """The measure that ``texts`` (a tooltip, a label, a header) name: a ``[key]`` in a tooltip,
    a key itself, or a measure's label (``labels``: label -> key); None when none does."""
    for text in texts:
        for key in _KEY_IN_TIP.findall(text or ""):
            if key in anchors:
                return key
    for text in texts:
        t = (text or "").strip()
        if t in anchors:
            return t
        if t in labels:
            return labels[t]
    return None


def _item_texts(widget: QWidget, global_pos: QPoint) -> list[str]:
    """The tooltip and text of the table cell or header section under the mouse."""
    view = widget.parent() if not isinstance(widget, QAbstractItemView) else widget
    if isinstance(widget, QHeaderView):
        model = widget.model()
        if model is None:
            return []
        pos = widget.mapFromGlobal(global_pos)
        section = widget.logicalIndexAt(pos)
        if section < 0:
            return []
        orientation = widget.orientation()
        return [
            str(model.headerData(section, orientation, role) or "")
            for role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.DisplayRole)
        ]
    if isinstance(view, QAbstractItemView) and view.model() is not None:
        index = view.indexAt(view.viewport().mapFromGlobal(global_pos))
        if index.isValid():
            return [
                str(index.data(role) or "")
                for role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.DisplayRole)
            ]
    return []


def help_target(
    widget: QWidget | None,
    global_pos: QPoint,
    anchors: set[str],
    labels: dict[str, str],
) -> str:
    """The page (with its anchor) F1 opens for ``widget``, the widget under the mouse at
    ``global_pos``: the glossary entry of the measure it shows, else its view's page, else the
    home page."""
    w = widget
    while w is not None:
        name = w.objectName()
        texts = _item_texts(w, global_pos) + [w.toolTip()]
        if name.startswith("result_"):
            texts.append(name.removeprefix("result_"))
        if isinstance(w, QLabel):
            texts.append(w.text())
        key = measure_key(texts, anchors, labels)
        if key is not None:
            return f"{GLOSSARY}#{key}"
        if type(w).__name__ in VIEW_PAGES:
            return VIEW_PAGES[type(w).__name__]
        w = w.parentWidget()
    return HOME


class HelpWindow(QDialog):
    """The documentation, offline: one page at a time, links followed, Back and Home."""

    def __init__(self, parent: QWidget | None = None, folder: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("microgui documentation")
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setModal(False)
        self.folder = docs_folder() if folder is None else folder
        self.pool = make_run_pool(self)
        self.slot = TaskSlot(self.pool, self)
        self.slot.finished.connect(self._on_loaded)
        self.slot.failed.connect(self._on_failed)
        self.browser = QTextBrowser()
        self.browser.setObjectName("help_browser")
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._on_link)
        self.back_button = QPushButton("Back")
        self.back_button.clicked.connect(self.back)
        self.home_button = QPushButton("Contents")
        self.home_button.clicked.connect(lambda: self.show_page(HOME))
        self.title = QLabel("")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.addWidget(self.back_button)
        bar.addWidget(self.home_button)
        bar.addWidget(self.title, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.browser)
        self.page = ""
        self.anchor = ""
        self._wanted = ("", "")
        self._history: list[str] = []
        self.resize(820, 640)

    # navigation ---------------------------------------------------------------------------
    def show_page(self, target: str, *, remember: bool = True) -> None:
        """Show ``target`` ("page.md" or "page.md#anchor"), loaded in the worker when it is not
        the page shown."""
        page, _, anchor = target.partition("#")
        page = page or self.page or HOME
        if remember and self.page and f"{self.page}#{self.anchor}" != f"{page}#{anchor}":
            self._history.append(f"{self.page}#{self.anchor}")
        self.back_button.setEnabled(bool(self._history))
        if page == self.page and self._wanted == ("", ""):
            self._scroll(anchor)
            return
        self._wanted = (page, anchor)
        self.title.setText(f"Loading {page}…")
        folder = self.folder
        self.slot.start(lambda progress: page_html(page, folder, progress), context=(page, anchor))

    def back(self) -> None:
        if self._history:
            self.show_page(self._history.pop(), remember=False)
        self.back_button.setEnabled(bool(self._history))

    def _scroll(self, anchor: str) -> None:
        self.anchor = anchor
        if anchor:
            self.browser.scrollToAnchor(anchor)
        else:
            self.browser.verticalScrollBar().setValue(0)

    def _on_loaded(self, _task_id: int, value: Any, context: Any) -> None:
        page, anchor = context
        self._wanted = ("", "")
        self.page = page
        self.browser.setHtml(value)
        self.title.setText(page)
        self._scroll(anchor)

    def _on_failed(self, _task_id: int, message: str, _details: str, context: Any) -> None:
        self._wanted = ("", "")
        self.title.setText(f"{context[0]}: {message}")

    def _on_link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        target = url.toString()
        path, _, anchor = target.partition("#")
        if not path:
            self.show_page(f"{self.page}#{anchor}")
            return
        if path.endswith("/"):  # a directory link of the built site
            path = path + "index.md"
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), path))
        self.show_page(f"{joined}#{anchor}" if anchor else joined)

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        """Stop loading and wait for the worker (before the window goes away)."""
        self.slot.cancel_all()
        self.pool.waitForDone(timeout_ms)

    def closeEvent(self, event: Any) -> None:  # noqa: N802 (Qt override)
        self.shutdown()
        super().closeEvent(event)


def open_help(window: Any, target: str = HOME) -> HelpWindow:
    """Show the help window of ``window`` (made once, kept as ``window.help_window``) at
    ``target``."""
    help_window = getattr(window, "help_window", None)
    if help_window is None:
        help_window = HelpWindow(window)
        window.help_window = help_window
    help_window.show_page(target)
    was_visible = help_window.isVisible()
    help_window.show()
    if was_visible:
        help_window.raise_()  # already open behind the window: bring it to the front
    return help_window


def help_under_mouse(window: Any) -> HelpWindow:
    """F1: the help of what is under the mouse (or has the focus) in ``window``."""
    from microgui.core.runs.analysis import measure_catalog

    pos = QCursor.pos()
    widget = QApplication.widgetAt(pos) or QApplication.focusWidget()
    if widget is not None and widget.window() is not window:
        widget = None
    labels = {label: key for key, (label, *_rest) in measure_catalog().items()}
    anchors = getattr(window, "_glossary_anchors", None)
    if anchors is None:
        anchors = glossary_anchors()
        window._glossary_anchors = anchors
    return open_help(window, help_target(widget, pos, anchors, labels))
