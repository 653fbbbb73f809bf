"""The run history of a window: what :class:`~microgui.qt.controller.AppController` keeps of its
finished runs and sweep points, and the project file that saves it (UI-side state, no Qt;
restoring a project is :mod:`microgui.qt.project_restore`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.progress import ProgressFn
from microgui.core.release.check import ExportCheck, check_export
from microgui.core.runs import RunResult, RunSpec
from microgui.core.runs.analysis import RunOutcome, analyse_run
from microgui.core.runs.project_file import Project
from microgui.core.runs.stored_partition import not_restorable, partition_json, restore_outcome
from microgui.core.runs.sweep import SweepPoint
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import RoleMap

__all__ = [
    "ExportLedger",
    "HistoryEntry",
    "MAX_COMPARED",
    "find_entry",
    "checked_comparison",
    "comparison_ids",
    "comparison_without",
    "project_of",
    "resolved_project",
    "project_roles",
    "restored_entries",
    "kept_partition",
    "kept_partitions",
    "PARTITION_BUDGET",
    "with_partition",
    "restore_job",
]

#: The most runs the comparison view puts side by side.
MAX_COMPARED = 4


@dataclass(frozen=True)
class HistoryEntry:
    """A finished run kept in the history: its outcome, the table it was computed from (for
    re-running and reports) and when it finished.

    A point of a sweep has ``point`` set and, until it is opened, no ``outcome``: a sweep keeps
    each run's report and measures, not its protected table. Opening it re-runs
    :attr:`reproducible_spec` (same seed, same result) and fills ``outcome`` in.

    A run of a reopened project (issue 30) is kept the same way (its report and measures in
    ``point``) with the partition the project kept (``partition``): opening it rebuilds the run
    from its partition (:mod:`~microgui.core.runs.stored_partition`), without running its
    method; ``sweep`` says whether it was a sweep point (None: as ``point`` says).
    """

    run_id: int
    outcome: RunOutcome | None
    dataset: Dataset
    finished_at: datetime
    point: SweepPoint | None = None
    partition: object | None = None
    sweep: bool | None = None

    @property
    def rebuildable(self) -> bool:
        """Not opened yet, with a kept partition it can be rebuilt from (no method run)."""
        return self.outcome is None and self.partition is not None and not not_restorable(self.spec)

    @property
    def has_table(self) -> bool:
        """False for a sweep point not opened yet (its report and measures only)."""
        return self.outcome is not None

    @property
    def from_sweep(self) -> bool:
        return self.point is not None if self.sweep is None else self.sweep

    @property
    def result(self) -> RunResult:
        if self.outcome is None:
            raise LookupError(
                f"{self.name} is a sweep point kept as its measures only; open it to re-compute it"
            )
        return self.outcome.result

    @property
    def report(self) -> Mapping[str, Any]:
        if self.outcome is not None:
            return self.outcome.result.report
        assert self.point is not None and self.point.report is not None
        return self.point.report

    @property
    def spec(self) -> RunSpec:
        if self.outcome is not None:
            return self.outcome.result.spec
        assert self.point is not None
        return self.point.spec

    @property
    def measures(self) -> Mapping[str, float | int | None]:
        if self.outcome is not None:
            return self.outcome.measures
        assert self.point is not None
        return self.point.measures

    @property
    def measures_note(self) -> str:
        """Why some measures are missing ("" when none is)."""
        if self.outcome is not None:
            return self.outcome.measures_note
        return self.point.error or "" if self.point is not None else ""

    @property
    def seconds(self) -> float:
        """Wall time of the run itself (as its report says)."""
        value = self.report.get("seconds")
        return float(value) if value is not None else 0.0

    @property
    def seed(self) -> int | None:
        """The seed the run used (the spec's, or the fresh one its report recorded)."""
        seed = self.report.get("seed", self.spec.seed)
        return None if seed is None else int(seed)

    @property
    def reproducible_spec(self) -> RunSpec:
        """The spec with the seed actually used: re-running it gives the same result."""
        return replace(self.spec, seed=self.seed)

    @property
    def name(self) -> str:
        """'#3 mdav k=5': how the run is called in tables, legends and reports."""
        return f"#{self.run_id} {self.spec.method} k={self.spec.k}"

    def opening_note(self, after_sweep: bool) -> str:
        """What opening this sweep point does: re-computed now, or when the sweep ends (a kept
        run of a project: rebuilt from its partition)."""
        if self.rebuildable:
            when = "when the sweep ends" if after_sweep else "now"
            return f"{self.name}: rebuilding it {when} from the partition the project kept…"
        seed = "a fresh seed" if self.seed is None else f"seed {self.seed}"
        if after_sweep:
            return (
                f"{self.name} is a sweep point (measures only): it will be re-computed with "
                f"{seed} to show it when the sweep ends."
            )
        return (
            f"{self.name} is a sweep point (measures only): re-running it with {seed} to show "
            "it (same spec and seed, same result)…"
        )


class ExportLedger:
    """What a session knows of its exports: the release check of the last result checked,
    kept so that the export does not repeat it, and the report of each result exported."""

    def __init__(self) -> None:
        self._check: tuple[RunResult, ExportCheck] | None = None
        #: the report of each result exported in this session, by id (the result kept: ids are
        #: reused once an object is gone)
        self._reports: dict[int, tuple[RunResult, dict[str, Any]]] = {}

    def check(self, result: RunResult) -> ExportCheck:
        """The release check of ``result`` (:func:`~microgui.core.release.check.check_export`), made
        once while it is the result checked."""
        if self._check is None or self._check[0] is not result:
            self._check = (result, check_export(result))
        return self._check[1]

    def record(self, result: RunResult, report: dict[str, Any]) -> None:
        self._reports[id(result)] = (result, report)

    def report_of(self, result: Any) -> dict[str, Any] | None:
        kept = self._reports.get(id(result))
        return kept[1] if kept is not None and kept[0] is result else None


def comparison_without(compared: tuple[int, ...], run_id: int) -> tuple[int, ...]:
    """The runs still compared once ``run_id`` is gone (none when fewer than 2 are left)."""
    rest = tuple(i for i in compared if i != run_id)
    return rest if len(rest) >= 2 else ()


def find_entry(history: Sequence[HistoryEntry], run_id: int) -> HistoryEntry:
    """The history entry of a run (KeyError when it is not, or no longer, in the history)."""
    for entry in history:
        if entry.run_id == run_id:
            return entry
    raise KeyError(f"run #{run_id} is not in the history")


def comparison_ids(run_ids: Sequence[int]) -> tuple[int, ...]:
    """The runs to compare (duplicates dropped), or :class:`InvalidParameter` unless they are
    2 to :data:`MAX_COMPARED` (or none)."""
    ids = tuple(dict.fromkeys(int(i) for i in run_ids))
    if ids and not 2 <= len(ids) <= MAX_COMPARED:
        raise InvalidParameter(f"choose 2 to {MAX_COMPARED} runs to compare, not {len(ids)}")
    return ids


def checked_comparison(history: Sequence[HistoryEntry], run_ids: Sequence[int]) -> tuple[int, ...]:
    """The runs to compare (duplicates dropped), or :class:`InvalidParameter` saying why not:
    2 to :data:`MAX_COMPARED` runs (or none), each with its table."""
    ids = comparison_ids(run_ids)
    unopened = [e.name for e in (find_entry(history, i) for i in ids) if not e.has_table]
    if unopened:
        raise InvalidParameter(
            f"{', '.join(unopened)}: sweep point(s) kept as measures only; select each one "
            "first to re-compute its table (same seed, same result), then compare"
        )
    return ids


def project_of(
    dataset: Dataset,
    history: Sequence[HistoryEntry],
    compared: Sequence[int],
    hierarchies: Mapping[str, str],
) -> Project:
    """A session as a :class:`~microgui.core.runs.project_file.Project` (no data values): the
    table's path, columns and roles, the history's reproducible specs (seeds kept), the compared
    runs and the attached hierarchy files."""
    ids = [entry.run_id for entry in history]
    partitions = kept_partitions(history)
    return Project(
        data_path=str(dataset.source) if dataset.source else None,
        columns=tuple(str(c) for c in dataset.frame.columns),
        roles=dataset.roles,
        runs=tuple(entry.reproducible_spec for entry in history),
        comparison=tuple(ids.index(i) for i in compared if i in ids),
        hierarchies=tuple(sorted(hierarchies.items())),
        # issue 30: each run keeps its number, report and measures (reopened at once)
        run_ids=tuple(ids),
        run_reports=tuple(entry.report for entry in history),
        run_measures=tuple(entry.measures for entry in history),
        run_partitions=tuple(partitions) if any(p is not None for p in partitions) else (),
        run_from_sweep=tuple(entry.from_sweep for entry in history),
        run_finished=tuple(entry.finished_at.isoformat(timespec="seconds") for entry in history),
    )


#: The most characters of kept partitions a project holds (a project file may have
#: :data:`~microgui.core.runs.project_file.MAX_PROJECT_BYTES`, 64 MB): about 440 runs of Adult;
#: beyond it the oldest runs keep none and are re-computed when opened.
PARTITION_BUDGET = 32 * 1024 * 1024


def kept_partitions(history: Sequence[HistoryEntry]) -> list[object | None]:
    """Each run's :func:`kept_partition`, the newest first within :data:`PARTITION_BUDGET`."""
    kept: list[object | None] = [None] * len(history)
    left = PARTITION_BUDGET
    for index in range(len(history) - 1, -1, -1):
        block = kept_partition(history[index])
        if block is None or not isinstance(block, Mapping):
            continue
        size = sum(len(v) for v in block.values() if isinstance(v, str))
        size += sum(
            len(v)
            for t in (block.get("tree") or {},)
            if isinstance(t, Mapping)
            for v in t.values()
            if isinstance(v, str)
        )
        if size > left:
            continue
        left -= size
        kept[index] = block
    return kept


def kept_partition(entry: HistoryEntry) -> object | None:
    """What a project keeps of a run's partition: encoded from its result (once: the worker
    encodes each run as it ends, :func:`with_partition`), or the block it was reopened with;
    None for a sweep point never opened."""
    if entry.outcome is not None:
        if entry.spec.plan is not None:  # a plan run: re-computed from its plan and seed
            return None
        return partition_json(entry.outcome.result, entry.dataset)
    return entry.partition


def with_partition(
    job: Callable[[ProgressFn], Any], dataset: Dataset
) -> Callable[[ProgressFn], Any]:
    """``job`` (a run's, returning a :class:`RunOutcome`), then its partition encoded for the
    project file in the same worker thread (~50 ms on Adult, mostly the release digest), so
    that saving the session finds it ready (:func:`partition_json` is memoized)."""

    def run(progress: ProgressFn) -> Any:
        outcome = job(progress)
        if isinstance(outcome, RunOutcome) and outcome.result.spec.plan is None:
            partition_json(outcome.result, dataset)
        return outcome

    return run


def restore_job(entry: HistoryEntry) -> Callable[[ProgressFn], RunOutcome]:
    """The worker's job opening a kept run of a reopened project: rebuilt from its partition
    (no method run); when that partition cannot be used (damaged, another table, a release
    that differs), the progress text says why and the run is re-computed from its spec and
    seed (same seed, same result)."""
    dataset, spec, report, measures = (
        entry.dataset,
        entry.reproducible_spec,
        entry.report,
        entry.measures,
    )
    block, name = entry.partition, entry.name

    def run(progress: ProgressFn) -> RunOutcome:
        try:
            return restore_outcome(dataset, spec, report, measures, block, progress)
        except InvalidInput as why:
            progress(0.0, f"{name}: {why}; re-computing it from its spec and seed")
            return analyse_run(dataset, spec, progress)

    return run


def restored_entries(project: Project, dataset: Dataset) -> list[HistoryEntry]:
    """The project's runs as history entries with their numbers, reports, measures and kept
    partitions, each rebuilt from its partition when opened (or, without one, re-computed:
    same spec and seed, same result, as a sweep point is); empty
    when the project kept no report for some run (a file of before issue 30): those are
    re-computed."""
    reports = project.run_reports
    if not project.runs or len(reports) != len(project.runs) or any(r is None for r in reports):
        return []
    measures = project.run_measures or tuple({} for _ in project.runs)
    partitions = project.run_partitions or tuple(None for _ in project.runs)
    from_sweep = project.run_from_sweep or tuple(False for _ in project.runs)
    now = datetime.now()
    finished = [
        datetime.fromisoformat(f) if f else now
        for f in (project.run_finished or tuple(None for _ in project.runs))
    ]
    return [
        HistoryEntry(
            run_id,
            None,
            dataset,
            finished[index],
            SweepPoint(index, spec, report, dict(kept), seconds=float(report.get("seconds") or 0)),
            partition=partition,
            sweep=sweep,
        )
        for index, (run_id, spec, report, kept, partition, sweep) in enumerate(
            zip(project.ids, project.runs, reports, measures, partitions, from_sweep, strict=True)
        )
    ]


def resolved_project(project: Project, folder: Path | None) -> tuple[Path, Project]:
    """A read project's table and the project with its runs' and attached hierarchy files
    relative to ``folder`` (the project file's, as the table); :class:`InvalidInput` when the
    project names no table or its table is gone."""
    data = project.resolved_data_path(folder)
    if data is None:
        raise InvalidInput("the project names no table (it was saved from the demo data?)")
    if not data.is_file():
        raise InvalidInput(
            f"the project's table {str(data)!r} is not there; move it back, or open the table "
            "and tag it again"
        )
    attached = project.resolved_hierarchies(folder)
    return data, replace(
        project,
        runs=project.resolved_runs(folder),
        hierarchies=tuple((c, str(p)) for c, p in attached.items()),
    )


def project_roles(project: Project, dataset: Dataset) -> RoleMap | str:
    """The project's roles for its freshly read table, or why they cannot be applied (the
    table's columns changed since the project was saved)."""
    columns = [str(c) for c in dataset.frame.columns]
    if project.columns and list(project.columns) != columns:
        missing = [c for c in project.columns if c not in columns]
        what = f"column {missing[0]!r} is gone" if missing else "its columns changed"
        return f"the table changed since the project was saved ({what}); roles were not applied"
    return RoleMap(tuple((c, project.roles.get(c, dataset.roles[c])) for c in columns))
