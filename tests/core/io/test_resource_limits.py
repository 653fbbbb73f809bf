"""Resources bounded before they are spent: a file's own header or metadata says how wide and
how large its table is, and a file too wide or too large is refused in one line before any cell
is read; no per-column step does work growing with the square of the number of columns.

Work is counted (Python calls and the lines run in microgui), never timed: the machine's speed
is no property of the code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.cli import main
from microgui.core import io as io_module
from microgui.core.errors import InvalidInput
from microgui.core.io import STAT_ATTR, read_table
from microgui.core.io import memory as io_memory
from microgui.core.io import reader as io_reader
from microgui.core.table import dataset as dataset_module
from microgui.core.table.dataset import MAX_COLUMNS, check_frame
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap
from tests.cli_argv import protect_argv
from tests.work_count import count_work, wide_csv


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("microgui: error: ")
    assert "\n" not in err and "Traceback" not in err
    return err


# --- memory, from the file's metadata -------------------------------------------------------


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("the table was read: the refusal must come first")


def test_parquet_footer_record_count_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small Parquet file of many records (one value, dictionary-encoded: a few kB) is
    judged on the records its footer declares, not on its bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 2_000_000
    path = tmp_path / "many.parquet"
    values = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(rows, dtype=np.int8)), pa.array(["someone@example.org"])
    ).cast(pa.string())
    pq.write_table(pa.table({"email": values, "note": pa.nulls(rows)}), path)
    assert path.stat().st_size < 100_000  # the size alone says a few hundred kB
    monkeypatch.setattr(io_memory, "available_memory", lambda: 100_000_000)
    monkeypatch.setattr(pd, "read_parquet", _never)
    with pytest.raises(InvalidInput) as info:
        read_table(path)
    message = str(info.value)
    assert "'many.parquet' is too large to read here" in message
    assert "2,000,000 records x 2 columns" in message
    assert "100 MB is available" in message
    assert "\n" not in message and "someone" not in message  # no value in a message


@pytest.mark.slow
def test_300_million_record_parquet_refused_by_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The case of issue 27: a 2 MB Parquet file of 300 million records ended in a
    MemoryError traceback; it is refused from its footer, in one line, nothing written. The
    machine is told to have 4 GB free (reading it takes more), so that the test says the same
    on any machine."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "huge.parquet"
    block = 10_000_000
    email = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(block, dtype=np.int8)), pa.array(["someone@example.org"])
    )
    table = pa.table({"email": email, "note": pa.nulls(block)})
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(30):
            writer.write_table(table, row_group_size=block)
    assert path.stat().st_size < 5_000_000
    monkeypatch.setattr(io_memory, "available_memory", lambda: 4 * 10**9)
    monkeypatch.setattr(pd, "read_parquet", _never)
    out = tmp_path / "out.csv"
    code = main(
        ["protect", str(path), "-o", str(out), "--qi", "email", "--method", "mdav", "-k", "3", "-q"]
    )
    assert code == 2
    err = _one_line_error(capsys)
    assert "'huge.parquet' is too large to read here" in err
    assert "300,000,000 records x 2 columns" in err
    assert not out.exists() and os.listdir(tmp_path) == ["huge.parquet"]


@pytest.mark.parametrize("suffix", [".zsav", ".dta"])
def test_spss_stata_header_record_count_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """SPSS and Stata headers say how many records and variables follow (pyreadstat
    ``metadataonly``): the file is judged on them, and refused having read its header only. A
    compressed .zsav is refused on the header's count where its size alone lets it through."""
    import pyreadstat

    rows = 200_000
    frame = pd.DataFrame(
        {
            "age": np.arange(rows, dtype=np.float64) % 90,
            "name": np.array(["x" * 20] * rows, dtype=object),
        }
    )
    path = tmp_path / f"survey{suffix}"
    if suffix == ".zsav":
        pyreadstat.write_sav(frame, os.fspath(path), compress=True)
    else:
        pyreadstat.write_dta(frame, os.fspath(path))
    name = "read_sav" if suffix == ".zsav" else "read_dta"
    real = getattr(pyreadstat, name)

    def header_only(*args: Any, **kwargs: Any) -> Any:
        assert kwargs.get("metadataonly"), "the table was read: the refusal must come first"
        return real(*args, **kwargs)

    monkeypatch.setattr(pyreadstat, name, header_only)
    shape = io_module._stat_shape(path)
    assert shape.columns == 2 and f"its {rows:,} records x 2 variables" == shape.what
    assert shape.needed is not None
    by_size = path.stat().st_size * io_module._MEMORY_PER_BYTE["stat"]
    if suffix == ".zsav":
        assert by_size < shape.needed // 2  # the header, not the size, refuses it
    monkeypatch.setattr(io_memory, "available_memory", lambda: min(by_size, shape.needed) // 2)
    with pytest.raises(InvalidInput, match=r"^'survey\.(zsav|dta)' is too large to read here"):
        read_table(path)


def test_estimates_leave_ordinary_files_alone(tmp_path: Path) -> None:
    """Every format's estimate lets a small table through (and is about its real cost)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyreadstat

    frame = pd.DataFrame({"age": np.arange(1000) % 90, "town": ["Oslo", "Bergen"] * 500})
    pq.write_table(pa.Table.from_pandas(frame), tmp_path / "t.parquet")
    pyreadstat.write_sav(frame, os.fspath(tmp_path / "t.sav"))
    frame.to_csv(tmp_path / "t.csv", index=False)
    for name in ("t.parquet", "t.sav", "t.csv"):
        assert read_table(tmp_path / name).frame.shape == (1000, 2)
    shape = io_module._parquet_shape(tmp_path / "t.parquet")
    assert shape.columns == 2 and shape.needed is not None and shape.needed < 50_000_000


def test_memory_running_out_anyway_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The estimate is not a promise: a MemoryError later in a command is one line, never a
    traceback, and no file is left."""
    path = wide_csv(tmp_path / "t.csv", 4, 30)

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("microgui.core.runs.plan.run_spec", exhausted)  # the run of a protect
    out = tmp_path / "out.csv"
    assert (
        main(
            protect_argv(
                path,
                out,
                "--qi",
                "age,income",
                "--method",
                "mdav",
                "-k",
                "3",
                "-q",
                keep_order=False,
            )
        )
        == 2
    )
    assert "memory ran out" in _one_line_error(capsys)
    assert not out.exists()


# --- columns: a limit, and no work growing with their square --------------------------------


def test_300000_column_csv_refused_from_its_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The case of issue 27 (a 300,000-column CSV ran for more than 10 minutes at 6 GB): the
    header is counted and the file refused before the reader starts."""
    path = tmp_path / "wide.csv"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(",".join(f"c{i}" for i in range(300_000)) + "\n")
        for _ in range(3):
            handle.write(",".join(["1"] * 300_000) + "\n")
    monkeypatch.setattr(io_reader, "_read_csv", _never)
    out = tmp_path / "out.csv"
    assert (
        main(
            protect_argv(
                path, out, "--qi", "c0,c1", "--method", "mdav", "-k", "3", "-q", keep_order=False
            )
        )
        == 2
    )
    err = _one_line_error(capsys)
    assert (
        f"'wide.csv' has 300,000 columns, more than microgui works on in one table ({MAX_COLUMNS:,})"
        in err
    )
    assert not out.exists()


@pytest.mark.parametrize("kind", ["parquet", "dta", "dask"])
def test_column_limit_from_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Parquet (footer), Stata/SPSS (header) and the partitioned reader (footers) count the
    columns before reading (the limit lowered so the file stays small)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyreadstat

    monkeypatch.setattr(dataset_module, "MAX_COLUMNS", 5)
    frame = pd.DataFrame({f"v{i}": np.arange(10.0) for i in range(6)})
    if kind == "dta":
        path = tmp_path / "t.dta"
        pyreadstat.write_dta(frame, os.fspath(path))
    else:
        path = tmp_path / "t.parquet"
        pq.write_table(pa.Table.from_pandas(frame), path)
    with pytest.raises(InvalidInput, match=r"^'t\.(parquet|dta)' has 6 columns, more than"):
        if kind == "dask":
            from microgui.core.release.distributed import list_partitions

            list_partitions(path)
        else:
            read_table(path)


def test_column_limit_for_the_api_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dataset_module, "MAX_COLUMNS", 5)
    frame = pd.DataFrame({f"v{i}": np.arange(10.0) for i in range(6)})
    with pytest.raises(InvalidInput, match="^the frame given to microgui.protect has 6 columns"):
        microgui.protect(frame, qi=["v0", "v1"])
    check_frame(frame.iloc[:, :5])  # at the limit: accepted


def test_role_lookups_do_not_scan_the_columns() -> None:
    """``roles[name]`` and ``name in roles`` cost the same for 1,000 and 4,000 columns (they
    scanned every spec: each loop over the columns was quadratic, issue 27)."""

    def lookups(n: int) -> int:
        spec = ColumnSpec(AttributeRole.NON_CONFIDENTIAL, AttributeKind.NOMINAL)
        roles = RoleMap(tuple((f"c{i}", spec) for i in range(n)))
        last = f"c{n - 1}"
        return count_work(lambda: (roles[last], last in roles, roles.identifiers))

    assert lookups(4000) == lookups(1000)


def test_reader_attrs_are_shared_not_copied_per_column(tmp_path: Path) -> None:
    """pandas deep-copies ``attrs`` into every column taken from a frame: an SPSS file's
    user-missing rows of every variable were copied once per column visited (400 variables of
    20,000 records: 13 s to visit each column once). The readers' attrs are shared."""
    import pyreadstat

    frame = pd.DataFrame({f"v{i}": np.where(np.arange(50) % 7 == 0, -99.0, 1.0) for i in range(5)})
    path = tmp_path / "t.sav"
    pyreadstat.write_sav(
        frame, os.fspath(path), missing_ranges={f"v{i}": [-99.0] for i in range(5)}
    )
    read = read_table(path).frame
    stat = read.attrs[STAT_ATTR]
    assert stat["user_missing"]["v0"]["cells"].rows.size == 8
    assert read.iloc[:, 0].attrs[STAT_ATTR] is stat
    assert read.copy().attrs[STAT_ATTR] is stat


def test_parquet_estimate_without_statistics_counts_the_pages(tmp_path: Path) -> None:
    """A Parquet file written without column statistics: the text's length comes from the
    pages' uncompressed bytes (it fell back to 8 bytes a value: 100,000 values of 5 kB were
    estimated at 9 MB for a 1.4 GB read; adversarial pass)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from microgui.core.io.memory import _parquet_shape

    rows = 10_000
    path = tmp_path / "nostats.parquet"
    texts = ["A" * 5000 + str(i % 7) for i in range(rows)]
    pq.write_table(
        pa.table({"age": range(rows), "txt": texts}),
        path,
        write_statistics=False,
        use_dictionary=False,
        compression="zstd",
    )
    assert path.stat().st_size < 1_000_000  # a small file standing for 50 MB of text
    assert _parquet_shape(path).needed > rows * 5000
