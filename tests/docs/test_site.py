"""The documentation site builds with warnings as errors (issue 32, item 3: "built in CI with
warnings as errors"), and its notebook page runs."""

from __future__ import annotations

import warnings
from pathlib import Path

from microgui.core.demo import demo_roles, load_demo
from tests.docs.conftest import BuiltSite

# Every test that reads the built site is in this file: pytest-xdist runs a file on one worker
# (--dist loadfile), so the site is built once per run.


def test_the_site_builds_strictly(site: BuiltSite) -> None:
    # the time is printed for the CI log (-ra shows it on failure only; -s always), not asserted
    print(f"mkdocs build --strict: {site.seconds:.1f} s")
    assert site.returncode == 0, site.output[-4000:]
    for page in (
        "index.md",
        "tutorials/app-demo.md",
        "tutorials/survey-to-spss.md",
        "tutorials/api-notebook.md",
        "how-to/hierarchies.md",
        "how-to/weights.md",
        "how-to/pseudonyms.md",
        "how-to/strata-and-blocks.md",
        "how-to/dask.md",
        "how-to/replay.md",
        "reference/cli.md",
        "reference/methods.md",
        "reference/api.md",
        "reference/report.md",
        "explanations/measures.md",
        "explanations/methods.md",
        "explanations/lower-bound.md",
        "explanations/privacy-models.md",
        "explanations/benchmark.md",
    ):
        assert "<h1" in site.page(page), page


def test_the_notebook_page_shows_what_its_cells_printed(site: BuiltSite) -> None:
    """The API tutorial's cells ran during the build: their output is on the page (the verdict
    of the run and the table of k), so a change of the API that breaks them fails the build."""
    assert site.returncode == 0, site.output[-4000:]
    page = site.page("tutorials/api-notebook.md")
    assert "k-anonymous (k = 5)" in page
    assert "SSE/SST %" in page and "release.json" in page


def test_the_api_reference_is_rendered_from_the_docstrings(site: BuiltSite) -> None:
    assert site.returncode == 0, site.output[-4000:]
    page = site.page("reference/api.md")
    # words of microgui.api.protect's docstring and of ProtectionResult's
    assert "Microaggregate" in page and "ProtectionResult" in page and "export" in page


def test_the_benchmark_page_names_its_machine_and_date(site: BuiltSite) -> None:
    assert site.returncode == 0, site.output[-4000:]
    page = site.page("explanations/benchmark.md")
    assert "Measured " in page and "mdav-generic" in page
    assert "(date not saved)" not in page and "(machine not saved)" not in page


def _other_reports(tmp_path: Path) -> list[dict]:
    """Reports of runs unlike the generator's samples: a masking method released with an
    override, as SPSS (labels, variables), and an ordinary run released as Parquet."""
    import json

    from microgui.api import protect

    frame = load_demo().frame.head(300)
    roles = demo_roles()
    reports = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = protect(
            frame,
            qi=["age", "income", "wealth"],
            identifiers=["person_id"],
            confidential=["health_score"],
            method="individual-ranking",
            k=3,
            seed=2,
            unsafe="allow",
        )
        res.export(tmp_path / "a.sav", report=tmp_path / "a.json", override="a test")
        reports.append(json.loads((tmp_path / "a.json").read_text(encoding="utf-8")))
        res = protect(frame, roles=roles, method="mdav-generic", k=3, seed=2)
        res.export(tmp_path / "b.parquet", report=tmp_path / "b.json")
        reports.append(json.loads((tmp_path / "b.json").read_text(encoding="utf-8")))
    return reports


def test_report_reference_has_every_key_of_other_runs(site: BuiltSite, tmp_path: Path) -> None:
    """Every top-level key of reports made otherwise than the page's samples is on the built
    page, with its anchor: a key a new feature adds must reach the reference (through a sample
    run or a note in ``docs_gen.REPORT_NOTES``)."""
    assert site.returncode == 0, site.output[-4000:]
    page = site.page("reference/report.md")
    reports = _other_reports(tmp_path)
    keys = {k for r in reports for k in r}
    assert {"export_override", "labels", "k_anonymity", "verdict", "fingerprint"} <= keys
    assert 'id="max_emd"' in page  # a key one method adds (t-closeness), from its own run
    missing = sorted(k for k in keys if f'id="{k}"' not in page)
    assert not missing, f"report keys missing from the reference: {missing}"
