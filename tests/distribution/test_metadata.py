"""Issue 32 item 1: license, name, version, changelog and citation agree with each other and
with the code. The version is kept once, in ``microgui/_version.py`` (pyproject reads it:
``dynamic = ["version"]``); the files that cannot read it (CITATION.cff, the Windows installer
script, the changelog's latest release) are checked against it here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from microgui._version import __version__

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_mit_in_pep_639_form_with_its_file() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the microgui authors" in text
    # PEP 639 license expressions need setuptools >= 77
    requires = _pyproject()["build-system"]["requires"]
    assert any(
        re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in requires
    )
    assert not any("License ::" in c for c in project.get("classifiers", []))  # PEP 639


def test_the_distribution_name_is_not_the_taken_one_and_the_command_stays() -> None:
    project = _pyproject()["project"]
    assert project["name"] == "microgui-sdc"  # `microgui` on the index is another package
    assert project["scripts"] == {"microgui": "microgui.cli:main"}


def test_version_is_single_sourced() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    pyproject = _pyproject()
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "microgui._version.__version__"
    }
    iss = (ROOT / "installers" / "microgui.iss").read_text(encoding="utf-8")
    assert re.search(r'#define AppVersion "([^"]+)"', iss).group(1) == __version__


def test_changelog_keeps_a_changelog_with_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text and "## [Unreleased]" in text
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.M)
    assert released and released[0] == __version__  # the newest release first


def test_citation_cff_is_valid_1_2_0_and_cites_the_papers() -> None:
    """The required keys of CFF 1.2.0 (cff-version, message, title, authors), this version, and
    the five source papers (/shared/papers/README.md) as references."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["message"] and cff["title"] and cff["authors"]
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    assert str(cff["version"]) == __version__
    assert cff["license"] == "MIT" and cff["type"] == "software"
    titles = " | ".join(r["title"] for r in cff["references"])
    for words in (
        "approximate microaggregation",
        "protection of microdata",
        "survey on microaggregation",
        "heterogeneous k-anonymity",
        "Minimum Spanning Tree",
    ):
        assert words in titles
    for ref in cff["references"]:
        assert ref["type"] and ref["authors"] and all("family-names" in a for a in ref["authors"])
