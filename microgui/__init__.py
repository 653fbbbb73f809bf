"""microgui: microaggregation for statistical disclosure control.

The package root imports nothing from Qt; ``microgui.protect`` is the notebook API. The API is
imported on first use (PEP 562), so that ``microgui --version`` and ``--help`` start at once
instead of loading numpy, pandas, numba and every method first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from microgui._version import __version__

if TYPE_CHECKING:
    from microgui.api import (
        ProtectionResult,
        SparkProtectionResult,
        UnsafeReleaseWarning,
        assess,
        protect,
        protect_spark,
    )

__all__ = [
    "__version__",
    "assess",
    "protect",
    "protect_spark",
    "ProtectionResult",
    "SparkProtectionResult",
    "UnsafeReleaseWarning",
]

_API = frozenset(
    {
        "assess",
        "protect",
        "protect_spark",
        "ProtectionResult",
        "SparkProtectionResult",
        "UnsafeReleaseWarning",
    }
)


def __getattr__(name: str) -> Any:
    if name in _API:
        from microgui import api

        return getattr(api, name)
    raise AttributeError(f"module 'microgui' has no attribute {name!r}")
