"""Issue 15 (part): users read authors and years, never the reference texts' file names."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

import microgui
from microgui.cli import COMMANDS, main
from microgui.core.methods import available_methods
from microgui.core.references import REFERENCES, readable

PAPER = re.compile(r"(?<![\w,.])00[0-4](_[0-9a-f]{16}\.txt|\s*(§|Algorithm|Table|eqs?\.|Def))")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("003_309fe4adb430bc25.txt, Algorithm 5.1", "Domingo-Ferrer & Torra 2005, Algorithm 5.1"),
        ("(003 §5.3)", "(Domingo-Ferrer & Torra 2005, §5.3)"),
        ("004 eqs. 6-9", "Ramana & Valli Kumari 2013, eqs. 6-9"),
        ("see 002 §4.5; 000 §3", "see Sulekha & Arumugam, §4.5; Sun, Wang, Li & Zhang 2012, §3"),
        ("blocks of 100,000, then 50,000 records", "blocks of 100,000, then 50,000 records"),
        ("IL 2.004 %, 003a", "IL 2.004 %, 003a"),
    ],
)
def test_readable(text: str, expected: str) -> None:
    assert readable(text) == expected


def test_every_reference_is_complete() -> None:
    assert sorted(REFERENCES) == ["000", "001", "002", "003", "004"]
    for ref in REFERENCES.values():
        assert ref.authors and ref.title and ref.full.startswith(ref.authors)


def test_method_texts_name_authors_not_files() -> None:
    for method in available_methods():
        for text in (method.reference, method.text, readable(method.summary)):
            assert not PAPER.search(text), (method.name, text)
        for param in method.all_params:
            assert not PAPER.search(readable(param.help)), (method.name, param.name)


def test_help_and_method_list_name_authors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], *([c] for c in COMMANDS)):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
    assert main(["protect", "--list-methods"]) == 0
    out = capsys.readouterr().out
    assert "Domingo-Ferrer & Torra 2005" in out
    assert not PAPER.search(out), PAPER.search(out)


def test_run_report_citation_is_readable() -> None:
    frame = pd.DataFrame({"x": np.arange(12.0), "y": np.arange(12.0) % 5})
    res = microgui.protect(frame, qi=["x", "y"], k=3, seed=1)
    assert res.run.report["citation"].startswith("Domingo-Ferrer & Torra 2005, Algorithm 5.1")


def _strings(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}/{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def test_no_report_of_any_method_names_a_paper_file() -> None:
    """Every string of every method's run report (notes, bases, citations, parameter texts) on
    a mixed table and on an all-continuous one: authors and years, never "003 §5.2"."""
    from microgui.core.demo import load_demo
    from microgui.core.errors import MicroguiError
    from microgui.core.runs import RunSpec, run_protection
    from microgui.core.table.roles import AttributeKind, AttributeRole

    mixed = load_demo()
    frame = mixed.frame.head(400)
    mixed = type(mixed).from_frame(frame, mixed.roles)
    roles = mixed.roles
    for col, spec in list(roles.items()):
        if (
            spec.role is AttributeRole.QUASI_IDENTIFIER
            and spec.kind is not AttributeKind.CONTINUOUS
        ):
            roles = roles.replace(col, spec.with_role(AttributeRole.NON_CONFIDENTIAL))
    continuous = mixed.with_roles(roles)
    # optimal (at most 25 records by default) and optimal-univariate (one attribute)
    first = next(c for c in roles.quasi_identifiers)
    for col in roles.quasi_identifiers[1:]:
        roles = roles.replace(col, roles[col].with_role(AttributeRole.NON_CONFIDENTIAL))
    small = type(mixed).from_frame(frame.head(20), roles)
    assert list(small.roles.quasi_identifiers) == [first]
    ran = set()
    for dataset in (mixed, continuous, small):
        for method in available_methods():
            try:
                result = run_protection(dataset, RunSpec.make(method.name, 5, seed=1))
            except MicroguiError:
                continue  # refused on these roles (another table runs it)
            ran.add(method.name)
            for where, text in _strings(result.report):
                assert not PAPER.search(text), (method.name, where, text)
    assert ran == {m.name for m in available_methods()}, sorted(ran)


def test_column_names_that_look_like_paper_numbers_are_kept_exactly() -> None:
    """Only microgui's own texts are made readable: a column named "002 Table 2" or "003 §5"
    stays exactly so in every report entry that names it (adversarial review)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "002 Table 2": rng.normal(size=60),
            "003 §5": rng.normal(size=60),
            "(004)": rng.normal(size=60),
        }
    )
    one = microgui.protect(frame, qi=["002 Table 2"], method="optimal-univariate", k=3, seed=1)
    assert one.run.report["sorted_by"] == "002 Table 2"
    ama = microgui.protect(frame, qi=list(frame.columns), method="ama", k=3, seed=1)
    names = set(frame.columns)
    assert set(ama.run.report["key_attributes"]) <= names
    assert {c for edge in ama.run.report["tree_edges"] for c in edge[:2]} <= names
    assert list(ama.run.report["quasi_identifiers"]) == list(frame.columns)
