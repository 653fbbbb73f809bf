"""MkDocs hook: adds the pages generated from the code (microgui.docs_gen) and the app's
screenshots (resources/) to the site, so that neither is copied into docs/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def on_files(files: Files, config: Any) -> Files:
    from microgui.cli.reference import cli_reference
    from microgui.docs_gen import generated_pages

    pages = generated_pages(Path(config["docs_dir"]))
    pages["reference/cli.md"] = cli_reference()
    for path, text in pages.items():
        files.append(File.generated(config, path, content=text))
    shots = [
        ROOT / "resources" / "screenshot.png",
        *(ROOT / "resources" / "screenshots").glob("*.png"),
    ]
    for shot in shots:
        files.append(File.generated(config, f"images/{shot.name}", abs_src_path=str(shot)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Pages with ``execute: true`` in their front matter are notebooks: their Python cells run
    at build time and what they print is shown under each."""
    if not page.meta.get("execute"):
        return markdown
    from microgui.docs_gen import execute_markdown

    return execute_markdown(markdown, page.file.src_uri)
