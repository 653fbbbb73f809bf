"""One format for one measure in every view (issue 30): Adult's proven lower bound on the loss
(0.0001307 %) read "0.000 %" in the Results view, "0.00 %" in the status lines and "0.0001307"
in the run history. The Results view, the status line of a run (the Method panel's and the
window's, the command line's), the history, the compare table and its bars now write a measure
the same way, and a small non-zero value never reads as zero."""

from __future__ import annotations

from dataclasses import replace

from microgui.core.metrics.measure_text import format_measure, format_percent
from microgui.core.runs import RunSpec, information_loss_text
from microgui.qt.main_window import MainWindow

#: Adult's bound for mdav-generic k = 5 on its 8 quasi-identifiers (age the only continuous).
BOUND = 0.00013072
IL_ALL = 10.97213


def test_a_small_measure_never_reads_as_zero() -> None:
    assert format_percent(BOUND) == "0.0001307 %"
    assert format_percent(IL_ALL) == "10.97 %"
    assert format_measure(3e-15) == "0"  # float noise is zero, never "-0" nor "3e-15"
    # a sweep point's bound on Adult (k = 3): no e-notation cut in a narrow column
    assert format_measure(1.441e-05) == "0.00001441"
    assert format_measure(-2.5e-06) == "-0.0000025"
    report = {
        "information_loss_all_qi": IL_ALL,
        "information_loss": 3.16249,
        "il_lower_bound_best": BOUND,
        "quasi_identifiers": {"age": "continuous", "sex": "nominal"},
    }
    assert information_loss_text(report) == (
        "IL (all QIs) = 10.97 %, SSE/SST (continuous QIs) = 3.162 % (lower bound 0.0001307 %)"
    )


def test_the_bound_reads_alike_in_results_history_and_status(
    demo_window: MainWindow, qtbot
) -> None:  # type: ignore[no-untyped-def]
    window, ctl = demo_window, demo_window.controller
    with qtbot.waitSignal(ctl.run_finished, timeout=120_000):
        ctl.start_run(RunSpec.make("mdav-generic", 5, seed=1))
    result = ctl.result
    assert result is not None and result.report.get("il_lower_bound_best") is not None
    report = {**result.report, "il_lower_bound_best": BOUND, "information_loss_all_qi": IL_ALL}
    window.results_panel.show_result(replace(result, report=report))
    results = window.results_panel.value_labels
    # (a no-break space keeps the unit on the number's line)
    assert results["il_lower_bound_best"].text().replace("\u00a0", " ") == "0.0001307 %"
    assert "10.97 %" in results["information_loss_all_qi"].text().replace("\u00a0", " ")
    # the history's cell, from the run's measures
    ctl.history[-1].measures["il_lower_bound_best"] = BOUND  # type: ignore[index]
    model = window.history_panel.model
    model.refresh()
    column = (
        model.measure_keys.index("il_lower_bound_best")
        + model.columnCount()
        - len(model.measure_keys)
    )
    assert model.data(model.index(model.rowCount() - 1, column)) + " %" == "0.0001307 %"
    # the status lines (Method panel, status bar, protect's output) say it the same way
    assert "(lower bound 0.0001307 %)" in information_loss_text(report)
