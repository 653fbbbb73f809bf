"""Issue 12, finding 2 (app): no chart of a report the app writes is drawn from original records.

A table with one extreme record (values that cannot arise by chance in an aggregate) is run with
several methods in the app; the HTML report of each run and of a comparison is written. The
report's text — charts included — must hold none of that record's original quasi-identifier or
confidential values, and no chart's data source may contain them: the arrays handed to the report
(the core chart objects) and the data of any plot item rendered into it are inspected, not the
pixels. The comparison chart a user saves on purpose from the screen says that it shows the
original records.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from extreme_record import EXTREME, EXTREME_ROW, TOKENS
from PySide6.QtCore import Qt

from microgui.core.runs import RunResult, RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

RUN_TIMEOUT_MS = 120_000


def extreme_table(n: int = 40, seed: int = 12) -> Dataset:
    """Ordinary people (whole ages 20–70, hours 20–60, incomes 20,000–50,000, health 50–100) and
    one extreme record (row :data:`EXTREME_ROW`)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "region": rng.choice(["north", "south", "east", "west"], n),
            "age": rng.integers(20, 71, n).astype(float),
            "income": rng.integers(20_000, 50_001, n).astype(float),
            "hours": rng.integers(20, 61, n).astype(float),
            "health": rng.integers(50, 101, n).astype(float),
        }
    )
    for column, value in EXTREME.items():
        frame.loc[EXTREME_ROW, column] = value
    roles = roles_from_lists(
        frame.columns,
        qi=["region", "age", "income", "hours"],
        identifiers=["id"],
        confidential=["health"],
        nominal=["region"],
    )
    return Dataset.from_frame(frame, roles=roles, source=None)


def continuous_only(dataset: Dataset) -> Dataset:
    """The same table with only the continuous QIs tagged (for continuous-only methods)."""
    roles = roles_from_lists(
        dataset.frame.columns,
        qi=["age", "income", "hours"],
        identifiers=["id"],
        confidential=["health"],
    )
    return Dataset.from_frame(dataset.frame, roles=roles, source=None)


def leaked_tokens(text: str) -> list[str]:
    return [t for t in TOKENS if re.search(rf"(?<![\d.]){re.escape(t)}(?!\d)", text)]


def leaked_numbers(values: Any, forbidden: list[float]) -> list[float]:
    """The ``forbidden`` numbers found (to 1e-6 relative) among ``values``."""
    arr = np.asarray(values, dtype=object).ravel()
    numbers = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=np.float64)
    numbers = numbers[np.isfinite(numbers)]
    return [v for v in forbidden if np.any(np.isclose(numbers, v, rtol=1e-6, atol=0))]


def forbidden_numbers(window: MainWindow) -> list[float]:
    """The extreme record's original values and its place on the screen's principal-component
    axes (a per-record transform of its original values) in every run of the history."""
    numbers = list(EXTREME.values())
    for entry in window.controller.history:
        projection = entry.outcome.projection if entry.outcome is not None else None
        if projection is not None:
            numbers += [float(v) for v in projection.original[EXTREME_ROW] if np.isfinite(v)]
    return numbers


def _item_data(item: Any) -> list[Any]:
    """Every array and text drawn by a pyqtgraph item and its children (the data sources of
    what a PNG export of it shows)."""
    out: list[Any] = []
    stack = [item]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        getter = getattr(current, "getData", None)
        if callable(getter):
            try:
                data = getter()
            except TypeError:
                data = None
            if data is not None:
                out.extend(d for d in data if d is not None)
        image = getattr(current, "image", None)
        if isinstance(image, np.ndarray):
            out.append(image)
        to_text = getattr(current, "toPlainText", None)
        if callable(to_text):
            out.append([to_text()])
        children = getattr(current, "childItems", None)
        if callable(children):
            stack.extend(children())
    return out


