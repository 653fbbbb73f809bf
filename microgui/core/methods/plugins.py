"""Methods from other installed packages: the entry-point group ``microgui.methods``.

A package registers a method with the same registry as the built-in ones by declaring, in its
``pyproject.toml``::

    [project.entry-points."microgui.methods"]
    my-method = "my_package.my_module:METHOD"

The object named is a :class:`~microgui.core.methods.base.Method` (registered here unless its
module registered it on import), a function returning one, or a module whose import calls
:func:`~microgui.core.methods.base.register`. The explicit list of built-in modules
(:data:`microgui.core.methods.BUILT_IN`) stays: a frozen installer has no package metadata, so
entry points find nothing there and the built-in methods are still all found.

A plug-in that fails to import, names something that is not a method, or takes the name of a
method already registered is left out with a :class:`PluginWarning` naming the entry point and
its distribution; it never breaks the app, the command line or the API.
"""

from __future__ import annotations

import types
import warnings
from importlib import metadata

from microgui.core.errors import MicroguiWarning
from microgui.core.methods.base import REGISTERED, Method, register

__all__ = ["GROUP", "PluginWarning", "load_plugins", "loaded_plugins"]

GROUP = "microgui.methods"

#: entry point name -> the method name it registered, for the plug-ins loaded so far
_LOADED: dict[str, str] = {}
_DONE = False


class PluginWarning(MicroguiWarning):
    """A plug-in method of the ``microgui.methods`` entry-point group was left out."""


def _where(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return f"plug-in {ep.name!r} ({ep.value}{', package ' + name if name else ''})"


def _load_one(ep: metadata.EntryPoint) -> None:
    before = set(REGISTERED)
    try:
        obj = ep.load()
        if callable(obj) and not isinstance(obj, (Method, type)):
            obj = obj()
    except Exception as exc:  # a broken plug-in never breaks microgui
        warnings.warn(
            f"{_where(ep)} left out: it failed to load ({type(exc).__name__}: {exc})",
            PluginWarning,
            stacklevel=3,
        )
        return
    if isinstance(obj, types.ModuleType):
        new = sorted(set(REGISTERED) - before)
        if not new:
            warnings.warn(
                f"{_where(ep)} left out: its module registered no method", PluginWarning, 3
            )
            return
        _LOADED[ep.name] = new[0]
        return
    if not isinstance(obj, Method):
        warnings.warn(
            f"{_where(ep)} left out: it names a {type(obj).__name__}, not a microgui Method",
            PluginWarning,
            stacklevel=3,
        )
        return
    if REGISTERED.get(obj.name) is obj:  # its module registered it on import
        _LOADED[ep.name] = obj.name
        return
    if obj.name in REGISTERED:
        warnings.warn(
            f"{_where(ep)} left out: a method called {obj.name!r} is already registered",
            PluginWarning,
            stacklevel=3,
        )
        return
    register(obj)
    _LOADED[ep.name] = obj.name


def load_plugins(*, force: bool = False) -> None:
    """Register the methods of the ``microgui.methods`` entry points, once per process
    (``force``: again, for a package installed since). Called by
    :func:`microgui.core.methods.available_methods` after every built-in method is imported, so
    a plug-in cannot take a built-in's name."""
    global _DONE
    if _DONE and not force:
        return
    _DONE = True
    for ep in metadata.entry_points(group=GROUP):
        if ep.name in _LOADED and REGISTERED.get(_LOADED[ep.name]) is not None:
            continue
        _load_one(ep)


def loaded_plugins() -> dict[str, str]:
    """Entry point name -> registered method name, of the plug-ins loaded so far."""
    return dict(_LOADED)
