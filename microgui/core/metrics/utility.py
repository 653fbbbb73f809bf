"""Utility / information-loss measures: pure functions of the original and protected values.

Continuous quasi-identifiers (``003_309fe4adb430bc25.txt`` §6.1, Tables 2 and 3)
-------------------------------------------------------------------------------
``X`` is the original (n × p) matrix, ``X'`` the protected one, S_j the sample standard deviation of
column j of ``X``, V = (v_jl) and V' the sample covariance matrices (ddof 1), R and R' the Pearson
correlation matrices. Following Domingo-Ferrer & Torra (2001, "A quantitative comparison of
disclosure control methods for microdata", in *Confidentiality, Disclosure and Data Access*) and
Domingo-Ferrer, Mateo-Sanz & Torra (2001), in the order ``003`` §6.1 lists them:

- IL1 = 1/(n p) Σ_j Σ_i |x_ij − x'_ij| / |x_ij|        (mean variation of the values)
- IL2 = 1/p Σ_j |x̄_j − x̄'_j| / |x̄_j|                  (mean variation of the means)
- IL3 = 1/p Σ_j |v_jj − v'_jj| / |v_jj|                (mean variation of the variances)
- IL4 = 1/(p(p−1)/2) Σ_{j<l} |v_jl − v'_jl| / |v_jl|   (mean variation of the covariances)
- IL5 = 1/(p(p−1)/2) Σ_{j<l} |r_jl − r'_jl|            (mean variation of the correlations)
- IL  = 100 · mean(IL1, …, IL5)

Where the sources differ:

- IL1 divides by the original value itself ("mean variation"). That is very sensitive to values near
  0, so Yancey, Winkler & Creecy (2002) proposed IL1s = 1/(n p) ΣΣ |x_ij − x'_ij| / (√2 S_j);
  sdcMicro's ``dUtility(method="IL1")`` computes |x − x'|/S_j · √2 (a multiplication, not the
  division of Yancey et al.). We report IL1 as above and, separately, IL1s with Yancey's √2 S_j.
  A cell whose original value is 0 cannot enter a relative change: it is left out of IL1's mean.
  We checked the choice against ``003`` Table 2: on Census (1080 × 13, all 13 attributes), MDAV
  with variance rescaling gives IL1 = 0.907, 1.389, 1.535 at k = 3, 6, 9 (published 0.907, 1.389,
  1.535), IL4 = 0.058, 0.134, 0.161 and IL5 = 0.016, 0.032, 0.039 (the same), IL = 19.63, 31.10,
  34.71 (19.62, 31.10, 34.70); the S_j form would give IL1 = 0.115 at k = 3, and covariances over
  j <= l would give IL4 = 0.050. At k = 12 we get IL1 1.585 (published 1.564).
- Which columns the averages run over. ``003`` §6.1 says "information loss is only computed for
  attributes in the quasi-identifier", but its rows for the quasi-identifier of "the first 6
  attributes" are averages over all 13 columns of a file whose first 6 columns were
  microaggregated (MDAV with variance rescaling) and whose other 7 were released unchanged, so
  that unchanged cells, means, variances and covariances count as losses of 0 in the averages
  (a covariance of a protected and an unchanged column still changes). That reading gives
  IL1 = 0.131, 0.175, 0.203, 0.185 at k = 3, 6, 9, 12 (published 0.131, 0.174, 0.203, 0.185),
  IL4 = 0.036, 0.077, 0.133, 0.165 (0.036, 0.075, 0.129, 0.166), IL5 = 0.007, 0.013, 0.017,
  0.020 (the same) and IL = 3.49, 5.28, 7.05, 7.40 (3.48, 5.24, 6.98, 7.42); over the 6
  protected columns alone IL1 would be 0.285 at k = 3. Every IL and PIL function therefore takes
  ``columns``, the positions of the columns its averages run over: None (the default) averages
  over every column given, as before; ``columns=range(6)`` on the whole 13-column file gives the
  quasi-identifier-only figures, the same as passing those 6 columns alone.
- Domingo-Ferrer, Mateo-Sanz & Torra (2001) number the covariance measure (over j ≤ l, so the
  variances included) IL3 and the variance measure IL4; ``003`` names variances IL3 and covariances
  IL4. We follow ``003`` and take the covariances over the pairs j < l, so IL3 and IL4 do not count
  the variances twice. Correlations likewise over j < l (the diagonal is 1 in both).
- A denominator that is 0 (a mean, variance or covariance of exactly 0) is dropped from its
  average; a measure with nothing left to average (IL4, IL5 with p = 1) is NaN and IL averages the
  measures that are defined.

Probabilistic information loss (Mateo-Sanz, Domingo-Ferrer & Sebé 2005, DMKD 11(2) 181-193; ``003``
Table 3). For a statistic θ estimated by θ̂ on ``X`` and θ̂' on ``X'``, the standardized discrepancy
z = (θ̂' − θ̂)/√Var(θ̂) is taken as N(0, 1) and PIL(θ) = 2·P(0 ≤ Z ≤ |z|) = 2Φ(|z|) − 1 ∈ [0, 1]. The
asymptotic variances used:

- quantiles Q_α, α = 0.05, 0.10, …, 0.95: Var = α(1−α) / (n f(Q_α)²); the density f at Q_α is
  estimated with a Gaussian kernel, Silverman's bandwidth (our choice: the paper does not fix it);
- means: Var = S² / n;
- variances: Var = (m4 − m2²) / n (central moments);
- covariances: Var = (m22 − m11²) / n, m22 = mean((x−x̄)²(y−ȳ)²), m11 = mean((x−x̄)(y−ȳ));
- correlations: the large-sample (delta-method) variance of the sample correlation, which assumes
  no distribution: with μ_ab = mean((x−x̄)^a (y−ȳ)^b),
  Var(r̂) ≈ (r²/4n)·[μ40/μ20² + μ04/μ02² + 2μ22/(μ20μ02) + 4μ22/μ11² − 4μ31/(μ11μ20) − 4μ13/(μ11μ02)]
  (Kendall & Stuart, *The Advanced Theory of Statistics* vol. 1, the standard error of r; the
  general central limit theorem for r of Omey & Van Gulck 2008, "Central limit theorems for
  variances and correlation coefficients"). It follows from r = μ11/√(μ20μ02) by a first-order
  expansion of log r and n·Cov(m_ab, m_cd) → μ_{a+c,b+d} − μ_ab μ_cd. Computed as mean(ψ²)/n with
  ψ = ab − r(a² + b²)/2 on the standardized a = (x−x̄)/√μ20, b = (y−ȳ)/√μ02, the same quantity
  with r² multiplied through, so that a pair with r = 0 (μ11 = 0) needs no division:
  Var = mean(a²b²)/n. For bivariate normal moments it is the textbook (1 − r²)²/n.

PIL(Q), PIL(m1⁰), PIL(m2), PIL(m11), PIL(r) average over α and attributes (or pairs j < l), and
PIL = 100 · mean of the five. A zero variance with a zero discrepancy counts 0, with a non-zero one 1.
``003`` §6.1 names only Mateo-Sanz et al. (2005) and gives none of these variances; the one for r is
the choice that reproduces its Table 3 (the normal-theory (1 − r²)²/n gave PIL(r) = 0.581, 0.693,
0.719, 0.737). On Census (13 attributes, MDAV with rescaling) PIL(m1⁰) = PIL(m2) = 0, PIL(m11) =
0.363, 0.548, 0.598, 0.626 at k = 3, 6, 9, 12 and PIL(r) = 0.534, 0.674, 0.705, 0.729, as ``003``
Table 3 (0.363, 0.548, 0.598, 0.628 and 0.534, 0.674, 0.705, 0.731). Its rows for the first 6
attributes, read as for Table 2 (the first 6 columns protected, averages over all 13), give
PIL(m11) = 0.161, 0.271, 0.335, 0.374 and PIL(r) = 0.255, 0.372, 0.434, 0.471 (published 0.161,
0.270, 0.332, 0.373 and 0.255, 0.371, 0.430, 0.471). PIL(Q) = 0.456, 0.544, 0.613, 0.675 (published
0.498, 0.536, 0.577, 0.618; first 6: 0.158, 0.205, 0.230, 0.266 against 0.142, 0.187, 0.194,
0.198) differs by up to 0.07: the paper does not say how it estimated the density f.

Categorical quasi-identifiers (``003`` §6.2, Tables 4-7)
-------------------------------------------------------
Values are integer codes: ordinal ranks in the declared order, nominal category codes shared by
original and protected.

- Dist = Σ_records Σ_attributes d(v, v'): nominal d = 0/1 (``003`` §5.4), ordinal
  d_ORD(a, b) = |rank(a) − rank(b)| / |D(V)| (``003`` eq. 1).
- CTBIL' = Σ over every contingency table of one and of two quasi-identifiers, Σ over its cells
  |c − c'| / c (c, c' the cell counts in original and protected); a cell empty in the original
  divides by 1. ACTBIL' = CTBIL' / (number of cells of all those tables, Π |D(V)| per table).
  ``003`` says only "all considered tables"; one- and two-way tables is Domingo-Ferrer & Torra's
  (2001b) CTBIL with t = 2, and the cell counts this implies match the ratios CTBIL'/ACTBIL' of
  ``003`` Tables 4-7 in magnitude.
- EBIL = Σ_records Σ_attributes H(V | V' = v'), with P(V = v | V' = v') estimated from the
  (original, protected) pairs of the attribute and H in bits (Domingo-Ferrer & Torra 2001b,
  EBILMF; the base of the logarithm is our choice).

Statisticians' checks: :func:`correlation_change` (each pair of columns, original and protected
correlation side by side) and :func:`regression_change` (OLS coefficients of a model the user picks,
with the R² of both fits, :func:`ols_r_squared`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = [
    "QUANTILE_LEVELS",
    "il_measures",
    "il1",
    "il1s",
    "il2",
    "il3",
    "il4",
    "il5",
    "pil_measures",
    "pil_from_z",
    "correlation_variance",
    "dist_il",
    "ctbil",
    "ebil",
    "correlation_change",
    "regression_change",
    "ols_r_squared",
    "NumericPair",
    "numeric_values",
    "paired_numeric",
]

#: The quantile levels of PIL(Q): 5 % to 95 % in steps of 5 % (``003`` Table 3).
QUANTILE_LEVELS = np.round(np.arange(1, 20) * 0.05, 2)


def _as_matrix(values: np.ndarray | pd.DataFrame) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    return x.reshape(-1, 1) if x.ndim == 1 else x


def _mean_of(num: np.ndarray, den: np.ndarray) -> float:
    """Mean of |num|/|den| over the entries with a non-zero denominator (NaN when none)."""
    keep = den != 0
    if not keep.any():
        return float("nan")
    return float(np.mean(np.abs(num[keep]) / np.abs(den[keep])))


def _pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(p, k=1)


def _columns_of(
    original: np.ndarray | pd.DataFrame,
    protected: np.ndarray | pd.DataFrame,
    columns: Sequence[int] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Both matrices, cut to ``columns`` (positions, each once; None: every column)."""
    x, y = _as_matrix(original), _as_matrix(protected)
    if columns is None:
        return x, y
    picked = [int(c) for c in columns]
    p = x.shape[1]
    if not picked:
        raise ValueError("columns names no column: give at least one, or None for all")
    if len(set(picked)) != len(picked):
        raise ValueError(f"columns {picked} names a column twice")
    outside = [c for c in picked if not 0 <= c < p]
    if outside:
        raise ValueError(f"columns {outside} are not positions of the {p} columns given")
    return x[:, picked], y[:, picked]


