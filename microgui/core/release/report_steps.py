"""The steps of a plan in words (issue 31): one line per step for the command line and the text
report, and a table for the HTML report. Only the counts and measures of the run report's
``steps`` (:func:`microgui.core.runs.plan.run_plan`), never a value of a record."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["step_line", "steps_lines", "steps_html"]


def _pct(value: object) -> str:
    return "n/a" if value is None else f"{float(value):.2f} %"  # type: ignore[arg-type]


def _what(fig: Mapping[str, Any]) -> str:
    kind = fig.get("step")
    if kind == "recode":
        return f"recode {fig.get('column')} ({fig.get('how')})"
    if kind == "top_bottom":
        return f"top/bottom-code {fig.get('column')}"
    if kind == "microaggregate":
        cols = fig.get("columns") or []
        return f"microaggregate {', '.join(map(str, cols))} with {fig.get('method')}, k = {fig.get('k')}"
    if kind == "suppress":
        blanked = [str(c) for c in fig.get("columns") or []]
        k_on = [str(c) for c in fig.get("k_on") or []]
        whole = [c for c in k_on if c not in blanked]
        if whole:  # the default (issue 31): categorical cells blanked, k on every key
            return (
                f"suppress to k = {fig.get('k')} on all keys ({', '.join(blanked)} blanked; "
                f"{', '.join(whole)} kept whole)"
            )
        return f"suppress to k = {fig.get('k')} on {', '.join(blanked)}"
    return str(kind)


def _effect(fig: Mapping[str, Any]) -> str:
    kind = fig.get("step")
    if kind in ("recode", "top_bottom"):
        return (
            f"{int(fig.get('values_changed') or 0):,} values changed, "
            f"{fig.get('distinct_before')} -> {fig.get('distinct_after')} distinct"
        )
    if kind == "microaggregate":
        changed = fig.get("values_changed") or {}
        total = sum(int(v) for v in changed.values())
        return (
            f"{fig.get('n_groups'):,} groups, IL (its QIs) {_pct(fig.get('information_loss_all_qi'))}"
            f", {total:,} values changed"
        )
    if kind == "suppress":
        per = fig.get("suppressed") or {}
        shown = ", ".join(f"{c} {int(n):,}" for c, n in per.items() if int(n))
        return f"{int(fig.get('total') or 0):,} cells suppressed" + (f" ({shown})" if shown else "")
    return ""


def step_line(fig: Mapping[str, Any]) -> str:
    """'step 2: top/bottom-code hours (12 values changed, ...); 340 records below k after'."""
    below = fig.get("records_below_k_after")
    tail = "" if below is None else f"; {int(below):,} records below k after"
    return f"step {fig.get('index')}: {_what(fig)}: {_effect(fig)}{tail}"


def steps_lines(report: Mapping[str, Any]) -> list[str]:
    """Every step of the report's plan, one line each (empty without a plan)."""
    steps = report.get("steps")
    if not isinstance(steps, Sequence) or isinstance(steps, str):
        return []
    return [step_line(f) for f in steps if isinstance(f, Mapping)]


def steps_html(report: Mapping[str, Any]) -> str:
    """The plan's steps as an HTML section ("" without a plan)."""
    steps = [f for f in (report.get("steps") or []) if isinstance(f, Mapping)]
    if not steps:
        return ""
    rows = "".join(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>".format(
            html.escape(str(f.get("index"))),
            html.escape(_what(f)),
            html.escape(_effect(f)),
            html.escape(
                "" if f.get("records_below_k_after") is None
                else f"{int(f['records_below_k_after']):,}"
            ),
        )
        for f in steps
    )  # fmt: skip
    rule = report.get("k_anonymity_rule")
    note = f"<p>k-anonymity measured with {html.escape(str(rule))}.</p>" if rule else ""
    groups = report.get("group_measures_rule")
    if groups:
        note += f"<p>Groups: {html.escape(str(groups))}.</p>"
    return (
        "<h2>Protection plan</h2>"
        "<p>The steps, applied in order to the input; the release was verified once against "
        "the promises of every step.</p>"
        "<table><tr><th>step</th><th>what</th><th>effect</th><th>records below k after</th></tr>"
        f"{rows}</table>{note}"
    )
