"""Draw issue 29's views (Risk, Utility with its four tabs and a fitted model, groups density,
compare bars, R-U map with its ☆) on Adult and Census after two runs, at 1366×768 and 1920×1080,
and save them as PNG files.

Run by ``test_views29.py`` in its own process (Qt's platform is fixed when the QApplication
starts): ``python capture_views29.py OUT_DIR DATA_DIR``. Adult: salary-class confidential, age
and the seven categorical columns quasi-identifiers, mdav-generic k = 10 then k = 5 (compared).
Census (CASC reference microdata): the first six columns continuous quasi-identifiers, the others
confidential, mdav k = 3 then k = 5. Also the compared runs' linked record plots (their axes and
heights) and the dependency tree, at both sizes. Writes ``OUT_DIR/<name>.png`` and ``OUT_DIR/capture.json``:
what each view drew (titles, chart titles, the reference point, the Utility view's tables and
model), the rough time from the end of the last run to the ☆ on the map and from the Utility
view's first show to its drawn distributions, and the GUI thread's longest stall (the longest gap between
ticks of a 10 ms timer) from the last run's end until every view has been shown and drawn.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.views.ru_frame import cached_unprotected_reference
from microgui.qt.app import make_application
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

QI, CONF = AttributeRole.QUASI_IDENTIFIER, AttributeRole.CONFIDENTIAL
ADULT_NOMINAL = ["sex", "race", "marital-status", "education", "native-country", "workclass"]
ADULT_NOMINAL += ["occupation"]
SIZES = [(1366, 768), (1920, 1080)]


def wait(done: Any, timeout_s: float = 900.0) -> None:
    clock = QElapsedTimer()
    clock.start()
    while not done():
        if clock.elapsed() > timeout_s * 1000:
            raise TimeoutError("the views did not finish drawing")
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()


def pause(ms: int = 250) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


class StallMeter:
    """The longest gap between ticks of a 10 ms timer: how long the GUI thread was held."""

    def __init__(self) -> None:
        self.longest = 0.0
        #: the longest gap per phase (the phase current when the gap ended)
        self.phases: dict[str, float] = {}
        self.phase = "run end"
        self._last: float | None = None
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        self._timer.stop()
        return self.longest

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.longest = max(self.longest, now - self._last)
            gap = 1000.0 * (now - self._last)
            self.phases[self.phase] = max(self.phases.get(self.phase, 0.0), gap)
        self._last = now


def show_view(window: MainWindow, widget: Any) -> None:
    """Bring a view to the front (the view list of issue 30 or the tabs before it)."""
    shower = getattr(window, "show_view", None)
    if callable(shower):
        shower(widget)
    else:
        window.tabs.setCurrentWidget(widget)


def capture(path: Path, which: str, out: Path) -> dict[str, Any]:
    window = MainWindow(UiSettings(persist=False))
    window.resize(*SIZES[0])
    window.show()
    ctl = window.controller
    ctl.open_file(path)
    wait(lambda: ctl.dataset is not None)
    columns = [str(c) for c in ctl.dataset.frame.columns]  # type: ignore[union-attr]
    if which == "adult":
        specs = {c: ColumnSpec(QI, AttributeKind.NOMINAL) for c in ADULT_NOMINAL}
        specs["age"] = ColumnSpec(QI, AttributeKind.CONTINUOUS)
        specs["salary-class"] = ColumnSpec(CONF, AttributeKind.NOMINAL)
        runs = [RunSpec.make("mdav-generic", k, seed=0) for k in (10, 5)]
        formula = "salary-class ~ age + education + sex"
    else:
        specs = {c: ColumnSpec(QI, AttributeKind.CONTINUOUS) for c in columns[:6]}
        specs.update({c: ColumnSpec(CONF, AttributeKind.CONTINUOUS) for c in columns[6:]})
        runs = [RunSpec.make("mdav", k, seed=0) for k in (3, 5)]
        formula = f"{columns[6]} ~ {columns[0]} + {columns[1]}"
    ctl.set_roles(RoleMap.from_dict({c: specs.get(c, ColumnSpec()) for c in columns}))
    times: dict[str, float] = {}
    utility = window.utility_panel
    meter = StallMeter()
    for n, spec in enumerate(runs):
        shown: list[int] = []
        ctl.run_shown.connect(lambda run_id, s=shown: s.append(run_id))
        if n == len(runs) - 1:  # the stall of the last run's end and every view's first draw
            ctl.run_finished.connect(lambda *_a: times.setdefault("run", time.perf_counter()))
            ctl.run_finished.connect(lambda *_a: meter.start())
        show_view(window, window.plot)
        ctl.start_run(spec)
        wait(lambda s=shown: bool(s))
    ctl.set_comparison([e.run_id for e in ctl.history])
    # the unprotected table's point, measured in a view task (the map draws it when shown)
    wait(lambda: cached_unprotected_reference(ctl.dataset) is not None)
    times["reference"] = time.perf_counter()
    views = {
        "groups": window.plot,
        "compare": window.compare_panel,
        "ru": window.ru_chart,
        "risk": window.risk_panel,
        "utility": window.utility_panel,
    }
    utility.summary_shown.connect(lambda *_a: times.setdefault("utility", time.perf_counter()))
    for name, widget in views.items():
        meter.phase = f"first show of {name}"
        times[f"shown {name}"] = time.perf_counter()
        show_view(window, widget)
        pause(300)
    wait(lambda: window.compare_panel.bars.pending == 0)
    wait(lambda: "utility" in times)
    # the Utility view's model: a logistic regression on Adult, an OLS on Census
    utility.formula_edit.setText(formula)
    utility.fit()
    wait(lambda: utility.model is not None or "a40000" in utility.model_note.text())
    wait(lambda: not utility.is_computing)
    info: dict[str, Any] = {
        "seconds_to_reference": times["reference"] - times["run"],
        "longest_stall_ms": 1000.0 * meter.stop(),
        "stall_ms_by_phase": meter.phases,
        "groups_title": window.plot.title_text(),
        "density_shown": bool(window.plot.density_shown),
        "bar_titles": list(window.compare_panel.bars.chart_titles),
        "ru_title": window.ru_chart.title_text(),
        "reference_position": list(window.ru_chart.reference_position or ()),
        "utility_seconds_to_draw": times["utility"] - times["shown utility"],
        "distribution_rows": utility.distribution_table.rowCount(),
        "distribution_title": utility._dist_plot.titleLabel.text,
        "crosstab_rows": utility.crosstab_table.rowCount(),
        "crosstab_note": utility.crosstab_note.text(),
        "association_note": utility.association_note.text(),
        "model_note": utility.model_note.text(),
        "coefficients": utility.coefficient_table.rowCount(),
        "images": [],
        "utility_images": [],
        "records_images": [],
        "compare_axes": [],
        "compare_plot_heights": [],
    }
    plot, risk = window.plot, window.risk_panel
    info.update(
        groups_axes=[plot.options.x_axis, plot.options.y_axis],
        colour_by_group=bool(plot.colour_by_group),
        groups_in_view=int(plot.groups_in_view),
        groups_inside=[],
        risk_source=risk.source,
        risk_k_columns=risk.k_table.columnCount(),
        suda_ticks=sorted(  # none on Census: no categorical keys
            label
            for _y, label in (risk.suda_plot.getPlotItem().getAxis("left")._tickLevels or [[]])[0]
        ),
        risk_keys_before=sorted(
            (ctl.result.report.get("risk_before") or {}).get("keys", [])  # type: ignore[union-attr]
        ),
        risk_legend=risk.legend.text(),
    )
    for width, height in SIZES:
        window.resize(width, height)
        for name, widget in views.items():
            show_view(window, widget)
            pause()
            wait(lambda: window.compare_panel.bars.pending == 0)
            if name == "groups":  # the plot and its colour bar inside the view
                right = plot.plot_widget.viewport().width() + 1
                rects = (plot.plot_item.sceneBoundingRect(), plot.color_bar.sceneBoundingRect())
                info["groups_inside"].append(all(r.right() <= right for r in rects))
            image = f"{which}-{width}x{height}-{name}"
            if not window.grab().save(str(out / f"{image}.png")):
                raise OSError(f"cannot write {image}.png")
            info["images"].append(image)
        show_view(window, utility)
        for i in range(1, utility.tabs.count()):  # the first tab is in "images" already
            utility.tabs.setCurrentIndex(i)
            pause()
            image = f"{which}-{width}x{height}-utility-{utility.tabs.tabText(i).lower()}"
            if not window.grab().save(str(out / f"{image}.png")):
                raise OSError(f"cannot write {image}.png")
            info["utility_images"].append(image)
        utility.tabs.setCurrentIndex(0)
        # the compared runs' linked record plots (issue 29/30: ~60 px tall at 1366 × 768 under
        # the measures table) and the dependency tree
        compare = window.compare_panel
        show_view(window, compare)
        compare.views.setCurrentWidget(compare.plot)
        pause()
        wait(lambda: not window.compare_panel.plot.drawing)
        pause()
        info["compare_axes"].append([compare.plot.options.x_axis, compare.plot.options.y_axis])
        info["compare_plot_heights"].append([int(p.view.height()) for p in compare.plot.plots])
        show_view(window, window.tree_panel)
        wait(lambda: not window.tree_panel.is_computing)
        pause()
        for name, widget in (("compare-records", compare), ("tree", window.tree_panel)):
            show_view(window, widget)
            pause()
            image = f"{which}-{width}x{height}-{name}"
            if not window.grab().save(str(out / f"{image}.png")):
                raise OSError(f"cannot write {image}.png")
            info["records_images"].append(image)
        compare.views.setCurrentIndex(0)
    # a click lists the clicked record's group
    show_view(window, plot)
    plot.show_members(int(np.flatnonzero(ctl.result.labels == 0)[0]))  # type: ignore[union-attr]
    pause()
    info["members_visible"] = bool(plot.members_panel.isVisibleTo(plot))
    info["members_label"] = plot.members_label.text()
    ctl.shutdown()
    window.close()
    return info


def main(argv: list[str]) -> int:
    out, data = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    make_application()
    result = {
        "adult": capture(data / "adult" / "adult.csv", "adult", out),
        "census": capture(data / "sdc-reference" / "CASCrefmicrodata.csv", "census", out),
    }
    (out / "capture.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
