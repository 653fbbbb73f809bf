"""Information loss over every quasi-identifier: IL = 100·SSE/SST in MDAV-generic's distance.

``information_loss`` (:mod:`microgui.core.metrics.information_loss`) measures the continuous
quasi-identifiers only; on a table with sex, education and region beside age it would say 0.6 %
while a sixth of the education values changed (issue 13). This module measures them all, in the
distance the mixed-data partition itself uses (``003_309fe4adb430bc25.txt`` §5.2-5.4, as
:mod:`microgui.core.methods.mdav` sums it)::

    d(x, y)^2 = sum_continuous (z_x - z_y)^2                    z-scores, §5.2
              + sum_ordinal   d_ORD(x, y)^2                     |rank(x) - rank(y)| / |D(V)|, §5.3 eq. 1
              + sum_nominal   [x != y]                          equality distance, §5.4

    SSE = sum_records d(x, x')^2        x' the released record
    SST = sum_records d(x, x~)^2        x~ the overall average record of the original data:
                                        mean (continuous), median (ordinal), mode (nominal)
    IL  = 100 · SSE / SST  (%; 0 when SST = 0, nothing to lose)

Reading of what the paper leaves open (``003`` defines the distance and the average operators,
§5.2-5.4, but reports no SSE/SST for categorical data: §6.2 uses Dist, CTBIL', EBIL):

- SST is the same sum of squared distances as SSE, around the average record the paper names for
  each kind (mean, median, mode). This is the "all records in one group" loss: releasing the
  overall average record everywhere gives IL = 100 %, as it does for continuous data.
- The ordinal average of SST is always the *median* (Definition 5.2, lower median on even counts,
  :func:`microgui.core.table.aggregate.ordinal_median`), never the convex median even for a run with
  ``ordinal_average=convex-median``: SST is then a property of the data alone, so every run on the
  same data shares one denominator and their losses can be compared (R-U map, sweeps).
- Ties follow :mod:`microgui.core.table.aggregate`: lower median, smallest most frequent code.
- The sum weighs attributes as the partition does: a continuous attribute contributes about
  n - 1 to SST (variance 1), a nominal one the number of records off its mode, an ordinal one
  little (d_ORD <= 1 - 1/|D(V)|, squared). The per-attribute breakdown
  (:func:`information_loss_by_attribute`) shows each attribute's own SSE/SST.
- The median minimises absolute, not squared, rank differences, so with ordinal attributes an IL
  above 100 % is possible in principle; with continuous and nominal attributes only it is not
  (the mean and the mode minimise their sums).

With only continuous quasi-identifiers the continuous terms are computed by
:func:`~microgui.core.metrics.information_loss.sse` and
:func:`~microgui.core.metrics.information_loss.sst` on the same arrays, and the categorical sums
are 0.0, so the result equals ``information_loss`` exactly (bit for bit).

**Generalized columns** (mstk, a release that writes ``[20-30]``, ``1305*``, ``Person`` or a
suppression mark). A column is *generalized* when one of its released values is not a value of
the original's domain: not a finite number (continuous), not a category of the declared order
(ordinal), not one of the original categories (nominal). Each record's released point x' in that
column is then the *representative of its released value*: the average (mean, lower median, mode
of ``003`` §5.2-5.4) of the original values of all records released with that same value. A
value left ungeneralized (the class holds one original value) costs 0; ``*`` released everywhere
gives exactly that column's SST (100 %); and since the mean and the mode minimise their sums over
the records of each released value, a generalized continuous or nominal column never loses less
than microaggregating the same classes would. The number is therefore comparable with the
microaggregation methods' on the R-U map. It needs no hierarchy, so ``evaluate`` measures a
generalized file made by another tool the same way.

Per attribute (:func:`information_loss_by_attribute`), a dict of measures by column:

- every kind: ``kind``, ``generalized`` (bool), ``sse`` and ``sst`` (the attribute's terms of the
  sums above) and ``information_loss`` = 100·sse/sst (%);
- ordinal and nominal columns also: ``changed_percent`` (share of records whose released value
  differs from the original), and ``003`` §6.2's measures restricted to the attribute (the
  functions of :mod:`microgui.core.metrics.utility`): ``dist`` (Σ d(v, v'), d_ORD or equality;
  None for a generalized ordinal column, whose released labels have no rank), ``ctbil`` (CTBIL'
  of the attribute's own one-way table) and ``ebil`` (Σ H(V | V' = v'), bits).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microgui.core.metrics.information_loss import sse, sst
from microgui.core.metrics.utility import ctbil, dist_il, ebil
from microgui.core.references import readable
from microgui.core.table.aggregate import mode, ordinal_median, protected_continuous_z
from microgui.core.table.dataset import MISSING_CATEGORY, Dataset, QIMatrix, prepare_qi
from microgui.core.table.hierarchy import value_key

__all__ = [
    "AttributeLoss",
    "MixedLoss",
    "mixed_information_loss",
    "information_loss_all_qi",
    "information_loss_by_attribute",
    "ALL_QI_BASIS",
]

#: One attribute's measures: ``kind`` (str), ``generalized`` (bool), numbers (None: undefined).
AttributeLoss = dict[str, float | int | str | bool | None]

#: What ``information_loss_all_qi`` is computed on, in words (the run report's basis).
ALL_QI_BASIS = readable(
    "every quasi-identifier in MDAV-generic's distance (003 §5.2-5.4: z-scores, d_ORD, "
    "equality), SST around the overall mean / median / mode"
)

#: A missing released cell is matched as the original's missing category (issue 13,
#: ``missing_as_category``), and all missing cells alike when there is none.
_MISSING = MISSING_CATEGORY


@dataclass(frozen=True)
class MixedLoss:
    """SSE, SST and IL over every quasi-identifier (module docstring) and the breakdown."""

    sse: float
    sst: float
    #: 100·SSE/SST in percent; None when a sum is not finite (values too large to square).
    information_loss: float | None
    by_attribute: dict[str, AttributeLoss] = field(default_factory=dict)
    #: Columns measured through the representative of their released values (generalized).
    generalized: tuple[str, ...] = ()

    @property
    def basis(self) -> str:
        """The report's ``information_loss_all_qi_basis``."""
        if not self.generalized:
            return ALL_QI_BASIS
        return (
            f"{ALL_QI_BASIS}; generalized column(s) {', '.join(self.generalized)} measured "
            "against the average of the records released with the same value"
        )


