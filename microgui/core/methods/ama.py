"""AMA: approximate microaggregation on the key attributes of the best dependency tree.

Sun, Wang, Li & Zhang, ``000_d23cf301593eeda4.txt`` §3, Algorithms 1 and 2 (the paper's §4.2 calls
it "MA", the name it also gives the MDAV baseline):

1. Algorithm 1: the dependency matrix of the quasi-identifiers under the distance
   MI(A, B) = H(A|B) + H(B|A), its minimum spanning tree by Kruskal, and the key attributes by
   vertex degree (Definition 5). All of it, with the choices made where the paper is silent
   (continuous attributes in equal-frequency bins, constant attributes, ties, 1-3 attributes), is
   in :mod:`microgui.core.table.dependency`.
2. Algorithm 2 steps 2-7: the records projected on the key attributes are partitioned by MDAV.
   This is the project's MDAV-generic (:func:`microgui.core.methods.mdav.mdav_generic`, ``003``
   Algorithm 5.1): z-scores (standardized over all records) and the Euclidean distance for
   continuous key attributes, the ordinal rank distance and the nominal equality distance
   (``003`` §5.3-5.4) for categorical ones; with only continuous key attributes it is MDAV.
   Algorithm 2 as printed forms pairs of groups while at least 2k records remain and adds fewer
   than k leftovers to the nearest group (step 7; its step 6 reads "between k and k-1", meaning
   k..2k-1). MDAV-generic's 3k rule instead stops pairing below 3k records, so no record is ever
   left over and every group has k..2k-1 records; on the other steps the two agree.
3. Algorithm 2 step 8: every quasi-identifier of a record (key attributes or not) is replaced by
   its group's aggregate by the shared step (:mod:`microgui.core.table.aggregate`): the mean for
   continuous attributes, the median (or convex median) for ordinal ones and the mode for nominal
   ones. The groups are what makes the release k-anonymous; only the choice of groups looks at
   the key attributes alone.

When every quasi-identifier is constant there is no key attribute; the records are then grouped by
MDAV on all of them (all distances 0, so groups follow row order) and the release equals the input.
"""

from __future__ import annotations

import numpy as np

from microgui.core.methods.artifacts import DEPENDENCY_TREE
from microgui.core.methods.base import Method, MethodInput, MethodOutput, ParamSpec, register
from microgui.core.methods.mdav import mdav_generic, warm_up
from microgui.core.progress import ProgressFn, no_progress, sub_progress
from microgui.core.table.dataset import QIMatrix
from microgui.core.table.dependency import DEFAULT_BINS, DependencyTree, dependency_tree_of_qi
from microgui.core.table.roles import AttributeKind

__all__ = ["ama_partition", "key_attribute_blocks", "AMA"]

#: Share of a run's progress given to the dependency tree (MDAV takes the rest; it dominates).
_TREE_SHARE = 0.05


