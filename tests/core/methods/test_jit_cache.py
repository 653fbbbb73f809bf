"""numba's cache is keyed on every kernel source (numba does not track callees in other files)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest

import microgui.core.methods  # noqa: F401  (configures the cache at import)
from microgui.core.methods import jit_cache
from microgui.core.methods.mdav import _mdav_batch


def test_cache_folder_is_configured_and_keyed_on_the_sources() -> None:
    folder = jit_cache.cache_folder()
    assert re.fullmatch(r"kernels-.+-[0-9a-f]{16}", folder.name)
    assert numba.config.CACHE_DIR == str(jit_cache.configure())
    assert jit_cache.source_hash() == jit_cache.source_hash()


def test_hash_changes_with_any_kernel_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    here = Path(jit_cache.__file__).resolve().parent
    for path in here.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(jit_cache, "__file__", str(tmp_path / "jit_cache.py"))
    before = jit_cache.source_hash()
    cbfs = tmp_path / "cbfs.py"
    cbfs.write_text(cbfs.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert jit_cache.source_hash() != before


def test_user_cache_dir_is_respected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert jit_cache.cache_folder().parent == tmp_path


def test_kernels_release_the_gil() -> None:
    # the GUI thread keeps running while a kernel computes in the worker thread
    assert _mdav_batch.targetoptions.get("nogil") is True


def test_numba_cache_index_is_written_under_a_file_lock(tmp_path: Path) -> None:
    """numba issue #4807: two processes saving one kernel's cache index at once can leave an
    index naming another signature's machine code (a crash at every later start). Each save
    and load of an index goes through a lock file beside it (jit_cache._lock_cache_files)."""
    import threading
    import time

    from numba.core.caching import IndexDataCacheFile

    from microgui.core.methods.jit_cache import file_lock

    assert getattr(IndexDataCacheFile, "_microgui_locked", False)
    cache = IndexDataCacheFile(str(tmp_path), "kernel-1", source_stamp=("stamp", 1))
    index = str(tmp_path / "kernel-1.nbi")
    saved = threading.Event()

    def save() -> None:
        cache.save(("sig",), b"machine code")
        saved.set()

    with file_lock(index + ".lock") as held:
        assert held
        writer = threading.Thread(target=save)
        writer.start()
        time.sleep(0.3)
        assert not saved.is_set()  # the save waits for the lock another writer holds
    writer.join(10)
    assert saved.is_set()
    assert cache.load(("sig",)) == b"machine code"


def test_file_lock_gives_up_without_stopping_the_run(tmp_path: Path) -> None:
    from microgui.core.methods.jit_cache import file_lock

    with file_lock(str(tmp_path / "missing-folder" / "x.lock")) as held:
        assert held is False  # cannot be created: the block still runs
    with file_lock(str(tmp_path / "y.lock")) as first:
        with file_lock(str(tmp_path / "y.lock"), seconds=0.1) as second:
            assert first and second is False


def _fresh_kernel() -> object:
    """A kernel never compiled before (no cache: each call of this makes a new one)."""

    def plus_one(x: float) -> float:
        return x + 1.0

    return numba.njit(cache=False)(plus_one)


def test_watching_compiles_reports_a_compile_in_this_thread_only() -> None:
    """Issue 30: a run says when it compiles; the hook sees the kernel's module and name, once
    per top-level compile, and not the compiles of another thread."""
    import threading

    seen: list[tuple[str, str, str]] = []
    kernel = _fresh_kernel()
    before = jit_cache.compile_seconds()
    with jit_cache.watching_compiles(
        lambda m, n: seen.append(("start", m, n)), lambda m, n: seen.append(("end", m, n))
    ):
        other = threading.Thread(target=lambda: _fresh_kernel()(1.0))  # type: ignore[operator]
        other.start()
        other.join()
        assert kernel(1.0) == 2.0  # type: ignore[operator]
        assert kernel(2.0) == 3.0  # type: ignore[operator]  # compiled: nothing more said
    assert seen == [("start", __name__, "plus_one"), ("end", __name__, "plus_one")]
    assert jit_cache.compile_seconds() > before
    _fresh_kernel()(1.0)  # type: ignore[operator]  # after the block: no hook called
    assert len(seen) == 2
    everywhere: list[str] = []
    with jit_cache.watching_compiles(lambda m, n: everywhere.append(n), every_thread=True):
        other = threading.Thread(target=lambda: _fresh_kernel()(1.0))  # type: ignore[operator]
        other.start()
        other.join()
    assert everywhere == ["plus_one"]  # a run's helper thread compiles: said too


def test_a_hook_that_raises_stops_the_compile_before_it_begins() -> None:
    """A preparation giving way to a run (or a cancelled run) raises from ``started``: the
    compile does not happen, the exception comes out of the call, and the kernel compiles
    normally at its next call."""

    class Stop(Exception):
        pass

    def refuse(_m: str, _n: str) -> None:
        raise Stop

    kernel = _fresh_kernel()
    with jit_cache.watching_compiles(refuse), pytest.raises(Stop):
        kernel(1.0)  # type: ignore[operator]
    assert not kernel.signatures  # type: ignore[attr-defined]
    ends: list[str] = []
    with jit_cache.watching_compiles(lambda m, n: None, lambda m, n: ends.append(n)):
        assert kernel(1.0) == 2.0  # type: ignore[operator]
    assert ends == ["plus_one"]  # the refused start left no stale nesting behind


# Two kernels that call helpers of the same qualified name and argument types but different
# bodies (a closure factory, as numba's own overloads are: np.sort and np.argsort share
# ``make_quicksort_impl.<locals>.run_quicksort``). The helper is big enough that LLVM keeps it
# out of line, so each kernel's cached object code calls the helper's symbol.
_TWO_KERNELS = """
import numpy as np
import numba
from microgui.core.methods import jit_cache


