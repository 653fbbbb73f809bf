"""Issue 12, findings 1, 10 and 11: project files never choose an engine or a network
destination and are validated field by field; broken project files and autosaves are bounded and
refused in one line (a bad autosave is set aside); a wrong Dask address gives one clean line
quickly. The Dask tests talk only to tiny services on 127.0.0.1 that stop by themselves."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microgui.core.runs.project_file as project_file
import microgui.core.runs.scale as scale
from microgui.cli import main
from microgui.core.errors import InvalidInput, InvalidParameter, MicroguiError
from microgui.core.runs import RunSpec, run_protection
from microgui.core.runs.project_file import (
    Project,
    autosave_path,
    load_project,
    read_autosave,
    save_project,
    write_autosave,
)
from microgui.core.table.dataset import Dataset
from microgui.core.table.roles import AttributeKind, AttributeRole, ColumnSpec, RoleMap

DATA = Path(__file__).resolve().parents[1] / "data"


def _good() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "project_v1.json").read_text(encoding="utf-8"))
    return data


def _write(tmp_path: Path, data: object, name: str = "p.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "\r" not in text, text
    assert len(text) < 600, text
    return text


# --- finding 1: a project never chooses an engine or a network destination -----------------------
PLACEMENT = [
    ({"engine": "dask", "scheduler": "tcp://127.0.0.1:8799"}, "engine"),
    ({"engine": "dask"}, "engine"),
    ({"scheduler": "tcp://127.0.0.1:8799"}, "scheduler"),
    ({"engine": "local", "scheduler": "tcp://127.0.0.1:8799"}, "scheduler"),
    ({"scheduler": ""}, "scheduler"),
    ({"engine": "spark"}, "engine"),
    ({"engine": None}, "engine"),
    ({"workers": 64}, "workers"),
    ({"workers": 0}, "workers"),
]


@pytest.mark.parametrize(("fields", "named"), PLACEMENT)
def test_a_project_never_chooses_the_engine_or_scheduler(
    tmp_path: Path, fields: dict[str, Any], named: str
) -> None:
    data = _good()
    data["runs"][0].update({"strata": ["region"], **fields})
    with pytest.raises(InvalidInput) as info:
        load_project(_write(tmp_path, data))
    text = _one_line(info.value)
    assert f"'{named}'" in text and "run 0" in text and "p.json" in text
    assert "never" in text  # says why: where runs are computed is the user's choice


def test_the_defaults_written_by_earlier_versions_still_load(tmp_path: Path) -> None:
    """Earlier microgui wrote engine "local", scheduler null and workers null in every run."""
    data = _good()
    for run in data["runs"]:
        run.update(engine="local", scheduler=None, workers=None, strata=[], block_size=None)
    project = load_project(_write(tmp_path, data))
    assert all((s.engine, s.scheduler, s.workers) == ("local", None, None) for s in project.runs)


def test_saving_writes_no_engine_scheduler_or_workers(tmp_path: Path) -> None:
    roles = RoleMap.from_dict(
        {"age": ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS)}
    )
    spec = RunSpec.make(
        "mdav", 3, seed=1, block_size=100, engine="dask", scheduler="tcp://127.0.0.1:1", workers=3
    )
    path = tmp_path / "p.json"
    save_project(Project(None, ("age",), roles, (spec,)), path)
    run = json.loads(path.read_text(encoding="utf-8"))["runs"][0]
    assert not {"engine", "scheduler", "workers"} & set(run)
    loaded = load_project(path).runs[0]
    assert (loaded.engine, loaded.scheduler, loaded.workers) == ("local", None, None)
    assert (loaded.method, loaded.k, loaded.seed, loaded.block_size) == ("mdav", 3, 1, 100)


UNKNOWN = [
    ("runs", {"__class__": "os.system"}, "'__class__'"),
    ("runs", {"params": {"a": 1}}, "'params'"),
    ("runs", {"command": "rm -rf"}, "'command'"),
    ("top", {"plugins": ["x"]}, "'plugins'"),
    ("data", {"url": "http://x"}, "'url'"),
    ("role", {"script": "x"}, "'script'"),
]


@pytest.mark.parametrize(("where", "extra", "named"), UNKNOWN)
def test_unknown_fields_are_refused_by_name(
    tmp_path: Path, where: str, extra: dict[str, Any], named: str
) -> None:
    data = _good()
    target = {
        "runs": data["runs"][0],
        "top": data,
        "data": data["data"],
        "role": data["roles"]["age"],
    }[where]
    target.update(extra)
    with pytest.raises(InvalidInput) as info:
        load_project(_write(tmp_path, data))
    assert named in _one_line(info.value)


def _run(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(data: dict[str, Any]) -> None:
        data["runs"][0].update(fields)

    return mutate


BAD_FIELDS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_run(method="no-such-method"), r"run 0.*unknown method 'no-such-method'"),
    (_run(method=["mdav"]), r"run 0 has no method name"),
    (_run(k=1), r"run 0 \(mdav-generic\).*k = 1.*k >= 2"),
    (_run(k=0), r"k = 0"),
    (_run(k=-5), r"k = -5"),
    (_run(k=10**30), r"k .*too large|k <= "),
    (_run(k=3.0), r"k = 3.0.*whole number"),
    (_run(k="3"), r"k = '3'.*whole number"),
    (_run(k=True), r"k = True.*whole number"),
    (_run(parameters={"nope": 1}), r"run 0 \(mdav-generic\).*no parameter 'nope'"),
    (_run(parameters={"rescale_variance": "perhaps"}), r"rescale_variance='perhaps'"),
    (_run(parameters={"ordinal_average": "mean"}), r"ordinal_average='mean'.*must be one of"),
    (_run(parameters=[1]), r"'parameters' must be an object"),
    (_run(seed=-1), r"seed -1"),
    (_run(seed=1.5), r"seed 1.5"),
    (_run(seed="abc"), r"seed 'abc'"),
    (_run(seed=2**70), r"seed .* (between|<=)"),
    (_run(seed=True), r"seed True"),
    (_run(hierarchies=["x"]), r"'hierarchies' must map"),
    (_run(hierarchies={"ghost": "h.csv"}), r"hierarchy.*'ghost'.*not a column"),
    (_run(hierarchies={"region": 3}), r"'hierarchies' must map"),
    (_run(hierarchies={"region": ""}), r"hierarchy.*'region'.*empty|no file"),
    (_run(hierarchies={"region": "a\x00b"}), r"hierarchy.*'region'"),
    (_run(strata="region"), r"'strata' must be a list"),
    (_run(strata=["ghost"]), r"strata.*'ghost'.*not a column"),
    (_run(strata=["id"]), r"strata.*'id' is an identifier"),
    (_run(strata=["region", "region"]), r"strata.*twice"),
    (_run(strata=[3]), r"'strata' must be a list of column names"),
    (_run(block_size=9), r"block_size 9.*>= 2k = 10"),
    (_run(block_size=-1), r"block_size -1"),
    (_run(block_size=1.5), r"block_size 1.5"),
    (_run(block_size="many"), r"block_size 'many'"),
    (_run(block_size=True), r"block_size True"),
    (_run(block_size=10**20), r"block_size .*<= "),
    (lambda d: d.update(comparison=[0, 0]), r"'comparison' names run 0 twice"),
    (lambda d: d.update(comparison=[True]), r"'comparison' names run True"),
    (lambda d: d.update(notes=["x"]), r"'notes' must be a string"),
    (lambda d: d.update(extra=[]), r"'extra' must be an object"),
    (lambda d: d["data"].update(columns=["a", "a"]), r"'data.columns' names 'a' twice"),
    (lambda d: d.update(microgui_version=5), r"'microgui_version' must be a string"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD_FIELDS)
def test_every_field_is_validated_with_a_named_error(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], message: str
) -> None:
    data = _good()
    mutate(data)
    with pytest.raises(InvalidInput, match=message) as info:
        load_project(_write(tmp_path, data))
    assert "p.json" in _one_line(info.value)


def test_valid_scale_fields_load(tmp_path: Path) -> None:
    data = _good()
    data["runs"][0].update(strata=["region"], block_size="auto")
    data["runs"][1].update(block_size=20_000, hierarchies={"region": "region_h.csv"})
    project = load_project(_write(tmp_path, data))
    assert project.runs[0].strata == ("region",) and project.runs[0].block_size == "auto"
    assert project.runs[1].block_size == 20_000
    assert project.runs[1].hierarchies == (("region", "region_h.csv"),)


# --- finding 11: broken project files are bounded and refused in one line ------------------------
def _deep(levels: int) -> str:
    return '{"schema_version": 1, "extra": ' + "[" * levels + "]" * levels + "}"


BROKEN: list[tuple[str, Callable[[], str], str]] = [
    ("deep nesting", lambda: _deep(100_000), r"nested (too deeply|deeper)"),
    ("moderate nesting", lambda: _deep(200), r"nested (too deeply|deeper)"),
    (
        "5,000-digit k",
        lambda: json.dumps(_good()).replace('"k": 5', '"k": ' + "9" * 5000, 1),
        r"number with too many digits|too large",
    ),
    (
        "5,000-digit seed",
        lambda: json.dumps(_good()).replace('"seed": 7', '"seed": ' + "1" * 5000, 1),
        r"number with too many digits|too large",
    ),
    (
        "huge float exponent",
        lambda: json.dumps(_good()).replace('"seed": 7', '"seed": 1e999999', 1),
        r"too large",
    ),
    (
        "NaN literal",
        lambda: json.dumps(_good()).replace('"seed": 7', '"seed": NaN', 1),
        r"NaN",
    ),
    (
        "Infinity literal",
        lambda: json.dumps(_good()).replace('"k": 5', '"k": -Infinity', 1),
        r"Infinity",
    ),
    (
        "duplicate key",
        lambda: json.dumps(_good()).replace('"k": 5', '"k": 5, "k": 6', 1),
        r"'k' twice",
    ),
    (
        "a million runs",
        lambda: json.dumps({**_good(), "runs": [{}] * 1_000_000}),
        r"runs.*at most|too large",
    ),
]


@pytest.mark.parametrize(("case", "make", "message"), BROKEN, ids=[c for c, _, _ in BROKEN])
def test_broken_files_give_one_line(
    tmp_path: Path, case: str, make: Callable[[], str], message: str
) -> None:
    path = _write(tmp_path, make())
    with pytest.raises(InvalidInput, match=message) as info:
        load_project(path)
    assert "p.json" in _one_line(info.value)


def test_too_many_runs_are_refused_before_any_is_built(tmp_path: Path) -> None:
    data = _good()
    cap = project_file.MAX_PROJECT_RUNS
    data["runs"] = [data["runs"][0]] * (cap + 1)
    data["comparison"] = []
    with pytest.raises(InvalidInput, match=rf"{cap + 1:,} runs.*at most") as info:
        load_project(_write(tmp_path, data))
    _one_line(info.value)
    data["runs"] = data["runs"][:cap]
    assert len(load_project(_write(tmp_path, data)).runs) == cap


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:  # sparse: no disk used, nothing to read
        fh.truncate(project_file.MAX_PROJECT_BYTES + 1)
    with pytest.raises(InvalidInput, match=r"'huge.json' is .* larger than") as info:
        load_project(path)
    _one_line(info.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInput, match="not a regular file"):
        load_project(fifo)  # opening a FIFO for reading would wait for a writer
    with pytest.raises(InvalidInput, match="is a folder|not a regular file"):
        load_project(tmp_path)
    if Path("/dev/zero").exists():
        with pytest.raises(InvalidInput, match="not a regular file"):
            load_project("/dev/zero")


def test_many_columns_and_roles_validate_in_linear_time(tmp_path: Path) -> None:
    """Role names are checked against a set: 100,000 columns used to take quadratic time."""
    names = [f"c{i}" for i in range(100_000)]
    data = {
        "schema_version": 1,
        "data": {"path": None, "columns": names},
        "roles": {n: {"role": "non-confidential", "kind": "continuous"} for n in names},
        "runs": [],
        "comparison": [],
    }
    assert len(load_project(_write(tmp_path, data)).columns) == 100_000


# --- finding 11: a bad autosave is set aside, with a message ------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        _deep(100_000),
        '{"schema_version": 1, "da',
        json.dumps(_good()).replace('"k": 5', '"k": ' + "9" * 5000, 1),
        json.dumps({**_good(), "runs": [{"method": "mdav", "k": 3, "engine": "dask",
                                         "scheduler": "tcp://127.0.0.1:8799"}]}),
    ],
    ids=["deep", "truncated", "digits", "scheduler"],
)  # fmt: skip
def test_a_bad_autosave_is_set_aside(text: str) -> None:
    path = autosave_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"autosave.*set aside as '.*\.bad'") as info:
        read_autosave()
    _one_line(info.value)
    assert not path.exists()
    bad = path.with_name(path.name + ".bad")
    assert bad.read_text(encoding="utf-8") == text  # kept, for the user to look at
    assert read_autosave() is None  # the next start is clean
    write_autosave(Project(None, (), RoleMap(())))  # and autosaving works again
    assert read_autosave() is not None


# --- finding 10: a wrong Dask address gives one clean line quickly ------------------------------
needs_dask = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="Dask distributed is not installed"
)


def _continuous(n: int = 400) -> Dataset:
    x = np.random.default_rng(0).normal(size=(n, 2))
    frame = pd.DataFrame(x, columns=["a", "b"])
    roles = RoleMap.from_dict(
        {c: ColumnSpec(AttributeRole.QUASI_IDENTIFIER, AttributeKind.CONTINUOUS) for c in "ab"}
    )
    return Dataset(frame, roles)


def _dask(address: str, **extra: Any) -> RunSpec:
    options: dict[str, Any] = {"block_size": 100, **extra}
    return RunSpec.make("mdav", 5, seed=0, engine="dask", scheduler=address, **options)


@contextmanager
def _service(behaviour: str, lifetime: float = 30.0) -> Iterator[str]:
    """A TCP service on 127.0.0.1 that is not a Dask scheduler; stops by itself."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()
    deadline = time.monotonic() + lifetime
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if behaviour == "http":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
                conn.close()
            elif behaviour == "close":
                conn.close()
            elif behaviour == "huge-frame":  # a length Dask would try to allocate lazily
                conn.sendall(struct.pack("<Q", 2**34))
                held.append(conn)
            else:  # silent: accepts and never answers
                held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


