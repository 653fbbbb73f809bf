"""Issue 15: ``protect`` shows a progress bar on a terminal's stderr for long runs, never in a
pipe or captured output, and not with ``--quiet``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from microgui.cli import TerminalProgress, main


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_bar_waits_then_rewrites_one_line_and_ends_it() -> None:
    now = [0.0]
    out = io.StringIO()
    bar = TerminalProgress(out, after_s=2.0, clock=lambda: now[0])
    bar(0.0, "checking the data")
    now[0] = 1.5
    bar(0.2, "forming groups")
    assert out.getvalue() == ""  # a short run shows nothing
    now[0] = 2.5
    bar(0.3, "forming groups")
    now[0] = 2.55
    bar(0.35, "forming groups")  # within 0.1 s: not redrawn
    now[0] = 3.0
    bar(0.5, "aggregating groups")
    bar.break_line()  # e.g. the compile notice: the bar goes on below it
    out.write("notice\n")
    now[0] = 4.0
    bar(1.0, "done")
    bar.close()
    text = out.getvalue()
    assert text == (
        "\r[#######-----------------]  30%  forming groups  2 s"
        "\r[############------------]  50%  aggregating groups  3 s\n"
        "notice\n"
        "\r[########################] 100%  done  4 s\n"
    )


def test_a_short_run_leaves_no_trace() -> None:
    out = io.StringIO()
    bar = TerminalProgress(out, after_s=2.0, clock=lambda: 0.5)
    bar(0.5, "forming groups")
    bar.close()
    assert out.getvalue() == ""


def test_a_shorter_line_wipes_the_longer_one_before_it() -> None:
    now = [5.0]
    out = FakeTerminal()
    bar = TerminalProgress(out, after_s=0.0, clock=lambda: now[0])
    bar(0.1, "a long status text")
    now[0] += 1
    bar(0.2, "short")
    line = out.getvalue().split("\r")[-1]
    assert line.rstrip() == "[####--------------------]  20%  short  1 s"
    assert len(line) == len(out.getvalue().split("\r")[1])


def _protect(tmp_path: Path, *extra: str) -> list[str]:
    src = tmp_path / "t.csv"
    src.write_text("a,b\n" + "".join(f"{i},{i * 7 % 11}\n" for i in range(60)), encoding="utf-8")
    argv = ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--method", "mdav", "-k", "3"]
    return [*argv, "--qi", "a,b", *extra]


def test_protect_draws_the_bar_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr("microgui.cli.progress.PROGRESS_AFTER_S", 0.0)  # as if the run were long
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(_protect(tmp_path)) == 0
    text = terminal.getvalue()
    assert "\r[" in text and "100%  done" in text
    bar_line = text[text.index("\r[") : text.index("\n", text.index("\r["))]
    assert "\n" not in bar_line  # one line, rewritten in place, then ended
    assert text.splitlines()[-1].startswith("mdav: k=3")  # the summary on its own line


def test_quiet_turns_the_bar_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr("microgui.cli.progress.PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(_protect(tmp_path, "--quiet")) == 0
    assert "\r" not in terminal.getvalue() and "mdav: k=3" in terminal.getvalue()


def test_no_bar_when_stderr_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("microgui.cli.progress.PROGRESS_AFTER_S", 0.0)
    assert main(_protect(tmp_path)) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "[#" not in err and "mdav: k=3" in err
