"""Issue 30, item 5: valid SPSS/Stata names proposed for the columns a format cannot name.

Rules: IBM SPSS Statistics Command Syntax Reference, "Variable names"; Stata User's Guide
[U] 11.3 "Naming conventions" (as enforced by ``microgui.core.release.formats._check_names``).
"""

from __future__ import annotations

import pandas as pd
import pytest

from microgui.core.errors import ExportRefused
from microgui.core.io.names import check_renames, is_valid_name, valid_names
from microgui.core.release.formats import _check_names

HOSTILE = [
    "marital-status", "age", "AGE", "1st", "BY", "in", "str12", "é" * 40, "x" * 80,
    "a.", "_lead", "x_2", "x 2", "x-2", "", "   ", "=cmd()", "名前", "a\nb", "with", "_n",
]  # fmt: skip


@pytest.mark.parametrize("fmt", ["spss", "stata"])
def test_every_proposal_is_valid_unique_and_the_format_writer_accepts_it(fmt: str) -> None:
    renames = valid_names(HOSTILE, fmt)
    released = [renames.get(c, c) for c in HOSTILE]
    assert all(is_valid_name(n, fmt) for n in released), released
    keys = [n.upper() if fmt == "spss" else n for n in released]
    assert len(set(keys)) == len(keys)
    assert check_renames(HOSTILE, renames, fmt) == []
    # the writer's own check (the one that refused marital-status) accepts the proposals
    _check_names(pd.DataFrame(columns=released), fmt)
    with pytest.raises(ExportRefused):
        _check_names(pd.DataFrame(columns=HOSTILE), fmt)


def test_valid_names_are_kept_and_never_taken_by_a_proposal() -> None:
    renames = valid_names(["x 2", "x_2", "age"], "stata")
    assert renames == {"x 2": "x_2_2"}
    assert valid_names(["age", "income", "sex"], "spss") == {}


def test_spss_collisions_ignore_case_and_stata_does_not() -> None:
    assert valid_names(["age", "AGE"], "spss") == {"AGE": "AGE_2"}
    assert valid_names(["age", "AGE"], "stata") == {}


def test_reserved_words_get_a_suffix() -> None:
    assert valid_names(["BY", "all", "ok"], "spss") == {"BY": "BY_", "all": "all_"}
    assert valid_names(["in", "_n", "str5", "strL"], "stata") == {
        "in": "in_", "_n": "n", "str5": "str5_", "strL": "strL_",
    }  # fmt: skip


def test_long_utf8_names_are_cut_at_a_character_boundary() -> None:
    spss = valid_names(["é" * 40, "é" * 41], "spss")  # 2 bytes each: 80 and 82 bytes
    assert spss["é" * 40] == "é" * 32  # 64 bytes
    assert spss["é" * 41] == "é" * 31 + "_2"  # 62 + 2 bytes
    assert all(len(v.encode("utf-8")) <= 64 for v in spss.values())
    stata = valid_names(["a" * 40, "a" * 33], "stata")
    assert stata == {"a" * 40: "a" * 32, "a" * 33: "a" * 30 + "_2"}


def test_a_leading_digit_or_nothing_left_gets_a_letter() -> None:
    assert valid_names(["1st", "", "---"], "spss") == {"1st": "v_1st", "": "v", "---": "v_2"}


def test_check_renames_says_what_is_wrong() -> None:
    problems = check_renames(["a", "b"], {"a": "B", "b": "b"}, "spss")
    assert any("both" in p for p in problems)
    assert check_renames(["a"], {"a": "1a"}, "stata")[0].startswith("'1a'")
    assert "no column" in check_renames(["a"], {"z": "y"}, "spss")[0]
    with pytest.raises(ValueError):
        valid_names(["a"], "excel")
