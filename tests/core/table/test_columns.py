"""Issue 12, columns, types and the Python API: name matching (finding 4, ' age', '<' in an
ordinal category), typed columns (5, 9), seeds and numeric arguments (8), the API's input
and release check (12, individual ranking), non-finite values and strict JSON (13), no
RuntimeWarning on stderr."""

from __future__ import annotations

import datetime
import decimal
import json
import unicodedata
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.cli import main
from microgui.core.errors import (
    ExportRefused,
    InvalidInput,
    InvalidParameter,
    InvalidRoles,
    MicroguiError,
)
from microgui.core.io import json_text
from microgui.core.runs import RunSpec, parse_seed, run_protection
from microgui.core.runs.sweep import SweepSpec, run_sweep
from microgui.core.table.dataset import Dataset, column_type, prepare_qi, suggest_roles
from microgui.core.table.roles import AttributeRole, resolve_column, roles_from_lists
from tests.cli_argv import protect_argv


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_clean_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("microgui: error: ") and "Traceback" not in err
    return lines[0]


def strict_json(text: str) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def small(n: int = 12, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(float),
            "income": rng.normal(100, 20, n).round(2),
            "edu": (["low", "mid", "high"] * n)[:n],
        }
    )


# --- finding 4: exact names win, normalised names must be unique -----------------------------
NFC = unicodedata.normalize("NFC", "âge")
NFD = unicodedata.normalize("NFD", "âge")


@pytest.mark.parametrize(
    ("columns", "given"),
    [
        (["ssn", "ssn "], " ssn"),  # spaces at the ends
        (["ssn", " ssn"], "ssn "),
        (["SSN", "ssn"], "Ssn"),  # case
        ([NFC, NFD], "ÂGE"),  # Unicode form (and case)
        (["ssn", "SSN "], "sSn"),
    ],
)
def test_names_equal_after_normalisation_are_an_ambiguity(columns: list[str], given: str) -> None:
    with pytest.raises(InvalidRoles) as info:
        roles_from_lists([*columns, "age"], qi=["age"], identifiers=[given])
    message = str(info.value)
    assert "\n" not in message
    for col in columns:
        assert repr(col) in message  # both names shown, spaces visible
    with pytest.raises(InvalidRoles):
        resolve_column(given, columns, "--identifiers")


@pytest.mark.parametrize(
    ("columns", "given", "meant"),
    [
        (["ssn", "ssn "], "ssn ", "ssn "),  # exact always wins (the issue's case)
        (["ssn", "ssn "], "ssn", "ssn"),
        ([" age", "income"], " age", " age"),
        ([" age", "income"], "age", " age"),  # unique after stripping
        (["Income", "age"], "income", "Income"),
        ([NFD, "x"], NFC, NFD),
        (["a,b", "c"], "A,B ", "a,b"),
    ],
)
def test_exact_then_unique_normalised(columns: list[str], given: str, meant: str) -> None:
    assert resolve_column(given, columns, "--qi") == meant


def test_issue_case_removes_the_real_ssn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 12
    src = tmp_path / "people.csv"
    pd.DataFrame(
        {
            "id": range(n),
            "ssn": ["decoy"] * n,
            "ssn ": [f"123-45-{i:04d}" for i in range(n)],
            "age": np.arange(n) * 3.0,
        }
    ).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    argv = protect_argv(src, out, "--method", "mdav", "-k", "3", "--qi", "age")
    code, _, err = run([*argv, "--identifiers", "id,ssn "], capsys)
    assert code == 0, err
    written = pd.read_csv(out, dtype=str)
    assert "ssn " not in written.columns and "ssn" in written.columns
    assert not written.apply(lambda c: c.str.contains("123-45")).any().any()
    out.unlink()
    # spaced out after the comma: ' ssn ' matches both once stripped: refused, nothing written
    code, _, err = run([*argv, "--identifiers", "id, ssn "], capsys)
    assert code == 2 and "'ssn'" in one_clean_line(err) and "'ssn '" in err
    assert not out.exists()


