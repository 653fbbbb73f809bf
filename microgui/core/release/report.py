"""The report a release board signs (issue 18): one run's release, as HTML (and, through Qt,
PDF: :mod:`microgui.qt.report_pdf`), beside the JSON run report.

What it holds, never a value of a record:

- the data set's **fingerprint**: the input file's name, SHA-256 (taken when it was read:
  :data:`microgui.core.io.FINGERPRINT_ATTR`), size, records and columns; the release file's name,
  format and SHA-256 as written (the report is made from the temporary file before the rename,
  :class:`microgui.core.io.DerivedWriter`), records and columns;
- each column's **role and kind** (an ordinal column's number of categories, not the categories,
  which are values);
- the **method**, k, parameters and seed, with the papers it follows (:func:`references.cited`);
- the **promises verified on the released table** (the frame written to the file: after
  pseudonyms and the formula rule, which map cells one to one, so its groups are the file's):
  identifiers absent, k-anonymity ≥ k, and the p of p-sensitive k-anonymity, the l of
  l-diversity or the t of t-closeness the method promised (:class:`methods.base.ReleaseCheck`);
  per confidential attribute, distinct l-diversity, t-closeness and the records in groups with
  one value of it (:func:`microgui.core.metrics.disclosure.attribute_disclosure`, the figures of
  the JSON report's ``attribute_disclosure``), under the release's one verdict
  (:func:`microgui.core.metrics.disclosure.release_verdict`);
- **information loss and disclosure risk** (:func:`microgui.core.runs.analysis.measure_run`) and
  charts built from released or aggregated values only: the released values, the group sizes and
  the **risk–utility position** of the release beside the unprotected table (information loss 0,
  its risk by the same measure: :func:`unprotected_risk`);
- **overrides** with their reasons, notes (pseudonyms are personal data; labels; neutralized
  cells), the software version.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import ExportRefused, InvalidParameter, MicroguiError
from microgui.core.io import FileWriter, write_files_atomic
from microgui.core.methods import get_method
from microgui.core.metrics.disclosure import GroupMeasures, percent_text, release_verdict
from microgui.core.metrics.file_risk import format_expected
from microgui.core.references import cited
from microgui.core.release import report_html
from microgui.core.release.check import (
    ReleaseContext,
    ReportMaker,
    input_fingerprint,
    release_check_groups,
)
from microgui.core.release.report_charts import (
    ReportChart,
    group_sizes_chart,
    padded_range,
    released_values_chart,
    ru_map_chart,
)
from microgui.core.release.report_html import ReleaseCheckRow, ReleaseFacts, report_run
from microgui.core.release.report_steps import steps_html
from microgui.core.runs.analysis import measure_catalog, measure_run
from microgui.core.runs.spec import RunResult
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole

__all__ = [
    "PdfPrinter",
    "ReleaseReport",
    "release_report_makers",
    "write_report",
    "RU_RISK_KEYS",
    "release_checks",
    "unprotected_risk",
]

#: The risk measure of the report's risk–utility position, the first the run has:
#: distance-based record linkage (continuous keys), else the mean re-identification risk.
RU_RISK_KEYS: tuple[str, ...] = ("record_linkage", "reidentification_risk_mean")
#: Its information loss: over every quasi-identifier (``003`` §5.2-5.4).
RU_LOSS_KEY = "information_loss_all_qi"


def _kind_text(dataset: Dataset, column: str) -> str:
    spec = dataset.roles[column]
    if spec.role in (AttributeRole.IDENTIFIER, AttributeRole.NON_CONFIDENTIAL):
        return "—"
    text = spec.kind.value
    if spec.kind is AttributeKind.ORDINAL and spec.order:
        text += f" ({len(spec.order)} categories in a given order)"
    if spec.missing_as_category:
        text += "; missing cells as a category"
    return text


def release_checks(
    result: RunResult,
    frame: pd.DataFrame,
    pseudonymized: Iterable[str] = (),
    groups: GroupMeasures | None = None,
) -> tuple[ReleaseCheckRow, ...]:
    """The promises of a run measured on its released table ``frame`` (groups = identical
    quasi-identifier values, what an intruder sees); ``pseudonymized``: the identifier columns
    the export released as pseudonyms (its report's ``pseudonymized``). ``groups``: the group
    measures of ``frame`` the release check gave (its k and attribute disclosure, shown as they
    are); None: :func:`~microgui.core.release.check.release_check_groups`."""
    roles = result.roles
    qis = [c for c in roles.quasi_identifiers if c in frame.columns]
    conf = [c for c in roles.confidential if c in frame.columns]
    rows: list[ReleaseCheckRow] = []
    pseudonymized = set(pseudonymized)
    leaked = [c for c in roles.identifiers if c in frame.columns and c not in pseudonymized]
    as_pseudonyms = [c for c in roles.identifiers if c in frame.columns and c in pseudonymized]
    reached = "none" if not leaked else ", ".join(leaked)
    if as_pseudonyms:
        reached += f" ({', '.join(as_pseudonyms)} as random pseudonyms)"
    rows.append(ReleaseCheckRow("Identifier columns released", "none", reached, kept=not leaked))
    figures = groups if groups is not None else release_check_groups(result, frame)
    k = int(result.spec.k)
    level = figures.k_anonymity
    promised_k = result.report.get("k_anonymity_guaranteed") is not False
    rows.append(
        ReleaseCheckRow(
            "k-anonymity (smallest class; a suppressed key cell matches any value)"
            if _suppressed_plan(result)
            else "k-anonymity (smallest class of identical quasi-identifiers)",
            f"k = {k}" if promised_k else f"not promised by the method (k = {k} asked)",
            f"{level:,}",
            kept=level >= k if promised_k else (True if level >= k else None),
        )
    )
    promised_model = ""
    try:
        method = get_method(str(result.report.get("method", result.spec.method)))
    except InvalidParameter:
        method = None
    params = dict(result.report.get("parameters", {}))
    if method is not None and method.release_check is not None and conf and qis and len(frame):
        check = method.release_check
        measured = check.measure(frame, qis, conf, roles, params)
        if measured is not None:
            promised, got, kept = measured
            promised_model = check.model
            shown = f"{got:.4f}" if check.model == "t-closeness" else f"{int(got)}"
            want = f"{promised:g}" if check.model == "t-closeness" else f"{int(promised)}"
            rows.append(
                ReleaseCheckRow(
                    f"{check.model} on {', '.join(conf)}", f"{check.param} = {want}", shown, kept
                )
            )
    if conf and len(frame):
        # the figures of the JSON report's attribute_disclosure (issue 29): the release check's
        # own group measures of this frame, so the two reports cannot disagree
        for col, m in figures.attribute_disclosure.items():
            if promised_model != "l-diversity":
                rows.append(
                    ReleaseCheckRow(
                        f"distinct l-diversity on {col}",
                        "",
                        f"{int(m['distinct_l_diversity']):,}",
                        None,
                    )
                )
            if promised_model != "t-closeness":
                t = m.get("t_closeness")
                rows.append(
                    ReleaseCheckRow(
                        f"t-closeness on {col} (EMD; lower is closer)",
                        "",
                        "not measured (the column's values do not fit its kind or order)"
                        if t is None
                        else f"{float(t):.4f}",
                        None,
                    )
                )
            n_homogeneous = int(m["homogeneous_groups"])
            warning = ""
            if n_homogeneous:
                warning = (
                    f"warning: attribute disclosure: {n_homogeneous:,} group(s) share one {col} value "
                    "(belonging to one discloses it); p-sensitive or t-closeness methods "
                    "protect against it"
                )
            rows.append(
                ReleaseCheckRow(
                    f"records in groups with one {col} value (homogeneous groups)",
                    "",
                    f"{int(m['homogeneous_records']):,} of {int(m['n_known']):,} "
                    f"({percent_text(float(m['homogeneous_percent']))}); {n_homogeneous:,} group(s)",
                    None,
                    warning,
                )
            )
    return tuple(rows)


def _suppressed_plan(result: RunResult) -> bool:
    from microgui.core.runs.plan import plan_suppresses

    return plan_suppresses(result.report)


def unprotected_risk(dataset: Dataset, key: str) -> float | None:
    """The risk measure ``key`` (of :data:`RU_RISK_KEYS`) of the unprotected table (its
    identifiers left out), for the risk–utility position; None when it does not apply."""
    from microgui.core.metrics.evaluate import evaluate

    drop = [c for c in dataset.roles.identifiers if c in dataset.frame.columns]
    try:
        measures = evaluate(dataset, dataset.frame.drop(columns=drop))
    except Exception:  # noqa: BLE001 - a reference point that cannot be measured is left out
        return None  # (the release's own measures, measure_run, say why when they fail too)
    value = measures.get(key)
    return float(value) if isinstance(value, int | float) else None


class ReleaseReport:
    """The report of one release: ``frame`` is the table as written (after pseudonyms and the
    formula rule), ``report`` the run report written with it (its ``fingerprint`` gives the
    files), ``measures`` the run's measures when already computed (the app's), else computed
    here once. :meth:`html` gives the page; :attr:`charts` its charts (the PDF draws them)."""

    def __init__(
        self,
        dataset: Dataset,
        result: RunResult,
        frame: pd.DataFrame,
        report: Mapping[str, Any],
        *,
        name: str = "",
        measures: Mapping[str, float | int | None] | None = None,
        finished: datetime | None = None,
        generated: datetime | None = None,
        charts: Sequence[ReportChart] | None = None,
        correlations: Any = None,
        groups: GroupMeasures | None = None,
    ) -> None:
        self.dataset = dataset
        self.result = result
        self.frame = frame
        self.report = dict(report)
        self.name = name or str(report.get("output") or "this release")
        self._measures = None if measures is None else dict(measures)
        self.finished = finished
        self.generated = generated
        self._charts = None if charts is None else list(charts)
        self.correlations = correlations
        #: the release check's group measures of ``frame`` (None: measured when needed)
        self.groups = groups

    @cached_property
    def measures(self) -> dict[str, float | int | None]:
        if self._measures is not None:
            return self._measures
        measures, note = measure_run(self.dataset, self.result)
        self.measures_note = note
        return measures

    #: why measures are missing ("" when all were computed); its text is not put in the report
    #: (an error's message may quote a value), only that they are missing
    measures_note: str = ""

    @cached_property
    def facts(self) -> ReleaseFacts:
        dataset, result, report = self.dataset, self.result, self.report
        given = dict(report.get("fingerprint") or {})
        source = dict(given.get("input") or input_fingerprint(dataset))
        output = dict(given.get("output") or {})
        method_name = str(report.get("method", result.spec.method))
        try:
            citation = get_method(method_name).citation
        except InvalidParameter:
            citation = ""
        override = report.get("export_override")
        overrides: tuple[tuple[str, tuple[str, ...]], ...] = ()
        if isinstance(override, Mapping):
            problems = tuple(str(p) for p in override.get("problems", ()))
            overrides = ((str(override.get("reason", "")), problems),)
        # the one verdict (issue 29), from the report written beside it: its k, k_anonymity
        # and attribute_disclosure are those of the table as written
        verdict = release_verdict(report)
        return ReleaseFacts(
            input_file=source.get("file"),
            input_sha256=source.get("sha256"),
            input_bytes=source.get("bytes"),
            input_rows=int(source.get("rows", len(dataset.frame))),
            input_columns=int(source.get("columns", len(dataset.frame.columns))),
            roles=tuple(
                (str(c), dataset.roles[str(c)].role.value, _kind_text(dataset, str(c)))
                for c in dataset.frame.columns
            ),
            references=tuple(r.full for r in cited(citation)),
            checks=release_checks(
                result,
                self.frame,
                dict(report.get("pseudonymized") or {}).keys(),
                self.groups,
            ),
            measured_on=(
                "Measured on the released table as written"
                + (f" to {output['file']}" if output.get("file") else "")
                + " (groups = records with identical quasi-identifier values, what an intruder "
                "sees); 'measured' rows are facts the method did not promise."
            ),
            output_file=output.get("file"),
            output_format=output.get("format"),
            output_sha256=output.get("sha256"),
            output_rows=output.get("rows"),
            output_columns=output.get("columns"),
            overrides=overrides,
            notes=tuple(_notes(report)) + self._measure_notes(),
            verdict=verdict.text,
            verdict_level=verdict.level,
        )

    def _measure_notes(self) -> tuple[str, ...]:
        measures = self.measures  # computed first: its note is known then
        notes = []
        if self.measures_note:
            notes.append(
                "Some measures could not be computed, so the table of measures holds only the "
                "run's own figures: `microgui evaluate` on the input and the release names the "
                "reason."
            )
        elif self.dataset.roles.weight is not None and measures.get("individual_risk_mean") is None:
            notes.append(
                f"The survey-weighted risk was not computed: the weights of "
                f"{self.dataset.roles.weight} sum to less than the number of records of some "
                "combination of quasi-identifiers (weights normalised to mean 1?); a survey "
                "weight is the number of population units a record stands for."
            )
        return tuple(notes)

    @cached_property
    def charts(self) -> list[ReportChart]:
        """The charts given (the app's: its axes and its map of runs), else the released
        values, the group sizes and the risk–utility position."""
        if self._charts is not None:
            return self._charts
        result, name = self.result, self.name
        charts: list[ReportChart] = []
        released = released_values_chart(result, name)
        if released is not None:
            charts.append(released)
        charts.append(group_sizes_chart([(name, result)]))
        ru = self.ru_position()
        if ru is not None:
            charts.append(ru)
        return charts

    def ru_position(self) -> ReportChart | None:
        """The release beside the unprotected table on (information loss, risk)."""
        loss = self.measures.get(RU_LOSS_KEY)
        key = next((k for k in RU_RISK_KEYS if self.measures.get(k) is not None), None)
        if loss is None or key is None:
            return None
        before = unprotected_risk(self.dataset, key)
        catalog = measure_catalog()
        label_x = _axis(catalog, RU_LOSS_KEY)
        label_y = _axis(catalog, key)
        points = [(self.name, loss, self.measures.get(key))]
        if before is not None:
            points.insert(0, ("unprotected table", 0.0, before))
        chart = ru_map_chart(points, label_x, label_y)
        if chart is None:
            return None
        # both points inside the frame (the app's framing would push the unprotected table,
        # far from a front of runs, to an arrow at the edge)
        xs = np.array([float(x) for _n, x, _y in points if x is not None], dtype=np.float64)
        ys = np.array([float(y) for _n, _x, y in points if y is not None], dtype=np.float64)
        _x_lo, x_hi = padded_range(xs, 0.15)
        _y_lo, y_hi = padded_range(ys, 0.1)
        return dataclasses.replace(
            chart,
            frame=((0.0, max(x_hi, 1.0)), (0.0, max(y_hi, 1.0))),  # losses and risks: from 0
            caption=f"Risk–utility position of {self.name}: {label_y} against {label_x}, "
            "beside the unprotected table (no information lost, its risk by the same measure)",
        )

    @cached_property
    def utility(self) -> dict[str, Any] | None:
        """Distributions and associations of the release (issue 29): summaries only, no
        category (:mod:`microgui.core.metrics.categorical_utility`); None when they cannot be
        computed."""
        from microgui.core.metrics.categorical_utility import utility_summary

        try:
            found = utility_summary(self.dataset.frame, self.result.protected, self.dataset.roles)
        except (MicroguiError, ValueError, KeyError):
            return None
        return {
            "distributions": {c: d.summary() for c, d in found.distributions.items()},
            "associations": found.associations.summary() if found.associations else None,
        }

    @property
    def title(self) -> str:
        return f"Release report: {self.name}"

    def html(self, chart_html: Callable[[int, ReportChart], str] | None = None) -> str:
        run = report_run(self.name, self.result, self.measures, self.finished)
        # through the module: the tests' spy on what reaches a report sees this call too
        page = report_html.build_report_html(
            [run],
            measure_catalog(),
            title=self.title,
            charts=self.charts,
            generated=self.generated,
            release=self.facts,
            chart_html=chart_html,
            correlations=self.correlations,
            utility=self.utility,
        )
        steps = steps_html(self.report)  # a plan's steps (issue 31), before the measures
        if steps:
            at = page.find("<h2>Measures</h2>")
            page = page[:at] + steps + page[at:] if at >= 0 else page + steps
        return page


def _axis(catalog: Mapping[str, Sequence[str]], key: str) -> str:
    info = list(catalog.get(key, (key, "")))
    label, unit = (info + ["", ""])[:2]
    return f"{label} ({unit})" if unit else str(label)


def _notes(report: Mapping[str, Any]) -> list[str]:
    """What else the release board should know, from the run report's entries (counts and
    column names only)."""
    notes: list[str] = []
    if report.get("released_with_attribute_disclosure"):  # issue 29
        notes.append(
            "Released with attribute disclosure (see the verdict): some groups share one value "
            "of a confidential attribute; the method did not promise otherwise and the release "
            "was confirmed (the JSON report records released_with_attribute_disclosure)."
        )
    if report.get("pseudonym_warning"):
        warning = str(report["pseudonym_warning"])
        notes.append(warning[:1].upper() + warning[1:].rstrip(".") + ".")
        key = report.get("pseudonym_key")
        notes.append(
            f"The pseudonym key was written to {key}, a file of its own: keep it apart."
            if key
            else "No pseudonym key was written: the pseudonyms cannot be traced back."
        )
        if key and report.get("pseudonym_key_format"):
            notes.append(f"Key format: {report['pseudonym_key_format']}.")
    labels = report.get("labels")
    if isinstance(labels, Mapping):
        outside = labels.get("values_outside_labels")
        if outside:
            cols = ", ".join(str(c) for c in dict(outside)) if isinstance(outside, Mapping) else ""
            notes.append(
                "Aggregated values outside their column's labelled set were written as text"
                + (f": {cols}" if cols else "")
                + "."
            )
    cells = report.get("neutralized_cells")
    if isinstance(cells, Mapping) and cells:
        total = sum(int(v) for v in cells.values())
        notes.append(
            f"{total:,} text cell(s) starting with = + - @ were given a leading ' so that a "
            f"spreadsheet does not run them as formulas ({', '.join(map(str, cells))})."
        )
    if report.get("formula_cells"):
        notes.append(f"Formula-like cells: {report['formula_cells']}.")
    if report.get("k_anonymity_guaranteed") is False and report.get("note"):
        notes.append(str(report["note"]))
    order = report.get("record_order")  # issue 31: the order of the records, said
    if isinstance(order, Mapping) and order.get("text"):
        text = str(order["text"])
        seed = order.get("seed")
        notes.append(
            text[:1].upper()
            + text[1:]
            + (f" (order seed {seed}, given by the user)" if seed is not None else "")
            + "."
        )
    for when, label in (("risk_before", "input"), ("risk_after", "release")):
        household = (report.get(when) or {}).get("household_risk")
        if isinstance(household, Mapping):
            notes.append(
                f"Household risk of the {label} ({household.get('households', 0):,} households "
                f"of {household.get('column')}): expected re-identifications "
                f"{format_expected(float(household.get('expected_reidentifications', 0.0)))}, "
                f"largest {float(household.get('max', 0.0)):.4f}."
            )
    rule = report.get("group_measures_rule")  # issue 31: a plan with a suppress step
    if rule:
        notes.append(f"Groups after the suppression: {str(rule)}.")
    missing = report.get("missing_as_category")
    if isinstance(missing, Mapping) and missing:
        notes.append(
            "Missing cells formed a category of their own in: " + ", ".join(map(str, missing)) + "."
        )
    return notes


#: Prints a report to PDF bytes: (make_html(chart_html), charts, title) -> bytes; the Qt one is
#: :func:`microgui.qt.report_pdf.report_pdf` (the core never imports Qt).
PdfPrinter = Callable[..., bytes]


def release_report_makers(
    html: str | os.PathLike[str] | None,
    pdf: str | os.PathLike[str] | None,
    print_pdf: PdfPrinter | None = None,
) -> list[tuple[str | os.PathLike[str], ReportMaker]]:
    """The ``extra_reports`` of :func:`~microgui.core.release.check.export_run` for an HTML and/or PDF
    release report (``protect --report-html/--report-pdf``, the API's ``export``): one
    :class:`ReleaseReport` made once for both from the release as written."""
    made: dict[int, ReleaseReport] = {}

    def release_report(context: ReleaseContext) -> ReleaseReport:
        key = id(context.report)
        if key not in made:
            made[key] = ReleaseReport(
                context.dataset,
                context.result,
                context.frame,
                context.report,
                groups=context.groups,
            )
        return made[key]

    def html_writer(context: ReleaseContext) -> Any:
        text = release_report(context).html()
        return lambda handle: handle.write(text)

    def pdf_writer(context: ReleaseContext) -> Any:
        if print_pdf is None:
            raise ValueError("a PDF report needs a printer (microgui.qt.report_pdf.report_pdf)")
        made_report = release_report(context)
        data = print_pdf(made_report.html, made_report.charts, title=made_report.title)
        return FileWriter(lambda path: path.write_bytes(data), "a PDF report")

    makers: list[tuple[str | os.PathLike[str], ReportMaker]] = []
    if html:
        makers.append((html, html_writer))
    if pdf:
        makers.append((pdf, pdf_writer))
    return makers


def write_report(
    path: str | os.PathLike[str],
    make_html: Callable[..., str],
    charts: Sequence[ReportChart] = (),
    title: str = "microgui report",
    *,
    print_pdf: PdfPrinter | None = None,
    protect_from: Iterable[str | os.PathLike[str] | None] = (),
) -> Path:
    """Write a report page atomically: printed to PDF by ``print_pdf`` (``make_html``,
    ``charts``, ``title``) when ``path`` ends in ``.pdf``, else ``make_html()`` as HTML. Never
    over a file of ``protect_from`` (the files the runs read). A write error is an
    :class:`ExportRefused` naming the file. Returns ``path``."""
    path = Path(path)
    writer: Any
    try:
        if path.suffix.lower() == ".pdf":
            if print_pdf is None:
                raise ValueError("a PDF report needs a printer (microgui.qt.report_pdf.report_pdf)")
            data = print_pdf(make_html, charts, title=title)
            writer = FileWriter(lambda target: target.write_bytes(data), "a PDF report")
        else:
            text = make_html()
            writer = lambda handle: handle.write(text)  # noqa: E731
        write_files_atomic([(path, writer)], protect_from=protect_from)
    except OSError as exc:
        raise ExportRefused(f"cannot write {path.name}: {exc.strerror or exc}") from exc
    return path
