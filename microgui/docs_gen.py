"""The generated pages of the documentation site: reference and benchmark pages written from the
code, so that they cannot drift from it (issue 32, item 3).

- the command line reference is :func:`microgui.cli.reference.cli_reference` (walked from the
  argparse parser; kept in the command line's package, so that this module, which the app's help
  imports, imports no command and the package no import cycle: the ``gui`` command opens the app);
- :func:`methods_reference`: the method catalogue from the registry
  (:func:`microgui.core.methods.available_methods`): name, citation, kinds, parameters, promises;
- :func:`report_reference`: the keys of the JSON run report. There is no schema of the report in
  the code (the keys are set where they are computed: ``core/runs/protect.py``,
  ``core/release/check.py``...), so the one source of the list is a real report: the demo protected
  and exported through the API (:func:`sample_reports`) in a temporary folder, and every method
  run on 24 records (:func:`method_reports`); the notes beside the keys are :data:`REPORT_NOTES`;
- :func:`benchmark_page`: a saved ``python -m microgui.bench`` output (``docs/benchmarks/``) with its
  machine and date.

``docs/hooks.py`` calls :func:`generated_pages` while MkDocs builds the site, and the app's help
browser (:mod:`microgui.qt.help`) reads the same pages, so the site and the help show one text. Nothing here writes a record's value: the sample reports hold counts, measures and column
names only, and the page shows their keys, never their values.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "GENERATED",
    "REPORT_NOTES",
    "benchmark_page",
    "execute_markdown",
    "generated_pages",
    "markdown_code",
    "markdown_text",
    "methods_reference",
    "method_reports",
    "report_keys",
    "report_reference",
    "sample_reports",
]

#: The generated pages, by their path in the site.
GENERATED: tuple[str, ...] = (
    "reference/cli.md",
    "reference/methods.md",
    "reference/report.md",
    "explanations/benchmark.md",
)

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def markdown_text(text: object) -> str:
    """Plain text as Markdown that renders as written (no emphasis, no HTML, no table break)."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(" ".join(str(text).split()), quote=False))


def markdown_code(text: object) -> str:
    t = str(text)
    fence = "``" if "`" in t else "`"
    return f"{fence}{t}{fence}" if fence == "`" else f"{fence} {t} {fence}"


# -- methods ------------------------------------------------------------------------------------


def _param_row(p: Any) -> str:
    from microgui.core.references import readable

    allowed = ""
    if p.choices:
        allowed = ", ".join(markdown_code(c) for c in p.choices)
    elif p.minimum is not None or p.maximum is not None:
        lo = "" if p.minimum is None else f"{p.minimum:g} ≤ "
        hi = "" if p.maximum is None else f" ≤ {p.maximum:g}"
        allowed = f"{lo}value{hi}"
    return (
        f"| {markdown_code(p.name)} | {p.type.__name__} | {markdown_code(p.default)} | {allowed} | "
        f"{markdown_text(readable(p.help))} |"
    )


def methods_reference() -> str:
    """The method catalogue page, from the registry."""
    from microgui.core.methods import COMMON_PARAMS, available_methods

    methods = {m.name: m for m in available_methods()}
    out = [
        "# Method catalogue",
        "",
        "Generated from the method registry (`microgui.core.methods.available_methods`) when the "
        "site is built: each method's name (the `--method` of `microgui protect`), its paper, "
        "the kinds of quasi-identifier it takes, its parameters (`--param NAME=VALUE`) and what "
        "it promises. `microgui protect --list-methods` prints the same. "
        "[Explanations → Methods](../explanations/methods.md) says how they differ.",
        "",
        "| method | what it does | kinds |",
        "|---|---|---|",
    ]
    for name, m in methods.items():
        kinds = ", ".join(sorted(k.value for k in m.kinds))
        out.append(f"| [{markdown_code(name)}](#{name}) | {markdown_text(m.headline)} | {kinds} |")
    out.append("")
    for name, m in methods.items():
        promises = []
        if m.aggregates:
            promises.append(
                "k-anonymity on the quasi-identifiers: every released combination is shared by "
                "at least k records (checked on export)"
            )
        elif m.uses_hierarchies:
            promises.append("k-anonymity by generalization along hierarchies (checked on export)")
        else:
            promises.append(
                "no k-anonymity (a masking method): the export check refuses its release "
                "without an override"
            )
        if m.release_check is not None:
            promises.append(
                f"{m.release_check.model} on the confidential attributes, at the level of its "
                f"parameter {markdown_code(m.release_check.param)} (measured on the release, checked "
                "on export)"
            )
        if m.needs_confidential:
            promises.append("needs at least one confidential column")
        if m.uses_hierarchies:
            promises.append("reads generalization hierarchies (`--hierarchy COL=FILE`)")
        if m.refinable:
            promises.append("may be followed by a refinement (`--param refine=...`)")
        out += [
            f"## {m.title} (`{name}`) {{#{name}}}",
            "",
            f"**Citation:** {markdown_text(m.reference)}  ",
            f"**Kinds of quasi-identifier:** {', '.join(sorted(k.value for k in m.kinds))}  ",
        ]
        if m.complexity:
            out.append(f"**Cost:** {markdown_text(m.complexity)}  ")
        out += ["", markdown_text(m.text), "", "**Promises and needs:**", ""]
        out += [f"- {p}" for p in promises]
        out.append("")
        own = [p for p in m.params]
        if own:
            out += [
                "**Parameters:**",
                "",
                "| name | type | default | allowed | meaning |",
                "|---|---|---|---|---|",
                *(_param_row(p) for p in own),
                "",
            ]
        common = [p for p in m.all_params if p not in own]
        if common:
            out += [
                "Also the [common parameters](#common-parameters): "
                + ", ".join(markdown_code(p.name) for p in common)
                + ".",
                "",
            ]
    out += [
        "## Common parameters {#common-parameters}",
        "",
        "Every method that aggregates (forms groups and releases their averages) takes these.",
        "",
        "| name | type | default | allowed | meaning |",
        "|---|---|---|---|---|",
        *(_param_row(p) for p in COMMON_PARAMS),
        "",
    ]
    return "\n".join(out)


