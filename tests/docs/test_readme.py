"""The README is the front page (issue 32, item 3): at most 10 KB, its test command exactly the
one CI runs, and its links into the documentation resolve."""

from __future__ import annotations

import re

from tests.docs.conftest import ROOT

README = ROOT / "README.md"


def test_readme_is_at_most_10_kb() -> None:
    assert README.stat().st_size <= 10 * 1024


def test_readme_test_command_is_the_one_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)
    test_command = next(b for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.strip() in ci.splitlines()


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", text)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) > 15
    for link in local:
        assert (ROOT / link).exists(), link
