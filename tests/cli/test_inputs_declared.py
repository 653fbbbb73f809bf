"""Inputs declared once: every command-line option and positional that names a file is declared
as a file read or a file written (:class:`microgui.cli.PathOption`), :func:`microgui.cli.
command_inputs` collects the files a parsed command reads, and every writer refuses each of
them. The classification is checked by walking the real parser, and the refusals by a matrix
generated from it: every writer option of every command pointed at every input it reads.
The Python API refuses the roles file its roles were read from."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.cli import PathOption, build_parser, command_inputs, command_outputs, main
from microgui.core.errors import ExportRefused
from microgui.core.runs import RunSpec
from microgui.core.runs.project_file import Project, load_project, save_project
from microgui.core.table.roles import roles_from_file

#: Options and positionals that name no file, by command. A new option must be declared a
#: path (``type=INPUT_FILE``/``INPUT_COLUMN_FILE``/``OUTPUT_FILE``) or listed here.
NOT_PATHS: dict[str, set[str]] = {
    "protect": {
        "sheet", "method", "k", "qi", "identifiers", "confidential", "weight", "ordinal",
        "nominal", "missing_as_category", "param", "round", "seed", "group_column",
        "allow_unsafe", "keep_formula_cells", "run_number", "pseudonymize", "csv_sep",
        "csv_decimal", "csv_encoding", "strata", "block_size", "engine", "scheduler", "master",
        "workers", "quiet", "list_methods", "rename_invalid", "rename",
        "household", "keep_order", "order_seed", "household_size_key", "threads",
    },
    "dependency-tree": {"attributes", "bins", "sheet"},
    "suggest-roles": {"sheet"},
    "evaluate": {
        "qi", "identifiers", "confidential", "weight", "ordinal", "nominal",
        "missing_as_category", "sheet", "k", "score_weights", "regression", "crosstab", "model",
        "household",
    },
    "sweep": {
        "qi", "identifiers", "confidential", "weight", "ordinal", "nominal",
        "missing_as_category", "sheet", "methods", "k", "param", "round", "seed", "workers",
        "household",
    },
    "assess": {
        "qi", "identifiers", "confidential", "weight", "ordinal", "nominal",
        "missing_as_category", "sheet", "k", "keys", "suda_max_size", "no_suda",
        "household", "household_size_key",
    },
    "gui": {"demo"},
}  # fmt: skip

#: What a metavar of an option naming a file looks like: such an option is never "no path".
FILE_WORDS = ("FILE", "OUT", "PATH", "INPUT", "ORIGINAL", "PROTECTED", "PNG", "NEW", "REPORT")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(subs) == 1
    return dict(subs[0].choices)


def _options(sub: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in sub._actions
        if not isinstance(a, (argparse._HelpAction, argparse._VersionAction))
    ]


def test_every_option_of_every_command_is_classified() -> None:
    """A file read, a file written, or listed as naming no file: an option added without a
    classification (a new input the writers would not know) fails here."""
    subs = _subparsers()
    assert set(subs) == set(NOT_PATHS), "a new command: classify its options in NOT_PATHS"
    for command, sub in subs.items():
        for action in _options(sub):
            declared = isinstance(action.type, PathOption)
            listed = action.dest in NOT_PATHS[command]
            assert declared != listed, f"{command} {action.option_strings or action.dest}: " + (
                "declared a path and listed as none" if declared else "not classified"
            )
            if listed:  # a rule that can fail: a file-like metavar is never "no path"
                words = str(action.metavar or "").upper()
                assert not any(w in words for w in FILE_WORDS), (command, action.dest)
        stale = NOT_PATHS[command] - {a.dest for a in _options(sub)}
        assert not stale, (command, stale)


def test_the_known_inputs_are_declared_inputs() -> None:
    """The files each command reads, as its help describes them."""
    expected = {
        "protect": {"input", "roles", "hierarchy", "project", "input_option", "plan"},
        "dependency-tree": {"input"},
        "suggest-roles": {"input"},
        "evaluate": {"original", "protected", "roles", "hierarchy"},
        "sweep": {"input", "roles", "hierarchy"},
        "assess": {"input", "roles"},
        "gui": {"file"},
    }
    for command, sub in _subparsers().items():
        reads = {a.dest for a in _options(sub) if isinstance(a.type, PathOption) and a.type.reads}
        assert reads == expected[command], command


def _argv_naming_every_path(command: str, sub: argparse.ArgumentParser) -> list[str]:
    """``command`` with every declared path option and positional given a distinct name."""
    argv = [command]
    for action in _options(sub):
        if not isinstance(action.type, PathOption):
            continue
        value = f"{action.dest}.file"
        if action.type.column_file:
            value = f"col={value}"
        argv += [value] if not action.option_strings else [action.option_strings[-1], value]
    return argv


@pytest.mark.parametrize("command", sorted(NOT_PATHS))
def test_command_inputs_and_outputs_collect_every_declared_option(command: str) -> None:
    sub = _subparsers()[command]
    args = build_parser().parse_args(_argv_naming_every_path(command, sub))
    declared = [a for a in _options(sub) if isinstance(a.type, PathOption)]
    assert {p.name for p in command_inputs(args)} == {
        f"{a.dest}.file" for a in declared if a.type.reads
    }
    assert {Path(p).name for p in command_outputs(args)} == {
        f"{a.dest}.file" for a in declared if not a.type.reads
    }


# --- the refusal matrix ------------------------------------------------------------------------

EDU_ROWS = "primary;basic;*\nsecondary;basic;*\nbachelor;higher;*\nmaster;higher;*\n"
ROLES = {
    "schema_version": 1,
    "columns": {
        "id": {"role": "identifier", "kind": "nominal"},
        "age": {"role": "quasi-identifier", "kind": "continuous"},
        "education": {"role": "quasi-identifier", "kind": "nominal"},
        "sex": {"role": "quasi-identifier", "kind": "nominal"},
        "income": {"role": "confidential", "kind": "continuous"},
    },
}


@pytest.fixture
def study(tmp_path: Path) -> Path:
    return make_study(tmp_path)


def make_study(tmp_path: Path) -> Path:
    """A folder with a 60-record table, a copy as a 'protected' table, a roles file, a
    hierarchy file and a project naming the table and the hierarchy."""
    rng = np.random.default_rng(5)
    n = 60
    frame = pd.DataFrame(
        {
            "id": [f"P{i:03d}" for i in range(n)],
            "age": rng.integers(18, 80, n),
            "education": rng.choice(["primary", "secondary", "bachelor", "master"], n),
            "sex": rng.choice(["female", "male"], n),
            "income": np.round(rng.lognormal(10, 0.5, n), 2),
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    frame.to_csv(tmp_path / "released.csv", index=False)
    (tmp_path / "roles.json").write_text(json.dumps(ROLES))
    (tmp_path / "education.csv").write_text(EDU_ROWS)
    roles = roles_from_file(tmp_path / "roles.json", list(frame.columns))
    project = Project(
        data_path=str(tmp_path / "people.csv"),
        columns=tuple(frame.columns),
        roles=roles,
        runs=(RunSpec.make("mstk", 3, {}, 1, {"education": str(tmp_path / "education.csv")}),),
    )
    save_project(project, tmp_path / "study.microgui.json")
    (tmp_path / "sexes.csv").write_text("female,F\nmale,M\n")
    plan = {"plan_version": 1, "steps": [
        {"step": "recode", "column": "sex", "mapping": "sexes.csv"},
        {"step": "microaggregate", "method": "mdav-generic", "k": 3}]}  # fmt: skip
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return tmp_path


#: Per case: the command's words (with {name} for a file of the study), the input each
#: declared input option names, the files it reads that no option names (a project's), and
#: the fresh name of each writer option when it is not the one pointed at an input.
CASES: dict[str, dict[str, object]] = {
    "protect": {
        "argv": ["protect", "{people.csv}", "--method", "mstk", "-k", "3", "--roles",
                 "{roles.json}", "--hierarchy", "education={education.csv}",
                 "--pseudonymize", "id"],
        "reads": {"input": "people.csv", "roles": "roles.json", "hierarchy": "education.csv"},
    },
    "protect --project": {
        "argv": ["protect", "--project", "{study.microgui.json}", "--pseudonymize", "id"],
        "reads": {"project": "study.microgui.json", "project's table": "people.csv",
                  "project's hierarchy": "education.csv"},
    },
    "protect --project --input": {
        "argv": ["protect", "--project", "{study.microgui.json}", "--input", "{released.csv}"],
        "reads": {"input_option": "released.csv", "project": "study.microgui.json"},
    },
    "protect --plan": {
        "argv": ["protect", "{people.csv}", "--roles", "{roles.json}", "--plan", "{plan.json}",
                 "--pseudonymize", "id"],
        "reads": {"input": "people.csv", "roles": "roles.json", "plan": "plan.json",
                  "plan's mapping": "sexes.csv"},
    },
    "sweep": {
        "argv": ["sweep", "{people.csv}", "--roles", "{roles.json}", "--methods", "mstk",
                 "--k", "3", "--hierarchy", "education={education.csv}", "--workers", "1"],
        "reads": {"input": "people.csv", "roles": "roles.json", "hierarchy": "education.csv"},
    },
    "evaluate": {
        "argv": ["evaluate", "{people.csv}", "{released.csv}", "--roles", "{roles.json}",
                 "--hierarchy", "education={education.csv}"],
        "reads": {"original": "people.csv", "protected": "released.csv",
                  "roles": "roles.json", "hierarchy": "education.csv"},
    },
    "suggest-roles": {"argv": ["suggest-roles", "{people.csv}"], "reads": {"input": "people.csv"}},
    "assess": {
        "argv": ["assess", "{people.csv}", "--roles", "{roles.json}"],
        "reads": {"input": "people.csv", "roles": "roles.json"},
    },
    "dependency-tree": {
        "argv": ["dependency-tree", "{people.csv}", "--attributes", "age,sex"],
        "reads": {"input": "people.csv"},
    },
    "gui": {"argv": ["gui", "{people.csv}"], "reads": {"file": "people.csv"}},
}  # fmt: skip

#: The name of each writer option when it writes a fresh file (suffix as its format wants).
FRESH = {"output": "out.csv", "report": "out.json", "report_html": "out.html",
         "report_pdf": "out.pdf", "pseudonym_key": "key.csv", "json": "out.json",
         "screenshot": "out.png"}  # fmt: skip
#: Writer options a command cannot run without.
REQUIRED = {"protect": ["output"]}


def _writers(command: str) -> list[argparse.Action]:
    return [
        a
        for a in _options(_subparsers()[command])
        if isinstance(a.type, PathOption) and not a.type.reads
    ]


def _matrix() -> list[tuple[str, str, str]]:
    """(case, writer dest, input read), generated: every writer of the case's command against
    every file the case reads. Every declared input of a command is read by one of its cases."""
    out = []
    covered: dict[str, set[str]] = {}
    for case, spec in CASES.items():
        command = case.split()[0]
        reads = spec["reads"]
        assert isinstance(reads, dict)
        covered.setdefault(command, set()).update(reads)
        for writer in _writers(command):
            assert writer.dest in FRESH, f"{command} {writer.dest}: give it a fresh name"
            out += [(case, writer.dest, read) for read in reads]
    for command, sub in _subparsers().items():
        inputs = {a.dest for a in _options(sub) if isinstance(a.type, PathOption) and a.type.reads}
        assert inputs <= covered.get(command, set()), (command, inputs - covered[command])
    return out


def _argv(study: Path, case: str, writer: str | None, target: Path | None) -> list[str]:
    spec = CASES[case]
    words = spec["argv"]
    assert isinstance(words, list)
    argv = [_fill(w, study) if "{" in w else w for w in words]
    command = case.split()[0]
    flags = {a.dest: a.option_strings[-1] for a in _writers(command)}
    for dest in REQUIRED.get(command, []):
        if dest != writer:
            argv += [flags[dest], str(study / FRESH[dest])]
    if writer is not None and target is not None:
        argv += [flags[writer], str(target)]
    return argv


def _fill(word: str, study: Path) -> str:
    start, end = word.index("{"), word.index("}")
    return word[:start] + str(study / word[start + 1 : end]) + word[end + 1 :]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize(("case", "writer", "read"), _matrix())
def test_no_writer_writes_over_a_file_the_command_reads(
    study: Path, case: str, writer: str, read: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused in one line, exit 2, before anything is read: every file byte-identical and no
    file added (no partial output)."""
    target = study / CASES[case]["reads"][read]  # type: ignore[index]
    before = _snapshot(study)
    code = main(_argv(study, case, writer, target))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "refusing to write" in err, err
    assert target.name in err
    assert _snapshot(study) == before


