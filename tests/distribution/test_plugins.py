"""Issue 32 item 6: methods as plug-ins. An installed package registers a method with the same
registry through the entry-point group ``microgui.methods``
(:mod:`microgui.core.methods.plugins`); a broken plug-in is left out with a warning naming it.

The "installed package" is built in the test: a package and its ``.dist-info`` folder with an
``entry_points.txt`` in a temporary folder put on ``sys.path``, which is all
:mod:`importlib.metadata` looks at (no pip, no network)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import microgui
from microgui.api import list_methods
from microgui.core.methods import REGISTERED, available_methods, get_method, plugins
from microgui.core.methods.base import _REGISTRY

PLUGIN_MODULE = """
import numpy as np
from microgui.core.methods import Method, MethodOutput
from microgui.core.table.roles import AttributeKind


def _run(inp):
    # pairs of records in input order, the last group taking the remainder (>= k = 2)
    n = inp.dataset.n_records
    labels = np.minimum(np.arange(n) // 2, max(n // 2 - 1, 0))
    return MethodOutput(labels=labels.astype(np.int64))


PAIRS = Method(
    name="{name}",
    title="Pairs (plug-in test)",
    summary="consecutive pairs, a plug-in from another package",
    description="test only",
    citation="none",
    kinds=frozenset(AttributeKind),
    run=_run,
)


def make():
    return PAIRS


NOT_A_METHOD = 42
"""


def _install(root: Path, package: str, entry_points: dict[str, str], body: str = "") -> None:
    """Write ``package`` and its dist-info (METADATA, entry_points.txt) under ``root``."""
    (root / package).mkdir()
    (root / package / "__init__.py").write_text(body, encoding="utf-8")
    info = root / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[microgui.methods]\n{lines}", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for fake installed packages; the registry and the plug-in state are
    restored when the test ends."""
    monkeypatch.syspath_prepend(str(tmp_path))
    available_methods()  # every built-in registered before, so only plug-ins are new
    before = dict(_REGISTRY)
    loaded = dict(plugins._LOADED)
    yield tmp_path
    _REGISTRY.clear()
    _REGISTRY.update(before)
    plugins._LOADED.clear()
    plugins._LOADED.update(loaded)
    for name in [m for m in sys.modules if m.startswith("mgplug_")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_an_installed_plugin_method_runs_through_the_registry_and_the_api(site: Path) -> None:
    _install(
        site,
        "mgplug_pairs",
        {"pairs": "mgplug_pairs:PAIRS"},
        PLUGIN_MODULE.format(name="plugin-pairs"),
    )
    importlib.invalidate_caches()
    plugins.load_plugins(force=True)
    assert plugins.loaded_plugins()["pairs"] == "plugin-pairs"
    method = get_method("plugin-pairs")
    assert method is REGISTERED["plugin-pairs"]
    assert "plugin-pairs" in [m["name"] for m in list_methods()]
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [5.0, 4.0, 3.0, 2.0, 1.0]})
    res = microgui.protect(frame, qi=["x", "y"], method="plugin-pairs", k=2, seed=1)
    # groups {0,1} and {2,3,4}: the plug-in's partition, aggregated by microgui
    assert res.partition.tolist() == [0, 0, 1, 1, 1]
    assert res.frame["x"].tolist() == [1.5, 1.5, 4.0, 4.0, 4.0]
    assert res.check.ok and res.report["method"] == "plugin-pairs"


def test_a_factory_entry_point_is_called(site: Path) -> None:
    _install(
        site,
        "mgplug_factory",
        {"made": "mgplug_factory:make"},
        PLUGIN_MODULE.format(name="plugin-made"),
    )
    importlib.invalidate_caches()
    plugins.load_plugins(force=True)
    assert get_method("plugin-made").name == "plugin-made"


def test_get_method_finds_a_plugin_without_listing_first(site: Path) -> None:
    _install(
        site, "mgplug_lazy", {"lazy": "mgplug_lazy:PAIRS"}, PLUGIN_MODULE.format(name="plugin-lazy")
    )
    importlib.invalidate_caches()
    plugins._DONE = False  # a fresh process: nothing listed yet
    assert get_method("plugin-lazy").name == "plugin-lazy"


@pytest.mark.parametrize(
    ("target", "body", "said"),
    [
        ("mgplug_broken:PAIRS", "raise RuntimeError('boom at import')", "boom at import"),
        ("mgplug_broken:MISSING", "", "failed to load"),
        ("mgplug_broken:NOT_A_METHOD", PLUGIN_MODULE.format(name="x-unused"), "not a microgui"),
        ("mgplug_broken:PAIRS", PLUGIN_MODULE.format(name="mdav"), "already registered"),
    ],
)
def test_a_broken_plugin_warns_naming_it_and_breaks_nothing(
    site: Path, target: str, body: str, said: str
) -> None:
    _install(site, "mgplug_broken", {"broken-one": target}, body)
    _install(
        site,
        "mgplug_good",
        {"good-one": "mgplug_good:PAIRS"},
        PLUGIN_MODULE.format(name="plugin-good"),
    )
    importlib.invalidate_caches()
    builtin_mdav = get_method("mdav")
    with pytest.warns(plugins.PluginWarning, match="broken-one") as record:
        plugins.load_plugins(force=True)
    assert said in str(record[0].message)
    assert "mgplug_broken" in str(record[0].message)  # the package named
    assert get_method("mdav") is builtin_mdav  # a built-in is never replaced
    assert get_method("plugin-good").name == "plugin-good"  # the others still load
    assert "broken-one" not in plugins.loaded_plugins()


def test_the_explicit_list_still_finds_every_built_in_without_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frozen installer has no package metadata: no entry point is found, and every built-in
    method is still registered from :data:`microgui.core.methods.BUILT_IN`."""
    from importlib import metadata

    from microgui.core.methods import BUILT_IN

    monkeypatch.setattr(metadata, "entry_points", lambda **_: [])
    plugins.load_plugins(force=True)
    names = {m.name for m in available_methods()}
    assert set(BUILT_IN) <= names
