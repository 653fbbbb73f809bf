"""Readers (CSV/TSV/TXT, Excel, Parquet, SPSS, Stata), their error messages and the atomic writers."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microgui.core.errors import ExportRefused, InvalidInput
from microgui.core.io import (
    SUPPORTED_EXTENSIONS,
    detect_csv_format,
    file_dialog_filter,
    json_number,
    read_frame,
    read_table,
    write_csv_atomic,
    write_json_atomic,
    write_text_atomic,
)
from microgui.core.io import atomic as atomic_io
from microgui.core.table.dataset import Dataset, prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole


def sample_frame(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "person_id": [f"P{i:04d}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": rng.lognormal(10, 1, n).round(2),
            "city": rng.choice(["Oslo", "Bergen", "Tromsø"], n),
        }
    )


def write_bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- CSV encodings and delimiters -----------------------------------------------------------


CSV_TEXT = "name,city,score\nMüller,São Paulo,1.5\nŁukasz,Zürich,2\nÅsa,Tromsø,3\n"


@pytest.mark.parametrize(
    ("encoding", "bom", "detected"),
    [
        ("utf-8", b"", "utf-8"),
        ("utf-8", b"\xef\xbb\xbf", "utf-8-sig"),
        ("utf-16-le", b"\xff\xfe", "utf-16"),
        ("utf-16-be", b"\xfe\xff", "utf-16"),
    ],
)
def test_csv_unicode_encodings(tmp_path: Path, encoding: str, bom: bytes, detected: str) -> None:
    path = write_bytes(tmp_path, "people.csv", bom + CSV_TEXT.encode(encoding))
    frame = read_frame(path)
    assert list(frame.columns) == ["name", "city", "score"]  # BOM stripped from the first name
    assert frame["name"].tolist() == ["Müller", "Łukasz", "Åsa"]
    assert frame["city"].tolist() == ["São Paulo", "Zürich", "Tromsø"]
    fmt = detect_csv_format(path)
    assert fmt.encoding == detected and fmt.delimiter == "," and fmt.bom == bool(bom)


def test_csv_latin1_fallback(tmp_path: Path) -> None:
    text = "name;city\nMüller;São Paulo\nGöran;Malmö\n"
    path = write_bytes(tmp_path, "latin.csv", text.encode("cp1252"))
    frame = read_frame(path)
    assert frame["name"].tolist() == ["Müller", "Göran"]
    assert frame["city"].tolist() == ["São Paulo", "Malmö"]
    assert detect_csv_format(path).encoding == "cp1252"


def test_csv_undefined_cp1252_byte_falls_back_to_latin1(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "odd.csv", b"a,b\nx\x81y,1\n")
    assert read_frame(path)["a"].tolist() == ["x\x81y"]


def test_semicolon_with_decimal_commas(tmp_path: Path) -> None:
    text = "id;weight;height;city\n1;72,5;1,80;Lyon\n2;80,25;1,75;Nice\n3;65,0;1,62;Metz\n"
    path = write_bytes(tmp_path, "fr.csv", text.encode("utf-8"))
    frame = read_frame(path)
    assert list(frame.columns) == ["id", "weight", "height", "city"]
    assert frame["weight"].tolist() == ["72,5", "80,25", "65,0"]  # kept as text, exactly
    assert detect_csv_format(path).delimiter == ";"


def test_semicolon_one_decimal_comma_per_row(tmp_path: Path) -> None:
    # Every data row has exactly one comma: only ';' gives the header's field count.
    path = write_bytes(tmp_path, "one.csv", b"name;value\nx;1,5\ny;2,0\nz;3,25\n")
    assert list(read_frame(path).columns) == ["name", "value"]


@pytest.mark.parametrize(
    ("name", "sep"), [("tabs.tsv", "\t"), ("tabs.txt", "\t"), ("pipes.txt", "|")]
)
def test_tab_and_pipe(tmp_path: Path, name: str, sep: str) -> None:
    text = sep.join(["a", "b c", "d"]) + "\n" + sep.join(["1", "x, y", "3"]) + "\n"
    frame = read_frame(write_bytes(tmp_path, name, text.encode()))
    assert list(frame.columns) == ["a", "b c", "d"]
    assert frame.iloc[0].tolist() == ["1", "x, y", "3"]


def test_crlf_and_quoted_newline(tmp_path: Path) -> None:
    data = b'id,note\r\n1,"two\r\nlines"\r\n2,plain\r\n\r\n'
    frame = read_frame(write_bytes(tmp_path, "crlf.csv", data))
    assert frame["note"].tolist() == ["two\r\nlines", "plain"]
    assert list(frame.columns) == ["id", "note"]


def test_excel_sep_hint_line(tmp_path: Path) -> None:
    frame = read_frame(write_bytes(tmp_path, "hint.csv", b"sep=;\na;b\n1,5;2\n"))
    assert list(frame.columns) == ["a", "b"] and frame["a"].tolist() == ["1,5"]


def test_single_column(tmp_path: Path) -> None:
    frame = read_frame(write_bytes(tmp_path, "one.csv", b"value\n1\n2\n"))
    assert list(frame.columns) == ["value"] and frame["value"].tolist() == ["1", "2"]


def test_csv_is_text_and_roles_suggested(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    sample_frame().to_csv(path, index=False)
    ds = read_table(path)
    assert ds.source == path and ds.name == "people.csv"
    assert all(pd.api.types.is_string_dtype(ds.frame[c]) for c in ds.frame.columns)
    assert ds.roles["person_id"].role is AttributeRole.IDENTIFIER
    assert ds.roles["age"].kind is AttributeKind.CONTINUOUS
    assert ds.roles["income"].role is AttributeRole.QUASI_IDENTIFIER
    assert ds.value_labels == {}
    assert prepare_qi(ds).continuous.shape == (30, 2)


def test_column_names_preserved_exactly(tmp_path: Path) -> None:
    data = '\ufeff Age ,Income (€),"a,b",x  \n1,2,3,4\n'.encode()
    frame = read_frame(write_bytes(tmp_path, "names.csv", data))
    assert list(frame.columns) == [" Age ", "Income (€)", "a,b", "x  "]


def test_na_like_cells_stay_text(tmp_path: Path) -> None:
    frame = read_frame(write_bytes(tmp_path, "na.csv", b"a,b\nNA,\nnan,null\n"))
    assert frame["a"].tolist() == ["NA", "nan"] and frame["b"].tolist() == ["", "null"]
    assert not frame.isna().any().any()


# --- byte-identical round trip ----------------------------------------------------------------


def test_text_round_trip_is_byte_identical(tmp_path: Path) -> None:
    original = (
        "code,price,label,note,name\n"
        '007,1.50, x ,"say ""hi""",Ωμέγα\n'
        '010,2.0,"a, b",,Дмитрий\n'
        '0,1e3,"line\nbreak",x,李小龙\n'
        "-0,.5,'single',\"\",São Paulo\n"
    ).encode()
    src = write_bytes(tmp_path, "in.csv", original)
    frame = read_frame(src)
    assert frame["code"].tolist() == ["007", "010", "0", "-0"]
    assert frame["price"].tolist() == ["1.50", "2.0", "1e3", ".5"]
    out = tmp_path / "out.csv"
    write_csv_atomic(frame, out, protect_from=src)
    assert out.read_bytes() == original.replace(b',"",', b",,")  # "" is not standard quoting


