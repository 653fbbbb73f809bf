"""Issue 18, item 2, in the app: "Save report" writes the run's release report as HTML or PDF;
after an export it states the exported file's SHA-256 (the same report as the command line's
``--report-html``/``--report-pdf``: :mod:`microgui.core.release.report`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import REPORT_FILTERS, MainWindow

TIMEOUT_MS = 60_000


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_save_report_as_html_and_pdf_before_and_after_the_export(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    assert [f.split()[0] for f in REPORT_FILTERS] == ["HTML", "PDF"]
    rng = np.random.default_rng(5)
    n = 90
    frame = pd.DataFrame(
        {
            "name": [f"Person{i:03d}Q" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": rng.integers(10_000, 90_000, n),
        }
    )
    source = tmp_path / "people.csv"
    frame.to_csv(source, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    roles = roles_from_lists(list(frame.columns), qi=["age", "income"], identifiers=["name"])
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav", 3))
    qtbot.waitUntil(lambda: ctl.shown_run_id is not None, timeout=TIMEOUT_MS)

    before = tmp_path / "before.html"
    assert window.save_report(before, comparison=False), window.last_error
    text = before.read_text(encoding="utf-8")
    assert "Release report" in text and _sha(source) in text
    assert "not exported with this report" in text and "every promise kept" in text
    assert not any(name in text for name in frame["name"])

    pdf = tmp_path / "before.pdf"
    assert window.save_report(pdf, comparison=False)
    assert pdf.read_bytes().startswith(b"%PDF-")

    out = tmp_path / "released.csv"
    assert window.export_to(out)
    after = tmp_path / "after.html"
    assert window.save_report(after, comparison=False)
    text = after.read_text(encoding="utf-8")
    assert _sha(out) in text and "released.csv (csv)" in text


def test_the_dialogs_write_off_the_gui_thread(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """The export and report dialogs write in the file task's worker thread (the checks, the
    PDF and the writing take seconds at a million records): the window answers meanwhile and
    the files appear when ``file_written`` comes."""
    import threading

    import microgui.qt.report_pdf as report_pdf_module

    ctl = window.controller
    assert window.open_demo()
    with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
        ctl.start_run(RunSpec.make("mdav-generic", 5))
    qtbot.waitUntil(lambda: ctl.shown_run_id is not None, timeout=TIMEOUT_MS)
    printed_in: list[str] = []
    real = report_pdf_module.report_pdf

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        printed_in.append(threading.current_thread().name)
        return real(*args, **kwargs)

    import microgui.qt.main_window as main_window_module

    assert main_window_module  # report_pdf is imported inside save_report, from its module
    report_pdf_module.report_pdf = spy
    try:
        pdf = tmp_path / "bg.pdf"
        with qtbot.waitSignal(window.file_written, timeout=TIMEOUT_MS):
            assert window.save_report(pdf, comparison=False, background=True)
        assert pdf.read_bytes().startswith(b"%PDF-")
        assert printed_in and printed_in[0] != threading.main_thread().name
    finally:
        report_pdf_module.report_pdf = real
    out = tmp_path / "bg.csv"
    with qtbot.waitSignal(window.file_written, timeout=TIMEOUT_MS) as blocker:
        assert window.export_to(out, background=True)
    assert out.exists() and blocker.args[0]["fingerprint"]["output"]["sha256"]
    assert "Exported" in window.statusBar().currentMessage()
    assert ctl.export_report_of(ctl.result) is not None


def test_the_app_report_has_the_command_lines_charts(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 30: a single run's report from the app shows the charts ``protect --report-html``
    shows (core's :attr:`ReleaseReport.charts`: the run beside the unprotected table on the same
    risk measure), whatever the screen's axes or other runs of the session."""
    import html

    from microgui.core.release.check import protected_table
    from microgui.core.release.report import ReleaseReport

    rng = np.random.default_rng(6)
    n = 80
    frame = pd.DataFrame(
        {"age": rng.integers(18, 90, n), "income": rng.integers(10_000, 90_000, n)}
    )
    source = tmp_path / "t.csv"
    frame.to_csv(source, index=False)
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles_from_lists(list(frame.columns), qi=["age", "income"]))
    for k in (3, 5):  # another run in the session: never in this run's report
        with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
            ctl.start_run(RunSpec.make("mdav", k))
    qtbot.waitUntil(lambda: ctl.shown_run_id is not None, timeout=TIMEOUT_MS)
    window.plot.set_axes("income", "age")  # the screen's axes do not change the report
    entry = ctl.entry(ctl.shown_run_id)
    path = tmp_path / "run.html"
    assert window.save_report(path, comparison=False), window.last_error
    text = path.read_text(encoding="utf-8")
    cli = ReleaseReport(
        entry.dataset, entry.result, protected_table(entry.result), entry.result.report,
        name=entry.name, measures=entry.measures,
    )  # fmt: skip
    captions = [c.caption for c in cli.charts]
    assert any("unprotected table" in c for c in captions)
    for caption in captions:
        assert html.escape(caption) in text or caption in text, caption
    other = next(e for e in ctl.history if e.run_id != entry.run_id)
    assert other.name not in text
