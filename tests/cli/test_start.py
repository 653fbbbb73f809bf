"""Issue 15 (part): the command line starts at once and says what is wrong in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from microgui.cli import COMMANDS, main


def test_version_and_help_import_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from microgui.cli import main\n"
        "for argv in (['--version'], ['--help'], ['protect', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('numpy', 'pandas', 'numba', 'scipy', 'networkx', 'PySide6',\n"
        "         'microgui.core.methods') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout
    assert "HEAVY []" in out, out


def test_the_api_is_still_there_on_first_use() -> None:
    import microgui

    assert callable(microgui.protect)
    assert issubclass(microgui.UnsafeReleaseWarning, UserWarning)
    with pytest.raises(AttributeError):
        _ = microgui.nothing_of_that_name  # type: ignore[attr-defined]


def test_a_typo_is_an_error_not_the_app(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evalute", "a.csv", "b.csv"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean evaluate?" in err
    assert all(command in err for command in COMMANDS)


def test_no_display_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check is for Linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["--demo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no display" in err and "QT_QPA_PLATFORM" in err


@pytest.mark.slow
def test_a_run_that_compiles_says_so_once(tmp_path: Path) -> None:
    """An empty kernel cache (a fresh install): the first protect says it prepares the kernels,
    the second (cache filled) says nothing of it."""
    import os

    src = tmp_path / "t.csv"
    src.write_text("a,b\n" + "".join(f"{i},{i * 7 % 11}\n" for i in range(30)), encoding="utf-8")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    errors = []
    for i in range(2):
        argv = [
            sys.executable,
            "-m",
            "microgui",
            "protect",
            str(src),
            "-o",
            str(tmp_path / f"o{i}.csv"),
        ]
        argv += ["--method", "mdav", "-k", "3", "--qi", "a,b"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
        assert proc.returncode == 0, proc.stderr
        errors.append(proc.stderr)
    assert "preparing the method's compiled kernels" in errors[0]
    assert "preparing" not in errors[1]


def test_console_tables_show_control_characters_escaped() -> None:
    """A column named 'note\\rx' printed raw moved the terminal's cursor ('notex')."""
    from microgui.text_table import text_table

    out = text_table(["column", "role"], [["note\rx", "quasi-identifier"], ["a\tb", "x"]], set())
    assert "\r" not in out and "\t" not in out
    assert "note\\rx" in out and "a\\tb" in out