def test_round_trip_of_a_frame(tmp_path: Path) -> None:
    frame = pd.DataFrame({"x": [0.1 + 0.2, 1e-300, 123456789.123], "t": ["a", "b", "c"]})
    out = tmp_path / "floats.csv"
    write_csv_atomic(frame, out)
    back = read_frame(out)
    assert [float(v) for v in back["x"]] == frame["x"].tolist()
    assert b"\r" not in out.read_bytes()


# --- Excel, Parquet, SPSS, Stata ----------------------------------------------------------------


def test_excel_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    df = sample_frame()
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame({"note": ["cover sheet"]}).to_excel(writer, sheet_name="About", index=False)
        df.to_excel(writer, sheet_name="Data", index=False)
    ds = read_table(path, sheet="Data")
    assert list(ds.frame.columns) == list(df.columns)
    assert ds.frame["age"].tolist() == df["age"].tolist()
    assert np.allclose(ds.frame["income"].to_numpy(dtype=float), df["income"].to_numpy())
    assert ds.frame["city"].tolist() == df["city"].tolist()
    assert ds.roles["age"].kind is AttributeKind.CONTINUOUS
    assert list(read_frame(path).columns) == ["note"]  # the first sheet by default
    assert list(read_frame(path, sheet=1).columns) == list(df.columns)


