"""Cross-check of k-anonymity, l-diversity and t-closeness against pycanon (issue 5).

pycanon 1.3.6 pins numpy, pandas and scipy to exact versions, so it cannot share our test
environment. This test builds, once per machine, a separate virtual environment holding only
pycanon (``~/.cache/microgui-test/pycanon-venv``, or ``$MICROGUI_PYCANON_VENV``), writes the
tables to CSV, runs pycanon there in a subprocess and compares its JSON answer with
:mod:`microgui.core.metrics`. It is skipped, with the reason, when that environment cannot be built
(no network, no ``venv`` module).

Where the definitions differ, and what is compared:

- k-anonymity and distinct l-diversity: the same definitions (smallest equivalence class; smallest
  number of distinct sensitive values in a class); compared exactly.
- t-closeness: pycanon uses the ordered-distance EMD (Li et al. 2007) for a numeric sensitive
  attribute, over its distinct values in the table, and the equal-distance EMD (½ Σ|p − q|) for a
  text one. Ours does the same for a *continuous* (or ordinal) and a *nominal* attribute
  respectively, so each table's attribute is given the kind pycanon infers from its dtype. A
  numeric attribute that is really nominal (codes) is not comparable and not compared.
- entropy l-diversity: pycanon returns an integer (the largest whole l with entropy >= log l, i.e.
  ⌊exp(min entropy)⌋); ours returns exp(min entropy) itself, so ⌊ours⌋ is compared.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference_sets import ADULT_DIR

from microgui.core.metrics import privacy
from microgui.core.metrics.kanonymity import k_anonymity_level
from microgui.core.metrics.risk import entropy_l_diversity

ADULT = ADULT_DIR / "adult_subset.csv"
PYCANON = "pycanon==1.3.6"

# runs inside the pycanon venv: a list of jobs in, a list of results out
_WORKER = r"""
import json, sys
import pandas as pd
from pycanon import anonymity

jobs = json.load(open(sys.argv[1], encoding="utf-8"))
out = []
for job in jobs:
    frame = pd.read_csv(job["csv"], dtype=job.get("dtype"))
    qi, sa = job["qi"], [job["sa"]]
    out.append({
        "k": int(anonymity.k_anonymity(frame, qi)),
        "l": int(anonymity.l_diversity(frame, qi, sa)),
        "t": float(anonymity.t_closeness(frame, qi, sa)),
        "entropy_l": int(anonymity.entropy_l_diversity(frame, qi, sa)),
    })
json.dump(out, sys.stdout)
"""


def _venv_dir() -> Path:
    env = os.environ.get("MICROGUI_PYCANON_VENV")
    return Path(env) if env else Path.home() / ".cache" / "microgui-test" / "pycanon-venv"


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _works(venv: Path) -> bool:
    py = _python(venv)
    if not py.exists():
        return False
    done = subprocess.run(
        [str(py), "-c", "import pycanon.anonymity"], capture_output=True, timeout=120
    )
    return done.returncode == 0


@pytest.fixture(scope="module")
def pycanon_python() -> Path:
    venv = _venv_dir()
    if _works(venv):
        return _python(venv)
    # build beside the final place, then rename: a half-built venv is never reused
    venv.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="pycanon-venv-", dir=venv.parent))
    try:
        steps = [
            [sys.executable, "-m", "venv", str(build)],
            [
                str(_python(build)),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                PYCANON,
            ],
        ]
        for cmd in steps:
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as exc:
                pytest.skip(f"cannot build a venv for {PYCANON}: {exc}")
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
                pytest.skip(f"cannot build a venv for {PYCANON} ({cmd[-1]}): {tail[0]}")
        if venv.exists():
            shutil.rmtree(venv)
        build.rename(venv)
    finally:
        if build.exists():
            shutil.rmtree(build, ignore_errors=True)
    if not _works(venv):
        pytest.skip(f"the venv built for {PYCANON} cannot import pycanon")
    return _python(venv)


def _random_tables() -> list[tuple[pd.DataFrame, list[str], str]]:
    rng = np.random.default_rng(11)
    out = []
    for n, levels in ((60, 3), (200, 4), (500, 2), (1000, 6)):
        frame = pd.DataFrame(
            {
                "q1": rng.integers(0, levels, n).astype(str),
                "q2": rng.choice(["a", "b"], n),
                "q3": rng.integers(0, 3, n).astype(str),
                "num": rng.integers(0, 6, n),
                "real": rng.normal(50, 10, n).round(1),
                "cat": rng.choice(["x", "y", "z", "w"], n, p=[0.6, 0.2, 0.15, 0.05]),
            }
        )
        for sa in ("num", "real", "cat"):
            out.append((frame, ["q1", "q2"], sa))
        out.append((frame, ["q1", "q2", "q3"], "cat"))
    return out


def _cases() -> list[tuple[pd.DataFrame, list[str], str]]:
    cases = _random_tables()
    if ADULT.exists():
        adult = pd.read_csv(ADULT, sep=";")
        cases.append((adult, ["sex", "race", "workclass"], "salary-class"))
        cases.append((adult, ["sex", "race"], "marital-status"))
        cases.append((adult, ["sex", "race", "salary-class"], "age"))
        cases.append((adult, ["age", "sex", "race"], "occupation"))
    return cases


def test_agrees_with_pycanon(pycanon_python: Path, tmp_path: Path) -> None:
    cases = _cases()
    jobs = []
    for i, (frame, qis, sa) in enumerate(cases):
        path = tmp_path / f"table{i}.csv"
        frame[[*qis, sa]].to_csv(path, index=False)
        # QIs as text, so that both sides group the same cells; the SA keeps its dtype
        jobs.append({"csv": str(path), "qi": qis, "sa": sa, "dtype": dict.fromkeys(qis, "str")})
    spec = tmp_path / "jobs.json"
    spec.write_text(json.dumps(jobs), encoding="utf-8")
    script = tmp_path / "worker.py"
    script.write_text(_WORKER, encoding="utf-8")
    done = subprocess.run(
        [str(pycanon_python), str(script), str(spec)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    assert len(theirs) == len(cases)
    for (frame, qis, sa), ref in zip(cases, theirs, strict=True):
        table = frame[[*qis, sa]].astype(dict.fromkeys(qis, str))
        what = f"{qis} / {sa}"
        assert k_anonymity_level(table, qis) == ref["k"], what
        assert privacy.distinct_l_diversity(table, qis, sa) == ref["l"], what
        # pycanon's EMD: ordered distance for a numeric SA, equal distance for text
        kind = "continuous" if pd.api.types.is_numeric_dtype(table[sa]) else "nominal"
        ours_t = privacy.t_closeness(table, qis, sa, {sa: kind})
        assert ours_t == pytest.approx(ref["t"], abs=1e-9), what
        ours_e = entropy_l_diversity(table, qis, sa)
        # pycanon floors exp(entropy); allow for rounding at a whole number
        assert ref["entropy_l"] in {math.floor(ours_e - 1e-9), math.floor(ours_e + 1e-9)}, what