def il1(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL1: mean of |x − x'| / |x| over the cells whose original value is not 0.

    ``columns`` (here and in every IL/PIL function): the positions of the columns the averages
    are taken over, None (the default) for every column given; an empty list, a repeated or an
    out-of-range position raises ``ValueError``.
    """
    x, y = _columns_of(original, protected, columns)
    return _mean_of(x - y, x)


def il1s(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL1s (Yancey, Winkler & Creecy 2002): mean of |x − x'| / (√2 S_j) over the cells."""
    x, y = _columns_of(original, protected, columns)
    s = x.std(axis=0, ddof=1) if len(x) > 1 else np.zeros(x.shape[1])
    den = np.broadcast_to(np.sqrt(2.0) * s, x.shape)
    return _mean_of(x - y, den)


def il2(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL2: mean over attributes of |x̄ − x̄'| / |x̄|."""
    x, y = _columns_of(original, protected, columns)
    return _mean_of(x.mean(axis=0) - y.mean(axis=0), x.mean(axis=0))


def _cov(x: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.cov(x, rowvar=False, ddof=1))


def _corr(cov: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.diag(cov))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.outer(sd, sd)
    # A constant column has no correlation; 0 keeps the measure finite (documented as a choice).
    out: np.ndarray = np.where(np.isfinite(r), r, 0.0)
    return out


#: Columns with values above this are divided by their largest |value| before the covariance,
#: whose products would overflow (1.7e308 in a protected file); correlations do not change.
_CORRELATION_RESCALE = 1e150


def _correlations(x: np.ndarray) -> np.ndarray:
    """Pearson correlation matrix of the columns of ``x`` (:func:`_corr` of :func:`_cov`)."""
    if x.size:
        top = np.max(np.abs(x), axis=0)
        if np.any(np.isfinite(top) & (top > _CORRELATION_RESCALE)):
            x = x / np.where(np.isfinite(top) & (top > _CORRELATION_RESCALE), top, 1.0)
    return _corr(_cov(x))


def il3(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL3: mean over attributes of |v_jj − v'_jj| / |v_jj| (variances)."""
    x, y = _columns_of(original, protected, columns)
    vx, vy = _cov(x), _cov(y)
    return _mean_of(np.diag(vx) - np.diag(vy), np.diag(vx))


def il4(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL4: mean over pairs j < l of |v_jl − v'_jl| / |v_jl| (covariances)."""
    x, y = _columns_of(original, protected, columns)
    vx, vy = _cov(x), _cov(y)
    i, j = _pairs(vx.shape[0])
    return _mean_of(vx[i, j] - vy[i, j], vx[i, j])


def il5(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> float:
    """IL5: mean over pairs j < l of |r_jl − r'_jl| (Pearson correlations)."""
    x, y = _columns_of(original, protected, columns)
    rx, ry = _corr(_cov(x)), _corr(_cov(y))
    i, j = _pairs(rx.shape[0])
    if len(i) == 0:
        return float("nan")
    return float(np.mean(np.abs(rx[i, j] - ry[i, j])))


def il_measures(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> dict[str, float]:
    """IL1-IL5, IL1s and IL = 100·mean(IL1..IL5) (NaN-free measures only) as a dict.

    Parameters
    ----------
    original, protected
        (n, p) float arrays of the continuous attributes in original units, rows aligned.
    columns
        Positions of the columns the averages are taken over; None (the default): all p.
        ``003`` Table 2's rows for the first 6 attributes average over all 13 columns of a file
        whose first 6 were protected (module docstring): the whole file with None; with
        ``columns=range(6)``, the same file gives the figures over the protected columns only.
    """
    x, y = _columns_of(original, protected, columns)
    out = {
        "il1": il1(x, y),
        "il2": il2(x, y),
        "il3": il3(x, y),
        "il4": il4(x, y),
        "il5": il5(x, y),
    }
    defined = [v for v in out.values() if np.isfinite(v)]
    out["il"] = 100.0 * float(np.mean(defined)) if defined else float("nan")
    out["il1s"] = il1s(x, y)
    return out


# --------------------------------------------------------------------------------------------
# probabilistic information loss
# --------------------------------------------------------------------------------------------


def pil_from_z(diff: np.ndarray, var: np.ndarray) -> np.ndarray:
    """2Φ(|z|) − 1 for z = diff/√var; 0 where diff = 0, 1 where var = 0 and diff ≠ 0."""
    diff = np.asarray(diff, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    out = np.zeros(np.broadcast(diff, var).shape)
    diff, var = np.broadcast_to(diff, out.shape), np.broadcast_to(var, out.shape)
    moved = np.abs(diff) > 0
    pos = moved & (var > 0)
    from scipy.special import ndtr  # here: scipy.special takes 0.2 s to import

    out[pos] = 2.0 * ndtr(np.abs(diff[pos]) / np.sqrt(var[pos])) - 1.0
    out[moved & ~(var > 0)] = 1.0
    return out


def _kde_at(x: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Gaussian kernel density of the sample ``x`` at ``points``, Silverman's bandwidth."""
    n = len(x)
    sd = x.std(ddof=1) if n > 1 else 0.0
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    spread = min(sd, iqr / 1.349) if iqr > 0 else sd
    if spread <= 0 or n == 0:
        return np.zeros(len(points))
    h = 0.9 * spread * n ** (-0.2)
    dens = np.zeros(len(points))
    # chunks keep memory at O(chunk · len(points)) for large n
    for start in range(0, n, 65536):
        u = (points[None, :] - x[start : start + 65536, None]) / h
        dens += np.exp(-0.5 * u * u).sum(axis=0)
    out: np.ndarray = dens / (n * h * np.sqrt(2.0 * np.pi))
    return out


def correlation_variance(values: np.ndarray | pd.DataFrame) -> np.ndarray:
    """Large-sample variance of the Pearson correlation of each pair of columns j < l.

    With a = (x − x̄)/σ_x, b = (y − ȳ)/σ_y (σ with divisor n) and r the sample correlation,
    Var(r̂) ≈ mean(ψ²)/n, ψ = ab − r(a² + b²)/2: the delta-method variance
    (r²/4n)·[μ40/μ20² + μ04/μ02² + 2μ22/(μ20μ02) + 4μ22/μ11² − 4μ31/(μ11μ20) − 4μ13/(μ11μ02)]
    (module docstring) written so that nothing divides by μ11: r = 0 gives mean(a²b²)/n. A pair
    with a constant column gets 0. Returned in the order of ``np.triu_indices(p, 1)``.
    """
    x = _as_matrix(values)
    n, p = x.shape
    pi, pj = _pairs(p)
    out = np.zeros(len(pi))
    if n < 2 or len(pi) == 0:
        return out
    cx = x - x.mean(axis=0)
    sd = np.sqrt((cx * cx).mean(axis=0))
    z = np.divide(cx, sd, out=np.zeros_like(cx), where=sd > 0)
    start = 0
    # one column against all later ones: memory O(n·p), not O(n·p²)
    for j in range(p - 1):
        a, b = z[:, j : j + 1], z[:, j + 1 :]
        ab = a * b
        r = ab.mean(axis=0)
        psi = ab - 0.5 * r * (a * a + b * b)
        var = (psi * psi).mean(axis=0) / n
        constant = (sd[j] == 0) | (sd[j + 1 :] == 0)
        out[start : start + p - 1 - j] = np.where(constant, 0.0, var)
        start += p - 1 - j
    return out


def pil_measures(
    original: np.ndarray, protected: np.ndarray, *, columns: Sequence[int] | None = None
) -> dict[str, float]:
    """PIL(Q), PIL(m1⁰), PIL(m2), PIL(m11), PIL(r) in [0, 1] and PIL = 100·their mean.

    Keys: ``pil_quantiles``, ``pil_means``, ``pil_variances``, ``pil_covariances``,
    ``pil_correlations``, ``pil`` (see the module docstring for the variances used).
    ``columns``: positions of the columns the averages are taken over (None: all), as for
    :func:`il_measures`.
    """
    x, y = _columns_of(original, protected, columns)
    n, p = x.shape
    if n < 2 or p == 0:
        nan = float("nan")
        return dict.fromkeys(
            ("pil_quantiles", "pil_means", "pil_variances", "pil_covariances"), nan
        ) | {"pil_correlations": nan, "pil": nan}
    alphas = QUANTILE_LEVELS
    q_parts = []
    for j in range(p):
        qx = np.quantile(x[:, j], alphas)
        qy = np.quantile(y[:, j], alphas)
        f = _kde_at(x[:, j], qx)
        with np.errstate(divide="ignore"):
            var = np.where(f > 0, alphas * (1 - alphas) / (n * f * f), 0.0)
        q_parts.append(pil_from_z(qy - qx, var))
    cx = x - x.mean(axis=0)
    m2 = (cx * cx).mean(axis=0)
    m4 = (cx**4).mean(axis=0)
    s2 = x.var(axis=0, ddof=1)
    pil_means = pil_from_z(y.mean(axis=0) - x.mean(axis=0), s2 / n)
    pil_vars = pil_from_z(y.var(axis=0, ddof=1) - s2, (m4 - m2 * m2) / n)
    pi, pj = _pairs(p)
    if len(pi):
        vx, vy = _cov(x), _cov(y)
        m11 = (cx[:, pi] * cx[:, pj]).mean(axis=0)
        m22 = ((cx[:, pi] * cx[:, pj]) ** 2).mean(axis=0)
        pil_cov = float(pil_from_z(vy[pi, pj] - vx[pi, pj], (m22 - m11 * m11) / n).mean())
        rx, ry = _corr(vx), _corr(vy)
        pil_r = float(pil_from_z(ry[pi, pj] - rx[pi, pj], correlation_variance(x)).mean())
    else:
        pil_cov = pil_r = float("nan")
    out = {
        "pil_quantiles": float(np.mean(q_parts)),
        "pil_means": float(pil_means.mean()),
        "pil_variances": float(pil_vars.mean()),
        "pil_covariances": pil_cov,
        "pil_correlations": pil_r,
    }
    defined = [v for v in out.values() if np.isfinite(v)]
    out["pil"] = 100.0 * float(np.mean(defined))
    return out


# --------------------------------------------------------------------------------------------
# categorical
# --------------------------------------------------------------------------------------------


def _codes(values: np.ndarray) -> np.ndarray:
    c = np.asarray(values, dtype=np.int64)
    return c.reshape(-1, 1) if c.ndim == 1 else c


def dist_il(
    original: np.ndarray, protected: np.ndarray, ordinal_sizes: Sequence[int | None]
) -> float:
    """Dist: Σ over records and attributes of d(v, v').

    ``ordinal_sizes[j]`` is |D(V_j)| for an ordinal column (codes are ranks; d_ORD of ``003``
    eq. 1) and None for a nominal one (codes compared by equality). A protected ordinal code
    outside 0..|D(V_j)|-1 is a suppressed cell (:func:`~microgui.core.metrics.evaluate.evaluate`
    codes a blank so): it loses the whole value, distance 1, as a changed nominal value does
    (more than any move along the order, at most (|D|-1)/|D|).
    """
    x, y = _codes(original), _codes(protected)
    total = 0.0
    for j, size in enumerate(ordinal_sizes):
        if size is None:
            total += float(np.count_nonzero(x[:, j] != y[:, j]))
        else:
            width = max(int(size), 1)
            off = (y[:, j] < 0) | (y[:, j] >= width)
            moved = np.abs(x[~off, j] - y[~off, j]).sum()
            total += float(moved) / width + float(np.count_nonzero(off))
    return total


def ctbil(
    original: np.ndarray, protected: np.ndarray, domain_sizes: Sequence[int], max_dim: int = 2
) -> tuple[float, float]:
    """(CTBIL', ACTBIL') over the contingency tables of 1..``max_dim`` attributes.

    ``domain_sizes[j]`` is the number of categories of column j (codes are 0..size−1).
    """
    x, y = _codes(original), _codes(protected)
    sizes = [int(s) for s in domain_sizes]
    total = 0.0
    cells = 0
    for dim in range(1, max_dim + 1):
        for cols in combinations(range(x.shape[1]), dim):
            n_cells = int(np.prod([sizes[c] for c in cols]))
            key_x = np.zeros(len(x), dtype=np.int64)
            key_y = np.zeros(len(y), dtype=np.int64)
            for c in cols:
                key_x = key_x * sizes[c] + x[:, c]
                key_y = key_y * sizes[c] + y[:, c]
            cx = np.bincount(key_x, minlength=n_cells)
            cy = np.bincount(key_y, minlength=n_cells)
            total += float((np.abs(cx - cy) / np.maximum(cx, 1)).sum())
            cells += n_cells
    return total, (total / cells if cells else float("nan"))


def ebil(original: np.ndarray, protected: np.ndarray) -> float:
    """EBIL: Σ over records and attributes of H(V | V' = v') in bits."""
    x, y = _codes(original), _codes(protected)
    total = 0.0
    for j in range(x.shape[1]):
        m = int(max(x[:, j].max(initial=0), y[:, j].max(initial=0))) + 1
        joint = np.bincount(y[:, j] * m + x[:, j], minlength=m * m).reshape(m, m)
        given = joint.sum(axis=1)  # records per protected value
        with np.errstate(divide="ignore", invalid="ignore"):
            prob = joint / given[:, None]
            h = -np.where(joint > 0, prob * np.log2(np.where(joint > 0, prob, 1.0)), 0.0).sum(
                axis=1
            )
        # every record with protected value v' carries H(V | V' = v')
        total += float((h * given).sum())
    return total


# --------------------------------------------------------------------------------------------
# what statisticians ask first
# --------------------------------------------------------------------------------------------


def correlation_change(
    original: np.ndarray | pd.DataFrame,
    protected: np.ndarray | pd.DataFrame,
    names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Pearson correlation of every pair of columns, original and protected side by side.

    Returns one row per pair (``column_a``, ``column_b``, ``original``, ``protected``,
    ``difference`` = protected − original).
    """
    if names is None:
        names = (
            [str(c) for c in original.columns]
            if isinstance(original, pd.DataFrame)
            else [f"x{j + 1}" for j in range(_as_matrix(np.asarray(original)).shape[1])]
        )
    rx = _correlations(_as_matrix(np.asarray(original, dtype=np.float64)))
    ry = _correlations(_as_matrix(np.asarray(protected, dtype=np.float64)))
    i, j = _pairs(rx.shape[0])
    return pd.DataFrame(
        {
            "column_a": [names[a] for a in i],
            "column_b": [names[b] for b in j],
            "original": rx[i, j],
            "protected": ry[i, j],
            "difference": ry[i, j] - rx[i, j],
        }
    )


def _ols(frame: pd.DataFrame, y: str, xs: Sequence[str]) -> np.ndarray:
    target = pd.to_numeric(frame[y], errors="raise").to_numpy(dtype=np.float64)
    design = np.column_stack(
        [np.ones(len(frame))]
        + [pd.to_numeric(frame[c], errors="raise").to_numpy(dtype=np.float64) for c in xs]
    )
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    out: np.ndarray = coef
    return out


def regression_change(
    original: pd.DataFrame, protected: pd.DataFrame, y: str, xs: Sequence[str]
) -> pd.DataFrame:
    """OLS of ``y`` on ``xs`` (with intercept) in both tables, coefficients side by side.

    Returns a frame indexed by ``(intercept)`` and the ``xs`` with columns ``original``,
    ``protected``, ``difference`` (protected − original) and ``relative_difference``
    (difference / |original|, NaN for a zero original coefficient). Text cells that hold numbers
    are converted; other text raises ``ValueError``.
    """
    xs = [str(c) for c in xs]
    if not xs:
        raise ValueError("name at least one explanatory column")
    a = _ols(original, y, xs)
    b = _ols(protected, y, xs)
    diff = b - a
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(a != 0, diff / np.abs(a), np.nan)
    table = pd.DataFrame(
        {"original": a, "protected": b, "difference": diff, "relative_difference": rel},
        index=pd.Index(["(intercept)", *xs], name="term"),
    )
    # Goodness of fit of both models, as attributes so that the columns stay what the CLI reads.
    table.attrs["r_squared_original"] = ols_r_squared(original, y, xs)
    table.attrs["r_squared_protected"] = ols_r_squared(protected, y, xs)
    table.attrs["n_records"] = len(original)
    return table


def ols_r_squared(frame: pd.DataFrame, y: str, xs: Sequence[str]) -> float:
    """R² = 1 − SSR/SST of the OLS fit of ``y`` on ``xs`` with intercept (SST about the mean of y).

    NaN when ``y`` is constant (SST = 0: there is nothing to explain). :func:`regression_change`
    stores it for both tables as ``attrs["r_squared_original"]`` and ``attrs["r_squared_protected"]``.
    """
    xs = [str(c) for c in xs]
    coef = _ols(frame, y, xs)
    target = pd.to_numeric(frame[y], errors="raise").to_numpy(dtype=np.float64)
    design = np.column_stack(
        [np.ones(len(frame))]
        + [pd.to_numeric(frame[c], errors="raise").to_numpy(dtype=np.float64) for c in xs]
    )
    residual = target - design @ coef
    sst = float(np.sum((target - target.mean()) ** 2))
    if sst == 0.0:
        return float("nan")
    return 1.0 - float(np.sum(residual**2)) / sst


def numeric_values(series: pd.Series) -> np.ndarray | None:
    """The column as float64 (missing values NaN), or None when a value that is not missing is
    not a number: a generalized range such as ``"[20, 30)"``, a category. Text that holds
    numbers (``" 42 "``) is converted; booleans count as 0/1."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    # Parse each distinct value once (a category column has a handful): ``pd.to_numeric`` over
    # every cell of a 30,000-record text column held the GIL for ~200 ms in one C call, which
    # stalled the app's GUI thread while a run's analyses ran in a worker (issue 30).
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    text = pd.Series(uniques, dtype=object).astype("string").str.strip()
    values = pd.to_numeric(text, errors="coerce")
    bad = values.isna() & text.notna() & (text != "").fillna(False)
    if bool(bad.fillna(False).any()):
        return None
    lookup = np.append(values.to_numpy(dtype=np.float64, na_value=np.nan), np.nan)
    return lookup[codes]  # a missing value's code is -1: the NaN appended last


@dataclass(frozen=True)
class NumericPair:
    """Columns of an original and a protected table as numbers, on the same complete rows.

    ``original`` and ``protected`` hold the usable columns (float64, rows with a missing value in
    either table left out: listwise deletion, so both sides describe the same records);
    ``skipped`` says why each other column asked for is not there; ``dropped_rows`` counts the
    rows left out.
    """

    original: pd.DataFrame
    protected: pd.DataFrame
    skipped: Mapping[str, str] = field(default_factory=dict)
    dropped_rows: int = 0

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.original.columns]


def paired_numeric(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str]
) -> NumericPair:
    """The ``columns`` that are numbers in both tables, on the rows complete in both.

    A column that is text in the original, missing from the protected table, or released as
    non-numeric values (a generalized range, ``mstk``) is skipped with the reason and an example
    value. Row i of ``protected`` must be the protected version of row i of ``original``.
    """
    if len(original) != len(protected):
        raise ValueError(
            f"the original has {len(original):,} rows and the protected table {len(protected):,}; "
            "they must describe the same records"
        )
    skipped: dict[str, str] = {}
    orig_cols: dict[str, np.ndarray] = {}
    prot_cols: dict[str, np.ndarray] = {}
    for name in dict.fromkeys(str(c) for c in columns):
        if name not in original.columns:
            skipped[name] = "not a column of the original table"
            continue
        if name not in protected.columns:
            skipped[name] = "not in the protected table"
            continue
        a = numeric_values(original[name])
        if a is None:
            skipped[name] = "not numeric in the original table"
            continue
        b = numeric_values(protected[name])
        if b is None:
            text = protected[name].astype("string").str.strip()
            bad = pd.to_numeric(text, errors="coerce").isna() & (text != "").fillna(False)
            where = bad.fillna(False).to_numpy(dtype=bool)
            example = str(text[where].iloc[0]) if where.any() else ""
            shown = f" (e.g. {example!r})" if example else ""
            skipped[name] = f"released as generalized values, not numbers{shown}"
            continue
        orig_cols[name], prot_cols[name] = a, b
    n = len(original)
    keep = np.ones(n, dtype=bool)
    for name in orig_cols:
        keep &= np.isfinite(orig_cols[name]) & np.isfinite(prot_cols[name])
    return NumericPair(
        pd.DataFrame(
            {c: v[keep] for c, v in orig_cols.items()}, index=pd.RangeIndex(int(keep.sum()))
        ),
        pd.DataFrame(
            {c: v[keep] for c, v in prot_cols.items()}, index=pd.RangeIndex(int(keep.sum()))
        ),
        skipped,
        int(n - keep.sum()) if orig_cols else 0,
    )
