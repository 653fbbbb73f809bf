"""Information-loss measures (issue 5): hand-computed cases and ``003`` Tables 2-3 on Census."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microgui.core.metrics.utility import (
    correlation_change,
    correlation_variance,
    ctbil,
    dist_il,
    ebil,
    il1,
    il1s,
    il2,
    il3,
    il4,
    il5,
    il_measures,
    numeric_values,
    ols_r_squared,
    paired_numeric,
    pil_from_z,
    pil_measures,
    regression_change,
)
from microgui.core.runs import RunSpec, run_protection
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

# a = 1..4 protected as 1,1,4,4 (mean kept, variance 5/3 -> 3); b unchanged.
X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 4.0], [4.0, 3.0]])
Y = np.array([[1.0, 2.0], [1.0, 1.0], [4.0, 4.0], [4.0, 3.0]])


def test_il_by_hand() -> None:
    # IL1: cells of a: 0/1, 1/2, 1/3, 0/4; cells of b: all 0 -> (1/2 + 1/3) / 8
    assert il1(X, Y) == pytest.approx((0.5 + 1 / 3) / 8)
    # IL1s: mean |x - x'| of a is 1/2, of b 0; S_a = sqrt(5/3)
    assert il1s(X, Y) == pytest.approx((0.5 / (np.sqrt(2) * np.sqrt(5 / 3))) / 2)
    assert il2(X, Y) == pytest.approx(0.0)
    # variances: a 5/3 -> 3 (relative change 0.8), b unchanged
    assert il3(X, Y) == pytest.approx(0.4)
    # cov(a, b) = 3/3 = 1 -> cov(a', b) = 6/3 = 2
    assert il4(X, Y) == pytest.approx(1.0)
    # r = 1/(5/3) = 0.6 -> r' = 2/sqrt(3 * 5/3)
    assert il5(X, Y) == pytest.approx(abs(0.6 - 2 / np.sqrt(5)))
    m = il_measures(X, Y)
    expected = 100 * np.mean([(0.5 + 1 / 3) / 8, 0.0, 0.4, 1.0, abs(0.6 - 2 / np.sqrt(5))])
    assert m["il"] == pytest.approx(expected)


def test_il_single_column_and_zero_denominators() -> None:
    x = np.array([[0.0], [2.0], [4.0]])
    y = np.array([[1.0], [2.0], [3.0]])
    # the cell with original 0 is left out of IL1: (0/2 + 1/4) / 2
    assert il1(x, y) == pytest.approx(0.125)
    m = il_measures(x, y)
    assert np.isnan(m["il4"]) and np.isnan(m["il5"])
    assert m["il"] == pytest.approx(100 * np.mean([0.125, 0.0, 0.75]))


def test_pil_by_hand() -> None:
    assert pil_from_z(np.array([1.959963985]), np.array([1.0]))[0] == pytest.approx(0.95)
    assert pil_from_z(np.array([0.0]), np.array([0.0]))[0] == 0.0
    assert pil_from_z(np.array([0.5]), np.array([0.0]))[0] == 1.0
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 3))
    same = pil_measures(x, x)
    assert same["pil"] == pytest.approx(0.0)
    # a shift of the first column by c: z = c / sqrt(S²/n) for its mean, others unchanged
    y = x.copy()
    y[:, 0] += 0.1
    z = 0.1 / np.sqrt(x[:, 0].var(ddof=1) / 400)
    expected = (2 * __import__("scipy").stats.norm.cdf(z) - 1) / 3
    assert pil_measures(x, y)["pil_means"] == pytest.approx(expected)
    assert pil_measures(x, y)["pil_variances"] == pytest.approx(0.0, abs=1e-9)


def test_categorical_by_hand() -> None:
    # column 0 ordinal with 3 categories, column 1 nominal with 2
    x = np.array([[0, 0], [1, 1], [2, 0], [2, 1]])
    y = np.array([[1, 0], [1, 0], [2, 0], [1, 1]])
    # ordinal |rank diffs| 1+0+0+1 over |D| = 3, one nominal mismatch
    assert dist_il(x, y, [3, None]) == pytest.approx(2 / 3 + 1)
    # one-way tables: col 0 counts (1,1,2) -> (0,3,1): 1/1 + 2/1 + 1/2; col 1 (2,2) -> (3,1): 1/2 + 1/2
    total, per_cell = ctbil(x, y, [3, 2], max_dim=1)
    assert total == pytest.approx(4.5)
    assert per_cell == pytest.approx(4.5 / 5)
    # two-way adds the 3x2 table: orig cells (0,0)=1 (1,1)=1 (2,0)=1 (2,1)=1; prot (1,0)=2 (2,0)=1 (1,1)=1
    total2, per_cell2 = ctbil(x, y, [3, 2], max_dim=2)
    assert total2 == pytest.approx(4.5 + (1 + 2 + 0 + 0 + 0 + 1))
    assert per_cell2 == pytest.approx(total2 / 11)
    # EBIL: col 0, protected 1 holds originals {0,1,2} (3 records, log2 3 each);
    # col 1, protected 0 holds {0,1,0} (3 records, H(2/3,1/3) each)
    h = -(2 / 3 * np.log2(2 / 3) + 1 / 3 * np.log2(1 / 3))
    assert ebil(x, y) == pytest.approx(3 * np.log2(3) + 3 * h)
    assert ebil(x, x) == 0.0


def test_correlation_and_regression_change() -> None:
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    change = correlation_change(frame, Y)
    assert list(change.columns) == ["column_a", "column_b", "original", "protected", "difference"]
    assert change.loc[0, "original"] == pytest.approx(0.6)
    assert change.loc[0, "protected"] == pytest.approx(2 / np.sqrt(5))

    x = np.arange(10.0)
    original = pd.DataFrame({"y": 1 + 2 * x, "x": x})
    protected = pd.DataFrame({"y": (1 + 2 * x).astype(str), "x": x * 2})  # text numbers convert
    table = regression_change(original, protected, "y", ["x"])
    assert list(table.index) == ["(intercept)", "x"]
    assert table.loc["x", "original"] == pytest.approx(2.0)
    assert table.loc["(intercept)", "original"] == pytest.approx(1.0)
    assert table.loc["x", "protected"] == pytest.approx(1.0)
    assert table.loc["x", "difference"] == pytest.approx(-1.0)
    assert table.loc["x", "relative_difference"] == pytest.approx(-0.5)
    # both fits are exact lines: R² = 1
    assert table.attrs["r_squared_original"] == pytest.approx(1.0)
    assert table.attrs["r_squared_protected"] == pytest.approx(1.0)
    assert table.attrs["n_records"] == 10


def test_paired_numeric_skips_generalized_and_drops_incomplete_rows() -> None:
    original = pd.DataFrame(
        {
            "age": [20, 31, 45, 52],
            "income": [1.0, np.nan, 3.0, 4.0],
            "text_num": [" 1", "2", "3", ""],
            "region": ["a", "b", "a", "b"],
        }
    )
    protected = pd.DataFrame(
        {
            "age": ["[20, 40)", "[20, 40)", "[40, 60)", "[40, 60)"],
            "income": [1.5, 1.5, 3.5, np.nan],
            "text_num": ["1", "2", "3", "4"],
            "region": ["a", "b", "a", "b"],
        }
    )
    pair = paired_numeric(original, protected, ["age", "income", "text_num", "region", "gone"])
    assert pair.columns == ["income", "text_num"]
    assert "[20, 40)" in pair.skipped["age"] and "generalized" in pair.skipped["age"]
    assert pair.skipped["region"] == "not numeric in the original table"
    assert pair.skipped["gone"] == "not a column of the original table"
    # row 1 (income missing in the original), row 3 (missing in both sides) are left out
    assert pair.dropped_rows == 2
    assert pair.original["income"].tolist() == [1.0, 3.0]
    assert pair.protected["income"].tolist() == [1.5, 3.5]
    assert pair.original["text_num"].tolist() == [1.0, 3.0]
    assert numeric_values(pd.Series(["1", None, "x"])) is None
    np.testing.assert_array_equal(numeric_values(pd.Series([True, False])), [1.0, 0.0])
    with pytest.raises(ValueError, match="same records"):
        paired_numeric(original, protected.iloc[:3], ["income"])


def test_r_squared_by_hand_and_against_numpy() -> None:
    # y = 0, 2, 1, 3 on x = 0..3: slope 0.8, intercept 0.3, fitted 0.3, 1.1, 1.9, 2.7;
    # SSR = 0.09 + 0.81 + 0.81 + 0.09 = 1.8, SST = 5 -> R² = 0.64 (= r², one regressor).
    frame = pd.DataFrame({"y": [0.0, 2.0, 1.0, 3.0], "x": [0.0, 1.0, 2.0, 3.0]})
    assert ols_r_squared(frame, "y", ["x"]) == pytest.approx(0.64)
    assert ols_r_squared(frame, "y", ["x"]) == pytest.approx(
        np.corrcoef(frame.x, frame.y)[0, 1] ** 2
    )
    # two regressors, checked against numpy's lstsq residuals
    rng = np.random.default_rng(3)
    data = pd.DataFrame(rng.normal(size=(50, 3)), columns=["y", "a", "b"])
    design = np.column_stack([np.ones(50), data.a, data.b])
    _coef, ssr, *_ = np.linalg.lstsq(design, data.y, rcond=None)
    expected = 1 - ssr[0] / np.sum((data.y - data.y.mean()) ** 2)
    assert ols_r_squared(data, "y", ["a", "b"]) == pytest.approx(expected)
    assert 0.0 <= ols_r_squared(data, "y", ["a", "b"]) <= 1.0
    # a constant y has nothing to explain
    assert np.isnan(ols_r_squared(frame.assign(y=1.0), "y", ["x"]))


def _census_mdav(census: pd.DataFrame, k: int, protected_columns: int) -> np.ndarray:
    """Census with its first ``protected_columns`` columns microaggregated (MDAV, variance
    rescaling of ``003`` §5.2) and the others released unchanged, as a (1080, 13) array."""
    qi = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    kept = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.CONTINUOUS)
    columns = [str(c) for c in census.columns]
    roles = RoleMap.from_dict(
        {c: qi if j < protected_columns else kept for j, c in enumerate(columns)}
    )
    ds = Dataset.from_frame(census, roles)
    result = run_protection(ds, RunSpec.make("mdav", k, {"rescale_variance": True}, seed=1))
    protected: np.ndarray = result.protected[columns].to_numpy(dtype=np.float64)
    return protected


def _moment(a: np.ndarray, b: np.ndarray, i: int, j: int) -> float:
    return float(np.mean((a - a.mean()) ** i * (b - b.mean()) ** j))


def test_correlation_variance_is_the_delta_method_formula() -> None:
    rng = np.random.default_rng(5)
    e = rng.exponential(size=500)
    x = np.column_stack([e, e + 2 * rng.exponential(size=500), rng.normal(size=500)])
    n = len(x)
    got = correlation_variance(x)
    for pos, (j, h) in enumerate(zip(*np.triu_indices(3, 1), strict=True)):
        a, b = x[:, j], x[:, h]
        m = {(i, k): _moment(a, b, i, k) for i in range(5) for k in range(5) if i + k in (2, 4)}
        r = np.corrcoef(a, b)[0, 1]
        bracket = (
            m[4, 0] / m[2, 0] ** 2
            + m[0, 4] / m[0, 2] ** 2
            + 2 * m[2, 2] / (m[2, 0] * m[0, 2])
            + 4 * m[2, 2] / m[1, 1] ** 2
            - 4 * m[3, 1] / (m[1, 1] * m[2, 0])
            - 4 * m[1, 3] / (m[1, 1] * m[0, 2])
        )
        assert got[pos] == pytest.approx(r * r / (4 * n) * bracket, rel=1e-9)


def test_correlation_variance_matches_simulation_and_normal_theory() -> None:
    rng = np.random.default_rng(7)

    def draw(m: int) -> np.ndarray:
        e, f = rng.exponential(size=m), rng.exponential(size=m)
        return np.column_stack([e, e + 2 * f])  # skewed: r ≈ 0.45

    n = 200
    big = draw(400_000)
    predicted = correlation_variance(big)[0] * len(big) / n
    simulated = np.var([np.corrcoef(draw(n), rowvar=False)[0, 1] for _ in range(3000)], ddof=1)
    assert predicted == pytest.approx(simulated, rel=0.1)
    r = np.corrcoef(big, rowvar=False)[0, 1]
    assert (1 - r * r) ** 2 / n < 0.75 * simulated  # the normal-theory variance is too small here
    # with bivariate normal data the formula is the textbook (1 - r²)²/n
    normal = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=200_000)
    r = np.corrcoef(normal, rowvar=False)[0, 1]
    assert correlation_variance(normal)[0] == pytest.approx((1 - r * r) ** 2 / 200_000, rel=0.03)


def test_correlation_variance_of_uncorrelated_and_constant_columns() -> None:
    # a, b centred with a·b summing to 0: r = 0 exactly, mu11 = 0; a²b² = 1 and both variances
    # (divisor n) 1, so Var = mean(a²b²)/n = 1/4 with no division by mu11
    x = np.array([[1.0, 1.0, 5.0], [-1.0, 1.0, 5.0], [1.0, -1.0, 5.0], [-1.0, -1.0, 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        var = correlation_variance(x)
        np.testing.assert_allclose(var, [0.25, 0.0, 0.0])
        assert pil_measures(x, x)["pil_correlations"] == 0.0
        y = x.copy()
        y[:, 1] = [1.0, 0.0, 0.0, -1.0]  # r' = mean(a b') / (1 · √0.5) = 0.5/√0.5 = √0.5
        assert np.corrcoef(y[:, 0], y[:, 1])[0, 1] == pytest.approx(np.sqrt(0.5))
        expected = 2 * __import__("scipy").stats.norm.cdf(np.sqrt(0.5) / 0.5) - 1
        # pairs: (0, 1) moved, (0, 2) and (1, 2) involve the constant column and stay 0
        assert pil_measures(x, y)["pil_correlations"] == pytest.approx(expected / 3)


def test_columns_restrict_the_averages() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(10, 2, size=(60, 4))
    y = x.copy()
    y[:, :2] = np.round(y[:, :2])  # only the first two columns change
    whole = il_measures(x, y)
    first = il_measures(x, y, columns=[0, 1])
    assert first == pytest.approx(il_measures(x[:, :2], y[:, :2]), rel=1e-12)
    assert pil_measures(x, y, columns=range(2)) == pytest.approx(
        pil_measures(x[:, :2], y[:, :2]), rel=1e-12
    )
    assert il_measures(x, y, columns=None) == whole
    # unchanged columns dilute the averages: IL1 over 4 columns is half IL1 over the 2 changed
    assert whole["il1"] == pytest.approx(first["il1"] / 2)
    assert il5(x, y, columns=[3, 1]) == pytest.approx(il5(x[:, [3, 1]], y[:, [3, 1]]), rel=1e-12)
    for func in (il1, il1s, il2, il3):
        assert func(x, y, columns=[1]) == pytest.approx(func(x[:, 1:2], y[:, 1:2]), rel=1e-12)
    assert np.isnan(il4(x, y, columns=[1]))  # no pair in one column
    with pytest.raises(ValueError, match="no column"):
        il_measures(x, y, columns=[])
    with pytest.raises(ValueError, match="twice"):
        il1(x, y, columns=[0, 0])
    with pytest.raises(ValueError, match="not positions"):
        pil_measures(x, y, columns=[4])
    with pytest.raises(ValueError, match="not positions"):
        il4(x, y, columns=[-1, 2])


@pytest.mark.shared
@pytest.mark.parametrize(
    ("k", "table2"),
    # 003 Table 2, quasi-identifier length 13: IL1, IL4, IL5, IL
    [
        (3, (0.907, 0.058, 0.016, 19.62)),
        (6, (1.389, 0.134, 0.032, 31.10)),
        (9, (1.535, 0.161, 0.039, 34.70)),
    ],
)
def test_003_table2_census_mdav(census: pd.DataFrame, k: int, table2: tuple[float, ...]) -> None:
    ds = Dataset.from_frame(census)
    result = run_protection(ds, RunSpec.make("mdav", k, {"rescale_variance": True}, seed=1))
    x = census.to_numpy(dtype=np.float64)
    y = result.protected[list(census.columns)].to_numpy(dtype=np.float64)
    m = il_measures(x, y)
    # MDAV keeps the means, the variance rescaling of 003 §5.2 the variances (Table 2: 0, 0)
    assert m["il2"] == pytest.approx(0.0, abs=1e-12)
    assert m["il3"] == pytest.approx(0.0, abs=1e-12)
    assert m["il1"] == pytest.approx(table2[0], abs=0.0006)
    assert m["il4"] == pytest.approx(table2[1], abs=0.0006)
    assert m["il5"] == pytest.approx(table2[2], abs=0.0006)
    assert m["il"] == pytest.approx(table2[3], abs=0.02)
    p = pil_measures(x, y)
    assert p["pil_means"] == pytest.approx(0.0, abs=1e-9)
    assert p["pil_variances"] == pytest.approx(0.0, abs=1e-6)
    # 003 Table 3, PIL(m11): 0.363, 0.548, 0.598; PIL(r): 0.534, 0.674, 0.705 (the
    # delta-method variance of r; the normal-theory (1 - r²)²/n gave 0.581, 0.693, 0.719)
    assert p["pil_covariances"] == pytest.approx({3: 0.363, 6: 0.548, 9: 0.598}[k], abs=0.002)
    assert p["pil_correlations"] == pytest.approx({3: 0.534, 6: 0.674, 9: 0.705}[k], abs=0.002)
    assert 0.0 < p["pil_quantiles"] < 1.0


@pytest.mark.shared
@pytest.mark.parametrize(
    ("k", "table2", "table3"),
    # 003 Table 2, quasi-identifier "the first 6 attributes": IL1, IL4, IL5, IL;
    # Table 3, same rows: PIL(m11), PIL(r)
    [
        (3, (0.131, 0.036, 0.007, 3.48), (0.161, 0.255)),
        (6, (0.174, 0.075, 0.013, 5.24), (0.270, 0.371)),
        (9, (0.203, 0.129, 0.017, 6.98), (0.332, 0.430)),
        (12, (0.185, 0.166, 0.020, 7.42), (0.373, 0.471)),
    ],
)
def test_003_first_6_attributes_average_over_all_13(
    census: pd.DataFrame, k: int, table2: tuple[float, ...], table3: tuple[float, float]
) -> None:
    """The first 6 Census columns microaggregated, the other 7 released unchanged, the measures
    averaged over all 13 columns (the module docstring's reading of ``003`` §6.1)."""
    x = census.to_numpy(dtype=np.float64)
    y = _census_mdav(census, k, protected_columns=6)
    np.testing.assert_array_equal(y[:, 6:], x[:, 6:])
    m = il_measures(x, y)
    assert m["il2"] == pytest.approx(0.0, abs=1e-12)
    assert m["il3"] == pytest.approx(0.0, abs=1e-12)
    # MDAV's groups at k = 6, 9 differ a little from the paper's (IL4 0.077 and 0.133)
    assert m["il1"] == pytest.approx(table2[0], abs=0.0015)
    assert m["il4"] == pytest.approx(table2[1], abs=0.005)
    assert m["il5"] == pytest.approx(table2[2], abs=0.0006)
    assert m["il"] == pytest.approx(table2[3], abs=0.08)
    p = pil_measures(x, y)
    assert p["pil_covariances"] == pytest.approx(table3[0], abs=0.004)
    assert p["pil_correlations"] == pytest.approx(table3[1], abs=0.005)
    # over the 6 protected columns alone the figures are about twice the published ones
    only_qi = il_measures(x, y, columns=range(6))
    assert only_qi == pytest.approx(il_measures(x[:, :6], y[:, :6]), rel=1e-12)
    assert only_qi["il1"] > 2 * table2[0]


@pytest.mark.shared
def test_mdav_without_rescaling_keeps_means_only(census: pd.DataFrame) -> None:
    ds = Dataset.from_frame(census)
    result = run_protection(ds, RunSpec.make("mdav", 5, seed=1))
    x = census.to_numpy(dtype=np.float64)
    y = result.protected[list(census.columns)].to_numpy(dtype=np.float64)
    m = il_measures(x, y)
    assert m["il2"] == pytest.approx(0.0, abs=1e-12)
    assert m["il3"] > 0.01  # group means shrink the variances


def test_correlation_of_huge_values_is_computed_without_overflow() -> None:
    """Values near the float limit (1.7e308 in a protected file) would overflow the covariance's
    products; the columns are rescaled first, and a correlation does not change with scale."""
    x = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 5.0], [4.0, 4.0]])
    huge = x * np.array([1.0, 1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = correlation_change(x, huge)
    assert table["protected"].iloc[0] == pytest.approx(table["original"].iloc[0], rel=1e-12)
    assert table["original"].iloc[0] == pytest.approx(np.corrcoef(x, rowvar=False)[0, 1])


@pytest.mark.parametrize("dtype", [object, "string", "category"])
def test_numeric_values_parses_each_distinct_value_as_every_cell(dtype: object) -> None:
    """numeric_values parses the distinct values once (issue 30: to_numeric over every cell held
    the GIL); the result is the cell-by-cell parse: stripped text, missing and "" as NaN,
    None for a column with any non-number."""
    cells = [" 42 ", None, "", "3.5", "42", " 42 ", "-1e3", "7"] * 50
    got = numeric_values(pd.Series(cells, dtype=dtype))  # type: ignore[call-overload]
    want = [float(c.strip()) if c is not None and c.strip() else np.nan for c in cells]
    assert got is not None
    np.testing.assert_array_equal(got, np.array(want))
    assert numeric_values(pd.Series(cells + ["x"], dtype=dtype)) is None  # type: ignore[call-overload]
    assert numeric_values(pd.Series([None, None], dtype=dtype)) is not None  # type: ignore[call-overload]
