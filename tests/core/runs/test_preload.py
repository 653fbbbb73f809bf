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


def test_the_protect_command_preloads_and_leaves_no_thread_behind(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``microgui protect`` starts the preload for its method and input before reading, and
    the thread has ended when the command returns, whether it succeeded or failed."""
    import threading

    import numpy as np
    import pandas as pd

    from microgui.cli import main
    from tests.cli_argv import protect_argv

    asked: list[tuple[str | None, int]] = []
    started = preload.preload_kernels

    def spy(method, size):  # type: ignore[no-untyped-def]
        asked.append((method, size))
        return started(method, size)

    monkeypatch.setattr(preload, "preload_kernels", spy)
    source = tmp_path / "in.csv"
    pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)), columns=["a", "b"]).to_csv(
        source, index=False
    )
    assert main(protect_argv(source, tmp_path / "out.csv", "--qi", "a,b", "-k", "3",
                             "--method", "mdav", "-q")) == 0  # fmt: skip
    assert asked == [("mdav", source.stat().st_size)]
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,x\n2,y\n3,z\n")
    assert main(protect_argv(bad, tmp_path / "out2.csv", "--qi", "a,b", "-k", "3",
                             "--method", "mdav", "-q")) != 0  # fmt: skip
    assert len(asked) == 2
    assert not [t for t in threading.enumerate() if t.name == "microgui-preload"]
