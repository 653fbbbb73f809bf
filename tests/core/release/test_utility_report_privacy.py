"""Issue 29's utility figures in reports (the HTML release report's distributions and
associations, ``evaluate --json``'s ``utility`` with crosstabs and models) hold no original value
of the extreme record and no category of the data (the privacy rule of issue 12, extended)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from core.release.test_no_record_values import extreme_frame, leaked_tokens
from extreme_record import TOKENS

from microgui.cli import main

REGIONS = ("north", "south", "east", "west")
ROLES = ["--qi", "region,age,income,hours", "--nominal", "region", "--identifiers", "id"]
ROLES += ["--confidential", "health"]


@pytest.fixture(scope="module")
def extreme_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("extreme_utility") / "people.csv"
    extreme_frame().to_csv(path, index=False)
    return path


def _categories(text: str) -> list[str]:
    return [r for r in REGIONS if re.search(rf"\b{r}\b", text, re.IGNORECASE)]


def test_release_report_html_utility_section_holds_no_value_or_category(
    extreme_csv: Path, tmp_path: Path
) -> None:
    html = tmp_path / "report.html"
    argv = ["protect", str(extreme_csv), *ROLES, "-k", "3", "--method", "mdav-generic"]
    argv += ["-o", str(tmp_path / "out.csv"), "--report-html", str(html), "-q"]
    assert main(argv) == 0
    text = html.read_text(encoding="utf-8")
    assert "Distributions, original vs released" in text
    assert "Associations, original vs released" in text
    assert not leaked_tokens(text), leaked_tokens(text)
    assert not _categories(text)
    assert TOKENS  # the scan above has something to look for


def test_evaluate_utility_json_with_crosstab_and_model_holds_no_value_or_category(
    extreme_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    protected = tmp_path / "protected.csv"
    argv = ["protect", str(extreme_csv), *ROLES, "-k", "3", "--method", "mdav-generic", "-q"]
    assert main([*argv, "-o", str(protected)]) == 0
    out = tmp_path / "evaluate.json"
    argv = ["evaluate", str(extreme_csv), str(protected), *ROLES, "--json", str(out)]
    argv += ["--crosstab", "region,age", "--model", "health ~ age + region + income"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    text = json.dumps(json.loads(out.read_text(encoding="utf-8")), ensure_ascii=False)
    assert "region#2" in text  # coefficients named by level index
    for what in (text, printed):
        assert not leaked_tokens(what), leaked_tokens(what)
        assert not _categories(what)