# -- report keys --------------------------------------------------------------------------------

#: What a report key holds, in words (keys found in a sample report but absent here are listed
#: with "see the code"; keys here that the sample runs do not produce are listed as occasional).
REPORT_NOTES: dict[str, str] = {
    "method": "the method's name (`--method`)",
    "k": "the k asked for",
    "parameters": "every parameter of the run, defaults included",
    "seed": "the seed of the run's random generator (re-running with it gives the same release)",
    "n_records": "records in the input",
    "n_groups": "groups formed",
    "min_group_size": "smallest group",
    "max_group_size": "largest group",
    "group_size_counts": "how many groups of each size",
    "sse": "within-group sum of squares of the continuous quasi-identifiers (z-scores)",
    "sst": "total sum of squares of the continuous quasi-identifiers (z-scores)",
    "information_loss": "SSE/SST of the continuous quasi-identifiers, % ([glossary](../explanations/measures.md#information_loss))",
    "information_loss_basis": "what `information_loss` was computed on, or why it is null",
    "information_loss_all_qi": "IL over every quasi-identifier, % ([glossary](../explanations/measures.md#information_loss_all_qi))",
    "information_loss_all_qi_basis": "what `information_loss_all_qi` was computed on",
    "information_loss_by_attribute": "each quasi-identifier's own loss measures",
    "il_lower_bound": "proven lower bound on SSE/SST: the sum of the attributes' optimal univariate partitions",
    "il_lower_bound_best": "the tightest proven lower bound on SSE/SST, % ([lower bound](../explanations/lower-bound.md))",
    "il_lower_bound_basis": "how the bound was obtained, or why it is null",
    "k_anonymity": "the k-anonymity level measured on the released table",
    "invented_combinations": "groups whose released categorical combination none of their records has",
    "seconds": "wall-clock time of the run",
    "threads": "threads the exact kernels could use (`--threads`, `MICROGUI_THREADS`); the release is the same for any number",
    "microgui_version": "the version that made the release",
    "input": "the input's name",
    "quasi_identifiers": "each quasi-identifier's kind",
    "missing_as_category": "columns whose missing cells form a category, and how many cells",
    "identifiers_removed": "the identifier columns left out of the release",
    "confidential": "the confidential columns",
    "citation": "the method's paper",
    "weight": "the survey weight column",
    "attribute_disclosure": "per confidential column: l-diversity, t-closeness, homogeneous groups and records",
    "verdict": "the release's one-line verdict (k-anonymity and attribute disclosure) and its level",
    "risk_before": "the disclosure risk of the input (`microgui assess`'s figures)",
    "risk_after": "the same figures on the release",
    "fingerprint": "the input's and the release's file names, sizes and SHA-256",
    "output_format": "the release's file format",
    "csv_format": "separator, decimal mark and encoding of a CSV release",
    "neutralized_cells": "per column, the text cells written with a leading `'` (formula rule)",
    "labels": "SPSS/Stata labels kept or dropped",
    "variables": "each column's original and released name",
    "renamed_columns": "columns released under another name",
    "rounding": "the decimals of the released values and the IL before rounding",
    "scale": "how a table was split into strata or blocks",
    "strata": "the strata columns",
    "pseudonymized": "the columns released as pseudonyms",
    "pseudonym_warning": "that pseudonymised data are still personal data",
    "pseudonym_key_format": "how the pseudonym key file is written",
    "export_override": "the release-check failures overridden on export, with the reason given",
    "k_anonymity_guaranteed": "false for a masking method, which does not promise k-anonymity",
    "note": "what the method's release is and is not (a masking method's warning)",
    "partition": "what the groups are (a masking method groups each attribute on its own)",
    "groups_per_attribute": "groups formed in each attribute (a method grouping attributes apart)",
    "released_with_attribute_disclosure": "the release was written although a group discloses a confidential value",
    "edited_after_run": "quasi-identifier cells edited between the run and the export",
    "columns_converted": "columns written in another type by the format",
    "output": "the release file's name",
    "pseudonym_key": "the pseudonym key file's name (null when none was written)",
    "neutralized_column_names": "column names written with a leading `'` (formula rule)",
}


