"""No write without a check: the release writer (:func:`microgui.core.release.check.export_run`, the one
writer of the command line, the API and the app) makes the release check on the values it is
about to write, and the report's ``k_anonymity`` and ``identifiers_removed`` describe the file
written, read back and measured here. A table edited after the run (the API's
``ProtectionResult.frame``) is checked again: refused, or written with its own figures."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.api import ProtectionResult
from microgui.cli import main
from microgui.core.errors import ExportRefused
from microgui.core.metrics import k_anonymity_level
from microgui.core.release.check import ExportCheck, check_export, export_run
from microgui.core.release.order import RecordOrder
from tests.cli_argv import protect_argv

#: Release in the input's order (a release is shuffled by default, issue 31): these tests read
#: the written file row for row beside the run's table.
KEEP_ORDER = RecordOrder(keep=True)

QIS = ["age", "income"]


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 40
    return pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(20, 70, n),
            "income": rng.normal(50, 10, n).round(1),
            "health": rng.normal(5, 2, n).round(2),
        }
    )


def _protect(frame: pd.DataFrame, method: str = "mdav") -> ProtectionResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
        return microgui.protect(frame, qi=QIS, identifiers="id", method=method, k=3, seed=1)


def _write(res: ProtectionResult, path: Path, **kw: Any) -> dict[str, Any]:
    """The writer itself (the API's export passes ``table=res.frame``)."""
    assert res.dataset is not None
    kw.setdefault("order", KEEP_ORDER)  # compared row for row with the run's table
    return export_run(res.dataset, res.run, path, **kw)


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".xlsx":
        return pd.read_excel(path, engine="openpyxl")
    return pd.read_csv(path)


def _assert_report_describes_file(table: Path, report: dict[str, Any]) -> pd.DataFrame:
    """The report's k and removed identifiers are those of the file as read back."""
    written = _read(table)
    assert report["k_anonymity"] == k_anonymity_level(written, QIS)
    assert report["identifiers_removed"] == [c for c in ["id"] if c not in written.columns]
    saved = json.loads(table.with_name(table.stem + ".report.json").read_text())
    assert saved["k_anonymity"] == report["k_anonymity"]
    assert saved["identifiers_removed"] == report["identifiers_removed"]
    return written


def _export(res: ProtectionResult, table: Path, **kw: Any) -> dict[str, Any]:
    return res.export(
        table, keep_order=True, report=table.with_name(table.stem + ".report.json"), **kw
    )


def test_result_frame_is_a_copy_of_the_runs_table(people: pd.DataFrame) -> None:
    res = _protect(people)
    assert res.frame is not res.run.protected
    before = res.run.protected.copy()
    res.frame.loc[res.frame.index[0], "age"] = 97
    pd.testing.assert_frame_equal(res.run.protected, before)  # the run keeps what the method made


def test_edited_cell_is_refused_naming_k_and_nothing_written(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    assert res.check.ok
    res.frame.loc[res.frame.index[0], "age"] = 97
    with pytest.raises(ExportRefused, match=r"only 1-anonymous.*k = 3") as info:
        _export(res, tmp_path / "out.csv")
    assert "97" not in str(info.value) and "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_edited_cell_overridden_is_written_with_the_new_k(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    res.frame.loc[res.frame.index[0], "age"] = 97
    out = tmp_path / "out.csv"
    report = _export(res, out, override="checking the edited-cell path")
    written = _assert_report_describes_file(out, report)
    assert report["k_anonymity"] == 1 and written["age"].iloc[0] == 97
    assert report["edited_after_run"] == {"cells_changed": {"age": 1}, "columns_added": []}
    assert "1-anonymous" in report["export_override"]["problems"][0]


def test_edit_that_keeps_k_is_written_with_figures_of_the_edited_table(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    group = res.partition == res.partition.iloc[0]
    res.frame.loc[group, "age"] = 55  # the whole group moved together: still 3-anonymous
    out = tmp_path / "out.parquet"
    report = _export(res, out)
    written = _assert_report_describes_file(out, report)
    assert report["k_anonymity"] >= 3 and (written["age"][group.to_numpy()] == 55).all()
    assert report["edited_after_run"]["cells_changed"] == {"age": int(group.sum())}
    # the information loss is that of the table written, not of the run's
    assert report["information_loss"] != res.report["information_loss"]
    assert report["sse"] != res.report["sse"]


def test_identifier_column_put_back_is_refused(people: pd.DataFrame, tmp_path: Path) -> None:
    res = _protect(people)
    res.frame["id"] = people["id"]
    with pytest.raises(ExportRefused, match=r"identifier column\(s\) 'id' would be exported"):
        _export(res, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "forced.csv"
    report = _export(res, out, override="checking the identifier path")
    written = _assert_report_describes_file(out, report)
    assert report["identifiers_removed"] == [] and "id" in written.columns


def test_identifier_values_under_another_column_are_refused(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    res.frame["health"] = people["id"]
    with pytest.raises(ExportRefused, match="values of the identifier column 'id' in column"):
        _export(res, tmp_path / "out.csv", override="any")
    assert list(tmp_path.iterdir()) == []


def test_original_values_written_back_are_refused(people: pd.DataFrame, tmp_path: Path) -> None:
    res = _protect(people)
    for column in QIS:
        res.frame[column] = people[column]
    with pytest.raises(ExportRefused, match="only 1-anonymous"):
        _export(res, tmp_path / "out.xlsx")
    assert list(tmp_path.iterdir()) == []


EDITS: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "row dropped": lambda f: f.drop(index=f.index[0]),
    "row added": lambda f: pd.concat([f, f.iloc[:1]]),
    "rows reordered": lambda f: f.iloc[::-1],
    "index relabelled": lambda f: f.set_axis(f.index + 1000),
    "column not in the input": lambda f: f.assign(extra=1),
    "column of the run dropped": lambda f: f.drop(columns=["health"]),
    "column twice": lambda f: pd.concat([f, f[["age"]]], axis=1),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_table_no_longer_of_the_run_is_refused_in_one_line(
    people: pd.DataFrame, tmp_path: Path, edit: str
) -> None:
    res = _protect(people)
    table = EDITS[edit](res.frame)
    with pytest.raises(
        ExportRefused, match=r"the table to release \(edited after the run\)"
    ) as info:
        _write(res, tmp_path / "out.csv", override="any", table=table)
    message = str(info.value)
    assert "\n" not in message and "P0" not in message
    assert "run the protection again" in message
    assert list(tmp_path.iterdir()) == []


def test_column_added_to_the_input_after_the_run_is_refused(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    people["phone"] = [f"0700{i:06d}" for i in range(len(people))]  # the caller's frame grows
    res.frame["phone"] = people["phone"]
    with pytest.raises(ExportRefused, match="'phone' that the input does not have"):
        _export(res, tmp_path / "out.csv", override="any")
    assert list(tmp_path.iterdir()) == []


def test_same_values_in_another_dtype_are_no_edit(people: pd.DataFrame, tmp_path: Path) -> None:
    res = _protect(people)
    res.frame["health"] = res.frame["health"].astype(object)
    report = _export(res, tmp_path / "out.csv")
    assert "edited_after_run" not in report
    assert report["information_loss"] == res.report["information_loss"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx"])
def test_report_of_an_unedited_release_describes_the_file(
    people: pd.DataFrame, tmp_path: Path, suffix: str
) -> None:
    res = _protect(people)
    out = tmp_path / f"out{suffix}"
    report = _export(res, out)
    _assert_report_describes_file(out, report)
    assert report["identifiers_removed"] == ["id"] and "edited_after_run" not in report


def test_pseudonymized_identifier_is_not_reported_removed(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people)
    out = tmp_path / "out.csv"
    report = _export(res, out, pseudonymize="id")
    written = _assert_report_describes_file(out, report)
    assert "id" in written.columns and report["identifiers_removed"] == []
    assert not set(written["id"]) & set(people["id"])


def test_masking_method_report_gives_the_k_of_the_file(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    res = _protect(people, method="individual-ranking")
    assert not res.check.ok
    out = tmp_path / "out.csv"
    report = _export(res, out, override="masking method, k not promised")
    _assert_report_describes_file(out, report)


def test_check_is_made_on_the_values_as_written(tmp_path: Path) -> None:
    """The formula rule writes ``=x`` as ``'=x``: a group holding both releases one
    confidential value, so a p-sensitive promise kept by the cells in memory is broken in the
    file, and the writer measures the file's values."""
    rng = np.random.default_rng(2)
    n = 24
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(float),
            "income": rng.normal(50, 10, n).round(1),
            "diagnosis": [["=x", "'=x", "flu"][i % 3] for i in range(n)],
        }
    )
    res = microgui.protect(
        frame, qi=QIS, confidential="diagnosis", method="p-sensitive", k=2, seed=3,
        params={"p": 2},
    )  # fmt: skip
    assert res.check.ok
    labels = res.partition.to_numpy()
    table = res.frame.copy()
    for g in np.unique(labels):  # every group: two cells that differ by the apostrophe only
        rows = table.index[labels == g]
        table.loc[rows, "diagnosis"] = ["=x", "'=x"] * (len(rows) // 2) + ["=x"] * (len(rows) % 2)
    # a run whose method made these cells (an edit of a confidential column after the run is
    # refused outright: test_an_edit_of_a_column_that_is_no_quasi_identifier_is_refused)
    run = replace(res.run, protected=table)
    assert check_export(run, table).ok  # the cells in memory are 2-sensitive
    assert res.dataset is not None
    with pytest.raises(ExportRefused, match="only 1-sensitive"):
        export_run(res.dataset, run, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []
    # written raw, the two cells stay two values: the promise holds in the file
    report = export_run(res.dataset, run, tmp_path / "raw.csv", keep_formula_cells=True)
    assert report["k_anonymity"] >= 2


EDITS_OF_OTHER_COLUMNS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], pd.Series]] = {
    "identifier lower-cased": lambda f, p: p["id"].str.lower(),
    "identifier of a few records": lambda f, p: p["id"].where(p.index < 3, "a"),
    "identifier as bytes": lambda f, p: p["id"].str.encode("utf-8"),
    "identifier's number": lambda f, p: p["id"].str[1:].astype(int),
    "identifier appended": lambda f, p: f["health"].astype(str) + "|" + p["id"],
    "one value changed": lambda f, p: f["health"].where(f.index != f.index[0], 0.0),
}


@pytest.mark.parametrize("edit", list(EDITS_OF_OTHER_COLUMNS))
def test_an_edit_of_a_column_that_is_no_quasi_identifier_is_refused(
    people: pd.DataFrame, tmp_path: Path, edit: str
) -> None:
    """Only the quasi-identifiers' values can be measured again: a confidential or
    non-confidential column edited after the run is refused, override or not (each edit here
    put an identifier back past the check by column name; found by an adversarial pass)."""
    res = _protect(people)
    res.frame["health"] = EDITS_OF_OTHER_COLUMNS[edit](res.frame, people)
    with pytest.raises(ExportRefused, match="not quasi-identifiers"):
        _export(res, tmp_path / "out.csv", override="any")
    assert list(tmp_path.iterdir()) == []


def test_an_override_covers_only_the_problems_shown(people: pd.DataFrame, tmp_path: Path) -> None:
    """The app passes the check it showed: an override typed after it does not release a table
    with a problem it did not list (a run finished meanwhile)."""
    res = _protect(people)
    shown = ExportCheck(k_anonymity=3, problems=())
    table = res.frame.copy()
    table.loc[table.index[0], "age"] = 97
    with pytest.raises(ExportRefused, match="not the one whose check was shown"):
        _write(res, tmp_path / "out.csv", override="shown ok", check=shown,
            table=table,
        )  # fmt: skip
    assert list(tmp_path.iterdir()) == []
    seen = check_export(res.run, table)
    report = _write(
        res,
        tmp_path / "out.csv",
        override="seen",
        check=seen,
        table=table,
    )
    assert report["k_anonymity"] == 1


def test_cli_report_describes_the_file_written(
    people: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    for name, extra in (("plain", []), ("pseudo", ["--pseudonymize", "id"])):
        out, rep = tmp_path / f"{name}.csv", tmp_path / f"{name}.report.json"
        argv = protect_argv(source, out, "--qi", "age,income", "-k", "3")
        argv += ["--method", "mdav"]
        argv += ["--identifiers", "id", "--report", str(rep), "--seed", "1", *extra]
        assert main(argv) == 0, capsys.readouterr().err
        report = json.loads(rep.read_text())
        written = pd.read_csv(out)
        assert report["k_anonymity"] == k_anonymity_level(written, QIS) >= 3
        assert report["identifiers_removed"] == [c for c in ["id"] if c not in written.columns]
    argv = protect_argv(source, tmp_path / "ir.csv", "--qi", "age,income")
    argv += ["-k", "3", "--method", "individual-ranking", "--identifiers", "id", "--seed", "1"]
    argv += ["--report", str(tmp_path / "ir.report.json"), "--allow-unsafe", "testing"]
    assert main(argv) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "ir.report.json").read_text())
    assert report["k_anonymity"] == k_anonymity_level(pd.read_csv(tmp_path / "ir.csv"), QIS)


def test_an_edit_of_the_callers_frame_after_protect_changes_no_export(
    people: pd.DataFrame, tmp_path: Path
) -> None:
    """The run keeps its own copy of the input: pseudonyms and their key are drawn from the
    records as they were given to protect(), not from the caller's frame edited since."""
    res = _protect(people)
    given = people["id"].copy()
    people["id"] = "someone else"
    people.loc[0, "age"] = 999
    res.export(
        tmp_path / "out.csv", keep_order=True, pseudonymize="id", pseudonym_key=tmp_path / "key.csv"
    )
    out = pd.read_csv(tmp_path / "out.csv")
    key = pd.read_csv(tmp_path / "key.csv", dtype=str)
    back = out["id"].map(dict(zip(key["pseudonym"], key["original"], strict=True)))
    assert back.tolist() == given.tolist()
