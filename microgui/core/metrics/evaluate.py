"""Every utility and risk measure of a release, as one flat dict (issue 5).

``evaluate(original, protected)`` compares a protected table with the :class:`Dataset` it came
from: the Dataset gives the roles and kinds, ``protected`` holds the same columns minus the
identifiers, rows aligned. Measures that do not apply are None: no continuous quasi-identifier (or
continuous quasi-identifiers published as text, e.g. generalized to "[20-30]") → the continuous
measures are None; no categorical quasi-identifier → Dist, CTBIL', ACTBIL', EBIL and sample
uniques are None; no confidential column → l-diversity, p-sensitivity, t-closeness are None.

**Information loss names** (issue 13: one name per number). ``information_loss_all_qi`` ("IL",
the headline) is 100·SSE/SST over every quasi-identifier in MDAV-generic's distance (``003``
§5.2-5.4), generalized columns included: :mod:`microgui.core.metrics.mixed_loss`; it equals
``information_loss`` ("SSE/SST, continuous QIs", on the z-scores) when every quasi-identifier is
continuous. ``il`` ("IL1-5") is Domingo-Ferrer & Torra's 100·mean(IL1..IL5) (``003`` Table 2).
``information_loss_by_attribute`` (:data:`BREAKDOWNS`, not a number) gives each
quasi-identifier's own SSE/SST and, for categorical ones, the share of changed values, Dist,
CTBIL' (its one-way table) and EBIL.

Definitions and sources: :mod:`microgui.core.metrics.utility` (IL1-IL5, PIL, Dist, CTBIL',
EBIL), :mod:`microgui.core.metrics.risk` (record linkage, interval disclosure, re-identification,
entropy l-diversity, score), :mod:`microgui.core.metrics.privacy` (p-sensitivity, distinct
l-diversity, t-closeness). Every risk is in percent.

**Score** (``003`` §3.1, Domingo-Ferrer & Torra 2001b): score = w_il·IL + (1 − w_il)·DR, with

- IL the Domingo-Ferrer & Torra ``il`` when defined, else ``information_loss``, else
  (categorical quasi-identifiers only) ``dist_percent`` = 100·Dist/(records × categorical QIs);
- DR = w_id·interval disclosure + w_dbrl·distance-based linkage + w_prl·probabilistic linkage,
  Domingo-Ferrer & Torra's weights ½, ¼, ¼ (:data:`SCORE_WEIGHTS`: ``il`` ½, ``id`` ½, ``dbrl``
  ¼, ``prl`` ¼). ``id + dbrl + prl`` must be 1. When probabilistic linkage does not apply, the
  other two weights are rescaled to sum to 1. Without interval disclosure or distance-based
  linkage (no continuous quasi-identifier) DR is the mean re-identification risk.

Change the weights with ``evaluate(..., score_weights={"il": 0.6})`` (or ``w_il``) or
``microgui evaluate --score-weights il=0.6,id=0.5,dbrl=0.25,prl=0.25``
(:func:`parse_score_weights`).

**Probabilistic record linkage** (``probabilistic_record_linkage``): Fellegi–Sunter with m- and
u-probabilities by EM, candidate pairs blocked to the 10 nearest originals in the standardized
space of distance-based linkage; continuous attributes compared by rank distance, categorical ones
by equality: :mod:`microgui.core.metrics.linkage`.

**Invented combinations** (``invented_combinations``, issue 13): the groups whose released
combination of categorical quasi-identifiers none of their original records has
(:mod:`microgui.core.metrics.combinations`); groups are the run's partition when ``labels`` is
given, else the classes of identical released quasi-identifiers.

**Largest change of a correlation** (``correlation_change_max``): the largest |r' − r| over the
pairs of :func:`microgui.core.metrics.association.correlations` (continuous quasi-identifiers
and confidential columns numeric in both tables, on the records complete in both), the same
correlations ``microgui evaluate`` prints and the app's correlations view shows.

**Distributions and associations** (issue 29, :mod:`microgui.core.metrics.categorical_utility`):
``hellinger_max``/``hellinger_mean`` and ``total_variation_max`` over the frequency tables of
the quasi-identifiers and confidential columns (bins for numbers), ``association_change_max``/
``association_change_mean`` the |released − original| of the association matrix (Pearson,
Cramér's V, correlation ratio).

**Generalization measures** (``004`` §7, :mod:`microgui.core.metrics.generalization`, as in
``mstk``'s run report):
``dm`` = Σ |E|² over the equivalence classes of the released quasi-identifiers (always);
``cavg`` = records / (classes · k) when ``k`` is given; ``generalization_il`` (eqs. 6-9: the mean
over records of the summed per-attribute IL) over the quasi-identifiers given a hierarchy in
``hierarchies``, each released value read as a node of its hierarchy (a value, or a
generalization such as ``[20-30]`` or ``1305*``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.metrics.association import correlations
from microgui.core.metrics.categorical_utility import utility_summary
from microgui.core.metrics.combinations import invented_combinations
from microgui.core.metrics.disclosure import GroupMeasures
from microgui.core.metrics.generalization import (
    cavg,
    discernibility,
    generalization_information_loss,
)
from microgui.core.metrics.information_loss import information_loss
from microgui.core.metrics.kanonymity import Missing, k_anonymity_level
from microgui.core.metrics.linkage import probabilistic_record_linkage
from microgui.core.metrics.mixed_loss import AttributeLoss, mixed_information_loss
from microgui.core.metrics.risk import (
    entropy_l_diversity,
    interval_disclosure,
    record_linkage,
    reidentification_risk,
    sample_uniques,
    score,
    unique_rows,
)
from microgui.core.metrics.utility import (
    ctbil,
    dist_il,
    ebil,
    il_measures,
    pil_measures,
)
from microgui.core.metrics.weighted_risk import frequencies, individual_risk, risky_records
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.table.dataset import (
    MAX_ABS_VALUE,
    MISSING_CATEGORY,
    Dataset,
    QIMatrix,
    is_missing,
    numeric_column,
    prepare_qi,
    survey_weights,
)
from microgui.core.table.hierarchy import Hierarchy, value_key
from microgui.core.table.roles import AttributeKind, RoleMap

__all__ = [
    "MEASURES",
    "BREAKDOWNS",
    "Measures",
    "LOWER",
    "HIGHER",
    "SCORE_WEIGHTS",
    "evaluate",
    "measure_label",
    "parse_score_weights",
    "score_weights_of",
]

LOWER: Final = "lower is better"
HIGHER: Final = "higher is better"

#: key -> (label, unit, direction, group) for the app's tables and charts.
MEASURES: Final[dict[str, tuple[str, str, str, str]]] = {
    # One name per number (issue 13): "IL" alone is the headline over every quasi-identifier;
    # the continuous-only SSE/SST and Domingo-Ferrer & Torra's IL1-5 mean keep their own names.
    "information_loss_all_qi": (
        "IL, all QIs (100·SSE/SST)",
        "%",
        LOWER,
        "utility",
    ),
    "information_loss": ("SSE/SST, continuous QIs = 100·SSE/SST (z-scores)", "%", LOWER, "utility"),
    "il1": ("IL1 (values)", "", LOWER, "utility"),
    "il1s": ("IL1s (values, scaled by √2·S)", "", LOWER, "utility"),
    "il2": ("IL2 (means)", "", LOWER, "utility"),
    "il3": ("IL3 (variances)", "", LOWER, "utility"),
    "il4": ("IL4 (covariances)", "", LOWER, "utility"),
    "il5": ("IL5 (correlations)", "", LOWER, "utility"),
    "il": ("IL1-5 = 100·mean(IL1..IL5) (003 Table 2)", "", LOWER, "utility"),
    "pil_quantiles": ("PIL(Q) quantiles", "", LOWER, "utility"),
    "pil_means": ("PIL(m1) means", "", LOWER, "utility"),
    "pil_variances": ("PIL(m2) variances", "", LOWER, "utility"),
    "pil_covariances": ("PIL(m11) covariances", "", LOWER, "utility"),
    "pil_correlations": ("PIL(r) correlations", "", LOWER, "utility"),
    "pil": ("PIL = 100·mean of the five", "%", LOWER, "utility"),
    "correlation_change_max": ("largest change of a correlation", "", LOWER, "utility"),
    # categorical and mixed utility (issue 29, microgui.core.metrics.categorical_utility): each
    # quasi-identifier's and confidential column's frequency table, original vs released
    "hellinger_max": ("Hellinger distance of a distribution, largest", "", LOWER, "utility"),
    "hellinger_mean": ("Hellinger distance of the distributions, mean", "", LOWER, "utility"),
    "total_variation_max": ("total variation of a distribution, largest", "", LOWER, "utility"),
    # association matrix: Pearson (numbers), Cramér's V (categories), eta (mixed pairs)
    "association_change_max": (
        "largest change of an association (r, Cramér's V, eta)",
        "",
        LOWER,
        "utility",
    ),
    "association_change_mean": (
        "mean change of the associations (r, Cramér's V, eta)",
        "",
        LOWER,
        "utility",
    ),
    "dist": ("Dist (categorical distance)", "", LOWER, "utility"),
    "dist_percent": ("Dist per categorical value", "%", LOWER, "utility"),
    "ctbil": ("CTBIL' (contingency tables)", "", LOWER, "utility"),
    "actbil": ("ACTBIL' (per cell)", "", LOWER, "utility"),
    "ebil": ("EBIL (entropy, bits)", "bits", LOWER, "utility"),
    "record_linkage": ("distance-based record linkage", "%", LOWER, "risk"),
    "probabilistic_record_linkage": (
        "probabilistic record linkage (Fellegi-Sunter, EM)",
        "%",
        LOWER,
        "risk",
    ),
    "interval_disclosure": ("interval disclosure (p = 1..10 %)", "%", LOWER, "risk"),
    "reidentification_risk_max": ("re-identification risk, max", "%", LOWER, "risk"),
    "reidentification_risk_mean": ("re-identification risk, mean", "%", LOWER, "risk"),
    "sample_uniques": ("sample uniques (categorical keys)", "records", LOWER, "risk"),
    # with a survey weight column (issue 18; sdcMicro freqCalc/indivRisk/measure_risk): over
    # the released quasi-identifiers, Fk = the weights' sum of a combination
    "population_frequency_min": (
        "smallest estimated population frequency Fk (weights)",
        "units",
        HIGHER,
        "risk",
    ),
    "individual_risk_mean": ("individual risk, mean (indivRisk, weights)", "%", LOWER, "risk"),
    "individual_risk_max": ("individual risk, max (indivRisk, weights)", "%", LOWER, "risk"),
    "expected_reidentifications": (
        "expected re-identifications Σ rk (weights)",
        "records",
        LOWER,
        "risk",
    ),
    "risky_records": (
        "records at higher risk (rk > median + 2·MAD and > 0.1)",
        "records",
        LOWER,
        "risk",
    ),
    "k_anonymity": ("k-anonymity", "records", HIGHER, "risk"),
    "l_diversity": ("distinct l-diversity", "values", HIGHER, "risk"),
    "entropy_l_diversity": ("entropy l-diversity", "", HIGHER, "risk"),
    "p_sensitivity": ("p-sensitivity", "values", HIGHER, "risk"),
    "t_closeness": ("t-closeness (EMD)", "", LOWER, "risk"),
    # issue 29: the share the release's verdict names (the worst confidential attribute)
    "homogeneous_percent": (
        "records in groups with one confidential value (worst attribute)",
        "%",
        LOWER,
        "risk",
    ),
    "score": ("score = (IL1-5 + DR)/2 (003 §3.1)", "%", LOWER, "risk"),
    "dm": ("discernibility DM = Σ|E|²", "", LOWER, "utility"),
    "cavg": ("CAVG = n/(classes·k)", "", LOWER, "utility"),
    "generalization_il": ("generalization IL (004 eqs. 6-9)", "", LOWER, "utility"),
    "invented_combinations": ("invented categorical combinations", "groups", LOWER, "utility"),
    "n_groups": ("groups of the partition", "groups", HIGHER, "utility"),
    "min_group_size": ("smallest group of the partition", "records", HIGHER, "risk"),
}


#: Keys of :func:`evaluate` whose value is not one number but a breakdown (not in MEASURES):
#: ``information_loss_by_attribute`` maps each quasi-identifier to a dict of its measures
#: (:func:`microgui.core.metrics.mixed_loss.information_loss_by_attribute`).
BREAKDOWNS: Final = ("information_loss_by_attribute",)

#: What :func:`evaluate` returns: the numbers of MEASURES (None: does not apply) and BREAKDOWNS.
Measures = dict[str, float | int | None | dict[str, AttributeLoss]]

#: Weights of the score (``003`` §3.1; Domingo-Ferrer & Torra 2001b): ``il`` of IL in the score
#: (DR gets 1 − il); ``id``, ``dbrl``, ``prl`` of interval disclosure, distance-based and
#: probabilistic record linkage in DR (summing to 1).
SCORE_WEIGHTS: Final[Mapping[str, float]] = {"il": 0.5, "id": 0.5, "dbrl": 0.25, "prl": 0.25}


def score_weights_of(weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """:data:`SCORE_WEIGHTS` updated with ``weights``, validated.

    Raises :class:`InvalidParameter` for an unknown name, a weight outside [0, 1], or DR weights
    (``id``, ``dbrl``, ``prl``) that do not sum to 1.
    """
    out = dict(SCORE_WEIGHTS)
    for name, value in (weights or {}).items():
        if name not in SCORE_WEIGHTS:
            raise InvalidParameter(
                f"score weight {name!r} is unknown; use il (IL in the score), id (interval "
                "disclosure), dbrl (distance-based linkage), prl (probabilistic linkage)"
            )
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InvalidParameter(f"score weight {name}={value!r} is not a number") from None
        if not 0.0 <= number <= 1.0:
            raise InvalidParameter(f"score weight {name}={value} must lie between 0 and 1")
        out[name] = number
    dr = out["id"] + out["dbrl"] + out["prl"]
    if abs(dr - 1.0) > 1e-9:
        raise InvalidParameter(
            f"the disclosure-risk weights id={out['id']:g}, dbrl={out['dbrl']:g}, "
            f"prl={out['prl']:g} sum to {dr:g}; they must sum to 1 (e.g. id=0.5,dbrl=0.25,prl=0.25)"
        )
    return out


def parse_score_weights(text: str) -> dict[str, float]:
    """``"il=0.5,id=0.5,dbrl=0.25,prl=0.25"`` (any subset) -> validated weights."""
    given: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip().lower()
        if not sep or not name or not raw.strip():
            raise InvalidParameter(f"score weight {item!r}: give NAME=VALUE, e.g. il=0.5")
        if name in given:
            raise InvalidParameter(f"score weight {name!r} is given twice")
        try:
            given[name] = float(raw)
        except ValueError:
            raise InvalidParameter(
                f"score weight {item!r}: {raw.strip()!r} is not a number"
            ) from None
    return score_weights_of(given)


def measure_label(key: str) -> str:
    """'record linkage (%)' for a table header."""
    label, unit, _, _ = MEASURES[key]
    return f"{label} ({unit})" if unit else label


def _value_key(value: object) -> str:
    # as microgui.core.table.dataset matches ordinal values against their order: 3.0 is "3"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _protected_continuous(protected: pd.DataFrame, qi: QIMatrix) -> np.ndarray | None:
    """The protected continuous QIs as float (original units), or None if one is not numeric."""
    cols = []
    for col in qi.continuous_names:
        series = protected[col]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            values = pd.to_numeric(series.astype("string").str.strip(), errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan
            )
        if not (np.abs(values) <= MAX_ABS_VALUE).all():  # NaN, inf, or squares that overflow
            return None
        cols.append(values)
    return np.column_stack(cols) if cols else np.empty((len(protected), 0))


def readable_measures() -> dict[str, tuple[str, str, str, str]]:
    """:data:`MEASURES` as users read them: (label, unit, direction, group) by key, the labels
    naming papers by authors and year (:func:`microgui.core.references.readable`)."""
    from microgui.core.references import readable

    return {str(k): (readable(v[0]), *v[1:]) for k, v in MEASURES.items()}


def _released_values(series: pd.Series, categories: Sequence[object]) -> list[object]:
    """The released cells as a list; where the original's missing cells form a category
    (``missing_as_category``), a missing released cell (empty, NA, read back as NaN) is that
    category."""
    values = series.tolist()
    if MISSING_CATEGORY in categories:
        for i in np.flatnonzero(is_missing(series)):
            values[i] = MISSING_CATEGORY
    return values


def _protected_categorical(
    protected: pd.DataFrame, qi: QIMatrix
) -> tuple[np.ndarray, np.ndarray, list[int], list[int | None]] | None:
    """(original codes, protected codes, domain sizes, ordinal sizes or None) of the
    categorical QIs; None when a protected ordinal value is not in its order (generalized).

    A missing released cell is a suppressed one (as :func:`_suppressed_cells` counts it): a
    nominal one takes a code of its own after the categories, an ordinal one the code
    |D(V)| just past its order, which :func:`~microgui.core.metrics.utility.dist_il` counts as
    the whole value lost and the contingency tables as a category of its own. Before, a blank
    ordinal cell was taken for a generalized value and every categorical measure and both
    linkages of the release vanished (a plan with local suppression on an ordinal key)."""
    n = len(protected)
    orig_cols: list[np.ndarray] = []
    prot_cols: list[np.ndarray] = []
    sizes: list[int] = []
    ordinal: list[int | None] = []
    for j, col in enumerate(qi.ordinal_names):
        order = qi.ordinal_orders[j]
        rank = {v: i for i, v in enumerate(order)}
        codes = np.fromiter(
            (rank.get(_value_key(v), -1) for v in _released_values(protected[col], order)),
            np.int64,
            n,
        )
        blank = np.zeros(n, dtype=bool)
        if MISSING_CATEGORY not in order:  # else a blank is that category (_released_values)
            blank = np.asarray(is_missing(protected[col]), dtype=bool)
        codes[blank] = len(order)
        if (codes < 0).any():
            return None
        orig_cols.append(qi.ordinal[:, j])
        prot_cols.append(codes)
        sizes.append(len(order) + int(blank.any()))
        ordinal.append(len(order))
    for j, col in enumerate(qi.nominal_names):
        cats = list(qi.nominal_categories[j])
        index = {c: i for i, c in enumerate(cats)}
        values = _released_values(protected[col], cats)
        extra: dict[object, int] = {}
        codes_list = []
        for v in values:
            code = index.get(v)
            if code is None:  # a value the original never held (e.g. a suppression mark)
                code = extra.setdefault(v, len(cats) + len(extra))
            codes_list.append(code)
        orig_cols.append(qi.nominal[:, j])
        prot_cols.append(np.asarray(codes_list, dtype=np.int64).reshape(n))
        sizes.append(len(cats) + len(extra))
        ordinal.append(None)
    if not orig_cols:
        return None
    return np.column_stack(orig_cols), np.column_stack(prot_cols), sizes, ordinal


def _linkage_space(
    qi: QIMatrix,
    prot_cont: np.ndarray,
    cat: tuple[np.ndarray, np.ndarray, list[int], list[int | None]] | None,
    missing: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Original and protected QIs on one standardized scale for record linkage. A protected
    categorical cell marked in ``missing`` (n, categorical QIs; a suppressed key cell) is NaN
    on all of its coordinates: it matches any value (:func:`~microgui.core.metrics.risk.record_linkage`)."""
    orig = [qi.continuous]
    prot = [(prot_cont - qi.cont_mean) / qi.cont_std]
    if cat is not None:
        ox, px, sizes, ordinal = cat
        ox = _at_released_coding(ox, px, ordinal, missing)
        for j, size in enumerate(ordinal):
            if size is not None:
                mu = ox[:, j].mean()
                sd = ox[:, j].std(ddof=1) if len(ox) > 1 else 0.0
                sd = sd if sd > 0 else 1.0
                o = ((ox[:, j] - mu) / sd)[:, None]
                p = ((px[:, j] - mu) / sd)[:, None]
            else:
                # one-hot scaled by 1/√2: two different categories are at distance 1 (003 §5.4)
                eye = np.eye(sizes[j]) / np.sqrt(2.0)
                o, p = eye[ox[:, j]], eye[px[:, j]]
            if missing is not None and missing[:, j].any():
                p = p.copy()
                p[missing[:, j]] = np.nan
            orig.append(o)
            prot.append(p)
    return np.hstack(orig), np.hstack(prot)