def test_leading_space_column_and_spaced_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "t.csv"
    frame = small()
    frame.columns = [" age", "income", "edu"]
    frame.to_csv(src, index=False)
    out = tmp_path / "o.csv"
    base = protect_argv(src, out, "--method", "mdav-generic", "-k", "3")
    code, _, err = run([*base, "--qi", " age, income ,EDU", "--nominal", "edu"], capsys)
    assert code == 0, err
    written = pd.read_csv(out)
    assert list(written.columns) == [" age", "income", "edu"]
    assert written.groupby([" age", "income", "edu"]).size().min() >= 3


def test_every_command_matches_names_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "t.csv", tmp_path / "o.csv"
    frame = small()
    frame["AGE"] = frame["age"]  # 'Age' is now ambiguous, 'income ' is not
    frame.to_csv(src, index=False)
    code, _, err = run(["dependency-tree", str(src), "--attributes", "age, income ,edu"], capsys)
    assert code == 0, err
    code, _, err = run(["dependency-tree", str(src), "--attributes", "Age,income"], capsys)
    assert code == 2 and "'AGE'" in one_clean_line(err) and "'age'" in err
    code, _, err = run(
        protect_argv(src, out, "--method", "mdav", "-k", "3", "--qi", "age, Income"),
        capsys,
    )
    assert code == 0, err
    code, _, err = run(["evaluate", str(src), str(out), "--qi", "income ,age"], capsys)
    assert code == 0, err
    code, _, err = run(["evaluate", str(src), str(out), "--qi", "Age"], capsys)
    assert code == 2 and "'AGE'" in one_clean_line(err)
    code, _, err = run(
        ["sweep", str(src), "--qi", " income", "--methods", "mdav, mst", "--k", "3, 4",
         "--workers", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0 and "failed" not in err, err


def test_ordinal_category_with_less_than_sign(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 12
    src = tmp_path / "t.csv"
    pd.DataFrame({"score": (["<10", "10-20", ">20"] * n)[:n], "x=y": np.arange(n) * 1.0}).to_csv(
        src, index=False
    )
    out = tmp_path / "o.csv"
    code, _, err = run(
        protect_argv(src, out, '--method', 'mdav-generic', '-k', '3', '--qi', 'score,x=y', '--ordinal', 'score=\\<10<10-20<>20', '--ordinal', 'x\\=y'),
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert set(pd.read_csv(out)["score"]) <= {"<10", "10-20", ">20"}
    # without the escape the order has an empty category: a clean usage error
    code, _, err = run(
        protect_argv(src, out, '--method', 'mdav-generic', '-k', '3', '--qi', 'score', '--ordinal', 'score=<10<10-20<>20'),
        capsys,
    )  # fmt: skip
    assert code == 2 and "'<'" in one_clean_line(err)


def test_strata_and_hierarchy_names_are_matched_like_roles() -> None:
    frame = small(24)
    frame["region"] = ["north", "south"] * 12
    res = microgui.protect(frame, qi="age", strata=" Region", k=3, seed=1)
    assert res.run.spec.strata == ("region",)
    frame["REGION"] = frame["region"]
    with pytest.raises(InvalidRoles, match="'REGION'"):
        microgui.protect(frame, qi="age", strata="Region ", k=3, seed=1)


# --- findings 5 and 9: typed columns ----------------------------------------------------------
def typed_columns(n: int) -> dict[str, pd.Series]:
    import pyarrow as pa

    days = [datetime.date(2020, 1, 1) + datetime.timedelta(days=(i * 7) % 5) for i in range(n)]
    return {
        "date": pd.Series(days, dtype=object),
        "datetime": pd.Series(pd.to_datetime(days)),
        "datetime_tz": pd.Series(pd.to_datetime(days).tz_localize("UTC")),
        "timedelta": pd.Series(pd.to_timedelta([(i * 3) % 11 - 2 for i in range(n)], unit="D")),
        "period": pd.Series(pd.PeriodIndex(days, freq="M")),
        "decimal": pd.Series([decimal.Decimal(i % 4) / 3 for i in range(n)], dtype=object),
        "category": pd.Series(pd.Categorical((["a", "b", "c"] * n)[:n])),
        "ordered": pd.Series(
            pd.Categorical(
                (["lo", "mid", "hi"] * n)[:n], categories=["lo", "mid", "hi"], ordered=True
            )
        ),
        "bool": pd.Series([i % 2 == 0 for i in range(n)]),
        "boolean": pd.Series([i % 2 == 0 for i in range(n)], dtype="boolean"),
        "Int64": pd.Series([i % 4 for i in range(n)], dtype="Int64"),
        "Float64": pd.Series([i % 4 + 0.5 for i in range(n)], dtype="Float64"),
        "string": pd.Series((["x", "y", "z"] * n)[:n], dtype="string"),
        "list": pd.Series([[1, 2], [3]] * (n // 2), dtype=object),
        "dict": pd.Series([{"a": 1}, {"b": 2}] * (n // 2), dtype=object),
        "bytes": pd.Series([b"\x00a", b"\x00b"] * (n // 2), dtype=object),
        "arrow_list": pd.Series(
            [[1, 2], [3]] * (n // 2), dtype=pd.ArrowDtype(pa.list_(pa.int64()))
        ),
        "arrow_struct": pd.Series(
            [{"a": 1}, {"a": 2}] * (n // 2), dtype=pd.ArrowDtype(pa.struct([("a", pa.int64())]))
        ),
        "arrow_map": pd.Series(
            [[("k", 1)], [("k", 2)]] * (n // 2),
            dtype=pd.ArrowDtype(pa.map_(pa.string(), pa.int64())),
        ),
        "arrow_binary": pd.Series([b"a", b"b"] * (n // 2), dtype=pd.ArrowDtype(pa.binary())),
        "complex": pd.Series(np.arange(n) + 1j),
        "with_na": pd.Series([1, None] * (n // 2), dtype="Int64"),
    }


#: per column: continuous QI accepted?, nominal/ordinal QI accepted?
NOT_QI = {"list", "dict", "bytes", "arrow_list", "arrow_struct", "arrow_map", "arrow_binary"}
NOT_CONTINUOUS = {"date", "datetime", "datetime_tz", "timedelta", "period", "complex"}
NOT_CONTINUOUS |= {"category", "ordered", "string"}  # text categories are no numbers


@pytest.mark.parametrize("name", list(typed_columns(12)))
def test_every_dtype_with_every_role(name: str) -> None:
    n = 12
    frame = small(n)
    frame[name] = typed_columns(n)[name].to_numpy() if name == "period" else typed_columns(n)[name]
    frame[name] = typed_columns(n)[name]
    suggest_roles(frame)  # never a crash
    if name in NOT_QI:
        assert suggest_roles(frame)[name].role is AttributeRole.NON_CONFIDENTIAL
    for option in ("pass", "confidential", "identifiers"):
        kwargs: dict[str, Any] = {option: [name]} if option != "pass" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", microgui.UnsafeReleaseWarning)
            res = microgui.protect(frame, qi=["age", "income"], k=3, seed=1, **kwargs)
        if option == "identifiers":
            assert name not in res.frame.columns
        else:  # passes through unchanged, dtype and all
            pd.testing.assert_series_equal(res.frame[name], frame[name])
    for kind in ("continuous", "nominal", "ordinal"):
        kinds: dict[str, Any] = {"nominal": [name]} if kind == "nominal" else {}
        if kind == "ordinal":
            kinds = {"ordinal": {name: None}}
        try:
            res = microgui.protect(
                frame, qi=["age", name], method="mdav-generic", k=3, seed=1, **kinds
            )
        except MicroguiError as exc:
            assert "\n" not in str(exc) and repr(name) in str(exc)
            expected_refusal = (
                name in NOT_QI
                or name == "with_na"
                or (kind == "continuous" and name in NOT_CONTINUOUS)
            )
            assert expected_refusal, f"{name} as {kind}: {exc}"
        else:
            assert name not in NOT_QI and name != "with_na"
            assert not (kind == "continuous" and name in NOT_CONTINUOUS)
            assert res.check.ok, res.check.problems


@pytest.mark.parametrize("name", ["datetime", "date", "timedelta", "period", "ordered"])
def test_ordinal_natural_order_is_the_values_order(name: str) -> None:
    n = 12
    frame = small(n)
    frame[name] = typed_columns(n)[name]
    qi = prepare_qi(Dataset(frame, roles_from_lists(list(frame), qi=[name], ordinal=[name])))
    order = qi.ordinal_orders[0]
    values = frame[name]
    if name == "ordered":
        expected = [c for c in values.cat.categories if c in set(values)]
    else:
        expected = [str(v) for v in values.drop_duplicates().sort_values()]
    assert list(order) == expected


def test_dates_refused_as_continuous_with_the_way_out() -> None:
    frame = small()
    frame["born"] = pd.date_range("1990-01-01", periods=len(frame), freq="400D")
    with pytest.raises(InvalidRoles, match=r"'born'.*dates.*ordinal"):
        microgui.protect(frame, qi=["age", "born"], k=3)


def test_parquet_nested_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 8
    src = tmp_path / "nested.parquet"
    pq.write_table(
        pa.table(
            {
                "age": list(range(20, 20 + n)),
                "income": [float(i * 7 % 5) for i in range(n)],
                "tags": pa.array([[1, 2], [3]] * (n // 2), pa.list_(pa.int64())),
                "st": pa.array([{"a": 1}] * n, pa.struct([("a", pa.int64())])),
                "mp": pa.array([[("k", 1)]] * n, pa.map_(pa.string(), pa.int64())),
                "bin": pa.array([b"\x00\x01"] * n, pa.binary()),
            }
        ),
        src,
    )
    from microgui.core.io import read_table

    loaded = read_table(src)
    roles = suggest_roles(loaded.frame)
    assert all(roles[c].role is AttributeRole.NON_CONFIDENTIAL for c in ("tags", "st", "mp"))
    out = tmp_path / "o.csv"
    base = protect_argv(src, out, "--method", "mdav-generic", "-k", "2")
    code, _, err = run([*base, "--qi", "age,income"], capsys)
    assert code == 0, err  # pass-through: written (as text) without a crash
    assert len(pd.read_csv(out)) == n
    out.unlink()
    for col in ("tags", "st", "mp", "bin"):
        code, _, err = run([*base, "--qi", f"age,{col}", "--nominal", col], capsys)
        assert code == 2 and repr(col) in one_clean_line(err) and "quasi-identifier" in err
        assert not out.exists()


def test_column_type_words() -> None:
    cols = typed_columns(4)
    assert column_type(cols["list"]) == column_type(cols["arrow_struct"]) == "nested"
    assert column_type(cols["bytes"]) == column_type(cols["arrow_binary"]) == "binary"
    assert column_type(cols["datetime_tz"]) == "datetime"
    assert column_type(cols["decimal"]) == "decimal"
    assert column_type(pd.Series(["a", "b"])) == "text"


# --- finding 8: seeds and every numeric argument ------------------------------------------------
BAD_SEEDS: list[object] = ["abc", 1.5, True, -1, 2**200, "-1", "1e3", "", float("nan"), [1]]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seed_api(seed: object) -> None:
    with pytest.raises(InvalidParameter, match="seed"):
        microgui.protect(small(), qi=["age"], k=3, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="seed"):
        SweepSpec.make(["mdav"], [3], seed=seed)  # type: ignore[arg-type]


def test_seed_range_and_direct_specs() -> None:
    assert parse_seed(0) == 0 and parse_seed(" 42 ") == 42 and parse_seed(np.int64(7)) == 7
    assert parse_seed(2**64 - 1) == 2**64 - 1
    dataset = Dataset(small(), roles_from_lists(list(small()), qi=["age"]))
    with pytest.raises(InvalidParameter, match="seed"):  # a spec not made by RunSpec.make
        run_protection(dataset, RunSpec("mdav", 3, seed=-1))


@pytest.mark.parametrize("seed", ["-1", "abc", "1.5", str(2**200)])
@pytest.mark.parametrize("command", ["protect", "sweep"])
def test_bad_seed_cli(
    seed: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "t.csv"
    small().to_csv(src, index=False)
    out = tmp_path / "o.csv"
    if command == "protect":
        argv = ["protect", str(src), "-o", str(out), "--keep-order", "--method", "mdav", "-k", "3"]
    else:
        argv = ["sweep", str(src), "--methods", "mdav", "--k", "3", "--json", str(out)]
    code, stdout, err = run([*argv, "--qi", "age", "--seed", seed], capsys)
    assert code == 2 and "--seed" in one_clean_line(err)
    assert "runs" not in err and stdout == ""  # refused before any run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": "abc"},
        {"k": 2.5},
        {"k": True},
        {"k": 0},
        {"k": -3},
        {"k": 10**30},
        {"workers": 0, "strata": "edu"},
        {"workers": 1.5, "strata": "edu"},
        {"workers": "x", "strata": "edu"},
        {"block_size": -3},
        {"block_size": 2.5},
        {"block_size": "x"},
        {"method": "vmdav", "params": {"gamma": "nan"}},
        {"method": "vmdav", "params": {"gamma": float("inf")}},
        {"method": "vmdav", "params": {"gamma": True}},
        {"method": "ama", "params": {"bins": True}},
        {"method": "t-closeness", "params": {"t": "nan"}, "confidential": ["income"]},
        {"method": "dp-individual-ranking", "params": {"epsilon": "1e-320"}},
        {"method": "dp-individual-ranking", "params": {"epsilon": "-1"}},
        {"method": "optimal", "params": {"max_records": "nan"}},
    ],
    ids=repr,
)
def test_numeric_arguments_api(kwargs: dict[str, Any]) -> None:
    frame = small()
    qi = ["age"] if "confidential" in kwargs else ["age", "income"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way to the message
        with pytest.raises(MicroguiError) as info:
            microgui.protect(frame, qi=qi, **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bins", [2.5, "abc", True, 1, -3])
def test_dependency_tree_bins(bins: object) -> None:
    from microgui.core.table.dependency import dependency_tree

    with pytest.raises(InvalidParameter, match="bins"):
        dependency_tree(small(), ["age", "income"], bins=bins)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", [0, -2, "abc", 1.5, True])
def test_run_sweep_workers(workers: object) -> None:
    dataset = Dataset(small(), roles_from_lists(list(small()), qi=["age"]))
    with pytest.raises(InvalidParameter, match="workers"):
        run_sweep(dataset, [RunSpec.make("mdav", 3)], workers=workers)  # type: ignore[arg-type]


# --- finding 12 and the release check: the Python API -----------------------------------------
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda f: pd.DataFrame(f.to_numpy()), "named 0"),  # header=None
        (lambda f: f.set_axis(["age", "age", "edu"], axis=1), "2 columns named 'age'"),
        (
            lambda f: f.set_axis(
                pd.MultiIndex.from_tuples([("p", "age"), ("p", "income"), ("q", "edu")]), axis=1
            ),
            "MultiIndex",
        ),
        (lambda f: f.to_numpy(), "DataFrame"),
        (lambda f: f.to_dict("list"), "DataFrame"),
        (lambda f: f.iloc[:0], "empty"),
        (lambda f: pd.DataFrame(index=f.index), "empty"),
    ],
    ids=["integer names", "duplicates", "multiindex", "ndarray", "dict", "no rows", "no columns"],
)
def test_api_refuses_frames_it_cannot_use(make: Any, match: str) -> None:
    with pytest.raises(InvalidInput, match=match) as info:
        microgui.protect(make(small()), qi=["age"], k=3)
    assert "\n" not in str(info.value)


def test_api_one_string_is_one_column() -> None:
    frame = small()
    frame.insert(0, "id", range(len(frame)))
    res = microgui.protect(
        frame,
        qi="age",
        identifiers="id",
        confidential="income",
        method="mdav-generic",
        k=3,
        seed=1,
    )
    assert list(res.frame.columns) == ["age", "income", "edu"]
    res = microgui.protect(frame, qi=["age", "edu"], nominal="edu", method="mdav-generic", k=3)
    assert res.run.roles["edu"].kind.value == "nominal"
    res = microgui.protect(frame, qi=["age", "edu"], ordinal="edu", method="mdav-generic", k=3)
    assert res.run.qi.ordinal_orders == (("high", "low", "mid"),)
    with pytest.raises(InvalidRoles, match="list of column names"):
        microgui.protect(frame, qi=3, k=3)  # type: ignore[arg-type]


def test_api_carries_the_release_check() -> None:
    frame = small(30)
    res = microgui.protect(frame, qi=["age", "income"], method="mdav", k=3, seed=1)
    assert res.check.ok and res.safe and res.check.k_anonymity >= 3
    with pytest.warns(microgui.UnsafeReleaseWarning, match="individual-ranking") as record:
        res = microgui.protect(
            frame, qi=["age", "income"], method="individual-ranking", k=3, seed=1
        )
    assert len(record) == 1
    assert not res.check.ok and not res.safe and res.check.k_anonymity < 3
    with pytest.raises(ExportRefused, match="below the chosen k"):
        microgui.protect(
            frame, qi=["age", "income"], method="individual-ranking", k=3, unsafe="raise"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = microgui.protect(
            frame, qi=["age", "income"], method="individual-ranking", k=3, unsafe="allow"
        )
    assert not res.check.ok
    with pytest.raises(InvalidParameter, match="unsafe"):
        microgui.protect(frame, qi="age", unsafe="maybe")  # type: ignore[arg-type]


# --- finding 13: non-finite and overflowing values; strict JSON -----------------------------
@pytest.mark.parametrize(
    "value", [np.inf, -np.inf, 1.7e308, -1e101, "inf", "-Infinity", "1e400"], ids=repr
)
def test_non_finite_continuous_qi_refused(value: object) -> None:
    frame = small().astype({"income": object})
    frame.loc[[3, 7], "income"] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInput) as info:
            microgui.protect(frame, qi=["age", "income"], k=3)
    message = str(info.value)
    assert "'income'" in message and "2 such cell(s)" in message and "row 4, 8" in message


def test_non_finite_in_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t.csv"
    frame = small().astype({"income": object})
    frame.loc[4, "income"] = "1.7e308"
    frame.to_csv(src, index=False)
    out = tmp_path / "o.csv"
    code, _, err = run(
        protect_argv(src, out, "--method", "mdav", "-k", "3", "--qi", "age,income"),
        capsys,
    )
    assert code == 2 and "line 6" in one_clean_line(err) and "'income'" in err
    assert not out.exists()


def test_json_text_is_strict() -> None:
    text = json_text({"a": float("nan"), "b": [np.float64("inf"), 1.5], "c": {"d": -np.inf}})
    assert strict_json(text) == {"a": None, "b": [None, 1.5], "c": {"d": None}}


@pytest.mark.parametrize("table", ["identical", "constant"])
def test_degenerate_runs_write_strict_json_and_no_warning(
    table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = 12
    frame = pd.DataFrame(
        {
            "age": [40.0] * n if table == "identical" else np.arange(n) * 2.0,
            "income": [5.0] * n,
            "region": ["north"] * n,
        }
    )
    src = tmp_path / "t.csv"
    frame.to_csv(src, index=False)
    out, report, ev, sw = (tmp_path / f for f in ("o.csv", "r.json", "e.json", "s.json"))
    common = ["--qi", "age,income,region", "--nominal", "region"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run(
            protect_argv(src, out, '--report', str(report), '--method', 'mdav-generic', '-k', '3', *common),
            capsys,
        )  # fmt: skip
        assert code == 0, err
        assert len(err.strip().splitlines()) == 1  # the summary line only
        code, _, err = run(
            ["evaluate", str(src), str(out), *common, "-k", "3", "--json", str(ev)], capsys
        )
        assert code == 0 and err == ""
        code, _, err = run(
            ["sweep", str(src), *common, "--methods", "mdav-generic,mst,individual-ranking",
             "--k", "3", "--workers", "1", "--json", str(sw)],
            capsys,
        )  # fmt: skip
        assert code == 0, err
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
    assert all(
        line.startswith(("sweep:", "  done:", "  failed:")) or "failed" in line
        for line in err.strip().splitlines()
    ), err
    for path in (report, ev, sw):
        strict_json(path.read_text(encoding="utf-8"))


def test_evaluate_overflowing_protected_values_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = small()
    src, prot = tmp_path / "t.csv", tmp_path / "p.csv"
    frame.to_csv(src, index=False)
    bad = frame.copy()
    bad.loc[2, "age"] = 1.7e308
    bad.to_csv(prot, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, _, err = run(["evaluate", str(src), str(prot), "--qi", "age,income"], capsys)
    assert code == 0 and err == ""
