"""``protect --threads N`` above what the process can use: the run goes on with the most it
can, and the command says so in one line (issue 33: no setting changes behind the user's back)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.cli import main
from microgui.core.methods.threads import max_threads


def _table(tmp_path: Path) -> Path:
    x = np.random.default_rng(0).normal(size=(60, 3))
    path = tmp_path / "t.csv"
    pd.DataFrame(x, columns=["a", "b", "c"]).to_csv(path, index=False)
    return path


def test_threads_above_the_cap_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _table(tmp_path)
    cap = max_threads()
    args = ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--qi", "a,b,c", "-k", "3",
            "--method", "mdav", "-q"]  # fmt: skip
    assert main([*args, "--threads", str(cap + 1)]) == 0
    err = capsys.readouterr().err
    assert f"note: --threads {cap + 1}: the kernels run on {cap} thread(s)" in err
    assert main([*args, "--threads", "1"]) == 0
    assert "note: --threads" not in capsys.readouterr().err
