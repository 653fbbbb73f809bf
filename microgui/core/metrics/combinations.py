"""Invented combinations: groups that release a combination of categories none of them has.

Aggregating each categorical quasi-identifier on its own (median or mode per attribute, ``003``
§5.3-5.4) can publish, for a group, a combination of categories that no record of the group
has (issue 13; sdcMicro issue #245): the group {(high, green), (low, red)} gets the median
``low`` and the mode ``green``. ``categorical_aggregate=joint``
(:func:`microgui.core.table.aggregate.joint_categorical`) never does.

:func:`invented_combinations` counts the groups whose released categorical combination, over
every categorical (ordinal and nominal) quasi-identifier, is absent from the group's original
records. A released value that is not a category of its column (a generalization such as ``*``
or ``{a, b}``, written by a generalization method) names a set of categories and invents no
single one: that column is left out of the combination for that record. A group whose records
were released with different combinations counts once if any of them is absent. With one
categorical quasi-identifier the "combination" is one value (only a convex median, ``003``
Definition 5.3, can be absent); with none the count is 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from microgui.core.metrics.risk import unique_rows
from microgui.core.table.dataset import MISSING_CATEGORY, QIMatrix, is_missing

__all__ = ["invented_combinations", "released_codes", "count_invented"]


def _key(value: object) -> str:
    # as microgui.core.table.dataset matches ordinal values against their order: 3.0 is "3"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def released_codes(protected: pd.DataFrame, qi: QIMatrix) -> np.ndarray:
    """(n, c) codes of the released categorical quasi-identifiers, in the original's coding
    (ordinal ranks, then nominal codes, as in ``qi``); -1 where a released value is not a
    category of its column (a generalization)."""
    n = len(protected)
    cols: list[np.ndarray] = []
    lookups: list[tuple[str, dict[object, int], dict[str, int]]] = []
    for j, col in enumerate(qi.ordinal_names):
        rank = {v: i for i, v in enumerate(qi.ordinal_orders[j])}
        lookups.append((col, {}, rank))
    for j, col in enumerate(qi.nominal_names):
        index: dict[object, int] = {}
        by_text: dict[str, int] = {}
        for i, c in enumerate(qi.nominal_categories[j]):
            index.setdefault(c, i)
            by_text.setdefault(_key(c), i)
        lookups.append((col, index, by_text))
    for col, index, by_text in lookups:
        # each distinct released value is looked up once
        codes, uniques = pd.factorize(protected[col], use_na_sentinel=False)
        table = np.full(len(uniques), -1, dtype=np.int64)
        for u, value in enumerate(uniques.tolist()):
            code = index.get(value)
            table[u] = code if code is not None else by_text.get(_key(value), -1)
        if MISSING_CATEGORY in by_text and len(uniques):
            # missing cells as a category: a release read back from a file holds NaN there
            unknown = (table < 0) & is_missing(pd.Series(uniques, dtype=object))
            table[unknown] = by_text[MISSING_CATEGORY]
        cols.append(table[np.asarray(codes, dtype=np.int64)])
    return np.column_stack(cols) if cols else np.empty((n, 0), dtype=np.int64)


def count_invented(original: np.ndarray, released: np.ndarray, groups: np.ndarray) -> int:
    """The number of groups with a record whose released combination no record of its group
    has (columns where the released code is -1 are left out of that record's combination).

    Parameters
    ----------
    original, released
        (n, c) int codes (>= 0; ``released`` may hold -1), rows aligned.
    groups
        (n,) group of each record (any integers).
    """
    original = np.asarray(original, dtype=np.int64)
    released = np.asarray(released, dtype=np.int64)
    n, c = original.shape
    if c == 0 or n == 0:
        return 0
    _, g = np.unique(np.asarray(groups).reshape(-1), return_inverse=True)
    g = g.reshape(-1).astype(np.int64)
    invented = np.zeros(int(g.max()) + 1, dtype=bool)
    wild = released < 0
    # one pass per pattern of left-out columns (in practice one or a few patterns)
    patterns, _, which, _ = unique_rows(wild)
    which = which.reshape(-1)
    for p, pattern in enumerate(patterns):
        keep = np.flatnonzero(~pattern)
        rows = np.flatnonzero(which == p)
        if not len(keep):
            continue  # everything generalized: nothing specific was published
        # (group, combination) of every original record and of the released records
        orig = np.column_stack([g, original[:, keep]])
        rel = np.column_stack([g[rows], released[np.ix_(rows, keep)]])
        _, _, inv, _ = unique_rows(np.vstack([orig, rel]))
        inv = inv.reshape(-1)
        seen = np.zeros(int(inv.max()) + 1, dtype=bool)
        seen[inv[:n]] = True
        absent = ~seen[inv[n:]]
        invented[g[rows[absent]]] = True
    return int(invented.sum())


def invented_combinations(
    protected: pd.DataFrame, qi: QIMatrix, groups: np.ndarray | None = None
) -> int:
    """Groups of ``protected`` whose released categorical combination none of their original
    records has (module docstring).

    Parameters
    ----------
    protected
        The release, rows aligned with the original ``qi`` was prepared from.
    qi
        The original's quasi-identifiers (:func:`microgui.core.table.dataset.prepare_qi`).
    groups
        The run's partition (one label per record); None: the groups of records with identical
        released quasi-identifiers (what an intruder sees).
    """
    n_cat = len(qi.ordinal_names) + len(qi.nominal_names)
    if n_cat == 0 or len(protected) == 0:
        return 0
    if groups is None:
        names = list(qi.names)
        groups = (
            protected.groupby(names, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
        )
    original = np.hstack([qi.ordinal, qi.nominal])
    return count_invented(original, released_codes(protected, qi), groups)
