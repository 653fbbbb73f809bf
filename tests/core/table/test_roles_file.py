"""``--roles FILE`` (protect, evaluate, sweep): every column tagged by a roles file in the demo's
format, refused when it leaves a column out, names one the table lacks, or is given beside the
role options; the demo's file gives the app's run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from microgui.cli import main
from microgui.core.demo import demo_path, demo_roles_path
from microgui.core.errors import InvalidRoles
from microgui.core.table.roles import AttributeRole, roles_from_file

COLUMNS = ["id", "age", "income", "w"]


def _file(tmp_path: Path, columns: dict[str, object]) -> Path:
    path = tmp_path / "roles.json"
    path.write_text(json.dumps({"schema_version": 1, "columns": columns}))
    return path


def test_a_roles_file_tags_every_column(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        {
            "id": {"role": "identifier"},
            "age": {"role": "quasi-identifier", "kind": "continuous"},
            "income": {"role": "quasi-identifier", "kind": "ordinal", "order": ["lo", "hi"]},
            "w": {"role": "weight"},
        },
    )
    roles = roles_from_file(path, COLUMNS)
    assert roles.identifiers == ["id"] and roles.weight == "w"
    assert roles["income"].order == ("lo", "hi")
    assert roles["w"].role is AttributeRole.WEIGHT


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"id": {"role": "identifier"}, "age": {"role": "quasi-identifier"}}, "does not tag column 'income'"),
        ({c: {"role": "quasi-identifier"} for c in [*COLUMNS, "zip"]}, "tags 'zip', which is not a column"),
        ({**{c: {"role": "quasi-identifier"} for c in COLUMNS}, "age": {"role": "secret"}}, "'secret'"),
        ({c: {"role": "non-confidential"} for c in COLUMNS}, "tags no quasi-identifier"),
        ({**{c: {"role": "weight"} for c in COLUMNS}, "age": {"role": "quasi-identifier"}}, "survey weight"),
    ],
)  # fmt: skip
def test_a_roles_file_that_does_not_fit_is_refused(
    tmp_path: Path, columns: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidRoles, match=message):
        roles_from_file(_file(tmp_path, columns), COLUMNS)


def test_the_demo_roles_file_gives_the_apps_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo.csv"
    assert main(["protect", str(demo_path()), "--roles", str(demo_roles_path()), "--method",
                 "mdav-generic", "-k", "5", "-o", str(out), "--report",
                 str(tmp_path / "r.json")]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "note:" not in err  # every column tagged on purpose: no "looks identifying" note
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["weight"] == "survey_weight"
    assert len(report["quasi_identifiers"]) == 7
    assert main(["protect", str(demo_path()), "--roles", str(demo_roles_path()), "--qi", "age",
                 "--method", "mdav", "-k", "5", "-o", str(tmp_path / "x.csv")]) == 2  # fmt: skip
    assert "drop --qi" in capsys.readouterr().err


def test_a_roles_file_says_what_is_wrong_and_reads_like_the_options(tmp_path: Path) -> None:
    good = {"id": {"role": "identifier"}, "age": {"role": "quasi-identifier"},
            "income": {"role": "quasi-identifier"}, "w": {"role": "weight"}}  # fmt: skip
    path = tmp_path / "twice.json"
    path.write_text('{"columns": {"id": {"role": "identifier"}, "age": {"role": "quasi-identifier"},'
                    ' "income": {"role": "quasi-identifier"}, "w": {"role": "weight"},'
                    ' "age": {"role": "non-confidential"}}}')  # fmt: skip
    with pytest.raises(InvalidRoles, match="names 'age' twice"):
        roles_from_file(path, COLUMNS)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"columns": good}).encode())
    assert roles_from_file(bom, COLUMNS).weight == "w"  # Windows Notepad's byte-order mark
    import unicodedata

    named = {unicodedata.normalize("NFD", "âge"): {"role": "quasi-identifier"}}
    roles = roles_from_file(_file(tmp_path, named), ["âge"])  # as --qi matches a name
    assert roles.quasi_identifiers == ["âge"]
    for entry, message in (
        ({"role": "Quasi-Identifier"}, "has role 'Quasi-Identifier'; give one of"),
        ({"role": "quasi-identifier", "missing_as_category": "yes"}, "give true or false"),
        ({"role": "quasi-identifier", "order": ["a", "b"]}, 'give kind "ordinal"'),
    ):
        with pytest.raises(InvalidRoles, match=message):
            roles_from_file(_file(tmp_path, {**good, "age": entry}), COLUMNS)
    with pytest.raises(InvalidRoles, match="schema_version '1'"):
        path.write_text(json.dumps({"schema_version": "1", "columns": good}))
        roles_from_file(path, COLUMNS)
