"""Issue 18, item 3: an app session replays from the command line.

A session in the app (a table, its roles, a run with parameters and a seed) is exported and
saved as a project; ``microgui protect --project FILE -o OUT`` gives the byte-identical release,
also for an earlier run (``--run N``) and for a new extract with the same columns (``--input``).
The history's "Copy as command" text, parsed by the command line, gives the same run spec and
the same roles.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtGui import QGuiApplication

from microgui.cli import build_parser, main, roles_from_args, spec_from_args
from microgui.core.methods import get_method, resolve_params
from microgui.core.runs import RunSpec
from microgui.core.table.roles import roles_from_lists
from microgui.qt.main_window import MainWindow

TIMEOUT_MS = 60_000
ORDER = ["<10", "10-20", "20+"]


def _table(path: Path, n: int = 90, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    pd.DataFrame(
        {
            "person": [f"P{i}" for i in range(n)],
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(8, 1, n), 2),
            "city, state": rng.choice(["Reus, CT", "Vic, CT", "Olot, GI"], n),
            "band": rng.choice(ORDER, n),
            "note": [f"n{i}" for i in range(n)],
        }
    ).to_csv(path, index=False)
    return path


def _session(window: MainWindow, qtbot, folder: Path) -> tuple[Path, list[int]]:  # type: ignore[no-untyped-def]
    source = _table(folder / "survey.csv")
    ctl = window.controller
    with qtbot.waitSignal(ctl.dataset_loaded, timeout=TIMEOUT_MS):
        window.open_file(source)
    roles = roles_from_lists(
        list(ctl.dataset.frame.columns),  # type: ignore[union-attr]
        qi=["age", "income", "city, state", "band"],
        nominal=["city, state"],
        ordinal={"band": ORDER},
        identifiers=["person"],
    )
    with qtbot.waitSignal(ctl.roles_changed):
        ctl.set_roles(roles)
    # byte for byte between the app, the command line and the copied command: the input order
    # kept (a release is shuffled from a fresh, unrecorded seed by default, issue 31)
    from microgui.qt.export_options import ExportOptions

    ctl.export_options = ExportOptions(keep_order=True)
    ids = []
    for spec in (
        RunSpec.make("mdav-generic", 3, {"ordinal_average": "convex-median"}, 11),
        RunSpec.make("mdav-generic", 4, {}, None),  # a fresh seed: the report keeps it
    ):
        with qtbot.waitSignal(ctl.run_finished, timeout=TIMEOUT_MS):
            ctl.start_run(spec)
        ids.append(ctl.shown_run_id)
    return source, ids  # type: ignore[return-value]


def test_a_saved_session_replays_byte_identical(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    source, ids = _session(window, qtbot, tmp_path)
    assert window.export_to(tmp_path / "app_last.csv")
    window.controller.show_run(ids[0])
    assert window.export_to(tmp_path / "app_first.csv")
    project = tmp_path / "survey.microgui.json"
    assert window.save_project_to(project)
    # the app kept the input order (_session); the project replays with --keep-order (issue 31)
    replay = ["protect", "--project", str(project), "--keep-order"]
    assert main([*replay, "-o", str(tmp_path / "cli_last.csv")]) == 0
    assert (tmp_path / "cli_last.csv").read_bytes() == (tmp_path / "app_last.csv").read_bytes()
    args = [*replay, "--run", "1", "-o", str(tmp_path / "cli_1.csv")]
    assert main(args) == 0
    assert (tmp_path / "cli_1.csv").read_bytes() == (tmp_path / "app_first.csv").read_bytes()
    # today's extract: same columns, other records
    new = _table(tmp_path / "extract.csv", n=60, seed=5)
    args = [
        "protect",
        "--project",
        str(project),
        "--input",
        str(new),
        "-o",
        str(tmp_path / "x.csv"),
    ]
    assert main(args) == 0
    assert len(pd.read_csv(tmp_path / "x.csv")) == 60
    assert source.exists()


def test_replay_refusals(
    window: MainWindow,
    qtbot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    _session(window, qtbot, tmp_path)
    project = tmp_path / "p.microgui.json"
    assert window.save_project_to(project)
    other = tmp_path / "other.csv"
    pd.DataFrame({"age": [1, 2, 3], "x": [1, 2, 3]}).to_csv(other, index=False)
    cases = [
        (["--method", "mdav"], "drop --method"),
        (["--run", "3"], "its runs are 1, 2"),
        (["--input", str(other)], "lacks the project's column(s)"),
    ]
    for extra, message in cases:
        code = main(["protect", "--project", str(project), "-o", str(tmp_path / "o.csv"), *extra])
        err = capsys.readouterr().err
        assert code != 0 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "o.csv").exists()


def test_copy_as_command_parses_back_to_the_same_run(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    _source, ids = _session(window, qtbot, tmp_path)
    panel = window.history_panel
    for run_id in ids:
        panel.select_runs([run_id])
        text = panel.copy_command()
        assert QGuiApplication.clipboard().text() == text
        argv = shlex.split(text.splitlines()[0])
        assert argv[:2] == ["microgui", "protect"]
        args = build_parser().parse_args(argv[1:])
        entry = window.controller.entry(run_id)
        expected = entry.reproducible_spec
        got = spec_from_args(args)
        assert expected.seed is not None and got.seed == expected.seed
        method = get_method(expected.method)
        assert resolve_params(method, got.param_dict) == resolve_params(method, expected.param_dict)
        assert (got.method, got.k, got.hierarchies, got.strata, got.block_size) == (
            expected.method, expected.k, expected.hierarchies, expected.strata,
            expected.block_size,
        )  # fmt: skip
        roles = roles_from_args(args, list(entry.dataset.frame.columns))
        assert roles == entry.dataset.roles
        # and it runs: the same release as the app's export
        out = tmp_path / f"cmd{run_id}.csv"
        argv[argv.index("-o") + 1] = str(out)
        assert "--keep-order" in argv  # the app's export option, carried (issue 31)
        assert main(argv[1:]) == 0
        window.controller.show_run(run_id)
        assert window.export_to(tmp_path / f"app{run_id}.csv")
        assert out.read_bytes() == (tmp_path / f"app{run_id}.csv").read_bytes()


def test_export_options_reach_the_release_and_the_copied_command(
    window: MainWindow,
    qtbot,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """File → Export options… (issue 18): a CSV format and pseudonyms apply to the app's export;
    "Copy as command" says them, and its command gives the same bytes (pseudonyms aside:
    they are drawn anew, by design)."""
    from microgui.core.release import CsvOptions
    from microgui.core.release.pseudonyms import PSEUDONYM_PATTERN
    from microgui.qt.export_options import ExportOptions

    _source, ids = _session(window, qtbot, tmp_path)
    ctl = window.controller
    dialog = window.export_options_dialog()
    dialog.sep.setCurrentIndex(dialog.sep.findData(","))
    dialog.decimal.setCurrentIndex(dialog.decimal.findData(","))
    dialog._accept()  # a decimal comma with a comma separator: refused in the dialog
    assert dialog.isVisible() and "separator" in dialog.error.text()
    dialog.sep.setCurrentIndex(dialog.sep.findData(";"))
    dialog.encoding.setCurrentIndex(dialog.encoding.findData("cp1252"))
    dialog._accept()
    assert not dialog.isVisible()
    assert ctl.export_options.csv == CsvOptions.make(";", ",", "cp1252")
    assert ctl.export_options.pseudonymize == ()

    run_id = ids[-1]
    window.history_panel.select_runs([run_id])
    argv = shlex.split(window.history_panel.copy_command().splitlines()[0])
    assert argv[argv.index("--csv-sep") + 1] == ";" and "--csv-encoding" in argv
    out, app_out = tmp_path / "cmd.csv", tmp_path / "app.csv"
    argv[argv.index("-o") + 1] = str(out)
    assert main(argv[1:]) == 0
    ctl.show_run(run_id)
    assert window.export_to(app_out)
    assert out.read_bytes() == app_out.read_bytes()
    text = app_out.read_bytes().decode("cp1252")
    assert text.splitlines()[0].count(";") == 4  # five columns: the identifier left out
    assert "Exported" in window.statusBar().currentMessage()
    assert "separator ;" in window.statusBar().currentMessage()

    ctl.export_options = ExportOptions(CsvOptions(), ("person",), True)
    released = tmp_path / "pseud.csv"
    assert window.export_to(released)
    frame = pd.read_csv(released)
    assert all(PSEUDONYM_PATTERN.fullmatch(v) for v in frame["person"])
    assert (tmp_path / "pseud.pseudonym-key.csv").exists()
    assert "pseudonyms for person" in window.statusBar().currentMessage()
    # the app writes the one exact key (issue 27): each pseudonym back to its record's original
    key = pd.read_csv(tmp_path / "pseud.pseudonym-key.csv", dtype=str, keep_default_na=False)
    mapping = dict(zip(key["pseudonym"], key["original"], strict=True))
    originals = pd.read_csv(_source, dtype=str, keep_default_na=False)["person"].tolist()
    # the records in a random order (issue 31): every original once, each pseudonym its own
    assert sorted(mapping[p] for p in frame["person"]) == sorted(originals)
    assert [mapping[p] for p in frame["person"]] != originals


def test_every_protect_option_is_known_to_the_replay() -> None:
    """``protect --project`` refuses the options a project gives (cli._PROJECT_GIVES); every
    other option of protect is an output, a reading option or how to run. A new protect option
    must be put in one of the two lists, so that the replay never silently ignores it."""
    from microgui import cli

    parser = build_parser()
    protect = next(
        a
        for a in parser._subparsers._group_actions[0].choices.items()
        if a[0] == "protect"  # type: ignore[union-attr]
    )[1]
    options = {a.dest for a in protect._actions if a.option_strings and a.dest != "help"}
    given = {name for name, _flag in cli._PROJECT_GIVES}
    not_run = {
        "output", "sheet", "report", "report_html", "report_pdf", "allow_unsafe",
        "keep_formula_cells", "project", "input_option", "run_number", "pseudonymize",
        "pseudonym_key", "csv_sep", "csv_decimal", "csv_encoding", "engine", "scheduler",
        "workers", "quiet", "list_methods", "group_column", "rename_invalid", "rename",
        "keep_order", "order_seed",
        # how to run (threads: the same partition on any number; Spark's master) and a report
        # option (the household size as a key of the risk): none changes the release
        "threads", "master", "household_size_key",
    }  # fmt: skip
    assert options - given - not_run == set(), "a protect option unknown to the replay"
    assert not (given & not_run)
