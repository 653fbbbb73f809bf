"""The IL of every method on the reference sets (Census, Tarragona, EIA at k = 3, 4, 5, 10), read
with :mod:`microgui.reference_data` (``--reference``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from microgui.bench.data import SEED
from microgui.core.dataset import Dataset
from microgui.core.errors import MicroguiError
from microgui.core.methods import available_methods
from microgui.core.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from microgui.core.runs import RunSpec, run_protection
from microgui.reference_data import reference_sets, shared_data_dir

__all__ = ["REFERENCE_KS", "reference_table"]


REFERENCE_KS = (3, 4, 5, 10)


def reference_table(methods: Sequence[str] | None = None) -> str | None:
    """IL (%) of every continuous method on the reference sets at k = 3, 4, 5, 10."""
    root = shared_data_dir()
    if root is None:
        return None
    sets = reference_sets(root)
    names = [
        m.name
        for m in available_methods()
        if AttributeKind.CONTINUOUS in m.kinds
        and not m.needs_confidential
        and (methods is None or m.name in methods)
    ]
    header = ["method"] + [f"{s} k={k}" for s in sets for k in REFERENCE_KS]
    lines = [header]
    for name in names:
        row = [name]
        for frame in sets.values():
            spec = ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)
            dataset = Dataset(frame, RoleMap.from_dict({c: spec for c in frame.columns}))
            for k in REFERENCE_KS:
                try:
                    result = run_protection(dataset, RunSpec.make(name, k, seed=SEED))
                    il = result.information_loss
                    row.append("n/a" if il != il else f"{il:.4f}")  # NaN: generalized output
                except MicroguiError:
                    row.append("n/a")
        lines.append(row)
        print(f"  done: reference IL of {name}", file=sys.stderr, flush=True)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for i, line in enumerate(lines):
        out.append(
            "  ".join(
                c.ljust(w) if j == 0 else c.rjust(w)
                for j, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)
