"""Hierarchies everywhere (issue 13, item 4), the core and command-line side: which values of a
column a hierarchy misses (:func:`hierarchy_coverage`, what the app shows), ``sweep --hierarchy``
(given to the methods that generalize, never refused because other methods are in the sweep),
``evaluate --hierarchy`` agreeing with the run report, and project files keeping the attached
hierarchies with paths relative to the project, as the table's path."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from reference_sets import ADULT_DIR as ADULT

from microgui.cli import main
from microgui.core.errors import ExportRefused, InvalidInput, InvalidParameter
from microgui.core.io import read_table
from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import (
    SCHEMA_VERSION,
    Project,
    load_project,
    project_from_json,
    save_project,
)
from microgui.core.runs.sweep import SweepSpec, run_sweep
from microgui.core.table.dataset import Dataset
from microgui.core.table.hierarchy import Hierarchy, hierarchy_coverage, load_hierarchy
from microgui.core.table.roles import roles_from_lists

DATA = Path(__file__).resolve().parents[1] / "data"

EDUCATION = ["primary", "secondary", "vocational", "bachelor", "master", "phd"]
EDU_ROWS = "primary;basic;*\nsecondary;basic;*\nvocational;basic;*\nbachelor;higher;*\nmaster;higher;*\nphd;higher;*\n"  # fmt: skip
ROLES = ["--qi", "age,education,sex", "--nominal", "education,sex", "--identifiers", "id",
         "--confidential", "income"]  # fmt: skip


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A folder with a 90-record table and hierarchy files for education and age."""
    rng = np.random.default_rng(13)
    n = 90
    frame = pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "education": rng.choice(EDUCATION, n),
            "sex": rng.choice(["female", "male"], n),
            "income": np.round(rng.lognormal(10, 0.5, n), 2),
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "education.csv").write_text(EDU_ROWS)
    ages = [f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};{'<50' if a < 50 else '50+'};*" for a in range(100)]  # fmt: skip
    (tmp_path / "h" / "age.csv").write_text("\n".join(ages) + "\n")
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- hierarchy_coverage ---------------------------------------------------------------------
def test_coverage_counts_the_values_missing_from_a_hierarchy_most_frequent_first() -> None:
    h = Hierarchy.from_rows([("a", "x", "*"), ("b", "x", "*"), ("21", "y", "*")], "h.csv")
    values = pd.Series(["a", "q", "z", "q", None, "b", 21.0, "z", "z", np.nan], name="col")
    cov = hierarchy_coverage(h, values)
    assert cov.column == "col" and cov.hierarchy == "h.csv"
    assert cov.missing == ("z", "q")  # 21.0 matches '21' as a number, as encode() does
    assert cov.missing_rows == (3, 2)
    assert cov.blank_rows == 2
    assert cov.n_values == 5 and cov.n_rows == 10 and cov.unused == 0
    assert cov.where == "row 2, 3, 4 and 2 more"
    assert not cov.complete
    text = cov.summary()
    assert (
        "2 of 5 values of 'col' are not in hierarchy h.csv (5 rows: row 2, 3, 4 and 2 more)" in text
    )
    assert "'z' (3 rows), 'q' (2 rows)" in text and "a run refuses them" in text
    assert "2 row(s) have no value" in text


def test_coverage_agrees_with_what_a_run_refuses() -> None:
    h = Hierarchy.from_rows([("a", "*"), ("b", "*")], "h.csv")
    ok = hierarchy_coverage(h, pd.Series(["a", "a"]), "c")
    assert ok.complete and ok.unused == 1
    assert (
        ok.summary()
        == "all 1 values of 'c' are in hierarchy h.csv (1 hierarchy value(s) do not occur)"
    )
    h.encode(pd.Series(["a", "a"]), "c")
    bad = hierarchy_coverage(h, pd.Series(["a", "c"]), "c")
    assert bad.missing == ("c",)
    with pytest.raises(InvalidInput, match="'c'"):
        h.encode(pd.Series(["a", "c"]), "c")


