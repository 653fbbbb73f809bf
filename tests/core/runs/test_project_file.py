"""Project files (issue 7): validated JSON with schema_version, atomic, never pickle; autosave."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from microgui.core.errors import ExportRefused, InvalidInput
from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import (
    SCHEMA_VERSION,
    Project,
    autosave_path,
    clear_autosave,
    export_record,
    last_export_order,
    load_project,
    read_autosave,
    save_project,
    write_autosave,
)
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

DATA = Path(__file__).resolve().parents[1] / "data"


def _project(data_path: str | None = None) -> Project:
    roles = RoleMap(
        (
            ("id", ColumnSpec(AttributeRole.IDENTIFIER, AttributeKind.NOMINAL)),
            ("age", ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)),
            (
                "edu",
                ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.ORDINAL, ("lo", "hi")),
            ),
        )
    )
    runs = (
        RunSpec.make("mdav", 3, seed=1),
        RunSpec.make("mdav-generic", 5, {"rescale_variance": True}, seed=2),
    )
    return Project(data_path, ("id", "age", "edu"), roles, runs, (0, 1), "a note")


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    data = tmp_path / "people.csv"
    data.write_text("id,age,edu\n", encoding="utf-8")
    project = _project(str(data))
    path = tmp_path / "work.microgui.json"
    save_project(project, path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["schema_version"] == SCHEMA_VERSION
    assert saved["data"]["path"] == "people.csv"  # relative to the project's folder
    loaded = load_project(path)
    assert loaded.roles == project.roles
    assert loaded.runs == project.runs
    assert loaded.comparison == (0, 1)
    assert loaded.notes == "a note"
    assert loaded.resolved_data_path(path.parent) == data
    assert not list(tmp_path.glob("*.tmp*"))  # nothing left behind


def test_run_exports_and_the_shown_run_round_trip(tmp_path: Path) -> None:
    """Issue 30: each run's exports (with the seed of their record order) and the run shown
    are kept; a file without them loads with none (the last run shown)."""
    data = tmp_path / "people.csv"
    data.write_text("id,age,edu\n", encoding="utf-8")
    exports = (
        (export_record("a.csv", "2026-11-29T07:00:00", None),),
        (
            export_record("b.csv", "2026-11-29T07:01:00", 2**64 - 1),
            export_record("c.sav", "2026-11-29T07:02:00", 7),
        ),
    )
    project = replace(_project(str(data)), run_exports=exports, shown_run=1)
    path = tmp_path / "work.microgui.json"
    save_project(project, path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["shown_run"] == 1
    assert saved["runs"][1]["exports"][1] == {
        "file": "c.sav", "exported": "2026-11-29T07:02:00", "order_seed": 7
    }  # fmt: skip
    loaded = load_project(path)
    assert loaded.run_exports == exports and loaded.shown_run == 1
    assert last_export_order(loaded.exports_of(1)) == (True, None)
    assert last_export_order(loaded.exports_of(2)) == (False, 7)
    assert loaded.exports_of(3) == () and last_export_order(()) is None
    plain = load_project(DATA / "project_v2.json")
    assert plain.run_exports == () and plain.shown_run is None


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(shown_run=2), r"'shown_run' 2 is not one of"),
        (lambda d: d.update(shown_run=True), r"'shown_run' .* is not one of"),
        (lambda d: d["runs"][0].update(exports={}), r"run 0: 'exports' must be a list"),
        (lambda d: d["runs"][0].update(exports=[{"file": "a.csv"}]), r"needs its 'file' name"),
        (
            lambda d: d["runs"][0].update(
                exports=[{"file": "a.csv", "exported": "2026-11-29T07:00:00"}]
            ),
            r"needs an 'order_seed' or",
        ),
        (
            lambda d: d["runs"][0].update(
                exports=[{"file": "a", "exported": "2026-11-29", "order_seed": -1}]
            ),
            r"'order_seed' -1 must be a whole number",
        ),
        (
            lambda d: d["runs"][0].update(
                exports=[{"file": "a", "exported": "2026-11-29", "order": "input", "x": 1}]
            ),
            r"unknown field 'x'",
        ),
    ],
)
def test_bad_exports_or_shown_run_are_named(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((DATA / "project_v2.json").read_text(encoding="utf-8"))
    mutate(data)
    with pytest.raises(InvalidInput, match=message):
        load_project(_write(tmp_path, json.dumps(data)))


def test_every_past_schema_still_loads() -> None:
    for fixture in sorted(DATA.glob("project_v*.json")):
        project = load_project(fixture)
        assert project.roles["education"].order == ("low", "mid", "high")
        assert [s.k for s in project.runs] == [5, 10]
        assert project.runs[1].param_dict == {"rescale_variance": True}


def test_save_never_overwrites_the_data_file(tmp_path: Path) -> None:
    data = tmp_path / "people.csv"
    data.write_text("id,age,edu\n1,2,lo\n", encoding="utf-8")
    with pytest.raises(ExportRefused, match="input file"):
        save_project(_project(str(data)), data)
    assert data.read_text(encoding="utf-8") == "id,age,edu\n1,2,lo\n"


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "p.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(schema_version=99), r"schema 99.*update microgui"),
        (lambda d: d.pop("schema_version"), r"no valid 'schema_version'"),
        (lambda d: d.update(schema_version="1"), r"no valid 'schema_version'"),
        (lambda d: d["roles"]["age"].update(role="secret"), r"column 'age' has role 'secret'"),
        (lambda d: d["roles"]["age"].update(kind="real"), r"column 'age' has kind 'real'"),
        (lambda d: d["roles"].update(ghost={"role": "identifier", "kind": "nominal"}), "'ghost'"),
        (lambda d: d.update(comparison=[0, 5]), r"names run 5"),
        (lambda d: d["runs"][1].pop("method"), r"run 1 has no method"),
        (lambda d: d["runs"][0].update(k="five"), r"run 0 \(mdav-generic\) has k = 'five'"),
        (lambda d: d.update(runs={}), r"'runs' must be a list"),
        (lambda d: d.pop("data"), r"'data' must be an object, but it is missing"),
        (
            lambda d: d["roles"]["education"].update(order=["low", "low"]),
            r"'education' repeats a category",
        ),
    ],
)
def test_invalid_content_is_named(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((DATA / "project_v1.json").read_text(encoding="utf-8"))
    mutate(data)
    with pytest.raises(InvalidInput, match=message):
        load_project(_write(tmp_path, json.dumps(data)))


def test_truncated_empty_binary_and_missing_files(tmp_path: Path) -> None:
    text = (DATA / "project_v1.json").read_text(encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"'p.json' is not valid JSON at line \d+.*truncated"):
        load_project(_write(tmp_path, text[: len(text) // 2]))
    with pytest.raises(InvalidInput, match="is empty"):
        load_project(_write(tmp_path, ""))
    with pytest.raises(InvalidInput, match="not UTF-8"):
        load_project(_write(tmp_path, b"\x80\x81\x00\xff" * 10))
    with pytest.raises(InvalidInput, match="cannot read project file 'nope.json'"):
        load_project(tmp_path / "nope.json")
    with pytest.raises(InvalidInput, match="does not hold a JSON object"):
        load_project(_write(tmp_path, "[1, 2]"))


def test_a_pickle_is_refused_not_run(tmp_path: Path) -> None:
    import pickle

    with pytest.raises(InvalidInput):
        load_project(_write(tmp_path, pickle.dumps({"schema_version": 1})))


def test_autosave_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MICROGUI_STATE_DIR", str(tmp_path / "state"))
    assert read_autosave() is None
    path = write_autosave(_project("/data/people.csv"))
    assert path == autosave_path() and path.is_file()
    restored = read_autosave()
    assert restored is not None and restored.runs == _project().runs
    assert restored.data_path == "/data/people.csv"
    clear_autosave()
    assert read_autosave() is None
    clear_autosave()  # twice is fine
    # a damaged autosave is set aside once (said), not shown as an error at every start
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"schema_version": 1, "da', encoding="utf-8")
    with pytest.raises(InvalidInput, match="set aside"):
        read_autosave()
    assert read_autosave() is None and not path.exists()
