"""The order of the records in a release (issue 31 item 4; households, item 5).

A file sorted by identifier, area or interview date leaks that order into a release that keeps
it: the n-th released record is the n-th of the input. Every release is therefore written in a
random record order by default, as statistical offices do (sdcMicro ``extractManipData(...,
randomizeRecords=)`` and ``createSdcObj(randomizeRecords=TRUE)``; GitHub ``sdcTools/sdcMicro``,
``R/aux_functions.r``). The permutation is applied by the one writer,
:func:`microgui.core.release.check.export_run`, so every format and the app, the command line
and the API share it; the run's own result (its views and measures) keeps the input order.

- **Households kept together.** With a household-id column (role ``household-id``) the
  households are shuffled and the records of each stay adjacent, in their input order
  (sdcMicro's ``randomizeRecords = "byHH"``; its ``"withinHH"``, which also shuffles inside a
  household, is not offered: the order of persons within a household often carries their
  relation to the head).
- **The seed.** Without a seed the permutation is drawn from a fresh seed of the operating
  system's entropy (:class:`numpy.random.SeedSequence`), which is never written anywhere: the
  report says the records were shuffled, not how. A seed the user gives (``--order-seed N``)
  makes the order reproducible and is recorded in the report (``record_order.seed``), so that a
  replay writes the same bytes.
- **Keep the order** (``--keep-order``): the input order is released, and the report says so.

The report's ``record_order`` holds ``order`` (``"random"`` or ``"input"``), ``text`` (the
sentence every surface shows), ``households_kept_together`` (the household-id column's name or
None) and ``seed`` only when the user gave one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter

__all__ = [
    "RANDOM_TEXT",
    "INPUT_TEXT",
    "RecordOrder",
    "release_permutation",
    "order_report",
]

RANDOM_TEXT = "records released in random order"
INPUT_TEXT = "input order kept"


@dataclass(frozen=True)
class RecordOrder:
    """How a release orders its records: ``keep`` the input order, or a random order drawn from
    ``seed`` (None: a fresh seed from the operating system, not recorded)."""

    keep: bool = False
    seed: int | None = None

    def __post_init__(self) -> None:
        seed = self.seed
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0
        ):
            raise InvalidParameter(f"the order seed {seed!r} must be a whole number of at least 0")
        if self.keep and seed is not None:
            raise InvalidParameter(
                "an order seed is for a random record order, and the input order is kept; "
                "drop --order-seed or --keep-order"
            )

    def to_json(self) -> dict[str, Any]:
        """The order as a run spec or project file keeps it (``seed`` only when given)."""
        out: dict[str, Any] = {"keep": self.keep}
        if self.seed is not None:
            out["seed"] = int(self.seed)
        return out

    @classmethod
    def from_json(cls, data: object) -> RecordOrder:
        if not isinstance(data, dict):
            return cls()
        seed = data.get("seed")
        return cls(keep=data.get("keep") is True, seed=None if seed is None else int(seed))


def release_permutation(
    n: int, order: RecordOrder, households: np.ndarray | pd.Series | None = None
) -> np.ndarray:
    """The row positions of the release, in the order they are written.

    ``households``: one household per record (any values, equal for the records of one
    household; no missing value), or None. Returns ``arange(n)`` when ``order.keep``; otherwise
    a permutation of ``range(n)`` drawn from ``order.seed`` (or the operating system's entropy),
    households shuffled and each household's records adjacent in their input order.
    """
    if order.keep or n <= 1:
        return np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(order.seed)  # None: fresh OS entropy, never seen or stored
    if households is None:
        return rng.permutation(n).astype(np.int64)
    codes, _ = pd.factorize(pd.Series(households).reset_index(drop=True), sort=False)
    codes = np.asarray(codes, dtype=np.int64)
    if len(codes) != n:
        raise ValueError(f"{len(codes)} household ids for {n} records")
    if (codes < 0).any():
        raise InvalidParameter("a record has no household id; give every record its household")
    # each household gets a random rank; a stable sort on the ranks keeps its records adjacent
    # and in their input order
    rank = rng.permutation(int(codes.max()) + 1)
    return np.argsort(rank[codes], kind="stable").astype(np.int64)


def order_report(order: RecordOrder, household: str | None) -> dict[str, Any]:
    """The report's ``record_order`` (see the module notes): never a seed the user did not give."""
    out: dict[str, Any] = {
        "order": "input" if order.keep else "random",
        "text": INPUT_TEXT if order.keep else RANDOM_TEXT,
        "households_kept_together": None if order.keep else household,
    }
    if not order.keep:
        out["seed"] = int(order.seed) if order.seed is not None else None
        out["seed_note"] = (
            "given by the user (--order-seed): the same seed writes the same order"
            if order.seed is not None
            else "drawn from the operating system and not recorded: the order cannot be rebuilt"
        )
        if household is not None:
            out["text"] = f"{RANDOM_TEXT}, households kept together"
    return out