def test_excel_errors(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    sample_frame().to_excel(path, index=False, sheet_name="Data")
    with pytest.raises(
        InvalidInput, match=r"'book.xlsx' has no sheet named 'Nope'; its sheets are 'Data'"
    ):
        read_table(path, sheet="Nope")
    with pytest.raises(InvalidInput, match=r"no sheet number 3"):
        read_table(path, sheet=3)
    head = tmp_path / "head.xlsx"
    pd.DataFrame({"a": [], "b": []}).to_excel(head, index=False)
    with pytest.raises(
        InvalidInput, match=r"'head.xlsx' has a header but no records \(zero data rows\)"
    ):
        read_table(head)
    dup = tmp_path / "dup.xlsx"
    pd.DataFrame([["a", "a"], [1, 2]]).to_excel(dup, index=False, header=False)
    with pytest.raises(
        InvalidInput, match=r"'dup.xlsx' has two columns named 'a' \(column A .* and column B"
    ):
        read_table(dup)
    blank = tmp_path / "blank.xlsx"
    pd.DataFrame([["a", None, "c"], [1, 2, 3]]).to_excel(blank, index=False, header=False)
    with pytest.raises(
        InvalidInput, match=r"column B of sheet 'Sheet1' of 'blank.xlsx' has no name"
    ):
        read_table(blank)
    broken = write_bytes(tmp_path, "broken.xlsx", b"PK\x03\x04 not really a workbook")
    with pytest.raises(InvalidInput, match=r"'broken.xlsx' cannot be read as an Excel workbook"):
        read_table(broken)


def test_xls_without_xlrd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "xlrd" else real(n, *a)
    )
    path = write_bytes(tmp_path, "old.xls", b"\xd0\xcf\x11\xe0 something")
    with pytest.raises(InvalidInput, match=r"'old.xls' is an old Excel .xls workbook .* xlrd"):
        read_table(path)


def test_parquet_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "table.parquet"
    df = sample_frame()
    df.to_parquet(path, engine="pyarrow", index=False)
    ds = read_table(path)
    pd.testing.assert_frame_equal(ds.frame, df, check_dtype=False, check_column_type=False)
    assert ds.roles["person_id"].role is AttributeRole.IDENTIFIER
    indexed = tmp_path / "indexed.parquet"
    df.set_index("person_id").to_parquet(indexed, engine="pyarrow")
    assert list(read_frame(indexed).columns) == list(df.columns)  # the index becomes a column


def test_parquet_errors(tmp_path: Path) -> None:
    broken = write_bytes(tmp_path, "broken.parquet", b"PAR1 garbage")
    with pytest.raises(InvalidInput, match=r"'broken.parquet' cannot be read as a Parquet file"):
        read_table(broken)
    empty = tmp_path / "empty.parquet"
    sample_frame().iloc[:0].to_parquet(empty, index=False)
    with pytest.raises(InvalidInput, match=r"'empty.parquet' has a header but no records"):
        read_table(empty)


def labelled_frame() -> tuple[pd.DataFrame, dict[str, dict[float, str]]]:
    df = pd.DataFrame(
        {
            "id": [float(i) for i in range(1, 9)],
            "educ": [1.0, 3.0, 2.0, 2.0, 1.0, 3.0, np.nan, 2.0],
            "region": [2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 2.0, 1.0],
            "income": [10.5, 20.0, 30.0, -99.0, 41.0, 12.0, 13.0, 14.0] + [],
            "name": ["a", "b", "c", "d", "e", "f", "g", "h"],
        }
    )
    labels = {
        # codes 1..4 in code order; 4 "doctorate" is never observed but belongs to the order
        "educ": {3.0: "tertiary", 1.0: "primary", 2.0: "secondary", 4.0: "doctorate"},
        "region": {1.0: "North", 2.0: "South"},
        "income": {-99.0: "refused"},
    }
    return df, labels


