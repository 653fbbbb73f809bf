"""Confidential attributes as the privacy methods use them (p-sensitive, t-closeness).

A confidential column is encoded once, as int64 codes per record: ranks of the distinct values
in order for continuous and ordinal attributes, value codes for nominal ones; two records hold
the same value when their cells are equal (numbers as numbers, text as text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, InvalidRoles
from microgui.core.metrics.privacy import nominal_codes, rank_codes
from microgui.core.table.column_types import column_type
from microgui.core.table.dataset import Dataset, is_missing, numeric_column, row_list
from microgui.core.table.roles import AttributeKind

__all__ = ["ConfidentialAttribute", "prepare_confidential"]


@dataclass(frozen=True)
class ConfidentialAttribute:
    """A confidential column as the privacy methods use it.

    ``codes``: int64 per record; ranks 0..m-1 of the distinct values in order when ``ordered``
    (continuous and ordinal attributes), value codes otherwise (nominal). ``kind`` says how the
    column was read, for the report.
    """

    name: str
    ordered: bool
    codes: np.ndarray
    n_values: int
    kind: str


def prepare_confidential(dataset: Dataset, method: str) -> tuple[ConfidentialAttribute, ...]:
    """Validate and encode the confidential columns of a dataset.

    A column tagged continuous is converted with :func:`microgui.core.table.dataset.numeric_column`.
    The command line tags every ``--confidential`` column continuous and has no way to give
    it another kind, so a continuous-tagged column none of whose values is a number (text such as
    an occupation) is read as nominal, and the report says so ("nominal (text values)"); a column
    mixing numbers and text is refused, as for a continuous quasi-identifier. Ordinal columns are
    ranked by their declared order (or numeric/text order); nominal columns by value.

    Raises
    ------
    InvalidRoles
        When no column is tagged confidential.
    InvalidInput
        For missing values in a confidential column (the method needs every record's value, as
        microaggregation needs every quasi-identifier), a mixed number/text column, or an
        ordinal value absent from its order.
    """
    frame, roles = dataset.frame, dataset.roles
    names = roles.confidential
    if not names:
        raise InvalidRoles(
            f"method {method!r} protects confidential attributes, but none is tagged: "
            "tag at least one column confidential (--confidential COL)"
        )
    out: list[ConfidentialAttribute] = []
    for col in names:
        series = frame[col]
        miss = np.flatnonzero(is_missing(series))
        if len(miss):
            raise InvalidInput(
                f"confidential column {col!r} has {len(miss)} missing value(s) (row {row_list(miss)}); "
                f"{method} needs every record's value: fill or remove those records, or do not tag "
                "the column confidential"
            )
        spec = roles[col]
        if spec.kind is AttributeKind.NOMINAL:
            codes, m = nominal_codes(series)
            out.append(ConfidentialAttribute(col, False, codes, m, "nominal"))
            continue
        if spec.kind is AttributeKind.ORDINAL:
            try:
                codes, m = rank_codes(series, spec.order)
            except ValueError as exc:
                raise InvalidInput(
                    f"ordinal confidential column {col!r}: {exc}; add the category to the order"
                ) from None
            out.append(ConfidentialAttribute(col, True, codes, m, "ordinal"))
            continue
        if column_type(series) in ("binary", "nested", "complex", "interval"):  # no numbers
            codes, m = nominal_codes(series)
            out.append(ConfidentialAttribute(col, False, codes, m, "nominal (no numbers)"))
            continue
        text = series.astype("string").str.strip()
        parsed = pd.to_numeric(text, errors="coerce")
        if not pd.api.types.is_numeric_dtype(series) and bool(parsed.isna().all()):
            codes, m = nominal_codes(text)
            out.append(ConfidentialAttribute(col, False, codes, m, "nominal (text values)"))
            continue
        values = numeric_column(frame, col, what="continuous (confidential)")
        codes, m = rank_codes(values)
        out.append(ConfidentialAttribute(col, True, codes, m, "continuous"))
    return tuple(out)
