""":func:`microgui.core.runs.protect.run_protection`: a large run's z-scores lent out while the
kernel and the IL bound do not read them (issue 33), the same release and report either way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.core import spare
from microgui.core.io import read_table
from microgui.core.methods import bound
from microgui.core.release.check import export_run
from microgui.core.release.order import RecordOrder
from microgui.core.runs import RunSpec, protect, run_protection
from microgui.core.table.dataset import Dataset, continuous_as_numbers, prepare_qi
from microgui.core.table.roles import roles_from_lists


def _without_seconds(report: object) -> object:
    if isinstance(report, dict):
        return {k: _without_seconds(v) for k, v in report.items() if k != "seconds"}
    return report


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages given back: Linux only")
@pytest.mark.parametrize(
    ("method", "search"), [("mdav", "pruned"), ("mdav", "brute"), ("mdav-generic", "pruned")]
)
def test_a_large_runs_zscores_are_lent_out_and_the_release_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str, search: str
) -> None:
    """Above ``PREFETCH_MAX_BYTES`` (set to 0 here) the run's z-scores are given back during the
    kernel and used as the principal-axis bound's scratch, each time written again after; the
    release (CSV bytes), the report (but its seconds), the labels and the z-scores the result
    holds are those of the run that keeps them."""
    rng = np.random.default_rng(5)
    n = 20_000
    frame = pd.DataFrame(rng.standard_normal((n, 6)), columns=[f"x{j}" for j in range(6)])
    frame["w"] = rng.integers(0, 4, n)
    frame["c"] = rng.normal(50, 10, n).round(2)
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    read = read_table(source, suggest=False)
    names = [f"x{j}" for j in range(6)]
    roles = roles_from_lists(list(read.frame.columns), qi=names, confidential=["c"])
    dataset = continuous_as_numbers(Dataset(read.frame, roles, read.source), more_distinct_than=20)
    spec = RunSpec.make(method, 3, {"search": search}, 11)

    lent: list[str] = []
    drop_pages = spare._drop_pages

    def counted(array: np.ndarray) -> bool:
        given = drop_pages(array)
        lent.append(f"dropped {given}")
        return given

    rebuild = protect.rewrite_continuous

    def rebuilt(qi: object) -> None:
        lent.append("rebuilt")
        rebuild(qi)  # type: ignore[arg-type]

    outputs = []
    for name, limit in (("kept", protect.PREFETCH_MAX_BYTES), ("lent", 0)):
        monkeypatch.setattr(protect, "PREFETCH_MAX_BYTES", limit)
        monkeypatch.setattr(spare, "_drop_pages", counted)
        monkeypatch.setattr(protect, "rewrite_continuous", rebuilt)
        bound.clear_cache()  # the bound computed by each run, not kept from the first
        result = run_protection(dataset, spec)
        out, rep = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        export_run(dataset, result, out, rep, order=RecordOrder(seed=3))
        report = _without_seconds(json.loads(rep.read_text()))
        assert isinstance(report, dict)
        report.pop("output")
        report["fingerprint"]["output"].pop("file")
        outputs.append((out.read_bytes(), report, result.labels.tolist(), result.qi.continuous))
        if name == "kept":
            assert lent == []
    # the kernel's pages given back and written again, then the bound's scratch written again
    assert lent == ["dropped True", "rebuilt", "rebuilt"]
    assert outputs[0][:3] == outputs[1][:3]
    fresh = prepare_qi(dataset).continuous
    for z in (outputs[0][3], outputs[1][3]):
        assert z.view(np.int64).tolist() == fresh.view(np.int64).tolist()
