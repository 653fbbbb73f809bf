"""Issue 15 (part): the command line starts at once and says what is wrong in one line."""

from __future__ import annotations

import subprocess
import sys

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