def _at_released_coding(
    ox: np.ndarray, px: np.ndarray, ordinal: list[int | None], missing: np.ndarray | None
) -> np.ndarray:
    """The original nominal codes at the release's coding where the release recoded the column
    globally: when every original category is released as one value only (a hierarchy level,
    a mapping, merged categories; suppressed cells aside), an intruder applies the same
    recoding to what he knows, so linkage compares the original *recoded* with the release.
    Without this, a recoded column differed for every record, which hides nothing from the
    ranking (the same distance added to every original) but made the nearest-neighbour search
    of every record reach ~all originals (Adult's 4-step plan: 40 s of linkage). Columns that
    are not a function of the original (microaggregated modes) keep their codes."""
    out = ox
    for j, size in enumerate(ordinal):
        if size is not None:
            continue
        keep = slice(None) if missing is None else ~missing[:, j]
        o, p = ox[keep, j], px[keep, j]
        if len(o) == 0 or np.array_equal(o, p):
            continue
        width = int(max(ox[:, j].max(), px[:, j].max())) + 1
        pairs = np.unique(o * width + p)
        first = pairs // width
        if len(np.unique(first)) != len(first):  # a category released as two values
            continue
        mapping = np.arange(width, dtype=ox.dtype)  # categories seen only blanked: kept
        mapping[first] = pairs % width
        if out is ox:
            out = ox.copy()
        out[:, j] = mapping[ox[:, j]]
    return out


