"""The user's model before and after (:mod:`microgui.core.metrics.models`): coefficients checked
against independent solvers (numpy lstsq for OLS, a Newton iteration written here for the
logit), the Karr et al. (2006) overlap by hand, and one-line errors for unfit models."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microgui.core.errors import InvalidParameter
from microgui.core.metrics.models import ci_overlap, fit_model, parse_formula
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

QI = AttributeRole.QUASI_IDENTIFIER


def _roles(frame: pd.DataFrame, nominal: tuple[str, ...] = ()) -> RoleMap:
    return RoleMap.from_dict(
        {
            c: ColumnSpec(QI, AttributeKind.NOMINAL if c in nominal else AttributeKind.CONTINUOUS)
            for c in frame.columns
        }
    )


def _table(n: int = 60, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    g = rng.choice(["p", "q", "r"], size=n)
    y = 1.0 + 2.0 * x1 + np.select([g == "q", g == "r"], [0.5, -1.0], 0.0) + rng.normal(size=n)
    logits = -0.3 + 1.2 * x1 + np.select([g == "q", g == "r"], [0.8, -0.6], 0.0)
    b = np.where(rng.random(n) < 1 / (1 + np.exp(-logits)), "yes", "no")
    return pd.DataFrame({"y": y, "x1": x1, "g": g, "b": b})


def _design(frame: pd.DataFrame) -> np.ndarray:
    return np.column_stack([np.ones(len(frame)), frame.x1, frame.g == "q", frame.g == "r"]).astype(
        float
    )


def test_ols_matches_lstsq_and_t_intervals() -> None:
    original = _table()
    released = original.copy()
    released["x1"] = released["x1"].round(1)
    roles = _roles(original, ("g", "b"))
    m = fit_model(original, released, roles, "y ~ x1 + g")
    assert m.kind == "ols"
    assert m.terms == ("(intercept)", "x1", "g#2", "g#3")  # level indices, no level text
    assert m.term_labels[2] == "g = q"
    for frame, coef, ci in (
        (original, m.original, m.ci_original),
        (released, m.released, m.ci_released),
    ):
        x = _design(frame)
        beta, res, *_ = np.linalg.lstsq(x, frame.y.to_numpy(), rcond=None)
        assert coef == pytest.approx(beta, rel=1e-9)
        dof = len(frame) - x.shape[1]
        se = np.sqrt(res[0] / dof * np.diag(np.linalg.inv(x.T @ x)))
        half = stats.t.ppf(0.975, dof) * se
        assert ci[:, 0] == pytest.approx(beta - half, rel=1e-8)
        assert ci[:, 1] == pytest.approx(beta + half, rel=1e-8)


def _newton_logit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ beta))
        hessian = x.T @ (x * (p * (1 - p))[:, None])
        step = np.linalg.solve(hessian, x.T @ (y - p))
        beta += step
        if np.abs(step).max() < 1e-12:
            break
    p = 1 / (1 + np.exp(-x @ beta))
    se = np.sqrt(np.diag(np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))))
    return beta, se


def test_logit_matches_an_independent_newton_iteration() -> None:
    original = _table(200, seed=3)
    released = original.copy()
    released["x1"] = released["x1"] + np.random.default_rng(9).normal(0, 0.2, len(released))
    roles = _roles(original, ("g", "b"))
    m = fit_model(original, released, roles, "b ~ x1 + g")
    assert m.kind == "logit"
    assert m.outcome_one == "level 2 of 2 in sorted order" and m.outcome_one_label == "yes"
    for frame, coef, ci in (
        (original, m.original, m.ci_original),
        (released, m.released, m.ci_released),
    ):
        beta, se = _newton_logit(_design(frame), (frame.b == "yes").to_numpy(float))
        assert coef == pytest.approx(beta, rel=1e-6)
        z = stats.norm.ppf(0.975)
        assert ci[:, 0] == pytest.approx(beta - z * se, rel=1e-5)
    assert json.dumps(m.summary()).count('"yes"') == 0


def test_ci_overlap_karr_et_al_by_hand() -> None:
    # identical intervals 1; touching 0; [0, 2] vs [1, 5]: overlap 1 -> (1/2 + 1/4)/2
    assert ci_overlap(0, 2, 0, 2) == pytest.approx(1.0)
    assert ci_overlap(0, 2, 2, 4) == pytest.approx(0.0)
    assert ci_overlap(0, 2, 1, 5) == pytest.approx(0.375)
    # apart: negative, as Karr et al. define it (not floored)
    assert ci_overlap(0, 1, 3, 4) == pytest.approx(-2.0)


def test_model_on_identical_tables_overlaps_fully() -> None:
    original = _table()
    m = fit_model(original, original.copy(), _roles(original, ("g", "b")), "y ~ x1 + g")
    assert m.overlap == pytest.approx(np.ones(4))
    assert m.mean_overlap == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("formula", "change", "message"),
    [
        ("y ~ nope", None, "no column 'nope'"),
        ("y x1", None, "write it as"),
        ("y ~ y", None, "cannot also explain"),
        ("g ~ x1", None, "3 categories"),
        ("y ~ x1 + c", "const", "'c' is constant in the original"),
        ("y ~ x1 + x2", "collinear", "collinear in the original"),
        ("y ~ x1", "empty", "no record has a value"),
        ("b ~ x1", "separated", "perfect separation in the original"),
    ],
)
def test_unfit_models_give_one_line_messages(
    formula: str, change: str | None, message: str
) -> None:
    original = _table()
    original["c"] = 1.0
    original["x2"] = 2 * original["x1"] + 1
    if change == "empty":
        original["y"] = np.nan
    if change == "separated":
        original["b"] = np.where(original.x1 > 0, "yes", "no")
    roles = _roles(original, ("g", "b"))
    with pytest.raises(InvalidParameter, match=message) as info:
        fit_model(original, original.copy(), roles, formula)
    assert "\n" not in str(info.value)


def test_a_category_predicting_the_outcome_is_left_out_with_its_records() -> None:
    original = _table(120, seed=5)
    original.loc[original.g == "r", "b"] = "no"  # level 3 of g always "no"
    roles = _roles(original, ("g", "b"))
    m = fit_model(original, original.copy(), roles, "b ~ x1 + g")
    assert m.separated == ("g#3",)
    assert m.separated_rows == int((original.g == "r").sum())
    assert "g#3" not in m.terms and m.n_records == len(original) - m.separated_rows


def test_formula_quoting_and_hyphenated_names() -> None:
    f = parse_formula("`salary-class` ~ age + `a+b`", ["salary-class", "age", "a+b"])
    assert (f.y, f.xs) == ("salary-class", ("age", "a+b"))
    f = parse_formula("salary-class ~ age", ["salary-class", "age"])
    assert f.y == "salary-class"
