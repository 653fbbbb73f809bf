"""k-anonymity level of a table and group sizes of a partition (``003`` §3.3).

**Missing key values.** The table-level helpers that group records by their key values
(:func:`k_anonymity_level` here, :func:`~microgui.core.metrics.risk.reidentification_risk`,
:func:`~microgui.core.metrics.risk.sample_uniques` and the groupings of
:mod:`~microgui.core.metrics.privacy`) take one of two rules, :data:`MISSING_RULES`, by their
``missing=`` argument:

- ``"category"`` (the default of these helpers): a blank (missing) key value is one value of
  its own, equal to every other blank of the same column and to nothing else; the records are
  partitioned into the classes of identical combinations. This is how sdcMicro's ``ldiversity``
  groups its keys (``src/Measure_Risk.h``, ``items_match_safe``: NA matches NA only, the data
  sorted with ``na.last = TRUE``), and what a blank means when it was in the data before any
  protection (an unknown answer released as such).
- ``"any"``: a blank key value is a wildcard that matches any value of its column: record *j*
  counts for record *i* when the two agree on every key where both have a value
  (:mod:`~microgui.core.metrics.missing_match`). Classes overlap and no longer partition the
  table. This is sdcMicro's ``freqCalc`` with its default ``alpha = 1`` (``R/freqCalc.r``: "a
  missing value stands for any of the possible categories of the variable"), and so the fk of
  ``measure_risk`` and of its re-identification risk; it is the rule after a local suppression,
  where a blank hides a value an intruder cannot read. Two corner cases of ``freqCalc`` are not
  copied: with two or more keys sdcMicro does not count a record whose keys are all blank
  towards the complete records (``addAllNAtoKeys <- FALSE``), and with a single key it does; here
  a record with every key blank matches every record in both cases (as
  :func:`~microgui.core.metrics.weighted_risk.frequencies` notes, it follows sdcMicro there).

Without a blank key value both rules give the same figures. The callers that know how the
blanks came about pass the rule on: a plan with a local-suppression step measures its release
with ``"any"`` (:func:`microgui.core.runs.plan.plan_suppresses`), everything else with
``"category"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter

__all__ = [
    "Missing",
    "MISSING_RULES",
    "check_missing",
    "class_codes",
    "k_anonymity_level",
    "group_sizes",
]

#: How a blank (missing) key value groups: a category of its own, or a wildcard matching any value.
Missing = Literal["category", "any"]
#: The values of :data:`Missing`.
MISSING_RULES: tuple[Missing, ...] = ("category", "any")


def check_missing(missing: object) -> Missing:
    """``missing`` when it names a rule of :data:`MISSING_RULES`; else :class:`InvalidParameter`."""
    if missing == "category":
        return "category"
    if missing == "any":
        return "any"
    raise InvalidParameter(f"missing={missing!r}: give 'category' or 'any'")


def class_codes(frame: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """The equivalence class of each row: dense codes 0..g-1 of its combination of
    ``quasi_identifiers`` values, compared exactly as they appear, a blank being one value (the
    ``"category"`` rule); all zeros without quasi-identifiers."""
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    codes: np.ndarray | None = None
    # the groups of ``frame.groupby(qis, dropna=False).size()``, one column at a time: each
    # column's codes folded into the combination's (issue 33: the groupby held every column's
    # codes and their product at once, the peak of protect on 1,000,000 x 10)
    for col in dict.fromkeys(quasi_identifiers):
        column, _ = pd.factorize(frame[col], use_na_sentinel=False)
        if codes is None:
            codes = np.asarray(column, dtype=np.int64)
            continue
        width = int(column.max()) + 1
        codes, _ = pd.factorize(codes * width + column)
    if codes is None:
        return np.zeros(len(frame), dtype=np.int64)
    return np.asarray(codes, dtype=np.int64)


def k_anonymity_level(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], *, missing: Missing = "category"
) -> int:
    """The smallest number of records sharing one combination of quasi-identifier values.

    Values are compared exactly as they appear in the table (floats by value, text by text).
    ``missing``: a blank value is one value of its own (``"category"``, the default) or matches
    any value (``"any"``: the smallest wildcard frequency, sdcMicro's ``freqCalc``); see the
    module docstring. An empty table has level 0.
    """
    rule = check_missing(missing)
    if len(frame) == 0:
        return 0
    if not quasi_identifiers:
        return len(frame)
    if rule == "any":
        from microgui.core.metrics.missing_match import k_anonymity_missing_any

        return k_anonymity_missing_any(frame, list(dict.fromkeys(quasi_identifiers)))
    return int(np.bincount(class_codes(frame, quasi_identifiers)).min())


def group_sizes(labels: np.ndarray) -> np.ndarray:
    """Records per group id (index = group id)."""
    return np.bincount(np.asarray(labels, dtype=np.int64))