def _make(c):
    @numba.njit
    def helper(a):
        n = a.shape[0]
        out = a.copy()
        for i in range(1, n):
            v = out[i]
            j = i - 1
            while j >= 0 and out[j] > v:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = v
        s = 0
        for i in range(n):
            s += out[i] * (i + 1) + c
            if s % 7 == 3:
                s += c * 2
            elif s % 5 == 1:
                s -= i
        return s

    return helper


plus1 = _make(1)
plus100 = _make(100)


@jit_cache.njit
def f1(x):
    return plus1(np.arange(x, x + 5))


@jit_cache.njit
def f2(x):
    return plus100(np.arange(x, x + 5))
"""

_CALL = """
import sys
sys.path.insert(0, sys.argv[1])
import microgui.core.methods  # configures the cache first, as the package does
import twokernels
print(",".join(str(getattr(twokernels, name)(1)) for name in sys.argv[2:]))
"""


def test_kernels_cached_by_different_processes_do_not_swap_code(tmp_path: Path) -> None:
    """The kernel-cache poisoning of session 38 (``cannot reshape array of size 29 into shape
    (10,3)`` in ``dba._phase1_fast``): numba names each compiled function's machine-code symbol
    after its qualified name, its argument types and a per-process counter
    (``numba.core.bytecode.FunctionIdentity._unique_ids``, ``v<n>`` ABI tag). Two processes that
    each compile a kernel on a cache miss number their functions from the same start, so two
    different helpers with one qualified name (closures; numba's np.sort/np.argsort quicksorts)
    get one symbol; both go into the shared cache inside their callers' object code, with
    ``linkonce_odr`` linkage. A later process that loads both callers from the cache links
    every call to the first body loaded: wrong results or a crash (numba issues #10486, #10128).
    No lock can prevent this (the processes need not even overlap in time); each process must
    name its symbols apart (jit_cache._unique_symbols). Here: process A caches f1, process B
    caches f2, process C loads both."""
    import os
    import subprocess
    import sys

    (tmp_path / "twokernels.py").write_text(_TWO_KERNELS, encoding="utf-8")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def start(*names: str) -> subprocess.Popen[str]:
        cmd = [sys.executable, "-c", _CALL, str(tmp_path), *names]
        return subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def answer(process: subprocess.Popen[str]) -> tuple[int, str, str]:
        out, err = process.communicate(timeout=120)
        return process.returncode, out.strip(), err[-2000:]

    # processes A and B at once (a cold cache shared by test workers, the app and the CLI);
    # each compiles its kernel and gets the right answer
    a, b = start("f1"), start("f2")
    assert answer(a)[:2] == (0, "61")
    assert answer(b)[:2] == (0, "1155")
    # process C loads both kernels from the cache; before the fix it printed "61,61": f2 ran
    # f1's helper, loaded first under the same symbol
    code, out, err = answer(start("f1", "f2"))
    assert (code, out) == (0, "61,1155"), err


def _module_from(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_kernel_on_disk_but_not_loaded_is_not_said_to_compile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """After the app's preparation in a child process the kernels are in the on-disk cache and
    none is loaded in the app's process: the first run loads them, and its status must not say
    it compiles (issue 30: it did, from the kernel having no signature in this process)."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "prepared_kernel.py"
    source.write_text(
        "import numba\n\n\n@numba.njit(cache=True)\ndef add_one(x):\n    return x + 1\n",
        encoding="utf-8",
    )
    first = _module_from(source, "prepared_kernel_a")
    assert jit_cache.first_call_compiles(first.add_one)  # nowhere yet: a call compiles
    assert first.add_one(1) == 2  # compiled, and written to the cache
    assert not jit_cache.first_call_compiles(first.add_one)
    # the same kernel as a new process sees it: on disk, not loaded
    again = _module_from(source, "prepared_kernel_b")
    assert not again.add_one.signatures
    assert jit_cache.cached_on_disk(again.add_one)
    assert not jit_cache.first_call_compiles(again.add_one)
    assert jit_cache.first_call_compiles(again.add_one, _not_cached_kernel())


def _not_cached_kernel() -> Any:
    @numba.njit(cache=False)
    def twice(x: int) -> int:
        return 2 * x

    return twice


def test_mdav_says_compiling_only_when_a_first_call_may_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from microgui.core.methods import mdav

    rng = np.random.default_rng(0)
    data = rng.normal(size=(20, 2))
    for compiles in (False, True):
        statuses: list[str] = []
        monkeypatch.setattr(mdav, "first_call_compiles", lambda *_k, c=compiles: c)
        mdav.mdav(data, 3, progress=lambda _f, text="", seen=statuses: seen.append(text))
        said = any(text.startswith("compiling ") for text in statuses)
        assert said is compiles
