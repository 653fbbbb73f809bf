"""Roles, kinds, suggestions and the numeric view of the quasi-identifiers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import InvalidInput, InvalidRoles
from microgui.core.table.dataset import Dataset, prepare_qi, suggest_roles
from microgui.core.table.roles import (
    AttributeKind,
    AttributeRole,
    ColumnSpec,
    RoleMap,
    roles_from_lists,
)


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    return pd.DataFrame(
        {
            "record_id": [f"R{i:03d}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": rng.lognormal(10, 1, n).round(2),
            "level": rng.integers(1, 4, n),
            "city": rng.choice(["Oslo", "Bergen", "Tromsø"], n),
        }
    )


def test_suggestions() -> None:
    roles = suggest_roles(frame())
    assert roles["record_id"].role is AttributeRole.IDENTIFIER
    assert roles["age"] == ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
    assert roles["income"].kind is AttributeKind.CONTINUOUS
    assert roles["level"].kind is AttributeKind.ORDINAL and roles["level"].order == ("1", "2", "3")
    # a text column with few categories is a quasi-identifier candidate, never passed through
    assert roles["city"] == ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.NOMINAL)


def test_suggestions_on_text_columns() -> None:
    df = frame().astype(str)
    roles = suggest_roles(df)
    assert roles["age"].kind is AttributeKind.CONTINUOUS
    assert roles["record_id"].role is AttributeRole.IDENTIFIER


def test_rolemap_json_round_trip() -> None:
    roles = roles_from_lists(
        list(frame().columns),
        qi=["age", "level", "city"],
        identifiers=["record_id"],
        ordinal={"level": ["1", "2", "3"]},
        nominal=["city"],
    )
    assert RoleMap.from_json(roles.to_json()) == roles
    assert roles.quasi_identifiers == ["age", "level", "city"]
    assert roles["income"].role is AttributeRole.NON_CONFIDENTIAL


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qi": ["nope"]}, "--qi names column 'nope'"),
        ({"qi": []}, "no quasi-identifier"),
        ({"qi": ["age"], "nominal": ["city"]}, "not a quasi-identifier"),
        ({"qi": ["age"], "identifiers": ["age"]}, "give it one role"),
    ],
)
def test_roles_from_lists_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidRoles, match=message):
        roles_from_lists(list(frame().columns), **kwargs)


def test_prepare_qi_kinds() -> None:
    df = frame()
    roles = roles_from_lists(
        list(df.columns),
        qi=["age", "income", "level", "city"],
        ordinal={"level": None},
        nominal=["city"],
    )
    qi = prepare_qi(Dataset(df, roles))
    assert qi.continuous.shape == (40, 2)
    np.testing.assert_allclose(qi.continuous.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(qi.continuous.std(axis=0, ddof=1), 1)
    assert qi.ordinal_orders == (("1", "2", "3"),)
    assert set(qi.nominal[:, 0]) <= {0, 1, 2}


def test_missing_values_refused_with_rows() -> None:
    df = frame()
    df["age"] = df["age"].astype(float)
    df.loc[[4, 9], "age"] = np.nan
    roles = roles_from_lists(list(df.columns), qi=["age"])
    with pytest.raises(InvalidInput, match=r"'age' has 2 missing value\(s\) \(row 5, 10\)"):
        prepare_qi(Dataset(df, roles))


def test_text_in_continuous_column_named() -> None:
    df = frame().astype(str)
    df.loc[6, "income"] = "n/a?"
    roles = roles_from_lists(list(df.columns), qi=["income"])
    with pytest.raises(InvalidInput, match=r"'income' .* row 7 holds 'n/a\?'"):
        prepare_qi(Dataset(df, roles))


def test_ordinal_value_outside_order() -> None:
    df = frame()
    roles = roles_from_lists(list(df.columns), qi=["level"], ordinal={"level": ["1", "2"]})
    with pytest.raises(InvalidInput, match="not in its order"):
        prepare_qi(Dataset(df, roles))


def test_constant_column_is_not_a_division_by_zero() -> None:
    df = pd.DataFrame({"a": [5.0] * 6, "b": [1.0, 2, 3, 4, 5, 6]})
    qi = prepare_qi(Dataset(df, roles_from_lists(["a", "b"], qi=["a", "b"])))
    assert np.all(qi.continuous[:, 0] == 0)
