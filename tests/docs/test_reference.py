"""The generated reference covers the code (issue 32: "a test that every CLI option, registry
method and JSON report key appears in the generated reference ... and that every measure the app
can show has a glossary entry"). The reference is generated, so these tests guard the generator
(:mod:`microgui.docs_gen`) and the glossary written by hand."""

from __future__ import annotations

import re

import pytest

from microgui import docs_gen
from microgui.cli import reference
from tests.docs.conftest import ROOT

GLOSSARY = ROOT / "docs" / "explanations" / "measures.md"


def _glossary_anchors() -> set[str]:
    return set(re.findall(r"\{#([A-Za-z0-9_-]+)\}", GLOSSARY.read_text(encoding="utf-8")))


def test_cli_reference_names_every_command_and_option() -> None:
    page = reference.cli_reference()
    options = reference.cli_options()
    assert {"protect", "evaluate", "sweep", "assess", "suggest-roles", "gui"} <= set(options)
    assert sum(len(v) for v in options.values()) > 80  # the parser was walked, not a stub
    for command, names in options.items():
        if command:
            assert f"{{#{command}}}" in page, command
        for name in names:
            anchor = reference.option_anchor(command or "microgui", name)
            assert f'id="{anchor}"' in page or name in page, (command, name)
            assert name in page, (command, name)


def test_cli_reference_shows_each_option_with_its_help() -> None:
    page = reference.cli_reference()
    # an option's line carries its own help text (argparse's, paper numbers made readable)
    line = next(x for x in page.splitlines() if 'id="protect-hierarchy"' in x)
    assert "--hierarchy" in line and "ARX" in line


def test_methods_reference_lists_every_method_its_citation_and_parameters() -> None:
    from microgui.core.methods import COMMON_PARAMS, available_methods

    page = docs_gen.methods_reference()
    methods = available_methods()
    assert len(methods) >= 20
    for m in methods:
        assert f"{{#{m.name}}}" in page, m.name
        assert docs_gen.markdown_text(m.reference) in page, m.name
        for p in m.params:
            assert f"| `{p.name}` |" in page, (m.name, p.name)
        if m.release_check is not None:
            section = page.split(f"{{#{m.name}}}", 1)[1].split("\n## ", 1)[0]
            assert m.release_check.model in section, m.name
    for p in COMMON_PARAMS:
        assert f"| `{p.name}` |" in page, p.name


def test_report_keys_skip_column_names_and_sizes() -> None:
    reports = [
        {
            "quasi_identifiers": {"age": "continuous"},
            "group_size_counts": {"3": 10, "4": 2},
            "csv_format": {"separator": ";"},
            "pseudonymized": {"age": 3},
        }
    ]
    keys = docs_gen.report_keys(reports)
    assert keys == {
        "quasi_identifiers": [],
        "group_size_counts": [],
        "csv_format": ["separator"],
        "pseudonymized": [],
    }


def _app_measures() -> set[str]:
    """Every measure key the app can show: the measures of a run (the catalogue the Results,
    history and compare tables and the risk-utility map read), the Results panel's figures, the
    history's headline columns, the recommended ones, and the Risk and Utility views' figures."""
    from microgui.core.metrics.recommended import CATEGORICAL_MEASURES, CONTINUOUS_MEASURES
    from microgui.core.runs.analysis import measure_catalog
    from microgui.qt.panels.history_panel import HEADLINE_MEASURES
    from microgui.qt.panels.results_panel import RESULT_FIELDS

    keys = set(measure_catalog())
    keys |= {key for key, _label, _tip in RESULT_FIELDS if key != "run"}
    keys |= set(HEADLINE_MEASURES) | set(CONTINUOUS_MEASURES) | set(CATEGORICAL_MEASURES)
    keys |= {"information_loss_all_qi", "verdict"}
    # the Risk view (risk_before: individual risk histogram, SUDA2) and the Utility view
    # (Cramér's V of a cross-tabulation, the confidence-interval overlap of a model)
    keys |= {"individual_risk", "suda2", "cramers_v", "ci_overlap"}
    keys |= {"key_cells_below_k", "worst_combinations", "key_cell_l_diversity"}
    return keys


def test_every_measure_the_app_shows_has_a_glossary_entry() -> None:
    anchors = _glossary_anchors()
    shown = _app_measures()
    assert len(shown) > 50
    missing = sorted(shown - anchors)
    assert not missing, f"measures without a glossary entry: {missing}"


def test_each_glossary_entry_states_the_direction_the_app_uses() -> None:
    """The direction in an entry is the catalogue's (LOWER/HIGHER in ``evaluate.MEASURES``)."""
    from microgui.core.runs.analysis import measure_catalog

    text = GLOSSARY.read_text(encoding="utf-8")
    for key, (_label, _unit, direction, _group) in measure_catalog().items():
        if not direction:
            continue
        entry = text.split(f"{{#{key}}}", 1)[1].split("\n#", 1)[0]
        assert f"**{direction}**" in entry, (key, direction)


@pytest.mark.parametrize("page", docs_gen.GENERATED)
def test_generated_pages_are_in_the_navigation(page: str) -> None:
    assert page in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
