"""The start-up stall row's text (:mod:`microgui.bench.startup_stall`); no timing here."""

from __future__ import annotations

import pytest

from microgui.bench import startup_stall


def _row(stall_max: float) -> dict[str, object]:
    return {
        "sessions": 3,
        "outcomes": ["shown"] * 3,
        "shown_s": (2.1, 2.3),
        "table_s": (2.3, 2.5),
        "first_paint_ms": (55.0, 70.0),
        "longest_stall_ms": (40.0, stall_max),
        "stall_where": "",
    }


@pytest.mark.parametrize(("stall_max", "verdict"), [(80.0, "met"), (130.0, "MISSED")])
def test_startup_stall_text_holds_the_worst_session_to_the_target(
    monkeypatch: pytest.MonkeyPatch, stall_max: float, verdict: str
) -> None:
    monkeypatch.setattr(startup_stall, "startup_stall_row", lambda _n: _row(stall_max))
    text = startup_stall.startup_stall_text()
    assert f"target <= 100 ms {verdict}" in text
    assert f"40/{stall_max:.0f} ms" in text and "table shown 2.30/2.50 s" in text
    assert "first paint) 55/70 ms, target <= 100 ms met" in text


def test_startup_stall_text_holds_the_first_turn_to_the_target_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = {**_row(50.0), "first_paint_ms": (180.0, 200.0)}
    monkeypatch.setattr(startup_stall, "startup_stall_row", lambda _n: row)
    assert "first paint) 180/200 ms, target <= 100 ms MISSED" in startup_stall.startup_stall_text()


def test_startup_stall_text_says_why_there_is_no_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    row = {**_row(50.0), "longest_stall_ms": None, "outcomes": ["failed (exit 1): boom"]}
    monkeypatch.setattr(startup_stall, "startup_stall_row", lambda _n: row)
    assert "n/a (failed (exit 1): boom)" in startup_stall.startup_stall_text()
