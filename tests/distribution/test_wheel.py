"""Issue 32 item 2: the built packages. ``python -m build`` makes the sdist and the wheel from a
copy of the project (nothing is written into the work tree), ``twine check`` passes them, and
the wheel, installed (not editable) into a fresh virtual environment, runs: ``import microgui``
from that environment, ``microgui --version``, ``microgui protect`` on the bundled demo, and the
app offscreen with ``--screenshot``. The resources (demo table, its roles, icons, style sheet)
come from the wheel.

Marked slow (CI runs it): it builds and starts the app. The build uses the test environment's
setuptools (``--no-isolation``, so no package index is needed; the test extras require
setuptools >= 77, as the build-system table does). The fresh environment gets microgui from the wheel with ``--no-deps``
and sees the test environment's third-party packages through a ``.pth`` line (so Qt, numba and
the rest are not downloaded again; the editable microgui of the test environment is not on that
path: its finder is a ``.pth`` of its own, which a path line does not run). The test checks that
``microgui`` is imported from the fresh environment's site-packages.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from microgui._version import __version__

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

SKIP = shutil.ignore_patterns(
    ".venv*",
    ".git",
    "__pycache__",
    "build",
    "dist",
    "*.egg-info",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".import_linter_cache",
    "*.pyc",
)


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 600) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_sdist_and_wheel_build_check_install_and_run(tmp_path: Path) -> None:
    pytest.importorskip("build")
    pytest.importorskip("twine")
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=SKIP)
    dist = tmp_path / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--wheel",
            "--outdir",
            str(dist),
        ],
        source,
    )
    wheels = list(dist.glob("*.whl"))
    sdists = list(dist.glob("*.tar.gz"))
    assert [w.name for w in wheels] == [f"microgui_sdc-{__version__}-py3-none-any.whl"]
    assert [s.name for s in sdists] == [f"microgui_sdc-{__version__}.tar.gz"]
    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)], tmp_path)

    # the wheel's metadata and contents
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        info = f"microgui_sdc-{__version__}.dist-info"
        meta = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert meta["Name"] == "microgui-sdc" and meta["Version"] == __version__
    assert meta["License-Expression"] == "MIT"
    assert f"{info}/licenses/LICENSE" in names
    assert "microgui = microgui.cli:main" in entry_points
    for resource in ("demo_persons.csv", "demo_persons.roles.json"):
        assert f"microgui/resources/{resource}" in names
    assert any(n.startswith("microgui/resources/icons/") for n in names)
    assert "microgui/py.typed" in names
    assert not any(n.startswith("tests/") for n in names)
    with tarfile.open(sdists[0]) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"LICENSE", "CHANGELOG.md", "CITATION.cff", "pyproject.toml"} <= members

    # a fresh environment with microgui from the wheel only
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])],
        tmp_path,
    )
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path
        ).strip()
    )
    (site / "zz_test_dependencies.pth").write_text(
        sysconfig.get_path("purelib") + "\n", encoding="utf-8"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": ""}
    env.pop("PYTHONPATH")
    work = tmp_path / "work"
    work.mkdir()
    where = _run(
        [
            str(python),
            "-c",
            "import microgui, microgui.api, importlib.resources as ir; print(microgui.__file__); "
            "print(ir.files('microgui.resources') / 'demo_persons.csv'); print(microgui.__version__)",
        ],
        work,
        env,
    ).split()
    assert Path(where[0]).is_relative_to(site) and Path(where[1]).is_relative_to(site)
    assert where[2] == __version__
    microgui = str(bindir / "microgui")
    assert _run([microgui, "--version"], work, env).strip() == f"microgui {__version__}"
    resources = site / "microgui" / "resources"
    _run(
        [
            microgui,
            "protect",
            str(resources / "demo_persons.csv"),
            "--roles",
            str(resources / "demo_persons.roles.json"),
            "--method",
            "mdav-generic",
            "-k",
            "3",
            "--seed",
            "1",
            "-o",
            str(work / "out.csv"),
            "--report",
            str(work / "report.json"),
        ],
        work,
        env,
    )
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    assert report["k_anonymity"] >= 3 and report["microgui_version"] == __version__
    assert (work / "out.csv").stat().st_size > 0
    shot = work / "window.png"
    _run([microgui, "gui", "--demo", "--screenshot", str(shot)], work, env, timeout=300)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
