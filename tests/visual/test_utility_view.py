"""The Utility view (issue 29) drawn on Adult (1366×768 and 1920×1080) and Census (1366×768)
in a process of its own (``capture_utility.py``, offscreen platform): every tab draws, the
figures it shows are the ones asked for, no image is blank, and Adult is drawn within a rough
time of the run's end. The images stay in ``tests/visual/out/utility`` for a person to look at
(no reference comparison: the view's layout will change with the other views of issue 29)."""

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

pytestmark = [pytest.mark.visual, pytest.mark.shared]

HERE = Path(__file__).parent
OUT = HERE / "out" / "utility"
#: Rough bound on the time from the run's end to the drawn distributions on Adult (the issue's
#: target is 1 s on an idle 2-core machine; a loaded CI machine gets room).
DRAW_BUDGET_S = 5.0


@pytest.fixture(scope="module")
def captured() -> dict[str, dict[str, object]]:
    reference_sets.shared_path("adult", "adult.csv")
    reference_sets.shared_path("sdc-reference", "CASCrefmicrodata.csv")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(HERE / "capture_utility.py"), str(OUT), str(reference_sets.SHARED_DATA)],
        env=env, capture_output=True, text=True, timeout=900, check=False,
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


def test_adult_utility_view_draws_every_tab(captured: dict[str, dict[str, object]]) -> None:
    adult = captured["adult"]
    assert adult["distribution_rows"] == 9  # 8 quasi-identifiers and salary-class
    assert "Hellinger" in str(adult["distribution_title"])
    assert "Cramér's V" in str(adult["crosstab_note"]) and int(adult["crosstab_rows"]) >= 2
    assert "9 columns, 30,162 records" in str(adult["association_note"])
    assert "logistic regression" in str(adult["model_note"])
    assert "Karr et al. 2006" in str(adult["model_note"])
    assert int(adult["coefficients"]) >= 17  # intercept, age, 15 education levels, sex
    assert float(adult["seconds_to_draw"]) <= DRAW_BUDGET_S
    assert len(adult["images"]) == 8  # four tabs at two sizes


def test_census_utility_view_fits_an_ols(captured: dict[str, dict[str, object]]) -> None:
    census = captured["census"]
    assert census["distribution_rows"] == 13
    assert "(OLS;" in str(census["model_note"])


def test_no_utility_image_is_blank(captured: dict[str, dict[str, object]]) -> None:
    names = [n for c in captured.values() for n in c["images"]]  # type: ignore[attr-defined]
    assert len(names) == 12
    for name in names:
        assert _grey_spread(OUT / f"{name}.png") > 10, name