def _missing_any_measures(
    out: dict[str, float | int | None],
    protected: pd.DataFrame,
    qis: Sequence[str],
    categorical: Sequence[str],
    conf: Sequence[str],
    roles: RoleMap,
    known: GroupMeasures | None = None,
) -> None:
    """The group measures of a release with suppressed (missing) key cells, a missing cell
    matching any value (sdcMicro's ``freqCalc``; :mod:`~microgui.core.metrics.missing_match`):
    k-anonymity, re-identification risk, sample uniques and the confidential attributes'
    l-diversity, p-sensitivity, t-closeness, entropy l-diversity and homogeneous share, so that
    they equal the release check's and the release report's figures for the same release."""
    from microgui.core.metrics.disclosure import attribute_disclosure, worst_homogeneous
    from microgui.core.metrics.missing_match import frequencies_missing_any

    freq = frequencies_missing_any(protected, list(qis)).astype(np.float64)
    risk = 100.0 / freq
    out["reidentification_risk_max"] = float(risk.max())
    out["reidentification_risk_mean"] = float(risk.mean())
    out["k_anonymity"] = int(freq.min())
    if categorical:
        # the same keys (every quasi-identifier categorical): the same count, not again
        same = list(categorical) == list(qis)
        out["sample_uniques"] = (
            int((freq == 1).sum())
            if same
            else sample_uniques(protected, list(categorical), missing="any")
        )
    names = [c for c in conf if c in protected.columns]
    if not names:
        return
    per = (
        known.attribute_disclosure
        if known is not None
        else attribute_disclosure(protected, qis, names, roles, missing_matches_any=True)
    )
    out["p_sensitivity"] = int(min(m["distinct_l_diversity"] for m in per.values()))
    if len(names) == 1:
        out["l_diversity"] = out["p_sensitivity"]
    else:  # distinct l-diversity of the joint attribute (the default rule's definition)
        from microgui.core.metrics.privacy import distinct_l_diversity

        out["l_diversity"] = int(distinct_l_diversity(protected, qis, names, missing="any"))
    ts = [m["t_closeness"] for m in per.values() if m["t_closeness"] is not None]
    out["t_closeness"] = float(max(ts)) if ts else None
    out["entropy_l_diversity"] = float(min(m["entropy_l_diversity"] for m in per.values()))
    out["homogeneous_percent"] = worst_homogeneous(per)


