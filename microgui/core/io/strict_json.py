"""Strict JSON: NaN and infinities written as null (never the ``NaN``/``Infinity`` tokens
other JSON readers refuse), numpy scalars unwrapped, and the atomic writer of a JSON file.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from microgui.core.io.atomic import ProtectedPaths, write_text_atomic

__all__ = ["json_number", "json_text", "write_json_atomic"]


def _json_finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float (numpy's too) replaced by None."""
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: _json_finite(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_finite(value) for value in obj]
    return obj


def json_number(value: Any) -> float | int | None:
    """A JSON-ready number: numpy scalars unwrapped, NaN and infinities as None."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu":
        return int(value)
    return number


def json_text(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` as strict JSON text (UTF-8 kept, final newline): NaN and infinities become null,
    never the ``NaN``/``Infinity`` tokens that other JSON readers refuse (``allow_nan=False``
    makes any that slip through a programming error, not a broken file)."""
    return json.dumps(_json_finite(obj), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_atomic(
    obj: Any,
    path: str | os.PathLike[str],
    *,
    protect_from: ProtectedPaths = None,
    indent: int = 2,
) -> None:
    """Write ``obj`` as UTF-8 JSON (indented, non-ASCII kept, final newline) atomically.

    The object is serialised before any file is touched: a ``TypeError`` for a value JSON cannot
    hold is a programming error and propagates unchanged. NaN and infinities are written as null
    (:func:`json_text`): the file is strict JSON.
    """
    text = json_text(obj, indent=indent)
    write_text_atomic(text, path, protect_from=protect_from)
