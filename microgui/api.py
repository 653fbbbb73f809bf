"""The Python API for notebooks: protect a pandas DataFrame and get the protected frame back.

>>> import microgui, pandas as pd
>>> df = pd.DataFrame({"age": [23, 25, 31, 35, 44, 47], "income": [10, 12, 30, 33, 50, 52]})
>>> res = microgui.protect(df, qi=["age", "income"], method="mdav", k=3, seed=1)
>>> res.report["min_group_size"]
3
>>> res.check.ok, res.check.k_anonymity
(True, 3)

The result carries the release check that an export makes (:func:`microgui.core.release.check.
check_export`: no identifier column, k-anonymity on the quasi-identifiers at least k, and the p
or t a method promised). A table that fails it (individual ranking is not k-anonymous, for
example) is returned with ``check.ok`` False and an :class:`UnsafeReleaseWarning`; pass
``unsafe="raise"`` to get :class:`~microgui.core.errors.ExportRefused` instead, or
``unsafe="allow"`` to accept it silently (the verdict stays in ``check``).

``result.frame`` is the caller's copy of the protected table (``result.run.protected`` stays
what the method made) and ``check`` its verdict when it was returned. :meth:`ProtectionResult.
export` writes ``result.frame`` as it is then, checked again on the values it writes: a cell
edited since (a value put back, say) is measured, refused when the check fails (unless
``override``) or written with the new figures; a column of the input put back (an identifier)
is refused by the check; records added, removed or reordered, or a column the input does not
have, are refused.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from microgui.core.errors import (
    ExportRefused,
    InvalidInput,
    InvalidParameter,
    InvalidRoles,
    MicroguiWarning,
)
from microgui.core.progress import ProgressFn, no_progress
from microgui.core.release.check import ExportCheck, check_export
from microgui.core.runs import RunResult, RunSpec, run_protection
from microgui.core.table.dataset import Dataset, check_frame
from microgui.core.table.roles import RoleMap, roles_from_lists

__all__ = [
    "ProtectionResult",
    "SparkProtectionResult",
    "UnsafeReleaseWarning",
    "assess",
    "protect",
    "protect_spark",
    "list_methods",
]


class UnsafeReleaseWarning(MicroguiWarning):
    """:func:`protect` returned a table that fails the release check (see ``result.check``)."""


@dataclass(frozen=True)
class ProtectionResult:
    """``frame``: the protected table (identifiers removed, same row order and index), a copy
    of ``run.protected`` that is yours to edit; ``partition``: each record's group id as a
    Series on the input's index; ``report``: the JSON-ready run report; ``run``: the full
    :class:`RunResult`; ``check``: the release check of ``frame`` as returned (``ok``,
    ``problems``, ``k_anonymity``). An edit of ``frame`` is not seen by ``check``: ``export``
    checks the table again, on the values it writes."""

    frame: pd.DataFrame
    partition: pd.Series
    report: Mapping[str, Any]
    run: RunResult
    check: ExportCheck
    dataset: Dataset | None = None

    def _repr_html_(self) -> str:
        """The notebook display (as scikit-learn's estimator display): the release verdict
        (:func:`microgui.core.metrics.disclosure.release_verdict`, the words of the app and the
        reports), the key figures of the run report and its group-size summary. Only counts,
        measures and column names: never a value of a record."""
        from html import escape

        from microgui.core.metrics.disclosure import release_verdict

        rep = self.report
        verdict = release_verdict(rep)
        colour = {"safe": "#1a7f37", "not_k_anonymous": "#b42318"}.get(verdict.level, "#9a6700")

        def fmt(value: Any) -> str:
            if isinstance(value, float):  # the app's format (issue 30)
                from microgui.core.metrics.measure_text import format_measure

                return format_measure(value)
            return "n/a" if value is None else str(value)

        qi = rep.get("quasi_identifiers")
        figures = [
            ("method", rep.get("method")),
            ("k", rep.get("k")),
            ("k-anonymity reached", rep.get("k_anonymity")),
            ("records", rep.get("n_records")),
            ("groups", rep.get("n_groups")),
            (
                "smallest / largest group",
                f"{fmt(rep.get('min_group_size'))} / {fmt(rep.get('max_group_size'))}",
            ),
            ("information loss (%)", rep.get("information_loss")),
            ("lower bound of the loss (%)", rep.get("il_lower_bound_best")),
            ("quasi-identifiers", ", ".join(map(str, qi)) if isinstance(qi, Mapping) else None),
            ("identifiers removed", len(rep.get("identifiers_removed") or ())),
            ("release check", "passed" if self.check.ok else "; ".join(self.check.problems)),
        ]
        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(name)}</th>"
            f"<td style='text-align:left'>{escape(fmt(value))}</td></tr>"
            for name, value in figures
        )
        counts = rep.get("group_size_counts")
        sizes = ""
        if isinstance(counts, Mapping) and counts:
            cells = "".join(
                f"<tr><td>{escape(str(size))}</td><td>{escape(str(n))}</td></tr>"
                for size, n in sorted(counts.items(), key=lambda kv: int(kv[0]))
            )
            sizes = (
                "<details><summary>group sizes</summary><table>"
                f"<tr><th>records in the group</th><th>groups</th></tr>{cells}</table></details>"
            )
        return (
            "<div class='microgui-result'>"
            f"<strong>microgui ProtectionResult</strong>"
            f"<p style='color:{colour};margin:4px 0'>{escape(verdict.text)}</p>"
            f"<table>{rows}</table>{sizes}</div>"
        )

    @property
    def safe(self) -> bool:
        """Whether ``frame`` passes the release check (``check.ok``)."""
        return self.check.ok

    def export(
        self,
        path: str | os.PathLike[str],
        *,
        report: str | os.PathLike[str] | None = None,
        report_html: str | os.PathLike[str] | None = None,
        report_pdf: str | os.PathLike[str] | None = None,
        override: str | None = None,
        csv_sep: str | None = None,
        csv_decimal: str | None = None,
        csv_encoding: str | None = None,
        pseudonymize: Iterable[str] | str | None = (),
        pseudonym_key: str | os.PathLike[str] | None = None,
        keep_formula_cells: bool = False,
        keep_order: bool = False,
        order_seed: int | None = None,
    ) -> dict[str, Any]:
        """Write the release as ``microgui protect`` does (issue 18): the format from the
        file's extension (.csv, .xlsx, .parquet, .sav/.zsav, .dta), the release check (a table
        that fails is refused unless ``override`` gives the reason, recorded), the formula rule,
        the JSON ``report`` and the HTML/PDF release report if asked (the PDF needs Qt), the
        CSV options, pseudonyms and their key; all files or none. Returns the run report as
        written.

        What is written is ``self.frame`` as it is now, and the release check is made again on
        it, never taken from ``self.check``: after an edit the report's figures (k-anonymity,
        identifiers removed, information loss) are those of the edited table, and
        ``edited_after_run`` counts the changed cells per column. Only quasi-identifier cells
        may be edited (any other column is released as the input holds it). Records added, removed or
        reordered, or a column the input does not have, are refused
        (:func:`microgui.core.release.check.released_result`).

        The records are written in a random order (households of a household-id column kept
        together) unless ``keep_order``; ``order_seed`` makes that order reproducible and is
        recorded in the report (``record_order``; :mod:`microgui.core.release.order`)."""
        from microgui.core.release import CsvOptions
        from microgui.core.release.check import export_run
        from microgui.core.release.order import RecordOrder
        from microgui.core.release.report import release_report_makers

        if self.dataset is None:
            raise InvalidParameter("this result has no table to export (made before 0.1)")
        printer: Any = None
        if report_pdf is not None:
            from microgui.qt.report_pdf import headless_printer

            printer = headless_printer()  # Qt started before any file is written
        options = (
            CsvOptions.make(csv_sep, csv_decimal, csv_encoding)
            if (csv_sep, csv_decimal, csv_encoding) != (None, None, None)
            else None
        )
        names = (
            []
            if pseudonymize is None
            else [pseudonymize]
            if isinstance(pseudonymize, str)
            else list(pseudonymize)
        )
        return export_run(
            self.dataset,
            self.run,
            path,
            report,
            override=override,
            keep_formula_cells=keep_formula_cells,
            csv_options=options,
            pseudonymize=names,
            key_path=pseudonym_key,
            extra_reports=release_report_makers(report_html, report_pdf, printer),
            table=self.frame,
            order=RecordOrder(keep=bool(keep_order), seed=order_seed),
        )


def as_pandas(frame: Any, what: str = "the frame") -> Any:
    """A ``pyarrow.Table`` or a Polars DataFrame as a pandas DataFrame, converted at the API's
    boundary (Polars through Arrow); a pandas frame, or anything else, is returned as given (the
    checks of :func:`protect` refuse what is not a DataFrame)."""
    module = type(frame).__module__.split(".")[0]
    if module == "pyarrow":
        if type(frame).__name__ == "Table":  # pyarrow.Table (pyarrow has no type stubs)
            return frame.to_pandas()
        raise InvalidInput(f"{what} is a pyarrow {type(frame).__name__}; give a pyarrow.Table")
    if module == "polars":
        if type(frame).__name__ == "LazyFrame":
            frame = frame.collect()
        if type(frame).__name__ != "DataFrame":
            raise InvalidInput(f"{what} is a polars {type(frame).__name__}; give a DataFrame")
        return frame.to_arrow().to_pandas()
    return frame


def protect(
    frame: pd.DataFrame,
    *,
    qi: Iterable[str] | str = (),
    method: str = "mdav",
    k: int = 3,
    identifiers: Iterable[str] | str = (),
    confidential: Iterable[str] | str = (),
    ordinal: Mapping[str, Sequence[str] | None] | Iterable[str] | str | None = None,
    nominal: Iterable[str] | str = (),
    missing_as_category: Iterable[str] | str = (),
    weight: str | None = None,
    household: str | None = None,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    roles: RoleMap | None = None,
    progress: ProgressFn = no_progress,
    strata: Iterable[str] | str = (),
    block_size: int | str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    unsafe: Literal["warn", "raise", "allow"] = "warn",
    plan: Any = None,
    threads: int | None = None,
) -> ProtectionResult:
    """Microaggregate ``frame`` on its quasi-identifiers. ``frame`` is a pandas DataFrame, a
    ``pyarrow.Table`` or a Polars DataFrame (converted to pandas first, :func:`as_pandas`).

    Roles are given as on the command line (``qi``, ``identifiers``, ``confidential``,
    ``ordinal={col: [lowest, ..., highest]}`` or a list of columns in their natural order,
    ``nominal``; ``missing_as_category``: nominal/ordinal columns whose missing cells form a
    category of their own instead of refusing the run; ``weight``: the survey weight column,
    released unchanged, used by ``params={"weighted_means": True}``; ``household``: the
    household-id column, released unchanged, its households kept together by the release's
    random record order and their risk in the report), or as a ready ``roles`` RoleMap. One string is one column (``qi="age"``).
    A name matches its column exactly, or else the one column equal to it once spaces at the
    ends, Unicode form and case are ignored; two such columns are an ambiguity, refused.
    ``frame`` must be a DataFrame with unique text column names (not a MultiIndex, not the
    numbers ``pd.read_csv(header=None)`` gives). ``seed`` is a whole number from 0 to 2**64 - 1
    (None: a fresh one, recorded in the report).

    ``plan`` (issue 31): a protection plan instead of one method — a
    :class:`~microgui.core.runs.plan.Plan`, its JSON as a dict, or the path of a plan file
    (its steps' files found beside it): the steps run in order
    (:func:`~microgui.core.runs.plan.run_plan`), ``method``/``k``/``params`` are not used, and
    the release is the one ``microgui protect --plan`` writes from the same plan and seed.

    The result's ``check`` is the release check (:func:`microgui.core.release.check.check_export`).
    When it fails (a masking method such as individual-ranking, which does not promise
    k-anonymity, or a t/p not reached), ``unsafe`` decides: "warn" (default) warns with
    :class:`UnsafeReleaseWarning` naming the problems, "raise" raises
    :class:`~microgui.core.errors.ExportRefused`, "allow" returns the result silently.

    The input frame is not modified. Raises :class:`microgui.core.errors.MicroguiError`
    subclasses with a readable message for user errors.

    Scale (:mod:`microgui.core.runs.scale`): ``strata`` (columns) protects each stratum on its own;
    ``block_size`` splits larger sets of records into spatially coherent blocks of at most that
    many records (None: the method on the whole table; "auto": exact up to 100,000 records,
    blocks of 50,000 above); ``engine="dask"`` with
    ``scheduler="tcp://HOST:PORT"`` runs blocks and strata on a Dask cluster instead of the
    local cores (``workers`` processes, None: one per core).

    ``threads``: threads for the exact kernels (None: ``MICROGUI_THREADS``, else every core);
    the release is the same for any number (issue 33), the report records it.
    """
    frame = as_pandas(frame, "the frame given to microgui.protect")
    check_frame(frame, "the frame given to microgui.protect")
    if unsafe not in ("warn", "raise", "allow"):
        raise InvalidParameter(f"unsafe={unsafe!r}: give 'warn', 'raise' or 'allow'")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise InvalidInput(
            f"the frame given to microgui.protect is empty ({frame.shape[0]} rows, "
            f"{frame.shape[1]} columns); give a table with at least k records"
        )
    roles = _roles(
        frame,
        roles,
        qi=qi,
        identifiers=identifiers,
        confidential=confidential,
        ordinal=ordinal,
        nominal=nominal,
        missing_as_category=missing_as_category,
        weight=weight,
        household=household,
    )
    # The run's own copy of the input: an edit of the caller's frame after protect() must not
    # change what export() draws pseudonyms and their key from, nor the input's fingerprint.
    dataset = Dataset(frame=frame.copy(), roles=roles)
    spec = RunSpec.make(
        method,
        k,
        params,
        seed,
        strata=strata if isinstance(strata, str) else list(strata),
        block_size=block_size,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
    )
    from microgui.core.methods.threads import using_threads

    with using_threads(threads):
        if plan is None:
            result = run_protection(dataset, spec, progress)
        else:
            result = _run_plan(dataset, plan, progress, seed)
    partition = pd.Series(np.asarray(result.labels), index=frame.index, name="group")
    check = check_export(result)
    if not check.ok:
        text = f"the protected table fails the release check: {'; '.join(check.problems)}"
        if unsafe == "raise":
            raise ExportRefused(text + " (unsafe='raise')")
        if unsafe == "warn":
            warnings.warn(
                text + "; see result.check (unsafe='allow' accepts it, 'raise' refuses it)",
                UnsafeReleaseWarning,
                stacklevel=2,
            )
    return ProtectionResult(
        # the caller's own copy: an edit of it leaves the run's table as the method made it
        frame=result.protected.copy(),
        partition=partition,
        report=result.report,
        run=result,
        check=check,
        dataset=dataset,
    )


@dataclass(frozen=True)
class SparkProtectionResult:
    """What :func:`protect_spark` returns: ``frame``, the released ``pyspark.sql.DataFrame``
    (identifiers removed, each input partition's records in a random order unless
    ``keep_order``), and ``report``, the run
    report (the keys of a partitioned run's report: counts and measures only)."""

    frame: Any
    report: Mapping[str, Any]


def protect_spark(
    frame: Any,
    *,
    qi: Iterable[str] | str,
    method: str = "mdav",
    k: int = 3,
    block_size: int | str = "auto",
    identifiers: Iterable[str] | str = (),
    confidential: Iterable[str] | str = (),
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    group_column: str | None = None,
    override: str | None = None,
    keep_formula_cells: bool = False,
    progress: ProgressFn = no_progress,
    keep_order: bool = False,
    order_seed: int | None = None,
) -> SparkProtectionResult:
    """Microaggregate a ``pyspark.sql.DataFrame`` on its own Spark session, block by block
    (:mod:`microgui.core.release.spark`: the Dask engine's global split, each block protected
    with ``groupBy(block).applyInPandas``); the release of ``microgui protect --engine spark``.

    ``qi`` are continuous quasi-identifiers (numbers); ``block_size`` is at least 2k ("auto":
    blocks of 50,000 above 100,000 records, and the table must be larger than one block); the
    method one that aggregates (mdav, md, cbfs, ...). A table of at most 200,000 records gives
    the release of :func:`protect` with the same ``block_size`` and ``seed``. When a block is
    less than k-anonymous the release is refused (:class:`~microgui.core.errors.ExportRefused`)
    unless ``override`` gives the reason, recorded in the report. Every executor must run this
    microgui version (checked first). Raises :class:`~microgui.core.errors.MicroguiError`
    subclasses (one line) for user errors.

    The records of each of ``frame``'s partitions come out in a random order (the Dask
    engine's permutation of each part; :mod:`microgui.core.release.order`) unless
    ``keep_order``; ``order_seed`` makes that order reproducible and is recorded in the report
    (``record_order``).
    """
    from microgui.core.release.order import RecordOrder
    from microgui.core.release.spark import protect_spark_frame

    def names(value: Iterable[str] | str) -> list[str]:
        return [value] if isinstance(value, str) else [str(v) for v in value]

    spec = RunSpec.make(
        method, k, params, seed, block_size=block_size, engine="spark", scheduler=None
    )
    release, report = protect_spark_frame(
        frame,
        spec,
        qi=names(qi),
        identifiers=names(identifiers),
        confidential=names(confidential),
        group_column=group_column,
        override=override,
        keep_formula_cells=keep_formula_cells,
        progress=progress,
        order=RecordOrder(keep=bool(keep_order), seed=order_seed),
    )
    return SparkProtectionResult(frame=release, report=report)


def _run_plan(dataset: Dataset, plan: Any, progress: ProgressFn, seed: int | None) -> RunResult:
    """``protect(plan=...)``: a Plan, its JSON (a dict) or a plan file's path."""
    from microgui.core.runs.plan import Plan, load_plan, plan_from_json, run_plan

    if isinstance(plan, str | os.PathLike):
        plan = load_plan(plan)
    elif isinstance(plan, Mapping):
        plan = plan_from_json(dict(plan))
    if not isinstance(plan, Plan):
        raise InvalidParameter(
            f"plan={type(plan).__name__}: give a Plan, its JSON (a dict) or a plan file's path"
        )
    return run_plan(dataset, plan, progress, seed=seed).result


def assess(
    frame: pd.DataFrame,
    *,
    qi: Iterable[str] | str = (),
    identifiers: Iterable[str] | str = (),
    confidential: Iterable[str] | str = (),
    ordinal: Mapping[str, Sequence[str] | None] | Iterable[str] | str | None = None,
    nominal: Iterable[str] | str = (),
    weight: str | None = None,
    household: str | None = None,
    roles: RoleMap | None = None,
    k: int = 3,
    keys: Iterable[str] | None = None,
    max_suda_size: int | None = None,
    household_size_key: bool = False,
) -> dict[str, Any]:
    """The disclosure risk of ``frame`` before any protection, as ``microgui assess`` reports it
    (:func:`microgui.core.metrics.file_risk.assess_risk`): k-anonymity on the categorical keys
    (a missing key value matches any value) with the smallest key combinations breaking ``k``,
    individual risk (weighted when ``weight`` is given), SUDA2 per-variable contributions and
    the l-diversity of the ``confidential`` columns. Roles as for :func:`protect`; the keys are
    the nominal and ordinal quasi-identifiers (and continuous ones with at most 20 distinct
    values) unless ``keys`` names them. ``household`` (the household-id column) adds the
    household risk (sdcMicro's ``hier_risk``), and ``household_size_key`` the size of each
    record's household to the keys. Returns a JSON-ready dict of counts, measures and
    column names, never a value of a record.
    """
    from microgui.core.metrics.file_risk import assess_risk
    from microgui.core.table.roles import resolve_columns

    frame = as_pandas(frame, "the frame given to microgui.assess")
    check_frame(frame, "the frame given to microgui.assess")
    roles = _roles(
        frame,
        roles,
        qi=qi,
        identifiers=identifiers,
        confidential=confidential,
        ordinal=ordinal,
        nominal=nominal,
        weight=weight,
        household=household,
    )
    chosen = None
    if keys is not None:
        names = [keys] if isinstance(keys, str) else list(keys)
        chosen = resolve_columns(names, list(frame.columns), "keys")
    return assess_risk(
        frame,
        roles,
        k=k,
        keys=chosen,
        max_suda_size=max_suda_size,
        household_size_key=household_size_key,
    )


def list_methods() -> list[dict[str, Any]]:
    """Name, one-line summary, citation and parameters of every registered method."""
    from microgui.core.methods import available_methods
    from microgui.core.references import readable

    return [
        {
            "name": m.name,
            "summary": readable(m.summary),
            "citation": m.reference,
            "kinds": sorted(kind.value for kind in m.kinds),
            "parameters": {
                p.name: {"default": p.default, "help": readable(p.help)} for p in m.all_params
            },
        }
        for m in available_methods()
    ]


def _roles(frame: pd.DataFrame, roles: RoleMap | None, **lists: Any) -> RoleMap:
    """The roles given, or built from the column lists (``roles_from_lists``); one check that a
    given ``roles`` is a RoleMap, for :func:`protect` and :func:`assess`."""
    if roles is None:
        return roles_from_lists(list(frame.columns), **lists)
    if not isinstance(roles, RoleMap):
        raise InvalidRoles(f"roles must be a RoleMap, not a {type(roles).__name__}")
    return roles
