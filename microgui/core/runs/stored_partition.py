"""A run's partition kept in its project file, and the run rebuilt from it (issue 30).

A project keeps each run's spec, report and measures; with its *partition* (a group label per
record) the run can be rebuilt as it was without running its method again: the release of a
microaggregation run is a function of the table, the labels and the aggregation parameters
(:func:`~microgui.core.table.aggregate.aggregate`, then the release's number cleaning, exactly as
:func:`~microgui.core.runs.protect.run_protection` makes it), and the report is the one kept.

Encoding (:func:`partition_json`): the labels in the smallest unsigned integer type that holds
them (uint8/16/32, little-endian), deflated (zlib) and base64-encoded, embedded in the project's
JSON beside the run. Embedded rather than a sidecar file so that a project stays one file the
user can move or mail; about 72 kB per run of Adult (30,162 records, ~6,000 groups: 2 bytes per
record, which deflate brings to ~1.8, base64 back up by 4/3). Labels are group numbers, not
values of the data: nothing of a record's content is stored. A run that left a spanning tree
(``mst``, ``mstk``: the MST view draws it) keeps its edges and cut flags the same way.

Two digests make a rebuilt run trustworthy: ``table_sha256``, the SHA-256 of the table's file as
read (:data:`~microgui.core.io.fingerprint.FINGERPRINT_ATTR`), checked before anything is
rebuilt, and ``release_sha256``, a digest of the released table (:func:`release_digest`),
checked after: a rebuild that does not give the very release the run gave (another table, a
method whose release is not a function of its groups, another version of the aggregation) is
refused with a reason, and the run is re-computed from its spec and seed instead, on demand.

Methods that publish values of their own rather than group aggregates (:data:`OWN_VALUES`:
``median``, ``hybrid``, ``individual-ranking``, ``dp-individual-ranking``) and plans of more
than one step are not rebuilt: they are re-computed on demand. ``mstk`` is rebuilt with its
hierarchies (:func:`~microgui.core.methods.mstk.mstk_release`): each class is published with the
lowest common generalization of its records' values, a function of the labels.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import weakref
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from microgui.core.errors import InvalidInput, MicroguiError
from microgui.core.io.fingerprint import FINGERPRINT_ATTR
from microgui.core.methods import get_method, resolve_params
from microgui.core.methods.artifacts import CLASSES, DEPENDENCY_TREE, SPANNING_TREE, SpanningTree
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.runs.analysis import RunOutcome
from microgui.core.runs.spec import MethodStep, RunResult, RunSpec
from microgui.core.table.dataset import Dataset, prepare_qi

__all__ = [
    "ENCODING",
    "OWN_VALUES",
    "StoredPartition",
    "partition_json",
    "release_digest",
    "table_digest",
    "decode_partition",
    "not_restorable",
    "restore_result",
    "restore_outcome",
]

#: The one encoding written (and read) today.
ENCODING: Final = "labels-zlib-base64/1"
#: Methods whose release holds values of their own, not a function of the groups alone.
OWN_VALUES: Final = frozenset({"median", "hybrid", "individual-ranking", "dp-individual-ranking"})
#: Fields of a partition block.
_KEYS: Final = frozenset(
    {"encoding", "records", "groups", "dtype", "labels", "table_sha256", "release_sha256", "tree"}
)
_DTYPES: Final = {"uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32}

#: partition_json of the last results encoded, by identity (a weak reference checks the object):
#: the worker encodes a run when it ends, and each save or autosave finds it here.
_ENCODED: dict[int, tuple[weakref.ref[RunResult], dict[str, Any]]] = {}
_ENCODED_KEPT: Final = 64


@dataclass(frozen=True)
class StoredPartition:
    """A decoded partition: the labels (int64, one per record), the release's digest and the
    spanning tree when the run left one."""

    labels: np.ndarray
    release_sha256: str
    tree: SpanningTree | None = None


def release_digest(protected: pd.DataFrame) -> str:
    """SHA-256 over a released table's column names, dtypes and every cell (pandas' stable
    per-row hash, index included): equal digests, equal releases. ~50 ms on Adult."""
    digest = hashlib.sha256()
    for name, dtype in protected.dtypes.items():
        digest.update(f"{name}\x00{dtype}\x00".encode())
    rows = pd.util.hash_pandas_object(protected, index=True).to_numpy()
    digest.update(np.ascontiguousarray(rows, dtype="<u8").tobytes())
    return digest.hexdigest()


def table_digest(dataset: Dataset) -> str | None:
    """The SHA-256 of the file the table was read from (None: not read from a file)."""
    found = dataset.frame.attrs.get(FINGERPRINT_ATTR)
    if isinstance(found, Mapping) and isinstance(found.get("sha256"), str):
        return str(found["sha256"])
    return None


def _little(name: str) -> np.dtype[Any]:
    return np.dtype(_DTYPES[name]).newbyteorder("<")


def _packed(array: np.ndarray) -> str:
    return base64.b64encode(zlib.compress(array.tobytes(), 9)).decode("ascii")


def partition_json(result: RunResult, dataset: Dataset) -> dict[str, Any]:
    """The JSON block a project keeps for ``result`` (computed from ``dataset``, the table the
    run was made from); memoized per result object (the app encodes each run in its worker as
    it ends, so a save finds it ready)."""
    key = id(result)
    hit = _ENCODED.get(key)
    if hit is not None and hit[0]() is result:
        return hit[1]
    labels = np.asarray(result.labels, dtype=np.int64)
    top = int(labels.max()) if len(labels) else 0
    name = "uint8" if top < 2**8 else "uint16" if top < 2**16 else "uint32"
    block: dict[str, Any] = {
        "encoding": ENCODING,
        "records": len(labels),
        "groups": top + 1 if len(labels) else 0,
        "dtype": name,
        "labels": _packed(labels.astype(_little(name))),
        "table_sha256": table_digest(dataset),
        "release_sha256": release_digest(result.protected),
    }
    tree = SPANNING_TREE.of(result.artifacts)
    if tree is not None:
        block["tree"] = {
            "edges": _packed(np.asarray(tree.edges, dtype="<u4")),
            "cut": _packed(np.packbits(np.asarray(tree.cut, dtype=bool))),
            "weights": _packed(np.asarray(tree.weights, dtype="<f8")),
        }
    _remember(result, block)
    return block


def _remember(result: RunResult, block: dict[str, Any]) -> None:
    while len(_ENCODED) >= _ENCODED_KEPT:
        _ENCODED.pop(next(iter(_ENCODED)))
    _ENCODED[id(result)] = (weakref.ref(result), block)


def _unpacked(text: object, dtype: Any, count: int, what: str) -> np.ndarray:
    """``count`` numbers of ``dtype`` from a base64 deflated string; :class:`InvalidInput`
    saying what is wrong (never more is inflated than ``count`` numbers need)."""
    if not isinstance(text, str):
        raise InvalidInput(f"its {what} are not an encoded string")
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidInput(f"its {what} are not valid base64") from None
    size = count * np.dtype(dtype).itemsize
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(packed, size + 1)
    except zlib.error:
        raise InvalidInput(f"its {what} cannot be inflated (damaged)") from None
    if len(raw) != size or inflate.unconsumed_tail or not inflate.eof:
        raise InvalidInput(f"its {what} hold {len(raw):,} bytes, not the {size:,} expected")
    return np.frombuffer(raw, dtype=dtype)


def decode_partition(block: object, dataset: Dataset) -> StoredPartition:
    """The partition a project kept for a run of ``dataset``, checked: a known encoding, one
    label per record of the table, labels 0..groups-1 each used, the table's file the same as
    when saved. :class:`InvalidInput` says why not (a one-line reason for the status bar)."""
    if not isinstance(block, Mapping):
        raise InvalidInput("its partition is not an object")
    extra = [k for k in block if k not in _KEYS]
    if extra:
        raise InvalidInput(f"its partition has an unknown field {str(extra[0])[:40]!r}")
    if block.get("encoding") != ENCODING:
        raise InvalidInput(
            f"its partition has an unknown encoding {str(block.get('encoding'))[:40]!r}"
        )
    n = dataset.n_records
    records, groups = block.get("records"), block.get("groups")
    if not isinstance(records, int) or isinstance(records, bool) or records != n:
        raise InvalidInput(f"its partition is for {records!r} records, the table has {n:,}")
    if not isinstance(groups, int) or isinstance(groups, bool) or not 0 < groups <= max(n, 1):
        raise InvalidInput(f"its partition has {groups!r} groups for {n:,} records")
    saved = block.get("table_sha256")
    now = table_digest(dataset)
    if saved is not None and now is not None and saved != now:
        raise InvalidInput("the table's file changed since the project was saved")
    name = block.get("dtype")
    if name not in _DTYPES:
        raise InvalidInput(f"its partition has an unknown label type {str(name)[:20]!r}")
    labels = _unpacked(block.get("labels"), _little(str(name)), n, "labels")
    labels = labels.astype(np.int64)
    if n and (int(labels.max()) != groups - 1 or np.bincount(labels).min() == 0):
        raise InvalidInput(f"its labels do not number {groups:,} groups 0..{groups - 1}")
    digest = block.get("release_sha256")
    if not isinstance(digest, str) or len(digest) != 64:
        raise InvalidInput("its partition has no release digest")
    tree = None
    if block.get("tree") is not None:
        tree = _tree(block["tree"], n)
    return StoredPartition(labels, digest, tree)


def _tree(value: object, n: int) -> SpanningTree:
    if not isinstance(value, Mapping):
        raise InvalidInput("its spanning tree is not an object")
    m = max(n - 1, 0)
    edges = _unpacked(value.get("edges"), "<u4", 2 * m, "tree edges").astype(np.int64)
    if m and int(edges.max()) >= n:
        raise InvalidInput("its spanning tree names a record the table does not have")
    bits = _unpacked(value.get("cut"), "u1", (m + 7) // 8, "tree cut flags")
    cut = np.unpackbits(bits)[:m].astype(bool)
    weights = _unpacked(value.get("weights"), "<f8", m, "tree weights").astype(np.float64)
    return SpanningTree(edges.reshape(m, 2), weights, cut)


def not_restorable(spec: RunSpec) -> str:
    """Why a run of ``spec`` cannot be rebuilt from its partition ("" when it can): a plan of
    several steps, or a method publishing values of its own (:data:`OWN_VALUES`)."""
    if spec.plan is not None:  # its release is not a function of its groups: re-computed
        return "a plan run is re-computed from its plan and seed"
    steps = spec.steps
    if len(steps) != 1 or not isinstance(steps[0], MethodStep):
        return "its plan has several steps"
    if spec.method in OWN_VALUES:
        return f"{spec.method} publishes values of its own, not a function of its groups"
    return ""


def restore_result(
    dataset: Dataset,
    spec: RunSpec,
    report: Mapping[str, Any],
    block: object,
    progress: ProgressFn = no_progress,
) -> RunResult:
    """The run of ``spec`` on ``dataset`` rebuilt from the partition a project kept (``block``)
    and its report, without running the method: the release aggregated from the labels as the
    run made it, verified against the release digest. :class:`InvalidInput` with the reason when
    it cannot be (the run is then re-computed from its spec and seed)."""
    from microgui.core.runs.protect import load_hierarchies, released_numbers
    from microgui.core.table.aggregate import aggregate

    why = not_restorable(spec)
    if why:
        raise InvalidInput(why)
    progress(0.0, "reading the kept partition")
    stored = decode_partition(block, dataset)
    method = get_method(spec.method)
    try:
        params = resolve_params(method, spec.param_dict)
        qi = prepare_qi(dataset)
        progress(0.3, "aggregating the kept groups")
        protected = aggregate(dataset, qi, stored.labels, params)
        artifacts: dict[str, Any] = {}
        if method.name == "mstk":
            from microgui.core.methods.mstk import mstk_release

            loaded = load_hierarchies(spec.steps[0], dataset)
            generalized, classes = mstk_release(dataset, qi, stored.labels, loaded)
            for col in generalized.columns:
                protected[col] = generalized[col].to_numpy()
            artifacts.update(CLASSES.entry(classes))
        protected, _rounding = released_numbers(protected, dataset, qi, params)
    except MicroguiError as exc:
        raise InvalidInput(f"it cannot be rebuilt from its partition ({exc})") from None
    progress(0.8, "checking the release")
    if release_digest(protected) != stored.release_sha256:
        raise InvalidInput("the release rebuilt from its partition differs from the one saved")
    if stored.tree is not None:
        artifacts.update(SPANNING_TREE.entry(stored.tree))
    if DEPENDENCY_TREE in method.artifacts:
        from microgui.core.table.dependency import DEFAULT_BINS, dependency_tree_of_qi

        bins = int(params.get("bins", DEFAULT_BINS))
        names = list(dataset.roles.quasi_identifiers)
        artifacts.update(DEPENDENCY_TREE.entry(dependency_tree_of_qi(qi, names, bins=bins)))
    progress(1.0, "done")
    result = RunResult(
        spec=spec,
        roles=dataset.roles,
        labels=stored.labels,
        protected=protected,
        report=dict(report),
        qi=qi,
        seconds=float(report.get("seconds") or 0.0),
        artifacts=artifacts,
    )
    if isinstance(block, Mapping):  # verified: a save writes it back as it was
        _remember(result, dict(block))
    return result


def restore_outcome(
    dataset: Dataset,
    spec: RunSpec,
    report: Mapping[str, Any],
    measures: Mapping[str, float | int | None],
    block: object,
    progress: ProgressFn = no_progress,
) -> RunOutcome:
    """A kept run as the app shows it (what :func:`~microgui.core.runs.analysis.analyse_run`
    returns), rebuilt from its partition with its kept measures: :func:`restore_result`, then
    the views' layouts. :class:`InvalidInput` with the reason when the run cannot be rebuilt."""
    from microgui.core.views.layout import dependency_tree_layout, mst_layout
    from microgui.core.views.moves import plot_projection
    from microgui.core.views.projection import all_category_transitions

    result = restore_result(dataset, spec, report, block, sub_progress(progress, 0.0, 0.6))
    progress(0.6, "projecting for the plot")
    projection = plot_projection(result)
    tree = DEPENDENCY_TREE.of(result.artifacts)
    layout = dependency_tree_layout(tree) if tree is not None else None
    mst = mst_layout(result)
    transitions = all_category_transitions(result)
    progress(1.0, "done")
    return RunOutcome(result, projection, layout, mst, dict(measures), "", transitions)
