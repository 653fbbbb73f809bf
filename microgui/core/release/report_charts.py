"""The charts of the HTML report, drawn only from released or aggregated values (issue 12).

A report leaves the machine, so it may show what the release shows and never a record's
original values. The app's plots draw every original record (at its quasi-identifier values or
its principal components): the report does not grab them. Each of its charts is a
:class:`ReportChart` built here from explicit arrays, and every number in those arrays is one of

- a **released value**: what the protected table holds for a continuous quasi-identifier. For
  microaggregation that is each group's aggregate (all records of a group hold the same value,
  so the chart has one mark per group, sized by its records); for masking methods (individual
  ranking, noise addition, synthetic data) the perturbed values, which are what is published;
  generalizing methods (mstk) publish text (intervals, categories), which is not drawn. Nominal
  and ordinal quasi-identifiers are not drawn, nor any confidential column (the protected table
  carries those unchanged);
- a **group size** or a number of groups;
- a run's **measures** (the risk–utility map).

:func:`chart_svg` renders a chart as inline SVG: text, so the report stays one self-contained
file and everything it shows can be searched. Tick labels are round numbers of the axis scale,
never a data value; marks are placed in pixels.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.runs.spec import RunResult
from microgui.core.table.roles import AttributeKind
from microgui.core.views.ru_frame import padded_span

__all__ = [
    "ChartSeries",
    "ReportChart",
    "released_columns",
    "released_values",
    "released_values_chart",
    "group_sizes_chart",
    "ru_map_chart",
    "chart_svg",
    "tick_text",
    "MAX_MARKS",
]

#: At most this many marks per series of a released-values chart (a seeded sample above, said
#: in the caption), so that a report of 100,000 groups stays a few megabytes.
MAX_MARKS = 5000
#: Marks with a tooltip (their values) up to this many per chart.
MAX_TOOLTIPS = 2000
#: Bar charts with up to this many distinct x values put them side by side in slots.
MAX_SLOTS = 40
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass(frozen=True)
class ChartSeries:
    """One set of marks: ``x``, ``y`` (floats), optional ``sizes`` (records behind each mark,
    drawn as its area) and ``labels`` (one text per mark, written beside it)."""

    name: str
    x: np.ndarray
    y: np.ndarray
    sizes: np.ndarray | None = None
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportChart:
    """A chart of the report: everything it draws is in ``series`` and its texts.

    ``kind`` is ``"scatter"`` (marks) or ``"bars"`` (one bar per x, series side by side);
    ``shows`` says in one sentence what its numbers are, for the caption and the footer;
    ``frame``: the view ((x0, x1), (y0, y1)) of a scatter chart, None to show every mark; a
    mark outside it is drawn as an arrow at its edge, with its value.
    """

    caption: str
    x_label: str
    y_label: str
    series: tuple[ChartSeries, ...]
    kind: str = "scatter"
    shows: str = ""
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None

    def arrays(self) -> list[np.ndarray]:
        """Every array of numbers the chart draws."""
        out: list[np.ndarray] = []
        for s in self.series:
            out += [s.x, s.y] + ([s.sizes] if s.sizes is not None else [])
        return out

    def texts(self) -> list[str]:
        """Every text the chart writes."""
        out = [self.caption, self.x_label, self.y_label, self.shows]
        for s in self.series:
            out += [s.name, *s.labels]
        return out


# --------------------------------------------------------------------------------------------
# data sources
# --------------------------------------------------------------------------------------------


def released_columns(result: RunResult) -> list[str]:
    """The continuous quasi-identifiers whose released values are all finite numbers (a
    generalized column, released as intervals, is not among them)."""
    out = []
    for column in result.roles.quasi_identifiers:
        if result.roles[column].kind is not AttributeKind.CONTINUOUS:
            continue
        if column not in result.protected.columns:
            continue
        values = pd.to_numeric(result.protected[column], errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        if len(values) and bool(np.isfinite(values).all()):
            out.append(str(column))
    return out


def released_values(result: RunResult, columns: Sequence[str]) -> pd.DataFrame:
    """The distinct combinations of released values of ``columns`` (continuous quasi-identifiers
    of the protected table) and how many records hold each (column ``records``), largest first.

    Read from the protected table only: for microaggregation one row per group (its aggregate),
    for a masking method one per distinct perturbed record.
    """
    allowed = set(released_columns(result))
    for column in columns:
        if column not in allowed:
            raise ValueError(f"{column!r} is not a continuous quasi-identifier released as numbers")
    frame = pd.DataFrame(
        {
            str(c): pd.to_numeric(result.protected[c], errors="coerce").to_numpy(np.float64)
            for c in columns
        }
    )
    counts = frame.groupby(list(frame.columns), sort=False).size().rename("records")
    table = counts.reset_index()
    return table.sort_values("records", ascending=False, kind="stable").reset_index(drop=True)


def _pick_axes(available: Sequence[str], preferred: Sequence[str]) -> list[str]:
    chosen = [c for c in dict.fromkeys(preferred) if c in available][:2]
    for column in available:
        if len(chosen) == 2:
            break
        if column not in chosen:
            chosen.append(column)
    return chosen


def released_values_chart(
    result: RunResult,
    name: str,
    *,
    axes: Sequence[str] = (),
    max_marks: int = MAX_MARKS,
) -> ReportChart | None:
    """The released values of a run's groups: one mark per distinct released combination of two
    continuous quasi-identifiers (``axes`` first when they are released as numbers), its area
    the records holding it. With one such column, x = the released value and y = its records.
    None when no continuous quasi-identifier is released as numbers (generalized, or none)."""
    available = released_columns(result)
    if not available:
        return None
    columns = _pick_axes(available, axes)
    table = released_values(result, columns)
    sampled = ""
    if len(table) > max_marks:
        keep = np.sort(np.random.default_rng(0).choice(len(table), max_marks, replace=False))
        sampled = f" (a seeded sample of {max_marks:,} of {len(table):,} released values)"
        table = table.iloc[keep].reset_index(drop=True)
    sizes = table["records"].to_numpy(dtype=np.float64)
    x = table[columns[0]].to_numpy(dtype=np.float64)
    if len(columns) == 2:
        y, y_label = table[columns[1]].to_numpy(dtype=np.float64), f"{columns[1]} (released)"
    else:
        y, y_label = sizes.copy(), "records holding the value"
    series = ChartSeries(name=name, x=x, y=y, sizes=sizes)
    return ReportChart(
        caption=f"Released values of {name}: {' against '.join(reversed(columns))}{sampled}",
        x_label=f"{columns[0]} (released)",
        y_label=y_label,
        series=(series,),
        shows=(
            "released values (what the protected table holds for two continuous "
            "quasi-identifiers: each group's aggregate after microaggregation, the perturbed values "
            "after masking), a mark's area the number of records holding it"
        ),
    )


def group_sizes_chart(runs: Sequence[tuple[str, RunResult]]) -> ReportChart:
    """How many groups of each size each run formed (a bar per size, the runs side by side)."""
    series = []
    for name, result in runs:
        labels = np.asarray(result.labels, dtype=np.int64)
        sizes = np.bincount(labels) if len(labels) else np.zeros(0, dtype=np.int64)
        sizes = sizes[sizes > 0]
        values, counts = np.unique(sizes, return_counts=True)
        series.append(
            ChartSeries(name=name, x=values.astype(np.float64), y=counts.astype(np.float64))
        )
    names = ", ".join(name for name, _r in runs)
    return ReportChart(
        caption=f"Group sizes of {names}",
        x_label="group size (records)",
        y_label="groups",
        series=tuple(series),
        kind="bars",
        shows="the number of groups of each size",
    )


def ru_map_chart(
    points: Sequence[tuple[str, float | int | None, float | int | None]],
    x_label: str,
    y_label: str,
    *,
    x_direction: str = "lower is better",
    y_direction: str = "lower is better",
) -> ReportChart | None:
    """The risk–utility map: one mark per run (name, x measure, y measure) labelled with its
    name; runs without both measures are left out. None when no run has both.

    Framed as the app's map is (:func:`microgui.core.views.ru_frame.ru_frame`): runs far off the
    scale of the Pareto front are drawn as arrows at the frame's edge, with their value."""
    from microgui.core.views.ru_frame import ru_frame

    kept = [(n, float(x), float(y)) for n, x, y in points if x is not None and y is not None]
    kept = [(n, x, y) for n, x, y in kept if math.isfinite(x) and math.isfinite(y)]
    if not kept:
        return None
    series = ChartSeries(
        name="runs",
        x=np.array([x for _n, x, _y in kept]),
        y=np.array([y for _n, _x, y in kept]),
        labels=tuple(n for n, _x, _y in kept),
    )
    frame = ru_frame(series.x, series.y, x_direction, y_direction)
    n_off = int(frame.off.sum())
    off_note = f"; {n_off} run(s) far off this scale drawn as arrows at the edge" if n_off else ""
    return ReportChart(
        caption=f"Risk–utility map of {len(kept)} run(s): {y_label} against {x_label}{off_note}",
        x_label=x_label,
        y_label=y_label,
        series=(series,),
        shows="the runs' measures (risk and information loss)",
        frame=(frame.x_range, frame.y_range),
    )


