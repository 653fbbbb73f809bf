"""Issue 13, item 1: conservative, explained role suggestions (core, CLI) and item 5: missing
cells of a nominal/ordinal quasi-identifier as a category of their own."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference_sets import shared_path

import microgui
from microgui.cli import main
from microgui.core.errors import InvalidInput, InvalidRoles
from microgui.core.io import read_table
from microgui.core.metrics.evaluate import evaluate
from microgui.core.runs.project_file import Project, load_project, save_project
from microgui.core.table.dataset import Dataset, explain_roles, prepare_qi, suggest_roles
from microgui.core.table.roles import (
    AttributeKind,
    AttributeRole,
    ColumnSpec,
    RoleMap,
    roles_from_lists,
)

QI, ID, NC = (
    AttributeRole.QUASI_IDENTIFIER,
    AttributeRole.IDENTIFIER,
    AttributeRole.NON_CONFIDENTIAL,
)


def by_name(frame: pd.DataFrame) -> dict[str, tuple[ColumnSpec, str]]:
    return {s.name: (s.spec, s.reason) for s in explain_roles(frame)}


# --- one small table per rule -------------------------------------------------------------


def test_text_with_few_categories_is_a_nominal_qi_with_a_reason() -> None:
    n = 60
    frame = pd.DataFrame(
        {
            "sex": ["F", "M"] * (n // 2),
            "region": [f"r{i % 7}" for i in range(n)],
            "flag": [True, False, True] * (n // 3),
        }
    )
    got = by_name(frame)
    for col in ("sex", "region", "flag"):
        spec, reason = got[col]
        assert spec == ColumnSpec(QI, AttributeKind.NOMINAL), col
        assert "nominal quasi-identifier" in reason and "\n" not in reason


def test_numbers_ordinal_or_continuous_by_distinct_values() -> None:
    n = 50
    frame = pd.DataFrame({"level": [i % 4 + 1 for i in range(n)], "age": range(20, 20 + n)})
    frame["age"] = frame["age"] * 1.5  # not consecutive integers
    got = by_name(frame)
    assert got["level"][0] == ColumnSpec(QI, AttributeKind.ORDINAL, ("1", "2", "3", "4"))
    assert "numeric order" in got["level"][1]
    assert got["age"][0] == ColumnSpec(QI, AttributeKind.CONTINUOUS)


def test_ordered_categorical_is_ordinal_in_its_order() -> None:
    cat = pd.Categorical(["low", "high", "mid"] * 10, ["low", "mid", "high"], ordered=True)
    spec, _ = by_name(pd.DataFrame({"grade": cat}))["grade"]
    assert spec == ColumnSpec(QI, AttributeKind.ORDINAL, ("low", "mid", "high"))


@pytest.mark.parametrize(
    "name",
    ["record_id", "RecordId", "UTILITYID", "UTILNAME", "e-mail", "Phone number", "ssn", "key"],
)
def test_identifying_names(name: str) -> None:
    frame = pd.DataFrame({name: ["a", "b", "a", "c"] * 10, "x": range(40)})
    spec, reason = by_name(frame)[name]
    assert spec.role is ID
    assert "name" in reason


@pytest.mark.parametrize("name", ["valid", "paid", "grid", "fluid", "humid", "mid", "rename"])
def test_words_that_only_end_like_an_identifier(name: str) -> None:
    frame = pd.DataFrame({name: ["a", "b", "a", "c"] * 10})
    assert by_name(frame)[name][0].role is QI


def test_near_unique_text_is_an_identifier_but_a_repeating_one_is_not() -> None:
    n = 100
    frame = pd.DataFrame(
        {
            "who": [f"person {i // 2 if i < 20 else i}" for i in range(n)],  # 90 % distinct
            "town": [f"town {i % 30}" for i in range(n)],  # 30 % distinct: a QI
            "unique": [f"u{i}" for i in range(n)],
        }
    )
    got = by_name(frame)
    assert got["who"][0].role is ID and "distinct values" in got["who"][1]
    assert got["unique"][0].role is ID
    assert got["town"][0] == ColumnSpec(QI, AttributeKind.NOMINAL)


def test_row_numbers_are_identifiers_unique_measurements_are_not() -> None:
    n = 30
    frame = pd.DataFrame({"row": range(1, n + 1), "income": np.linspace(1.5, 99.25, n)})
    got = by_name(frame)
    assert got["row"][0].role is ID and "row number" in got["row"][1]
    assert got["income"][0] == ColumnSpec(QI, AttributeKind.CONTINUOUS)


def test_constant_and_empty_columns_pass_through() -> None:
    frame = pd.DataFrame({"year": [1996] * 20, "blank": [None] * 20, "x": ["a", "b"] * 10})
    got = by_name(frame)
    assert got["year"][0].role is NC and "same value" in got["year"][1]
    assert got["blank"][0].role is NC


def test_dates_are_ordinal_quasi_identifiers() -> None:
    frame = pd.DataFrame({"born": pd.date_range("1950-01-01", periods=30, freq="97D")})
    spec, reason = by_name(frame)["born"]
    assert spec.role is QI and spec.kind is AttributeKind.ORDINAL
    assert "birth date" in reason


def test_missing_cells_never_change_the_role_and_are_counted() -> None:
    n = 40
    values = [str(v) for v in np.linspace(10, 500, n).round(1)]
    with_blanks = values.copy()
    with_blanks[3] = ""
    with_blanks[9] = "NA"
    cats = ["a", "b", "c", "d"] * (n // 4)
    cats[0] = ""
    frame = pd.DataFrame({"clean": values, "holes": with_blanks, "cat": cats}, dtype=object)
    got = {s.name: s for s in explain_roles(frame)}
    assert got["holes"].spec == got["clean"].spec == ColumnSpec(QI, AttributeKind.CONTINUOUS)
    assert got["holes"].missing == 2 and "2 missing cell(s)" in got["holes"].reason
    assert got["cat"].spec == ColumnSpec(QI, AttributeKind.NOMINAL)
    assert "own category" in got["cat"].reason


def test_suggest_roles_is_explain_roles_without_reasons() -> None:
    frame = pd.DataFrame({"a": ["x", "y"] * 10, "b": range(20)})
    assert suggest_roles(frame) == RoleMap.from_dict({s.name: s.spec for s in explain_roles(frame)})


# --- the real data sets of the issue (skipped without ../shared) -----------------------------


def test_adult_categorical_columns_are_quasi_identifiers() -> None:
    roles = suggest_roles(read_table(shared_path("adult", "adult.csv")).frame)
    for col in (
        "sex",
        "race",
        "marital-status",
        "education",
        "native-country",
        "occupation",
        "workclass",
    ):
        assert roles[col].role is QI, col
        assert roles[col].kind is not AttributeKind.CONTINUOUS, col
    assert roles["age"] == ColumnSpec(QI, AttributeKind.CONTINUOUS)


def test_eia_name_and_id_are_identifiers_and_year_is_no_qi() -> None:
    roles = suggest_roles(read_table(shared_path("sdc-reference", "EIA.csv")).frame)
    assert roles["UTILNAME"].role is ID
    assert roles["UTILITYID"].role is ID  # never averaged as a continuous QI
    assert roles["YEAR"].role is not QI  # constant: carries nothing
    assert roles["RESREVENUE"] == ColumnSpec(QI, AttributeKind.CONTINUOUS)


def census_with_blanks(tmp_path: Path) -> Path:
    src = shared_path("sdc-reference", "CASCrefmicrodata.csv")
    lines = src.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    agi, fedtax = header.index("AGI"), header.index("FEDTAX")
    for row, col, value in ((5, agi, ""), (17, agi, ""), (40, agi, ""), (23, fedtax, "NA")):
        cells = lines[row].split(",")
        cells[col] = value
        lines[row] = ",".join(cells)
    out = tmp_path / "census_blanks.csv"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_census_with_blanks_ends_in_the_missing_value_message(tmp_path: Path) -> None:
    loaded = read_table(census_with_blanks(tmp_path))
    roles = suggest_roles(loaded.frame)
    assert roles["AGI"] == ColumnSpec(QI, AttributeKind.CONTINUOUS)  # not re-tagged
    assert roles["FEDTAX"] == ColumnSpec(QI, AttributeKind.CONTINUOUS)  # not an identifier
    dataset = Dataset(loaded.frame, roles, loaded.source)
    with pytest.raises(InvalidInput, match=r"'AGI' .* has 3 missing value\(s\) \(line 6, 18, 41\)"):
        prepare_qi(dataset)


# --- the command line ----------------------------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_suggest_roles_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "t.csv"
    n = 30
    pd.DataFrame(
        {
            "person_id": [f"P{i}" for i in range(n)],
            "age": np.linspace(20.5, 80.5, n),
            "level": [i % 3 for i in range(n)],
            "sex": ["F", "M"] * (n // 2),
            "wave": [2] * n,
        }
    ).to_csv(src, index=False)
    out_json = tmp_path / "roles.json"
    code, out, err = run(["suggest-roles", str(src), "--json", str(out_json)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["column", "role", "kind", "reason"]
    assert any(line.startswith("person_id") and "identifier" in line for line in lines)
    assert (
        "--qi age,level,sex" in out and "--nominal sex" in out and "--ordinal 'level=0<1<2'" in out
    )
    data = json.loads(out_json.read_text())
    columns = {c["name"]: c for c in data["columns"]}
    assert list(columns) == ["person_id", "age", "level", "sex", "wave"]
    assert set(columns["age"]) >= {"name", "role", "kind", "order", "reason"}
    assert columns["person_id"]["role"] == "identifier"
    assert columns["age"] == columns["age"] | {"role": "quasi-identifier", "kind": "continuous"}
    assert columns["level"]["kind"] == "ordinal" and columns["level"]["order"] == ["0", "1", "2"]
    assert columns["sex"]["kind"] == "nominal" and columns["sex"]["order"] is None
    assert columns["wave"]["role"] == "non-confidential"
    # the output never replaces the input
    code, _, err = run(["suggest-roles", str(src), "--json", str(src)], capsys)
    assert code == 2 and "t.csv" in err
    assert "person_id" in src.read_text()


def test_cli_suggest_roles_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["suggest-roles", str(tmp_path / "nope.csv")], capsys)
    assert code == 2 and "nope.csv" in err and err.count("\n") == 1


# --- item 5: missing as a category ---------------------------------------------------------


def mixed_with_holes() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "edu": rng.choice(["primary", "secondary", "tertiary"], n).astype(object),
            "level": rng.choice(["1", "2", "3"], n).astype(object),
            "income": rng.normal(size=n),
        }
    )
    frame.loc[[3, 7, 11, 40], "edu"] = None
    frame.loc[[5, 50], "level"] = ""
    return frame


def protect_holes(**kwargs: object) -> microgui.ProtectionResult:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return microgui.protect(
            mixed_with_holes(),
            qi=["age", "edu", "level"],
            nominal=["edu"],
            ordinal={"level": None},
            method="mdav-generic",
            k=3,
            seed=1,
            **kwargs,  # type: ignore[arg-type]
        )


def test_missing_refused_by_default_with_the_choice_named() -> None:
    with pytest.raises(InvalidInput, match=r"'edu' has 4 missing .*\(--missing-as-category edu"):
        protect_holes()


def test_missing_as_category_runs_and_is_reported() -> None:
    res = protect_holes(missing_as_category=["edu", "level"])
    assert res.safe
    assert res.run.report["missing_as_category"] == {"edu": 4, "level": 2}
    released = res.frame
    original = mixed_with_holes()
    assert list(released.index) == list(original.index)
    pd.testing.assert_series_equal(released["income"], original["income"])
    # every released value is a category of the column or the empty cell of the missing ones
    assert set(released["edu"]) <= {"primary", "secondary", "tertiary", ""}
    assert set(released["level"]) <= {"1", "2", "3", ""}
    assert released.groupby(["age", "edu", "level"], dropna=False).size().min() >= 3


def test_missing_category_is_last_in_the_ordinal_order() -> None:
    frame = mixed_with_holes()
    roles = roles_from_lists(
        list(frame.columns),
        qi=["level"],
        ordinal={"level": ["1", "2", "3"]},
        missing_as_category=["level"],
    )
    qi = prepare_qi(Dataset(frame, roles))
    assert qi.ordinal_orders[0] == ("1", "2", "3", "")
    assert list(qi.ordinal[[5, 50], 0]) == [3, 3]


def test_missing_as_category_refused_for_continuous_columns() -> None:
    with pytest.raises(InvalidRoles, match="--missing-as-category names 'age'.*continuous"):
        roles_from_lists(["age", "edu"], qi=["age", "edu"], missing_as_category=["age"])


def test_evaluate_reads_a_released_empty_cell_as_the_missing_category(tmp_path: Path) -> None:
    res = protect_holes(missing_as_category=["edu", "level"])
    out = tmp_path / "released.csv"
    res.frame.to_csv(out, index=False)
    released = read_table(out).frame  # the empty cells come back as missing
    original = Dataset(mixed_with_holes(), res.run.roles)
    measures = evaluate(original, released)
    assert measures["k_anonymity"] is not None and measures["k_anonymity"] >= 3
    assert measures["dist"] is not None
    direct = evaluate(original, res.frame)
    assert measures["dist"] == pytest.approx(direct["dist"])


def test_cli_missing_as_category(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "holes.csv"
    mixed_with_holes().to_csv(src, index=False)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    base = ["protect", str(src), "-o", str(out), "--method", "mdav-generic", "-k", "3"]
    base += ["--qi", "age,edu,level", "--nominal", "edu", "--ordinal", "level", "--seed", "1"]
    code, _, err = run(base, capsys)
    assert code == 2 and "--missing-as-category edu" in err and not out.exists()
    code, _, err = run(
        [*base, "--missing-as-category", "edu,level", "--report", str(report)], capsys
    )
    assert code == 0, err
    assert json.loads(report.read_text())["missing_as_category"] == {"edu": 4, "level": 2}
    code, _, err = run([*base, "--missing-as-category", "age"], capsys)
    assert code == 2 and "'age'" in err


def test_missing_as_category_in_project_files(tmp_path: Path) -> None:
    roles = roles_from_lists(
        ["age", "edu"], qi=["age", "edu"], nominal=["edu"], missing_as_category=["edu"]
    )
    assert roles["edu"].to_json()["missing_as_category"] is True
    assert "missing_as_category" not in roles["age"].to_json()
    assert RoleMap.from_json(roles.to_json()) == roles
    data = tmp_path / "d.csv"
    pd.DataFrame({"age": [1.0, 2.0], "edu": ["a", None]}).to_csv(data, index=False)
    path = tmp_path / "p.microgui"
    save_project(Project(data_path=str(data), columns=("age", "edu"), roles=roles), path)
    assert load_project(path).roles == roles


def test_html_report_says_which_columns_had_missing_as_a_category() -> None:
    from microgui.core.release.report_html import build_report_html, report_run

    res = protect_holes(missing_as_category=["edu", "level"], params={"round": "0"})
    html = build_report_html([report_run("#1", res.run, {})], {})
    assert "Missing cells as a category" in html and "edu: 4 cells, level: 2 cells" in html
    assert "Rounding of aggregated values" in html and "0 (decimals: age 0)" in html
    assert "Groups with an invented combination" in html


# --- the adversarial review of issue 13: each finding is a case -----------------------------


def test_one_value_and_blanks_is_information_not_a_constant() -> None:
    frame = pd.DataFrame({"age": range(20, 80), "hiv": [""] * 60})
    frame.loc[[3, 17, 40], "hiv"] = "positive"
    got = {s.name: s for s in explain_roles(frame)}
    hiv = got["hiv"]
    assert hiv.spec.role is QI and hiv.spec.kind is AttributeKind.NOMINAL
    assert hiv.spec.missing_as_category and "blank on 57" in hiv.reason
    res = microgui.protect(frame, roles=suggest_roles(frame), method="mdav-generic", k=5, seed=1)
    assert res.safe and res.run.report["missing_as_category"] == {"hiv": 57}


@pytest.mark.parametrize(
    ("values", "what"),
    [
        ([f"user{i % 30}@mail.example" for i in range(60)], "e-mail"),
        ([f"https://example.org/p/{i % 30}" for i in range(60)], "web"),
        ([f"+44 20 7946 {i % 30:04d}" for i in range(60)], "telephone"),
    ],
)
def test_values_that_identify_by_their_form(values: list[str], what: str) -> None:
    spec, reason = by_name(pd.DataFrame({"reach": values}))["reach"]
    assert spec.role is ID and what in reason


def test_iso_dates_in_text_are_ordinal_not_telephone_numbers() -> None:
    days = pd.date_range("1950-01-01", periods=40, freq="53D").strftime("%Y-%m-%d")
    spec, reason = by_name(pd.DataFrame({"dob": list(days)}))["dob"]
    assert spec.role is QI and spec.kind is AttributeKind.ORDINAL and "birth date" in reason


@pytest.mark.parametrize(
    ("name", "role"),
    [("contact", ID), ("Straße", ID), ("household", ID), ("patient_no", ID), ("patient_age", QI)],
)
def test_more_identifying_names(name: str, role: AttributeRole) -> None:
    assert by_name(pd.DataFrame({name: ["a", "b", "c"] * 10}))[name][0].role is role


def test_names_in_a_small_table_with_one_repeat() -> None:
    names = ["Ann Lee", "Bob Ray", "Cy Doe", "Di Fox", "Ed Kim", "Flo Wu", "Gus Orr"]
    names += ["Hal Poe", "Ivy Tan", "Jo Ng", "Kim Yu", "Lu Bo", "Mo Li", "Ann Lee"]
    assert by_name(pd.DataFrame({"who": names}))["who"][0].role is ID
    # ... while 16 education levels in 30 records are categories, not names
    levels = [f"level {i % 16}" for i in range(30)]
    assert by_name(pd.DataFrame({"edu": levels}))["edu"][0].role is QI


def test_codes_with_leading_zeros_are_nominal() -> None:
    zips = [f"{z:05d}" for z in (2134, 2135, 10001, 94105, 601)] * 8
    spec, reason = by_name(pd.DataFrame({"zip": zips}, dtype=object))["zip"]
    assert spec == ColumnSpec(QI, AttributeKind.NOMINAL) and "leading zeros" in reason


def test_numbers_distinct_per_record_warn_about_keys() -> None:
    n = 50
    frame = pd.DataFrame({"custnum": np.random.default_rng(3).permutation(10**6)[:n] + 10**5})
    spec, reason = by_name(frame)["custnum"]
    assert spec.kind is AttributeKind.CONTINUOUS and "tag it identifier" in reason


def test_numbers_with_one_bad_cell_stay_numbers() -> None:
    values = [str(v) for v in np.linspace(100, 900, 40).round(1)]
    values[6] = "refused"
    spec, reason = by_name(pd.DataFrame({"income": values}, dtype=object))["income"]
    assert spec == ColumnSpec(QI, AttributeKind.CONTINUOUS) and "no number" in reason


def test_row_numbers_start_at_zero_or_one() -> None:
    got = by_name(pd.DataFrame({"age": range(21, 51), "row": range(1, 31)}))
    assert got["age"][0].kind is AttributeKind.CONTINUOUS
    assert got["row"][0].role is ID


def test_suggested_numeric_order_matches_cells_written_otherwise(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {"age": rng.integers(18, 80, 100), "likert": rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], 100)}
    )
    src = tmp_path / "lik.csv"
    frame.to_csv(src, index=False)  # written 1.0, 2.0, ...
    loaded = read_table(src)
    roles = suggest_roles(loaded.frame)
    assert roles["likert"].order == ("1", "2", "3", "4", "5")
    qi = prepare_qi(Dataset(loaded.frame, roles))
    assert sorted(set(qi.ordinal[:, 0].tolist())) == [0, 1, 2, 3, 4]
    cells = pd.DataFrame({"code": ["007", "1e3", "1.50", "7", "1000", "1.5"]})
    coded = Dataset(
        cells, roles_from_lists(["code"], qi=["code"], ordinal={"code": ["1.5", "7", "1000"]})
    )
    assert prepare_qi(coded).ordinal[:, 0].tolist() == [1, 2, 0, 1, 2, 0]


def test_missing_as_category_of_a_column_that_is_no_qi() -> None:
    with pytest.raises(InvalidRoles, match="'sex', which is not a quasi-identifier"):
        roles_from_lists(["age", "sex"], qi=["age"], missing_as_category=["sex"])


def test_missing_value_message_gives_no_unsafe_advice() -> None:
    with pytest.raises(InvalidInput) as caught:
        protect_holes()
    assert "non-confidential" not in str(caught.value)


def test_protect_notes_untagged_identifying_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "t.csv"
    n = 40
    pd.DataFrame(
        {
            "age": np.linspace(20.5, 80.5, n),
            "Nom": [f"Person {i}" for i in range(n)],
            "sex": ["F", "M"] * (n // 2),
        }
    ).to_csv(src, index=False)
    code, _, err = run(
        ["protect", str(src), "-o", str(tmp_path / "o.csv"), "--method", "mdav", "-k", "3",
         "--qi", "age"],
        capsys,
    )  # fmt: skip
    assert code == 0
    note = next(line for line in err.splitlines() if "note:" in line)
    assert "'Nom' (identifier)" in note and "'sex' (quasi-identifier)" in note


def test_sweep_json_says_missing_as_category_and_rounding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "holes.csv"
    mixed_with_holes().to_csv(src, index=False)
    out = tmp_path / "sweep.json"
    code, _, err = run(
        ["sweep", str(src), "--qi", "age,edu,level", "--nominal", "edu", "--ordinal", "level",
         "--missing-as-category", "edu,level", "--methods", "mdav-generic", "--k", "3",
         "--round", "0", "--workers", "1", "--json", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    record = json.loads(out.read_text())[0]
    assert record["missing_as_category"] == {"edu": 4, "level": 2}
    assert record["rounding"]["round"] == "0" and record["rounding"]["decimals"] == {"age": 0}


def test_suggest_roles_into_a_closed_pipe() -> None:
    import subprocess
    import sys

    script = (
        "import sys, pandas as pd; from microgui.cli import main; "
        "pd.DataFrame({f'c{i}': range(50) for i in range(400)}).to_csv(sys.argv[1], index=False); "
        "sys.exit(main(['suggest-roles', sys.argv[1]]))"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "wide.csv")
        proc = subprocess.run(
            f'{sys.executable} -c "{script}" {path} | head -1',
            shell=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_a_column_named_like_a_survey_weight_gets_a_hint_but_stays_protected() -> None:
    """Conservative: a design weight can reveal the sampling stratum, so it is still suggested a
    quasi-identifier; the reason says how to tag it a weight (issue 18)."""
    import numpy as np
    import pandas as pd

    from microgui.core.table.dataset import explain_roles
    from microgui.core.table.roles import AttributeRole

    frame = pd.DataFrame(
        {"survey_weight": np.linspace(1, 500, 100), "size": np.linspace(1, 9, 100)}
    )
    weight, size = explain_roles(frame)
    assert weight.spec.role is AttributeRole.QUASI_IDENTIFIER
    assert "tag it weight" in weight.reason and "tag it weight" not in size.reason