def _keys(values: Sequence[object]) -> list[str]:
    """How released cells are matched: their text (3.0 as 3), every missing cell alike."""
    return [_MISSING if _is_missing(v) else value_key(v) for v in values]


def _is_missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):  # list-like cells
        return False


def _released(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(code per record, keys): the distinct released values of a column by :func:`_keys`
    (factorized first, so each distinct value is keyed once)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    key_codes, keys = pd.factorize(pd.Series(_keys(list(uniques)), dtype=object))
    out: np.ndarray = np.asarray(key_codes, dtype=np.int64)[np.asarray(codes, dtype=np.int64)]
    return out, [str(k) for k in keys]


def _class_mean(z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per record, the mean of ``z`` over the records with the same label."""
    m = int(labels.max()) + 1 if len(labels) else 0
    counts = np.bincount(labels, minlength=m).astype(np.float64)
    out: np.ndarray = (np.bincount(labels, weights=z, minlength=m) / counts)[labels]
    return out


def _class_lower_median(ranks: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per record, the lower median rank (``003`` Definition 5.2) of its label's records."""
    m = int(labels.max()) + 1 if len(labels) else 0
    order = np.lexsort((ranks, labels))
    counts = np.bincount(labels, minlength=m)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # the smallest rank whose cumulative count reaches half: position ceil(count/2) - 1
    median = ranks[order][starts + (counts + 1) // 2 - 1]
    out: np.ndarray = median[labels]
    return out


def _class_mode(codes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per record, the most frequent code of its label's records (ties: smallest code)."""
    width = int(codes.max()) + 1 if len(codes) else 1
    pairs, counts = np.unique(labels * width + codes, return_counts=True)
    lab, code = pairs // width, pairs % width
    order = np.lexsort((code, -counts, lab))
    first = order[np.r_[True, lab[order][1:] != lab[order][:-1]]]
    m = int(labels.max()) + 1 if len(labels) else 0
    best = np.empty(m, dtype=np.int64)
    best[lab[first]] = code[first]
    out: np.ndarray = best[labels]
    return out


def _union_codes(
    labels: np.ndarray, keys: Sequence[str], categories: Sequence[object]
) -> tuple[np.ndarray, int]:
    """Released values as codes: a category's own code (matched by :func:`_keys`), new codes
    from ``len(categories)`` on for the rest; and the size of that joint domain."""
    index: dict[str, int] = {}
    for code, key in enumerate(_keys(categories)):
        index.setdefault(key, code)
    size = len(categories)
    mapped = np.empty(len(keys), dtype=np.int64)
    extra = 0
    for i, key in enumerate(keys):
        known = index.get(key)
        if known is None:
            known = size + extra
            extra += 1
        mapped[i] = known
    out: np.ndarray = mapped[labels]
    return out, size + extra


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def _categorical_measures(
    original: np.ndarray, released: np.ndarray, domain: int, ordinal_size: int | None, ranked: bool
) -> AttributeLoss:
    """Changed share, Dist, CTBIL' and EBIL of one categorical attribute (codes in one domain;
    ``ranked``: every released code is a rank, so d_ORD and hence Dist are defined)."""
    x, y = original.reshape(-1, 1), released.reshape(-1, 1)
    n = len(original)
    dist = dist_il(x, y, [ordinal_size]) if ranked else None
    return {
        "changed_percent": _percent(float(np.count_nonzero(original != released)), n),
        "dist": dist,
        "ctbil": ctbil(x, y, [domain], max_dim=1)[0] if n else 0.0,
        "ebil": ebil(x, y) if n else 0.0,
    }


def mixed_information_loss(
    original: Dataset | QIMatrix,
    protected: pd.DataFrame,
    *,
    protected_z: np.ndarray | None = None,
) -> MixedLoss:
    """SSE, SST, IL = 100·SSE/SST over every quasi-identifier and the per-attribute breakdown.

    Parameters
    ----------
    original
        The dataset before protection (or its :func:`~microgui.core.table.dataset.prepare_qi` matrix).
    protected
        The release: the quasi-identifier columns, rows in the original's order.
    protected_z
        The released continuous quasi-identifiers on the original's z-scale, as the caller
        computed them for ``information_loss`` (so that both agree exactly); by default
        :func:`microgui.core.table.aggregate.protected_continuous_z`. A column with a value that is not
        a finite number is measured as generalized (module docstring).
    """
    qi = original if isinstance(original, QIMatrix) else prepare_qi(original)
    n = qi.n
    if len(protected) != n:
        raise ValueError(f"the protected table has {len(protected)} rows, the original {n}")
    by_attribute: dict[str, AttributeLoss] = {}
    generalized: list[str] = []

    # continuous: the released z-scores, or the class mean of a generalized column
    cont_sse = cont_sst = 0.0
    if qi.continuous_names:
        z = np.asarray(
            protected_z if protected_z is not None else protected_continuous_z(protected, qi),
            dtype=np.float64,
        )
        if z.shape != qi.continuous.shape:
            raise ValueError(
                f"protected_z has shape {z.shape}, the continuous quasi-identifiers "
                f"{qi.continuous.shape}"
            )
        released = z
        for j, col in enumerate(qi.continuous_names):
            if bool(np.isfinite(z[:, j]).all()):
                continue
            if released is z:
                released = z.copy()
            labels, _ = _released(protected[col])
            released[:, j] = _class_mean(qi.continuous[:, j], labels)
            generalized.append(col)
        cont_sse = sse(qi.continuous, released)
        cont_sst = sst(qi.continuous)
        for j, col in enumerate(qi.continuous_names):
            a_sse = sse(qi.continuous[:, j : j + 1], released[:, j : j + 1])
            a_sst = sst(qi.continuous[:, j : j + 1])
            by_attribute[col] = {
                "kind": "continuous",
                "generalized": col in generalized,
                "sse": a_sse,
                "sst": a_sst,
                "information_loss": _percent(a_sse, a_sst) if math.isfinite(a_sse) else None,
            }

    # ordinal: d_ORD = rank difference / |D(V)|, squared
    ord_sse = ord_sst = 0.0
    for j, col in enumerate(qi.ordinal_names):
        order = qi.ordinal_orders[j]
        size = len(order)
        ranks = qi.ordinal[:, j]
        labels, keys = _released(protected[col])
        codes, domain = _union_codes(labels, keys, order)
        is_generalized = bool((codes >= size).any())
        if is_generalized:
            point = _class_lower_median(ranks, labels)
            generalized.append(col)
        else:
            point = codes
        a_sse = float((((ranks - point) / size) ** 2).sum())
        centre = ordinal_median(ranks, size) if n else 0
        a_sst = float((((ranks - centre) / size) ** 2).sum())
        ord_sse += a_sse
        ord_sst += a_sst
        by_attribute[col] = {
            "kind": "ordinal",
            "generalized": is_generalized,
            "sse": a_sse,
            "sst": a_sst,
            "information_loss": _percent(a_sse, a_sst),
            **_categorical_measures(ranks, codes, domain, size, not is_generalized),
        }

    # nominal: equality distance
    nom_sse = nom_sst = 0.0
    for j, col in enumerate(qi.nominal_names):
        cats = qi.nominal_categories[j]
        values = qi.nominal[:, j]
        labels, keys = _released(protected[col])
        codes, domain = _union_codes(labels, keys, cats)
        is_generalized = bool((codes >= len(cats)).any())
        if is_generalized:
            point = _class_mode(values, labels)
            generalized.append(col)
        else:
            point = codes
        a_sse = float(np.count_nonzero(values != point))
        centre = mode(values, len(cats)) if n else 0
        a_sst = float(np.count_nonzero(values != centre))
        nom_sse += a_sse
        nom_sst += a_sst
        by_attribute[col] = {
            "kind": "nominal",
            "generalized": is_generalized,
            "sse": a_sse,
            "sst": a_sst,
            "information_loss": _percent(a_sse, a_sst),
            **_categorical_measures(values, codes, domain, None, True),
        }

    # continuous first: with no categorical column the sums are the continuous ones, exactly
    total_sse = cont_sse + ord_sse + nom_sse
    total_sst = cont_sst + ord_sst + nom_sst
    il = 100.0 * total_sse / total_sst if total_sst > 0 else 0.0
    ordered = {c: by_attribute[c] for c in qi.names if c in by_attribute}
    return MixedLoss(
        sse=total_sse,
        sst=total_sst,
        information_loss=il if math.isfinite(il) else None,
        by_attribute=ordered,
        generalized=tuple(c for c in qi.names if c in generalized),
    )


def information_loss_all_qi(
    original: Dataset | QIMatrix,
    protected: pd.DataFrame,
    *,
    protected_z: np.ndarray | None = None,
) -> float | None:
    """IL = 100·SSE/SST in percent over every quasi-identifier (module docstring); equal to
    ``information_loss`` when every quasi-identifier is continuous."""
    return mixed_information_loss(original, protected, protected_z=protected_z).information_loss


def information_loss_by_attribute(
    original: Dataset | QIMatrix,
    protected: pd.DataFrame,
    *,
    protected_z: np.ndarray | None = None,
) -> dict[str, AttributeLoss]:
    """Per quasi-identifier: its SSE/SST (%) and, for a categorical one, the share of changed
    values and ``003``'s Dist, CTBIL', EBIL (module docstring)."""
    return mixed_information_loss(original, protected, protected_z=protected_z).by_attribute
