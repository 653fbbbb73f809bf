"""Start-up rows of ``python -m microgui.bench``: how long a user waits before anything happens.

Each row runs a fresh Python process (what a user starts), best of a few:

- ``microgui --version``: the command line's cheapest answer (issue 14 target: under 0.5 s); it
  must import no numba, scipy, networkx or method module (PEP 562 lazy attributes).
- ``import microgui``: the package alone, and which heavy libraries it pulled in (none).
- ``import microgui.core.methods``: the registry, then every method module imported
  (``available_methods()``: numba, scipy, networkx); a run imports only its method's module.
- the first run on the demo table (its default method and k) with an **empty kernel cache** (a
  fresh machine: its kernels compile), then the same run in a new process with the cache now
  filled (issue 15).
- ``microgui --demo`` (the app, offscreen) from process start to the demo table shown, and the
  GUI thread's longest stall once the window has painted (issue 30, target 100 ms;
  :mod:`~microgui.bench.startup_stall`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["StartupRow", "startup_rows", "startup_text", "VERSION_TARGET_SECONDS"]

#: issue 14: ``microgui --version`` answers within this many seconds
VERSION_TARGET_SECONDS = 0.5
HEAVY = ("numba", "scipy", "networkx", "pandas", "microgui.core.methods")

_IMPORTED = f"import sys, microgui; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
#: the README's first run: the demo table with its default method and k
_FIRST_RUN = (
    "from microgui.core.demo import demo_defaults, load_demo; "
    "from microgui.core.runs import RunSpec, run_protection; "
    "method, k = demo_defaults(); run_protection(load_demo(), RunSpec(method, k, seed=1)); "
    "print(method, k)"
)


@dataclass(frozen=True)
class StartupRow:
    what: str
    seconds: float
    target: float | None = None
    note: str = ""


def _timed(args: Sequence[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"{' '.join(args[1:])!r} failed: {tail[0]}")
    return time.perf_counter() - start, done.stdout.strip()


def _best(args: Sequence[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, str]:
    runs = [_timed(args, env) for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def startup_rows(quick: bool = False, repeat: int = 3) -> list[StartupRow]:
    """Measure the start-up rows (``quick``: leave out the first run with an empty cache)."""
    py = sys.executable
    rows = []
    seconds, _ = _best([py, "-m", "microgui", "--version"], repeat)
    rows.append(StartupRow("microgui --version", seconds, VERSION_TARGET_SECONDS))
    seconds, heavy = _best([py, "-c", _IMPORTED], repeat)
    rows.append(StartupRow("import microgui", seconds, note=f"heavy modules: {heavy or 'none'}"))
    every = "import microgui.core.methods as m; m.available_methods()"
    seconds, _ = _best([py, "-c", every], repeat)
    rows.append(StartupRow("import microgui.core.methods", seconds, note="all method modules"))
    if not quick:
        with tempfile.TemporaryDirectory(prefix="microgui-bench-cache-") as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            first, what = _timed([py, "-c", _FIRST_RUN], env)
            again, _ = _timed([py, "-c", _FIRST_RUN], env)
        note = f"demo table, {what.replace(' ', ', k=')}; process start to result"
        rows.append(StartupRow("first demo run, empty kernel cache", first, note=note))
        rows.append(StartupRow("the same run, kernel cache filled", again, note=note))
    return rows


def startup_text(quick: bool = False) -> str:
    """The start-up rows as a table."""
    lines = ["start-up (a fresh Python process each; best of 3 unless once):"]
    for row in startup_rows(quick):
        target = ""
        if row.target is not None:
            ok = "met" if row.seconds <= row.target else "MISSED"
            target = f"target < {row.target:g} s {ok}"
        lines.append(f"  {row.what:<38} {row.seconds:7.2f} s  {target:<22} {row.note}".rstrip())
    from microgui.bench.startup_stall import startup_stall_text

    lines.append(startup_stall_text())
    return "\n".join(lines)
