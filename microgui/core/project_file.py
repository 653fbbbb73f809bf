"""Project files: what a user tagged and ran, saved as validated JSON (issue 7).

A project file holds the *work*, never the data: the path of the table, its column names (to
notice when the table changed), the roles and kinds of its columns, the hierarchy files, the run
specifications of the run history (every one re-runnable: seeds are kept) and the runs being
compared. It is JSON with a ``schema_version``; it is never a pickle, so opening a project file
from someone else runs no code. :func:`load_project` validates every field and raises
:class:`~microgui.core.errors.InvalidInput` naming the file, the key and what to do: a damaged or
truncated file, a file written by a newer microgui, an unknown role or kind, a run spec without a
method. Older schema versions are migrated on load (``_MIGRATIONS``); one file per past version
lives in ``tests/core/data`` and must keep loading.

Writes are atomic (temporary file in the same folder, flushed, renamed), like every export.

Autosave: :func:`write_autosave` keeps the current project in the user's state folder
(``MICROGUI_STATE_DIR``, else ``$XDG_STATE_HOME/microgui``, else ``~/.local/state/microgui``;
``%LOCALAPPDATA%\\microgui`` on Windows); a clean exit removes it (:func:`clear_autosave`), so an
autosave found at start-up means the last session ended abnormally and can be restored
(:func:`read_autosave`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final

from microgui._version import __version__
from microgui.core.errors import InvalidInput
from microgui.core.io import write_json_atomic
from microgui.core.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.runs import RunSpec

__all__ = [
    "SCHEMA_VERSION",
    "Project",
    "save_project",
    "load_project",
    "project_from_json",
    "autosave_path",
    "write_autosave",
    "read_autosave",
    "clear_autosave",
]

#: The schema this version writes and the newest it reads.
SCHEMA_VERSION: Final = 1
AUTOSAVE_NAME: Final = "autosave.microgui.json"


@dataclass(frozen=True)
class Project:
    """The state of a session that is worth keeping (no data values).

    ``data_path`` is stored relative to the project file's folder when it lies below it, so a
    folder holding both can be moved; ``columns`` are the table's column names when saved.
    ``runs`` are the history's specs in order; ``comparison`` indexes into ``runs``.
    """

    data_path: str | None
    columns: tuple[str, ...]
    roles: RoleMap
    runs: tuple[RunSpec, ...] = ()
    comparison: tuple[int, ...] = ()
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self, folder: Path | None = None) -> dict[str, Any]:
        """The JSON object written to a project file saved in ``folder``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "microgui_version": __version__,
            "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "data": {"path": _relative(self.data_path, folder), "columns": list(self.columns)},
            "roles": self.roles.to_json(),
            "runs": [spec.to_json() for spec in self.runs],
            "comparison": list(self.comparison),
            "notes": self.notes,
            "extra": dict(self.extra),
        }

    def resolved_data_path(self, folder: Path | None) -> Path | None:
        """The table's path, made absolute against the project file's folder."""
        if self.data_path is None:
            return None
        path = Path(self.data_path)
        return path if path.is_absolute() or folder is None else folder / path


