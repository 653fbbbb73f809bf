"""Individual ranking microaggregation and its differentially private release.

Sulekha & Arumugam, ``002_f464918b99c38812.txt`` §3.1.2 (univariate microaggregation of several
variables "considered independently in turn") and §4.17 (individual ranking, and the
differentially private release of Sánchez, Domingo-Ferrer, Martínez & Soria-Comas,
"Utility-preserving differentially private data releases via individual ranking
microaggregation", Information Fusion 30, 2016; arXiv:1512.02897).

**Individual ranking** (``002`` §4.17, step 1). Each continuous quasi-identifier is treated on its
own: its values are sorted, cut into groups of k consecutive values, and every value is replaced
by its group's mean. Each attribute gets its own partition.

- *Order and ties.* Values are sorted ascending; equal values keep row order (a stable sort), so
  the partition does not depend on anything but the data and the row order.
- *Remainder rule.* With n = q·k + r (0 <= r < k) the first q-1 groups hold exactly k values and
  the last (largest) group holds k + r, i.e. k..2k-1 values: the fixed-size rule of ``002``
  §3.1.1 ("groups with k values but one cluster which has a size between k and 2k-1"). Every
  group has at least k values, which the sensitivity Δ(A)/k of the DP release needs.

**Not k-anonymity.** Each attribute is k-anonymous on its own, but records are grouped differently
per attribute, so the *combination* of protected values can be unique (``002`` §3.1.2: only
multivariate microaggregation gives k-anonymity automatically). Individual ranking is a masking
method. The run therefore does not use the shared aggregation step (``aggregates=False``): it
returns its own protected values, the report says ``k_anonymity_guaranteed: false`` with a
note, and the export check (:func:`microgui.core.release.check.check_export`) refuses the table unless
the user overrides it — which is the intended behaviour.

**Labels.** The run's partition (``labels``) is the partition *induced by the combination* of the
per-attribute groups: two records share a label exactly when they fall in the same group for
every attribute (so they get identical protected values). Labels are numbered in order of first
appearance in row order. Groups of this partition may be smaller than k, down to single records;
the report's ``min_group_size`` shows it.

**Differentially private release** (``dp-individual-ranking``, ``002`` §4.17 step 2). After
individual ranking, Laplace noise is added independently to each attribute A_i with scale
Δ(A_i)/(k·ε_i), Δ(A_i) = max - min of the attribute (its range), and *one draw per group*: "the
same noise perturbation is used on all repeated centroid values within each cluster". Why Δ/k
(the survey's Δ(A_i^M) = Δ(A_i)/k): changing one record moves its value from rank p to rank p'
(say p < p'); every sorted position from p to p' then holds a value at least as large as
before, and the increases add up (telescope) to the record's own change, at most Δ(A_i). Each
group mean moves by its share of that over its size (at least k), all in the same direction, so
the L1 change of all the group means of one attribute together is at most Δ(A_i)/k.

*How ε splits across attributes* (parameter ``epsilon_scope``; the survey writes the scale as
Δ(A_i)/(k·ε) and leaves this open):

- ``release`` (default): ``epsilon`` is the budget of the whole release. A record contributes to
  every attribute, so by sequential composition the m attributes share it: ε_i = ε/m and the
  scale is m·Δ(A_i)/(k·ε). This agrees with Sánchez et al.'s abstract: the noise "does not
  depend on the size of the data set, but just on the number of attributes".
- ``attribute``: every attribute gets the full ``epsilon`` (the survey's formula taken
  literally); the release as a whole is then (m·ε)-differentially private, which the report
  states.

With one attribute both readings coincide. Two caveats, stated in the report as well: Δ(A_i) is
taken from the data (its observed range: the survey gives no other source for it); a strict DP
guarantee needs range bounds that are public knowledge, not derived from the records. Noisy
values are not clipped to the range.

Randomness comes only from the run's generator (``--seed``): attributes in column order, groups
in ascending order of their values.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.kernels import check_k
from microgui.core.metrics.risk import unique_rows
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.references import readable
from microgui.core.table.dataset import numeric_column
from microgui.core.table.roles import AttributeKind

__all__ = [
    "individual_ranking",
    "combined_labels",
    "laplace_scales",
    "dp_noise",
    "INDIVIDUAL_RANKING",
    "DP_INDIVIDUAL_RANKING",
]

_NOTE = readable(
    "Individual ranking microaggregates each attribute separately: every attribute is k-anonymous "
    "on its own, but the combination of quasi-identifiers is not, so this table is not "
    "k-anonymous. It is a masking method (002 §3.1.2, §4.17); the export check refuses it unless "
    "overridden."
)


def individual_ranking(
    values: npt.ArrayLike, k: int, *, progress: ProgressFn = no_progress
) -> tuple[np.ndarray, np.ndarray]:
    """Individual ranking microaggregation (``002`` §3.1.2, §4.17 step 1).

    Parameters
    ----------
    values
        (n, m) array; each column is microaggregated on its own.
    k
        Group size, 2 <= k <= n.
    progress
        Progress function (called once per attribute); may raise ``RunCancelled``.

    Returns
    -------
    protected, groups
        ``protected``: (n, m) float64, each value replaced by the mean of its group;
        ``groups``: (n, m) int64, the group of each value within its attribute, numbered
        0..q-1 in ascending order of the values. Groups hold k consecutive values in sorted order
        (ties in row order); the last group also takes the n mod k largest values.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("values must be an (n, m) array")
    n, m = x.shape
    k = check_k(k, n)
    q = n // k
    # Rank -> group: 0,...,0 (k), 1,...,1 (k), ..., q-1 (k + n mod k).
    rank_group = np.minimum(np.arange(n) // k, q - 1)
    protected = np.empty_like(x)
    groups = np.empty((n, m), dtype=np.int64)
    for j in range(m):
        progress(j / max(m, 1), "ranking attributes")
        order = np.argsort(x[:, j], kind="stable")
        groups[order, j] = rank_group
        sums = np.bincount(rank_group, weights=x[order, j], minlength=q)
        counts = np.bincount(rank_group, minlength=q)
        protected[:, j] = (sums / counts)[groups[:, j]]
    progress(1.0, "ranking attributes")
    return protected, groups


def combined_labels(groups: npt.ArrayLike) -> np.ndarray:
    """The partition induced by per-attribute groups: one label per distinct combination.

    Labels are numbered 0..g-1 in order of first appearance in row order.
    """
    g = np.asarray(groups, dtype=np.int64)
    if g.shape[1] == 0:
        return np.zeros(g.shape[0], dtype=np.int64)
    _, first, inverse, _ = unique_rows(g)  # np.unique(axis=0) holds the GIL (issue 17)
    inverse = inverse.reshape(-1)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return np.asarray(rank[inverse], dtype=np.int64)


def laplace_scales(
    values: npt.ArrayLike, k: int, epsilon: float, scope: str = "release"
) -> tuple[np.ndarray, np.ndarray, float]:
    """Laplace scales of the DP release (``002`` §4.17 step 2).

    Returns ``(scales, ranges, epsilon_per_attribute)``: scale_i = Δ(A_i)/(k·ε_i) with
    Δ(A_i) = max - min of column i and ε_i = ε/m (``scope="release"``) or ε
    (``scope="attribute"``); see the module docstring.
    """
    x = np.asarray(values, dtype=np.float64)
    if not epsilon > 0 or not np.isfinite(epsilon):
        raise InvalidParameter(f"epsilon={epsilon} must be a positive number (e.g. 1.0)")
    if scope not in ("release", "attribute"):
        raise InvalidParameter(f"epsilon_scope={scope!r} must be release or attribute")
    m = x.shape[1]
    ranges = x.max(axis=0) - x.min(axis=0) if x.shape[0] else np.zeros(m)
    per_attribute = epsilon / m if scope == "release" else float(epsilon)
    with np.errstate(over="ignore"):
        scales = ranges / (k * per_attribute)
    if not np.isfinite(scales).all():
        raise InvalidParameter(
            f"epsilon={epsilon} is so small that the Laplace noise has no finite scale; "
            "give a larger epsilon (e.g. 0.01 or more)"
        )
    return scales, ranges, float(per_attribute)


def dp_noise(groups: npt.ArrayLike, scales: npt.ArrayLike, rng: np.random.Generator) -> np.ndarray:
    """Laplace noise, one draw per (attribute, group), repeated on the group's records.

    Draw order: attributes in column order, groups 0..q-1 (ascending values) within each.
    """
    g = np.asarray(groups, dtype=np.int64)
    b = np.asarray(scales, dtype=np.float64)
    noise = np.empty(g.shape, dtype=np.float64)
    for j in range(g.shape[1]):
        q = int(g[:, j].max()) + 1 if g.shape[0] else 0
        draws = rng.laplace(0.0, b[j], size=q) if b[j] > 0 else np.zeros(q)
        noise[:, j] = draws[g[:, j]]
    return noise


def _original(inp: MethodInput) -> np.ndarray:
    """The continuous quasi-identifiers in their own units, as read (not rebuilt from z-scores)."""
    names = inp.qi.continuous_names
    n = inp.dataset.n_records
    columns = [numeric_column(inp.dataset.frame, c) for c in names]
    return np.column_stack(columns).reshape(n, len(names)) if columns else np.empty((n, 0))


def _frame(inp: MethodInput, values: np.ndarray) -> pd.DataFrame:
    names = list(inp.qi.continuous_names)
    return pd.DataFrame(values, columns=names, index=inp.dataset.frame.index)


def _run_individual_ranking(inp: MethodInput) -> MethodOutput:
    original = _original(inp)
    protected, groups = individual_ranking(original, inp.k, progress=inp.progress)
    names = inp.qi.continuous_names
    extra = {
        "k_anonymity_guaranteed": False,
        "note": _NOTE,
        "groups_per_attribute": {c: int(groups[:, j].max()) + 1 for j, c in enumerate(names)},
        "partition": "combination of the per-attribute groups (may have groups smaller than k)",
    }
    return MethodOutput(
        labels=combined_labels(groups), protected_qi=_frame(inp, protected), extra=extra
    )


def _run_dp_individual_ranking(inp: MethodInput) -> MethodOutput:
    original = _original(inp)
    epsilon = float(inp.params.get("epsilon", 1.0))
    scope = str(inp.params.get("epsilon_scope", "release"))
    scales, ranges, per_attribute = laplace_scales(original, inp.k, epsilon, scope)
    protected, groups = individual_ranking(original, inp.k, progress=inp.progress)
    protected = protected + dp_noise(groups, scales, inp.rng)
    names = inp.qi.continuous_names
    m = len(names)
    total = epsilon if scope == "release" else epsilon * m
    extra = {
        "k_anonymity_guaranteed": False,
        "note": _NOTE + " Laplace noise is added for differential privacy.",
        "epsilon": epsilon,
        "epsilon_scope": scope,
        "epsilon_per_attribute": per_attribute,
        "epsilon_total": total,
        "attribute_range": {c: float(ranges[j]) for j, c in enumerate(names)},
        "laplace_scale": {c: float(scales[j]) for j, c in enumerate(names)},
        "differential_privacy": (
            f"{total:g}-differential privacy of the release by sequential composition over "
            f"{m} attribute(s), Laplace scale Δ(A)/(k·ε_i) per attribute with one draw per "
            "group; Δ(A) is the observed range of each attribute, so the guarantee holds only "
            "if those ranges are public knowledge"
        ),
        "groups_per_attribute": {c: int(groups[:, j].max()) + 1 for j, c in enumerate(names)},
        "partition": "combination of the per-attribute groups (may have groups smaller than k)",
    }
    return MethodOutput(
        labels=combined_labels(groups), protected_qi=_frame(inp, protected), extra=extra
    )


_CITATION = "002_f464918b99c38812.txt §3.1.2 and §4.17"

INDIVIDUAL_RANKING = register(
    Method(
        name="individual-ranking",
        title="Individual ranking",
        summary="Each attribute microaggregated on its own in sorted groups of k (002 §3.1.2, "
        "§4.17); masking, not k-anonymity",
        description=(
            "Sorts each continuous quasi-identifier separately, cuts it into groups of k "
            "consecutive values (the last group also takes the n mod k largest) and replaces "
            "every value by its group's mean (Sulekha & Arumugam, §3.1.2 and §4.17). Each "
            "attribute is k-anonymous on its own, but records are grouped differently per "
            "attribute, so the table as a whole is NOT k-anonymous: it is a masking method "
            "with low information loss, and the export check refuses it unless overridden."
        ),
        citation=_CITATION,
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_individual_ranking,
        aggregates=False,
        complexity="O(m·n log n): one sort per attribute",
        bench_sizes=(10_000, 50_000),
    )
)

DP_INDIVIDUAL_RANKING = register(
    Method(
        name="dp-individual-ranking",
        title="DP individual ranking",
        summary="ε-differentially private release: individual ranking plus Laplace noise of "
        "scale Δ(A)/(k·ε) (002 §4.17; Sánchez et al. 2016)",
        description=(
            "Individual ranking microaggregation, then Laplace noise added to each attribute "
            "with scale Δ(A)/(k·ε_i), one draw per group of k (Sánchez, Domingo-Ferrer, "
            "Martínez & Soria-Comas 2016, in Sulekha & Arumugam §4.17). Δ(A) is the attribute's "
            "range; by default ε is the budget of the whole release, shared equally by the "
            "attributes (epsilon_scope=attribute gives each attribute the full ε). Seeded by "
            "--seed. Not k-anonymous: the export check refuses it unless overridden."
        ),
        citation=_CITATION,
        kinds=frozenset({AttributeKind.CONTINUOUS}),
        run=_run_dp_individual_ranking,
        params=(
            ParamSpec(
                "epsilon",
                float,
                1.0,
                "Privacy budget ε > 0 (smaller: more noise).",
            ),
            ParamSpec(
                "epsilon_scope",
                str,
                "release",
                "release: ε is the budget of the whole release, ε/m per attribute (sequential "
                "composition); attribute: each attribute gets ε (the release is then m·ε-DP).",
                choices=("release", "attribute"),
            ),
        ),
        aggregates=False,
        complexity="O(m·n log n): one sort per attribute, one Laplace draw per group",
        bench_sizes=(10_000, 50_000),
    )
)
