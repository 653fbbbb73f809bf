"""The bundled demo data: 4,000 synthetic persons with their roles (``resources/make_demo.py``).

The top-level ``resources/`` folder ships as the package ``microgui.resources``; in a source tree
that is not installed, the folder next to the ``microgui`` package is used instead.
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from microgui.core.errors import InvalidInput
from microgui.core.io import read_table
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import RoleMap

__all__ = [
    "DEMO_CSV",
    "DEMO_ROLES",
    "demo_defaults",
    "demo_path",
    "demo_roles",
    "demo_roles_path",
    "load_demo",
]

DEMO_CSV = "demo_persons.csv"
DEMO_ROLES = "demo_persons.roles.json"
#: The newest roles-file schema this module reads.
_ROLES_SCHEMA = 1


def _resource(name: str) -> Path:
    try:
        candidate = importlib.resources.files("microgui.resources").joinpath(name)
        if isinstance(candidate, Path) and candidate.is_file():
            return candidate
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        pass  # not installed: fall back to the source tree
    candidate = Path(__file__).resolve().parents[2] / "resources" / name
    if candidate.is_file():
        return candidate
    raise InvalidInput(
        f"the demo file {name!r} is missing from this installation; reinstall microgui, or run "
        "resources/make_demo.py in a source tree"
    )


def demo_path() -> Path:
    """The path of ``demo_persons.csv``."""
    return _resource(DEMO_CSV)


def demo_roles_path() -> Path:
    """The path of ``demo_persons.roles.json``."""
    return _resource(DEMO_ROLES)


def _roles_file() -> dict[str, object]:
    path = demo_roles_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"the demo roles file {path.name!r} cannot be read ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("columns"), dict):
        raise InvalidInput(f"the demo roles file {path.name!r} has no 'columns' mapping")
    if int(data.get("schema_version", 0)) > _ROLES_SCHEMA:
        raise InvalidInput(
            f"the demo roles file {path.name!r} was written by a newer microgui (schema "
            f"{data['schema_version']}); update microgui"
        )
    return data


def demo_roles() -> RoleMap:
    """The roles of the demo columns, as tagged in ``demo_persons.roles.json``."""
    columns = _roles_file()["columns"]
    assert isinstance(columns, dict)
    return RoleMap.from_json(columns)


def demo_defaults() -> tuple[str, int]:
    """The method name and k the demo is meant to be run with (``("mdav-generic", 5)``)."""
    data = _roles_file()
    return str(data.get("default_method", "mdav")), int(str(data.get("default_k", 5)))


def load_demo() -> Dataset:
    """Read the demo table and apply its roles.

    Returns
    -------
    Dataset
        4,000 synthetic persons; ``source`` is :func:`demo_path`.
    """
    dataset = read_table(demo_path())
    return Dataset.from_frame(dataset.frame, roles=demo_roles(), source=dataset.source)
