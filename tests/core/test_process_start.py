"""How our own processes start (microgui.core.process_start): one BLAS thread, and the modules
they never use registered lazily."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from microgui.core.process_start import BLAS_THREADS, UNUSED


def _python(code: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=300, cwd=cwd, check=False,
        env={**environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_scipy_import_no_longer_runs_numpy_f2py():
    out = _python(
        """
        import sys
        from microgui.core.process_start import defer_unused_modules
        print(defer_unused_modules())
        import scipy.linalg, numba  # what a run's kernels load
        print("numpy.f2py.crackfortran" in sys.modules)
        """
    )
    assert out.splitlines() == ["['numpy.f2py']", "False"]


def test_a_deferred_module_still_works_when_used():
    out = _python(
        """
        from microgui.core.process_start import defer_unused_modules
        defer_unused_modules()
        import scipy.linalg
        import numpy
        from numpy.f2py import crackfortran
        print(callable(numpy.f2py.run_main), crackfortran.__name__)
        """
    )
    assert out == "True numpy.f2py.crackfortran"


def test_already_imported_module_is_left_alone():
    out = _python(
        """
        import numpy.f2py
        from microgui.core.process_start import defer_unused_modules
        print(defer_unused_modules(), type(numpy.f2py).__name__)
        """
    )
    assert out == "[] module"


def test_protect_command_imports_no_unused_module(tmp_path):
    """The whole ``microgui protect`` process (the console script's path) never runs them."""
    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "".join(f"{i},{(i * 7) % 11}\n" for i in range(40)))
    out = _python(
        f"""
        import sys
        from microgui.cli import main
        sys.argv = ["microgui", "protect", {str(src)!r}, "-o", {str(tmp_path / "out.csv")!r},
                    "--qi", "a,b", "-k", "3", "--method", "mdav", "-q"]
        code = main()
        names = {[f"{p}.{c}" for p, c in UNUSED]!r}
        print(code, [n for n in names if type(sys.modules.get(n)).__name__ == "module"])
        import os
        print([os.environ.get(name) for name in {list(BLAS_THREADS)!r}])
        """
    )
    assert out.splitlines()[-2:] == ["0 []", "['1', '1']"]


@pytest.mark.parametrize(("parent", "child"), UNUSED)
def test_unused_modules_exist(parent, child):
    """A name that no longer exists would be skipped silently: the list must stay true."""
    import importlib.util

    assert importlib.util.find_spec(f"{parent}.{child}") is not None


def test_one_blas_thread_unless_the_user_says_otherwise():
    code = """
        import os
        from microgui.core.process_start import one_blas_thread
        print(sorted(one_blas_thread()), os.environ["OPENBLAS_NUM_THREADS"], os.environ["MKL_NUM_THREADS"])
        """
    assert _python(code) == "['MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'] 1 1"
    assert _python(code, env={"OPENBLAS_NUM_THREADS": "4"}) == "['MKL_NUM_THREADS'] 4 1"


def test_no_blas_setting_once_numpy_is_loaded():
    """Its library read the variables already: setting them would only misinform."""
    out = _python(
        """
        import os, numpy
        from microgui.core.process_start import one_blas_thread
        print(one_blas_thread(), os.environ.get("OPENBLAS_NUM_THREADS"))
        """
    )
    assert out == "[] None"
