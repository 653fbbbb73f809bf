"""A run as the command line that makes it again (issue 18, item 3: the app's "Copy as command").

:func:`command_for_run` writes ``microgui protect`` with the table, the roles (``--qi``,
``--nominal``, ``--ordinal COL=V1<V2<...`` with ``\\<`` and ``\\=`` escaped as the command line
reads them, ``--identifiers``, ``--confidential``, ``--missing-as-category``) and the run
(``--method``, ``-k``, every ``--param``, ``--seed``, ``--hierarchy``, ``--strata``,
``--block-size``, ``--engine``/``--scheduler``/``--workers`` when not the defaults). Names
holding a comma are written with ``\\,``. The text is quoted for a POSIX shell
(:func:`shlex.join`). Parsed by the command line, it gives the same :class:`RunSpec` and the same
roles, except what the command line cannot say: the kind of a confidential column (it is given
as a plain ``--confidential``); :func:`command_for_run` lists such differences in ``caveats``.

A saved project replays without retyping anything: ``microgui protect --project FILE -o OUT``
(``--run N``, ``--input NEW``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from microgui.core.release.formats import CsvOptions
from microgui.core.release.order import RecordOrder
from microgui.core.runs.spec import RunSpec
from microgui.core.table.roles import AttributeKind, AttributeRole, RoleMap

__all__ = ["Command", "command_for_plan", "command_for_run"]


@dataclass(frozen=True)
class Command:
    """The arguments (without the program name), the shell text, and what it cannot carry."""

    args: tuple[str, ...]
    caveats: tuple[str, ...]

    @property
    def text(self) -> str:
        return shlex.join(["microgui", *self.args])


def _names(names: list[str]) -> str:
    return ",".join(n.replace(",", "\\,") for n in names)


def command_for_run(
    data_path: str | Path,
    roles: RoleMap,
    spec: RunSpec,
    output: str | Path = "protected.csv",
    *,
    csv_options: CsvOptions | None = None,
    pseudonymize: Sequence[str] = (),
    key_path: str | Path | None = None,
    order: RecordOrder | None = None,
) -> Command:
    """``microgui protect`` giving ``spec`` on the table at ``data_path`` tagged ``roles``; the
    app's export options too (``csv_options`` when not the default, ``pseudonymize`` and
    ``key_path``: ``--csv-sep/--csv-decimal/--csv-encoding``, ``--pseudonymize``,
    ``--pseudonym-key``; ``order``: ``--keep-order``, or ``--order-seed N`` when the user gave
    the order's seed, issue 31)."""
    args: list[str] = ["protect", str(data_path), "-o", str(output)]
    caveats: list[str] = []
    qi = [c for c in roles if roles[c].role is AttributeRole.QUASI_IDENTIFIER]
    args += ["--qi", _names(qi)]
    nominal = [c for c in qi if roles[c].kind is AttributeKind.NOMINAL]
    if nominal:
        args += ["--nominal", _names(nominal)]
    for c in qi:
        spec_c = roles[c]
        if spec_c.kind is AttributeKind.ORDINAL:
            name = c.replace("=", "\\=")
            if spec_c.order:
                categories = "<".join(v.replace("<", "\\<") for v in spec_c.order)
                args += ["--ordinal", f"{name}={categories}"]
            else:
                args += ["--ordinal", name]
    missing = [c for c in qi if roles[c].missing_as_category]
    if missing:
        args += ["--missing-as-category", _names(missing)]
    identifiers = [c for c in roles if roles[c].role is AttributeRole.IDENTIFIER]
    if identifiers:
        args += ["--identifiers", _names(identifiers)]
    confidential = [c for c in roles if roles[c].role is AttributeRole.CONFIDENTIAL]
    if confidential:
        args += ["--confidential", _names(confidential)]
        kinds = [c for c in confidential if roles[c].kind is not AttributeKind.CONTINUOUS]
        if kinds:
            caveats.append(
                "the command line reads the kind of a confidential column from its values: "
                + ", ".join(f"{c!r} ({roles[c].kind.value})" for c in kinds)
            )
    weight = roles.weight
    if weight is not None:
        args += ["--weight", weight]
    household = roles.household
    if household is not None:
        args += ["--household", household]
    args += ["--method", spec.method, "-k", str(spec.k)]
    for name, value in spec.params:
        args += ["--param", f"{name}={_value(value)}"]
    if spec.seed is not None:
        args += ["--seed", str(spec.seed)]
    for column, path in spec.hierarchies:
        args += ["--hierarchy", f"{column}={path}"]
    if spec.strata:
        args += ["--strata", _names(list(spec.strata))]
    if spec.block_size is not None:
        args += ["--block-size", str(spec.block_size)]
    if spec.engine != "local":
        args += ["--engine", spec.engine]
    if spec.scheduler:
        args += ["--scheduler", spec.scheduler]
    if spec.workers is not None:
        args += ["--workers", str(spec.workers)]
    if csv_options is not None and not csv_options.is_default:
        sep = "tab" if csv_options.sep == "\t" else csv_options.sep
        args += ["--csv-sep", sep, "--csv-decimal", csv_options.decimal]
        args += ["--csv-encoding", csv_options.encoding]
    if pseudonymize:
        args += ["--pseudonymize", _names(list(pseudonymize))]
        if key_path is not None:
            args += ["--pseudonym-key", str(key_path)]
    if order is not None and order.keep:
        args += ["--keep-order"]
    elif order is not None and order.seed is not None:
        args += ["--order-seed", str(order.seed)]
    return Command(tuple(args), tuple(caveats))


def command_for_plan(
    data_path: str | Path,
    roles: RoleMap,
    plan_path: str | Path,
    output: str | Path = "protected.csv",
    *,
    seed: int | None = None,
    csv_options: CsvOptions | None = None,
    pseudonymize: Sequence[str] = (),
    key_path: str | Path | None = None,
    order: RecordOrder | None = None,
) -> Command:
    """``microgui protect DATA --plan PLAN.json`` (issue 31): the roles and export options as
    :func:`command_for_run` writes them (the record order included), the plan by its file (the
    app saves the plan next to the project, so the command stays one readable line and the plan
    one reviewable file) and the seed the run used, so the copied command makes the same
    release (byte for byte with ``--keep-order`` or the same order seed)."""
    base = command_for_run(
        data_path, roles, RunSpec("plan", 2), output, csv_options=csv_options,
        pseudonymize=pseudonymize, key_path=key_path, order=order,
    )  # fmt: skip
    args = list(base.args)
    at = args.index("--method")
    del args[at : at + 4]  # --method plan -k 2: the plan gives the steps
    tail = ["--plan", str(plan_path)] + (["--seed", str(seed)] if seed is not None else [])
    args[at:at] = tail
    return Command(tuple(args), base.caveats)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
