"""Which measures to show first for a table's quasi-identifiers (issue 29, item 5).

``evaluate`` computes some forty numbers; most of them answer questions about continuous data
(IL1-5, PIL on the z-scores) and say little about a file of categorical keys. The recommended set
follows the measures statistical offices read for each kind of key:

- **continuous keys**: SSE/SST (``information_loss``, Domingo-Ferrer & Mateo-Sanz 2002; ``003``
  §3.1) and distance-based record linkage (``record_linkage``, Domingo-Ferrer & Torra 2001b):
  the pair sdcMicro's ``dUtility`` / ``dRisk`` report for numeric key variables;
- **categorical keys** (ordinal or nominal): the share of values changed (``dist_percent``: Dist
  per categorical value, ``003`` §3.2), the Hellinger distance of the released distributions
  (``hellinger_mean``), the share of records in groups with one confidential value
  (``homogeneous_percent``: attribute disclosure, Machanavajjhala et al. 2007) and the individual
  risk (``individual_risk_mean`` with survey weights, sdcMicro ``indivRisk``; else the mean
  re-identification risk ``reidentification_risk_mean``, sdcMicro ``measure_risk``'s
  unweighted counterpart);
- **mixed keys**: both lists, and the headline IL over every quasi-identifier
  (``information_loss_all_qi``) first.

Keys another part of the product computes (``hellinger_mean``, ``homogeneous_percent``) are
named here whether or not a given report has them: :func:`shown_first` keeps the recommended keys a
report actually holds, in order, and the others after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "CONTINUOUS_MEASURES",
    "CATEGORICAL_MEASURES",
    "recommended_measures",
    "shown_first",
]

#: Continuous quasi-identifiers: SSE/SST and distance-based linkage.
CONTINUOUS_MEASURES: tuple[str, ...] = ("information_loss", "record_linkage")
#: Categorical quasi-identifiers: values changed, Hellinger, homogeneous share, individual risk.
CATEGORICAL_MEASURES: tuple[str, ...] = (
    "dist_percent",
    "hellinger_mean",
    "homogeneous_percent",
    "individual_risk_mean",
    "reidentification_risk_mean",
)
_CATEGORICAL_KINDS = frozenset({"ordinal", "nominal"})


def _kind(value: object) -> str:
    # an AttributeKind (a StrEnum) or its plain string value
    return str(getattr(value, "value", value)).strip().lower()


def recommended_measures(kinds: Mapping[str, object]) -> list[str]:
    """The measure keys to show first for quasi-identifiers of these kinds.

    Parameters
    ----------
    kinds
        Quasi-identifier name -> kind ("continuous", "ordinal", "nominal", or an
        :class:`~microgui.core.table.roles.AttributeKind`). Other kinds are ignored.

    Returns
    -------
    list[str]
        Keys of ``evaluate``'s measures (and of those other modules add), most useful first,
        without repeats; empty when no quasi-identifier is given.

    >>> recommended_measures({"age": "continuous"})
    ['information_loss', 'record_linkage']
    >>> recommended_measures({"sex": "nominal"})[:2]
    ['dist_percent', 'hellinger_mean']
    """
    found = {_kind(v) for v in kinds.values()}
    continuous = "continuous" in found
    categorical = bool(found & _CATEGORICAL_KINDS)
    out: list[str] = []
    if continuous and categorical:
        out.append("information_loss_all_qi")
    if continuous:
        out += CONTINUOUS_MEASURES
    if categorical:
        out += CATEGORICAL_MEASURES
    return list(dict.fromkeys(out))


def shown_first(keys: Iterable[str], recommended: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split ``keys`` (the measures a report or table holds) into the recommended ones, in the
    recommended order, and the rest, in their own order. Recommended keys absent from ``keys``
    are skipped."""
    have = list(dict.fromkeys(keys))
    present = set(have)
    first = [k for k in dict.fromkeys(recommended) if k in present]
    chosen = set(first)
    return first, [k for k in have if k not in chosen]