def sample_reports() -> list[dict[str, Any]]:
    """Reports of runs of the demo table that set most keys: mdav-generic k = 5 with weights, a
    confidential column, rounding, pseudonyms and a CSV release; and the same with strata. Made
    in a temporary folder, returned as read back from JSON."""
    import logging
    import warnings

    from microgui.api import protect
    from microgui.core.demo import demo_roles, load_demo

    frame = load_demo().frame
    roles = demo_roles()
    reports = []
    # the release's warnings (pseudonyms are personal data) are for a user, not for the build
    logging.disable(logging.WARNING)
    try:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, extra in enumerate(({}, {"strata": ["sex"]})):
                res = protect(
                    frame,
                    roles=roles,
                    method="mdav-generic",
                    k=5,
                    seed=1,
                    params={"round": "source"},
                    unsafe="allow",
                    **extra,
                )
                report = Path(tmp) / f"report{i}.json"
                res.export(
                    Path(tmp) / f"release{i}.csv",
                    report=report,
                    pseudonymize=list(roles.identifiers),
                    csv_sep=";",
                )
                reports.append(json.loads(report.read_text(encoding="utf-8")))
    finally:
        logging.disable(logging.NOTSET)
    return reports


def method_reports() -> dict[str, dict[str, Any]]:
    """The run report (as the API returns it, before any export) of every registered method on
    the demo's first 24 records, continuous keys ``age`` and ``income`` (``age`` alone for a
    univariate method) and the confidential ``health_score``, k = 3: each method adds keys of its
    own. A method that refuses the table is left out."""
    import logging
    import warnings

    from microgui.api import protect
    from microgui.core.demo import load_demo
    from microgui.core.errors import MicroguiError
    from microgui.core.methods import available_methods

    frame = load_demo().frame.head(24)
    out: dict[str, dict[str, Any]] = {}
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m in available_methods():
                qi = ["age"] if m.name == "optimal-univariate" else ["age", "income"]
                try:
                    res = protect(
                        frame,
                        qi=qi,
                        identifiers=["person_id"],
                        confidential=["health_score"],
                        method=m.name,
                        k=3,
                        seed=1,
                        unsafe="allow",
                    )
                except MicroguiError:
                    continue
                out[m.name] = json.loads(json.dumps(res.report, default=str))
    finally:
        logging.disable(logging.NOTSET)
    return out


