"""File → *Save report…*: the report of the run shown, or of the comparison when its tab is open,
as HTML or PDF (issue 18), written by the window's file task.

The page is made in core (:class:`~microgui.core.release.report.ReleaseReport` for one run,
:func:`~microgui.core.release.report_html.build_report_html` for a comparison) and written by
:func:`~microgui.core.release.report.write_report`; only the PDF printer is Qt
(:func:`microgui.qt.report_pdf.report_pdf`, looked up when a report is saved).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from microgui.core.errors import MicroguiError
from microgui.core.runs.analysis import measure_catalog

#: The :class:`~microgui.qt.main_window.MainWindow` (not imported: it imports this module, and
#: the package has no import cycle, type-only ones included).
MainWindow = Any

__all__ = ["REPORT_FILTERS", "report_dialog", "report_is_comparison", "save_report"]

#: The report's formats in the "Save report" dialog (issue 18: PDF printed through Qt).
REPORT_FILTERS: tuple[str, ...] = ("HTML (*.html)", "PDF (*.pdf)")


def report_dialog(window: MainWindow) -> None:
    """Ask where to save the report, then save it in the background."""
    comparison = report_is_comparison(window)
    stem = "comparison" if comparison else "run"
    folder = window.settings.last_directory() or "."
    path, picked = QFileDialog.getSaveFileName(
        window,
        "Save the report",
        str(Path(folder) / f"{stem}_report.html"),
        ";;".join(REPORT_FILTERS),
    )
    if path:
        if Path(path).suffix.lower() not in (".html", ".htm", ".pdf"):
            path += ".pdf" if picked.startswith("PDF") else ".html"
        save_report(window, path, comparison=comparison, background=True)


def report_is_comparison(window: MainWindow) -> bool:
    """The report is the comparison's when runs are compared and its tab is open."""
    return bool(window.controller.compared) and window.tabs.currentWidget() is window.compare_panel


def save_report(
    window: MainWindow,
    path: str | Path,
    *,
    comparison: bool | None = None,
    background: bool = False,
) -> bool:
    """Write the report of the run shown (or of the comparison) to ``path`` atomically, as
    PDF when its name ends in ``.pdf``, else HTML; True when it was written.
    ``comparison=None``: the comparison when its tab is open.

    A single run's report is its release report (issue 18: fingerprint, roles, promises
    verified on the protected table, overrides, references; the export's report when this
    run was exported, with the release file's SHA-256)."""
    from microgui.core.release.check import protected_table
    from microgui.core.release.report import ReleaseReport, write_report
    from microgui.core.release.report_html import build_report_html, report_run
    from microgui.qt.report_pdf import report_pdf

    ctl = window.controller
    if comparison is None:
        comparison = report_is_comparison(window)
    path = Path(path)
    if path.suffix == "":
        path = path.with_suffix(".html")
    if comparison:
        entries = [ctl.entry(i) for i in ctl.compared]
    elif ctl.shown_run_id is not None:
        entries = [ctl.entry(ctl.shown_run_id)]
    else:
        entries = []
    if not entries:
        window.show_error("Run a method (or choose runs to compare) before saving a report.")
        return False
    # a single run's report is the command line's (issue 30): its charts are core's
    # (ReleaseReport.charts: released values, group sizes, the run beside the unprotected table
    # on the same risk measure), made in the job; a comparison's are of the compared runs only
    charts: list[Any] = report_charts(window, entries, comparison=True) if comparison else []
    runs = [report_run(e.name, e.result, e.measures, e.finished_at) for e in entries]
    # The correlations tab's table, when it shows this very run (computed in its worker).
    shown = window.association_panel.correlations
    correlations = (
        shown.table
        if not comparison and shown is not None and shown.run_id == entries[0].run_id
        else None
    )
    make_html: Any
    title = "microgui report"
    if comparison:

        def make_html(chart_html: Any = None) -> str:
            return build_report_html(
                runs,
                measure_catalog(),
                charts=charts,
                correlations=correlations,
                chart_html=chart_html,
            )

    else:
        entry = entries[0]
        exported = ctl.export_report_of(entry.result)
        release = ReleaseReport(
            entry.dataset,
            entry.result,
            protected_table(entry.result),
            exported if exported is not None else entry.result.report,
            name=entry.name,
            measures=entry.measures,
            finished=entry.finished_at,
            correlations=correlations,
        )
        make_html, title = release.html, release.title
    # never a file the runs read: the data file, each run's hierarchy files (issue 12)
    read = [e.dataset.source for e in entries]
    read += [Path(p) for e in entries for _column, p in e.spec.hierarchies]
    read += ctl.read_files()

    def job() -> Path:
        """The checks on the released table, the page and its PDF, and the write: off the
        GUI thread when ``background`` (QTextDocument and QImage work in any thread)."""
        drawn = charts if comparison else release.charts  # core's, computed here (off the GUI)
        return write_report(path, make_html, drawn, title, print_pdf=report_pdf, protect_from=read)

    def done(_written: Any) -> None:
        window.settings.set_last_directory(path.resolve().parent)
        window.statusBar().showMessage(f"Saved the report to {path.name}.", 10000)

    if background:
        return bool(window.file_tasks.start(path.name, job, done, "Cannot save the report"))
    try:
        job()
    except MicroguiError as exc:
        window.show_error(str(exc), title="Cannot save the report")
        return False
    done(path)
    return True


def report_charts(window: MainWindow, entries: list[Any], *, comparison: bool) -> list[Any]:
    """The report's charts, built in core from released or aggregated values only: each
    run's released group values (on the screen's axes when they are columns), the group
    sizes and the risk–utility map of the measures. Never a picture of the screen's plots,
    which draw the original records (issue 12)."""
    from microgui.core.release.report_charts import (
        group_sizes_chart,
        released_values_chart,
        ru_map_chart,
    )
    from microgui.qt.plots.ru_chart import axis_title

    options = window.compare_panel.plot.options if comparison else window.plot.options
    axes = (options.x_axis, options.y_axis)
    charts = [released_values_chart(e.result, e.name, axes=axes) for e in entries]
    charts.append(group_sizes_chart([(e.name, e.result) for e in entries]))
    window.ensure_ru_chart()  # the map's axes follow the history's runs
    ru_chart = window.ru_chart
    xk, yk = ru_chart.options.x_measure, ru_chart.options.y_measure
    if xk and yk:
        catalog = measure_catalog()
        charts.append(
            ru_map_chart(
                [
                    (e.name, e.measures.get(xk), e.measures.get(yk))
                    for e in entries  # the selected runs only (issue 30), never the whole session
                ],
                axis_title(catalog.get(xk, ()), xk),
                axis_title(catalog.get(yk, ()), yk),
                x_direction=ru_chart.direction(xk),
                y_direction=ru_chart.direction(yk),
            )
        )
    return [c for c in charts if c is not None]
