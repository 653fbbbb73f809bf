"""Project files: what a user tagged and ran, saved as validated JSON (issue 7).

A project file holds the *work*, never the data: the path of the table, its column names (to
notice when the table changed), the roles and kinds of its columns, the hierarchy files attached
to columns in the app (issue 13), the run specifications of the run history (every one
re-runnable: seeds are kept), each run's id, report, measures and partition (its group labels,
compressed: :mod:`~microgui.core.runs.stored_partition`; numbers of groups, never values, so that
reopening rebuilds the runs without running their methods), each run's exports from the app
with the seed of their record order (``exports``: kept here only, never in a release or its
report; :mod:`microgui.core.release.order`), the runs being compared and the run shown. It is JSON with a ``schema_version``;
it is never a pickle, so opening a project file from someone else runs no code. :func:`load_project` validates every field and raises
:class:`~microgui.core.errors.InvalidInput` naming the file, the key and what to do: a damaged or
truncated file, a file written by a newer microgui, an unknown role or kind, a run spec without a
method. Older schema versions are migrated on load (``_MIGRATIONS``); one file per past version
lives in ``tests/core/data`` and must keep loading.

Paths (the table, the attached hierarchy files, the hierarchy files of the runs) are stored
relative to the project file's folder when they lie below it, so a folder holding them all can
be moved; :meth:`Project.resolved_data_path`, :meth:`Project.resolved_hierarchies` and
:meth:`Project.resolved_runs` make them absolute again.

Writes are atomic (temporary file in the same folder, flushed, renamed), like every export.

Autosave: :func:`write_autosave` keeps the current project in the user's state folder
(``MICROGUI_STATE_DIR``, else ``$XDG_STATE_HOME/microgui``, else ``~/.local/state/microgui``;
``%LOCALAPPDATA%\\microgui`` on Windows); a clean exit removes it (:func:`clear_autosave`), so an
autosave found at start-up means the last session ended abnormally and can be restored
(:func:`read_autosave`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import numpy as np

from microgui._version import __version__
from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.io import write_json_atomic
from microgui.core.methods import get_method, resolve_params
from microgui.core.runs.spec import MAX_SEED, RunSpec
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

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
    "session_files",
    "export_record",
    "MAX_RUN_EXPORTS",
    "last_export_order",
]

#: The schema this version writes and the newest it reads (2: attached ``hierarchies``; 3: a
#: run's kept ``partition`` and whether it was a ``sweep`` point, issue 30; the session's
#: ``plans``, issue 31).
SCHEMA_VERSION: Final = 3
AUTOSAVE_NAME: Final = "autosave.microgui.json"


@dataclass(frozen=True)
class Project:
    """The state of a session that is worth keeping (no data values).

    ``data_path`` is stored relative to the project file's folder when it lies below it, so a
    folder holding both can be moved; ``columns`` are the table's column names when saved.
    ``runs`` are the history's specs in order; ``comparison`` indexes into ``runs``.
    ``hierarchies`` are the hierarchy files attached to columns in the app (column, path), stored
    like ``data_path``; the runs' own hierarchy files are stored the same way.
    """

    data_path: str | None
    columns: tuple[str, ...]
    roles: RoleMap
    runs: tuple[RunSpec, ...] = ()
    comparison: tuple[int, ...] = ()
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    hierarchies: tuple[tuple[str, str], ...] = ()
    #: each run's number, its id for life ("#3" in the app, its reports and ``protect --project
    #: P --run 3``); empty (a file of before issue 30): 1, 2, ... in order
    run_ids: tuple[int, ...] = ()
    #: each run's report and measures as the app kept them (no data values: reports never hold
    #: one), so that reopening shows the runs at once and re-computes one only when it is
    #: opened; empty or None for a run: re-computed when the project is opened
    run_reports: tuple[Mapping[str, Any] | None, ...] = ()
    run_measures: tuple[Mapping[str, float | int | None], ...] = ()
    #: each run's partition as kept (:func:`~microgui.core.runs.stored_partition.partition_json`:
    #: its labels, compressed, and the digests that check a rebuild), checked only when the run
    #: is rebuilt (a damaged one makes that run re-computed, not the project unreadable); empty,
    #: or None for a run: none kept (re-computed from its spec and seed when opened)
    run_partitions: tuple[object | None, ...] = ()
    #: whether each run was a point of a sweep (empty: none was)
    run_from_sweep: tuple[bool, ...] = ()
    #: when each run finished ("2026-11-28T10:23:01", local time; None: not kept)
    run_finished: tuple[str | None, ...] = ()
    #: the protection plans of the session (issue 31), each its versioned JSON
    #: (:meth:`microgui.core.runs.plan.Plan.to_json`), checked when the file is read
    plans: tuple[Mapping[str, Any], ...] = ()
    #: whether the session's exports keep the input's record order (File → Export options…,
    #: "Keep the input order"; issue 31): ``protect --project`` then keeps it too. False: the
    #: random order, the default (the key is written only when True)
    keep_order: bool = False
    #: each run's exports from the app, oldest first (issue 30): ``{"file": name, "exported":
    #: time, "order_seed": N}`` for a random record order (the seed the app drew: the project is
    #: the one place it is kept), ``{"file", "exported", "order": "input"}`` for the input's;
    #: empty: none exported (or a file of before)
    run_exports: tuple[tuple[Mapping[str, Any], ...], ...] = ()
    #: the run shown in the window when saved (reopening shows it again); None: the last run
    shown_run: int | None = None

    @property
    def ids(self) -> tuple[int, ...]:
        """The runs' numbers (1, 2, ... for a file that has none)."""
        return self.run_ids if self.run_ids else tuple(range(1, len(self.runs) + 1))

    def run_index(self, run_id: int) -> int:
        """Where run ``run_id`` is in :attr:`runs`; :class:`InvalidParameter` listing the ids
        the project holds when it holds no such run."""
        ids = self.ids
        if run_id not in ids:
            shown = ", ".join(str(i) for i in ids) if ids else "none"
            raise InvalidParameter(f"the project holds no run {run_id}; its runs are: {shown}")
        return ids.index(run_id)

    def to_json(self, folder: Path | None = None) -> dict[str, Any]:
        """The JSON object written to a project file saved in ``folder``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "microgui_version": __version__,
            "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "data": {"path": _relative(self.data_path, folder), "columns": list(self.columns)},
            "roles": self.roles.to_json(),
            "hierarchies": {c: _relative(p, folder) for c, p in self.hierarchies},
            "runs": [
                _run_json(spec, folder, *kept)
                for spec, kept in zip(self.runs, self._kept_runs(), strict=True)
            ],
            "comparison": list(self.comparison),
            "notes": self.notes,
            "extra": dict(self.extra),
            **(
                {"plans": [plan_paths(p, lambda f: _relative(f, folder)) for p in self.plans]}
                if self.plans
                else {}
            ),
            **({"export": {"keep_order": True}} if self.keep_order else {}),
            **({"shown_run": int(self.shown_run)} if self.shown_run is not None else {}),
        }

    def exports_of(self, run_id: int) -> tuple[Mapping[str, Any], ...]:
        """Run ``run_id``'s exports from the app, oldest first (none: ``()``)."""
        ids = self.ids
        if run_id not in ids or not self.run_exports:
            return ()
        return self.run_exports[ids.index(run_id)]

    def _kept_runs(
        self,
    ) -> list[
        tuple[
            int | None,
            Mapping[str, Any] | None,
            Mapping[str, Any],
            object | None,
            bool,
            str | None,
            tuple[Mapping[str, Any], ...],
        ]
    ]:
        n = len(self.runs)
        ids: list[int | None] = list(self.run_ids) if self.run_ids else [None] * n
        reports = list(self.run_reports) if self.run_reports else [None] * n
        measures: list[Mapping[str, Any]] = list(self.run_measures) if self.run_measures else []
        measures += [{}] * (n - len(measures))
        partitions = list(self.run_partitions) if self.run_partitions else [None] * n
        sweep = list(self.run_from_sweep) if self.run_from_sweep else [False] * n
        finished = list(self.run_finished) if self.run_finished else [None] * n
        exports = list(self.run_exports) if self.run_exports else [()] * n
        return list(zip(ids, reports, measures, partitions, sweep, finished, exports, strict=True))

    def resolved_data_path(self, folder: Path | None) -> Path | None:
        """The table's path, made absolute against the project file's folder."""
        if self.data_path is None:
            return None
        return _resolved(self.data_path, folder)

    def resolved_hierarchies(self, folder: Path | None) -> dict[str, Path]:
        """The attached hierarchy files by column, made absolute like the table's path."""
        return {column: _resolved(path, folder) for column, path in self.hierarchies}

    def read_files(self, folder: Path | None) -> list[Path]:
        """Every file the project names, made absolute like the table's path: its table, its
        attached hierarchy files and those of its runs. A session (or replay) of the project
        reads them, so no save, autosave or release of it may write over one."""
        found = [self.resolved_data_path(folder), *self.resolved_hierarchies(folder).values()]
        found += [Path(p) for spec in self.resolved_runs(folder) for _column, p in spec.hierarchies]
        found += [
            p
            for spec in self.resolved_runs(folder)
            if spec.plan is not None
            for p in _plan_files(spec)
        ]
        return list(dict.fromkeys(p for p in found if p is not None))

    def resolved_runs(self, folder: Path | None) -> tuple[RunSpec, ...]:
        """The runs with their hierarchy files (and their plans' side files) made absolute like
        the table's path."""
        return tuple(
            _resolved_plan_spec(
                replace(
                    s, hierarchies=tuple((c, str(_resolved(p, folder))) for c, p in s.hierarchies)
                )
                if s.hierarchies
                else s,
                folder,
            )
            for s in self.runs
        )

    def resolved_plans(self, folder: Path | None) -> tuple[dict[str, Any], ...]:
        """The session's plans with their side files made absolute like the table's path."""
        return tuple(plan_paths(p, lambda f: str(_resolved(f, folder))) for p in self.plans)


