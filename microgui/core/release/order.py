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
- **The app's exports and their replay** (issue 30). The app draws a fresh seed for each export
  (:func:`draw_order_seed`, ``origin="session"``) and keeps it, per run and export, in the
  session's *project file* only (and in its crash-recovery autosave, a project file in the
  user's state folder, removed on a clean exit): never in the release, its report or anything
  written beside them (the report says ``seed_kept_in_project``). ``protect --project P --run N`` without
  ``--order-seed``/``--keep-order`` reads the seed of run N's last export from the project
  (``origin="project"``) and writes that export again, byte for byte; its report says the order
  was the project's, again without the seed.
- **Keep the order** (``--keep-order``): the input order is released, and the report says so.

Threat model. The shuffle protects against a reader of the *release* who knows (or guesses)
how the input was sorted — by identifier, area, interview date — and would otherwise read each
record's position as that key. A published seed undoes it: with the seed and the number of
records anyone recomputes the permutation, so the n-th released record's input position, and so
its sort key, is known again. That is why a seed is written into the report only when the user
gave it on purpose (``--order-seed``, for a release that must be rebuilt by others). The seed of
an app export is kept in the project file, the office's internal working file, which already
names the input table, its roles and every run's seed and partition: whoever holds a project
file can re-identify far more than the order (it is as confidential as the input data and must
never travel with a release). Keeping the seed there adds nothing an attacker with the project
file lacks, and lets the office re-create exactly the file it published (an audit, a
re-release after a lost file) without publishing how.

The report's ``record_order`` holds ``order`` (``"random"`` or ``"input"``), ``text`` (the
sentence every surface shows), ``households_kept_together`` (the household-id column's name or
None), ``seed`` (only a seed the user gave; else None) and ``seed_note``; an app export and its
replay add ``seed_kept_in_project`` (True), and the replay ``replayed_from_project`` (True).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter

__all__ = [
    "RANDOM_TEXT",
    "INPUT_TEXT",
    "RecordOrder",
    "ORIGINS",
    "draw_order_seed",
    "release_permutation",
    "order_report",
]

RANDOM_TEXT = "records released in random order"
INPUT_TEXT = "input order kept"
#: Where a seed comes from: the user (``--order-seed``, recorded in the report), the app's export
#: (drawn for it, kept in the project file only) or the project file (a replay of that export).
ORIGINS = ("user", "session", "project")


def draw_order_seed() -> int:
    """A fresh seed for one release's order, from the operating system (64 bits: what
    ``--order-seed`` takes), for an app export that keeps it in the project file."""
    return secrets.randbits(64)


@dataclass(frozen=True)
class RecordOrder:
    """How a release orders its records: ``keep`` the input order, or a random order drawn from
    ``seed`` (None: a fresh seed from the operating system, not recorded). ``origin`` says where
    a seed comes from (:data:`ORIGINS`): only a ``"user"`` seed is written in the report."""

    keep: bool = False
    seed: int | None = None
    origin: str = "user"

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise ValueError(f"unknown seed origin {self.origin!r}; one of {ORIGINS}")
        if self.origin != "user" and (self.keep or self.seed is None):
            raise ValueError(f"an order of origin {self.origin!r} is a random one with its seed")
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
        """The order as a run spec or project file keeps it (``seed`` only when the user gave
        it: an app export's is kept by the project as its exports, never here)."""
        out: dict[str, Any] = {"keep": self.keep}
        if self.seed is not None and self.origin == "user":
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
        given = order.seed is not None and order.origin == "user"
        out["seed"] = int(order.seed) if given and order.seed is not None else None
        if given:
            out["seed_note"] = (
                "given by the user (--order-seed): the same seed writes the same order"
            )
        elif order.origin == "session":
            out["seed_note"] = (
                "drawn from the operating system for this export and kept only in the "
                "session's project file, never here: protect --project writes this order again"
            )
        elif order.origin == "project":
            out["seed_note"] = (
                "the order of the run's last export from the app, its seed read from the project "
                "file (kept there only, never here)"
            )
        else:
            out["seed_note"] = (
                "drawn from the operating system and not recorded: the order cannot be rebuilt"
            )
        if order.origin != "user":
            out["seed_kept_in_project"] = True
        if order.origin == "project":
            out["replayed_from_project"] = True
        if household is not None:
            out["text"] = f"{RANDOM_TEXT}, households kept together"
    return out
