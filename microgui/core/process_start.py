"""What our own processes set up before they import numpy (issue 33): :func:`start`, called by
the entry points (the ``microgui`` command, the app through it, the kernel preparation's
process), never on import of the library: a notebook's interpreter is the user's.

**One BLAS thread.** numpy's and scipy's OpenBLAS start a thread per core for a product of
more than a few thousand numbers and keep them spinning for a while after it (their wait before
sleeping is about 0.1 s), on the cores our own threads run on: a run's kernel (numba, its own
threads), the IL bound beside it, the GUI thread. Our products are n x d by d x d with d the
number of quasi-identifiers (tens at most), where more threads win nothing; measured on 2 cores,
the 100,000 x 10 run's block layout took 0.15 s with OpenBLAS's second thread spinning and
0.055 s without, and its kernel 0.1-0.3 s longer. So :func:`one_blas_thread` sets
``OPENBLAS_NUM_THREADS=1`` (and MKL's, OpenMP's BLAS's: ``MKL_NUM_THREADS``) unless the user
set them: a variable the user set wins.

**Modules that a process of ours never uses but a dependency's import walks into.**
scipy (1.15 and later) builds its array-API namespace for numpy by copying every public name of
``numpy`` (``scipy._lib.array_api_compat``'s ``clone_module``: ``dir(numpy)`` and ``hasattr`` on
each), and numpy (2.x) imports a submodule the first time its name is asked for. So every
``import scipy.linalg`` -- numba pulls it in when it loads its first kernel -- also imports
``numpy.f2py``, the Fortran wrapper generator, whose regular expressions alone take 60-80 ms
(``python -X importtime``), in the GIL-bound start-up of every command and of the app.

:func:`defer_unused_modules` registers such modules with :class:`importlib.util.LazyLoader`:
the module object exists at once and its code runs at the first attribute read, which scipy's
copy never makes. Nothing changes for code that does use one (``numpy.f2py.run_main`` works as
before, only its import happens then).
"""

from __future__ import annotations

import importlib.util
import os
import sys

__all__ = ["BLAS_THREADS", "UNUSED", "start", "one_blas_thread", "defer_unused_modules"]

#: The variables :func:`one_blas_thread` sets to 1 when the user has not set them.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

#: (parent, submodule) pairs registered lazily by :func:`defer_unused_modules`.
UNUSED = (("numpy", "f2py"),)


def start() -> None:
    """Everything this module sets up, in the order needed (BLAS's threads before numpy loads
    its library)."""
    one_blas_thread()
    defer_unused_modules()


def one_blas_thread() -> list[str]:
    """Set each of :data:`BLAS_THREADS` the environment does not set to 1; returns those set.
    Read by the BLAS library when numpy or scipy first loads it: when numpy is already
    imported its BLAS keeps the threads it has (nothing is set then, so that what the process
    says of itself stays true)."""
    if "numpy" in sys.modules:
        return []
    done = [name for name in BLAS_THREADS if not os.environ.get(name, "").strip()]
    for name in done:
        os.environ[name] = "1"
    return done


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
