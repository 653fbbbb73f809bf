"""Generate microgui's demo microdata: 4,000 synthetic persons (no real person is in it).

Run ``python resources/make_demo.py`` (or ``python make_demo.py OUTPUT_FOLDER``) to write

- ``demo_persons.csv``: UTF-8, comma-separated, one header line, ``\\n`` line ends, no missing
  cells;
- ``demo_persons.roles.json``: the role and kind of every column, in the format of
  ``RoleMap.to_json()`` under ``"columns"``, plus the default method and k of the demo.

Everything is drawn from ``numpy.random.default_rng(20261122)`` (``SEED``), in a fixed order, and
written with fixed number formats, so running the script again rewrites the same bytes. The script
needs only numpy and the standard library, so it runs from a source tree without installing
microgui.

The population is a fictional country of about 3.2 million adults in six regions. Columns, in
file order (role and kind in brackets):

``person_id`` (identifier)
    ``"P"`` and six digits, unique, drawn at random; rows are sorted by it.
``sex`` (quasi-identifier, nominal)
    ``female`` (51 %) or ``male``. Sex is one of the classic key variables an intruder knows
    (with age and place of residence), so it is a quasi-identifier, not a pass-through column.
``age`` (quasi-identifier, continuous)
    Whole years, 18-90, right-skewed (``18 + 72 * Beta(1.25, 1.7)``): many adults of working
    age, fewer old people.
``region`` (quasi-identifier, nominal)
    One of six region names; the Capital is richer and more educated, the Highlands poorer and
    over-sampled (see ``survey_weight``).
``education`` (quasi-identifier, ordinal)
    ``primary < lower secondary < upper secondary < bachelor < master < doctorate``: a latent
    score (younger and Capital residents higher) cut at fixed population shares, capped by age
    (no bachelor before 21, no master before 23, no doctorate before 27).
``household_size`` (non-confidential)
    Persons in the household, 1-8 (1 + Poisson, largest around age 30-45). Small integers do not
    microaggregate well as a continuous variable (group means such as 2.6 persons) and add little
    as an ordinal one, so the demo leaves the column non-confidential; tag it as a
    quasi-identifier to see the difference.
``hours_per_week`` (quasi-identifier, continuous)
    Usual weekly working hours: 0 for people not working (students, unemployed, most of the
    retired), part-time (more often women) around 22, full-time around 42 with a long right tail.
``income`` (quasi-identifier, continuous)
    Annual income, log-normal: rises with education, with age up to the mid-50s, with hours
    worked and in the Capital; pensions and benefits for those not working; rounded to 10.
``wealth`` (quasi-identifier, continuous)
    Net worth, heavy-tailed: log-normal around income and age, a Pareto top tail, and debts
    (negative values) among the young; rounded to 100.
``health_score`` (confidential, continuous)
    Self-assessed health 0-100 with one decimal: falls with age, rises a little with income and
    education. It is the sensitive variable the release is for; it passes through unchanged.
``survey_weight`` (weight: the survey weight, released unchanged, used by the risk measures)
    Design weight (persons represented), from the region's population share over its sample
    share, with a non-response adjustment, calibrated to sum to the population; two decimals.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

__all__ = [
    "SEED",
    "N_PERSONS",
    "EDUCATION_LEVELS",
    "REGIONS",
    "COLUMNS",
    "CSV_NAME",
    "ROLES_NAME",
    "generate",
    "format_rows",
    "roles_json",
    "write_demo",
    "main",
]

SEED = 20261122
N_PERSONS = 4000
CSV_NAME = "demo_persons.csv"
ROLES_NAME = "demo_persons.roles.json"
POPULATION = 3_200_000

EDUCATION_LEVELS: tuple[str, ...] = (
    "primary",
    "lower secondary",
    "upper secondary",
    "bachelor",
    "master",
    "doctorate",
)
#: Population share with at most each level (the last, doctorate, closes at 1).
_EDUCATION_CUMULATIVE = (0.09, 0.25, 0.63, 0.83, 0.975)
#: Income premium (log scale) of each education level.
_EDUCATION_PREMIUM = np.array([0.0, 0.12, 0.30, 0.55, 0.75, 0.95])

#: name, share of the population, share of the sample, log-income premium, education shift.
REGIONS: tuple[tuple[str, float, float, float, float], ...] = (
    ("Capital", 0.27, 0.24, 0.15, 0.30),
    ("North Coast", 0.14, 0.15, -0.03, -0.05),
    ("Lakeland", 0.17, 0.17, 0.02, 0.05),
    ("Highlands", 0.07, 0.10, -0.12, -0.20),
    ("River Valley", 0.20, 0.19, 0.00, 0.00),
    ("South Plains", 0.15, 0.15, -0.06, -0.10),
)

#: column -> (role, kind); the order is the file's column order.
COLUMNS: dict[str, tuple[str, str]] = {
    "person_id": ("identifier", "nominal"),
    "sex": ("quasi-identifier", "nominal"),
    "age": ("quasi-identifier", "continuous"),
    "region": ("quasi-identifier", "nominal"),
    "education": ("quasi-identifier", "ordinal"),
    "household_size": ("non-confidential", "continuous"),
    "hours_per_week": ("quasi-identifier", "continuous"),
    "income": ("quasi-identifier", "continuous"),
    "wealth": ("quasi-identifier", "continuous"),
    "health_score": ("confidential", "continuous"),
    "survey_weight": ("weight", "continuous"),
}


def generate(n: int = N_PERSONS, seed: int = SEED) -> dict[str, np.ndarray]:
    """Draw the demo persons.

    Parameters
    ----------
    n
        Number of persons.
    seed
        Seed of ``numpy.random.default_rng``; the same ``(n, seed)`` gives the same arrays.

    Returns
    -------
    dict
        Column name -> array of length ``n``, in :data:`COLUMNS` order, sorted by person_id.
    """
    rng = np.random.default_rng(seed)
    region_share = np.array([r[2] for r in REGIONS])
    region = rng.choice(len(REGIONS), size=n, p=region_share / region_share.sum())
    female = rng.random(n) < 0.51
    age = np.minimum(np.floor(18 + 72 * rng.beta(1.25, 1.7, n) + 0.5), 90).astype(np.int64)

    # Education: a latent score, higher for the young and by region, cut at population shares.
    edu_shift = np.array([r[4] for r in REGIONS])[region]
    latent = rng.normal(0.0, 1.0, n) - 0.018 * (age - 45) + edu_shift
    cuts = np.quantile(latent, _EDUCATION_CUMULATIVE)
    education = np.searchsorted(cuts, latent, side="right").astype(np.int64)
    # Nobody finishes a degree before the usual age: cap the level by age.
    highest = np.select([age < 21, age < 23, age < 27], [2, 3, 4], default=5)
    education = np.minimum(education, highest)

    # Work: probability by age, higher with education; part-time more often for women.
    p_work = np.select(
        [age < 25, age < 60, age < 65, age < 70], [0.55, 0.84, 0.55, 0.2], default=0.04
    )
    p_work = np.clip(p_work + 0.02 * (education - 2), 0.0, 0.97)
    works = rng.random(n) < p_work
    part_time = rng.random(n) < np.where(female, 0.34, 0.11)
    part_hours = np.clip(rng.normal(22.0, 6.0, n), 6, 34)
    full_hours = np.clip(37.0 + rng.gamma(2.0, 2.6, n), 35, 80)
    hours = np.where(works, np.where(part_time, part_hours, full_hours), 0.0)
    hours = np.floor(hours + 0.5).astype(np.int64)

    # Income (log-normal): education, an age hump peaking in the mid-50s, hours, region, sex.
    region_premium = np.array([r[3] for r in REGIONS])[region]
    experience = np.minimum(age, 65) - 18
    log_earnings = (
        10.05
        + _EDUCATION_PREMIUM[education]
        + 0.045 * experience
        - 0.0006 * experience**2
        + 0.8 * np.log(np.maximum(hours, 1) / 40.0)
        + region_premium
        - 0.08 * female
    )
    log_benefit = 9.8 + 0.5 * _EDUCATION_PREMIUM[education] + 0.5 * region_premium
    log_income = np.where(works, log_earnings, log_benefit) + rng.normal(0.0, 0.42, n)
    income = (np.floor(np.exp(log_income) / 10.0 + 0.5) * 10).astype(np.int64)

    # Wealth: log-normal around income and age, a Pareto tail, debts among the young.
    log_wealth = (
        0.9 * np.log(income) + 0.045 * (age - 18) + 0.15 * education + 0.2 + rng.normal(0.0, 1.1, n)
    )
    wealth = np.exp(log_wealth)
    top = rng.random(n) < 0.02
    wealth = np.where(top, wealth * (1.0 + rng.pareto(1.6, n)) * 3.0, wealth)
    in_debt = rng.random(n) < np.where(age < 45, 0.28, 0.06)
    debt = rng.lognormal(10.3, 0.8, n) * in_debt
    wealth = (np.floor((wealth - debt) / 100.0 + 0.5) * 100).astype(np.int64)

    # Household size: 1 + Poisson, largest for people raising children.
    lam = np.select([age < 25, age < 30, age < 46, age < 61], [1.3, 1.1, 1.7, 1.0], default=0.45)
    household = np.minimum(1 + rng.poisson(lam), 8).astype(np.int64)

    # Health 0-100: a logistic of a latent falling with age.
    health_latent = (
        2.2
        - 0.045 * (age - 18)
        + 0.25 * np.log(income / 30000.0)
        + 0.08 * education
        + rng.normal(0.0, 0.8, n)
    )
    health = np.round(100.0 / (1.0 + np.exp(-health_latent)), 1)

    # Weights: population share / sample share, times a non-response adjustment.
    pop_share = np.array([r[1] for r in REGIONS])
    base = (pop_share / region_share)[region] * POPULATION / n
    nonresponse = np.where(~female & (age < 35), 1.15, 1.0) * rng.lognormal(0.0, 0.18, n)
    weight = base * nonresponse
    weight = np.round(weight * POPULATION / weight.sum(), 2)  # calibrated to the population

    ids = rng.choice(np.arange(1, 1_000_000), size=n, replace=False)
    order = np.argsort(ids, kind="stable")
    columns: dict[str, np.ndarray] = {
        "person_id": np.array([f"P{v:06d}" for v in ids]),
        "sex": np.where(female, "female", "male"),
        "age": age,
        "region": np.array([r[0] for r in REGIONS])[region],
        "education": np.array(EDUCATION_LEVELS)[education],
        "household_size": household,
        "hours_per_week": hours,
        "income": income,
        "wealth": wealth,
        "health_score": health,
        "survey_weight": weight,
    }
    assert list(columns) == list(COLUMNS)
    return {name: values[order] for name, values in columns.items()}


def format_rows(columns: dict[str, np.ndarray]) -> list[list[str]]:
    """The CSV rows (header first) with fixed number formats, so the bytes are reproducible."""
    formats = {"health_score": "{:.1f}", "survey_weight": "{:.2f}"}
    text: list[list[str]] = []
    for name, values in columns.items():
        fmt = formats.get(name, "{}")
        text.append([fmt.format(v.item() if isinstance(v, np.generic) else v) for v in values])
    return [list(columns)] + [list(row) for row in zip(*text, strict=True)]


def roles_json() -> dict[str, object]:
    """The roles file: ``RoleMap.to_json()`` under ``"columns"``, plus the demo's defaults."""
    specs: dict[str, dict[str, object]] = {}
    for name, (role, kind) in COLUMNS.items():
        spec: dict[str, object] = {"role": role, "kind": kind}
        if name == "education":
            spec["order"] = list(EDUCATION_LEVELS)
        specs[name] = spec
    return {"schema_version": 1, "columns": specs, "default_method": "mdav-generic", "default_k": 5}


def write_demo(folder: Path, n: int = N_PERSONS, seed: int = SEED) -> tuple[Path, Path]:
    """Write ``demo_persons.csv`` and ``demo_persons.roles.json`` into ``folder``.

    Returns
    -------
    tuple of Path
        The CSV file and the roles file.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / CSV_NAME
    with csv_path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(format_rows(generate(n, seed)))
    roles_path = folder / ROLES_NAME
    roles_path.write_text(
        json.dumps(roles_json(), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    return csv_path, roles_path


def main(argv: list[str] | None = None) -> int:
    """Command line: ``make_demo.py [FOLDER]`` (default: the folder of this script)."""
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path(__file__).resolve().parent
    csv_path, roles_path = write_demo(folder)
    print(f"wrote {csv_path} ({csv_path.stat().st_size:,} bytes) and {roles_path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