def _suppressed_cells(protected: pd.DataFrame, qi: QIMatrix) -> np.ndarray | None:
    """(n, categorical QIs) True where a released categorical key cell is missing and missing
    is not a category of the original (a suppressed cell, which matches any value); None when
    there is none."""
    names = list(qi.ordinal_names) + list(qi.nominal_names)
    categories = list(qi.ordinal_orders) + list(qi.nominal_categories)
    cols = []
    for col, cats in zip(names, categories, strict=True):
        if cats is not None and MISSING_CATEGORY in cats:
            cols.append(np.zeros(len(protected), dtype=bool))
        else:
            cols.append(np.asarray(is_missing(protected[col]), dtype=bool))
    if not cols:
        return None
    mask = np.column_stack(cols)
    return mask if mask.any() else None


def evaluate(
    original: Dataset,
    protected: pd.DataFrame,
    *,
    labels: np.ndarray | None = None,
    progress: ProgressFn = no_progress,
    w_il: float | None = None,
    score_weights: Mapping[str, float] | None = None,
    k: int | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    groups: GroupMeasures | None = None,
) -> Measures:
    """All the measures of :data:`MEASURES` for ``protected`` against ``original``, and the
    breakdown of :data:`BREAKDOWNS`.

    Parameters
    ----------
    original
        The dataset before protection (roles and kinds of every column).
    protected
        The release: the original's columns minus the identifiers, rows in the original order.
    labels
        The run's partition, if known: fills ``n_groups`` and ``min_group_size`` (else None).
        Every other measure is computed from what is released (groups = identical
        quasi-identifier combinations), which is what an intruder sees.
    progress
        Progress callback; may raise ``RunCancelled``.
    w_il
        Weight of information loss in the score (``003`` §3.1: ½); the same as
        ``score_weights={"il": w_il}`` (an ``il`` in ``score_weights`` wins).
    score_weights
        Weights of the score, any of ``il``, ``id``, ``dbrl``, ``prl`` (defaults
        :data:`SCORE_WEIGHTS`; see the module docstring). Invalid weights raise
        :class:`InvalidParameter` before anything is computed.
    k
        The k the release was made for: fills ``cavg`` (``004`` eq. 11).
    hierarchies
        Generalization hierarchies by quasi-identifier: fill ``generalization_il``.
    groups
        The group measures of ``protected`` when already computed (the run's,
        :attr:`~microgui.core.runs.spec.RunResult.groups`): ``k_anonymity`` and the
        homogeneous share are read from them when they are those of these columns under the
        rule used here (a suppressed key cell matching any value or not), not computed again.

    Returns
    -------
    dict
        A flat ``{key: float | int | None}``; None where a measure does not apply.
    """
    if len(protected) != original.n_records:
        raise ValueError(
            f"the protected table has {len(protected)} rows, the original {original.n_records}"
        )
    roles = original.roles
    qis = roles.quasi_identifiers
    missing = [c for c in qis + roles.confidential if c not in protected.columns]
    if missing:
        raise ValueError(f"column {missing[0]!r} is not in the protected table")
    given = dict(score_weights or {})
    if w_il is not None:
        given.setdefault("il", w_il)
    weights = score_weights_of(given)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1):
        raise InvalidParameter(f"k={k!r} must be a whole number >= 1")
    for col in hierarchies or {}:
        if col not in qis:
            raise InvalidParameter(
                f"a hierarchy is given for {col!r}, which is not a quasi-identifier"
            )
    progress(0.0, "preparing")
    qi = prepare_qi(original)
    out: dict[str, float | int | None] = dict.fromkeys(MEASURES)

    prot_cont = _protected_continuous(protected, qi) if qi.continuous_names else None
    cat = _protected_categorical(protected, qi)
    suppressed = _suppressed_cells(protected, qi)
    wildcard = suppressed is not None  # a released categorical key cell is missing

    progress(0.1, "information loss")
    prot_z = None if prot_cont is None else (prot_cont - qi.cont_mean) / qi.cont_std
    # every quasi-identifier (issue 13): equal to information_loss when all are continuous
    mixed = mixed_information_loss(qi, protected, protected_z=prot_z)
    out["information_loss_all_qi"] = mixed.information_loss
    if prot_cont is not None and prot_z is not None:
        # the original values themselves (undoing the z-scores would add rounding noise)
        x = np.column_stack([numeric_column(original.frame, c) for c in qi.continuous_names])
        out["information_loss"] = information_loss(qi.continuous, prot_z)
        out.update(_finite(il_measures(x, prot_cont)))
        progress(0.25, "probabilistic information loss")
        out.update(_finite(pil_measures(x, prot_cont)))
        progress(0.4, "interval disclosure")
        out["interval_disclosure"] = interval_disclosure(x, prot_cont)
    # the correlations the command line and the app show (association: continuous QIs and
    # confidential columns, on the records complete in both tables)
    out["correlation_change_max"] = correlations(original.frame, protected, roles).largest_change
    # distributions and associations of every quasi-identifier and confidential column (issue 29)
    out.update(utility_summary(original.frame, protected, roles).measures())
    progress(0.5, "categorical information loss")
    if cat is not None:
        ox, px, sizes, ordinal = cat
        dist = dist_il(ox, px, ordinal)
        out["dist"] = dist
        out["dist_percent"] = 100.0 * dist / max(ox.size, 1)
        out["ctbil"], out["actbil"] = ctbil(ox, px, sizes)
        out["ebil"] = ebil(ox, px)
        keys = list(qi.ordinal_names + qi.nominal_names)
        out["sample_uniques"] = sample_uniques(protected, keys)
    if qi.ordinal_names or qi.nominal_names:
        # per run group when the partition is given, else per released class (issue 13)
        out["invented_combinations"] = invented_combinations(protected, qi, labels)

    progress(0.6, "record linkage")
    if (prot_cont is not None or not qi.continuous_names) and (
        cat is not None or not (qi.ordinal_names or qi.nominal_names)
    ):
        cont = prot_cont if prot_cont is not None else np.empty((len(protected), 0))
        ox_l, px_l = _linkage_space(qi, cont, cat, suppressed)
        out["record_linkage"] = record_linkage(ox_l, px_l)
        progress(0.7, "probabilistic record linkage")
        out["probabilistic_record_linkage"] = _prl(
            original, qi, cont, cat, (ox_l, px_l), suppressed
        )

    progress(0.8, "re-identification and attribute disclosure")
    rule: Missing = "any" if wildcard else "category"
    known = (
        groups if groups is not None and groups.applies_to(qis, roles.confidential, rule) else None
    )
    if not wildcard:  # else measured below by the missing-matches-any rule
        out["reidentification_risk_max"], out["reidentification_risk_mean"] = reidentification_risk(
            protected, qis
        )
        out["k_anonymity"] = (
            known.k_anonymity if known is not None else k_anonymity_level(protected, qis)
        )
    categorical = [q for q in qis if roles[q].kind is not AttributeKind.CONTINUOUS]
    if roles.weight is not None and len(protected) and qis:
        # sdcMicro's key variables: the categorical quasi-identifiers (those sample_uniques
        # counts on), else every quasi-identifier
        out.update(_weighted_risk(original, protected, categorical or qis, roles.weight, wildcard))
    conf = roles.confidential
    if wildcard and len(protected):
        # suppressed key cells match any value: the release check's and the plan report's rule
        _missing_any_measures(out, protected, qis, categorical, conf, roles, known)
    elif conf and len(protected):
        from microgui.core.metrics import privacy  # written alongside (issue 4): import late

        out["l_diversity"] = int(privacy.distinct_l_diversity(protected, qis, conf))
        out["p_sensitivity"] = int(privacy.p_sensitivity(protected, qis, conf))
        out["t_closeness"] = float(privacy.t_closeness(protected, qis, conf, roles))
        out["entropy_l_diversity"] = entropy_l_diversity(protected, qis, conf)
        from microgui.core.metrics.disclosure import attribute_disclosure, worst_homogeneous

        out["homogeneous_percent"] = worst_homogeneous(
            known.attribute_disclosure
            if known is not None
            else attribute_disclosure(protected, qis, conf, roles)
        )

    _generalization_measures(out, protected, qis, roles, k, hierarchies or {})

    il_value = next(
        (out[key] for key in ("il", "information_loss", "dist_percent") if out[key] is not None),
        None,
    )
    dr = _disclosure_risk(out, weights)
    if il_value is not None and dr is not None:
        out["score"] = score(float(il_value), float(dr), weights["il"])
    if labels is not None:
        sizes_arr = np.bincount(np.unique(np.asarray(labels), return_inverse=True)[1].reshape(-1))
        out["n_groups"] = int(len(sizes_arr))
        out["min_group_size"] = int(sizes_arr.min()) if len(sizes_arr) else 0
    progress(1.0, "done")
    result: Measures = dict(out)
    result["information_loss_by_attribute"] = mixed.by_attribute
    return result