def test_spss_value_labels(tmp_path: Path) -> None:
    import pyreadstat

    df, labels = labelled_frame()
    df["income"] = np.arange(8) * 1000.0 + 7.0  # 8 unlabelled incomes ...
    df.loc[3, "income"] = -99.0  # ... and one labelled special code
    df = pd.concat([df] * 2, ignore_index=True)
    df["id"] = np.arange(1.0, 17.0)
    df.loc[8:, "income"] += 5.0  # 15 distinct unlabelled values: a measurement, stays numeric
    path = tmp_path / "survey.sav"
    pyreadstat.write_sav(
        df, os.fspath(path), variable_value_labels=labels, variable_measure={"region": "nominal"}
    )
    ds = read_table(path)
    educ = ds.frame["educ"]
    assert isinstance(educ.dtype, pd.CategoricalDtype) and educ.cat.ordered
    assert list(educ.cat.categories) == ["primary", "secondary", "tertiary", "doctorate"]
    assert educ.tolist()[:6] == [
        "primary",
        "tertiary",
        "secondary",
        "secondary",
        "primary",
        "tertiary",
    ]
    assert pd.isna(educ.iloc[6])
    assert ds.roles["educ"].kind is AttributeKind.ORDINAL
    assert ds.roles["educ"].order == ("primary", "secondary", "tertiary", "doctorate")
    region = ds.frame["region"]
    assert isinstance(region.dtype, pd.CategoricalDtype) and not region.cat.ordered
    assert region.tolist()[:3] == ["South", "North", "North"]
    assert pd.api.types.is_float_dtype(ds.frame["income"])
    assert ds.value_labels == {
        "educ": {1: "primary", 2: "secondary", 3: "tertiary", 4: "doctorate"},
        "region": {1: "North", 2: "South"},
        "income": {-99: "refused"},
    }
    assert ds.frame["name"].tolist()[:3] == ["a", "b", "c"]
    zsav = tmp_path / "survey.zsav"
    pyreadstat.write_sav(df, os.fspath(zsav), compress=True, variable_value_labels=labels)
    assert read_table(zsav).value_labels["educ"][3] == "tertiary"


def test_spss_ordinal_feeds_prepare_qi(tmp_path: Path) -> None:
    import pyreadstat

    df, labels = labelled_frame()
    df = df.dropna()
    path = tmp_path / "small.sav"
    pyreadstat.write_sav(df, os.fspath(path), variable_value_labels={"educ": labels["educ"]})
    ds = read_table(path)
    roles = ds.roles.replace("educ", ds.roles["educ"].with_role(AttributeRole.QUASI_IDENTIFIER))
    qi = prepare_qi(ds.with_roles(roles))
    j = qi.ordinal_names.index("educ")
    assert qi.ordinal[:, j].tolist() == [0, 2, 1, 1, 0, 2, 1]
    assert qi.ordinal_orders[j] == ("primary", "secondary", "tertiary", "doctorate")


def test_stata_value_labels(tmp_path: Path) -> None:
    import pyreadstat

    df, labels = labelled_frame()
    df = df.fillna(1.0)
    df["educ"] = df["educ"].astype(int)
    path = tmp_path / "survey.dta"
    pyreadstat.write_dta(
        df,
        os.fspath(path),
        variable_value_labels={"educ": {int(k): v for k, v in labels["educ"].items()}},
    )
    ds = read_table(path)
    assert ds.value_labels == {
        "educ": {1: "primary", 2: "secondary", 3: "tertiary", 4: "doctorate"}
    }
    educ = ds.frame["educ"]
    assert educ.cat.ordered and educ.tolist()[:3] == ["primary", "tertiary", "secondary"]
    assert ds.roles["educ"].order == ("primary", "secondary", "tertiary", "doctorate")
    assert ds.frame["name"].tolist()[:2] == ["a", "b"]


def test_partly_labelled_codes_keep_code_order(tmp_path: Path) -> None:
    import pyreadstat

    df = pd.DataFrame({"id": np.arange(6.0), "level": [1.0, 2.0, 9.0, 3.0, 1.0, 2.0]})
    path = tmp_path / "partial.sav"
    pyreadstat.write_sav(
        df, os.fspath(path), variable_value_labels={"level": {1.0: "low", 3.0: "high", 9.0: "low"}}
    )
    level = read_frame(path)["level"]
    # 2 has no label (shown as "2"); two codes labelled "low" are told apart by their code.
    assert list(level.cat.categories) == ["low (1)", "2", "high", "low (9)"]
    assert level.tolist() == ["low (1)", "2", "low (9)", "high", "low (1)", "2"]


