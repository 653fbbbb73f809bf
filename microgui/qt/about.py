"""Help → *About microgui*: the version, the license, how to cite microgui and the papers it is
built from."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from microgui._version import __version__

__all__ = ["CITATION", "LICENSE", "PAPERS", "about_box"]

#: The license (``LICENSE``; pyproject's ``license = "MIT"``).
LICENSE = "MIT"
#: How to cite microgui: ``CITATION.cff``'s authors and title, with the version running.
CITATION = (
    "the microgui authors. microgui: microaggregation for statistical disclosure control "
    f"(software), version {__version__}. MIT license."
)

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
        f"<p>License: {html.escape(LICENSE)} (the LICENSE file shipped with microgui).</p>"
        f"<p>Cite as: <i>{html.escape(CITATION)}</i> Cite also the papers of the methods you "
        "used: every report names them (CITATION.cff in the source has the full "
        "references).</p>"
        f"<p>Built from these papers:</p><ul>{papers}</ul>"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box