_WEIGHTED_KEYS = (
    "population_frequency_min",
    "individual_risk_mean",
    "individual_risk_max",
    "expected_reidentifications",
    "risky_records",
)


def _weighted_risk(
    original: Dataset,
    protected: pd.DataFrame,
    qis: Sequence[str],
    weight: str,
    missing_matches_any: bool = False,
) -> dict[str, float | int | None]:
    """The survey-weighted risk measures (:mod:`microgui.core.metrics.weighted_risk`, sdcMicro's
    freqCalc/indivRisk) over the key variables ``qis`` as released: the categorical
    quasi-identifiers when there are any (sdcMicro's keyVars are categorical, and they are the
    keys of ``sample_uniques`` shown beside these figures; a continuous value is not matched
    exactly), else every quasi-identifier (the released classes). Weights: the original weight
    column (released unchanged).

    A missing key value counts as a category of its own, as k-anonymity counts it; sdcMicro
    reads it as matching any value (``weighted_risk.frequencies(missing="any")`` gives its
    figures), which makes classes larger and the risk lower: ours is the more cautious figure.
    A release with suppressed key cells (``missing_matches_any``) is counted by sdcMicro's rule,
    as its release check counts it (a suppression is made to match any value).
    Weights the estimate cannot use (summing below a combination's record count) leave these
    measures None."""
    try:
        weights, _what = survey_weights(original.frame, weight)
        keys = protected.loc[:, list(qis)].reset_index(drop=True)
        freq = frequencies(
            keys, list(qis), weights, missing="any" if missing_matches_any else "category"
        )
    except (InvalidInput, InvalidParameter):
        # weights the estimate cannot use (summing below their records' count: normalised to
        # mean 1, say): these measures are None, every other one stands
        return dict.fromkeys(_WEIGHTED_KEYS)
    rk = individual_risk(freq.fk, freq.Fk)
    return {
        "population_frequency_min": float(freq.Fk.min()),
        "individual_risk_mean": 100.0 * float(rk.mean()),
        "individual_risk_max": 100.0 * float(rk.max()),
        "expected_reidentifications": float(rk.sum()),
        "risky_records": int(risky_records(rk).sum()),
    }


