"""A model the user writes, fitted on the original and on the released table (issue 29).

``"salary-class ~ age + education + sex"``: the outcome left of ``~``, the explanatory columns
right of it joined by ``+`` (a column name as it is, or quoted in backticks or quotes when it
holds ``+`` or ``~``; no interactions or transformations). The fits are statsmodels' ``OLS``
(a numeric outcome) and ``Logit`` (a binary outcome), on designs built here:

- an intercept, named ``(intercept)``;
- a number column as it is; in the release a range (``[20, 30)``, a generalization) stands for
  its midpoint (:func:`~microgui.core.metrics.categorical_utility.released_numbers`);
- a categorical column in treatment coding: its original categories in sorted order (numbers
  by value) are levels 1..L, level 1 is the reference and levels 2..L each get an indicator.
  In reports a coefficient is named by its column and level index, ``education#3``, never by the
  level's text (a category is a value of the data); the app shows the text on screen.
  A released value that is not an original level (a generalization) counts as missing.
- a binary outcome: its two levels in sorted order (numbers by value, text alphabetically);
  **1 is level 2** (for Adult's salary-class, ``>50K``), 0 is level 1. A categorical outcome
  with more than two levels is refused (no multinomial model).

**Records**: listwise deletion, as :mod:`microgui.core.metrics.association`: a record missing
(or not a number / not a level) in any column of the model in either table is left out of both
fits, so both describe the same records; ``dropped_rows`` counts them.

**Intervals**: the 95 % Wald intervals statsmodels gives (``conf_int(0.05)``: t for OLS, normal
for Logit).

**Confidence-interval overlap** (Karr, Kohnen, Oganian, Reiter & Sanil 2006, "A framework for
evaluating the utility of data altered to protect confidentiality", *The American Statistician*
60(3), 224-232, §3): for a coefficient with interval (L_o, U_o) on the original and (L_p, U_p)
on the release, L = max(L_o, L_p), U = min(U_o, U_p) and

    J = ½ [ (U − L) / (U_o − L_o) + (U − L) / (U_p − L_p) ].

J = 1 for identical intervals, 0 when they only touch; we keep Karr et al.'s value when they do
not overlap, which is negative and more so the farther apart they are (some tools floor it at
0; we do not). ``mean_overlap`` averages J over the coefficients.

Errors: an unknown column, a non-binary categorical outcome, a constant column, a collinear
design, no record left, perfect separation or a fit that does not converge raise
:class:`InvalidParameter` with a one-line message naming the column and the table.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidParameter
from microgui.core.io import json_number
from microgui.core.metrics.categorical_utility import (
    _key_codes,
    _sorted_categories,
    column_is_numeric,
    released_numbers,
)
from microgui.core.metrics.utility import numeric_values
from microgui.core.table.roles import RoleMap

__all__ = [
    "INTERCEPT",
    "Formula",
    "ModelComparison",
    "ci_overlap",
    "parse_formula",
    "fit_model",
]

#: The intercept's name.
INTERCEPT = "(intercept)"


def ci_overlap(
    lo_original: float | np.ndarray,
    hi_original: float | np.ndarray,
    lo_released: float | np.ndarray,
    hi_released: float | np.ndarray,
) -> np.ndarray:
    """Karr et al. (2006) interval overlap J (see the module docstring); NaN where an interval
    has no width."""
    lo_o, hi_o = np.asarray(lo_original, float), np.asarray(hi_original, float)
    lo_p, hi_p = np.asarray(lo_released, float), np.asarray(hi_released, float)
    inner = np.minimum(hi_o, hi_p) - np.maximum(lo_o, lo_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = 0.5 * (inner / (hi_o - lo_o) + inner / (hi_p - lo_p))
    out: np.ndarray = np.where((hi_o > lo_o) & (hi_p > lo_p), j, np.nan)
    return out


@dataclass(frozen=True)
class Formula:
    """``y ~ x1 + x2``: the outcome and the explanatory columns."""

    y: str
    xs: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.y} ~ {' + '.join(self.xs)}"


def _name(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in "`'\"":
        return part[1:-1]
    return part


def parse_formula(text: str, columns: Sequence[str]) -> Formula:
    """``"Y ~ X1 + X2"`` → :class:`Formula`, every name a column of ``columns``."""
    if not isinstance(text, str) or text.count("~") != 1:
        raise InvalidParameter(f"model {text!r}: write it as Y ~ X1 + X2")
    left, right = text.split("~")
    # '+' inside backticks or quotes belongs to a name
    parts = re.findall(r"\s*(?:`[^`]*`|\"[^\"]*\"|'[^']*')\s*|[^+]+", right)
    y = _name(left)
    xs = [_name(p) for p in parts if p.strip()]
    if not y or not xs or any(not x for x in xs):
        raise InvalidParameter(f"model {text!r}: write it as Y ~ X1 + X2")
    known = [str(c) for c in columns]
    for name in (y, *xs):
        if name not in known:
            raise InvalidParameter(f"model {text!r}: there is no column {name!r}")
    if y in xs:
        raise InvalidParameter(f"model {text!r}: {y!r} is the outcome and cannot also explain it")
    if len(set(xs)) != len(xs):
        raise InvalidParameter(f"model {text!r}: a column is named twice")
    return Formula(y, tuple(xs))


@dataclass(frozen=True)
class ModelComparison:
    """One model fitted on both tables.

    ``terms``: JSON-safe names (``(intercept)``, ``age``, ``education#3``); ``term_labels``:
    the same for the screen (``education = Bachelors``), never written to a report.
    ``kind``: ``"ols"`` or ``"logit"``; ``outcome_one``: for a logit, the outcome level coded 1
    as "level 2 of 2" (``outcome_one_label`` its text, screen only).
    """

    formula: Formula
    kind: str
    terms: tuple[str, ...]
    term_labels: tuple[str, ...]
    original: np.ndarray
    released: np.ndarray
    ci_original: np.ndarray  # (terms, 2)
    ci_released: np.ndarray
    n_records: int
    dropped_rows: int
    outcome_one: str = ""
    outcome_one_label: str = ""
    #: logit: indicators (``column#level``) whose records all share one outcome in a table,
    #: left out with their records (Stata's logit does the same); ``separated_rows`` counts them
    separated: tuple[str, ...] = ()
    separated_rows: int = 0

    @property
    def overlap(self) -> np.ndarray:
        return ci_overlap(
            self.ci_original[:, 0], self.ci_original[:, 1], self.ci_released[:, 0],
            self.ci_released[:, 1],
        )  # fmt: skip

    @property
    def mean_overlap(self) -> float | None:
        j = self.overlap
        j = j[np.isfinite(j)]
        return float(j.mean()) if len(j) else None

    def table(self) -> pd.DataFrame:
        """One row per term (screen labels as index)."""
        return pd.DataFrame(
            {
                "term": self.terms,
                "original": self.original,
                "released": self.released,
                "ci_original_low": self.ci_original[:, 0],
                "ci_original_high": self.ci_original[:, 1],
                "ci_released_low": self.ci_released[:, 0],
                "ci_released_high": self.ci_released[:, 1],
                "overlap": self.overlap,
            },
            index=pd.Index(self.term_labels, name="label"),
        )

    def summary(self) -> dict[str, Any]:
        """JSON-ready: terms by column and level index, no level text."""
        j = self.overlap
        coefficients = [
            {
                "term": term,
                "original": json_number(self.original[i]),
                "released": json_number(self.released[i]),
                "ci_original": [json_number(v) for v in self.ci_original[i]],
                "ci_released": [json_number(v) for v in self.ci_released[i]],
                "overlap": json_number(j[i]),
            }
            for i, term in enumerate(self.terms)
        ]
        out: dict[str, Any] = {
            "formula": self.formula.text,
            "kind": self.kind,
            "n_records": int(self.n_records),
            "dropped_rows": int(self.dropped_rows),
            "mean_overlap": json_number(self.mean_overlap),
            "coefficients": coefficients,
        }
        if self.outcome_one:
            out["outcome_one"] = self.outcome_one
            out["separated"] = list(self.separated)
            out["separated_rows"] = int(self.separated_rows)
        return out


@dataclass(frozen=True)
class _Column:
    numeric: bool
    original: np.ndarray  # numbers, or level codes (−1 missing)
    released: np.ndarray
    missing: np.ndarray
    levels: tuple[str, ...] = ()


def _column(original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap, c: str) -> _Column:
    if column_is_numeric(original, roles, c):
        x = numeric_values(original[c])
        assert x is not None
        y = released_numbers(original[c], protected[c])
        return _Column(True, x, y, ~np.isfinite(x) | ~np.isfinite(y))
    oc, okeys = _key_codes(original[c])
    rc, rkeys = _key_codes(protected[c])
    used = np.unique(oc[oc >= 0])
    levels = _sorted_categories([okeys[i] for i in used])
    index = {k: i for i, k in enumerate(levels)}
    o = np.array([index.get(k, -1) for k in okeys] + [-1], dtype=np.int64)[
        np.where(oc < 0, len(okeys), oc)
    ]
    r = np.array([index.get(k, -1) for k in rkeys] + [-1], dtype=np.int64)[
        np.where(rc < 0, len(rkeys), rc)
    ]
    return _Column(False, o, r, (o < 0) | (r < 0), tuple(levels))


def _outcome(
    col: _Column, name: str, keep: np.ndarray
) -> tuple[str, np.ndarray, np.ndarray, str, str]:
    """(kind, y original, y released, outcome_one, its label); the outcome arrays are
    full-length, valid on the kept records (0/1 for a logit)."""
    if col.numeric:
        values = np.unique(col.original[keep])
        if len(values) > 2:
            return "ols", col.original, col.released, "", ""
        levels = tuple(_label(v) for v in values)
        o = np.searchsorted(values, col.original[keep]).astype(np.int64)
        r_values = col.released[keep]
        # a released value that is neither level cannot enter a logit
        inside = np.isin(r_values, values)
        if not inside.all():
            raise InvalidParameter(
                f"the outcome {name!r} has two values in the original table but others in the "
                "released table: a logistic regression needs the same two"
            )
        r = np.searchsorted(values, r_values).astype(np.int64)
    else:
        levels = col.levels
        o, r = col.original[keep], col.released[keep]
        present = np.unique(o)
        if len(present) > 2:
            raise InvalidParameter(
                f"the outcome {name!r} has {len(present)} categories: a logistic regression "
                "needs a binary outcome (two categories)"
            )
        levels = tuple(levels[i] for i in present)
        if not np.isin(r, present).all():
            raise InvalidParameter(
                f"the outcome {name!r} takes a category in the released table that it does not "
                "take in the original on the same records: a logistic regression needs the same two"
            )
        o = np.searchsorted(present, o)
        r = np.searchsorted(present, r)
    if len(levels) < 2:
        raise InvalidParameter(
            f"the outcome {name!r} is constant in the original table: there is nothing to model"
        )
    y_o = np.full(len(keep), np.nan)
    y_r = np.full(len(keep), np.nan)
    y_o[keep], y_r[keep] = o, r
    return "logit", y_o, y_r, "level 2 of 2 in sorted order", levels[1]


def _label(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _design(
    cols: dict[str, _Column],
    xs: Sequence[str],
    keep: np.ndarray,
    side: str,
    present: dict[str, np.ndarray],
) -> tuple[np.ndarray, list[str], list[str]]:
    """The design on the kept records: intercept, numbers, and an indicator for each level of a
    categorical column present on the kept records but the first (the reference)."""
    n = int(keep.sum())
    parts = [np.ones((n, 1))]
    names, labels = [INTERCEPT], [INTERCEPT]
    for x in xs:
        c = cols[x]
        v = getattr(c, side)[keep]
        if c.numeric:
            parts.append(v.reshape(-1, 1))
            names.append(x)
            labels.append(x)
        else:
            for level in present[x][1:]:
                parts.append((v == level).astype(np.float64).reshape(-1, 1))
                names.append(f"{x}#{int(level) + 1}")
                labels.append(f"{x} = {c.levels[int(level)]}")
    return np.hstack(parts), names, labels


def _check_design(design: np.ndarray, names: Sequence[str], xs: Sequence[str], table: str) -> None:
    n, p = design.shape
    for j in range(1, p):
        if np.ptp(design[:, j]) == 0:
            column = names[j].split("#")[0]
            raise InvalidParameter(
                f"{column!r} is constant in the {table} table (on the records of the model): "
                "its coefficient is not determined; leave it out"
            )
    if n <= p:
        raise InvalidParameter(
            f"only {n} record(s) have a value in every column of the model: too few to fit "
            f"{p} coefficients"
        )
    if np.linalg.matrix_rank(design) < p:
        raise InvalidParameter(
            f"the explanatory variables {', '.join(xs)} are collinear in the {table} table: "
            "the coefficients are not determined; leave one out"
        )


def _fit(kind: str, y: np.ndarray, design: np.ndarray, table: str) -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import (
        ConvergenceWarning,
        HessianInversionWarning,
        PerfectSeparationError,
        PerfectSeparationWarning,
    )

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if kind == "ols":
                result = sm.OLS(y, design).fit()
            else:
                result = sm.Logit(y, design).fit(disp=0, maxiter=100)
        except PerfectSeparationError:
            caught.append(
                warnings.WarningMessage(
                    PerfectSeparationWarning("separation"), PerfectSeparationWarning, "", 0
                )
            )
            result = None
        except np.linalg.LinAlgError:
            raise InvalidParameter(
                f"the model cannot be fitted on the {table} table: its design matrix is "
                "singular (collinear explanatory variables)"
            ) from None
    kinds = {w.category for w in caught}
    if PerfectSeparationWarning in kinds or any(
        issubclass(k, PerfectSeparationWarning) for k in kinds
    ):
        raise InvalidParameter(
            f"perfect separation in the {table} table: an explanatory variable predicts the "
            "outcome exactly, so the logistic coefficients are infinite; leave it out or merge "
            "its categories"
        )
    if result is None:  # pragma: no cover - separation handled above
        raise InvalidParameter(f"the model cannot be fitted on the {table} table")
    if kind == "logit":
        with np.errstate(over="ignore"):
            fitted = np.asarray(result.predict(), dtype=np.float64)
        # statsmodels warns of perfect prediction on some paths only: check the fit itself
        if np.all(np.abs(fitted - y) < 1e-6):
            raise InvalidParameter(
                f"perfect separation in the {table} table: the explanatory variables predict "
                "the outcome exactly, so the logistic coefficients are infinite; leave one out"
            )
        extreme = (fitted < 1e-8) | (fitted > 1 - 1e-8)
        if not result.mle_retvals.get("converged", True) and extreme.any():
            raise InvalidParameter(
                f"quasi-separation in the {table} table: some records' outcome is predicted "
                "exactly, so a logistic coefficient is infinite; leave a variable out or merge "
                "categories"
            )
    if kind == "logit" and not result.mle_retvals.get("converged", True):
        raise InvalidParameter(
            f"the logistic regression did not converge on the {table} table (quasi-separation "
            "or a category with very few records); leave a variable out or merge categories"
        )
    if ConvergenceWarning in kinds or HessianInversionWarning in kinds:
        raise InvalidParameter(
            f"the logistic regression did not converge on the {table} table; leave a variable "
            "out or merge categories"
        )
    params = np.asarray(result.params, dtype=np.float64)
    ci = np.asarray(result.conf_int(0.05), dtype=np.float64)
    if not (np.isfinite(params).all() and np.isfinite(ci).all()):
        raise InvalidParameter(
            f"the model's coefficients or intervals are not finite on the {table} table "
            "(a collinear design or separation); leave a variable out"
        )
    return params, ci


def fit_model(
    original: pd.DataFrame, protected: pd.DataFrame, roles: RoleMap, formula: str | Formula
) -> ModelComparison:
    """Fit ``formula`` (OLS for a numeric outcome, Logit for a binary one) on the original and
    on the released table, on the records usable in both (see the module docstring)."""
    if len(original) != len(protected):
        raise InvalidParameter(
            f"the original has {len(original):,} rows and the release {len(protected):,}; "
            "they must describe the same records"
        )
    common = [str(c) for c in original.columns if c in protected.columns]
    f = formula if isinstance(formula, Formula) else parse_formula(formula, common)
    for name in (f.y, *f.xs):
        if name not in common:
            raise InvalidParameter(f"model {f.text!r}: there is no column {name!r} in both tables")
    cols = {c: _column(original, protected, roles, c) for c in (f.y, *f.xs)}
    keep = np.ones(len(original), dtype=bool)
    for c in cols.values():
        keep &= ~c.missing
    if not keep.any():
        raise InvalidParameter(
            f"model {f.text!r}: no record has a value in every column of the model in both tables"
        )
    kind, y_o, y_r, one, one_label = _outcome(cols[f.y], f.y, keep)
    categorical = [x for x in f.xs if not cols[x].numeric]
    separated: list[str] = []
    before = int(keep.sum())
    present: dict[str, np.ndarray] = {}
    for _ in range(len(original) + 1):  # each pass drops records, or stops
        present = {x: np.unique(cols[x].original[keep]) for x in categorical}
        changed = False
        for x in categorical:
            # a released level the kept original records lack has no indicator: left out
            inside = np.isin(cols[x].released, present[x])
            if (keep & ~inside).any():
                keep &= inside
                changed = True
        if kind == "logit":
            for x in categorical:
                for level in present[x]:
                    in_o = keep & (cols[x].original == level)
                    in_r = keep & (cols[x].released == level)
                    # the indicator predicts the outcome exactly in one table's fit
                    if (in_o.any() and np.ptp(y_o[in_o]) == 0) or (
                        in_r.any() and np.ptp(y_r[in_r]) == 0
                    ):
                        keep &= ~(in_o | in_r)
                        separated.append(f"{x}#{int(level) + 1}")
                        changed = True
        if not changed or not keep.any():
            break
    if not keep.any():
        raise InvalidParameter(
            f"model {f.text!r}: every record is in a category that predicts the outcome "
            "exactly: there is nothing left to fit"
        )
    x_o, names, labels = _design(cols, f.xs, keep, "original", present)
    x_r, _, _ = _design(cols, f.xs, keep, "released", present)
    _check_design(x_o, names, f.xs, "original")
    _check_design(x_r, names, f.xs, "released")
    y_o, y_r = y_o[keep], y_r[keep]
    if kind == "logit":
        for y, table in ((y_o, "original"), (y_r, "released")):
            if np.ptp(y) == 0:
                raise InvalidParameter(
                    f"the outcome {f.y!r} is constant in the {table} table on the records of "
                    "the model: there is nothing to model"
                )
    b_o, ci_o = _fit(kind, y_o, x_o, "original")
    b_r, ci_r = _fit(kind, y_r, x_r, "released")
    n_complete = int((~np.logical_or.reduce([c.missing for c in cols.values()])).sum())
    return ModelComparison(
        f,
        kind,
        tuple(names),
        tuple(labels),
        b_o,
        b_r,
        ci_o,
        ci_r,
        int(keep.sum()),
        len(original) - n_complete,
        one,
        one_label,
        tuple(dict.fromkeys(separated)),
        before - int(keep.sum()),
    )