def test_the_matrix_commands_run_when_the_outputs_are_new(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusals above come from the inputs, not from a command that fails anyway: each
    case (but the app) writes its outputs when they name new files."""
    for case in CASES:
        command = case.split()[0]
        if command == "gui":
            continue
        argv = _argv(study, case, None, None)
        if command != "protect":
            argv += ["--json", str(study / f"{command}.json")]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, (case, err)


def test_roles_file_reached_by_another_spelling_is_refused(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """By inode: a hard link, a symlink and a ``..`` spelling of the roles file."""
    roles = study / "roles.json"
    (study / "sub").mkdir()
    os.link(roles, study / "hard.json")
    (study / "soft.json").symlink_to(roles)
    before = roles.read_bytes()
    for target in (study / "hard.json", study / "soft.json", study / "sub" / ".." / "roles.json"):
        code = main(_argv(study, "protect", "report", target))
        err = capsys.readouterr().err
        assert code == 2 and "refusing to write" in err, err
    assert roles.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(study, "protect", "report", study / "out.json")
    code = main([*argv, "--pseudonym-key", str(study / "." / "out.json")])
    err = capsys.readouterr().err
    assert code == 2 and "same file" in err and err.count("\n") == 1
    assert not (study / "out.json").exists() and not (study / "out.csv").exists()


def test_project_files_are_the_projects_table_and_hierarchies(study: Path) -> None:
    project = load_project(study / "study.microgui.json")
    assert {p.name for p in project.read_files(study)} == {"people.csv", "education.csv"}


# --- the Python API ----------------------------------------------------------------------------


def test_api_export_refuses_the_roles_file_its_roles_were_read_from(study: Path) -> None:
    frame = pd.read_csv(study / "people.csv")
    roles = roles_from_file(study / "roles.json", list(frame.columns))
    result = microgui.protect(frame, roles=roles, method="mdav-generic", k=3, seed=1)
    before = _snapshot(study)
    for kwargs in (
        {"path": study / "roles.json"},
        {"path": study / "out.csv", "report": study / "roles.json"},
        {"path": study / "out.csv", "pseudonymize": "id", "pseudonym_key": study / "roles.json"},
    ):
        with pytest.raises(ExportRefused, match="refusing to write 'roles.json'"):
            result.export(**kwargs)  # type: ignore[arg-type]
    assert _snapshot(study) == before
    result.export(study / "out.csv")  # a new name is written
    assert (study / "out.csv").exists()


def test_a_dataset_with_other_roles_still_counts_the_roles_file_as_read(study: Path) -> None:
    from microgui.core.table.dataset import Dataset

    frame = pd.read_csv(study / "people.csv")
    roles = roles_from_file(study / "roles.json", list(frame.columns))
    dataset = Dataset(frame, roles, study / "people.csv")
    assert [p.name for p in dataset.read_files] == ["people.csv", "roles.json"]
    edited = dataset.with_spec("income", roles["income"])
    assert edited.roles.source is None
    assert [p.name for p in edited.read_files] == ["people.csv", "roles.json"]


def test_partitioned_run_refuses_its_inputs_before_any_cluster_is_reached(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--engine dask`` with an output folder: the report is checked against every input, and
    no input may lie in the folder the run replaces (one microgui wrote before included)."""
    from microgui.core.release.distributed import MARKER

    folder = study / "parts"
    folder.mkdir()
    (folder / MARKER).write_text("{}")
    hierarchy = folder / "education.csv"
    hierarchy.write_text(EDU_ROWS)
    base = ["protect", str(study / "people.csv"), "--method", "mdav", "-k", "3", "--qi", "age",
            "--engine", "dask", "--block-size", "20", "--hierarchy", f"education={hierarchy}"]  # fmt: skip
    before = _snapshot(folder)
    for argv in (
        [*base, "-o", str(study / "out"), "--report", str(hierarchy)],
        [*base, "-o", str(folder)],
    ):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "refusing to write" in err and err.count("\n") == 1, err
    assert _snapshot(folder) == before and not (study / "out").exists()


def _fifo_cases() -> list[tuple[str, str]]:
    """(case, input read), generated from the same cases: every file a command reads."""
    return [
        (case, read)
        for case, spec in CASES.items()
        if not case.startswith("gui")
        for read in spec["reads"]  # type: ignore[attr-defined]
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize(("case", "read"), _fifo_cases())
def test_no_input_is_read_from_a_fifo(study: Path, case: str, read: str) -> None:
    """Every file a command reads goes through a reader that refuses a FIFO (or a device)
    before opening it: a --roles FIFO hung protect, sweep and evaluate, and --roles /dev/zero
    filled the memory (issue 27). Run in a process of its own, so a hang fails the test."""
    target = study / CASES[case]["reads"][read]  # type: ignore[index]
    target.unlink()
    os.mkfifo(target)
    argv = _argv(study, case, None, None)
    done = subprocess.run(
        [sys.executable, "-m", "microgui.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=study,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "regular file" in done.stderr, done.stderr
