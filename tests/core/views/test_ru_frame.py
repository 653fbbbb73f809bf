"""Issue 15: the R-U map's default view frames the runs on the scale of the Pareto front and
marks the runs far off it (differential privacy at a loss of 10⁴–10⁵ beside microaggregation)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from microgui.core.release.report_charts import chart_svg, ru_map_chart, tick_text
from microgui.core.views.ru_frame import EDGE_BAND, HIGHER, off_scale, pareto_front, ru_frame


def _sweep(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A synthetic sweep: 8 microaggregation-like methods at k = 3, 5, 10 (risk 5-35 %, loss
    5-40) and 6 differential-privacy runs (risk under 1 %, loss 10⁴-10⁵). Returns x, y, is_dp."""
    rng = np.random.default_rng(seed)
    x, y, dp = [], [], []
    for il0, rl0 in [(6, 30), (8, 28), (7, 33), (9, 27), (6.5, 31), (12, 25), (10, 35), (4, 38)]:
        for k in (3, 5, 10):
            x.append(rl0 * 3 / k + rng.normal(0, 1))
            y.append(il0 * k / 3 + rng.normal(0, 0.5))
            dp.append(False)
    for _ in range(6):
        x.append(rng.uniform(0, 1))
        y.append(10 ** rng.uniform(4, 5))
        dp.append(True)
    return np.array(x), np.array(y), np.array(dp)


def test_dp_runs_are_off_scale_and_the_frame_holds_the_rest() -> None:
    x, y, dp = _sweep()
    frame = ru_frame(x, y)
    np.testing.assert_array_equal(frame.off_y, dp)
    assert not frame.off_x.any()
    (x0, x1), (y0, y1) = frame.x_range, frame.y_range
    # rates and losses start at 0; every framed run inside, with room
    assert x0 == 0.0 and y0 == 0.0
    assert x[~dp].max() < x1 and y[~dp].max() < y1 < 2 * y[~dp].max()
    # the off-scale runs are drawn in the band at the top edge, their x kept
    assert np.all(frame.shown_y[dp] < y1) and np.all(frame.shown_y[dp] > y1 - EDGE_BAND * y1)
    np.testing.assert_array_equal(frame.shown_x, x)
    np.testing.assert_array_equal(frame.shown_y[~dp], y[~dp])
    # the front: the dp runs with the least risk are on it (its start), the framed part follows
    assert set(frame.front.tolist()) == set(pareto_front(x, y).tolist())
    assert dp[frame.front].any() and (~dp[frame.front]).any()


def test_without_framing_everything_is_in_view() -> None:
    x, y, _dp = _sweep(1)
    frame = ru_frame(x, y, frame=False)
    assert not frame.off.any()
    assert frame.y_range[1] > y.max()
    logged = ru_frame(x, y, log_y=True, frame=False)
    assert logged.y_range[0] < np.log10(y.min()) and logged.y_range[1] > np.log10(y.max())
    np.testing.assert_allclose(logged.shown_y, np.log10(y))


def test_nothing_off_scale_on_one_scale_or_with_few_runs() -> None:
    assert not off_scale(np.array([5.0, 9.0, 14.0, 30.0, 60.0, 90.0])).any()
    assert not off_scale(np.array([5.0, 10_000.0])).any()  # two runs: nothing to frame
    assert not off_scale(np.array([5.0, 6.0, 10_000.0])).any()
    # never more than half the runs
    assert off_scale(np.array([1.0, 1.1, 1.2, 1e5, 2e5, 3e5])).sum() <= 3
    # "higher is better": a run far up is on the good side, never off-scale; far down it is
    assert not off_scale(np.array([2.0, 3.0, 3.0, 4.0, 1e5]), HIGHER).any()
    assert off_scale(np.array([2.0, 3.0, 3.0, 4.0, 1e5])).tolist()[-1]
    assert off_scale(-np.array([2.0, 3.0, 3.0, 4.0, 1e5]), HIGHER).tolist()[-1]


def test_signed_values_keep_their_sign_and_invalid_input_is_refused() -> None:
    frame = ru_frame(np.array([-2.0, 1.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    assert frame.x_range[0] < -2.0
    with pytest.raises(ValueError):
        ru_frame(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        ru_frame(np.array([1.0]), np.array([0.0]), log_y=True)


def test_the_report_map_uses_the_same_frame_and_marks_off_scale_runs() -> None:
    x, y, dp = _sweep(2)
    names = [f"#{i} {'dp' if d else 'mdav'}" for i, d in enumerate(dp)]
    chart = ru_map_chart(list(zip(names, x, y, strict=True)), "RL (%)", "IL")
    assert chart is not None and chart.frame is not None
    assert "6 run(s) far off this scale" in chart.caption
    svg = chart_svg(chart)
    assert svg.count("<polygon") == 6 and svg.count("<circle") == len(x) - 6
    # the y ticks stay on the framed scale: nothing near 10,000
    ticks = [
        float(t.replace(",", "")) for t in re.findall(r"text-anchor='end'>([-\d.,]+)</text>", svg)
    ]
    assert ticks and max(ticks) < 100
    # each off-scale run is labelled with its loss
    for i in np.flatnonzero(dp):
        assert f"{names[i]} · {y[i]:,.0f}" in svg


def test_tick_text_is_plain() -> None:
    assert [tick_text(v, 2.5) for v in (0.0, 2.5, 10.0)] == ["0", "2.5", "10.0"]
    assert tick_text(10_000.0, 5_000.0) == "10,000"
    assert tick_text(0.05, 0.05) == "0.05"
    assert tick_text(-3.0, -1.0) == "-3"


def test_unprotected_reference_is_the_table_against_itself() -> None:
    """The R-U map's reference point (issue 29): no information lost; its risk the same as the
    release report's ``unprotected_risk``; computed once per Dataset object."""
    import pandas as pd

    from microgui.core.release.report import unprotected_risk
    from microgui.core.table.dataset import Dataset
    from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
    from microgui.core.views import ru_frame as module

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})
    roles = RoleMap.from_dict(
        {c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS) for c in "ab"}
    )
    dataset = Dataset.from_frame(frame, roles)
    ref = module.unprotected_reference(dataset)
    assert ref["information_loss"] == 0.0 and ref["information_loss_all_qi"] == 0.0
    assert ref["record_linkage"] == unprotected_risk(dataset, "record_linkage")
    assert ref["record_linkage"] is not None and ref["record_linkage"] > 90.0
    calls: list[int] = []
    import microgui.core.metrics.evaluate as evaluate_module

    original = evaluate_module.evaluate
    evaluate_module.evaluate = lambda *a, **k: calls.append(1) or original(*a, **k)  # type: ignore[assignment]
    try:
        assert module.unprotected_reference(dataset) == ref
    finally:
        evaluate_module.evaluate = original  # type: ignore[assignment]
    assert not calls  # cached for this Dataset object
