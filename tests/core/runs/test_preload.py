"""Loading a command's kernels while it reads (:mod:`microgui.core.runs.preload`, issue 33)."""

from __future__ import annotations

from microgui.core.runs import preload


def test_preload_loads_the_bound_kernel_and_the_pruned_mdav_kernels() -> None:
    from microgui.core.methods import mdav, univariate

    thread = preload.preload_kernels("mdav", preload.PRELOAD_PRUNED_MIN_BYTES)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert mdav._mdav_pruned_batch.signatures
    assert univariate._hm_batch.signatures


def test_preload_compiles_nothing_missing_from_the_cache(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A kernel the cache does not hold is left to the run (which says it compiles), never
    compiled silently beside the reading."""
    import numba

    from microgui.core.methods import univariate

    @numba.njit(cache=False)
    def never_compiled(x):  # type: ignore[no-untyped-def]
        return x.sum()

    def bound_kernel(values, k):  # type: ignore[no-untyped-def]
        return float(never_compiled(values))

    monkeypatch.setattr(univariate, "hansen_mukherjee_sse", bound_kernel)
    thread = preload.preload_kernels("mdav", 0)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert not never_compiled.signatures
