"""Issue 13, item 6: no binary float noise in releases, and rounding to the source's decimals."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference_sets import shared_path

import microgui
from microgui.cli import main
from microgui.core.errors import MicroguiError
from microgui.core.table.numbers import (
    clean_decimals,
    round_decimals,
    source_decimals,
    written_decimals,
)
from tests.cli_argv import protect_argv


@pytest.mark.parametrize(
    ("value", "clean"),
    [
        (1565.4000000000008, "1565.4"),
        (349.3999999999993, "349.4"),
        (0.1 + 0.2, "0.3"),
        (29393.000000000004, "29393.0"),
        (-17172.199999999975, "-17172.2"),
        (7.0, "7.0"),
        (0.0, "0.0"),
    ],
)
def test_clean_decimals_prints_the_short_decimal(value: float, clean: str) -> None:
    assert repr(float(clean_decimals(np.array([value]), 1)[0])) == clean


def test_clean_decimals_keeps_real_digits_and_specials() -> None:
    x = np.array([4147.571428571428, 1 / 3, 52341.12345678901, np.nan, np.inf, -np.inf])
    out = clean_decimals(x, 0)
    assert list(out[:3]) == list(x[:3])  # no short decimal within noise: left exactly as is
    assert np.isnan(out[3]) and out[4] == np.inf and out[5] == -np.inf


def test_clean_decimals_leaves_data_alone() -> None:
    """Full-precision doubles (what a simulation writes) are data, not noise."""
    x = np.random.default_rng(0).normal(5e4, 1e4, 100_000)
    assert written_decimals(pd.Series(x)) is None  # full precision: never cleaned
    assert (clean_decimals(x, None) == x).all()
    # means of data written with 2 decimals: only the noise goes
    data = np.random.default_rng(1).integers(0, 10**7, (20_000, 7)) / 100
    means = data.mean(axis=1)
    cleaned = clean_decimals(means, 2)
    assert np.all(np.abs(cleaned - means) <= 16 * np.spacing(np.abs(means)))
    sevenths = (np.round(data.sum(axis=1) * 100) % 7) != 0
    assert (cleaned[sevenths] == means[sevenths]).mean() > 0.99  # no short form: kept


def test_noise_near_zero_of_a_large_column() -> None:
    assert list(clean_decimals(np.array([1.16e-10, 3.5]), 0, scale=5e6)) == [0.0, 3.5]
    assert list(clean_decimals(np.array([1.16e-10]), 0)) == [1.16e-10]  # no scale: a value


def test_round_decimals_gives_clean_values() -> None:
    assert list(round_decimals(np.array([2.675, 1.005, 39.4, 40.6]), 0)) == [3.0, 1.0, 39.0, 41.0]
    assert repr(float(round_decimals(np.array([1565.4000000000008]), 1)[0])) == "1565.4"


@pytest.mark.parametrize(
    ("series", "decimals"),
    [
        (pd.Series(["1.25", "3", " 4.5 ", None], dtype=object), 2),
        (pd.Series(["72,5", "80,25"], dtype=object), 2),  # decimal comma
        (pd.Series(["39", "50"], dtype=object), 0),
        (pd.Series([1, 2, 3]), 0),
        (pd.Series([0.1, 2.25, np.nan]), 2),
        (pd.Series([1e-30]), 30),
        (pd.Series(["2.858e-10", "1.5e-11"]), 13),  # the exponent counts
        (pd.Series(["1.2E+3"]), 0),
    ],
)
def test_source_decimals(series: pd.Series, decimals: int) -> None:
    assert source_decimals(series) == decimals


def _significant_digits(text: str) -> int:
    mantissa = text.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


def assert_no_float_noise(released: pd.Series, source: pd.Series, labels: np.ndarray) -> None:
    """Each released mean, as text, is the exact group mean of the source values when that has
    a short decimal form, else within a few parts in 10^16 of it, and no text ends in a run of
    zeros or nines followed by a digit (the signature of float noise)."""
    exact_values = [Fraction(str(v)) for v in source]
    sums: dict[int, Fraction] = {}
    counts: dict[int, int] = {}
    for label, v in zip(labels.tolist(), exact_values, strict=True):
        sums[label] = sums.get(label, Fraction(0)) + v
        counts[label] = counts.get(label, 0) + 1
    scale = max(abs(sums[g] / counts[g]) for g in sums)
    for text, label in zip(released.astype(str), labels.tolist(), strict=True):
        exact = sums[label] / counts[label]
        got = Fraction(Decimal(text))
        short = Decimal(exact.numerator) / Decimal(exact.denominator)
        allowed = max(Fraction(1, 10**15) * abs(exact), Fraction(1, 10**15) * scale)
        assert abs(got - exact) <= allowed, (text, float(exact))
        if Fraction(short) == exact and _significant_digits(str(short)) <= 12:
            assert got == exact, (text, str(short))
        assert not re.search(r"(0{5,}|9{5,})\d{1,2}$", text.split("e")[0]), text


def test_eia_release_has_no_float_noise(tmp_path: Path) -> None:
    cols = ["RESREVENUE", "RESSALES", "COMREVENUE", "TOTSALES"]
    out, report = tmp_path / "eia.csv", tmp_path / "eia.json"
    argv = ["protect", str(shared_path("sdc-reference", "EIA.csv")), "-o", str(out)]
    argv += ["--keep-order"]  # read back row for row beside the source
    argv += ["--method", "mdav", "-k", "5", "--qi", ",".join(cols)]
    argv += ["--identifiers", "UTILITYID,UTILNAME", "--group-column", "g"]
    assert main([*argv, "--report", str(report)]) == 0
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    source = pd.read_csv(shared_path("sdc-reference", "EIA.csv"), dtype=str)
    labels = released["g"].astype(int).to_numpy()
    for col in cols:
        assert_no_float_noise(released[col], source[col], labels)
    # pass-through columns are the very same text
    assert released["STATE"].tolist() == source["STATE"].tolist()
    assert "rounding" not in json.loads(report.read_text())


def test_adult_ages_are_integers_with_round_source(tmp_path: Path) -> None:
    src = shared_path("adult", "adult.csv")
    out, report = tmp_path / "adult.csv", tmp_path / "adult.json"
    argv = protect_argv(src, out, "--method", "mdav-generic", "-k", "5")
    argv += ["--qi", "age,sex,race,education", "--nominal", "sex,race,education"]
    argv += ["--group-column", "g"]
    assert main([*argv, "--report", str(report)]) == 0
    plain = pd.read_csv(out, sep=None, engine="python", dtype=str)
    labels = plain["g"].astype(int).to_numpy()
    source = pd.read_csv(src, sep=";", dtype=str)
    assert_no_float_noise(plain["age"], source["age"], labels)
    assert main([*argv, "--report", str(report), "--round", "source"]) == 0
    rounded = pd.read_csv(out, sep=None, engine="python", dtype=str)
    assert rounded["age"].str.fullmatch(r"\d+").all()
    data = json.loads(report.read_text())
    assert data["rounding"]["round"] == "source"
    assert data["rounding"]["decimals"] == {"age": 0}
    before = data["rounding"]["information_loss_unrounded"]
    assert 0 < before and data["information_loss"] > 0
    # rounding moves each age by at most half a year
    means = pd.to_numeric(plain["age"]).to_numpy()
    assert np.abs(pd.to_numeric(rounded["age"]).to_numpy() - means).max() <= 0.5


def test_round_keeps_k_anonymity_and_refuses_bad_values() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.normal(50, 10, 90).round(2), "y": rng.normal(size=90)})
    res = microgui.protect(frame, qi=["x", "y"], k=4, seed=1, params={"round": "1"})
    assert res.safe and res.run.report["k_anonymity"] >= 4
    assert all(len(str(v).split(".")[-1]) <= 1 for v in res.frame["x"])
    with pytest.raises(MicroguiError, match="round"):
        microgui.protect(frame, qi=["x"], k=4, params={"round": "11"})


def test_cli_round_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t.csv"
    pd.DataFrame({"x": np.arange(30) * 1.5, "y": np.arange(30) % 7}).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    argv = protect_argv(src, out, "--method", "mdav", "-k", "3", "--qi", "x,y")
    assert main([*argv, "--round", "source", "--param", "round=2"]) == 2
    assert "once" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--round", "source"]) == 0
    released = pd.read_csv(out, dtype=str)
    assert released["y"].str.fullmatch(r"\d+").all()  # integers in, integers out


def test_round_source_keeps_values_written_with_an_exponent(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    n = 60
    tiny = [f"{v:.3e}" for v in rng.uniform(1e-10, 9e-10, n)]
    neg = [f"{v:.1f}" for v in rng.uniform(-0.4, 0.4, n)]
    src = tmp_path / "t.csv"
    pd.DataFrame({"tiny": tiny, "neg": neg, "x": rng.normal(size=n).round(2)}).to_csv(
        src, index=False
    )
    out, report = tmp_path / "o.csv", tmp_path / "o.json"
    argv = ["protect", str(src), "-o", str(out), "--keep-order", "--method", "mdav", "-k", "3"]
    argv += ["--qi", "tiny,neg,x", "--round", "source", "--report", str(report)]
    assert main(argv) == 0
    text = pd.read_csv(out, dtype=str)
    assert (pd.to_numeric(text["tiny"]) > 0).all()  # 13 decimals kept, never rounded to 0
    assert json.loads(report.read_text())["rounding"]["decimals"]["tiny"] == 13
    assert "-0" not in set(text["neg"]) and "-0.0" not in set(text["neg"])


def test_whole_means_are_written_without_a_decimal_point(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": [30, 30, 30, 41, 42, 43] * 5, "w": np.arange(30) * 0.5})
    src = tmp_path / "a.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "o.csv"
    assert main(protect_argv(src, out, '--method', 'mdav', '-k', '3', '--qi', 'age,w')) == 0  # fmt: skip
    ages = pd.read_csv(out, dtype=str)["age"]
    whole = pd.to_numeric(ages) == pd.to_numeric(ages).round()
    assert whole.any() and ages[whole].str.fullmatch(r"-?\d+").all()


def _written_decimals_hashing_everything(values: np.ndarray) -> int | None:
    """written_decimals as it was before the head of the column was read first (issue 33)."""
    from microgui.core.table.numbers import _SAMPLE, FULL_PRECISION_DIGITS, _digits

    distinct = pd.unique(values[np.isfinite(values)])
    if not len(distinct):
        return 0
    best = 0
    for v in distinct[:_SAMPLE]:
        mantissa, _, exponent = repr(float(v)).lower().partition("e")
        decimals, significant = _digits(mantissa)
        if significant >= FULL_PRECISION_DIGITS:
            return None
        best = max(best, decimals - (int(exponent) if exponent else 0))
    if len(distinct) <= _SAMPLE:
        return best
    for decimals in range(best, best + FULL_PRECISION_DIGITS + 1):
        unit = 10.0**decimals
        if bool(np.all(np.round(distinct * unit) / unit == distinct)):
            return decimals
    return None


@pytest.mark.parametrize("full_at", [None, 0, 3, 4_095, 4_096, 9_000])
@pytest.mark.parametrize("repeats", [1, 40])
def test_written_decimals_read_from_the_head_first_are_the_whole_columns(
    full_at: int | None, repeats: int
) -> None:
    """The head of a column decides only when one of its first distinct values is a
    full-precision double; elsewhere (such a value after the head, beyond the first 2,000
    distinct ones, or none) the whole column is read, as before."""
    rng = np.random.default_rng(9)
    n = 12_000
    values = np.repeat(np.round(rng.normal(size=n // repeats + 1) * 100, 2), repeats)[:n]
    values[::501] = np.nan
    if full_at is not None:
        values[full_at] = 0.1 + 0.2  # 0.30000000000000004: 17 significant digits
    expected = _written_decimals_hashing_everything(values)
    assert written_decimals(pd.Series(values)) == expected
