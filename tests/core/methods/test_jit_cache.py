"""numba's cache is keyed on every kernel source (numba does not track callees in other files)."""

from __future__ import annotations

import re
from pathlib import Path

import numba
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