def key_attribute_blocks(
    qi: QIMatrix, attributes: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The MDAV-generic blocks (continuous z-scores, ordinal ranks and sizes, nominal codes) of
    ``attributes``, each block in the order of :class:`QIMatrix`."""
    chosen = set(attributes)
    cont = [j for j, c in enumerate(qi.continuous_names) if c in chosen]
    ords = [j for j, c in enumerate(qi.ordinal_names) if c in chosen]
    noms = [j for j, c in enumerate(qi.nominal_names) if c in chosen]
    return (
        qi.continuous[:, cont],
        qi.ordinal[:, ords],
        qi.ordinal_sizes[ords],
        qi.nominal[:, noms],
    )


def ama_partition(
    qi: QIMatrix,
    k: int,
    *,
    attributes: list[str] | None = None,
    bins: int = DEFAULT_BINS,
    ordinal_average: str = "median",
    progress: ProgressFn = no_progress,
) -> tuple[np.ndarray, DependencyTree]:
    """AMA partition (``000`` Algorithms 1-2) of the quasi-identifiers in ``qi``.

    Parameters
    ----------
    qi
        Quasi-identifiers from :func:`~microgui.core.table.dataset.prepare_qi`.
    k
        Minimum group size, 2 <= k <= n.
    attributes
        Order of the quasi-identifiers for the matrix and the tie rules (default: ``qi.names``;
        a run passes the table's quasi-identifier order).
    bins
        Equal-frequency bins of a continuous attribute for the entropies (>= 2).
    ordinal_average
        Average record of ordinal key attributes inside MDAV: ``"median"`` or ``"convex-median"``.
    progress
        Progress function; a :class:`~microgui.core.progress.RunCancelled` it raises propagates.

    Returns
    -------
    (labels, tree)
        int64 group label per record (k..2k-1 records per group, row order kept) and the
        :class:`~microgui.core.table.dependency.DependencyTree` whose key attributes were used.
    """
    names = list(attributes) if attributes is not None else list(qi.names)
    tree = dependency_tree_of_qi(
        qi, names, bins=bins, progress=sub_progress(progress, 0.0, _TREE_SHARE)
    )
    keys = tree.key_attributes or names
    cont, ords, sizes, noms = key_attribute_blocks(qi, keys)
    labels = mdav_generic(
        cont,
        ords,
        sizes,
        noms,
        k,
        ordinal_average=ordinal_average,
        progress=sub_progress(progress, _TREE_SHARE, 1.0),
    )
    return labels, tree


def _run_ama(inp: MethodInput) -> MethodOutput:
    labels, tree = ama_partition(
        inp.qi,
        inp.k,
        attributes=inp.dataset.roles.quasi_identifiers,
        bins=int(inp.params.get("bins", DEFAULT_BINS)),
        ordinal_average=str(inp.params.get("ordinal_average", "median")),
        progress=inp.progress,
    )
    json_tree = tree.to_json()
    return MethodOutput(
        labels=labels,
        extra={
            "key_attributes": json_tree["key_attributes"],
            "dependency_matrix": json_tree["matrix"],
            "tree_edges": json_tree["edges"],
        },
        artifacts=DEPENDENCY_TREE.entry(tree),
    )


AMA = register(
    Method(
        name="ama",
        title="AMA (approximate microaggregation)",
        summary="MDAV on the key attributes of the best dependency tree of the quasi-identifiers "
        "(000 §3, Algorithms 1-2)",
        description=(
            "Measures how strongly each pair of quasi-identifiers depends on each other with the "
            "entropy distance H(A|B) + H(B|A) (the paper's MI(A,B), which is not mutual "
            "information; continuous attributes in equal-frequency "
            "bins), links them by the minimum spanning tree of those distances (the best dependency "
            "tree) and takes as key attributes the most connected ones, whose degrees cover the "
            "number of attributes (Sun et al. 2012). Records are grouped by MDAV on the key "
            "attributes only, usually half of the quasi-identifiers or fewer, which is faster on "
            "wide tables; every quasi-identifier is then replaced by its group's mean, median or "
            "mode, so the release is k-anonymous. Costs a little more information loss than MDAV "
            "on all attributes."
        ),
        citation="000_d23cf301593eeda4.txt §3, Algorithms 1–2",
        complexity="O(n·d²) for the dependency matrix, then MDAV on the key attributes: O(n²/k · d_key)",
        bench_sizes=(10_000, 50_000),
        warm_up=warm_up,  # mdav's kernels
        artifacts=(DEPENDENCY_TREE,),
        kinds=frozenset({AttributeKind.CONTINUOUS, AttributeKind.ORDINAL, AttributeKind.NOMINAL}),
        run=_run_ama,
        params=(
            ParamSpec(
                "bins",
                int,
                DEFAULT_BINS,
                "Equal-frequency bins of each continuous quasi-identifier when computing the "
                "entropies of the dependency tree (ordinal and nominal values are categories).",
                minimum=2,
            ),
        ),
    )
)