def plan_paths(plan: Mapping[str, Any], convert: Callable[[str], str | None]) -> dict[str, Any]:
    """A plan's JSON with every side-file path of its steps (a recode step's ``hierarchy`` and
    ``mapping``, a microaggregate step's ``hierarchies``) passed through ``convert``: relative to
    the project file's folder when saved, absolute again when read (issue 31; as the table's
    path and the runs' hierarchy files, so a project folder moved whole keeps working)."""
    out = dict(plan)
    steps = out.get("steps")
    if not isinstance(steps, list):
        return out
    fixed: list[Any] = []
    for step in steps:
        if not isinstance(step, Mapping):
            fixed.append(step)
            continue
        step = dict(step)
        for key in ("hierarchy", "mapping"):
            if isinstance(step.get(key), str):
                step[key] = convert(step[key])
        if isinstance(step.get("hierarchies"), Mapping):
            step["hierarchies"] = {
                c: convert(f) if isinstance(f, str) else f for c, f in step["hierarchies"].items()
            }
        fixed.append(step)
    out["steps"] = fixed
    return out


def _resolved_plan_spec(spec: RunSpec, folder: Path | None) -> RunSpec:
    """A plan run's spec with its plan's side files absolute (a project's paths are relative to
    its folder; older projects kept them absolute, which stay as they are)."""
    data = spec.plan_json
    if data is None:
        return spec
    text = json.dumps(
        plan_paths(data, lambda f: str(_resolved(f, folder))), sort_keys=True, separators=(",", ":")
    )
    return replace(spec, plan=text)