# --------------------------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def padded_range(values: np.ndarray, pad: float = 0.06) -> tuple[float, float]:
    """The range of ``values`` widened by ``pad`` of its span on each side (a constant: ±10 %, or
    ±1 around 0); shared by the report charts and the app's R-U map. Values that are all 0 or
    more (losses, rates, percentages) never get an axis below 0 (issue 15: "-1 %")."""
    low, high = padded_span(values, pad)
    return (max(low, 0.0) if float(values.min()) >= 0 else low), high


def _ticks(lo: float, hi: float) -> tuple[list[float], float]:
    step = _nice_step(hi - lo)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    i = first
    while i * step <= hi + 1e-9 * step:
        ticks.append(i * step)
        i += 1
    return ticks, step


def tick_text(value: float, step: float) -> str:
    """A tick label (or a value) as a plain number with the decimals its step needs: "0",
    "2.5", "10,000"; no SI prefix, no multiplier (shared by the report's charts and the app's
    R-U map)."""
    step = abs(step)
    if value == 0:
        return "0"
    if abs(value) >= 1e9 or step < 1e-4:
        return f"{value:.3g}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step * 10**decimals, 6) % 1:  # 2.5 × 10^k (not a rounding error)
        decimals += 1
    return f"{value:,.{decimals}f}"


