"""The documentation site builds with warnings as errors (issue 32, item 3: "built in CI with
warnings as errors"), and its notebook page runs."""

from __future__ import annotations

from tests.docs.conftest import BuiltSite


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
