"""Every utility and risk measure of a release, as one flat dict (issue 5).

``evaluate(original, protected)`` compares a protected table with the :class:`Dataset` it came
from: the Dataset gives the roles and kinds, ``protected`` holds the same columns minus the
identifiers, rows aligned. Measures that do not apply are None: no continuous quasi-identifier (or
continuous quasi-identifiers published as text, e.g. generalized to "[20-30]") → the continuous
measures are None; no categorical quasi-identifier → Dist, CTBIL', ACTBIL', EBIL and sample
uniques are None; no confidential column → l-diversity, p-sensitivity, t-closeness are None.

Definitions and sources: :mod:`microgui.core.metrics.utility` (IL1-IL5, PIL, Dist, CTBIL',
EBIL), :mod:`microgui.core.metrics.risk` (record linkage, interval disclosure, re-identification,
entropy l-diversity, score), :mod:`microgui.core.metrics.privacy` (p-sensitivity, distinct
l-diversity, t-closeness). Every risk is in percent.

The score (``003`` §3.1) is w·IL + (1 − w)·DR with w = ½ by default (``w_il``): IL is the
Domingo-Ferrer & Torra ``il`` when defined, else ``information_loss``, else (categorical
quasi-identifiers only) ``dist_percent`` = 100·Dist/(records × categorical QIs); DR is
½·interval disclosure + ½·record linkage (Domingo-Ferrer & Torra 2001b weight ID ½ and the two
linkages ¼ each; probabilistic linkage is not implemented, so distance-based linkage takes its
share). Without continuous quasi-identifiers DR is the mean re-identification risk.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from microgui.core.dataset import Dataset, QIMatrix, numeric_column, prepare_qi
from microgui.core.metrics.information_loss import information_loss
from microgui.core.metrics.kanonymity import k_anonymity_level
from microgui.core.metrics.risk import (
    entropy_l_diversity,
    interval_disclosure,
    record_linkage,
    reidentification_risk,
    sample_uniques,
    score,
)
from microgui.core.metrics.utility import (
    correlation_change,
    ctbil,
    dist_il,
    ebil,
    il_measures,
    pil_measures,
)
from microgui.core.progress import ProgressFn, no_progress

__all__ = ["MEASURES", "LOWER", "HIGHER", "evaluate", "measure_label"]

LOWER: Final = "lower is better"
HIGHER: Final = "higher is better"

#: key -> (label, unit, direction, group) for the app's tables and charts.
MEASURES: Final[dict[str, tuple[str, str, str, str]]] = {
    "information_loss": ("IL = 100·SSE/SST", "%", LOWER, "utility"),
    "il1": ("IL1 (values)", "", LOWER, "utility"),
    "il1s": ("IL1s (values, scaled by √2·S)", "", LOWER, "utility"),
    "il2": ("IL2 (means)", "", LOWER, "utility"),
    "il3": ("IL3 (variances)", "", LOWER, "utility"),
    "il4": ("IL4 (covariances)", "", LOWER, "utility"),
    "il5": ("IL5 (correlations)", "", LOWER, "utility"),
    "il": ("IL = 100·mean(IL1..IL5)", "", LOWER, "utility"),
    "pil_quantiles": ("PIL(Q) quantiles", "", LOWER, "utility"),
    "pil_means": ("PIL(m1) means", "", LOWER, "utility"),
    "pil_variances": ("PIL(m2) variances", "", LOWER, "utility"),
    "pil_covariances": ("PIL(m11) covariances", "", LOWER, "utility"),
    "pil_correlations": ("PIL(r) correlations", "", LOWER, "utility"),
    "pil": ("PIL = 100·mean of the five", "%", LOWER, "utility"),
    "correlation_change_max": ("largest change of a correlation", "", LOWER, "utility"),
    "dist": ("Dist (categorical distance)", "", LOWER, "utility"),
    "dist_percent": ("Dist per categorical value", "%", LOWER, "utility"),
    "ctbil": ("CTBIL' (contingency tables)", "", LOWER, "utility"),
    "actbil": ("ACTBIL' (per cell)", "", LOWER, "utility"),
    "ebil": ("EBIL (entropy, bits)", "bits", LOWER, "utility"),
    "record_linkage": ("distance-based record linkage", "%", LOWER, "risk"),
    "interval_disclosure": ("interval disclosure (p = 1..10 %)", "%", LOWER, "risk"),
    "reidentification_risk_max": ("re-identification risk, max", "%", LOWER, "risk"),
    "reidentification_risk_mean": ("re-identification risk, mean", "%", LOWER, "risk"),
    "sample_uniques": ("sample uniques (categorical keys)", "records", LOWER, "risk"),
    "k_anonymity": ("k-anonymity", "records", HIGHER, "risk"),
    "l_diversity": ("distinct l-diversity", "values", HIGHER, "risk"),
    "entropy_l_diversity": ("entropy l-diversity", "", HIGHER, "risk"),
    "p_sensitivity": ("p-sensitivity", "values", HIGHER, "risk"),
    "t_closeness": ("t-closeness (EMD)", "", LOWER, "risk"),
    "score": ("score = (IL + DR)/2", "%", LOWER, "risk"),
    "n_groups": ("groups of the partition", "groups", HIGHER, "utility"),
    "min_group_size": ("smallest group of the partition", "records", HIGHER, "risk"),
}


def measure_label(key: str) -> str:
    """'record linkage (%)' for a table header."""
    label, unit, _, _ = MEASURES[key]
    return f"{label} ({unit})" if unit else label


def _value_key(value: object) -> str:
    # as microgui.core.dataset matches ordinal values against their order: 3.0 is "3"
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
        if not np.isfinite(values).all():
            return None
        cols.append(values)
    return np.column_stack(cols) if cols else np.empty((len(protected), 0))


def _protected_categorical(
    protected: pd.DataFrame, qi: QIMatrix
) -> tuple[np.ndarray, np.ndarray, list[int], list[int | None]] | None:
    """(original codes, protected codes, domain sizes, ordinal sizes or None) of the
    categorical QIs; None when a protected ordinal value is not in its order (generalized)."""
    n = len(protected)
    orig_cols: list[np.ndarray] = []
    prot_cols: list[np.ndarray] = []
    sizes: list[int] = []
    ordinal: list[int | None] = []
    for j, col in enumerate(qi.ordinal_names):
        order = qi.ordinal_orders[j]
        rank = {v: i for i, v in enumerate(order)}
        codes = np.fromiter(
            (rank.get(_value_key(v), -1) for v in protected[col].tolist()), np.int64, n
        )
        if (codes < 0).any():
            return None
        orig_cols.append(qi.ordinal[:, j])
        prot_cols.append(codes)
        sizes.append(len(order))
        ordinal.append(len(order))
    for j, col in enumerate(qi.nominal_names):
        cats = list(qi.nominal_categories[j])
        index = {c: i for i, c in enumerate(cats)}
        values = protected[col].tolist()
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
) -> tuple[np.ndarray, np.ndarray]:
    """Original and protected QIs on one standardized scale for record linkage."""
    orig = [qi.continuous]
    prot = [(prot_cont - qi.cont_mean) / qi.cont_std]
    if cat is not None:
        ox, px, sizes, ordinal = cat
        for j, size in enumerate(ordinal):
            if size is not None:
                mu = ox[:, j].mean()
                sd = ox[:, j].std(ddof=1) if len(ox) > 1 else 0.0
                sd = sd if sd > 0 else 1.0
                orig.append(((ox[:, j] - mu) / sd)[:, None])
                prot.append(((px[:, j] - mu) / sd)[:, None])
            else:
                # one-hot scaled by 1/√2: two different categories are at distance 1 (003 §5.4)
                eye = np.eye(sizes[j]) / np.sqrt(2.0)
                orig.append(eye[ox[:, j]])
                prot.append(eye[px[:, j]])
    return np.hstack(orig), np.hstack(prot)


def evaluate(
    original: Dataset,
    protected: pd.DataFrame,
    *,
    labels: np.ndarray | None = None,
    progress: ProgressFn = no_progress,
    w_il: float = 0.5,
) -> dict[str, float | int | None]:
    """All the measures of :data:`MEASURES` for ``protected`` against ``original``.

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
        Weight of information loss in the score (``003`` §3.1: ½).

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
    progress(0.0, "preparing")
    qi = prepare_qi(original)
    out: dict[str, float | int | None] = dict.fromkeys(MEASURES)

    prot_cont = _protected_continuous(protected, qi) if qi.continuous_names else None
    cat = _protected_categorical(protected, qi)

    progress(0.1, "information loss")
    if prot_cont is not None:
        # the original values themselves (undoing the z-scores would add rounding noise)
        x = np.column_stack([numeric_column(original.frame, c) for c in qi.continuous_names])
        out["information_loss"] = information_loss(
            qi.continuous, (prot_cont - qi.cont_mean) / qi.cont_std
        )
        out.update(_finite(il_measures(x, prot_cont)))
        progress(0.25, "probabilistic information loss")
        out.update(_finite(pil_measures(x, prot_cont)))
        if x.shape[1] > 1:
            change = correlation_change(x, prot_cont)
            out["correlation_change_max"] = float(change["difference"].abs().max())
        progress(0.4, "interval disclosure")
        out["interval_disclosure"] = interval_disclosure(x, prot_cont)
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

    progress(0.6, "record linkage")
    if (prot_cont is not None or not qi.continuous_names) and (
        cat is not None or not (qi.ordinal_names or qi.nominal_names)
    ):
        cont = prot_cont if prot_cont is not None else np.empty((len(protected), 0))
        ox_l, px_l = _linkage_space(qi, cont, cat)
        out["record_linkage"] = record_linkage(ox_l, px_l)

    progress(0.8, "re-identification and attribute disclosure")
    out["reidentification_risk_max"], out["reidentification_risk_mean"] = reidentification_risk(
        protected, qis
    )
    out["k_anonymity"] = k_anonymity_level(protected, qis)
    conf = roles.confidential
    if conf and len(protected):
        from microgui.core.metrics import privacy  # written alongside (issue 4): import late

        out["l_diversity"] = int(privacy.distinct_l_diversity(protected, qis, conf))
        out["p_sensitivity"] = int(privacy.p_sensitivity(protected, qis, conf))
        out["t_closeness"] = float(privacy.t_closeness(protected, qis, conf, roles))
        out["entropy_l_diversity"] = entropy_l_diversity(protected, qis, conf)

    il_value = next(
        (out[key] for key in ("il", "information_loss", "dist_percent") if out[key] is not None),
        None,
    )
    if out["interval_disclosure"] is not None and out["record_linkage"] is not None:
        dr: float | int | None = 0.5 * float(out["interval_disclosure"]) + 0.5 * float(
            out["record_linkage"]
        )
    else:
        dr = out["reidentification_risk_mean"]
    if il_value is not None and dr is not None:
        out["score"] = score(float(il_value), float(dr), w_il)
    if labels is not None:
        sizes_arr = np.bincount(np.unique(np.asarray(labels), return_inverse=True)[1].reshape(-1))
        out["n_groups"] = int(len(sizes_arr))
        out["min_group_size"] = int(sizes_arr.min()) if len(sizes_arr) else 0
    progress(1.0, "done")
    return out


def _finite(values: dict[str, float]) -> dict[str, float | None]:
    """NaN (a measure with nothing to average) becomes None."""
    return {k: (float(v) if np.isfinite(v) else None) for k, v in values.items()}