@pytest.mark.parametrize(
    ("name", "what"), [("bad.sav", "an SPSS"), ("bad.zsav", "an SPSS"), ("bad.dta", "a Stata")]
)
def test_stat_files_unreadable(tmp_path: Path, name: str, what: str) -> None:
    path = write_bytes(tmp_path, name, b"this is not a statistics file")
    with pytest.raises(InvalidInput, match=rf"'{name}' cannot be read as {what} file"):
        read_table(path)


def test_stat_file_without_records(tmp_path: Path) -> None:
    import pyreadstat

    path = tmp_path / "none.sav"
    pyreadstat.write_sav(pd.DataFrame({"a": pd.Series([], dtype=float)}), os.fspath(path))
    with pytest.raises(InvalidInput, match=r"'none.sav' has a header but no records"):
        read_table(path)


# --- errors ---------------------------------------------------------------------------------------


def test_not_found(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"file 'missing.csv' was not found in folder"):
        read_table(tmp_path / "missing.csv")


def test_folder_instead_of_file(tmp_path: Path) -> None:
    folder = tmp_path / "data.csv"
    folder.mkdir()
    with pytest.raises(InvalidInput, match=r"'data.csv' is a folder, not a file"):
        read_table(folder)


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"file 'empty.csv' is empty \(0 bytes\)"):
        read_table(write_bytes(tmp_path, "empty.csv", b""))
    with pytest.raises(InvalidInput, match=r"file 'blank.csv' holds only blank lines"):
        read_table(write_bytes(tmp_path, "blank.csv", b"\n\r\n  \n"))


def test_header_only(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidInput, match=r"file 'head.csv' has a header but no records \(zero data rows\)"
    ):
        read_table(write_bytes(tmp_path, "head.csv", b"a,b,c\n"))


def test_unknown_extension(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, "table.json", b"{}")
    with pytest.raises(
        InvalidInput, match=r"'table.json' has extension '.json'.*\.csv, \.tsv.*\.sav.*\.dta"
    ):
        read_table(path)
    with pytest.raises(InvalidInput, match=r"'README' has no extension"):
        read_table(write_bytes(tmp_path, "README", b"a,b\n1,2\n"))


def test_uppercase_extension_is_accepted(tmp_path: Path) -> None:
    assert read_frame(write_bytes(tmp_path, "UP.CSV", b"a,b\n1,2\n")).shape == (1, 2)


def test_binary_disguised_as_csv(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidInput, match=r"file 'data.csv' is a binary file \(it contains NUL bytes\)"
    ):
        read_table(write_bytes(tmp_path, "data.csv", b"\x00\x01\x02garbage\x00"))
    xlsx = tmp_path / "renamed.xlsx"
    sample_frame().to_excel(xlsx, index=False)
    fake = write_bytes(tmp_path, "renamed.csv", xlsx.read_bytes())
    with pytest.raises(
        InvalidInput, match=r"'renamed.csv' is a binary file .* looks like an Excel .xlsx"
    ):
        read_table(fake)


def test_ragged_rows_name_the_line(tmp_path: Path) -> None:
    data = b"a,b,c\n1,2,3\n4,5,6\n7,8,9,10\n11,12\n"
    with pytest.raises(
        InvalidInput,
        match=r"line 4 of 'ragged.csv' has 4 field\(s\) but the header has 3 .*\(1 more such line",
    ):
        read_table(write_bytes(tmp_path, "ragged.csv", data))


def test_ragged_rows_line_number_counts_quoted_newlines(tmp_path: Path) -> None:
    data = b'a;b\n1;"x\ny"\n2\n'
    with pytest.raises(
        InvalidInput, match=r"line 4 of 'r.csv' has 1 field\(s\) but the header has 2 .*';'"
    ):
        read_table(write_bytes(tmp_path, "r.csv", data))


def test_bad_quoting_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"line 3 of 'q.csv' cannot be parsed"):
        read_table(write_bytes(tmp_path, "q.csv", b'a,b\n1,2\n"x"y,3\n'))


