"""The child process's protocol (:mod:`microgui.core.runs.prepare`, issue 30)."""

from __future__ import annotations

import os
import sys

import pytest

from microgui.core.runs import prepare


def test_main_prints_the_total_then_each_method_mdav_first(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def make(name: str, module: str, fail: bool = False):  # type: ignore[no-untyped-def]
        return _recording(calls, name, module, fail)

    shared = make("shared", "x.other")
    methods = [
        ("a", shared),
        ("b", make("bad", "x.bad", fail=True)),
        ("mdav", make("mdav", "x.mdav")),
        ("c", shared),
        ("plain", None),
    ]
    monkeypatch.setattr(prepare, "preparation_list", lambda: methods)
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    assert prepare.main([]) == 0
    out = capsys.readouterr()
    lines = [
        line for line in out.out.splitlines() if line.split(" ")[0] in ("total", "ready", "failed")
    ]
    assert lines[0] == "total 5"
    assert lines[1:] == ["ready 1 plain", "ready 2 mdav", "ready 3 a", "failed 4 b", "ready 5 c"]
    assert calls == ["mdav", "shared", "bad"]  # a shared warm-up once
    assert "ValueError" in out.err


def test_the_list_is_the_registry_with_refinement_and_suppression() -> None:
    from microgui.core.methods import available_methods

    names = [name for name, _w in prepare.preparation_list()]
    assert names == [m.name for m in available_methods()] + ["refinement", "local suppression"]


def test_prepared_modules_table_is_the_preparation_lists_warm_up_modules() -> None:
    """The app reads which module each warm-up prepares from this table, not by importing
    every method's module in its GUI thread (issue 30): it must say what the list does."""
    from microgui.core.methods import BUILT_IN

    built_in = {*BUILT_IN, "refinement", "local suppression"}  # the rest: plug-ins' methods
    listed = {
        name: (w.__module__ if w is not None else None)
        for name, w in prepare.preparation_list()
        if name in built_in
    }
    assert listed == prepare.PREPARED_MODULES


def test_methods_asked_first_come_first_then_the_child_lowers_itself(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 (session 43): a run waiting for its kernels has the child started with
    ``--first`` (tab-separated names): those first, at normal priority, then "relaxed"."""
    calls: list[str] = []
    lowered: list[object] = []

    def make(name: str, module: str):  # type: ignore[no-untyped-def]
        return _recording(calls, name, module)

    methods = [
        ("a", make("a", "x.a")),
        ("mdav", make("mdav", "x.mdav")),
        ("lower bound", make("bound", "x.univariate")),
        ("local suppression", make("suppression", "x.local_suppression")),
    ]
    monkeypatch.setattr(prepare, "preparation_list", lambda: methods)
    monkeypatch.setattr(prepare, "lower_priority", lambda *a: lowered.append(a))
    assert prepare.main(["--first", "local suppression\ta"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert calls == ["suppression", "a", "bound", "mdav"]
    assert lines.index("relaxed") == lines.index("ready 2 a") + 1 and len(lowered) == 1


def test_a_warm_up_runs_without_garbage_collections_and_collects_after(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 30, session 44: the collector's passes made MDAV's first warm-up ~1.3 s slower in the
    child (14.0-14.6 s against 12.7-13.0 s idle); the child turns it off for each warm-up, back on
    after, also when the warm-up fails."""
    import gc

    seen: list[bool] = []
    collected: list[int] = []

    def warm_up() -> float:
        seen.append(gc.isenabled())
        return 0.0

    def failing() -> float:
        seen.append(gc.isenabled())
        raise RuntimeError("no")

    failing.__module__ = "x.other"
    monkeypatch.setattr(prepare, "preparation_list", lambda: [("a", warm_up), ("b", failing)])
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    real_collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or real_collect(*a))
    assert gc.isenabled()
    assert prepare.main([]) == 0
    assert seen == [False, False]
    assert gc.isenabled() and len(collected) == 2


def _recording(calls: list[str], name: str, module: str, fail: bool = False):  # type: ignore[no-untyped-def]
    def warm_up() -> float:
        calls.append(name)
        if fail:
            raise ValueError("no")
        return 0.0

    warm_up.__module__ = module
    return warm_up


class _FakeApart(prepare.Apart):
    """An :class:`~prepare.Apart` that 'runs' for ``checks`` looks, then went through."""

    def __init__(self, warm_up, checks: int, ok: bool, log: list[str]) -> None:  # type: ignore[no-untyped-def]
        super().__init__(-1, warm_up)
        self.checks, self.result, self.log = checks, ok, log

    def running(self) -> bool:
        self.checks -= 1
        return self.checks >= 0

    def wait(self) -> bool:
        self.log.append("waited")
        self.ok = self.result
        return self.result

    def set_priority(self, niceness: int) -> None:
        self.log.append(f"nice {niceness}")


def test_the_lower_bound_compiles_apart_and_is_loaded_last(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 30, session 45: the lower bound's kernels compile in a forked process while this one
    compiles MDAV's (they ran one after the other: the app's first run waited for both); this
    process takes the lower bound's method after the fork ended, loading what it saved."""
    calls: list[str] = []
    bound = _recording(calls, "bound", "x.univariate")
    methods = [
        ("a", _recording(calls, "a", "x.a")),
        ("mdav", _recording(calls, "mdav", "x.mdav")),
        ("optimal-univariate", bound),
    ]
    made: list[_FakeApart] = []

    def apart(warm_up):  # type: ignore[no-untyped-def]
        made.append(_FakeApart(warm_up, checks=2, ok=True, log=calls))
        return made[-1]

    monkeypatch.setattr(prepare, "preparation_list", lambda: methods)
    monkeypatch.setattr(prepare, "_lower_bound", lambda: bound)
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    assert prepare.main([], apart=apart) == 0
    assert len(made) == 1 and made[0].warm_up is bound
    # apart while it runs (two looks): MDAV's and a's first, then the bound's, after the wait
    assert calls == ["mdav", "a", "waited", "bound"]
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ready")]
    assert lines == ["ready 1 mdav", "ready 2 a", "ready 3 optimal-univariate"]


def test_a_lower_bound_that_failed_apart_compiles_here(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    bound = _recording(calls, "bound", "x.univariate")
    methods = [("optimal-univariate", bound), ("mdav", _recording(calls, "mdav", "x.mdav"))]
    monkeypatch.setattr(prepare, "preparation_list", lambda: methods)
    monkeypatch.setattr(prepare, "_lower_bound", lambda: bound)
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    apart = lambda w: _FakeApart(w, checks=0, ok=False, log=calls)  # noqa: E731
    assert prepare.main([], apart=apart) == 0
    assert calls == ["waited", "bound", "mdav"]  # ended: taken in order, compiled here
    assert "ready 1 optimal-univariate" in capsys.readouterr().out


def test_the_process_apart_follows_the_childs_priority(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The app raises the child's priority when a run waits (a ``first`` line) and the child
    lowers itself after: the forked process with it (it is a process of its own)."""
    log: list[str] = []
    requests = prepare._Requests([])
    requests.apart.append(_FakeApart(lambda: 0.0, checks=9, ok=True, log=log))
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: log.append("lowered"))
    monkeypatch.setattr(prepare.sys, "stdin", iter(["first mdav\toptimal-univariate\n"]))
    requests.read()
    assert log == ["nice 0"] and not requests.relaxed
    requests.relax()
    assert log == ["nice 0", "lowered", "nice 19"]


def test_the_lean_start_compiles_mdav_before_importing_every_method(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """At start-up the child compiles MDAV's kernels (the proposed run's) before it imports the
    other methods' modules; ``total`` comes first, counted from the registry's names, and again
    when the list holds another number (a plug-in that did not load)."""
    calls: list[str] = []
    mdav = _recording(calls, "mdav", "x.mdav")
    bound = _recording(calls, "bound", "x.univariate")
    methods = [("a", _recording(calls, "a", "x.a")), ("mdav", mdav), ("lower", bound)]

    def listed():  # type: ignore[no-untyped-def]
        calls.append("list")
        return methods

    monkeypatch.setattr(prepare, "preparation_list", listed)
    monkeypatch.setattr(prepare, "_lower_bound", lambda: bound)
    monkeypatch.setattr(prepare, "_mdav", lambda: ("mdav", mdav))
    monkeypatch.setattr(prepare, "_method_count", lambda: 4)
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    assert prepare.main([], lean=True) == 0
    assert calls == ["bound", "mdav", "list", "a"]  # each warm-up once
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "total 4" and "total 3" in lines
    assert lines.index("started mdav") < lines.index("total 3")
    assert [line for line in lines if line.startswith("ready")] == [
        "ready 1 lower",
        "ready 2 mdav",
        "ready 3 a",
    ]


def test_asked_methods_first_skip_the_lean_start(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    mdav = _recording(calls, "mdav", "x.mdav")
    methods = [("a", _recording(calls, "a", "x.a")), ("mdav", mdav)]
    monkeypatch.setattr(prepare, "preparation_list", lambda: methods)
    monkeypatch.setattr(prepare, "_mdav", lambda: ("mdav", mdav))
    monkeypatch.setattr(prepare, "_method_count", lambda: 2)
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    assert prepare.main(["--first", "a"], lean=True) == 0
    assert calls == ["a", "mdav"]


def test_the_method_count_is_the_lists_length() -> None:
    assert prepare._method_count() == len(prepare.preparation_list())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork is taken on Linux only")
def test_a_forked_warm_up_prints_on_the_same_stdout_and_says_whether_it_went_through(capfd) -> None:  # type: ignore[no-untyped-def]
    def good() -> float:
        print("saved /x/good.nbi", flush=True)
        return 0.0

    def bad() -> float:
        raise RuntimeError("no")

    ok, failing = prepare.forked(good), prepare.forked(bad)
    assert ok is not None and failing is not None and ok.pid != os.getpid()
    assert ok.wait() is True and failing.wait() is False
    assert not ok.running() and not failing.running()
    assert capfd.readouterr().out.splitlines() == ["saved /x/good.nbi"]


def test_each_line_of_the_protocol_is_one_write(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Two processes (the child and the one compiling apart) share the pipe: a line written in
    two pieces (``print`` does, unbuffered) came out as "compiledcompiled" (session 45)."""
    writes: list[str] = []

    class Out:
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(prepare, "preparation_list", lambda: [("a", None), ("b", None)])
    monkeypatch.setattr(prepare, "lower_priority", lambda *_a: None)
    monkeypatch.setattr(prepare.sys, "stdout", Out())
    assert prepare.main([]) == 0
    assert writes == ["total 2\n", "ready 1 a\n", "ready 2 b\n"]
