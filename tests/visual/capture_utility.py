"""Draw the Utility view (issue 29) on Adult and Census and save its four tabs as PNG files.

Run by ``test_utility_view.py`` in its own process (Qt's platform is fixed when the
QApplication starts): ``python capture_utility.py OUT_DIR DATA_DIR``. Adult (salary-class
confidential, age and the seven categorical columns quasi-identifiers, mdav-generic k = 5) is
drawn at 1366×768 and 1920×1080, Census (the first six columns quasi-identifiers, the others
confidential, mdav k = 3) at 1366×768. Writes ``OUT_DIR/<name>.png`` and ``OUT_DIR/capture.json``
with what each view drew (titles, notes, row counts) and the rough time from the end of the run
to the drawn distributions, for the test to check; the images are for a person to look at.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

from microgui.core.runs import RunSpec
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.qt.app import make_application
from microgui.qt.main_window import MainWindow
from microgui.qt.settings import UiSettings

QI, CONF = AttributeRole.QUASI_IDENTIFIER, AttributeRole.CONFIDENTIAL
ADULT_NOMINAL = ["sex", "race", "marital-status", "education", "native-country", "workclass"]
ADULT_NOMINAL += ["occupation"]


def wait(done: Any, timeout_s: float = 600.0) -> None:
    clock = QElapsedTimer()
    clock.start()
    while not done():
        if clock.elapsed() > timeout_s * 1000:
            raise TimeoutError("the Utility view did not finish drawing")
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()


def pause(ms: int = 200) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def capture(
    app: Any, path: Path, which: str, sizes: list[tuple[int, int]], out: Path
) -> dict[str, Any]:
    window = MainWindow(UiSettings(persist=False))
    window.resize(*sizes[0])
    window.show()
    ctl = window.controller
    ctl.open_file(path)
    wait(lambda: ctl.dataset is not None)
    columns = [str(c) for c in ctl.dataset.frame.columns]
    if which == "adult":
        specs = {c: ColumnSpec(QI, AttributeKind.NOMINAL) for c in ADULT_NOMINAL}
        specs["age"] = ColumnSpec(QI, AttributeKind.CONTINUOUS)
        specs["salary-class"] = ColumnSpec(CONF, AttributeKind.NOMINAL)
        spec, formula = (
            RunSpec.make("mdav-generic", 5, seed=0),
            "salary-class ~ age + education + sex",
        )
    else:
        specs = {c: ColumnSpec(QI, AttributeKind.CONTINUOUS) for c in columns[:6]}
        specs.update({c: ColumnSpec(CONF, AttributeKind.CONTINUOUS) for c in columns[6:]})
        spec, formula = (
            RunSpec.make("mdav", 3, seed=0),
            f"{columns[6]} ~ {columns[0]} + {columns[1]}",
        )
    ctl.set_roles(RoleMap.from_dict({c: specs.get(c, ColumnSpec()) for c in columns}))
    panel = window.utility_panel
    window.tabs.setCurrentWidget(panel)
    times: dict[str, float] = {}
    ctl.run_finished.connect(lambda *_a: times.setdefault("run", time.perf_counter()))
    panel.summary_shown.connect(lambda *_a: times.setdefault("drawn", time.perf_counter()))
    ctl.start_run(spec)
    wait(lambda: "drawn" in times)
    panel.formula_edit.setText(formula)
    panel.fit()
    wait(lambda: panel.model is not None or "a40000" in panel.model_note.text())
    wait(lambda: not panel.is_computing)
    info: dict[str, Any] = {
        "seconds_to_draw": times["drawn"] - times["run"],
        "distribution_rows": panel.distribution_table.rowCount(),
        "distribution_title": panel._dist_plot.titleLabel.text,
        "crosstab_rows": panel.crosstab_table.rowCount(),
        "crosstab_note": panel.crosstab_note.text(),
        "association_note": panel.association_note.text(),
        "model_note": panel.model_note.text(),
        "coefficients": panel.coefficient_table.rowCount(),
        "images": [],
    }
    for width, height in sizes:
        window.resize(width, height)
        for i in range(panel.tabs.count()):
            panel.tabs.setCurrentIndex(i)
            pause()
            name = f"{which}-{width}x{height}-{i}-{panel.tabs.tabText(i).lower()}"
            if not window.grab().save(str(out / f"{name}.png")):
                raise OSError(f"cannot write {name}.png")
            info["images"].append(name)
    ctl.shutdown()
    window.close()
    return info


def main(argv: list[str]) -> int:
    out, data = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    app = make_application()
    result = {
        "adult": capture(
            app, data / "adult" / "adult.csv", "adult", [(1366, 768), (1920, 1080)], out
        ),
        "census": capture(
            app, data / "sdc-reference" / "CASCrefmicrodata.csv", "census", [(1366, 768)], out
        ),
    }
    (out / "capture.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
