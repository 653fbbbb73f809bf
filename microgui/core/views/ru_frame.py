"""The default view of a risk–utility map: which runs it frames and which it marks off-scale.

Plain numpy, no Qt: the app's R-U map (:mod:`microgui.qt.plots.ru_chart`) and the report's
(:func:`microgui.core.release.report_charts.ru_map_chart`) draw the same frame.

A sweep of every method on Census puts the differential-privacy runs at a loss of 10⁴–10⁵ beside
microaggregation runs at 5–30: an axis that holds them all squashes the runs that matter into one
blob (issue 15). :func:`ru_frame` frames the runs on the scale of the Pareto front (the runs no
other run beats on both axes) instead. A run is *off-scale* on an axis when it lies, on that
axis' bad side, beyond a gap wider than :data:`GAP_FACTOR` times the rest of the values (their
span, or their magnitude when that is larger): drawing it would leave the others under a third of
the axis. At most half the runs are off-scale, and only when at least :data:`MIN_FRAMED` runs
stay in the frame. Off-scale runs are drawn as arrows at the frame's edge, their value in their
label and tooltip; the frame's axes start at 0 when every value is 0 or more (rates, losses).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from microgui.core.progress import ProgressFn, RunCancelled, no_progress

if TYPE_CHECKING:
    from microgui.core.table.dataset import Dataset

__all__ = [
    "LOWER",
    "HIGHER",
    "GAP_FACTOR",
    "MIN_FRAMED",
    "EDGE_BAND",
    "RuFrame",
    "pareto_front",
    "off_scale",
    "ru_frame",
    "unprotected_reference",
]

#: Direction of a measure whose lower values are better (risk, loss).
LOWER = "lower is better"
#: Direction of a measure whose higher values are better (k-anonymity).
HIGHER = "higher is better"
#: A gap wider than this many times the span of the values below it puts the values beyond it
#: off-scale.
GAP_FACTOR = 2.0
#: Fewer runs than this in the frame: nothing is put off-scale.
MIN_FRAMED = 3
#: Share of each axis kept at the frame's edge for the off-scale arrows.
EDGE_BAND = 0.07


def pareto_front(
    x: np.ndarray, y: np.ndarray, x_direction: str = LOWER, y_direction: str = LOWER
) -> np.ndarray:
    """Indices of the non-dominated points, ordered along x (best x first).

    A point is dominated when another is at least as good on both axes and better on one
    ("good" by each axis' direction). Equal points are all kept.
    """
    sx = np.where(x_direction == HIGHER, -1.0, 1.0) * np.asarray(x, dtype=np.float64)
    sy = np.where(y_direction == HIGHER, -1.0, 1.0) * np.asarray(y, dtype=np.float64)
    order = np.lexsort((sy, sx))
    front: list[int] = []
    best_y = np.inf
    last: tuple[float, float] | None = None
    for i in order:
        point = (float(sx[i]), float(sy[i]))
        if point == last or point[1] < best_y:
            front.append(int(i))
            best_y = min(best_y, point[1])
            last = point
    return np.asarray(front, dtype=np.int64)


def off_scale(values: np.ndarray, direction: str = LOWER) -> np.ndarray:
    """Which values lie off-scale on their bad side (high when lower is better): beyond the
    first gap, from the middle of the sorted values outwards, wider than :data:`GAP_FACTOR`
    times the span or the magnitude of the values before it (a boolean mask).

    >>> off_scale(np.array([5.0, 9.0, 14.0, 30.0, 12_000.0, 95_000.0])).tolist()
    [False, False, False, False, True, True]
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    n = len(v)
    mask = np.zeros(n, dtype=bool)
    if n < MIN_FRAMED + 1:
        return mask
    signed = -v if direction == HIGHER else v
    order = np.argsort(signed, kind="stable")
    s = signed[order]
    first = max(MIN_FRAMED, (n + 1) // 2)  # at most half the values off-scale
    for j in range(first, n):
        rest = s[j - 1] - s[0]
        scale = max(rest, abs(s[j - 1]))
        if s[j] - s[j - 1] > GAP_FACTOR * scale:
            mask[order[j:]] = True
            break
    return mask


@dataclass(frozen=True, eq=False)
class RuFrame:
    """The default view of an R-U map of n runs.

    ``front``: indices of the Pareto-front runs along x; ``x_range``, ``y_range``: the view (in
    the values' units; log10 of them on an axis drawn on a log scale); ``off_x``, ``off_y``:
    (n,) bool, runs beyond the frame on that axis; ``shown_x``, ``shown_y``: (n,) where each run
    is drawn (its value, or the frame's edge band for an off-scale run); ``log_y``: whether
    the loss axis is drawn on a log scale.
    """

    front: np.ndarray
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    off_x: np.ndarray
    off_y: np.ndarray
    shown_x: np.ndarray
    shown_y: np.ndarray
    log_y: bool

    @property
    def off(self) -> np.ndarray:
        """(n,) bool: runs off-scale on either axis."""
        both: np.ndarray = self.off_x | self.off_y
        return both


def padded_span(values: np.ndarray, pad: float) -> tuple[float, float]:
    """The range of ``values`` widened by ``pad`` of its span on each side (a constant: ±10 %,
    or ±1 around 0); the report charts' ``padded_range`` and the R-U frame start from it."""
    lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        half = abs(lo) * 0.1 or 1.0
        return lo - half, hi + half
    margin = pad * (hi - lo)
    return lo - margin, hi + margin


def _range(values: np.ndarray, pad: float, from_zero: bool) -> tuple[float, float]:
    lo, hi = padded_span(values, pad)
    return (0.0 if from_zero else lo), hi


def ru_frame(
    x: np.ndarray,
    y: np.ndarray,
    x_direction: str = LOWER,
    y_direction: str = LOWER,
    *,
    log_y: bool = False,
    frame: bool = True,
    x_pad: float = 0.12,
    y_pad: float = 0.1,
) -> RuFrame:
    """Frame the runs (x: risk, y: loss) on the scale of the Pareto front.

    Parameters
    ----------
    x, y
        The runs' two measures (finite; positive on a log loss axis).
    x_direction, y_direction
        :data:`LOWER` or :data:`HIGHER`: which side of each axis is good.
    log_y
        The loss axis is drawn on a log scale: ``y_range`` and ``shown_y`` are in log10 units.
    frame
        False: every run in the view, none off-scale (the user asked for everything).
    x_pad, y_pad
        Share of each axis' span added around the framed runs.
    """
    xs = np.asarray(x, dtype=np.float64).reshape(-1)
    ys = np.asarray(y, dtype=np.float64).reshape(-1)
    n = len(xs)
    if len(ys) != n:
        raise ValueError("x and y must have one value per run")
    if n and not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise ValueError("every run needs two finite measures")
    if log_y and n and ys.min() <= 0:
        raise ValueError("a log loss axis needs positive losses")
    front = pareto_front(xs, ys, x_direction, y_direction)
    yv = np.log10(ys) if log_y else ys
    if not n:
        empty = np.zeros(0, dtype=bool)
        return RuFrame(front, (0.0, 1.0), (0.0, 1.0), empty, empty, xs, yv, log_y)
    off_x = off_scale(xs, x_direction) if frame else np.zeros(n, dtype=bool)
    off_y = off_scale(ys, y_direction) if frame else np.zeros(n, dtype=bool)
    inside = ~(off_x | off_y)
    if not inside.any():  # cannot happen (at most half off on each axis), but never frame nothing
        inside[:] = True
        off_x[:] = off_y[:] = False
    x_range = _range(xs[inside], x_pad, bool(xs.min() >= 0))
    y_range = _range(yv[inside], y_pad, bool(ys.min() >= 0) and not log_y)
    shown_x, x_range = _edge(xs, off_x, x_range, x_direction)
    shown_y, y_range = _edge(yv, off_y, y_range, y_direction)
    return RuFrame(front, x_range, y_range, off_x, off_y, shown_x, shown_y, log_y)


def _edge(
    values: np.ndarray, off: np.ndarray, span: tuple[float, float], direction: str
) -> tuple[np.ndarray, tuple[float, float]]:
    """Where each run is drawn on one axis, and the axis range with an edge band for the
    off-scale runs (on the axis' bad side), which are drawn in the band's middle."""
    shown = values.copy()
    if not off.any():
        return shown, span
    lo, hi = span
    band = EDGE_BAND * (hi - lo) / (1.0 - EDGE_BAND)
    if direction == HIGHER:  # bad side: low values
        lo -= band
        shown[off] = lo + 0.5 * band
    else:
        hi += band
        shown[off] = hi - 0.5 * band
    return shown, (lo, hi)


_reference_cache: dict[int, dict[str, float | None]] = {}
_reference_lock = threading.Lock()


def cached_unprotected_reference(dataset: Dataset) -> dict[str, float | None] | None:
    """The reference point of ``dataset`` when :func:`unprotected_reference` has measured it
    already (None otherwise): the GUI thread reads it, never computes it."""
    with _reference_lock:
        cached = _reference_cache.get(id(dataset))
    return None if cached is None else dict(cached)


def unprotected_reference(
    dataset: Dataset, progress: ProgressFn = no_progress
) -> dict[str, float | None]:
    """The measures of the unprotected table against itself (its identifiers left out): the
    reference point of the risk–utility map, as the release report places it
    (``core.release.report.unprotected_risk``): no information lost, its risk by the same
    measure. Numbers only (None where a measure does not apply or cannot be measured).

    Computed once per Dataset object (kept while the object lives): ``evaluate`` on a 30,000-row
    table takes seconds, and every run of the same table shares it. Call it in a worker;
    ``progress`` may raise ``RunCancelled``, which propagates (nothing is cached then).
    """
    key = id(dataset)
    with _reference_lock:
        cached = _reference_cache.get(key)
    if cached is not None:
        return dict(cached)
    from microgui.core.metrics.evaluate import evaluate

    drop = [c for c in dataset.roles.identifiers if c in dataset.frame.columns]
    try:
        measures = evaluate(dataset, dataset.frame.drop(columns=drop), progress=progress)
    except RunCancelled:
        raise
    except Exception:  # noqa: BLE001 - a reference point that cannot be measured is left out
        out: dict[str, float | None] = {}
    else:
        out = {
            str(k): (float(v) if np.isfinite(float(v)) else None)
            if isinstance(v, int | float) and not isinstance(v, bool)
            else None
            for k, v in measures.items()
            if not isinstance(v, Mapping)
        }
    with _reference_lock:
        if key not in _reference_cache:
            _reference_cache[key] = out
            weakref.finalize(dataset, _reference_cache.pop, key, None)
    return dict(out)
