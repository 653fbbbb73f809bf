"""Correlations and regressions of a release, original vs protected: one definition for the
command line (``microgui evaluate``), the measures (``evaluate``'s ``correlation_change_max``)
and the app's correlations view.

**Columns compared** (:func:`correlation_columns`): the continuous quasi-identifiers, then the
confidential columns (those not already listed), in the order of the roles; a column that is not
numbers in both tables (text in the original, generalized to ranges such as ``"[20, 30)"`` in
the release) is left out and :attr:`Correlations.skipped` says why. Ordinal and nominal
quasi-identifiers are categories, not quantities: they take no Pearson correlation.

**Missing values**: listwise deletion. A record with a missing (or infinite) value in any compared
column, in either table, is left out of every correlation, so that the original and the protected
correlations describe the same records and every pair the same records
(:func:`~microgui.core.metrics.utility.paired_numeric`); :attr:`Correlations.dropped_rows`
counts them. A constant column correlates 0 with every other
(:func:`~microgui.core.metrics.utility.correlation_change`).

A regression (:func:`fit_regression`) follows the same missing-value rule over the columns of
its model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.utility import correlation_change, paired_numeric, regression_change
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = [
    "Correlations",
    "Regression",
    "correlation_columns",
    "correlations",
    "fit_regression",
    "CORRELATION_TABLE_COLUMNS",
]

#: The columns of :attr:`Correlations.table`, one row per pair.
CORRELATION_TABLE_COLUMNS = ("column_a", "column_b", "original", "protected", "difference")


@dataclass(frozen=True)
class Correlations:
    """Pearson correlations of the compared columns, original vs protected.

    ``table`` is :func:`~microgui.core.metrics.utility.correlation_change` over ``columns`` (empty
    with fewer than two columns or two complete records); ``original`` and ``protected`` are the
    same correlations as matrices (identity where there is no pair); ``skipped``: why a column
    of :func:`correlation_columns` is not compared; ``dropped_rows``: the records left out for a
    missing value; ``n_records``: the records the correlations are computed on.
    """

    columns: tuple[str, ...]
    table: pd.DataFrame
    original: np.ndarray
    protected: np.ndarray
    skipped: Mapping[str, str] = field(default_factory=dict)
    dropped_rows: int = 0
    n_records: int = 0

    @property
    def largest_change(self) -> float | None:
        """The largest |protected − original| over the pairs (None without a pair)."""
        if self.table.empty:
            return None
        return float(self.table["difference"].abs().max())


def correlation_columns(roles: RoleMap) -> list[str]:
    """The columns whose correlations are compared: the continuous quasi-identifiers, then the
    confidential columns not already listed."""
    continuous = roles.qi_of_kind(AttributeKind.CONTINUOUS)
    return [*continuous, *(c for c in roles.confidential if c not in continuous)]


def correlations(original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap) -> Correlations:
    """The correlations of :func:`correlation_columns`, original vs protected, on the records
    complete in both tables (see the module docstring for the column and missing-value rules).
    Row i of ``protected`` is the protected version of row i of ``original``."""
    wanted = correlation_columns(roles)
    pair = paired_numeric(original, protected, wanted)
    names = pair.columns
    p = len(names)
    ro, rp = np.eye(p), np.eye(p)
    if p >= 2 and len(pair.original) >= 2:
        table = correlation_change(pair.original, pair.protected, names)
        index = {c: i for i, c in enumerate(names)}
        rows = zip(
            table["column_a"],
            table["column_b"],
            table["original"].to_numpy(dtype=np.float64),
            table["protected"].to_numpy(dtype=np.float64),
            strict=True,
        )
        for a, b, r_original, r_protected in rows:
            i, j = index[str(a)], index[str(b)]
            ro[i, j] = ro[j, i] = r_original
            rp[i, j] = rp[j, i] = r_protected
    else:
        table = pd.DataFrame(columns=list(CORRELATION_TABLE_COLUMNS))
    return Correlations(
        tuple(names),
        table,
        ro,
        rp,
        {c: why for c, why in pair.skipped.items() if c in wanted},
        pair.dropped_rows,
        len(pair.original),
    )


@dataclass(frozen=True)
class Regression:
    """An OLS model fitted on the original and on the protected table, on the records complete
    in both."""

    y: str
    xs: tuple[str, ...]
    #: :func:`~microgui.core.metrics.utility.regression_change` (R² in its ``attrs``).
    table: pd.DataFrame
    n_records: int
    dropped_rows: int

    @property
    def r_squared(self) -> tuple[float, float]:
        """R² of the fit on the original and on the protected table."""
        attrs = self.table.attrs
        return float(attrs["r_squared_original"]), float(attrs["r_squared_protected"])


def fit_regression(
    original: pd.DataFrame, protected: pd.DataFrame, y: str, xs: Sequence[str]
) -> Regression:
    """OLS of ``y`` on ``xs`` (with intercept) on the original and on the protected table, on
    the records complete in both.

    Raises :class:`InvalidParameter` naming the column when a model cannot be fitted (a
    generalized release, too few records, collinear explanatory variables).
    """
    xs = [str(x) for x in xs]
    if not xs:
        raise InvalidParameter("tick at least one explanatory variable")
    if y in xs:
        raise InvalidParameter(
            f"{y!r} is the dependent variable: it cannot also be an explanatory one"
        )
    pair = paired_numeric(original, protected, [y, *xs])
    if pair.skipped:
        column, why = next(iter(pair.skipped.items()))
        raise InvalidParameter(
            f"the regression cannot be fitted: {column!r} is {why}; a linear regression "
            "needs numbers in both tables (a run that microaggregates, e.g. mdav, keeps them)"
        )
    n = len(pair.original)
    if n <= len(xs) + 1:
        raise InvalidParameter(
            f"only {n} record(s) have a value in every column of the model: too few to fit "
            f"{len(xs) + 1} coefficients"
        )
    for side, frame in (("original", pair.original), ("protected", pair.protected)):
        design = np.column_stack([np.ones(n), frame[xs].to_numpy(dtype=np.float64)])
        if np.linalg.matrix_rank(design) < design.shape[1]:
            raise InvalidParameter(
                f"the explanatory variables {', '.join(xs)} are collinear (or one is "
                f"constant) in the {side} table: the coefficients are not determined; "
                "leave one out"
            )
    table = regression_change(pair.original, pair.protected, y, xs)
    return Regression(y, tuple(xs), table, n, pair.dropped_rows)