def report_keys(
    reports: Iterable[Mapping[str, Any]], columns: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Top-level keys of ``reports`` and, for each whose value is a dict of fixed keys (not
    the table's ``columns``, other column names the reports give, or group sizes), its keys."""
    columns = {str(c) for c in columns}
    for r in reports:
        for key in ("quasi_identifiers", "confidential", "identifiers_removed", "variables"):
            value = r.get(key)
            if isinstance(value, Mapping):
                columns |= set(map(str, value))
            elif isinstance(value, list):
                columns |= {str(v) for v in value if isinstance(v, str)}
    out: dict[str, list[str]] = {}
    for r in reports:
        for key, value in r.items():
            subs = out.setdefault(str(key), [])
            if isinstance(value, Mapping) and value:
                names = [str(s) for s in value]
                if set(names) & columns or all(s.lstrip("-").isdigit() for s in names):
                    continue  # keyed by column names or sizes: data-dependent, not a schema
                subs += [s for s in names if s not in subs]
    return out


def report_reference(
    reports: list[dict[str, Any]] | None = None,
    by_method: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The JSON report page: every key of the sample reports (:func:`sample_reports`) with its
    note, the keys each method adds (:func:`method_reports`), then the keys only some runs
    write (:data:`REPORT_NOTES`)."""
    from microgui.core.demo import load_demo

    columns = load_demo().frame.columns
    keys = report_keys(sample_reports() if reports is None else reports, columns)
    by_method = method_reports() if by_method is None else by_method
    writers: dict[str, list[str]] = {}
    for name, report in by_method.items():
        for key in report:
            if key not in keys:
                writers.setdefault(str(key), []).append(name)
    out = [
        "# Run report (JSON keys)",
        "",
        "Generated when the site is built. microgui has no separate schema of its run report: "
        "the keys are set where their figures are computed (`core/runs`, `core/release`, each "
        "method's module). So this list is taken from real reports, made while the site is "
        "built: the demo table protected and exported through the API "
        "(`microgui.docs_gen.sample_reports`: mdav-generic, k = 5, survey weight, a "
        "confidential column, rounding, pseudonyms, a CSV release; and the same with strata), "
        "then every method of the registry on a small table (`method_reports`), whose own keys "
        "follow under *keys a method adds*. Keys only some releases write (an override, SPSS "
        "labels) follow under *occasional keys*.",
        "",
        "A report holds the specification, counts, measures and column names, never a value "
        "of a record. JSON is strict: a number that is not finite is `null`.",
        "",
        "| key | holds | sub-keys |",
        "|---|---|---|",
    ]
    for key, subs in keys.items():
        note = REPORT_NOTES.get(key, "see the code that sets it (`core/runs`, `core/release`)")
        sub = ", ".join(markdown_code(s) for s in subs)
        out.append(f'| <a id="{key}"></a>{markdown_code(key)} | {note} | {sub} |')
    if writers:
        out += [
            "",
            "## Keys a method adds",
            "",
            "| key | written by | holds |",
            "|---|---|---|",
        ]
        for key, names in writers.items():
            by = ", ".join(f"[{markdown_code(n)}](methods.md#{n})" for n in names)
            note = REPORT_NOTES.get(key, "the method's own figure (see its entry)")
            out.append(f'| <a id="{key}"></a>{markdown_code(key)} | {by} | {note} |')
    rest = [k for k in REPORT_NOTES if k not in keys and k not in writers]
    if rest:
        out += ["", "## Occasional keys", "", "| key | holds |", "|---|---|"]
        out += [f'| <a id="{k}"></a>{markdown_code(k)} | {REPORT_NOTES[k]} |' for k in rest]
    out.append("")
    return "\n".join(out)


# -- benchmark ----------------------------------------------------------------------------------


def benchmark_page(folder: Path) -> str:
    """The benchmark page from the saved outputs in ``folder``: each ``*.txt`` with its
    ``*.json`` (date, machine, command)."""
    out = [
        "# Benchmark",
        "",
        "Generated from saved outputs of `python -m microgui.bench` (the files in "
        "`docs/benchmarks/`), with the machine and the date they were measured on; the site "
        "build does not run the benchmark. Run it yourself with `python -m microgui.bench` "
        "(about 6 minutes on 2 cores; `--quick`: seconds) and compare. The targets the "
        "benchmark prints (PASS/MISS) are the project's speed targets.",
        "",
    ]
    for text in sorted(folder.glob("*.txt")):
        meta_path = text.with_suffix(".json")
        meta: dict[str, Any] = {}
        if meta_path.exists():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        out += [
            f"## `{meta.get('command', text.stem)}`",
            "",
            f"Measured {meta.get('date', '(date not saved)')} on "
            f"{markdown_text(meta.get('machine', '(machine not saved)'))}. {markdown_text(meta.get('note', ''))}",
            "",
            "```text",
            text.read_text(encoding="utf-8").rstrip(),
            "```",
            "",
        ]
    return "\n".join(out)


# -- executed pages ----------------------------------------------------------------------------

_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)


def execute_markdown(text: str, name: str = "<page>") -> str:
    """Run the ```python blocks of ``text`` in order, in one namespace (as a notebook's cells),
    and put what each prints under it as a text block. An exception propagates: a page whose
    code stopped working fails the site's build (and its test)."""
    import contextlib
    import io

    namespace: dict[str, Any] = {"__name__": "__docs__"}
    out: list[str] = []
    pos = 0
    for i, match in enumerate(_PYTHON_BLOCK.finditer(text)):
        out.append(text[pos : match.end()])
        pos = match.end()
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(match.group(1), f"{name}, cell {i + 1}", "exec"), namespace)
        printed = buffer.getvalue().rstrip()
        if printed:
            out.append(f"\n```text\n{printed}\n```\n")
    out.append(text[pos:])
    return "".join(out)


def generated_pages(
    docs_dir: Path, *, reports: list[dict[str, Any]] | None = None
) -> dict[str, str]:
    """The generated pages of :data:`GENERATED` but the command line's (which
    :func:`microgui.cli.reference.cli_reference` writes), by their path in the site."""
    return {
        "reference/methods.md": methods_reference(),
        "reference/report.md": report_reference(reports),
        "explanations/benchmark.md": benchmark_page(docs_dir / "benchmarks"),
    }