def _plan_files(spec: RunSpec) -> tuple[Path, ...]:
    """The files a plan run's steps read (its plan holds them absolute)."""
    from microgui.core.runs.plan import spec_plan

    plan = spec_plan(spec)
    return plan.side_files() if plan is not None else ()


def _resolved(path: str, folder: Path | None) -> Path:
    p = Path(path)
    return p if p.is_absolute() or folder is None else folder / p


def _run_json(
    spec: RunSpec,
    folder: Path | None = None,
    run_id: int | None = None,
    report: Mapping[str, Any] | None = None,
    measures: Mapping[str, Any] | None = None,
    partition: object | None = None,
    from_sweep: bool = False,
    finished: str | None = None,
    exports: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A run as a project keeps it: without engine, scheduler and workers, which are the user's
    choice each time and never travel with a file (issue 12); hierarchy files relative to the
    project's folder when below it; its id, report and measures when the session had them
    (issue 30)."""
    data = spec.to_json()
    for key, _default in _PLACEMENT_DEFAULTS:
        data.pop(key, None)
    data["hierarchies"] = {c: _relative(p, folder) for c, p in spec.hierarchies}
    if isinstance(data.get("plan"), Mapping):  # its side files as the table's path (issue 31)
        data["plan"] = plan_paths(data["plan"], lambda f: _relative(f, folder))
    if run_id is not None:
        data["id"] = int(run_id)
    if report is not None:
        data["report"] = _json_safe(report)
    if measures:
        data["measures"] = {str(k): _finite_or_none(v) for k, v in measures.items()}
    if partition is not None:
        data["partition"] = partition
    if from_sweep:
        data["sweep"] = True
    if finished is not None:
        data["finished"] = finished
    if exports:
        data["exports"] = [dict(e) for e in exports]
    return data


def export_record(file: str, exported: str, order_seed: int | None) -> dict[str, Any]:
    """One export of a run as a project keeps it: the release file's name, when it was
    written, and the seed of its random record order (None: the input order was kept)."""
    out: dict[str, Any] = {"file": file, "exported": exported}
    if order_seed is None:
        out["order"] = "input"
    else:
        out["order_seed"] = int(order_seed)
    return out


def last_export_order(exports: Sequence[Mapping[str, Any]]) -> tuple[bool, int | None] | None:
    """How the last of a run's exports ordered its records: (True, None) for the input order,
    (False, seed) for a random one; None when the run was never exported."""
    if not exports:
        return None
    last = exports[-1]
    if last.get("order") == "input":
        return True, None
    return False, int(last["order_seed"])


def _finite_or_none(value: object) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return None
    number = value.item() if isinstance(value, np.generic) else value
    return number if math.isfinite(number) else None


def _json_safe(value: object) -> Any:
    """``value`` as plain JSON (numpy scalars and arrays to numbers and lists, tuples to lists,
    NaN and infinities to null), as the run report writer does."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_json_safe(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _relative(path: str | None, folder: Path | None) -> str | None:
    if path is None or folder is None:
        return path
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def session_files(
    datasets: Iterable[Dataset | None],
    hierarchy_files: Iterable[str | os.PathLike[str]] = (),
    project_file: Path | None = None,
) -> list[Path]:
    """Every file a session read and works from, once each: the files each table carries
    (:attr:`~microgui.core.table.dataset.Dataset.read_files`, each table object once), the hierarchy
    files, then the project file it was opened from. What the app's writers (export, report,
    project, autosave) refuse as targets."""
    found: list[Path] = []
    seen: set[int] = set()
    for dataset in datasets:
        if dataset is not None and id(dataset) not in seen:
            seen.add(id(dataset))
            found += dataset.read_files
    found += [Path(p) for p in hierarchy_files]
    if project_file is not None:
        found.append(project_file)
    return list(dict.fromkeys(found))


def save_project(
    project: Project,
    path: str | os.PathLike[str],
    *,
    also_protect: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Write ``project`` to ``path`` atomically; refuses to write over a file it names
    (:meth:`Project.read_files`: its table, a hierarchy file) or one of ``also_protect`` (the
    other files the session read)."""
    target = Path(path)
    write_json_atomic(
        project.to_json(target.parent),
        target,
        protect_from=[
            *project.read_files(target.parent),
            # as held, too: a path relative to the working folder (issue 12)
            *(path for spec in project.runs for _column, path in spec.hierarchies),
            *(path for _column, path in project.hierarchies),
            *also_protect,
        ],
    )


#: Bounds on what a project file may hold: checked before anything is built, so a hostile or
#: damaged file is refused in one line instead of exhausting memory, the stack or the user's time.
MAX_PROJECT_BYTES: Final = 64 * 1024 * 1024
MAX_PROJECT_DEPTH: Final = 32
MAX_PROJECT_RUNS: Final = 5_000
MAX_NUMBER_DIGITS: Final = 40
MAX_K: Final = 1_000_000_000
MAX_BLOCK_SIZE: Final = 1_000_000_000

_TOP_KEYS: Final = frozenset(
    {"schema_version", "microgui_version", "saved", "data", "roles", "runs", "comparison", "notes",
     "extra", "autosave", "hierarchies", "plans", "export", "shown_run"}
)  # fmt: skip
#: The most plans a project keeps.
MAX_PROJECT_PLANS: Final = 100
_DATA_KEYS: Final = frozenset({"path", "columns"})
_ROLE_KEYS: Final = frozenset({"role", "kind", "order", "missing_as_category"})
_RUN_KEYS: Final = frozenset(
    {"method", "k", "parameters", "seed", "hierarchies", "strata", "block_size", "engine",
     "scheduler", "workers", "id", "report", "measures", "partition", "sweep",
     "finished", "plan", "exports"}
)  # fmt: skip
#: The largest run number a project may hold.
MAX_RUN_ID: Final = 10_000_000
#: Where runs are computed is the user's choice, never a file's: earlier versions wrote these
#: defaults into every run, and only these are accepted (and ignored).
_PLACEMENT_DEFAULTS: Final = (("engine", "local"), ("scheduler", None), ("workers", None))


class _Refused(Exception):
    """A JSON value the loader refuses while decoding (its message completes a sentence)."""


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read and validate a project file; :class:`InvalidInput` names what is wrong and where.

    Bounded (issue 12): only a regular file of at most :data:`MAX_PROJECT_BYTES` is read (a FIFO
    or a device is refused without blocking), nesting deeper than :data:`MAX_PROJECT_DEPTH`,
    numbers of more than :data:`MAX_NUMBER_DIGITS` digits, NaN/Infinity, a key given twice and
    more than :data:`MAX_PROJECT_RUNS` runs are refused before any object is built from them.
    """
    source = Path(path)
    name = source.name or str(source)
    try:
        info = source.stat()
    except OSError as exc:
        raise InvalidInput(
            f"cannot read project file {name!r}: {exc.strerror or exc}; check the path and permissions"
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInput(f"{name!r} is a folder, not a project file; choose a .json project file")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(
            f"{name!r} is not a regular file (a FIFO, device or socket); choose a saved project file"
        )
    if info.st_size > MAX_PROJECT_BYTES:
        raise InvalidInput(
            f"{name!r} is {info.st_size:,} bytes, larger than a project file can be "
            f"({MAX_PROJECT_BYTES:,}); it is not a microgui project file"
        )
    try:
        with source.open("rb") as fh:
            raw = fh.read(MAX_PROJECT_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(
            f"cannot read project file {name!r}: {exc.strerror or exc}; check the path and permissions"
        ) from None
    if len(raw) > MAX_PROJECT_BYTES:  # grew while being read
        raise InvalidInput(
            f"{name!r} is larger than a project file can be ({MAX_PROJECT_BYTES:,} bytes)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"project file {name!r} is not UTF-8 text (byte {exc.start}); it is not a microgui "
            "project file or it is damaged"
        ) from None
    if not text.strip():
        raise InvalidInput(f"project file {name!r} is empty; it was never saved completely")
    return project_from_json(decode_project_text(text, name), name)


_STRINGS: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (strings skipped)."""
    # the unrolled form of "(?:[^"\\]|\\.)*": one step per run of plain characters, not per
    # character (a kept partition is a 70 kB string: 0.5 s -> ms for a 14-run project of Adult)
    bare = _STRINGS.sub('""', text)
    opens = np.frombuffer(bare.encode("utf-8"), dtype=np.uint8)
    step = np.isin(opens, (ord("["), ord("{"))).astype(np.int32) - np.isin(
        opens, (ord("]"), ord("}"))
    ).astype(np.int32)
    return int(step.cumsum().max(initial=0))


def _number(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        digits = sum(ch.isdigit() for ch in text)
        if digits > MAX_NUMBER_DIGITS:
            raise _Refused(
                f"holds a number with too many digits ({digits}); no field of a project needs "
                f"more than {MAX_NUMBER_DIGITS}"
            )
        value = kind(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise _Refused(f"holds a number too large for a project field ({text[:20]})")
        return value

    return parse


def _constant(text: str) -> Any:
    raise _Refused(f"holds {text}, which is not a JSON number")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"gives the key {key!r} twice in one object")
        out[key] = value
    return out


def decode_project_text(text: str, name: str = "project") -> object:
    """JSON ``text`` decoded under the bounds of :func:`load_project` (depth, digits, no NaN,
    no repeated key); :class:`InvalidInput` names ``name`` and the problem."""
    where = f"project file {name!r}"
    if len(text) > MAX_PROJECT_BYTES:
        raise InvalidInput(
            f"{where} is larger than a project file can be ({MAX_PROJECT_BYTES:,} bytes)"
        )
    depth = _nesting_depth(text)
    if depth > MAX_PROJECT_DEPTH:
        raise InvalidInput(
            f"{where} is nested deeper than {MAX_PROJECT_DEPTH} levels ({depth}); it is not a "
            "microgui project file"
        )
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_number(int),
            parse_float=_number(float),
            parse_constant=_constant,
        )
    except _Refused as exc:
        raise InvalidInput(f"{where} {exc}; it is damaged or not a microgui project file") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where} is not valid JSON at line {exc.lineno}, column {exc.colno} "
            f"({exc.msg}): it is truncated or damaged; restore it from a backup or the autosave"
        ) from None
    except (RecursionError, ValueError) as exc:  # bounded above; kept as a last guard
        raise InvalidInput(
            f"{where} cannot be decoded ({type(exc).__name__}); it is damaged"
        ) from None


def _unknown(data: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    extra = [key for key in data if key not in allowed]
    if extra:
        shown = ", ".join(repr(key[:60]) for key in extra[:3])
        raise InvalidInput(
            f"{where} has an unknown field {shown}; microgui {__version__} writes only "
            f"{', '.join(sorted(allowed))}: the file is damaged or was edited by hand"
        )


def project_from_json(data: object, name: str = "project") -> Project:
    """Validate and migrate a decoded project object; ``name`` is used in messages.

    Every field is checked for its type, range and known values; unknown fields are refused by
    name; a run may not choose where it is computed (engine, scheduler, workers): those come from
    the user only (issue 12).
    """
    where = f"project file {name!r}"
    if not isinstance(data, dict):
        raise InvalidInput(
            f"{where} does not hold a JSON object; it is not a microgui project file"
        )
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(
            f"{where} has no valid 'schema_version' (found {_shown(version)}); it is not a "
            "microgui project file"
        )
    if version > SCHEMA_VERSION:
        written = data.get("microgui_version", "a newer version")
        raise InvalidInput(
            f"{where} was written by microgui {str(written)[:40]} (schema {version}); this microgui "
            f"({__version__}) reads schema {SCHEMA_VERSION} and older: update microgui to open it"
        )
    for old in range(version, SCHEMA_VERSION):
        data = _MIGRATIONS[old](data)
    _unknown(data, _TOP_KEYS, where)
    for key in ("microgui_version", "saved", "notes"):
        if key in data and not isinstance(data[key], str):
            raise InvalidInput(f"{where}: {key!r} must be a string, not {type(data[key]).__name__}")
    if "autosave" in data and not isinstance(data["autosave"], bool):
        raise InvalidInput(f"{where}: 'autosave' must be true or false")
    if "extra" in data and not isinstance(data["extra"], dict):
        raise InvalidInput(
            f"{where}: 'extra' must be an object, not {type(data['extra']).__name__}"
        )

    data_block = _expect(data, "data", dict, where)
    _unknown(data_block, _DATA_KEYS, f"{where}: 'data'")
    data_path = data_block.get("path")
    if data_path is not None and (not isinstance(data_path, str) or "\x00" in data_path):
        raise InvalidInput(f"{where}: 'data.path' must be a file path or null")
    columns = _expect(data_block, "columns", list, where, key_name="data.columns")
    if not all(isinstance(c, str) for c in columns):
        raise InvalidInput(f"{where}: 'data.columns' must list column names as strings")
    column_set = set(columns)
    if len(column_set) != len(columns):
        twice = next(c for c, n in Counter(columns).items() if n > 1)
        raise InvalidInput(f"{where}: 'data.columns' names {twice[:80]!r} twice")
    roles = _roles(_expect(data, "roles", dict, where), where, column_set)
    attached = _hierarchy_paths(data.get("hierarchies", {}), where, column_set)
    runs_raw = _expect(data, "runs", list, where)
    if len(runs_raw) > MAX_PROJECT_RUNS:
        raise InvalidInput(
            f"{where} holds {len(runs_raw):,} runs; a project keeps at most {MAX_PROJECT_RUNS:,} "
            "(re-run a sweep instead of keeping every point)"
        )
    runs = tuple(_run_spec(item, where, i, column_set, roles) for i, item in enumerate(runs_raw))
    run_ids, run_reports, run_measures = _kept(runs_raw, where)
    run_partitions, run_from_sweep, run_finished = _partitions(runs_raw, where)
    run_exports = tuple(_exports(item, f"{where}: run {i}") for i, item in enumerate(runs_raw))
    shown = data.get("shown_run")
    if shown is not None and (
        not _whole_in(shown, 1, MAX_RUN_ID) or shown not in (run_ids or range(1, len(runs) + 1))
    ):
        raise InvalidInput(
            f"{where}: 'shown_run' {_shown(shown)} is not one of the project's run numbers"
        )
    comparison: list[int] = []
    for value in _expect(data, "comparison", list, where):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(runs):
            raise InvalidInput(
                f"{where}: 'comparison' names run {_shown(value)}, but the file holds runs "
                f"0..{len(runs) - 1}"
            )
        if value in comparison:
            raise InvalidInput(f"{where}: 'comparison' names run {value} twice")
        comparison.append(value)
    return Project(
        data_path=data_path,
        columns=tuple(columns),
        roles=roles,
        runs=runs,
        comparison=tuple(comparison),
        notes=data.get("notes", ""),
        extra=data.get("extra", {}),
        hierarchies=tuple(sorted(attached.items())),
        run_ids=run_ids,
        run_reports=run_reports,
        run_measures=run_measures,
        run_partitions=run_partitions,
        run_from_sweep=run_from_sweep,
        run_finished=run_finished,
        plans=_plans(data.get("plans", []), where),
        keep_order=_keep_order(data.get("export", {}), where),
        run_exports=run_exports if any(run_exports) else (),
        shown_run=None if shown is None else int(shown),
    )


#: The most exports a project keeps per run (the newest; only the last is replayed).
MAX_RUN_EXPORTS: Final = 100
_EXPORT_KEYS: Final = frozenset({"file", "exported", "order", "order_seed"})


def _exports(item: Mapping[str, Any], where: str) -> tuple[dict[str, Any], ...]:
    """A run's ``exports`` (:func:`export_record` objects), checked."""
    value = item.get("exports", [])
    if not isinstance(value, list) or len(value) > MAX_RUN_EXPORTS:
        raise InvalidInput(
            f"{where}: 'exports' must be a list of at most {MAX_RUN_EXPORTS} exports"
        )
    out: list[dict[str, Any]] = []
    for number, export in enumerate(value, 1):
        here = f"{where}: export {number}"
        if not isinstance(export, dict):
            raise InvalidInput(f"{here} must be an object")
        _unknown(export, _EXPORT_KEYS, here)
        if not isinstance(export.get("file"), str) or not _is_time(export.get("exported")):
            raise InvalidInput(f"{here} needs its 'file' name and when it was 'exported'")
        seeded = "order_seed" in export
        if seeded == (export.get("order") == "input") or (
            "order" in export and export["order"] != "input"
        ):
            raise InvalidInput(f'{here} needs an \'order_seed\' or "order": "input", not both')
        if seeded and not _whole_in(export["order_seed"], 0, 2**64 - 1):
            raise InvalidInput(
                f"{here}: 'order_seed' {_shown(export['order_seed'])} must be a whole number "
                "from 0 to 2**64 - 1"
            )
        out.append(dict(export))
    return tuple(out)


def _keep_order(value: object, where: str) -> bool:
    """The ``export`` object's ``keep_order`` (true or false; absent: false)."""
    if not isinstance(value, dict) or set(value) - {"keep_order"}:
        raise InvalidInput(f"{where}: 'export' must be an object with only 'keep_order'")
    flag = value.get("keep_order", False)
    if not isinstance(flag, bool):
        raise InvalidInput(f"{where}: 'export': 'keep_order' must be true or false")
    return flag


def _plans(value: object, where: str) -> tuple[dict[str, Any], ...]:
    """The project's plans, each checked as a plan file is (:func:`plan_from_json`)."""
    from microgui.core.runs.plan.spec import plan_from_json

    if not isinstance(value, list):
        raise InvalidInput(f"{where}: 'plans' must be a list of plans")
    if len(value) > MAX_PROJECT_PLANS:
        raise InvalidInput(f"{where} holds {len(value):,} plans; at most {MAX_PROJECT_PLANS}")
    return tuple(
        plan_from_json(item, source=f"{i + 1} of the project").to_json()
        for i, item in enumerate(value)
    )


def _partitions(
    runs_raw: list[Any], where: str
) -> tuple[tuple[object | None, ...], tuple[bool, ...], tuple[str | None, ...]]:
    """The runs' kept partitions as written (checked when a run is rebuilt from one: a damaged
    partition costs that run a re-computation, not the project), their ``sweep`` flags and
    when they finished (an ISO date and time)."""
    partitions = [item.get("partition") for item in runs_raw]
    sweep: list[bool] = []
    finished: list[str | None] = []
    for index, item in enumerate(runs_raw):
        flag = item.get("sweep", False)
        if not isinstance(flag, bool):
            raise InvalidInput(f"{where}: run {index}: 'sweep' must be true or false")
        sweep.append(flag)
        when = item.get("finished")
        if when is not None and not _is_time(when):
            raise InvalidInput(
                f"{where}: run {index}: 'finished' {_shown(when)} is not a date and time"
            )
        finished.append(when)
    return (
        tuple(partitions) if any(p is not None for p in partitions) else (),
        tuple(sweep) if any(sweep) else (),
        tuple(finished) if any(f is not None for f in finished) else (),
    )


def _is_time(value: object) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _kept(
    runs_raw: list[Any], where: str
) -> tuple[
    tuple[int, ...],
    tuple[Mapping[str, Any] | None, ...],
    tuple[Mapping[str, float | int | None], ...],
]:
    """The runs' ids (all or none: a file of before issue 30 has none), reports (an object or
    absent) and measures (numbers or null by name), checked."""
    ids: list[int] = []
    reports: list[Mapping[str, Any] | None] = []
    measures: list[Mapping[str, float | int | None]] = []
    for index, item in enumerate(runs_raw):
        here = f"{where}: run {index}"
        if "id" in item:
            value = item["id"]
            if not _whole_in(value, 1, MAX_RUN_ID):
                raise InvalidInput(
                    f"{here}: 'id' {_shown(value)} must be a whole number from 1 to {MAX_RUN_ID:,}"
                )
            if value in ids:
                raise InvalidInput(f"{here}: 'id' {value} is another run's too")
            ids.append(int(value))
        report = item.get("report")
        if report is not None and not isinstance(report, dict):
            raise InvalidInput(f"{here}: 'report' must be an object (or be left out)")
        reports.append(report)
        kept = item.get("measures", {})
        if not isinstance(kept, dict) or not all(
            v is None or (isinstance(v, int | float) and not isinstance(v, bool))
            for v in kept.values()
        ):
            raise InvalidInput(f"{here}: 'measures' must map names to numbers or null")
        measures.append(kept)
    if ids and len(ids) != len(runs_raw):
        raise InvalidInput(f"{where}: some runs have an 'id' and some have none; give all or none")
    if not any(r is not None for r in reports):
        reports = []
    if not any(measures):
        measures = []
    return tuple(ids), tuple(reports), tuple(measures)


def _hierarchy_paths(value: object, where: str, columns: set[str]) -> dict[str, str]:
    """A ``{column: hierarchy file}`` object (the attached hierarchies, or a run's), checked."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InvalidInput(f"{where}: 'hierarchies' must map columns to file paths")
    for column, file in value.items():
        if columns and column not in columns:
            raise InvalidInput(
                f"{where}: the hierarchy for {column[:80]!r} names not a column of the table"
            )
        if not file.strip() or "\x00" in file:
            raise InvalidInput(
                f"{where}: the hierarchy for {column[:80]!r} has an empty path or no file name "
                "(or a NUL character); attach the hierarchy file again"
            )
    return dict(value)


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


def _roles(data: Mapping[str, Any], where: str, columns: set[str]) -> RoleMap:
    roles_ok = {r.value for r in AttributeRole}
    kinds_ok = {k.value for k in AttributeKind}
    specs: list[tuple[str, ColumnSpec]] = []
    for column, spec in data.items():
        shown = repr(column[:80])
        if columns and column not in columns:
            raise InvalidInput(f"{where}: roles name column {shown}, which 'data.columns' lacks")
        if not isinstance(spec, dict):
            raise InvalidInput(f"{where}: the role of column {shown} must be an object")
        _unknown(spec, _ROLE_KEYS, f"{where}: the role of column {shown}")
        role, kind = spec.get("role"), spec.get("kind")
        if not isinstance(role, str) or role not in roles_ok:
            raise InvalidInput(
                f"{where}: column {shown} has role {_shown(role)}; use one of "
                f"{', '.join(sorted(roles_ok))}"
            )
        if not isinstance(kind, str) or kind not in kinds_ok:
            raise InvalidInput(
                f"{where}: column {shown} has kind {_shown(kind)}; use one of "
                f"{', '.join(sorted(kinds_ok))}"
            )
        order = spec.get("order")
        if order is not None and (
            not isinstance(order, list) or not all(isinstance(v, str) for v in order)
        ):
            raise InvalidInput(f"{where}: the order of column {shown} must be a list of strings")
        if order is not None and len(set(order)) != len(order):
            raise InvalidInput(f"{where}: the order of column {shown} repeats a category")
        if not isinstance(spec.get("missing_as_category", False), bool):
            raise InvalidInput(
                f"{where}: 'missing_as_category' of column {shown} must be true or false"
            )
        specs.append((str(column), ColumnSpec.from_json(spec)))
    return RoleMap(tuple(specs))


def _shown(value: object) -> str:
    """``repr(value)`` cut to 40 characters (a message stays one short line)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _whole_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _run_spec(item: object, where: str, index: int, columns: set[str], roles: RoleMap) -> RunSpec:
    here = f"{where}: run {index}"
    if not isinstance(item, dict):
        raise InvalidInput(f"{here} must be an object")
    method_name = item.get("method")
    if not isinstance(method_name, str) or not method_name:
        raise InvalidInput(f"{here} has no method name")
    if method_name == "plan" or "plan" in item:
        return _plan_run_spec(item, here)
    try:
        method = get_method(method_name)
    except InvalidParameter as exc:
        raise InvalidInput(f"{here}: {exc}") from None
    here = f"{here} ({method_name})"
    _unknown(item, _RUN_KEYS, here)
    for key, default in _PLACEMENT_DEFAULTS:
        if key in item and not (item[key] == default and type(item[key]) is type(default)):
            raise InvalidInput(
                f"{here}: {key!r} = {_shown(item[key])} is refused: a project file never "
                "chooses where runs are computed or sends data anywhere (engine, scheduler, "
                "workers); choose them on the command line; remove the field"
            )
    k = item.get("k")
    if not isinstance(k, int) or isinstance(k, bool):
        raise InvalidInput(f"{here} has k = {_shown(k)}; k must be a whole number")
    if k < 2:
        raise InvalidInput(f"{here} has k = {k}; k >= 2 is needed for any protection")
    if k > MAX_K:
        raise InvalidInput(f"{here} has k too large ({k}); k <= {MAX_K:,}")
    params = item.get("parameters", {})
    if not isinstance(params, dict):
        raise InvalidInput(f"{here}: 'parameters' must be an object")
    try:
        resolve_params(method, params)
    except InvalidParameter as exc:
        raise InvalidInput(f"{here}: {exc}") from None
    seed = item.get("seed")
    if seed is not None and not _whole_in(seed, 0, MAX_SEED):
        raise InvalidInput(
            f"{here}: seed {_shown(seed)} must be null or a whole number between 0 and {MAX_SEED}"
            if not isinstance(seed, int) or isinstance(seed, bool)
            else f"{here}: seed {seed} must be a whole number between 0 and {MAX_SEED}"
        )
    hierarchies = _hierarchy_paths(item.get("hierarchies", {}), here, columns)
    strata = item.get("strata", [])
    if not isinstance(strata, list):
        raise InvalidInput(f"{here}: 'strata' must be a list of column names")
    if not all(isinstance(c, str) for c in strata):
        raise InvalidInput(f"{here}: 'strata' must be a list of column names")
    for column in strata:
        if columns and column not in columns:
            raise InvalidInput(
                f"{here}: strata column {column[:80]!r} is not a column of the table"
            )
        if column in roles and roles[column].role is AttributeRole.IDENTIFIER:
            raise InvalidInput(
                f"{here}: strata column {column[:80]!r} is an identifier (removed from the output)"
            )
    if len(set(strata)) != len(strata):
        raise InvalidInput(f"{here}: 'strata' names a column twice")
    block_size = item.get("block_size")
    if block_size is not None and block_size != "auto":
        if not isinstance(block_size, int) or isinstance(block_size, bool):
            raise InvalidInput(
                f'{here}: block_size {_shown(block_size)} must be null, "auto" or a whole number'
            )
        if block_size < 2 * k:
            raise InvalidInput(
                f"{here}: block_size {block_size} is too small; a block needs >= 2k = {2 * k} records"
            )
        if block_size > MAX_BLOCK_SIZE:
            raise InvalidInput(
                f"{here}: block_size {block_size} is too large; give <= {MAX_BLOCK_SIZE:,}"
            )
    return RunSpec(
        method=method_name,
        k=k,
        params=tuple(sorted(params.items())),
        seed=seed,
        hierarchies=tuple(sorted(hierarchies.items())),
        strata=tuple(strata),
        block_size=block_size,
    )


def _plan_run_spec(item: dict[str, Any], here: str) -> RunSpec:
    """A plan run (issue 31): ``method`` "plan", its ``k``, ``seed`` and ``plan`` (checked as a
    plan file is); nothing else of a method run."""
    from microgui.core.runs.plan import PLAN_METHOD, plan_from_json, plan_spec

    here = f"{here} (plan)"
    if item.get("method") != PLAN_METHOD or not isinstance(item.get("plan"), dict):
        raise InvalidInput(f'{here}: a plan run has method "plan" and its plan as an object')
    _unknown(item, _RUN_KEYS, here)
    for key, default in (("parameters", {}), ("hierarchies", {}), ("strata", []),
                         ("block_size", None), *_PLACEMENT_DEFAULTS):  # fmt: skip
        if key in item and item[key] != default:
            raise InvalidInput(f"{here}: {key!r} is not a field of a plan run (its plan says it)")
    k = item.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or not 2 <= k <= MAX_K:
        raise InvalidInput(f"{here} has k = {_shown(k)}; k must be a whole number >= 2")
    seed = item.get("seed")
    if seed is not None and not _whole_in(seed, 0, MAX_SEED):
        raise InvalidInput(f"{here}: seed {_shown(seed)} must be null or a whole number")
    plan = plan_from_json(item["plan"], source=here)
    return plan_spec(plan, k, seed)


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 -> 2: no column had a hierarchy attached (2 adds ``hierarchies``)."""
    return {**data, "schema_version": 2, "hierarchies": data.get("hierarchies", {})}


def _from_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 -> 3: no run kept its partition (3 adds a run's ``partition`` and ``sweep``)."""
    return {**data, "schema_version": 3}


#: schema version N -> function turning a version-N object into a version-(N+1) one.
_MIGRATIONS: Final[dict[int, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    1: _from_v1,
    2: _from_v2,
}


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


def write_autosave(
    project: Project, *, also_protect: Iterable[str | os.PathLike[str]] = ()
) -> Path:
    """Save ``project`` as the autosave (atomically); return its path. Never over a file the
    session read (:meth:`Project.read_files`, ``also_protect``): a state folder set to the
    data's folder must not cost the data."""
    path = autosave_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    # the data path is kept absolute: the autosave folder has nothing to do with the data's
    data = project.to_json(None)
    data["autosave"] = True
    write_json_atomic(data, path, protect_from=[*project.read_files(None), *also_protect])
    return path


def read_autosave() -> Project | None:
    """The autosaved project, or None when there is none.

    An autosave that cannot be read (damaged, hostile, from a newer version) is never fatal and
    never read twice: it is renamed to ``<name>.bad`` beside it (replacing an older one) and
    :class:`InvalidInput` says so, for the app to tell the user; the next start is clean.
    """
    path = autosave_path()
    try:
        if not path.exists() and not path.is_symlink():
            return None
    except OSError:
        return None
    try:
        return load_project(path)
    except InvalidInput as exc:
        bad = path.with_name(path.name + ".bad")
        try:
            os.replace(path, bad)
            kept = f"it was set aside as {str(bad)!r}"
        except OSError as move:
            clear_autosave()
            kept = f"it could not be set aside as {str(bad)!r} ({move.strerror}) and was removed"
        raise InvalidInput(
            f"the autosave of the last session could not be read ({exc}); {kept}; microgui "
            "starts without it"
        ) from None


def clear_autosave() -> None:
    """Remove the autosave (on a clean exit, or once restored or declined)."""
    try:
        autosave_path().unlink()
    except FileNotFoundError:
        pass
