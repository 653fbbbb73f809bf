"""Issue 18, item 2: a report a release board can sign, as HTML and PDF beside the JSON report.

The command line writes it with the release (``--report-html``, ``--report-pdf``), as one
release: all files or none. It states the data set's fingerprint (SHA-256 of the input as read
and of the release as written, rows, columns), roles, method with its references, the promises
verified on the released table (k, identifiers, the p/l/t the method promised), information loss
and disclosure risk, charts, overrides with their reasons and the version; never a value of a
record. The PDF is Qt's print of the same page (its pages were rendered with pdftoppm and looked
at when this was written; here its structure is checked).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microgui._version import __version__
from microgui.cli import main
from microgui.core.io import read_table
from microgui.core.release.check import ReleaseContext, export_run
from microgui.core.release.report import ReleaseReport, release_checks, release_report_makers
from microgui.core.release.report_charts import ChartSeries, ReportChart, chart_svg
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.roles import RoleMap

REGIONS = ["Northmoor", "Eastvale", "Southreach", "Westerby"]


def _table(tmp_path: Path, n: int = 60) -> Path:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "pid": [f"ID{7000 + i}X" for i in range(n)],
            "region": [REGIONS[i % 4] for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": rng.integers(10_000, 90_000, n),
            "disease": [["flu", "asthma", "diabetes", "none", "gout"][i % 5] for i in range(n)],
        }
    )
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    return source


def _dataset(source: Path) -> Any:
    """The table read as the app reads it, with age and income the quasi-identifiers."""
    dataset = read_table(source)
    roles = {
        "pid": {"role": "identifier"},
        "region": {"role": "non-confidential"},
        "age": {"role": "quasi-identifier", "kind": "continuous"},
        "income": {"role": "quasi-identifier", "kind": "continuous"},
        "disease": {"role": "confidential", "kind": "nominal"},
    }
    return dataset.with_roles(RoleMap.from_json(roles))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _protect(source: Path, out: Path, *extra: str) -> int:
    return main(
        ["protect", str(source), "-o", str(out), "--identifiers", "pid", "--qi",
         "age,income,region", "--nominal", "region", "--confidential", "disease", "-k", "4",
         "--method", "mdav-generic", "--report", str(out.with_suffix(".json")), "-q", *extra]
    )  # fmt: skip


def test_cli_writes_html_and_pdf_with_fingerprints_and_verified_promises(tmp_path: Path) -> None:
    source = _table(tmp_path)
    out = tmp_path / "release.csv"
    html, pdf = tmp_path / "board.html", tmp_path / "board.pdf"
    assert _protect(source, out, "--report-html", str(html), "--report-pdf", str(pdf)) == 0
    report = json.loads(out.with_suffix(".json").read_text())
    fingerprint = report["fingerprint"]
    assert fingerprint["input"] == {
        "file": "people.csv", "sha256": _sha(source), "bytes": source.stat().st_size,
        "rows": 60, "columns": 5,
    }  # fmt: skip
    assert fingerprint["output"] == {
        "file": "release.csv", "format": "csv", "sha256": _sha(out), "rows": 60, "columns": 4,
    }  # fmt: skip
    text = html.read_text(encoding="utf-8")
    assert _sha(source) in text and _sha(out) in text
    assert "every promise kept" in text and "NOT KEPT" not in text
    assert "k = 4" in text and f"microgui {__version__}" in text
    assert "Domingo-Ferrer &amp; Torra (2005)" in text  # the method's reference, in full
    for column in ("pid", "region", "age", "income", "disease"):
        assert f"<td>{column}</td>" in text  # the roles table
    assert "Release decision" in text and "Risk–utility position" in text
    assert "<svg" in text  # the charts, inline
    # never a value of a record: no identifier, no category of a quasi-identifier or of the
    # confidential column (the released table holds the regions, the report does not)
    original = pd.read_csv(source)
    for value in [*original["pid"], *REGIONS, "asthma", "diabetes", "gout"]:
        assert value not in text, value
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    pages = len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert 3 <= pages <= 12, pages
    assert b"/Creator" in data


def test_the_fingerprint_is_of_the_bytes_read_not_of_a_file_changed_since(tmp_path: Path) -> None:
    source = _table(tmp_path)
    before = _sha(source)
    dataset = _dataset(source)
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    source.write_text("changed\n1\n")  # the file changes after reading
    report = export_run(dataset, result, tmp_path / "out.csv", tmp_path / "out.json")
    assert report["fingerprint"]["input"]["sha256"] == before


def test_a_report_maker_that_fails_leaves_no_file(tmp_path: Path) -> None:
    source = _table(tmp_path)
    dataset = _dataset(source)
    result = run_protection(dataset, RunSpec.make("mdav", 3))

    def broken(_context: ReleaseContext) -> object:
        raise OSError(28, "No space left on device")

    targets = [tmp_path / n for n in ("out.csv", "out.json", "out.html")]
    with pytest.raises(Exception, match="space"):
        export_run(dataset, result, targets[0], targets[1], extra_reports=[(targets[2], broken)])
    assert not any(t.exists() for t in targets)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]  # no temporary file


def test_an_override_and_a_broken_promise_are_on_the_first_page(tmp_path: Path) -> None:
    source = _table(tmp_path)
    out, html = tmp_path / "r.csv", tmp_path / "r.html"
    code = main(
        ["protect", str(source), "-o", str(out), "--identifiers", "pid", "--qi", "age,income",
         "-k", "4", "--method", "individual-ranking", "-q", "--report-html", str(html),
         "--allow-unsafe", "internal test file, not released"]
    )  # fmt: skip
    assert code == 0
    text = html.read_text(encoding="utf-8")
    assert "A PROMISE IS NOT KEPT" not in text  # individual ranking promised no k-anonymity
    assert "not promised by the method" in text
    assert "released with an override (see Overrides)" in text
    assert "internal test file, not released" in text and "Released despite the check" in text
    first_page = text.split("page-break-before")[0]
    assert "Overrides" in first_page and "SHA-256" in first_page


def test_the_p_of_p_sensitive_k_anonymity_is_verified_on_the_release(tmp_path: Path) -> None:
    source = _table(tmp_path)
    out, html = tmp_path / "p.csv", tmp_path / "p.html"
    code = main(
        ["protect", str(source), "-o", str(out), "--identifiers", "pid", "--qi", "age,income",
         "--confidential", "disease", "-k", "4", "--method", "p-sensitive", "--param", "p=3",
         "-q", "--report-html", str(html)]
    )  # fmt: skip
    assert code == 0
    text = html.read_text(encoding="utf-8")
    released = pd.read_csv(out)
    reached = int(released.groupby(["age", "income"])["disease"].nunique().min())
    assert reached >= 3
    row = re.search(r"p-sensitive on disease</td><td>p = 3</td><td class='num'>(\d+)</td>", text)
    assert row is not None and int(row.group(1)) == reached
    assert "every promise kept" in text


def test_release_checks_say_not_kept_when_the_table_breaks_k() -> None:
    frame = pd.DataFrame({"a": [1.0, 1.0, 2.0, 3.0], "b": [0.0, 0.0, 1.0, 1.0]})
    dataset_roles = RoleMap.from_json(
        {"a": {"role": "quasi-identifier"}, "b": {"role": "quasi-identifier"}}
    )
    from microgui.core.table.dataset import Dataset

    dataset = Dataset(frame, dataset_roles)
    result = run_protection(dataset, RunSpec.make("mdav", 2))
    rows = release_checks(result, frame)  # the original table, not k-anonymous
    k_row = next(r for r in rows if r.what.startswith("k-anonymity"))
    assert k_row.kept is False and k_row.reached == "1" and k_row.promised == "k = 2"
    facts = ReleaseReport(dataset, result, frame, result.report, measures={}).facts
    assert not facts.all_kept


def test_dask_partitions_refuse_the_html_and_pdf_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _table(tmp_path)
    code = main(
        ["protect", str(source), "-o", str(tmp_path / "parts"), "--engine", "dask", "--qi",
         "age,income", "-k", "3", "--method", "mdav", "--report-pdf", str(tmp_path / "r.pdf")]
    )  # fmt: skip
    assert code == 2
    assert "--report-pdf" in capsys.readouterr().err


def test_the_report_cannot_overwrite_the_input(tmp_path: Path) -> None:
    source = _table(tmp_path)
    before = source.read_bytes()
    assert _protect(source, tmp_path / "o.csv", "--report-html", str(source)) != 0
    assert source.read_bytes() == before


def test_a_mark_on_the_frames_edge_is_a_circle_and_one_beyond_it_an_arrow() -> None:
    # 0 on an axis that starts at 0 (risks, losses, hours) was drawn as an off-scale arrow
    chart = ReportChart(
        caption="c",
        x_label="x",
        y_label="y",
        series=(ChartSeries(name="s", x=np.array([0.0, 5.0, 50.0]), y=np.array([0.0, 3.0, 1.0])),),
        frame=((0.0, 10.0), (0.0, 4.0)),
    )
    svg = chart_svg(chart)
    assert svg.count("<circle") == 2  # (0, 0) on the edge and (5, 3) inside
    assert svg.count("<polygon") == 1  # x = 50 beyond the frame


def test_the_python_api_exports_a_release_with_its_reports(tmp_path: Path) -> None:
    import microgui
    from microgui.core.errors import ExportRefused

    frame = pd.read_csv(_table(tmp_path))
    res = microgui.protect(
        frame, qi=["age", "income"], identifiers="pid", confidential="disease", k=4
    )
    written = res.export(
        tmp_path / "api.parquet",
        report=tmp_path / "api.json",
        report_html=tmp_path / "api.html",
        pseudonymize="pid",
    )
    released = pd.read_parquet(tmp_path / "api.parquet")
    assert len(released) == len(frame) and released["pid"].str.startswith("PSN-").all()
    assert written["fingerprint"]["output"]["sha256"] == _sha(tmp_path / "api.parquet")
    assert written["fingerprint"]["input"]["sha256"] is None  # a frame given in Python
    text = (tmp_path / "api.html").read_text(encoding="utf-8")
    assert "a table given in Python" in text
    # pseudonyms are the identifier's allowed form: the promise is kept (it read NOT KEPT)
    assert "every promise kept" in text and "pid as random pseudonyms" in text
    masked = microgui.protect(
        frame, qi=["age", "income"], identifiers="pid", k=4, method="individual-ranking",
        unsafe="allow",
    )  # fmt: skip
    with pytest.raises(ExportRefused, match="refused"):
        masked.export(tmp_path / "masked.csv")
    assert not (tmp_path / "masked.csv").exists()
    report = masked.export(tmp_path / "masked.csv", override="a test of the override", csv_sep=";")
    assert report["export_override"]["reason"] == "a test of the override"
    assert (tmp_path / "masked.csv").read_text().splitlines()[0].count(";") == 3


# --- the adversarial review's findings (each failed before its fix) ---------------------------
def test_columns_named_like_formulas_are_still_checked(tmp_path: Path) -> None:
    """'=age' is written as "'=age" in the file (formula rule); the checks must still find it,
    not report a 1-anonymous release as k-anonymous."""
    frame = pd.read_csv(_table(tmp_path)).rename(columns={"age": "=age", "income": "+income"})
    source = tmp_path / "odd.csv"
    frame.to_csv(source, index=False)
    html = tmp_path / "odd.html"
    code = main(
        ["protect", str(source), "-o", str(tmp_path / "odd_out.csv"), "--identifiers", "pid",
         "--qi", "=age,+income", "-k", "4", "--method", "individual-ranking", "-q",
         "--allow-unsafe", "a test", "--report-html", str(html)]
    )  # fmt: skip
    assert code == 0
    text = html.read_text(encoding="utf-8")
    k_row = re.search(r"k-anonymity \(smallest.*?<td class='num'>([\d,]+)</td>", text, re.S)
    assert k_row is not None and int(k_row.group(1)) < 4
    assert "every promise kept" not in text


def test_an_error_quoting_a_value_never_reaches_the_report(tmp_path: Path) -> None:
    source = _table(tmp_path)
    dataset = _dataset(source)
    # a confidential ordinal whose declared order leaves out one of its values ("gout")
    roles = dataset.roles.replace(
        "disease",
        dataset.roles["disease"].with_kind(
            __import__(
                "microgui.core.table.roles", fromlist=["AttributeKind"]
            ).AttributeKind.ORDINAL,
            ["flu", "asthma", "diabetes", "none"],
        ),
    )
    dataset = dataset.with_roles(roles)
    result = run_protection(dataset, RunSpec.make("mdav", 3))
    export_run(
        dataset, result, tmp_path / "o.csv",
        extra_reports=release_report_makers(tmp_path / "o.html", None),
    )  # fmt: skip
    text = (tmp_path / "o.html").read_text(encoding="utf-8")
    assert "not measured" in text
    for value in ("gout", "asthma", "diabetes", "flu"):
        assert value not in text, value


def test_unusable_weights_leave_a_note_and_the_other_measures(tmp_path: Path) -> None:
    frame = pd.read_csv(_table(tmp_path)).assign(w=0.5)  # weights summing below the counts
    source = tmp_path / "w.csv"
    frame.to_csv(source, index=False)
    html = tmp_path / "w.html"
    assert main(["protect", str(source), "-o", str(tmp_path / "wo.csv"), "--identifiers", "pid",
                 "--qi", "age,income", "-k", "4", "--method", "mdav", "--weight", "w", "-q",
                 "--report-html", str(html)]) == 0  # fmt: skip
    text = html.read_text(encoding="utf-8")
    assert "survey-weighted risk was not computed" in text
    assert "distance-based record linkage" in text  # the other measures are there


def test_the_pdf_report_does_not_need_a_working_display(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    source = _table(tmp_path)
    env = {**os.environ, "DISPLAY": ":99", "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run(
        [sys.executable, "-m", "microgui", "protect", str(source), "-o", str(tmp_path / "d.csv"),
         "--identifiers", "pid", "--qi", "age,income", "-k", "4", "--method", "mdav", "-q",
         "--report-pdf", str(tmp_path / "d.pdf")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d.pdf").read_bytes().startswith(b"%PDF-")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_group_with_one_confidential_value_is_flagged(tmp_path: Path) -> None:
    """Not a broken promise (MDAV promises k-anonymity only) but worth the board's eye:
    distinct l-diversity 1 means some group's confidential value is disclosed."""
    frame = pd.read_csv(_table(tmp_path)).assign(disease="flu")  # one value everywhere
    source = tmp_path / "one.csv"
    frame.to_csv(source, index=False)
    html = tmp_path / "one.html"
    assert main(["protect", str(source), "-o", str(tmp_path / "one_out.csv"), "--identifiers",
                 "pid", "--qi", "age,income", "--confidential", "disease", "-k", "4",
                 "--method", "mdav", "-q", "--report-html", str(html),
                 "--report", str(tmp_path / "one_out.report.json")]) == 0  # fmt: skip
    text = html.read_text(encoding="utf-8")
    assert "every promise kept; attention: see the warning below" in text
    assert "warning: attribute disclosure: 15 group(s) share one disease value" in text
    # the release's one verdict, in the warning colour, and the same figures as the JSON report
    assert (
        "Verdict: k-anonymous (k = 4); attribute disclosure: 100 % of records in groups with "
        "one disease value (15 groups)"
    ) in text
    assert "#b35c00" in text and "✓" not in text.split("Verdict:")[1].split("</p>")[0]
    report = json.loads((tmp_path / "one_out.report.json").read_text(encoding="utf-8"))
    assert report["released_with_attribute_disclosure"] is True
    assert report["verdict"]["level"] == "attribute_disclosure"
    assert report["verdict"]["text"] in text
    disclosure = report["attribute_disclosure"]["disease"]
    assert disclosure["homogeneous_records"] == 60 and disclosure["homogeneous_groups"] == 15
    assert "60 of 60 (100 %); 15 group(s)" in text
