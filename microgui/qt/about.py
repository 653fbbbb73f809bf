"""Help → *About microgui*: the version and the papers microgui is built from."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from microgui._version import __version__

__all__ = ["PAPERS", "about_box"]

#: The papers microgui is built from (see the project's papers list).
PAPERS: tuple[tuple[str, str], ...] = (
    (
        "Sun, Wang, Li, Zhang (2012)",
        "An approximate microaggregation approach for microdata protection. Expert Systems with Applications 39(2)",
    ),
    ("Ramya, Selvaraj, Anandh", "Microaggregation for the protection of microdata"),
    (
        "Sulekha, Arumugam",
        "A survey on microaggregation based privacy preserving data mining techniques",
    ),
    (
        "Domingo-Ferrer, Torra (2005)",
        "Ordinal, continuous and heterogeneous k-anonymity through microaggregation. Data Mining and Knowledge Discovery 11(2)",
    ),
    (
        "Ramana, Valli Kumari",
        "Achieving k-anonymity using Minimum Spanning Tree based Partitioning",
    ),
)


def about_box(parent: QWidget) -> QMessageBox:
    """The About box (not yet shown): version, what microgui does, the papers."""
    papers = "".join(f"<li>{html.escape(a)}: <i>{html.escape(t)}</i></li>" for a, t in PAPERS)
    box = QMessageBox(parent)
    box.setWindowTitle("About microgui")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(
        f"<h3>microgui {html.escape(__version__)}</h3>"
        "<p>Microaggregation for statistical disclosure control: protect microdata so that every "
        "released record is shared by at least k records on its quasi-identifiers.</p>"
        f"<p>Built from these papers:</p><ul>{papers}</ul>"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box
