"""Modules that a process of ours never uses but a dependency's import walks into (issue 33).

scipy (1.15 and later) builds its array-API namespace for numpy by copying every public name of
``numpy`` (``scipy._lib.array_api_compat``'s ``clone_module``: ``dir(numpy)`` and ``hasattr`` on
each), and numpy (2.x) imports a submodule the first time its name is asked for. So every
``import scipy.linalg`` -- numba pulls it in when it loads its first kernel -- also imports
``numpy.f2py``, the Fortran wrapper generator, whose regular expressions alone take 60-80 ms
(``python -X importtime``), in the GIL-bound start-up of every command and of the app.

:func:`defer_unused_modules` registers such modules with :class:`importlib.util.LazyLoader`:
the module object exists at once and its code runs at the first attribute read, which scipy's
copy never makes. Nothing changes for code that does use one (``numpy.f2py.run_main`` works as
before, only its import happens then). Called by the entry points (the ``microgui`` command,
the app through it, the kernel preparation's process), never on import of the library: a
notebook's interpreter is the user's.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["UNUSED", "defer_unused_modules"]

#: (parent, submodule) pairs registered lazily by :func:`defer_unused_modules`.
UNUSED = (("numpy", "f2py"),)


def defer_unused_modules() -> list[str]:
    """Register each of :data:`UNUSED` that is not imported yet with a lazy loader (its parent
    is imported, numpy being needed anyway); returns the names so registered. A module that
    cannot be found, or whose loader cannot run lazily (a frozen application's), is left as
    it is: it is then imported when asked for, as without this."""
    done = []
    for parent, child in UNUSED:
        name = f"{parent}.{child}"
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                continue
            spec.loader = importlib.util.LazyLoader(spec.loader)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except (ImportError, AttributeError, TypeError, ValueError):
            sys.modules.pop(name, None)
            continue
        # bound on the parent too: numpy's __getattr__ would import it again by name
        setattr(sys.modules[parent], child, module)
        done.append(name)
    return done
