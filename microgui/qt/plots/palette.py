"""Cluster colours: K brushes built once and shared by every point (STYLE.md §7).

pyqtgraph's symbol atlas keys on the brush *object*, so giving a point ``palette[label]`` (the same
QBrush instances over and over) draws K sprites, not one per point (pyqtgraph #540, orange #3589).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QBrush, QColor, QPen

__all__ = ["CLUSTER_COLORS", "PROTECTED_COLOR", "ClusterPalette"]

#: A qualitative palette (Tableau 10 + its lighter half, reordered so neighbours contrast).
CLUSTER_COLORS: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)  # fmt: skip

#: Colour of the protected values (group aggregates) layer.
PROTECTED_COLOR = "#111111"


class ClusterPalette:
    """K shared brushes; ``brushes_for(labels)`` maps group ids to them (cycling through K)."""

    def __init__(self, colors: tuple[str, ...] = CLUSTER_COLORS, alpha: int = 190) -> None:
        self.colors: list[QColor] = []
        for name in colors:
            color = QColor(name)
            color.setAlpha(alpha)
            self.colors.append(color)
        self.brushes: np.ndarray = np.empty(len(self.colors), dtype=object)
        self.brushes[:] = [QBrush(c) for c in self.colors]
        protected = QColor(PROTECTED_COLOR)
        protected.setAlpha(200)
        self.protected_brush = QBrush(protected)
        # Group aggregates over a density image: red, half transparent (STYLE.md §7).
        self.protected_density_brush = QBrush(QColor(200, 30, 30, 120))
        self.protected_pen = QPen(QColor("#ffffff"))
        self.protected_pen.setWidthF(0.8)

    def __len__(self) -> int:
        return len(self.colors)

    def brushes_for(self, labels: np.ndarray) -> np.ndarray:
        """An object array of the shared QBrush of each label (no new brush is created)."""
        return self.brushes[np.asarray(labels, dtype=np.int64) % len(self.brushes)]
