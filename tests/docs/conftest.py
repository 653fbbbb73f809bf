"""The documentation site built once per test session (``mkdocs build --strict``), for the
tests that read the built pages."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BuiltSite:
    folder: Path
    seconds: float
    returncode: int
    output: str

    def page(self, path: str) -> str:
        """The HTML of the built page of ``path`` (``reference/cli.md`` → its index.html)."""
        stem = path.removesuffix(".md").removesuffix("index")
        html = self.folder / stem / "index.html"
        return html.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """``mkdocs build --strict`` of the project's site into a temporary folder, in a subprocess
    (warnings are errors: broken links and anchors, docstrings mkdocstrings cannot read, a
    notebook page whose code fails)."""
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the docs extra is not installed ({exc.name}): pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - start
    return BuiltSite(out, seconds, done.returncode, done.stdout + done.stderr)