def test_duplicate_column_names(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidInput,
        match=r"'dup.csv' has two columns named 'age' \(column 1 \(line 1\) and column 3 \(line 1\)\)",
    ):
        read_table(write_bytes(tmp_path, "dup.csv", b"age,sex,age\n1,2,3\n"))


def test_blank_column_names(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"column 2 \(line 1\) of 'blank.csv' has no name;"):
        read_table(write_bytes(tmp_path, "blank.csv", b"a, ,c\n1,2,3\n"))
    with pytest.raises(
        InvalidInput,
        match=r"column 3 .* of 'trail.csv' has no name \(is there a delimiter at the end",
    ):
        read_table(write_bytes(tmp_path, "trail.csv", b"a,b,\n1,2,\n"))


def test_messages_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        read_table(write_bytes(tmp_path, "x.csv", b"a,b\n1\n"))
    assert "\n" not in str(info.value) and "x.csv" in str(info.value)


# --- atomic writers --------------------------------------------------------------------------------


def test_write_csv_atomic_basics(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y, z"]})
    write_csv_atomic(frame, out)
    assert out.read_bytes() == b'a,b\n1,x\n2,"y, z"\n'
    write_csv_atomic(frame.iloc[:1], str(out))  # replaces an existing file
    assert out.read_bytes() == b"a,b\n1,x\n"
    assert leftovers(tmp_path) == []


def test_written_file_has_usual_permissions(tmp_path: Path) -> None:
    if os.name == "nt":
        pytest.skip("POSIX permissions")
    out = tmp_path / "perm.csv"
    write_text_atomic("x\n", out)
    umask = os.umask(0)
    os.umask(umask)
    assert (out.stat().st_mode & 0o777) == (0o666 & ~umask)
    out.chmod(0o640)
    write_text_atomic("y\n", out)
    assert (out.stat().st_mode & 0o777) == 0o640


def test_refuses_to_overwrite_input(tmp_path: Path) -> None:
    src = write_bytes(tmp_path, "in.csv", b"a\n1\n")
    with pytest.raises(ExportRefused, match=r"refusing to write 'in.csv': it is the input file"):
        write_csv_atomic(pd.DataFrame({"a": [2]}), src, protect_from=src)
    other_spelling = tmp_path / "sub" / ".." / "in.csv"
    (tmp_path / "sub").mkdir()
    with pytest.raises(ExportRefused, match="input file"):
        write_text_atomic("x", other_spelling, protect_from=src)
    link = tmp_path / "hard.csv"
    os.link(src, link)
    with pytest.raises(ExportRefused, match="input file"):
        write_json_atomic({}, link, protect_from=src)
    assert src.read_bytes() == b"a\n1\n"
    # An input that does not exist (any more) is compared by resolved path.
    gone = tmp_path / "gone.csv"
    with pytest.raises(ExportRefused, match="input file"):
        write_text_atomic("x", gone, protect_from=tmp_path / "." / "gone.csv")
    assert not gone.exists() and leftovers(tmp_path) == []


def test_failed_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.csv"
    out.write_bytes(b"old\n")

    def boom(self: pd.DataFrame, *args: object, **kwargs: object) -> None:
        handle = args[0]
        handle.write("partial,")  # type: ignore[attr-defined]
        raise RuntimeError("serialisation failed")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(RuntimeError, match="serialisation failed"):
        write_csv_atomic(pd.DataFrame({"a": [1]}), out)
    assert leftovers(tmp_path) == [] and out.read_bytes() == b"old\n"


def test_disk_full_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.json"

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_io.os, "fsync", no_space)
    with pytest.raises(ExportRefused, match=r"disk is full: '.*out.json' could not be written"):
        write_json_atomic({"k": 5}, out)
    assert leftovers(tmp_path) == [] and not out.exists()


def test_failed_replace_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(src: object, dst: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(atomic_io.os, "replace", denied)
    with pytest.raises(ExportRefused, match=r"permission denied in folder"):
        write_text_atomic("x", tmp_path / "t.txt")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_or_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ExportRefused, match=r"folder '.*nowhere' does not exist"):
        write_text_atomic("x", tmp_path / "nowhere" / "t.txt")
    with pytest.raises(ExportRefused, match=r"it is a folder"):
        write_text_atomic("x", tmp_path)
    if os.name == "nt" or os.geteuid() == 0:
        return  # permissions do not stop Windows ACL-less tests or root
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ExportRefused, match=r"permission denied in folder '.*locked'"):
            write_csv_atomic(pd.DataFrame({"a": [1]}), locked / "out.csv")
    finally:
        locked.chmod(0o700)


