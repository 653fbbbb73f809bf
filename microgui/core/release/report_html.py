"""An HTML report of one run or of a comparison of runs, to attach to a release decision.

Plain Python, no Qt. The report holds the specification of each run (method, k, parameters,
seed), aggregate facts (records, groups, group sizes), the measures and charts — never an
original value of any record: no identifier, no original quasi-identifier value and no
confidential value appears in it. Its charts are :class:`~microgui.core.release.report_charts.ReportChart`
objects built from released or aggregated values only (issue 12: the app's plots, which draw the
original records, are never grabbed), embedded as inline SVG so the report is one self-contained
file whose every number can be searched; a raster image is refused.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from microgui._version import __version__
from microgui.core.methods.refine import refinement_losses
from microgui.core.metrics.disclosure import percent_text
from microgui.core.metrics.measure_text import finite_number, format_measure
from microgui.core.release.report_charts import ReportChart, chart_svg
from microgui.core.runs.spec import RunResult

__all__ = [
    "utility_section",
    "ReleaseCheckRow",
    "ReleaseFacts",
    "ReportRun",
    "report_run",
    "best_indices",
    "format_measure",
    "build_report_html",
    "LOWER_IS_BETTER",
    "HIGHER_IS_BETTER",
]

LOWER_IS_BETTER = "lower is better"
HIGHER_IS_BETTER = "higher is better"

#: Aggregate facts of a run's report copied into the HTML (none is a record's value).
_FACTS: tuple[tuple[str, str], ...] = (
    ("n_records", "Records"),
    ("n_groups", "Groups"),
    ("min_group_size", "Smallest group"),
    ("max_group_size", "Largest group"),
    ("seconds", "Run time (s)"),
    ("invented_combinations", "Groups with an invented combination"),
    ("missing_as_category", "Missing cells as a category"),
    ("rounding", "Rounding of aggregated values"),
    ("refinement", "Refinement after the method"),
    ("verdict", "Verdict"),
    ("attribute_disclosure", "Records in groups with one confidential value"),
)


def _fact(key: str, value: Any) -> Any:
    """A report entry as the HTML shows it: numbers as they are, the dict entries as a line
    (column names and counts only, never a value of a record)."""
    if key == "missing_as_category" and isinstance(value, Mapping):
        return ", ".join(f"{col}: {int(n):,} cells" for col, n in value.items()) or "none"
    if key == "rounding" and isinstance(value, Mapping):
        decimals = ", ".join(f"{col} {d}" for col, d in dict(value.get("decimals", {})).items())
        before = value.get("information_loss_unrounded")
        loss = "" if before is None else f"; SSE/SST before rounding {float(before):.4g} %"
        return f"{value.get('round')} (decimals: {decimals or 'none'}){loss}"
    if key == "refinement" and isinstance(value, Mapping):  # issue 16
        kept = value.get("kept", "refined")
        losses = refinement_losses(value)
        loss = (
            f"IL (all QIs) {losses[0]:.4g} % → {losses[1]:.4g} %"
            if losses is not None and losses[2]
            else f"{float(value['information_loss_before']):.4g} % → "
            f"{float(value['information_loss_after']):.4g} % in {value.get('space')}"
        )
        return f"{value.get('mode')}: {loss}, {float(value.get('seconds', 0.0)):.1f} s" + (
            "" if kept == "refined" else f"; kept {kept}"
        )
    if key == "verdict" and isinstance(value, Mapping):  # issue 29: the one verdict's words
        return str(value.get("text", ""))
    if key == "attribute_disclosure" and isinstance(value, Mapping):
        return (
            "; ".join(
                f"{col}: {percent_text(float(m.get('homogeneous_percent') or 0.0))} "
                f"({int(m.get('homogeneous_groups') or 0):,} groups), "
                f"l = {int(m.get('distinct_l_diversity') or 0)}"
                for col, m in value.items()
                if isinstance(m, Mapping)
            )
            or "no confidential attribute"
        )
    return value


@dataclass(frozen=True)
class ReportRun:
    """What the report says of one run: its name, spec, finishing time, facts and measures."""

    name: str
    spec: Mapping[str, Any]
    finished: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)
    measures: Mapping[str, float | int | None] = field(default_factory=dict)
    quasi_identifiers: Mapping[str, str] = field(default_factory=dict)
    input_name: str = ""


@dataclass(frozen=True)
class ReleaseCheckRow:
    """One property of the release verified on the released table: ``promised`` is what the run
    promised ("k = 5", "t = 0.2"; "" for a property measured but not promised), ``reached`` what
    the table has, ``kept`` whether it keeps the promise (None: nothing was promised)."""

    what: str
    promised: str
    reached: str
    kept: bool | None
    #: a fact not promised but worth a look (distinct l-diversity 1: some group shares one
    #: confidential value, so belonging to it discloses the value)
    warning: str = ""


@dataclass(frozen=True)
class ReleaseFacts:
    """What a release board signs beside the measures (issue 18): the data set's fingerprint
    (file name, SHA-256, size, rows, columns, never a value), each column's role and kind, the
    method's references, the privacy checks measured on the released table, the overrides with
    their reasons and notes (pseudonyms, labels, neutralized cells).

    ``output_*`` describe the release file when the report goes with one (CLI, export); a report
    saved from the app for a run not exported says so (``output_file`` None)."""

    input_file: str | None
    input_sha256: str | None
    input_bytes: int | None
    input_rows: int
    input_columns: int
    roles: tuple[tuple[str, str, str], ...]
    references: tuple[str, ...] = ()
    checks: tuple[ReleaseCheckRow, ...] = ()
    measured_on: str = ""
    output_file: str | None = None
    output_format: str | None = None
    output_sha256: str | None = None
    output_rows: int | None = None
    output_columns: int | None = None
    overrides: tuple[tuple[str, tuple[str, ...]], ...] = ()
    notes: tuple[str, ...] = ()
    #: the release's one verdict (:func:`microgui.core.metrics.disclosure.release_verdict`):
    #: its line and its level ("safe", "attribute_disclosure", ...); "" when not known
    verdict: str = ""
    verdict_level: str = ""

    @property
    def all_kept(self) -> bool:
        return all(row.kept is not False for row in self.checks)


def report_run(
    name: str,
    result: RunResult,
    measures: Mapping[str, float | int | None],
    finished: datetime | None = None,
) -> ReportRun:
    """A :class:`ReportRun` of a run: the spec (with the seed used), the report's aggregate facts
    and the measures. Nothing is read from the protected table itself."""
    report = result.report
    spec = dict(result.spec.to_json())
    if report.get("seed") is not None:
        spec["seed"] = report["seed"]
    quasi = report.get("quasi_identifiers", {})
    return ReportRun(
        name=name,
        spec=spec,
        finished=finished.isoformat(timespec="seconds") if finished is not None else "",
        facts={key: _fact(key, report[key]) for key, _label in _FACTS if key in report},
        measures=dict(measures),
        quasi_identifiers={str(k): str(v) for k, v in dict(quasi).items()},
        input_name=str(report.get("input", "")),
    )


def best_indices(values: Sequence[object], direction: str) -> set[int]:
    """Positions of the best value of a row of measures (ties all count; None and NaN never
    do). Nothing is best when fewer than two values are known or all of them are equal.

    Values within rounding noise of the best (1e-12 absolute, 1e-9 relative) tie with it, so
    that 1e-16 does not "beat" 7e-16 where both mean zero (IL2 of MDAV, for instance).
    """
    numbers = [(i, v) for i, v in enumerate(finite_number(x) for x in values) if v is not None]
    if len(numbers) < 2:
        return set()
    if direction == HIGHER_IS_BETTER:
        target = max(v for _i, v in numbers)
    elif direction == LOWER_IS_BETTER:
        target = min(v for _i, v in numbers)
    else:
        return set()
    tol = 1e-12 + 1e-9 * abs(target)
    tied = {i for i, v in numbers if abs(v - target) <= tol}
    return set() if len(tied) == len(numbers) else tied


_STYLE = """
body { font-family: "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; }
table.sign th, table.sign td { border: none; background: none; }
td.best { font-weight: bold; color: #1a7f37; background: #eaf6ec; }
td.bad { font-weight: bold; color: #b42318; background: #fdecea; }
td.mono { font-family: "DejaVu Sans Mono", Consolas, monospace; font-size: 0.85em; }
.note { color: #666; font-size: 0.9em; }
svg { max-width: 100%; height: auto; border: 1px solid #ddd; margin: 0.5em 0; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _spec_table(runs: Sequence[ReportRun]) -> str:
    keys = ("method", "k", "parameters", "seed", "hierarchies")
    head = "".join(f"<th>{_e(r.name)}</th>" for r in runs)
    rows = []
    for key in keys:
        cells = []
        for run in runs:
            value = run.spec.get(key)
            if isinstance(value, Mapping):
                text = ", ".join(f"{k} = {v}" for k, v in value.items()) or "—"
            else:
                text = "—" if value is None else str(value)
            cells.append(f"<td>{_e(text)}</td>")
        rows.append(f"<tr><th>{_e(key)}</th>{''.join(cells)}</tr>")
    rows.append(
        "<tr><th>finished</th>"
        + "".join(f"<td>{_e(r.finished or '—')}</td>" for r in runs)
        + "</tr>"
    )
    for key, fact in _FACTS:
        if any(key in r.facts for r in runs):
            facts = "".join(
                f"<td class='num'>{_e(format_measure(r.facts.get(key)))}</td>" for r in runs
            )
            rows.append(f"<tr><th>{_e(fact)}</th>{facts}</tr>")
    return (
        f"<table border='1' cellspacing='0' cellpadding='4'><tr><th>Specification</th>{head}</tr>"
        f"{''.join(rows)}</table>"
    )


def _measures_table(
    runs: Sequence[ReportRun], catalog: Mapping[str, Sequence[str]]
) -> tuple[str, int]:
    """The measures table (rows = measures, columns = runs, best marked) and its row count."""
    keys = [k for k in catalog if any(r.measures.get(k) is not None for r in runs)]
    keys += sorted(
        {k for r in runs for k, v in r.measures.items() if v is not None and k not in catalog}
    )
    head = "".join(f"<th>{_e(r.name)}</th>" for r in runs)
    rows = []
    for key in keys:
        info = tuple(catalog.get(key, (key, "", "", "")))
        label, unit, direction, group = (list(info) + ["", "", "", ""])[:4]
        values = [r.measures.get(key) for r in runs]
        best = best_indices(values, direction) if len(runs) > 1 else set()
        cells = "".join(
            f"<td class='num{' best' if i in best else ''}'>{_e(format_measure(v, unit))}</td>"
            for i, v in enumerate(values)
        )
        arrow = (
            "↓" if direction == LOWER_IS_BETTER else "↑" if direction == HIGHER_IS_BETTER else ""
        )
        rows.append(
            f"<tr><th title='{_e(key)}'>{_e(label)}</th><td>{_e(group)}</td>"
            f"<td>{_e(direction)} {arrow}</td>{cells}</tr>"
        )
    table = (
        "<table border='1' cellspacing='0' cellpadding='4'>"
        f"<tr><th>Measure</th><th>Kind</th><th>Direction</th>{head}</tr>"
        f"{''.join(rows)}</table>"
    )
    return table, len(keys)


def build_report_html(
    runs: Sequence[ReportRun],
    catalog: Mapping[str, Sequence[str]],
    *,
    title: str | None = None,
    charts: Sequence[ReportChart] = (),
    generated: datetime | None = None,
    correlations: Any = None,
    release: ReleaseFacts | None = None,
    chart_html: Callable[[int, ReportChart], str] | None = None,
    utility: Mapping[str, Any] | None = None,
) -> str:
    """The HTML report of one run or a comparison of several.

    Parameters
    ----------
    runs
        The runs, in the order of the columns.
    catalog
        Measure key → (label, unit, direction, group), as ``evaluate.MEASURES``; rows follow its
        order, and the best value of each row is marked when several runs are compared.
    title
        The heading; by default it names the run or says how many runs are compared.
    charts
        The charts (:mod:`microgui.core.release.report_charts`: released values, group sizes, measures),
        embedded as inline SVG; anything else (a PNG of a plot) raises ``TypeError``.
    generated
        When the report was made (default: now).
    correlations
        Optional correlation change of the (first) run: a frame as
        :func:`microgui.core.metrics.utility.correlation_change` returns (``column_a``,
        ``column_b``, ``original``, ``protected``, ``difference``); aggregate statistics only.
    release
        The release facts (:class:`ReleaseFacts`): data set fingerprint, verification on the
        released table, overrides, roles, references; shown first when given.
    chart_html
        How chart number i is put in the page (default: inline SVG); the PDF printer, whose
        HTML engine draws no SVG, gives ``<img>`` tags of pictures it made from the same SVG.
    utility
        Optional distributions and associations of the (first) run, as ``evaluate --json``'s
        ``utility`` (``distributions``: column → summary, ``associations``: the matrix
        summary): distances and measures only, no category (:func:`utility_section`).
    """
    if not runs:
        raise ValueError("a report needs at least one run")
    for chart in charts:
        if not isinstance(chart, ReportChart):
            raise TypeError(
                "report charts must be ReportChart objects built from released or aggregated "
                f"values, not {type(chart).__name__} (a picture of a plot may show original records)"
            )
    when = (generated or datetime.now()).isoformat(timespec="seconds")
    if title is None:
        title = (
            f"Protection run {runs[0].name}"
            if len(runs) == 1
            else f"Comparison of {len(runs)} protection runs"
        )
    inputs = sorted({r.input_name for r in runs if r.input_name})
    qis: dict[str, str] = {}
    for run in runs:
        qis.update(run.quasi_identifiers)
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='note'>Made by microgui {_e(__version__)} on {_e(when)}"
        + (f" · input: {_e(', '.join(inputs))}" if inputs else "")
        + "</p>",
    ]
    if qis:
        listed = ", ".join(f"{name} ({kind})" for name, kind in qis.items())
        parts.append(f"<p>Quasi-identifiers: {_e(listed)}.</p>")
    if release is not None:
        parts.extend(_release_sections(release))
    # a release report's first page is what the board signs off: fingerprint, checks, overrides
    spec_style = " style='page-break-before: always'" if release is not None else ""
    parts.append(f"<h2{spec_style}>Specification</h2>")
    parts.append(_spec_table(runs))
    if release is not None and release.references:
        parts.append(
            "<p>References of the method:</p><ul>"
            + "".join(f"<li>{_e(r)}</li>" for r in release.references)
            + "</ul>"
        )
    parts.append(
        "<p class='note'>Each run is reproducible from its specification: same table, same "
        "roles, same method, k, parameters and seed.</p>"
    )
    if release is not None:
        parts.extend(_roles_section(release))
    table, n_rows = _measures_table(runs, catalog)
    parts.append("<h2>Measures</h2>")
    if n_rows:
        parts.append(table)
        if len(runs) > 1:
            parts.append(
                "<p class='note'>The best value of each row (by its direction) is in bold "
                "green; risks are in percent unless a unit says otherwise.</p>"
            )
    else:
        parts.append("<p>No measure was computed.</p>")
    if correlations is not None and len(correlations):
        parts.append(f"<h2>Correlations, original vs protected ({_e(runs[0].name)})</h2>")
        rows = "".join(
            f"<tr><td>{_e(r.column_a)} ~ {_e(r.column_b)}</td>"
            f"<td class='num'>{float(r.original):.3f}</td>"
            f"<td class='num'>{float(r.protected):.3f}</td>"
            f"<td class='num'>{float(r.difference):+.3f}</td></tr>"
            for r in correlations.itertuples()
        )
        parts.append(
            "<table border='1' cellspacing='0' cellpadding='4'><tr><th>Pair</th><th>Original r</th><th>Protected r</th>"
            f"<th>Difference</th></tr>{rows}</table>"
        )
        parts.append("<p class='note'>Pearson correlations; difference = protected − original.</p>")
    if utility:
        parts.extend(utility_section(utility, runs[0].name))
    if charts:
        parts.append("<h2 style='page-break-before: always'>Charts</h2>")
        for i, chart in enumerate(charts):
            shows = f" Shows {chart.shows}." if chart.shows else ""
            drawn = chart_svg(chart) if chart_html is None else chart_html(i, chart)
            parts.append(
                f"<figure>{drawn}<figcaption>{_e(chart.caption)}.{_e(shows)}</figcaption></figure>"
            )
    parts.append(f"<p class='note'>{_e(_footer(charts))}</p>")
    if release is not None:
        parts.append(_sign_off())
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def utility_section(utility: Mapping[str, Any], name: str = "") -> list[str]:
    """The distributions and associations section (issue 29) from summaries as
    :mod:`microgui.core.metrics.categorical_utility` makes them: each column's Hellinger distance
    and total variation, the association matrix's largest and mean change and its ten largest
    changes. Column names and measures only: the summaries hold no category."""

    def num(value: object, fmt: str = ".4f") -> str:
        v = finite_number(value)
        return "–" if v is None else format(v, fmt)

    parts: list[str] = []
    of = f" ({_e(name)})" if name else ""
    dists = utility.get("distributions") or {}
    if dists:
        parts.append(f"<h2>Distributions, original vs released{of}</h2>")
        rows = "".join(
            f"<tr><td>{_e(col)}</td><td>{_e(d.get('kind', ''))}</td>"
            f"<td class='num'>{_e(d.get('positions', ''))}</td>"
            f"<td class='num'>{num(d.get('hellinger'))}</td>"
            f"<td class='num'>{num(d.get('total_variation'))}</td></tr>"
            for col, d in dists.items()
        )
        parts.append(
            "<table border='1' cellspacing='0' cellpadding='4'><tr><th>Column</th><th>Kind</th>"
            "<th>Categories / bins</th><th>Hellinger</th><th>Total variation</th></tr>"
            f"{rows}</table>"
        )
        parts.append(
            "<p class='note'>Each column's frequency table before and after (numbers by histogram "
            "bins with the same edges; a released value the original lacks and missing cells "
            "count as categories of their own). Hellinger distance and total variation: 0 "
            "unchanged, 1 nothing in common.</p>"
        )
    assoc = utility.get("associations") or {}
    pairs = list(assoc.get("pairs") or [])
    if pairs:
        ranked = sorted(pairs, key=lambda p: -abs(finite_number(p.get("difference")) or 0.0))[:10]
        parts.append(f"<h2>Associations, original vs released{of}</h2>")
        parts.append(
            f"<p>{len(pairs)} pairs of {len(assoc.get('columns') or [])} columns on "
            f"{int(assoc.get('n_records') or 0):,} records: largest change "
            f"<b>{num(assoc.get('max_abs_difference'), '.3f')}</b>, mean "
            f"{num(assoc.get('mean_abs_difference'), '.3f')}.</p>"
        )
        rows = "".join(
            f"<tr><td>{_e(p.get('a'))} ~ {_e(p.get('b'))}</td><td>{_e(p.get('measure'))}</td>"
            f"<td class='num'>{num(p.get('original'), '.3f')}</td>"
            f"<td class='num'>{num(p.get('released'), '.3f')}</td>"
            f"<td class='num'>{num(p.get('difference'), '+.3f')}</td></tr>"
            for p in ranked
        )
        parts.append(
            "<table border='1' cellspacing='0' cellpadding='4'><tr><th>Pair</th><th>Measure</th>"
            "<th>Original</th><th>Released</th><th>Difference</th></tr>"
            f"{rows}</table>"
        )
        parts.append(
            "<p class='note'>The largest changes (up to ten): Pearson r for two numbers, "
            "Cramér's V (bias-uncorrected) for two categorical columns, the correlation ratio "
            "eta for a number and a category; records with a missing value left out.</p>"
        )
    return parts


def _release_sections(facts: ReleaseFacts) -> list[str]:
    """The sections a release board reads first: data set, verification, overrides, roles."""
    parts = ["<h2>Data set</h2>"]
    rows = [
        ("Input file", facts.input_file or "a table given in Python (no file)"),
        ("Input SHA-256", facts.input_sha256 or "—"),
        ("Input size", "—" if facts.input_bytes is None else f"{facts.input_bytes:,} bytes"),
        ("Input records × columns", f"{facts.input_rows:,} × {facts.input_columns:,}"),
    ]
    if facts.output_file is not None:
        rows += [
            ("Release file", f"{facts.output_file} ({facts.output_format or 'csv'})"),
            ("Release SHA-256", facts.output_sha256 or "—"),
            (
                "Release records × columns",
                f"{facts.output_rows or 0:,} × {facts.output_columns or 0:,}",
            ),
        ]
    else:
        rows.append(("Release file", "not exported with this report"))
    parts.append(
        "<table border='1' cellspacing='0' cellpadding='4'>"
        + "".join(
            f"<tr><th>{_e(k)}</th><td class='mono'>{_e(v)}</td></tr>"
            if "SHA" in k
            else f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>"
            for k, v in rows
        )
        + "</table>"
    )
    parts.append(
        "<p class='note'>SHA-256 of the files' bytes, as <code>sha256sum</code> prints it: "
        "anyone holding a file can check it is the one this report describes.</p>"
    )
    if not facts.all_kept:
        verdict = "A PROMISE IS NOT KEPT"
    elif facts.overrides:
        verdict = "released with an override (see Overrides)"
    else:
        verdict = "every promise kept"
    if any(r.warning for r in facts.checks):
        verdict += "; attention: see the warning below"
    parts.append(f"<h2>Verified on the released table: {_e(verdict)}</h2>")
    if facts.verdict:
        ok = facts.verdict_level in ("safe", "no_confidential")
        colour = (
            "#1a7f37"
            if ok
            else "#b35c00"
            if facts.verdict_level == "attribute_disclosure"
            else "#b42318"
        )
        parts.append(
            f"<p class='verdict' style='color: {colour}; font-weight: bold'>"
            f"Verdict: {_e(facts.verdict)}{' ✓' if ok else ''}</p>"
        )
    if facts.checks:
        body = "".join(
            f"<tr><td>{_e(r.what)}</td><td>{_e(r.promised or '—')}</td>"
            f"<td class='num'>{_e(r.reached)}</td>"
            f"<td class='{'bad' if r.warning else _verdict_class(r.kept)}'>"
            f"{_e(r.warning or _verdict(r.kept))}</td></tr>"
            for r in facts.checks
        )
        parts.append(
            "<table border='1' cellspacing='0' cellpadding='4'><tr><th>Property</th>"
            f"<th>Promised</th><th>Released table</th><th>Verdict</th></tr>{body}</table>"
        )
    if facts.measured_on:
        parts.append(f"<p class='note'>{_e(facts.measured_on)}</p>")
    parts.append("<h2>Overrides</h2>")
    if facts.overrides:
        for reason, problems in facts.overrides:
            parts.append(
                f"<p><b>Released despite the check</b>, reason given: “{_e(reason)}”.</p><ul>"
                + "".join(f"<li>{_e(p)}</li>" for p in problems)
                + "</ul>"
            )
    else:
        parts.append("<p>None: the release passed its check.</p>")
    if facts.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in facts.notes))
        parts.append("</ul>")
    return parts


def _roles_section(facts: ReleaseFacts) -> list[str]:
    parts = ["<h2>Roles of the columns</h2>"]
    body = "".join(
        f"<tr><td>{_e(col)}</td><td>{_e(role)}</td><td>{_e(kind)}</td></tr>"
        for col, role, kind in facts.roles
    )
    parts.append(
        "<table border='1' cellspacing='0' cellpadding='4'><tr><th>Column</th><th>Role</th>"
        f"<th>Kind</th></tr>{body}</table>"
    )
    return parts


def _sign_off() -> str:
    """Room for the release board's decision (filled in by hand on the printed report)."""
    line = "_" * 34
    rows = "".join(
        f"<tr><th>{_e(what)}</th><td>{line}</td></tr>"
        for what in ("Decision (release / do not release)", "Name", "Role", "Date", "Signature")
    )
    return (
        "<h2>Release decision</h2>"
        f"<table border='0' cellspacing='0' cellpadding='8' class='sign'>{rows}</table>"
    )


def _verdict(kept: bool | None) -> str:
    return "measured" if kept is None else "kept" if kept else "NOT KEPT"


def _verdict_class(kept: bool | None) -> str:
    return "" if kept is None else "best" if kept else "bad"


def _footer(charts: Sequence[ReportChart]) -> str:
    """What the report holds, precisely (its charts' data sources named)."""
    text = "This report holds specifications, aggregate facts (counts and group sizes)"
    if charts:
        shown = list(dict.fromkeys(c.shows for c in charts if c.shows))
        text += (
            ", measures and charts drawn only from released or aggregated values: "
            + "; ".join(shown)
            + ". "
        )
    else:
        text += " and measures. "
    return text + (
        "It holds no original value of any record: no identifier, no original "
        "quasi-identifier value and no confidential value (correlations, when shown, are of whole "
        "columns)."
    )
