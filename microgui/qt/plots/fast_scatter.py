"""A ScatterPlotItem whose ``setData`` stays fast with per-point palette brushes (STYLE.md §7).

pyqtgraph draws a pxMode scatter from a symbol atlas: one sprite per distinct (symbol, size, pen,
brush). With per-point brushes, ``setData`` nevertheless does two things per *point* in Python:
``setBrush`` maps every brush through ``mkBrush``, and ``updateSpots`` builds a tuple and an atlas
key for every point. Measured here at 100,000 points: about 0.8 s of a 1.1 s redraw, while the
paint itself (``drawPixmapFragments``) takes 40-80 ms.

:class:`FastScatterPlotItem` keeps the one-item-per-layer design and the shared palette brushes
and replaces those two per-point loops with numpy: a brush array of QBrush objects is stored as it
is (the palette's objects, no copy), and the atlas is asked once per *distinct* style (grouped by
object identity, as the atlas keys are), its rectangle broadcast to the points. Everything else is
pyqtgraph's own code. It relies on ScatterPlotItem internals (``data`` fields ``brush`` and
``sourceRect``, ``_style``, ``fragmentAtlas``); a test compares it with the plain item so that a
pyqtgraph upgrade that changes them fails loudly, and any unexpected case falls back to pyqtgraph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush

__all__ = ["FastScatterPlotItem"]

_STYLE_FIELDS = ["symbol", "size", "pen", "brush"]
_object_id = np.frompyfunc(id, 1, 1)


class FastScatterPlotItem(pg.ScatterPlotItem):
    """ScatterPlotItem with vectorized per-point brushes and atlas lookups (same pixels)."""

    def set_points(self, x: np.ndarray, y: np.ndarray, brush: np.ndarray | None = None) -> None:
        """New positions (and, unless None, new per-point brushes) for the points.

        With as many points as drawn now, the positions are written in place: pyqtgraph's
        ``setData`` would allocate a new record array with five object fields (about 40 ms at
        100,000 points) and re-resolve every style. With another count, ``setData``.
        """
        if len(self.data) != len(x) or not len(x):
            if brush is None:
                self.setData(x=x, y=y)
            else:
                self.setData(x=x, y=y, brush=brush)
            return
        self.data["x"] = x
        self.data["y"] = y
        if brush is not None:
            self.setBrush(brush, update=True)
        # What addPoints does after filling its new records.
        self.prepareGeometryChange()
        self.informViewBoundsChanged()
        self.bounds = [None, None]
        self.invalidate()
        self.sigPlotChanged.emit(self)

    def setBrush(self, *args: Any, **kargs: Any) -> None:  # noqa: N802 (pyqtgraph's name)
        brushes = args[0] if len(args) == 1 else None
        if (
            isinstance(brushes, np.ndarray)
            and brushes.dtype == object
            and kargs.get("mask") is None
            and len(brushes)
            and isinstance(brushes[0], QBrush)
        ):
            # An object array of QBrush (ClusterPalette.brushes_for): stored as given, where
            # pyqtgraph would call mkBrush on each element (which returns it unchanged).
            update = kargs.pop("update", True)
            data = kargs.pop("dataSet", self.data)
            if len(brushes) != len(data):
                raise ValueError(f"{len(brushes)} brushes for {len(data)} points")
            data["brush"] = brushes
            data["sourceRect"] = 0
            if update:
                self.updateSpots(data)
            return
        super().setBrush(*args, **kargs)

    def updateSpots(self, dataSet: Any = None) -> None:  # noqa: N802, N803 (pyqtgraph's names)
        data = self.data if dataSet is None else dataSet
        if not (self.opts["pxMode"] and self.opts["useCache"]) or self.opts["hoverable"]:
            super().updateSpots(dataSet)
            return
        mask = data["sourceRect"]["w"] == 0
        if not np.any(mask):
            super().updateSpots(dataSet)
            return
        columns = list(self._style(_STYLE_FIELDS, data=data, idx=mask))
        # The atlas keys on the identity of pen and brush and on symbol and size: group the
        # points by the same identities, ask the atlas once per group.
        # One code per point: the four identities factorized column by column (1-D sorts of
        # int64, a few ms each; a row-wise unique of the four columns is ten times slower).
        code = np.zeros(int(np.count_nonzero(mask)), dtype=np.int64)
        n_codes = 1
        for col, ident in zip(columns, (True, False, True, True), strict=True):
            values = (
                _object_id(col).astype(np.int64)
                if ident
                else np.asarray(col, dtype=np.float64).view(np.int64)
            )
            distinct, codes = np.unique(values, return_inverse=True)
            if n_codes * len(distinct) >= 2**62:  # keep the combined code in int64
                _, code = np.unique(code, return_inverse=True)
                n_codes = int(code.max()) + 1
            code = code * len(distinct) + codes.reshape(-1)
            n_codes *= len(distinct)
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        styles = list(zip(*(col[first] for col in columns), strict=True))
        rects = np.empty(len(styles), dtype=data["sourceRect"].dtype)
        rects[:] = self.fragmentAtlas[styles]  # a list of (x, y, w, h), one per style
        data["sourceRect"][mask] = rects[inverse.reshape(-1)]
        # The rest of pyqtgraph's updateSpots, as it runs after filling the rectangles.
        self._maybeRebuildAtlas()
        self._updateMaxSpotSizes(data=data)
        self.invalidate()
