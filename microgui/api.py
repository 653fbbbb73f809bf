"""The Python API for notebooks: protect a pandas DataFrame and get the protected frame back.

>>> import microgui, pandas as pd
>>> df = pd.DataFrame({"age": [23, 25, 31, 35, 44, 47], "income": [10, 12, 30, 33, 50, 52]})
>>> res = microgui.protect(df, qi=["age", "income"], method="mdav", k=3, seed=1)
>>> res.report["min_group_size"]
3
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.dataset import Dataset
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.roles import RoleMap, roles_from_lists
from microgui.core.runs import RunResult, RunSpec, run_protection

__all__ = ["ProtectionResult", "protect", "list_methods"]


@dataclass(frozen=True)
class ProtectionResult:
    """``frame``: the protected table (identifiers removed, same row order and index);
    ``partition``: each record's group id as a Series on the input's index;
    ``report``: the JSON-ready run report; ``run``: the full :class:`RunResult`."""

    frame: pd.DataFrame
    partition: pd.Series
    report: Mapping[str, Any]
    run: RunResult


def protect(
    frame: pd.DataFrame,
    *,
    qi: Iterable[str],
    method: str = "mdav",
    k: int = 3,
    identifiers: Iterable[str] = (),
    confidential: Iterable[str] = (),
    ordinal: Mapping[str, Sequence[str] | None] | None = None,
    nominal: Iterable[str] = (),
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    roles: RoleMap | None = None,
    progress: ProgressFn = no_progress,
    strata: Iterable[str] | str = (),
    block_size: int | str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
) -> ProtectionResult:
    """Microaggregate ``frame`` on its quasi-identifiers.

    Roles are given as on the command line (``qi``, ``identifiers``, ``confidential``,
    ``ordinal={col: [lowest, ..., highest]}``, ``nominal``), or as a ready ``roles`` RoleMap.
    The input frame is not modified. Raises :class:`microgui.core.errors.MicroguiError`
    subclasses with a readable message for user errors.

    Scale (:mod:`microgui.core.scale`): ``strata`` (columns) protects each stratum on its own;
    ``block_size`` splits larger sets of records into spatially coherent blocks of at most that
    many records (None: the method on the whole table; "auto": exact up to 100,000 records,
    blocks of 50,000 above); ``engine="dask"`` with
    ``scheduler="tcp://HOST:PORT"`` runs blocks and strata on a Dask cluster instead of the
    local cores (``workers`` processes, None: one per core).
    """
    if roles is None:
        roles = roles_from_lists(
            [str(c) for c in frame.columns],
            qi=qi,
            identifiers=identifiers,
            confidential=confidential,
            ordinal=ordinal,
            nominal=nominal,
        )
    dataset = Dataset(frame=frame, roles=roles)
    spec = RunSpec.make(
        method,
        k,
        params,
        seed,
        strata=strata if isinstance(strata, str) else list(strata),
        block_size=block_size,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
    )
    result = run_protection(dataset, spec, progress)
    partition = pd.Series(np.asarray(result.labels), index=frame.index, name="group")
    return ProtectionResult(
        frame=result.protected, partition=partition, report=result.report, run=result
    )


def list_methods() -> list[dict[str, Any]]:
    """Name, one-line summary, citation and parameters of every registered method."""
    from microgui.core.methods import available_methods

    return [
        {
            "name": m.name,
            "summary": m.summary,
            "citation": m.citation,
            "kinds": sorted(kind.value for kind in m.kinds),
            "parameters": {p.name: {"default": p.default, "help": p.help} for p in m.all_params},
        }
        for m in available_methods()
    ]