def _relative(path: str | None, folder: Path | None) -> str | None:
    if path is None or folder is None:
        return path
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def save_project(project: Project, path: str | os.PathLike[str]) -> None:
    """Write ``project`` to ``path`` atomically; refuses to write over its own data file."""
    target = Path(path)
    write_json_atomic(
        project.to_json(target.parent),
        target,
        protect_from=project.resolved_data_path(target.parent),
    )


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read and validate a project file; :class:`InvalidInput` names what is wrong and where."""
    source = Path(path)
    name = source.name
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise InvalidInput(
            f"cannot read project file {name!r}: {exc.strerror or exc}; check the path and permissions"
        ) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"project file {name!r} is not UTF-8 text (byte {exc.start}); it is not a microgui "
            "project file or it is damaged"
        ) from None
    if not text.strip():
        raise InvalidInput(f"project file {name!r} is empty; it was never saved completely")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"project file {name!r} is not valid JSON at line {exc.lineno}, column {exc.colno} "
            f"({exc.msg}): it is truncated or damaged; restore it from a backup or the autosave"
        ) from None
    return project_from_json(data, name)


def project_from_json(data: object, name: str = "project") -> Project:
    """Validate and migrate a decoded project object; ``name`` is used in messages."""
    where = f"project file {name!r}"
    if not isinstance(data, dict):
        raise InvalidInput(
            f"{where} does not hold a JSON object; it is not a microgui project file"
        )
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(
            f"{where} has no valid 'schema_version' (found {version!r}); it is not a microgui "
            "project file"
        )
    if version > SCHEMA_VERSION:
        written = data.get("microgui_version", "a newer version")
        raise InvalidInput(
            f"{where} was written by microgui {written} (schema {version}); this microgui "
            f"({__version__}) reads schema {SCHEMA_VERSION} and older: update microgui to open it"
        )
    for old in range(version, SCHEMA_VERSION):
        data = _MIGRATIONS[old](data)

    data_block = _expect(data, "data", dict, where)
    data_path = data_block.get("path")
    if data_path is not None and not isinstance(data_path, str):
        raise InvalidInput(f"{where}: 'data.path' must be a string or null, not {data_path!r}")
    columns = _expect(data_block, "columns", list, where, key_name="data.columns")
    if not all(isinstance(c, str) for c in columns):
        raise InvalidInput(f"{where}: 'data.columns' must list column names as strings")
    roles = _roles(_expect(data, "roles", dict, where), where, columns)
    runs = tuple(
        _run_spec(item, where, i) for i, item in enumerate(_expect(data, "runs", list, where))
    )
    comparison_raw = _expect(data, "comparison", list, where)
    comparison: list[int] = []
    for value in comparison_raw:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(runs):
            raise InvalidInput(
                f"{where}: 'comparison' names run {value!r}, but the file holds runs 0..{len(runs) - 1}"
            )
        comparison.append(value)
    notes = data.get("notes", "")
    extra = data.get("extra", {})
    return Project(
        data_path=data_path,
        columns=tuple(columns),
        roles=roles,
        runs=runs,
        comparison=tuple(comparison),
        notes=notes if isinstance(notes, str) else "",
        extra=extra if isinstance(extra, dict) else {},
    )


def _expect(
    data: Mapping[str, Any], key: str, kind: type, where: str, key_name: str | None = None
) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        names: dict[type, str] = {dict: "an object", list: "a list"}
        wanted = names.get(kind, kind.__name__)
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise InvalidInput(
            f"{where}: {key_name or key!r} must be {wanted}, but it is {found}; the file is damaged "
            "or not a microgui project file"
        )
    return value


def _roles(data: Mapping[str, Any], where: str, columns: Sequence[str]) -> RoleMap:
    roles_ok = {r.value for r in AttributeRole}
    kinds_ok = {k.value for k in AttributeKind}
    specs: list[tuple[str, ColumnSpec]] = []
    for column, spec in data.items():
        if columns and column not in columns:
            raise InvalidInput(f"{where}: roles name column {column!r}, which 'data.columns' lacks")
        if not isinstance(spec, dict):
            raise InvalidInput(f"{where}: the role of column {column!r} must be an object")
        role, kind = spec.get("role"), spec.get("kind")
        if role not in roles_ok:
            raise InvalidInput(
                f"{where}: column {column!r} has role {role!r}; use one of {', '.join(sorted(roles_ok))}"
            )
        if kind not in kinds_ok:
            raise InvalidInput(
                f"{where}: column {column!r} has kind {kind!r}; use one of {', '.join(sorted(kinds_ok))}"
            )
        order = spec.get("order")
        if order is not None and (
            not isinstance(order, list) or not all(isinstance(v, str) for v in order)
        ):
            raise InvalidInput(f"{where}: the order of column {column!r} must be a list of strings")
        if order is not None and len(set(order)) != len(order):
            raise InvalidInput(f"{where}: the order of column {column!r} repeats a category")
        specs.append((str(column), ColumnSpec.from_json(spec)))
    return RoleMap(tuple(specs))


def _run_spec(item: object, where: str, index: int) -> RunSpec:
    here = f"{where}: run {index}"
    if not isinstance(item, dict):
        raise InvalidInput(f"{here} must be an object")
    method = item.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidInput(f"{here} has no method name")
    k = item.get("k")
    if not isinstance(k, int) or isinstance(k, bool):
        raise InvalidInput(f"{here} ({method}) has k = {k!r}; k must be a whole number")
    params = item.get("parameters", {})
    if not isinstance(params, dict):
        raise InvalidInput(f"{here} ({method}): 'parameters' must be an object")
    seed = item.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise InvalidInput(f"{here} ({method}): seed {seed!r} must be a whole number or null")
    hierarchies = item.get("hierarchies", {})
    if not isinstance(hierarchies, dict) or not all(
        isinstance(v, str) for v in hierarchies.values()
    ):
        raise InvalidInput(f"{here} ({method}): 'hierarchies' must map columns to file paths")
    spec = RunSpec.make(method, k, params, seed, hierarchies)
    # Fields added to RunSpec later (strata, blocking, engine...) are read when present: a field
    # holding a tuple is given one (JSON has lists only).
    known = {"method", "k", "params", "seed", "hierarchies"}
    updates: dict[str, Any] = {}
    for f in fields(RunSpec):
        if f.name in known or f.name not in item:
            continue
        value = item[f.name]
        updates[f.name] = tuple(value) if isinstance(value, list) else value
    if updates:
        from dataclasses import replace

        try:
            spec = replace(spec, **updates)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{here} ({method}): {exc}") from None
    return spec


#: schema version N -> function turning a version-N object into a version-(N+1) one.
_MIGRATIONS: Final[dict[int, Callable[[dict[str, Any]], dict[str, Any]]]] = {}


# -- autosave -------------------------------------------------------------------------------


def autosave_path() -> Path:
    """Where the autosave lives (the folder is created on first write)."""
    base = os.environ.get("MICROGUI_STATE_DIR")
    if base:
        return Path(base) / AUTOSAVE_NAME
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "microgui" / AUTOSAVE_NAME
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "microgui" / AUTOSAVE_NAME


def write_autosave(project: Project) -> Path:
    """Save ``project`` as the autosave (atomically); return its path."""
    path = autosave_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # the data path is kept absolute: the autosave folder has nothing to do with the data's
    data = project.to_json(None)
    data["autosave"] = True
    write_json_atomic(data, path)
    return path


def read_autosave() -> Project | None:
    """The autosaved project, or None when there is none (or it cannot be read: it is then
    removed, since a damaged autosave can only get in the way)."""
    path = autosave_path()
    if not path.is_file():
        return None
    try:
        return load_project(path)
    except InvalidInput:
        clear_autosave()
        return None


def clear_autosave() -> None:
    """Remove the autosave (on a clean exit, or once restored or declined)."""
    try:
        autosave_path().unlink()
    except FileNotFoundError:
        pass
