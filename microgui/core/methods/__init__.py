"""The method registry. Importing this package registers every built-in method.

Each method lives in its own module and calls :func:`microgui.core.methods.base.register` at import;
:mod:`~microgui.core.methods.base` holds the contract and the registry's dictionary, and this
package, having imported every method module, looks methods up. No module of the package imports
the package itself.
"""

from collections.abc import Callable

# First, before any kernel is decorated: numba's cache folder keyed on all kernel sources.
from microgui.core.methods import jit_cache as _jit_cache  # noqa: F401

# isort: split
from microgui.core.errors import InvalidParameter
from microgui.core.methods import ama as _ama  # noqa: F401  (registers ama)
from microgui.core.methods import cbfs as _cbfs  # noqa: F401
from microgui.core.methods import dba as _dba  # noqa: F401
from microgui.core.methods import gsms as _gsms  # noqa: F401
from microgui.core.methods import hybrid as _hybrid  # noqa: F401
from microgui.core.methods import individual_ranking as _individual_ranking  # noqa: F401
from microgui.core.methods import md as _md  # noqa: F401
from microgui.core.methods import mdav as _mdav  # noqa: F401  (registers mdav, mdav-generic)
from microgui.core.methods import median as _median  # noqa: F401
from microgui.core.methods import mhm as _mhm  # noqa: F401
from microgui.core.methods import mst as _mst  # noqa: F401  (registers mst)
from microgui.core.methods import mstk as _mstk  # noqa: F401  (registers mstk)
from microgui.core.methods import optimal as _optimal  # noqa: F401
from microgui.core.methods import psensitive as _psensitive  # noqa: F401
from microgui.core.methods import refine as _refine
from microgui.core.methods import tcloseness as _tcloseness  # noqa: F401
from microgui.core.methods import tfrp as _tfrp  # noqa: F401
from microgui.core.methods import univariate as _univariate  # noqa: F401
from microgui.core.methods import vmdav as _vmdav  # noqa: F401
from microgui.core.methods.base import (
    COMMON_PARAMS,
    REGISTERED,
    Method,
    MethodInput,
    MethodOutput,
    ParamSpec,
    ReleaseCheck,
    register,
    registered,
    resolve_params,
)

__all__ = [
    "COMMON_PARAMS",
    "Method",
    "MethodInput",
    "MethodOutput",
    "ParamSpec",
    "REGISTERED",
    "ReleaseCheck",
    "available_methods",
    "get_method",
    "register",
    "registered",
    "resolve_params",
    "warm_ups",
]


def get_method(name: str) -> Method:
    """The method called ``name``, or :class:`InvalidParameter` listing the known ones."""
    try:
        return REGISTERED[name]
    except KeyError:
        known = ", ".join(sorted(REGISTERED))
        raise InvalidParameter(f"unknown method {name!r}; known methods: {known}") from None


def available_methods() -> list[Method]:
    """All registered methods, sorted by name."""
    return [REGISTERED[k] for k in sorted(REGISTERED)]


def warm_ups() -> list[Callable[[], float]]:
    """The registered methods' warm-ups (see ``Method.warm_up``), each once, in name order, then
    the refinement's (``--param refine``)."""
    out: list[Callable[[], float]] = []
    for method in available_methods():
        if method.warm_up is not None and method.warm_up not in out:
            out.append(method.warm_up)
    out.append(_refine.warm_up)  # the refinement any partitioning method may end with
    return out