@pytest.fixture
def quick_connect(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(scale, "DASK_CONNECT_SECONDS", 1.0)
    return 1.0


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Exceptions ignored in ``__del__`` (a Client's, say): there must be none."""
    seen: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_value))
    return seen


@needs_dask
@pytest.mark.parametrize("behaviour", ["http", "close", "silent", "huge-frame"])
def test_a_service_that_is_not_dask_gives_one_clean_line(
    behaviour: str, quick_connect: float, unraisable: list[object]
) -> None:
    with _service(behaviour) as address:
        started = time.monotonic()
        with pytest.raises(InvalidParameter, match="Dask scheduler") as info:
            run_protection(_continuous(), _dask(address))
        elapsed = time.monotonic() - started
    text = _one_line(info.value)
    assert address in text and "EiB" not in text
    assert elapsed < 10 * quick_connect, elapsed  # bounded by the connect timeout
    gc.collect()
    assert unraisable == []


@needs_dask
def test_a_refused_port_is_reported_at_once(quick_connect: float, unraisable: list[object]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(InvalidParameter, match=r"cannot reach the Dask scheduler.*refused") as info:
        run_protection(_continuous(), _dask(f"tcp://127.0.0.1:{port}"))
    _one_line(info.value)
    gc.collect()
    assert unraisable == []


@needs_dask
def test_an_address_that_does_not_answer_times_out(
    quick_connect: float, unraisable: list[object]
) -> None:
    """A listener whose backlog is full drops new connections, as an unroutable host does."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    fillers: list[socket.socket] = []
    try:
        for _ in range(4):  # fill the accept queue (never accepted)
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(server.getsockname())
            fillers.append(s)
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(InvalidParameter, match="Dask scheduler") as info:
            run_protection(_continuous(), _dask(address))
        assert time.monotonic() - started < 10 * quick_connect
        _one_line(info.value)
    finally:
        for s in fillers:
            s.close()
        server.close()
    gc.collect()
    assert unraisable == []


@pytest.mark.parametrize(
    "address",
    [
        "tcp://",
        "tcp://127.0.0.1",
        "tcp://127.0.0.1:",
        "tcp://127.0.0.1:abc",
        "tcp://127.0.0.1:99999",
        "tcp://127.0.0.1:0",
        "tcp://127.0.0.1:8786/path",
        "file:///etc/passwd",
        "inproc://x",
        "http://127.0.0.1:8786",
        "   ",
        "tcp://127.0.0.1:8786\nx",
        "tcp://[::1:8786",
        "tcp://user@127.0.0.1:8786",
    ],
)
def test_malformed_addresses_are_refused_before_any_connection(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connect(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a malformed address must not be connected to")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    monkeypatch.setattr(socket, "create_connection", no_connect)
    with pytest.raises(InvalidParameter, match=r"scheduler address|Dask scheduler") as info:
        run_protection(_continuous(), _dask(address))
    _one_line(info.value)


def test_a_scheduler_for_a_one_unit_run_is_refused_not_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One rule: a Dask run must have several units; otherwise nothing would go to the
    scheduler, and saying nothing would make the user believe it did."""

    def no_connect(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("nothing may be sent for a one-unit run")

    monkeypatch.setattr(socket.socket, "connect", no_connect)
    dataset = _continuous(400)
    for options in (
        {"block_size": None},  # no strata, no blocks
        {"block_size": 1000},  # blocks larger than the table
        {"block_size": "auto"},  # small tables run exact
    ):
        with pytest.raises(InvalidParameter, match=r"one piece.*--engine dask") as info:
            run_protection(dataset, _dask("tcp://127.0.0.1:8786", **options))
        _one_line(info.value)
    frame = dataset.frame.assign(s="x")
    one_stratum = Dataset(frame, dataset.roles)
    with pytest.raises(InvalidParameter, match=r"one piece"):
        run_protection(one_stratum, _dask("tcp://127.0.0.1:8786", block_size=None, strata=["s"]))


@needs_dask
def test_cli_wrong_scheduler_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quick_connect: float
) -> None:
    table = tmp_path / "t.csv"
    _continuous(400).frame.to_csv(table, index=False)
    out = tmp_path / "out.csv"
    with _service("http") as address:
        code = main(
            ["protect", str(table), "--qi", "a,b", "-k", "5", "--block-size", "100",
             "--engine", "dask", "--scheduler", address, "-o", str(out)]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("microgui: error:"), err
    assert "Traceback" not in err and not out.exists()
    assert not list(tmp_path.glob(".*tmp*"))
    for argv in (
        ["--engine", "dask", "--scheduler", "nonsense://"],
        ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:8786"],  # one unit: no --block-size
    ):
        code = main(["protect", str(table), "--qi", "a,b", "-k", "5", *argv, "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert not out.exists()


def test_errors_are_microgui_errors() -> None:
    assert issubclass(InvalidInput, MicroguiError) and issubclass(InvalidParameter, MicroguiError)