def _finite(values: dict[str, float]) -> dict[str, float | None]:
    """NaN (a measure with nothing to average) becomes None."""
    return {k: (float(v) if np.isfinite(v) else None) for k, v in values.items()}


def _disclosure_risk(
    out: Mapping[str, float | int | None], weights: Mapping[str, float]
) -> float | None:
    """DR of the score: weighted interval disclosure and linkages (see the module docstring)."""
    parts = {
        "id": out["interval_disclosure"],
        "dbrl": out["record_linkage"],
        "prl": out["probabilistic_record_linkage"],
    }
    if parts["id"] is None or parts["dbrl"] is None:
        mean = out["reidentification_risk_mean"]
        return None if mean is None else float(mean)
    used = {name: float(v) for name, v in parts.items() if v is not None}
    total = sum(weights[name] for name in used)
    if total <= 0:  # all the weight on a measure that does not apply
        return None
    return sum(weights[name] * v for name, v in used.items()) / total


def _prl(
    original: Dataset,
    qi: QIMatrix,
    prot_cont: np.ndarray,
    cat: tuple[np.ndarray, np.ndarray, list[int], list[int | None]] | None,
    space: tuple[np.ndarray, np.ndarray],
    suppressed: np.ndarray | None = None,
) -> float:
    """PRL on the quasi-identifiers: continuous by rank, ordinal and nominal codes by equality;
    a suppressed categorical cell (``suppressed``) agrees with any value."""
    cols = [numeric_column(original.frame, c) for c in qi.continuous_names]
    x = [np.column_stack(cols)] if cols else []
    y = [prot_cont] if cols else []
    categorical = [False] * len(cols)
    if cat is not None:
        x.append(_at_released_coding(cat[0], cat[1], cat[3], suppressed).astype(np.float64))
        codes = cat[1].astype(np.float64)
        if suppressed is not None:
            codes[suppressed] = np.nan
        y.append(codes)
        categorical += [True] * cat[0].shape[1]
    return probabilistic_record_linkage(
        np.hstack(x), np.hstack(y), categorical=categorical, space=space
    )


