"""The method registry. Asking for a method imports (and so registers) its module.

Each method lives in its own module and calls :func:`microgui.core.methods.base.register` at import;
:mod:`~microgui.core.methods.base` holds the contract and the registry's dictionary, and this
package looks methods up: :func:`get_method` imports the one module that registers the method
asked for, :func:`available_methods` every method module. So a run of one method does not wait
for scipy, networkx and the other methods to be imported (issue 17: start-up of ``microgui
protect``). No module of the package imports the package itself.
"""

import importlib
from collections.abc import Callable

# First, before any kernel is decorated: numba's cache folder keyed on all kernel sources.
from microgui.core.methods import jit_cache as _jit_cache  # noqa: F401

# isort: split
from microgui.core.errors import InvalidParameter
from microgui.core.methods import plugins as _plugins
from microgui.core.methods import refine as _refine
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


#: The module of this package that registers each built-in method (a test checks it against
#: what the modules register).
BUILT_IN: dict[str, str] = {
    "ama": "ama",
    "cbfs": "cbfs",
    "dba": "dba",
    "dp-individual-ranking": "individual_ranking",
    "gsms": "gsms",
    "hybrid": "hybrid",
    "individual-ranking": "individual_ranking",
    "md": "md",
    "mdav": "mdav",
    "mdav-generic": "mdav",
    "median": "median",
    "mhm": "mhm",
    "mst": "mst",
    "mstk": "mstk",
    "optimal": "optimal",
    "optimal-univariate": "univariate",
    "p-sensitive": "psensitive",
    "t-closeness": "tcloseness",
    "tfrp": "tfrp",
    "vmdav": "vmdav",
}


def _import_all() -> None:
    for module in dict.fromkeys(BUILT_IN.values()):
        importlib.import_module(f"{__name__}.{module}")
    # then the methods of other installed packages (entry-point group microgui.methods)
    _plugins.load_plugins()


def get_method(name: str) -> Method:
    """The method called ``name``, or :class:`InvalidParameter` listing the known ones."""
    if name not in REGISTERED and name in BUILT_IN:
        importlib.import_module(f"{__name__}.{BUILT_IN[name]}")
    if name not in REGISTERED and name not in BUILT_IN:
        _import_all()  # every built-in first, then the plug-ins: none can take a built-in's name
    try:
        return REGISTERED[name]
    except KeyError:
        _import_all()
        known = ", ".join(sorted(REGISTERED))
        raise InvalidParameter(f"unknown method {name!r}; known methods: {known}") from None


def available_methods() -> list[Method]:
    """All registered methods (every built-in one imported), sorted by name."""
    _import_all()
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
