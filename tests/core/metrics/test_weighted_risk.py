"""Survey-weighted frequencies and individual risk (issue 18 item 5) against sdcMicro's figures.

Documented figures used here, all from the R package sdcMicro (GitHub sdcTools/sdcMicro, or its
CRAN mirror cran/sdcMicro):

- ``tests/testthat/test_indivRisk.R``: rk of an 8-record weighted table, without and with
  missing key values (method "approx", qual 1, survey TRUE);
- ``tests/testthat/test_freqCalc.R``: the fk a missing value should give (commented-out
  expectations "method1": 2,2,2,2,1, then 3,3,3,3,5 once "widow" is suppressed);
- ``inst/doc/sdcMicroPaper.tex`` (the 2007 vignette, cran/sdcMicro; an R session kept in
  comments after the Tarragona example): francdat's ``f$Fk`` and ``indivf$rk``.

No printed figures on ``testdata`` were found; there the test compares with a plain transcription
of sdcMicro's R code (``_freqcalc_loop``, ``_indivrisk_loop`` below), written record by record
independently of the vectorised module.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from reference_sets import reference_frame

from microgui.core.errors import InvalidInput, InvalidParameter
from microgui.core.metrics.risk import sample_uniques
from microgui.core.metrics.weighted_risk import (
    frequencies,
    individual_risk,
    risky_records,
    weighted_risk_summary,
)

FRANC_KEYS = ["Key1", "Key2", "Key3", "Key4"]  # keyVars=c(2,4,5,6), w=8 in sdcMicro's man pages


# ---------------------------------------------------------------------------------------------
# Independent transcriptions of sdcMicro's R code (plain loops, no numpy)


def _freqcalc_loop(rows: list[tuple[object, ...]], w: list[float]) -> tuple[list[int], list[float]]:
    """sdcMicro R/freqCalc.r with alpha = 1, one record at a time (None: a missing value).

    Record i counts record j when: j has the same keys (missing in the same places); or, one key
    variable, i present and j missing; or, i complete and j partly (not wholly) missing and equal
    on j's present keys; or, i partly missing and j complete or missing somewhere and equal where
    both have a value. A record with every key missing gets n and the total weight."""
    n, k = len(rows), len(rows[0])
    fk: list[int] = []
    Fk: list[float] = []
    for i in range(n):
        mi = [v is None for v in rows[i]]
        if all(mi):
            fk.append(n)
            Fk.append(sum(w))
            continue
        f, F = 0, 0.0
        for j in range(n):
            mj = [v is None for v in rows[j]]
            if rows[j] == rows[i]:
                hit = True
            elif k == 1:
                hit = mj[0]
            elif not any(mi):
                hit = any(mj) and not all(mj)
                hit = hit and all(mj[c] or rows[j][c] == rows[i][c] for c in range(k))
            else:
                hit = all(mi[c] or mj[c] or rows[j][c] == rows[i][c] for c in range(k))
            if hit:
                f += 1
                F += w[j]
        fk.append(f)
        Fk.append(F)
    return fk, Fk


def _indivrisk_loop(fk: list[int], Fk: list[float]) -> list[float]:
    """sdcMicro R/indivRisk.R, method "approx", qual = 1, survey = TRUE, as written there."""
    out = []
    for f, F in zip(fk, Fk, strict=True):
        if f == F:
            out.append(1 / f)
            continue
        pk = f / F
        if f > 2:
            r = pk / (f - (1 - pk))
        elif f == 2:
            r = (pk / (1 - pk)) - (((pk / (1 - pk)) ** 2) * math.log(1 / pk))
        else:
            r = (pk / (1 - pk)) * math.log(1 / pk)
        out.append(r)
    return out


def _rows(frame: pd.DataFrame, keys: list[str]) -> list[tuple[object, ...]]:
    return [
        tuple(None if pd.isna(v) else v for v in rec)
        for rec in frame[keys].itertuples(index=False, name=None)
    ]


# ---------------------------------------------------------------------------------------------
# (a) a hand case


def test_hand_case() -> None:
    frame = pd.DataFrame(
        {
            "sex": ["f", "f", "m", "m", "m", "m"],
            "region": [1, 1, 1, 2, 2, 2],
            "w": [10.0, 30.0, 50.0, 4.0, 5.0, 6.0],
        }
    )
    freq = frequencies(frame, ["sex", "region"], "w")
    # (f,1): 2 records, 10 + 30 = 40; (m,1): 1 record, 50; (m,2): 3 records, 4 + 5 + 6 = 15
    assert freq.fk.tolist() == [2, 2, 1, 3, 3, 3]
    assert freq.Fk.tolist() == [40.0, 40.0, 50.0, 15.0, 15.0, 15.0]
    assert freq.fk.dtype == np.int64
    rk = individual_risk(freq.fk, freq.Fk)
    # fk = 2, pk = 2/40 = 1/20: pk/(1-pk) = 1/19, rk = 1/19 - (1/19)^2 * log 20
    r2 = 1 / 19 - math.log(20) / 361
    # fk = 1, pk = 1/50: rk = (1/49) * log 50
    r1 = math.log(50) / 49
    # fk = 3, pk = 3/15 = 1/5: rk = (1/5) / (3 - 4/5) = 1/11
    r3 = 1 / 11
    assert rk == pytest.approx([r2, r2, r1, r3, r3, r3], rel=1e-13)
    summary = weighted_risk_summary(frame, ["sex", "region"], "w")
    assert summary["records"] == 6
    assert summary["sample_uniques"] == 1
    assert summary["expected_reidentifications"] == pytest.approx(2 * r2 + r1 + 3 * r3, rel=1e-13)
    assert summary["global_risk_pct"] == pytest.approx(100 * (2 * r2 + r1 + 3 * r3) / 6)
    assert summary["max_individual_risk"] == pytest.approx(r3)
    # no risk above 0.15 (r3 = 0.0909, r1 = 0.0798, r2 = 0.0444)
    assert summary["above_threshold"] == 0
    assert summary["risky_records"] == 0


# ---------------------------------------------------------------------------------------------
# (b) sdcMicro's documented figures

# tests/testthat/test_indivRisk.R: sample_Data is array(c(...), dim=c(8,3)), filled by column
_A = [2, 3, 2, 2, 3, 3, 1, 2]
_B = [3, 3, 3, 3, 3, 3, 4, 3]
_C = [1, 3, 1, 2, 1, 1, 1, 1]
_W = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]


def test_sdcmicro_test_indivrisk_without_missing() -> None:
    frame = pd.DataFrame({"A": _A, "B": _B, "C": _C, "weight": _W})
    freq = frequencies(frame, ["A", "B", "C"], "weight")
    rk = individual_risk(freq.fk, freq.Fk)
    # test_indivRisk.R, "data frame with weight, method = approx, qual = default, survey = TRUE"
    documented = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883]
    documented += [0.03931625, 0.01369863]
    assert rk == pytest.approx(documented, abs=1e-8)
    # "survey = FALSE" (and the unweighted runs): 1/fk, rounded to 5 decimals there
    unweighted = individual_risk(*frequencies(frame, ["A", "B", "C"]))
    assert np.round(unweighted, 5).tolist() == [0.33333, 1.0, 0.33333, 1.0, 0.5, 0.5, 1.0, 0.33333]


def test_sdcmicro_test_indivrisk_with_missing() -> None:
    # the same table with A[8], C[3] and C[7] missing (the NA positions of test_indivRisk.R)
    a = [2, 3, 2, 2, 3, 3, 1, None]
    c = [1, 3, None, 2, 1, 1, None, 1]
    frame = pd.DataFrame({"A": a, "B": _B, "C": c, "weight": _W})
    freq = frequencies(frame, ["A", "B", "C"], "weight")
    rk = individual_risk(freq.fk, freq.Fk)
    documented = [0.013698630, 0.085791288, 0.010554090, 0.032466112, 0.009836066, 0.009836066]
    documented += [0.039316254, 0.005973716]
    assert rk == pytest.approx(documented, abs=1e-9)
    # survey = FALSE: 1/fk = 0.33333, 1, 0.25, 0.5, 0.33333, 0.33333, 1, 0.2 -> fk below
    assert freq.fk.tolist() == [3, 1, 4, 2, 3, 3, 1, 5]
    # by hand: record 8 (NA,3,1) matches records 1, 5, 6 (complete, B=3, C=1) and 3 (2,3,NA)
    assert freq.Fk[7] == 51 + 18 + 92 + 8 + 39
    unweighted = frequencies(frame, ["A", "B", "C"])
    assert unweighted.fk.tolist() == [3, 1, 4, 2, 3, 3, 1, 5]
    assert unweighted.Fk.tolist() == [3, 1, 4, 2, 3, 3, 1, 5]


def test_sdcmicro_test_freqcalc_method1() -> None:
    # tests/testthat/test_freqCalc.R (commented out there): "method1 frequencies should be
    # 2,2,2,2,1"; after suppressing the unique status ("*") they should be 3,3,3,3,5
    frame = pd.DataFrame(
        {
            "region": ["A"] * 5,
            "status": ["single", "married", "married", "single", "widow"],
            "agegroup": ["5"] * 5,
        }
    )
    keys = ["region", "status", "agegroup"]
    assert frequencies(frame, keys).fk.tolist() == [2, 2, 2, 2, 1]
    frame.loc[4, "status"] = None
    assert frequencies(frame, keys).fk.tolist() == [3, 3, 3, 3, 5]
    # a missing value as a category of its own instead
    assert frequencies(frame, keys, missing="category").fk.tolist() == [2, 2, 2, 2, 1]


@pytest.mark.shared
def test_francdat_documented_figures() -> None:
    fr = reference_frame("francdat.csv")
    freq = frequencies(fr, FRANC_KEYS, "w")
    rk = individual_risk(freq.fk, freq.Fk)
    assert freq.fk.tolist() == [2, 2, 2, 1, 1, 1, 1, 2]
    # print.freqCalc: "n1 obs. violate 2-anonymity", "n1 + n2 obs. violate 3-anonymity"
    assert int((freq.fk == 1).sum()) == 4 and int((freq.fk <= 2).sum()) == 8
    # sdcMicroPaper.tex (cran/sdcMicro inst/doc), the commented R session: "f$Fk
    # R> [1]  84.5  84.5 110.0 110.0  17.0   8.0 541.0   5.0". That 2007 freqCalc listed the
    # records sorted by their keys: (1,2,1,1) x2, (1,2,5,1) x2, (3,3,1,5), (4,3,1,1), (4,3,1,4),
    # (6,2,1,5), i.e. records 2, 3, 1, 8, 4, 6, 5, 7.
    by_key = [1, 2, 0, 7, 3, 5, 4, 6]
    assert freq.Fk[by_key].tolist() == [84.5, 84.5, 110.0, 110.0, 17.0, 8.0, 541.0, 5.0]
    # "indivf$rk R> [1] 0.02204233 0.02204233 0.04312367 0.01714426 0.09528771 0.29706308
    # 0.01165448 0.40235948" in the same order. Six of them are ours:
    printed = [0.02204233, 0.02204233, 0.04312367, 0.01714426, 0.09528771, 0.29706308]
    printed += [0.01165448, 0.40235948]
    ours = rk[by_key]
    for pos in (0, 1, 3, 5, 6, 7):
        assert ours[pos] == pytest.approx(printed[pos], abs=1e-8)
    # The 3rd and 5th pair an fk and an Fk of different records in that old version (its 4th,
    # of the same group as the 3rd, is ours): they are the formula at (fk=1, Fk=110) and
    # (fk=2, Fk=17), which checks the fk = 1 and fk = 2 branches on printed numbers.
    odd = individual_risk(np.array([1, 2]), np.array([110.0, 17.0]))
    assert odd == pytest.approx([printed[2], printed[4]], abs=1e-8)
    assert ours[2] == pytest.approx(ours[3]) and ours[4] == pytest.approx(0.17707583, abs=1e-8)
    # the independent transcription agrees on every record
    fk_l, Fk_l = _freqcalc_loop(_rows(fr, FRANC_KEYS), fr["w"].tolist())
    assert freq.fk.tolist() == fk_l and freq.Fk.tolist() == Fk_l
    assert rk == pytest.approx(_indivrisk_loop(fk_l, Fk_l), rel=1e-12)
    summary = weighted_risk_summary(fr, FRANC_KEYS, "w")
    assert summary["expected_reidentifications"] == pytest.approx(float(rk.sum()), rel=1e-15)
    assert summary["global_risk_pct"] == pytest.approx(100 * float(rk.sum()) / 8)
    # localSupp(f, keyVar="Key4", threshold=0.15) (man/localSupp.Rd) suppresses the three
    # records with rk 0.177, 0.297 and 0.402
    assert summary["above_threshold"] == 3
    assert np.flatnonzero(rk > 0.15).tolist() == [3, 5, 6]
    assert summary["risky_records"] == 3
    assert summary["max_individual_risk"] == pytest.approx(0.40235948, abs=1e-8)


@pytest.mark.shared
def test_francdat_freqcalc_example_with_missings() -> None:
    # man/freqCalc.Rd: x[3,5] <- NA; x[4,2] <- x[4,4] <- NA; x[5,6] <- NA; x[6,2] <- NA
    # (columns 2, 4, 5, 6 are Key1..Key4). sdcMicro prints no result; by hand:
    #   1 (1,2,5,1) 18   matches 8 and 3 (1,2,*,1)            fk 3, Fk 18+92+39 = 149
    #   2 (1,2,1,1) 45.5 matches 3                             fk 2, Fk 45.5+39 = 84.5
    #   3 (1,2,*,1) 39   matches 1, 2, 8                       fk 4, Fk 39+18+45.5+92 = 194.5
    #   4 (*,*,1,5) 17   matches 7 (6,2,1,5) and 5 (4,3,1,*)   fk 3, Fk 17+5+541 = 563
    #   5 (4,3,1,*) 541  matches 4 and 6 (*,3,1,1)             fk 3, Fk 541+17+8 = 566
    #   6 (*,3,1,1) 8    matches 5                             fk 2, Fk 8+541 = 549
    #   7 (6,2,1,5) 5    matches 4                             fk 2, Fk 5+17 = 22
    #   8 like 1                                               fk 3, Fk 149
    x = reference_frame("francdat.csv").astype({k: "float64" for k in FRANC_KEYS})
    x.loc[2, "Key3"] = np.nan
    x.loc[3, ["Key1", "Key2"]] = np.nan
    x.loc[4, "Key4"] = np.nan
    x.loc[5, "Key1"] = np.nan
    freq = frequencies(x, FRANC_KEYS, "w")
    assert freq.fk.tolist() == [3, 2, 4, 3, 3, 2, 2, 3]
    assert freq.Fk.tolist() == [149.0, 84.5, 194.5, 563.0, 566.0, 549.0, 22.0, 149.0]
    fk_l, Fk_l = _freqcalc_loop(_rows(x, FRANC_KEYS), x["w"].tolist())
    assert freq.fk.tolist() == fk_l and freq.Fk.tolist() == Fk_l


@pytest.mark.shared
def test_testdata_against_transcription() -> None:
    # measure_risk's example keys (man/measure_risk.Rd) with w="sampling_weight"
    td = reference_frame("testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "sex"]
    freq = frequencies(td, keys, "sampling_weight")
    sizes = td.groupby(keys)["sampling_weight"].transform("size").to_numpy()
    sums = td.groupby(keys)["sampling_weight"].transform("sum").to_numpy()
    assert freq.fk.tolist() == sizes.tolist()
    assert freq.Fk == pytest.approx(sums, rel=1e-12)
    rk = individual_risk(freq.fk, freq.Fk)
    assert rk == pytest.approx(_indivrisk_loop(sizes.tolist(), sums.tolist()), rel=1e-10)
    summary = weighted_risk_summary(td, keys, "sampling_weight")
    assert summary["records"] == 4580
    assert summary["sample_uniques"] == sample_uniques(td, keys)
    assert summary["expected_reidentifications"] == pytest.approx(float(rk.sum()))
    # a 400-record piece with suppressed cells, all-missing records included, by the loop
    rng = np.random.default_rng(18)
    part = td.iloc[:400][keys + ["sampling_weight"]].astype({k: "float64" for k in keys})
    mask = rng.random((400, len(keys))) < 0.15
    mask[:5] = True
    part = part.mask(np.column_stack([mask, np.zeros(400, dtype=bool)]))
    freq = frequencies(part, keys, "sampling_weight")
    fk_l, Fk_l = _freqcalc_loop(_rows(part, keys), part["sampling_weight"].tolist())
    assert freq.fk.tolist() == fk_l
    assert freq.Fk == pytest.approx(Fk_l, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# (c) invariants


def _random_table(seed: int, n: int, k: int, p_missing: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {f"k{j}": rng.integers(0, 3, n).astype(np.float64) for j in range(k)}
    frame = pd.DataFrame(data)
    if p_missing:
        frame = frame.mask(rng.random((n, k)) < p_missing)
    frame["w"] = rng.uniform(1.0, 60.0, n)
    return frame


@pytest.mark.parametrize("seed", range(4))
def test_invariants(seed: int) -> None:
    frame = _random_table(seed, 300, 3, 0.1 if seed % 2 else 0.0)
    keys = ["k0", "k1", "k2"]
    freq = frequencies(frame, keys, "w")
    rk = individual_risk(freq.fk, freq.Fk)
    assert (freq.Fk >= freq.fk).all()  # weights >= 1
    assert ((rk > 0) & (rk <= 1)).all()
    plain = frequencies(frame, keys)
    assert (plain.fk == freq.fk).all() and (plain.Fk == plain.fk).all()
    assert individual_risk(plain.fk, plain.Fk) == pytest.approx(1 / plain.fk, rel=1e-15)
    ones = frequencies(frame, keys, np.ones(len(frame)))
    assert (ones.Fk == plain.Fk).all()
    # heavier weights: larger Fk, lower risk
    heavy = frequencies(frame, keys, frame["w"] * 3)
    assert (individual_risk(heavy.fk, heavy.Fk) < rk).all()


def test_risk_decreases_in_Fk_and_matches_r_formula() -> None:
    for f in range(1, 7):
        Fk = f * (1 + np.logspace(-9, 5, 400))
        rk = individual_risk(np.full(400, f), Fk)
        assert (np.diff(rk) < 0).all(), f
        assert rk[0] == pytest.approx(1 / f, rel=1e-6) and (rk <= 1 / f).all()
        # R's expressions where they do not cancel
        wide = Fk[Fk > f * 1.01]
        assert individual_risk(np.full(len(wide), f), wide) == pytest.approx(
            _indivrisk_loop([f] * len(wide), wide.tolist()), rel=1e-11
        )
    # fk = 2 across the switch to the series: continuous, and 1/2 - q/3 + q²/4 near 0
    q = np.array([1e-3 * (1 - 1e-9), 1e-3 * (1 + 1e-9), 1e-7])
    r = individual_risk(np.full(3, 2), 2 * (1 + q))
    assert r[0] == pytest.approx(r[1], rel=1e-11)
    assert r[2] == pytest.approx(0.5 - 1e-7 / 3 + 1e-14 / 4, rel=1e-15)


# ---------------------------------------------------------------------------------------------
# (d) missing key values


@pytest.mark.parametrize(("seed", "k"), [(0, 1), (1, 2), (2, 3), (3, 4), (4, 3)])
def test_missing_keys_against_transcription(seed: int, k: int) -> None:
    frame = _random_table(seed, 120, k, 0.25)
    keys = [f"k{j}" for j in range(k)]
    frame.loc[[3, 17], keys] = np.nan  # records with every key missing
    freq = frequencies(frame, keys, "w")
    fk_l, Fk_l = _freqcalc_loop(_rows(frame, keys), frame["w"].tolist())
    assert freq.fk.tolist() == fk_l
    assert freq.Fk == pytest.approx(Fk_l, rel=1e-12)
    assert freq.fk[3] == 120 and freq.Fk[3] == pytest.approx(frame["w"].sum())


def test_all_missing_records_and_one_key() -> None:
    # two keys: the complete records do not count the all-missing one (sdcMicro's rule)
    two = pd.DataFrame({"a": [1, 1, None, None], "b": [2, 2, None, 2], "w": [1.0, 2, 4, 8]})
    freq = frequencies(two, ["a", "b"], "w")
    # (1,2) x2: each other and (*,2); (*,*): all 4; (*,2): (1,2) x2, (*,*) and itself
    assert freq.fk.tolist() == [3, 3, 4, 4]
    assert freq.Fk.tolist() == [11.0, 11.0, 15.0, 15.0]
    # one key: the missing ones count for every value
    one = pd.DataFrame({"a": ["x", "x", "y", None], "w": [1.0, 2, 4, 8]})
    freq = frequencies(one, ["a"], "w")
    assert freq.fk.tolist() == [3, 3, 2, 4]
    assert freq.Fk.tolist() == [11.0, 11.0, 12.0, 15.0]


def test_missing_as_category_matches_sample_uniques() -> None:
    frame = _random_table(7, 200, 3, 0.2)
    keys = ["k0", "k1", "k2"]
    freq = frequencies(frame, keys, "w", missing="category")
    sizes = frame.groupby(keys, dropna=False)["w"].transform("size").to_numpy()
    assert freq.fk.tolist() == sizes.tolist()
    assert int((freq.fk == 1).sum()) == sample_uniques(frame, keys)
    summary = weighted_risk_summary(frame, keys, "w", missing="category")
    assert summary["sample_uniques"] == sample_uniques(frame, keys)
    # the wildcard reading can only enlarge the groups
    assert (frequencies(frame, keys, "w").fk >= freq.fk).all()


# ---------------------------------------------------------------------------------------------
# weights refused, parameters, summary details


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ([1.0, 2.0, np.nan, 3.0], "row 3 it does not (the first is missing)"),
        ([1.0, 0.0, 2.0, 3.0], "row 2 it does not (the first holds 0)"),
        ([1.0, 2.0, 3.0, -4.0], "row 4 it does not (the first holds -4)"),
        ([np.inf, 2.0, 3.0, 4.0], "row 1 it does not (the first holds inf)"),
        (["1", "2", "heavy", "4"], "row 3 it does not (the first holds 'heavy', not a number)"),
    ],
)
def test_bad_weights_refused(values: list[object], words: str) -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 2], "w": values})
    with pytest.raises(InvalidInput, match="weight column 'w'") as err:
        frequencies(frame, ["a"], "w")
    assert words in str(err.value)


def test_weights_text_numbers_and_arrays_accepted() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2], "w": ["10", "20.5", "3"]})
    assert frequencies(frame, ["a"], "w").Fk.tolist() == [30.5, 30.5, 3.0]
    assert frequencies(frame, ["a"], [10, 20.5, 3]).Fk.tolist() == [30.5, 30.5, 3.0]
    # a weight below 1 is accepted while no combination sums below its count
    assert frequencies(frame, ["a"], [0.5, 1.5, 1.0]).Fk.tolist() == [2.0, 2.0, 1.0]


def test_normalised_weights_refused() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 2], "w": [0.25] * 4})  # sums to 1
    with pytest.raises(InvalidInput, match="row 1 have weights summing to 0.5, fewer"):
        frequencies(frame, ["a"], "w")
    with pytest.raises(InvalidInput, match="true/false"):
        frequencies(pd.DataFrame({"a": [1, 2], "w": [True, True]}), ["a"], "w")


def test_bad_parameters() -> None:
    frame = pd.DataFrame({"a": [1, 2], "w": [1.0, 2.0]})
    with pytest.raises(InvalidParameter, match="at least one"):
        frequencies(frame, [])
    with pytest.raises(InvalidParameter, match="'b' is not a column"):
        frequencies(frame, ["b"])
    with pytest.raises(InvalidParameter, match="'v' is not a column"):
        frequencies(frame, ["a"], "v")
    with pytest.raises(InvalidParameter, match="3 weights given for 2 records"):
        frequencies(frame, ["a"], [1.0, 2.0, 3.0])
    with pytest.raises(InvalidParameter, match="missing="):
        frequencies(frame, ["a"], missing="drop")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="threshold"):
        weighted_risk_summary(frame, ["a"], threshold=1.5)
    with pytest.raises(ValueError, match="below fk"):
        individual_risk(np.array([2]), np.array([1.5]))
    with pytest.raises(ValueError, match="whole number"):
        individual_risk(np.array([1.5]), np.array([3.0]))


def test_empty_table_and_risky_records() -> None:
    empty = pd.DataFrame({"a": pd.Series([], dtype=float), "w": pd.Series([], dtype=float)})
    summary = weighted_risk_summary(empty, ["a"], "w")
    assert summary == {
        "records": 0,
        "sample_uniques": 0,
        "expected_reidentifications": 0.0,
        "global_risk_pct": 0.0,
        "max_individual_risk": 0.0,
        "risky_records": 0,
        "above_threshold": 0,
    }
    # median 0.02, |deviations| median 0.01 -> mad 0.014826; 2 mads: above 0.049652 and 0.1
    rk = np.array([0.01, 0.02, 0.03, 0.02, 0.2, 0.05, 0.02, 0.12, 0.01])
    assert np.flatnonzero(risky_records(rk)).tolist() == [4, 7]
    # print.measure_risk's 3 mads; a floor of 0.15 leaves the 0.2 alone
    assert np.flatnonzero(risky_records(rk, mads=3.0, floor=0.15)).tolist() == [4]


def test_many_wide_keys_use_the_dense_key_path() -> None:
    # 12 keys of ~150 values each: the mixed-radix key would pass 2**62, so rows are numbered
    rng = np.random.default_rng(9)
    keys = [f"k{j}" for j in range(12)]
    frame = pd.DataFrame({c: rng.integers(0, 1000, 150).astype(np.float64) for c in keys})
    frame.iloc[:60] = frame.iloc[60:120].to_numpy()  # pairs of equal records, then masked
    frame = frame.mask(rng.random((150, 12)) < 0.04)
    frame["w"] = rng.uniform(1.0, 9.0, 150)
    freq = frequencies(frame, keys, "w")
    fk_l, Fk_l = _freqcalc_loop(_rows(frame, keys), frame["w"].tolist())
    assert freq.fk.tolist() == fk_l
    assert freq.Fk == pytest.approx(Fk_l, rel=1e-12)
    assert (freq.fk > 1).sum() > 60
