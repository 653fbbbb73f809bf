"""Issue 18, item 4: identifiers released as pseudonyms instead of being left out.

No pseudonym equals or is derivable from an original value (drawn from the OS's generator, never
a hash: a second release of the same table gets other tokens); the same value gets the same
pseudonym within a release; missing cells stay missing; the key file is written only on request,
on its own; the report names the columns and warns, never holds a value; the release check lets
an identifier column through only in this form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest

from microgui.cli import main
from microgui.core.errors import ExportRefused
from microgui.core.release.pseudonyms import PSEUDONYM_PATTERN, check_pseudonyms, pseudonymize

IDS = [
    "111-22-3333", "222-33-4444", "111-22-3333", "", "555-66-7777", "666-77-8888", "NA",
    "777-88-9999", "888-99-0000",
]  # fmt: skip


def _table(tmp_path: Path) -> Path:
    source = tmp_path / "people.csv"
    lines = ["ssn,name,age,income"]
    for i, ssn in enumerate(IDS):
        lines.append(f"{ssn},Person {i},{20 + 3 * i},{1000 + 97 * i}")
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return source


def _protect(source: Path, out: Path, *extra: str) -> int:
    return main(
        ["protect", str(source), "-o", str(out), "--keep-order", "--identifiers", "ssn,name", "--qi",
         "age,income", "-k", "3", "--method", "mdav", "--report", str(out.with_suffix(".json")),
         *extra]
    )  # fmt: skip


def test_pseudonyms_are_random_consistent_and_keep_missing_cells() -> None:
    values = pd.Series(IDS, name="ssn")
    first, key = pseudonymize(values)
    second, key2 = pseudonymize(values)
    cells = first.tolist()
    assert cells[3] is None and cells[6] is None  # "" and "NA": missing by the app's policy
    assert cells[0] == cells[2] and len({c for c in cells if c}) == 6
    originals = {v for v in IDS if v not in ("", "NA")}
    assert set(key) == originals and set(key.values()) == {c for c in cells if c}
    for token in key.values():
        assert PSEUDONYM_PATTERN.fullmatch(token)
        assert token not in originals and not any(o in token for o in originals)
        assert not any(o.replace("-", "") in token for o in originals)
    # drawn, not computed: the same table gets other tokens
    assert not set(key.values()) & set(key2.values())
    check_pseudonyms(first, values)


def test_the_release_check_passes_an_identifier_only_as_pseudonyms() -> None:
    values = pd.Series(["a1", "b2"], name="ssn")
    with pytest.raises(ExportRefused, match="record 2 holds something else"):
        check_pseudonyms(pd.Series(["PSN-0123456789abcdef", "b2"], name="ssn"), values)
    with pytest.raises(ExportRefused, match="equals an original"):
        check_pseudonyms(
            pd.Series(["PSN-0123456789abcdef"], name="ssn"),
            pd.Series(["PSN-0123456789abcdef"], name="ssn"),
        )


def test_cli_key_only_on_request_and_no_value_in_the_report(tmp_path: Path) -> None:
    source = _table(tmp_path)
    out = tmp_path / "out.csv"
    assert _protect(source, out, "--pseudonymize", "ssn") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.json", "people.csv"]
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(released.columns) == ["ssn", "age", "income"]  # name left out, ssn in place
    assert all(PSEUDONYM_PATTERN.fullmatch(v) or v == "" for v in released["ssn"])
    report_text = out.with_suffix(".json").read_text()
    report = json.loads(report_text)
    assert report["pseudonymized"] == {"ssn": 6}
    assert "still personal data" in report["pseudonym_warning"]
    assert report["pseudonym_key"] is None
    for original in IDS[:3]:
        assert original not in report_text and original not in out.read_text()
    # with the key: a file of its own, the only way back
    key_file = tmp_path / "key.csv"
    assert (
        _protect(
            source, tmp_path / "out2.csv", "--pseudonymize", "ssn", "--pseudonym-key", str(key_file)
        )
        == 0
    )
    key = pd.read_csv(key_file, dtype=str)
    released2 = pd.read_csv(tmp_path / "out2.csv", dtype=str, keep_default_na=False)
    mapping = dict(zip(key["original"], key["pseudonym"], strict=True))
    expected = [mapping.get(v, "") for v in IDS]
    assert released2["ssn"].tolist() == expected
    assert json.loads((tmp_path / "out2.json").read_text())["pseudonym_key"] == "key.csv"
    assert not set(released["ssn"]) - {""} & set(released2["ssn"])  # two releases: unlinkable


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pseudonymize", "age"], "'age' is not tagged identifier"),
        (["--pseudonym-key", "k.csv"], "give --pseudonymize"),
        (["--pseudonymize", "ssn", "--pseudonym-key", "people.csv"], "people.csv"),
    ],
)
def test_bad_requests_are_refused_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    source = _table(tmp_path)
    before = source.read_bytes()
    extra = [str(tmp_path / e) if e.endswith(".csv") else e for e in extra]
    assert _protect(source, tmp_path / "out.csv", *extra) != 0
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]
    assert source.read_bytes() == before


def test_pseudonyms_in_an_spss_release(tmp_path: Path) -> None:
    source = _table(tmp_path)
    out = tmp_path / "out.sav"
    assert _protect(source, out, "--pseudonymize", "ssn") == 0
    released, _meta = pyreadstat.read_sav(out)
    assert all(PSEUDONYM_PATTERN.fullmatch(v) or v == "" for v in released["ssn"])


def test_partitioned_runs_refuse_what_they_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --engine dask with an output folder reads and writes in partitions on the workers: the
    # release options of a single file are refused there, not silently dropped
    source = _table(tmp_path)
    for extra in (["--pseudonymize", "ssn"], ["--csv-sep", ";"]):
        code = main(
            ["protect", str(source), "-o", str(tmp_path / "parts"), "--keep-order", "--identifiers", "ssn,name",
             "--qi", "age,income", "-k", "3", "--method", "mdav", "--engine", "dask", *extra]
        )  # fmt: skip
        err = capsys.readouterr().err
        assert code != 0 and "not available when the table is read and written in partitions" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


def test_the_key_file_is_readable_by_its_owner_only_and_ids_are_not_said_removed(
    tmp_path: Path,
) -> None:
    import stat

    source = _table(tmp_path)
    out, key = tmp_path / "o.csv", tmp_path / "key.csv"
    key.write_text("old key\n")
    key.chmod(0o644)  # an older key's mode is not kept
    assert _protect(source, out, "--pseudonymize", "ssn", "--pseudonym-key", str(key)) == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["identifiers_removed"] == ["name"]  # ssn is released, as pseudonyms