def test_coverage_names_the_lines_of_a_file(study: Path) -> None:
    table = study / "people.csv"
    loaded = read_table(table)
    h = Hierarchy.from_rows([("primary", "*"), ("phd", "*")], "two.csv")
    cov = hierarchy_coverage(h, loaded.frame["education"], "education")
    first = int(np.flatnonzero(~loaded.frame["education"].isin(["primary", "phd"]))[0])
    assert cov.where.startswith(f"line {first + 2}")  # line 1 is the header


# --- sweep ----------------------------------------------------------------------------------
def test_sweep_spec_gives_hierarchies_to_the_methods_that_use_them_only() -> None:
    spec = SweepSpec.make(["mdav-generic", "mstk"], [3, 5], hierarchies={"edu": "h/edu.csv"})
    specs = spec.run_specs()
    assert [(s.method, s.k, s.hierarchies) for s in specs] == [
        ("mdav-generic", 3, ()),
        ("mdav-generic", 5, ()),
        ("mstk", 3, (("edu", "h/edu.csv"),)),
        ("mstk", 5, (("edu", "h/edu.csv"),)),
    ]
    with pytest.raises(
        InvalidParameter, match=r"no method of the sweep \(mdav\) generalizes.*mstk"
    ):
        SweepSpec.make(["mdav"], [3], hierarchies={"edu": "h/edu.csv"}).run_specs()
    assert SweepSpec.make(["mdav"], [3]).run_specs()[0].hierarchies == ()


def test_sweep_measures_keep_the_generalization_il_of_the_run(study: Path) -> None:
    loaded = read_table(study / "people.csv")
    roles = roles_from_lists(
        list(loaded.frame.columns), qi=["age", "education", "sex"], nominal=["education", "sex"],
        identifiers=["id"], confidential=["income"],
    )  # fmt: skip
    dataset = Dataset(loaded.frame, roles, loaded.source)
    files = {"education": str(study / "h" / "education.csv")}
    specs = SweepSpec.make(["mstk"], [5], seed=0, hierarchies=files).run_specs()
    (point,) = run_sweep(dataset, specs, workers=1)
    assert point.error is None
    assert point.report is not None
    assert point.report["hierarchies"]["education"].startswith("file education.csv")
    # evaluate knows no hierarchy here: the run's own figure must not be replaced by None
    assert point.measures["generalization_il"] == pytest.approx(point.report["generalization_il"])


