"""What every microaggregation run must satisfy, and the random tables the methods' property tests
draw: one definition for the per-method test files (tests/core/methods/test_*.py).

The invariants are the brief's: every group has at least k records, the labels number the groups
0..g-1, rows are neither lost nor reordered, identifiers are dropped, columns that are not
quasi-identifiers come out identical, and the release is k-anonymous on its quasi-identifiers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from microgui.core.metrics import k_anonymity_level
from microgui.core.runs import RunResult
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
PASS = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
CONF = ColumnSpec(AttributeRole.CONFIDENTIAL, AttributeKind.CONTINUOUS)
IDENT = ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)

#: The column kinds :func:`continuous_column` draws by default.
KINDS = ("grid", "float", "constant")


@st.composite
def continuous_column(draw: st.DrawFn, n: int, kinds: Sequence[str] = KINDS) -> np.ndarray:
    """A float column of ``n`` values: ``grid`` (few distinct values: many ties and duplicate
    records), ``float`` (spread values), ``constant``, or ``clustered`` (tight clumps far apart)."""
    kind = draw(st.sampled_from(list(kinds)))
    if kind == "constant":
        return np.full(n, draw(st.floats(-1e3, 1e3, allow_nan=False)))
    if kind == "grid":
        return np.array(
            draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), dtype=np.float64
        )
    if kind == "clustered":
        centres = draw(st.lists(st.sampled_from([0.0, 100.0, 200.0]), min_size=n, max_size=n))
        jitter = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        return np.array(centres) + np.array(jitter, dtype=np.float64)
    values = draw(
        st.lists(
            st.floats(-1e4, 1e4, allow_nan=False, allow_subnormal=False), min_size=n, max_size=n
        )
    )
    return np.array(values)


def with_bystanders(
    draw: st.DrawFn, columns: dict[str, object], specs: dict[str, ColumnSpec], n: int, k: int
) -> tuple[pd.DataFrame, RoleMap, int]:
    """Duplicate some records outright, add a confidential, a non-confidential and an identifier
    column, and shuffle the row labels: the table a property test runs."""
    dup = draw(st.lists(st.integers(0, n - 1), max_size=n // 3))
    for target, source in enumerate(dup):
        for col in columns.values():
            col[target] = col[source]  # type: ignore[index]
    columns["salary"] = np.arange(n, dtype=np.float64) * 1.5
    columns["town"] = [f"t{i % 4}" for i in range(n)]
    columns["name"] = [f"person {i}" for i in range(n)]
    specs.update(salary=CONF, town=PASS, name=IDENT)
    order = draw(st.permutations(range(n)))
    frame = pd.DataFrame(columns, index=pd.Index([f"row{i}" for i in order]))
    return frame, RoleMap.from_dict(specs), k


@st.composite
def tables(
    draw: st.DrawFn, kinds: Sequence[str] = KINDS, max_n: int = 60
) -> tuple[pd.DataFrame, RoleMap, int]:
    """A table of k..max_n records with 1-3 continuous quasi-identifiers, and its k (2-5)."""
    k = draw(st.integers(2, 5))
    n = draw(st.integers(k, max_n))
    columns: dict[str, object] = {}
    specs: dict[str, ColumnSpec] = {}
    for j in range(draw(st.integers(1, 3))):
        columns[f"c{j}"] = draw(continuous_column(n, kinds))
        specs[f"c{j}"] = QI
    return with_bystanders(draw, columns, specs, n, k)


def group_sizes(labels: np.ndarray, k: int, *, at_most: int | None = None) -> np.ndarray:
    """The group sizes, checked: labels cover 0..g-1, every group has >= k records (and at most
    ``at_most`` when given: 2k-1 for the fixed-size methods)."""
    g = int(labels.max()) + 1
    assert set(np.unique(labels).tolist()) == set(range(g)), "labels must cover 0..g-1"
    sizes = np.bincount(labels)
    assert sizes.min() >= k
    if at_most is not None:
        assert sizes.max() <= at_most
    return sizes


def check_run(
    df: pd.DataFrame, roles: RoleMap, k: int, result: RunResult, *, at_most: int | None = None
) -> None:
    """The invariants of a run's release (see the module's docstring)."""
    group_sizes(result.labels, k, at_most=at_most)
    assert len(result.labels) == len(df)  # every record in exactly one group
    protected = result.protected
    assert list(protected.index) == list(df.index)  # rows neither lost nor reordered
    assert "name" not in protected.columns
    for col in ("salary", "town"):
        pd.testing.assert_series_equal(protected[col], df[col])
    assert k_anonymity_level(protected, roles.quasi_identifiers) >= k
    assert result.report["k_anonymity"] >= k
