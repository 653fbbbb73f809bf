"""Issue 29's views (Risk, Utility with its four tabs and a model, groups density, compare bars,
R-U map with the unprotected table's ☆) drawn on Adult and Census after two runs, at 1366×768 and 1920×1080, in a process of
its own (``capture_views29.py``, offscreen platform): what each view says is what a statistician
should read, no image is blank, the ☆ arrives after the run is shown (issue 30: not inside the
run), and the GUI thread's longest stall is recorded (a rough, loose bound: the machine is
shared; the issue's target is 100 ms on an idle 2-core machine). The images stay in
``tests/visual/out/views29`` for a person to look at (no reference comparison: issue 30 changes
the window around the views)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reference_sets
from PySide6.QtGui import QImage

pytestmark = [pytest.mark.visual, pytest.mark.shared, pytest.mark.slow]

HERE = Path(__file__).parent
OUT = HERE / "out" / "views29"
#: Loose bound on the GUI thread's longest hold from the last run's end until every view is
#: drawn (the target is 0.1 s idle; CI shares its 2 cores with other test processes).
STALL_BOUND_MS = 1000.0
#: Rough bound on the time from the Utility view's first show to its drawn distributions on Adult
#: (the issue's target is 1 s on an idle 2-core machine; a loaded CI machine gets room).
DRAW_BUDGET_S = 5.0


@pytest.fixture(scope="module")
def captured() -> dict[str, dict[str, object]]:
    reference_sets.shared_path("adult", "adult.csv")
    reference_sets.shared_path("sdc-reference", "CASCrefmicrodata.csv")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(HERE / "capture_views29.py"), str(OUT), str(reference_sets.SHARED_DATA)],
        env=env, capture_output=True, text=True, timeout=1500, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    data: dict[str, dict[str, object]] = json.loads((OUT / "capture.json").read_text())
    return data


def _grey_spread(path: Path) -> float:
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_Grayscale8)
    width, height = image.width(), image.height()
    bits = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    grey = bits.reshape(height, image.bytesPerLine())[:, :width]
    return float(grey.std())


def test_adult_views_read_as_a_categorical_release(captured: dict[str, dict[str, object]]) -> None:
    adult = captured["adult"]
    # survey size: the originals as density, aggregates coloured by how far records moved
    assert adult["density_shown"] is True
    assert "how far their records moved" in str(adult["groups_title"])
    titles = [str(t) for t in adult["bar_titles"]]  # type: ignore[attr-defined]
    assert titles[0].startswith("★")  # the recommended measures first
    assert any("one confidential value" in t for t in titles)  # the homogeneous share
    assert any(t.startswith("education: changed %") for t in titles)
    assert len(adult["reference_position"]) == 2  # type: ignore[arg-type]
    # the data's own axes, no group colours, the plot and its colour bar inside the view
    assert adult["groups_axes"] == ["age", "education"]
    assert adult["colour_by_group"] is False and int(adult["groups_in_view"]) > 12  # type: ignore[call-overload]
    assert adult["groups_inside"] == [True, True]
    # a click lists the clicked record's group
    assert adult["members_visible"] is True and "Group of" in str(adult["members_label"])
    # the Risk view: before -> after of the run shown; the SUDA2 bars name the 7 categorical keys
    # (age, continuous with 72 values, left out and said); the verdict in its legend
    assert adult["risk_source"] == "run" and adult["risk_k_columns"] == 3
    assert adult["suda_ticks"] == adult["risk_keys_before"]
    assert "age" not in adult["risk_keys_before"]  # type: ignore[operator]
    assert "age&#x27; left out" in str(adult["risk_legend"])  # (escaped quotes)
    assert "attribute disclosure" in str(adult["risk_legend"])  # Adult k = 5: homogeneous groups


def test_compared_records_have_room_and_the_datas_axes(
    captured: dict[str, dict[str, object]],
) -> None:
    """Issue 29/30: the compared runs' record plots opened on PC1/PC2 of Adult's mixed
    embedding and were 0 px tall at 1366 × 768 under the measures table."""
    adult, census = captured["adult"], captured["census"]
    assert adult["compare_axes"] == [["age", "education"]] * 2  # as the groups plot opens
    assert census["compare_axes"] == [["PC1", "PC2"]] * 2  # six continuous QIs: as the groups plot
    for which, info in captured.items():
        laptop, desktop = info["compare_plot_heights"]  # type: ignore[misc]
        assert min(laptop) >= 190 and min(desktop) > min(laptop), which
        for name in info["records_images"]:  # type: ignore[attr-defined]
            assert _grey_spread(OUT / f"{name}.png") > 10, name


def test_census_views_read_as_a_continuous_release(captured: dict[str, dict[str, object]]) -> None:
    census = captured["census"]
    titles = [str(t) for t in census["bar_titles"]]  # type: ignore[attr-defined]
    assert titles[0].startswith("★") and any("SSE/SST %" in t for t in titles)
    assert len(census["reference_position"]) == 2  # type: ignore[arg-type]


def test_no_long_stall_and_no_blank_image(captured: dict[str, dict[str, object]]) -> None:
    for which, info in captured.items():
        assert float(info["longest_stall_ms"]) < STALL_BOUND_MS, which  # type: ignore[arg-type]
        names = info["images"]
        assert len(names) == 10, which  # type: ignore[arg-type]
        for name in names:  # type: ignore[attr-defined]
            assert _grey_spread(OUT / f"{name}.png") > 10, name


def test_adult_utility_view_draws_every_tab(captured: dict[str, dict[str, object]]) -> None:
    adult = captured["adult"]
    assert adult["distribution_rows"] == 9  # 8 quasi-identifiers and salary-class
    assert "Hellinger" in str(adult["distribution_title"])
    assert "Cramér's V" in str(adult["crosstab_note"]) and int(adult["crosstab_rows"]) >= 2  # type: ignore[call-overload]
    assert "9 columns, 30,162 records" in str(adult["association_note"])
    assert "logistic regression" in str(adult["model_note"])
    assert "Karr et al. 2006" in str(adult["model_note"])
    assert int(adult["coefficients"]) >= 17  # type: ignore[call-overload]  # intercept, age, 15 education levels, sex
    assert float(adult["utility_seconds_to_draw"]) <= DRAW_BUDGET_S  # type: ignore[arg-type]


def test_census_utility_view_fits_an_ols(captured: dict[str, dict[str, object]]) -> None:
    census = captured["census"]
    assert census["distribution_rows"] == 13
    assert "(OLS;" in str(census["model_note"])


def test_no_utility_tab_image_is_blank(captured: dict[str, dict[str, object]]) -> None:
    for which, info in captured.items():
        names = info["utility_images"]
        assert len(names) == 6, which  # type: ignore[arg-type]  # three more tabs at two sizes
        for name in names:  # type: ignore[attr-defined]
            assert _grey_spread(OUT / f"{name}.png") > 10, name
