"""The entry point: ``run_app(demo=True, screenshot=...)`` in its own process (smoke test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run_app(args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    code = f"from microgui.qt.app import run_app; raise SystemExit(run_app({args}))"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # settings never touch the user's
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )


def test_screenshot_of_the_demo(tmp_path: Path) -> None:
    png = tmp_path / "shots" / "x.png"
    out = _run_app(f"demo=True, screenshot={str(png)!r}", tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_screenshot_fails_cleanly_on_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("", encoding="utf-8")
    png = tmp_path / "x.png"
    out = _run_app(f"file={str(bad)!r}, screenshot={str(png)!r}", tmp_path)
    assert out.returncode != 0
    assert "bad.csv" in out.stderr
    assert not png.exists()
