"""The app's redraw and event-loop measurements (``--gui``; Qt offscreen, :mod:`microgui.qt.perf`)."""

from __future__ import annotations

import os
import time

from microgui.core.runs import RunSpec, run_protection

__all__ = ["GUI_STALL_RECORDS", "gui_text"]


#: Records of the run during which the GUI's event loop is watched (MDAV: about a minute here).
GUI_STALL_RECORDS = 350_000


def gui_text() -> str:
    """The app's measurements (scatter redraw at 100,000 points, longest event-loop stall
    during a run), Qt offscreen, when :mod:`microgui.qt.perf` exists."""
    import importlib.util

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if importlib.util.find_spec("microgui.qt.perf") is None:
        return "GUI: microgui.qt.perf is not in this checkout; no GUI rows"
    from microgui.qt.perf import ensure_application, event_loop_stall, scatter_redraw_times

    ensure_application()
    lines = ["GUI (Qt offscreen)"]
    for n in (100_000, 200_000):
        r = scatter_redraw_times(n=n)
        verdict = "PASS" if r["redraw_ms"] <= 100 else "MISS"
        lines.append(
            f"  groups plot, {n:,} records ({r['mode']}): first draw {r['first_draw_ms']:.0f} ms, "
            f"redraw {r['redraw_ms']:.0f} ms (max {r['redraw_max_ms']:.0f}) <= 100 ms {verdict}"
        )
    from microgui.qt.perf import survey_view_times

    v = survey_view_times()
    worst = max(v[k] for k in ("groups", "mst", "compare_bars", "compare_records"))
    lines.append(
        f"  views of a {int(v['n']):,}-record mixed run (issue 29): groups {v['groups']:.0f} ms "
        f"(click {v['members']:.0f} ms), MST {v['mst']:.0f} ms, compare bars "
        f"{v['compare_bars']:.0f} ms, compare records {v['compare_records']:.0f} ms "
        f"<= 1000 ms {'PASS' if worst <= 1000 else 'MISS'}"
    )
    stalls = {k: v[f"{k}_stall"] for k in ("groups", "mst", "compare_bars", "compare_records")}
    lines.append(
        "  the same views' longest single GUI-thread hold (draw call or paint; compare bars "
        f"built in slices): groups {stalls['groups']:.0f} ms, MST {stalls['mst']:.0f} ms, "
        f"compare bars {stalls['compare_bars']:.0f} ms, compare records "
        f"{stalls['compare_records']:.0f} ms (drawn when its tab is shown) <= 100 ms "
        f"{'PASS' if max(stalls.values()) <= 100 else 'MISS'}"
    )
    # Load the compiled kernels first, as any run after the session's first has them: loading
    # them from numba's cache holds the GIL for about 0.4 s once per session (said below).
    from microgui.qt.perf import random_dataset

    started = time.perf_counter()
    run_protection(random_dataset(2_000, 10, 1), RunSpec.make("mdav", 5, seed=0))
    load_seconds = time.perf_counter() - started
    s = event_loop_stall(n_records=GUI_STALL_RECORDS)
    verdict = "PASS" if s["max_gap_during_run_ms"] <= 100 else "MISS"
    lines.append(
        f"  event loop during a {s['run_seconds']:.0f} s MDAV run of {s['n_records']:,} x 10 "
        f"({s['outcome']}): longest stall {s['max_gap_during_run_ms']:.0f} ms during the run "
        f"<= 100 ms {verdict}; {s['max_gap_while_drawing_ms']:.0f} ms while drawing the result "
        f"({'PASS' if s['max_gap_while_drawing_ms'] <= 100 else 'MISS'}) "
        f"(kernels loaded beforehand in {load_seconds:.2f} s, as after a session's first run)"
    )
    lines.extend(first_run_lines())
    return "\n".join(lines)


def first_run_lines() -> list[str]:
    """The app's first minute with an empty kernel cache (issue 15), each in a new process:
    window shown to the demo's result with Run pressed at once, and Run pressed once the
    background preparation of the kernels has ended (target: at most 2 s)."""
    from microgui.qt.perf import first_run_times

    r = first_run_times()

    def s(key: str) -> str:
        value = r.get(key)
        return "n/a" if value is None else f"{float(value):.2f} s"

    after = r.get("run_after_preparation_s")
    verdict = "n/a" if after is None else ("PASS" if float(after) <= 2.0 else "MISS")
    said = "said it compiled" if r.get("run_at_once_said_compiling") else "no compiling said"
    cli, app = r.get("cli_first_run_s"), r.get("run_at_once_s")
    target = (
        "n/a"
        if cli is None or app is None
        else ("PASS" if float(app) <= float(cli) + 2.0 else "MISS")
    )
    prepared = r.get("preparation_s")
    # first_run_times presses Run after at most 60 s: a longer preparation was still going on
    early = (
        " (pressed at 60 s, before the preparation ended: the run shared the processor with "
        "the compile under way)"
        if prepared is not None and float(prepared) > 60.0
        else ""
    )
    gaps = [r.get(key) for key in ("preparation_max_gap_ms", "run_at_once_max_gap_ms")]
    stall = (
        "n/a"
        if any(g is None for g in gaps)
        else ("PASS" if max(float(g) for g in gaps if g is not None) <= 100 else "MISS")
    )
    return [
        f"  first minute, empty kernel cache ({r.get('outcome')}):",
        f"    window shown to demo result, Run pressed at once: {s('run_at_once_s')} ({said}); "
        f"without the background preparation {s('without_preparation_run_at_once_s')}",
        f"    the command line's first run of the same demo run (whole command): "
        f"{s('cli_first_run_s')}; app at once <= CLI + 2 s (issue 30) {target}",
        f"    background preparation of every method: {s('preparation_s')}; Run pressed after it: "
        f"{s('run_after_preparation_s')} <= 2 s {verdict}{early}",
        f"    longest event-loop stall (10 ms QTimer heartbeat): "
        f"{r.get('preparation_max_gap_ms')} ms while preparing, "
        f"{r.get('run_at_once_max_gap_ms')} ms with Run pressed at once <= 100 ms {stall}",
    ]