def _node_ids(h: Hierarchy, values: list[object], column: str) -> np.ndarray:
    """The node of ``h`` each released value names: a value, or a generalization's label."""
    index: dict[str, int] = {}
    for first, label in enumerate(h.node_labels):  # ids go up level by level: lowest first
        index.setdefault(label, first)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    mapped = np.empty(len(uniques), dtype=np.int64)
    for i, v in enumerate(uniques):
        node = index.get(value_key(v))
        if node is None:
            try:  # a value written another way (21.0 for 21)
                node = int(h.encode([v], column)[0])
            except InvalidInput:
                row = int(np.flatnonzero(codes == i)[0]) + 1
                raise InvalidInput(
                    f"column {column!r} holds {value_key(v)!r} (row {row}), which is neither a value "
                    f"nor a generalization in its hierarchy {h.name}; give the hierarchy the release "
                    "was generalized with"
                ) from None
        mapped[i] = node
    out: np.ndarray = mapped[codes]
    return out


def _generalization_measures(
    out: dict[str, float | int | None],
    protected: pd.DataFrame,
    qis: list[str],
    roles: RoleMap,
    k: int | None,
    hierarchies: Mapping[str, Hierarchy],
) -> None:
    """DM, CAVG and the generalization IL of ``004`` §7 on the release's equivalence classes."""
    if not qis or not len(protected):
        return
    labels = protected.groupby(qis, dropna=False, sort=False).ngroup().to_numpy(dtype=np.int64)
    out["dm"] = discernibility(labels)
    if k is not None:
        out["cavg"] = cavg(labels, int(k))
    cols = [c for c in qis if c in hierarchies]
    if not cols:
        return
    hs = tuple(hierarchies[c] for c in cols)
    nodes = np.column_stack(
        [_node_ids(h, protected[c].tolist(), c) for c, h in zip(cols, hs, strict=True)]
    )
    # equivalence classes of the hierarchy columns: class per record, node ids per class
    _, first, classes, _counts = unique_rows(nodes)
    numeric = [roles[c].kind is AttributeKind.CONTINUOUS for c in cols]
    il = generalization_information_loss(
        classes.reshape(-1).astype(np.int64), nodes[first], hs, numeric, cols
    )
    out["generalization_il"] = float(il["generalization_il"])