def test_cli_sweep_with_hierarchies_matches_protect(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = study / "people.csv"
    edu, age = study / "h" / "education.csv", study / "h" / "age.csv"
    out = tmp_path / "sweep.json"
    code, _, err = run(
        ["sweep", str(table), *ROLES, "--methods", "mstk,mdav-generic", "--k", "5",
         "--hierarchy", f"education={edu}", "--hierarchy", f"age={age}", "--seed", "0",
         "--workers", "1", "--json", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    records = {r["method"]: r for r in json.loads(out.read_text())}
    assert records["mstk"]["hierarchies"] == {"age": str(age), "education": str(edu)}
    assert records["mdav-generic"]["hierarchies"] == {}
    assert records["mstk"]["error"] is None and records["mdav-generic"]["error"] is None
    report = tmp_path / "protect.json"
    code, _, err = run(
        ["protect", str(table), "-o", str(tmp_path / "p.csv"), "--method", "mstk", "-k", "5",
         *ROLES, "--hierarchy", f"education={edu}", "--hierarchy", f"age={age}", "--seed", "0",
         "--report", str(report)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    protect = json.loads(report.read_text())
    assert records["mstk"]["generalization_il"] == pytest.approx(protect["generalization_il"])
    assert records["mstk"]["k_anonymity"] == protect["k_anonymity"]

    # evaluate with the same hierarchies reads the release's generalizations: the same IL
    ev = tmp_path / "ev.json"
    code, _, err = run(
        ["evaluate", str(table), str(tmp_path / "p.csv"), *ROLES, "-k", "5",
         "--hierarchy", f"education={edu}", "--hierarchy", f"age={age}", "--json", str(ev)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(ev.read_text())["generalization_il"] == pytest.approx(
        protect["generalization_il"]
    )


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--methods", "mdav-generic", "--hierarchy", "education={edu}"],
         r"no method of the sweep \(mdav-generic\) generalizes"),
        (["--methods", "mstk", "--hierarchy", "income={edu}"],
         r"--hierarchy names 'income', which is not a quasi-identifier"),
        (["--methods", "mstk", "--hierarchy", "education={partial}"],
         r"column 'education' of people.csv holds '\w+' \(line \d+\), which is not in its "
         r"hierarchy partial.csv"),
        (["--methods", "mstk", "--hierarchy", "education={study}/none.csv"],
         r"hierarchy file none.csv was not found"),
        (["--methods", "mstk", "--hierarchy", "education"], r"--hierarchy 'education': give COL=FILE"),
        (["--methods", "mstk", "--hierarchy", "education={edu}", "--hierarchy", "education={edu}"],
         r"--hierarchy gives two files for column 'education'"),
        (["--methods", "mstk", "--hierarchy", "education={edu}", "--json", "{edu}"],
         r"refusing to write 'education.csv': it is an input file"),
    ],
)  # fmt: skip
def test_cli_sweep_refuses_bad_hierarchies_in_one_line_and_writes_nothing(
    study: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fragment: str,
) -> None:
    (study / "h" / "partial.csv").write_text("primary;*\nphd;*\n")
    names = {"edu": study / "h" / "education.csv", "partial": study / "h" / "partial.csv",
             "study": study}  # fmt: skip
    before = (study / "h" / "education.csv").read_bytes()
    argv = ["sweep", str(study / "people.csv"), *ROLES, "--k", "5", "--workers", "1"]
    code, out, err = run(argv + [e.format(**names) for e in extra], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.search(fragment, lines[0]), err
    assert (study / "h" / "education.csv").read_bytes() == before


@pytest.mark.shared
def test_cli_sweep_on_adult_with_the_arx_hierarchies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = ADULT / "adult_subset.csv"
    if not table.exists():
        pytest.skip("shared Adult data not available")
    qi = ["age", "sex", "education", "marital-status"]
    argv = ["sweep", str(table), "--qi", ",".join(qi), "--nominal", ",".join(qi[1:]),
            "--confidential", "salary-class", "--methods", "mstk,mdav-generic", "--k", "5",
            "--seed", "0", "--workers", "1", "--json", str(tmp_path / "s.json")]  # fmt: skip
    for column in qi:
        argv += ["--hierarchy", f"{column}={ADULT / f'adult_hierarchy_{column}.csv'}"]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    records = {r["method"]: r for r in json.loads((tmp_path / "s.json").read_text())}
    assert set(records["mstk"]["hierarchies"]) == set(qi)
    assert records["mstk"]["generalization_il"] is not None
    assert records["mstk"]["k_anonymity"] >= 5
    assert records["mdav-generic"]["hierarchies"] == {} and records["mdav-generic"]["error"] is None


# --- project files --------------------------------------------------------------------------
def _project(study: Path, hierarchies: dict[str, str], runs: tuple[RunSpec, ...] = ()) -> Project:
    loaded = read_table(study / "people.csv")
    roles = roles_from_lists(
        list(loaded.frame.columns), qi=["age", "education", "sex"], nominal=["education", "sex"],
        identifiers=["id"], confidential=["income"],
    )  # fmt: skip
    return Project(
        data_path=str(study / "people.csv"),
        columns=tuple(loaded.frame.columns),
        roles=roles,
        runs=runs,
        hierarchies=tuple(sorted(hierarchies.items())),
    )


def test_project_keeps_attached_hierarchies_relative_to_its_folder(
    study: Path, tmp_path: Path
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}_outside.csv"
    outside.write_text(EDU_ROWS)
    edu = study / "h" / "education.csv"
    spec = RunSpec.make("mstk", 5, seed=0, hierarchies={"education": str(edu)})
    project = _project(study, {"education": str(edu), "age": str(outside)}, (spec,))
    path = study / "p.microgui.json"
    save_project(project, path)
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert raw["schema_version"] == SCHEMA_VERSION >= 2
    assert raw["data"]["path"] == "people.csv"
    # below the project's folder: relative; elsewhere: kept absolute
    assert raw["hierarchies"] == {"age": str(outside), "education": "h/education.csv"}
    assert raw["runs"][0]["hierarchies"] == {"education": "h/education.csv"}

    loaded = load_project(path)
    assert loaded.hierarchies == (("age", str(outside)), ("education", "h/education.csv"))
    assert loaded.resolved_hierarchies(study) == {"age": outside, "education": edu}
    assert loaded.resolved_runs(study) == (spec,)
    moved = tmp_path / "elsewhere"
    assert loaded.resolved_hierarchies(moved)["education"] == moved / "h" / "education.csv"
    assert loaded.resolved_runs(moved)[0].hierarchies == (
        ("education", str(moved / "h" / "education.csv")),
    )
    # the autosave (no folder) keeps them absolute
    assert project.to_json(None)["hierarchies"]["education"] == str(edu)


def test_saving_a_project_never_writes_over_an_attached_hierarchy(study: Path) -> None:
    edu = study / "h" / "education.csv"
    project = _project(study, {"education": str(edu)})
    with pytest.raises(ExportRefused, match="refusing to write 'education.csv'"):
        save_project(project, edu)
    assert edu.read_text() == EDU_ROWS


def test_schema_1_projects_load_without_hierarchies() -> None:
    project = load_project(DATA / "project_v1.json")
    assert project.hierarchies == ()
    assert project.resolved_hierarchies(DATA) == {}
    assert len(project.runs) == 2


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (["h.csv"], r"'hierarchies' must map columns to file paths"),
        ({"education": 3}, r"'hierarchies' must map columns to file paths"),
        ({"ghost": "h.csv"}, r"the hierarchy for 'ghost' names not a column"),
        ({"education": " "}, r"the hierarchy for 'education' has an empty path"),
        ({"education": "a\x00b"}, r"the hierarchy for 'education' has an empty path.*NUL"),
    ],
)
def test_bad_attached_hierarchies_are_refused_by_name(
    study: Path, value: object, fragment: str
) -> None:
    data = _project(study, {}).to_json(study)
    data["hierarchies"] = value
    with pytest.raises(InvalidInput, match=fragment):
        project_from_json(data, "p.json")


def test_a_newer_schema_is_refused_with_what_to_do(study: Path) -> None:
    data = _project(study, {}).to_json(study)
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(InvalidInput, match="update microgui"):
        project_from_json(data, "p.json")


@pytest.mark.shared
def test_adult_hierarchies_cover_adult() -> None:
    table = ADULT / "adult.csv"
    if not table.exists():
        pytest.skip("shared Adult data not available")
    frame = read_table(table).frame
    for column in ("age", "education", "workclass", "native-country"):
        h = load_hierarchy(ADULT / f"adult_hierarchy_{column}.csv")
        cov = hierarchy_coverage(h, frame[column], column)
        assert cov.complete, cov.summary()
        assert cov.n_rows == 30_162
    # ARX's age hierarchy lists 1..100; Adult has 17..90 (README: 28 unused rows)
    age = hierarchy_coverage(load_hierarchy(ADULT / "adult_hierarchy_age.csv"), frame["age"], "age")
    assert age.unused == 100 - frame["age"].nunique()