def test_text_and_json_writers(tmp_path: Path) -> None:
    write_text_atomic("line1\r\nline2\n", tmp_path / "t.txt")
    assert (tmp_path / "t.txt").read_bytes() == b"line1\r\nline2\n"  # no newline translation
    write_json_atomic({"name": "São Paulo", "k": 5}, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert json.loads(text) == {"name": "São Paulo", "k": 5} and text.endswith("}\n")
    with pytest.raises(TypeError):
        write_json_atomic({"bad": object()}, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists() and leftovers(tmp_path) == []


# --- constants --------------------------------------------------------------------------------------


def test_dialog_filter_lists_every_extension() -> None:
    flt = file_dialog_filter()
    assert flt.startswith("Tables (*.csv ") and flt.endswith(";;All files (*)")
    first = flt.split(";;")[0]
    assert all(f"*{ext}" in first for ext in SUPPORTED_EXTENSIONS)
    assert all(ext == ext.lower() and ext.startswith(".") for ext in SUPPORTED_EXTENSIONS)


def test_excel_messages_name_the_sheet_rows(tmp_path: Path) -> None:
    import openpyxl

    from microgui.core.table.roles import roles_from_lists

    book = openpyxl.Workbook()
    sheet = book.active
    sheet["B3"], sheet["C3"] = "age", "income"  # the table starts at row 3, column B
    for row, (age, income) in zip(
        (4, 5, 7, 8), ((30, 2), (41, "abc"), (52, 6), (63, 9)), strict=True
    ):
        sheet[f"B{row}"], sheet[f"C{row}"] = age, income  # row 6 is blank
    path = tmp_path / "people.xlsx"
    book.save(path)
    loaded = read_table(path)
    data = Dataset(loaded.frame, roles_from_lists(["age", "income"], qi=["age", "income"]), path)
    with pytest.raises(InvalidInput, match=r"row 5 holds 'abc'"):
        prepare_qi(data)


def test_json_number() -> None:
    assert json_number(np.float64(1.5)) == 1.5
    assert json_number(np.int64(3)) == 3 and isinstance(json_number(np.int64(3)), int)
    assert json_number(float("nan")) is None
    assert json_number(None) is None


def test_the_package_offers_every_name_the_single_module_did() -> None:
    """core/io.py became the package core/io/ (issue 28): what scripts and the other modules
    imported from ``microgui.core.io`` is still there, the same object as in its new module."""
    import importlib

    import microgui.core.io as package
    from microgui.core.table import dataset

    offered = {
        "reader": "read_table read_frame _read_kind",
        "sniff": "CsvFormat detect_csv_format",
        "csv": "_read_csv _read_csv_with_csv_module _read_with_csv_module _arrow_table",
        "excel": "SHEETS_ATTR ExcelEngine _read_sheet _pandas_sheet _sheet_xml_scan",
        "stat": "STAT_ATTR MissingCodes",
        "extensions": "SUPPORTED_EXTENSIONS TEXT_EXTENSIONS SPSS_EXTENSIONS file_dialog_filter",
        "memory": "MAX_WORKBOOK_XML_BYTES available_memory _parquet_shape _stat_shape",
        "fingerprint": "FINGERPRINT_ATTR file_sha256",
        "atomic": "FileWriter EncodedWriter DerivedWriter check_write_targets write_files_atomic "
        "write_text_atomic ProtectedPaths",
        "csv_write": "csv_writer write_csv_atomic text_cells CSV_CHUNK_ROWS _number_texts "
        "_to_csv_rows _write_csv",
        "strict_json": "json_text json_number write_json_atomic",
    }
    for module_name, names in offered.items():
        module = importlib.import_module(f"microgui.core.io.{module_name}")
        for name in names.split():
            assert getattr(package, name) is getattr(module, name), name
    assert package.check_width is dataset.check_width
    assert package.MAX_COLUMNS == dataset.MAX_COLUMNS
    assert all(hasattr(package, name) for name in package.__all__)
