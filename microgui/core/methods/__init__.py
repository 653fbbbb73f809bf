"""The method registry. Importing this package registers every built-in method.

Each method lives in its own module and calls :func:`microgui.core.methods.base.register` at import.
"""

from microgui.core.methods import ama as _ama  # noqa: F401  (registers ama)
from microgui.core.methods import mdav as _mdav  # noqa: F401  (registers mdav, mdav-generic)
from microgui.core.methods import mst as _mst  # noqa: F401  (registers mst)
from microgui.core.methods import mstk as _mstk  # noqa: F401  (registers mstk)
from microgui.core.methods.base import (
    COMMON_PARAMS,
    Method,
    MethodInput,
    MethodOutput,
    ParamSpec,
    available_methods,
    get_method,
    register,
    resolve_params,
)

__all__ = [
    "COMMON_PARAMS",
    "Method",
    "MethodInput",
    "MethodOutput",
    "ParamSpec",
    "available_methods",
    "get_method",
    "register",
    "resolve_params",
]
