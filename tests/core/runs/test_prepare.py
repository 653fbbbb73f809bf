"""The child process's protocol (:mod:`microgui.core.runs.prepare`, issue 30)."""

from __future__ import annotations

from microgui.core.runs import prepare


def test_main_prints_the_total_then_each_method_mdav_first(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def make(name: str, module: str, fail: bool = False):  # type: ignore[no-untyped-def]
        def warm_up() -> float:
            calls.append(name)
            if fail:
                raise ValueError("no")
            return 0.0

        warm_up.__module__ = module
        return warm_up

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


def test_methods_asked_first_come_first_then_the_child_lowers_itself(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 (session 43): a run waiting for its kernels has the child started with
    ``--first`` (tab-separated names): those first, at normal priority, then "relaxed"."""
    calls: list[str] = []
    lowered: list[object] = []

    def make(name: str, module: str):  # type: ignore[no-untyped-def]
        def warm_up() -> float:
            calls.append(name)
            return 0.0

        warm_up.__module__ = module
        return warm_up

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