class ReportSpy:
    """Records what the app hands to the report: core chart objects and rendered plot items."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import microgui.core.release.report_html as report_html
        import microgui.qt.plots.chart_export as chart_export

        self.charts: list[Any] = []
        self.rendered: list[list[Any]] = []
        build = report_html.build_report_html

        def spy_build(*args: Any, **kwargs: Any) -> str:
            self.charts.extend(kwargs.get("charts", ()))
            return build(*args, **kwargs)

        monkeypatch.setattr(report_html, "build_report_html", spy_build)
        for name in ("chart_png", "png_bytes"):
            original = getattr(chart_export, name)

            def spy_render(item: Any, *args: Any, _original: Any = original) -> bytes:
                self.rendered.append(_item_data(item))
                return bytes(_original(item, *args))

            monkeypatch.setattr(chart_export, name, spy_render)

    def chart_sources(self) -> list[Any]:
        """The data of every chart given to the report, as arrays and texts."""
        sources: list[Any] = []
        for chart in self.charts:
            if isinstance(chart, tuple):  # (caption, PNG bytes): only its caption is data
                sources.append([chart[0]])
                continue
            for series in chart.series:
                sources += [series.x, series.y, list(series.labels), [series.name]]
                if series.sizes is not None:
                    sources.append(series.sizes)
            sources.append([chart.caption, chart.x_label, chart.y_label])
        for data in self.rendered:
            sources.extend(data)
        return sources


def _run(window: MainWindow, qtbot: Any, spec: RunSpec) -> RunResult:
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as blocker:
        window.controller.start_run(spec)
    result = blocker.args[1]
    assert isinstance(result, RunResult)
    return result


def _assert_clean(window: MainWindow, path: Path, spy: ReportSpy, what: str) -> None:
    text = path.read_text(encoding="utf-8")
    forbidden = forbidden_numbers(window)
    assert not leaked_tokens(text), f"{what}: the report text holds {leaked_tokens(text)}"
    assert spy.charts, f"{what}: no chart was given to the report"
    for source in spy.chart_sources():
        found = leaked_numbers(source, forbidden)
        assert not found, f"{what}: a chart's data source holds original values {found}"
        texts = " ".join(str(v) for v in np.asarray(source, dtype=object).ravel())
        assert not leaked_tokens(texts), f"{what}: a chart's labels hold {leaked_tokens(texts)}"
    assert "data:image" not in text, f"{what}: a raster image whose data cannot be checked"
    spy.charts.clear()
    spy.rendered.clear()


@pytest.mark.parametrize(
    ("method", "mixed"),
    [("mdav", False), ("mstk", True), ("individual-ranking", False), ("mdav-generic", True)],
)
def test_run_report_charts_hold_no_original_value(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str,
    mixed: bool,
) -> None:  # fmt: skip
    table = extreme_table()
    window.controller.set_dataset(table if mixed else continuous_only(table))
    # the screen's own plot shows the original records (the user's data, on the user's screen)
    _run(window, qtbot, RunSpec.make(method, 3, seed=1))
    spy = ReportSpy(monkeypatch)
    for axes in ("default", "columns"):
        if axes == "columns":  # the user reads income against age on the screen
            window.plot.set_axes("income", "age")
        path = tmp_path / f"{method}_{axes}.html"
        assert window.save_report(path, comparison=False), window.last_error
        _assert_clean(window, path, spy, f"{method} ({axes} axes on the screen)")


def test_comparison_report_charts_hold_no_original_value(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctl = window.controller
    ctl.set_dataset(continuous_only(extreme_table()))
    _run(window, qtbot, RunSpec.make("mdav", 3, seed=1))
    _run(window, qtbot, RunSpec.make("individual-ranking", 3, seed=1))
    _run(window, qtbot, RunSpec.make("mdav", 5, seed=1))
    panel = window.history_panel
    panel.select_runs([e.run_id for e in ctl.history[:2]])
    with qtbot.waitSignal(ctl.comparison_changed):
        qtbot.mouseClick(panel.compare_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.compare_panel
    spy = ReportSpy(monkeypatch)
    for axes in ("default", "columns"):
        if axes == "columns":
            window.compare_panel.plot.set_axes("income", "age")
        path = tmp_path / f"comparison_{axes}.html"
        assert window.save_report(path), window.last_error
        text = path.read_text(encoding="utf-8")
        assert "Comparison of 2" in text
        _assert_clean(window, path, spy, f"comparison ({axes} axes on the screen)")
    # the R-U map is drawn from measures only, of the compared runs only (issue 30: never the
    # whole session's runs)
    assert all(e.name in text for e in ctl.history[:2])
    assert ctl.history[2].name not in text


def test_saving_the_screen_comparison_chart_says_it_shows_original_records(
    window: MainWindow,
) -> None:
    """The comparison plot draws the original records (for the user's eyes); its "Export"
    menu, a deliberate save of the screen, says so before the file is chosen."""
    export = window.compare_panel.export
    texts = [a.text() for a in export.menu().actions()] + [export.toolTip()]
    assert all("original" in t.lower() for t in texts), texts
    # the risk–utility map draws measures only: its export needs no warning
    ru_texts = [a.text() for a in window.ru_chart.export.menu().actions()]
    assert not any("original" in t.lower() for t in ru_texts)