def _px(value: float) -> str:
    return f"{value:.1f}"


def chart_svg(chart: ReportChart, width: int = 640, height: int = 380) -> str:
    """The chart as an inline SVG element (axes with round-number ticks, marks, legend)."""
    legend = len(chart.series) > 1
    left, right, top, bottom = 78.0, (170.0 if legend else 24.0), 16.0, 52.0
    pw, ph = width - left - right, height - top - bottom
    xs = [np.asarray(s.x, dtype=np.float64) for s in chart.series]
    ys = [np.asarray(s.y, dtype=np.float64) for s in chart.series]
    all_x = np.concatenate(xs) if xs else np.zeros(0)
    all_y = np.concatenate(ys) if ys else np.zeros(0)
    all_x, all_y = all_x[np.isfinite(all_x)], all_y[np.isfinite(all_y)]
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='{_e(chart.caption)}' "
        "font-family='Helvetica, Arial, sans-serif' font-size='11'>",
        f"<title>{_e(chart.caption)}</title>",
        f"<rect x='{_px(left)}' y='{_px(top)}' width='{_px(pw)}' height='{_px(ph)}' "
        "fill='#fff' stroke='#999'/>",
    ]
    if not len(all_x) or not len(all_y):
        out.append(
            f"<text x='{_px(left + pw / 2)}' y='{_px(top + ph / 2)}' text-anchor='middle'>"
            "nothing to draw</text></svg>"
        )
        return "".join(out)
    # Bars of up to MAX_SLOTS distinct x (group sizes) stand side by side, one slot per x;
    # beyond that x is a number line.
    slots = np.unique(all_x) if chart.kind == "bars" else np.zeros(0)
    slotted = 0 < len(slots) <= MAX_SLOTS

    def bx(v: float) -> float:
        return float(np.searchsorted(slots, v)) if slotted else v

    if chart.kind == "bars":
        x0, x1 = (-0.5, len(slots) - 0.5) if slotted else (slots[0] - 0.5, slots[-1] + 0.5)
        y0, y1 = 0.0, max(float(all_y.max()), 1.0) * 1.08
    elif chart.frame is not None:
        (x0, x1), (y0, y1) = chart.frame
    else:
        x0, x1 = padded_range(all_x, 0.12 if any(s.labels for s in chart.series) else 0.06)
        y0, y1 = padded_range(all_y)

    def px(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    def py(v: float) -> float:
        return top + ph - (v - y0) / (y1 - y0) * ph

    x_ticks, x_step = _ticks(x0, x1)
    x_tick_labels = [tick_text(t, x_step) for t in x_ticks]
    if slotted:  # a tick per slot (every n-th when crowded), labelled with its size
        every = max(1, math.ceil(len(slots) / 16))
        x_ticks = [float(i) for i in range(0, len(slots), every)]
        x_tick_labels = [f"{slots[int(i)]:,.0f}" for i in x_ticks]
    elif chart.kind == "bars":
        x_ticks = [t for t in x_ticks if float(t).is_integer()]
        x_tick_labels = [f"{t:,.0f}" for t in x_ticks]
    y_ticks, y_step = _ticks(y0, y1)
    for t, tick_label in zip(x_ticks, x_tick_labels, strict=True):
        tx = px(t)
        out.append(
            f"<line x1='{_px(tx)}' y1='{_px(top + ph)}' x2='{_px(tx)}' y2='{_px(top + ph + 4)}' "
            "stroke='#666'/>"
            f"<text x='{_px(tx)}' y='{_px(top + ph + 16)}' text-anchor='middle'>"
            f"{_e(tick_label)}</text>"
        )
    for t in y_ticks:
        ty = py(t)
        out.append(
            f"<line x1='{_px(left)}' y1='{_px(ty)}' x2='{_px(left + pw)}' y2='{_px(ty)}' "
            "stroke='#eee'/>"
            f"<text x='{_px(left - 6)}' y='{_px(ty + 4)}' text-anchor='end'>"
            f"{_e(tick_text(t, y_step))}</text>"
        )
    out.append(
        f"<text x='{_px(left + pw / 2)}' y='{_px(height - 12)}' text-anchor='middle'>"
        f"{_e(chart.x_label)}</text>"
        f"<text transform='translate(16 {_px(top + ph / 2)}) rotate(-90)' "
        f"text-anchor='middle'>{_e(chart.y_label)}</text>"
    )
    n_series = len(chart.series)
    tooltips = sum(len(v) for v in xs) <= MAX_TOOLTIPS
    for i, (s, sx, sy) in enumerate(zip(chart.series, xs, ys, strict=True)):
        color = _COLORS[i % len(_COLORS)]
        if chart.kind == "bars":
            bar = 0.8 / n_series
            for xv, yv in zip(sx, sy, strict=True):
                if not (math.isfinite(xv) and math.isfinite(yv)):
                    continue
                xl = px(bx(xv) - 0.4 + i * bar)
                out.append(
                    f"<rect x='{_px(xl)}' y='{_px(py(yv))}' width='{_px(px(bx(xv) - 0.4 + (i + 1) * bar) - xl)}' "
                    f"height='{_px(max(py(0.0) - py(yv), 1.5 if yv > 0 else 0.0))}' fill='{color}'>"
                    + (f"<title>{_e(s.name)}: {int(yv):,} group(s) of {int(xv):,}</title>" if tooltips else "")
                    + "</rect>"
                )  # fmt: skip
            continue
        sizes = None if s.sizes is None else np.asarray(s.sizes, dtype=np.float64)
        biggest = float(sizes.max()) if sizes is not None and len(sizes) else 1.0
        for j, (xv, yv) in enumerate(zip(sx, sy, strict=True)):
            if not (math.isfinite(xv) and math.isfinite(yv)):
                continue
            r = 5.0 if sizes is None else 2.5 + 6.5 * math.sqrt(float(sizes[j]) / biggest)
            label = s.labels[j] if j < len(s.labels) else ""
            tip = ""
            if tooltips:
                held = "" if sizes is None else f" · {int(sizes[j]):,} record(s)"
                tip = f"<title>{_e(label or s.name)}: ({xv:.6g}, {yv:.6g}){held}</title>"
            cx, cy = px(xv), py(yv)
            # a mark outside the frame: an arrow at the frame's edge, pointing where it lies (a
            # value on the frame's edge, 0 on an axis that starts at 0, is drawn where it is)
            tol_x, tol_y = 1e-9 * (abs(x0) + abs(x1)), 1e-9 * (abs(y0) + abs(y1))
            outside = not (x0 - tol_x <= xv <= x1 + tol_x and y0 - tol_y <= yv <= y1 + tol_y)
            ex, ey = min(max(cx, left + 7), left + pw - 7), min(max(cy, top + 7), top + ph - 7)
            if outside and (ex, ey) != (cx, cy):
                dx, dy = float(np.sign(cx - ex)), float(np.sign(cy - ey))
                norm = math.hypot(dx, dy)
                dx, dy = dx / norm, dy / norm
                tip_x, tip_y = ex + 7 * dx, ey + 7 * dy
                bx_, by_ = ex - 5 * dx, ey - 5 * dy
                corners = [
                    (tip_x, tip_y),
                    (bx_ - 5 * dy, by_ + 5 * dx),
                    (bx_ + 5 * dy, by_ - 5 * dx),
                ]
                pts = " ".join(f"{_px(a)},{_px(b)}" for a, b in corners)
                out.append(f"<polygon points='{pts}' fill='{color}' stroke='#222'>{tip}</polygon>")
                value = yv if ey != cy else xv
                label = f"{label} · {value:,.0f}" if abs(value) >= 100 else f"{label} · {value:.3g}"
                cx, cy, r = ex, ey, 7.0
            else:
                out.append(
                    f"<circle cx='{_px(cx)}' cy='{_px(cy)}' r='{r:.1f}' fill='{color}' "
                    f"fill-opacity='0.6' stroke='{color}'>{tip}</circle>"
                )
            if label:  # beside the mark, on its left in the right half
                right_half = cx > left + pw / 2
                lx = cx - r - 3 if right_half else cx + r + 3
                anchor = "end" if right_half else "start"
                out.append(
                    f"<text x='{_px(lx)}' y='{_px(cy + 4)}' text-anchor='{anchor}'>"
                    f"{_e(label)}</text>"
                )
    if legend:
        for i, s in enumerate(chart.series):
            y = top + 10 + 18 * i
            out.append(
                f"<rect x='{_px(left + pw + 12)}' y='{_px(y - 8)}' width='10' height='10' "
                f"fill='{_COLORS[i % len(_COLORS)]}'/>"
                f"<text x='{_px(left + pw + 27)}' y='{_px(y + 1)}'>{_e(s.name)}</text>"
            )
    out.append("</svg>")
    return "".join(out)
