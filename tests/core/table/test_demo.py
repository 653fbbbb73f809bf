"""The bundled demo data: it loads, it is tagged, and make_demo.py reproduces it byte for byte."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import numpy as np

from microgui.core.demo import demo_defaults, demo_path, demo_roles, demo_roles_path, load_demo
from microgui.core.io import read_frame, write_csv_atomic
from microgui.core.table.dataset import prepare_qi
from microgui.core.table.roles import AttributeKind, AttributeRole, RoleMap

EDUCATION = ("primary", "lower secondary", "upper secondary", "bachelor", "master", "doctorate")


def make_demo_module() -> ModuleType:
    path = demo_path().parent / "make_demo.py"
    spec = importlib.util.spec_from_file_location("microgui_make_demo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_demo_loads_with_its_roles() -> None:
    ds = load_demo()
    assert ds.source == demo_path() and ds.name == "demo_persons.csv"
    assert ds.n_records >= 3000
    assert not ds.frame.isna().any().any()
    assert not (ds.frame == "").any().any()
    roles = ds.roles
    assert roles == demo_roles()
    assert roles.identifiers == ["person_id"]
    assert roles.confidential == ["health_score"]
    assert set(roles.qi_of_kind(AttributeKind.CONTINUOUS)) >= {"age", "income", "wealth"}
    assert roles.qi_of_kind(AttributeKind.ORDINAL) == ["education"]
    assert roles["education"].order == EDUCATION
    assert "region" in roles.qi_of_kind(AttributeKind.NOMINAL)
    assert roles["survey_weight"].role is AttributeRole.WEIGHT and roles.weight == "survey_weight"
    assert ds.frame["person_id"].is_unique
    assert set(ds.frame["education"]) == set(EDUCATION)
    assert demo_defaults() == ("mdav-generic", 5)


def test_roles_file_matches_rolemap_json() -> None:
    data = json.loads(demo_roles_path().read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    assert data["default_method"] == "mdav-generic" and data["default_k"] == 5
    roles = RoleMap.from_json(data["columns"])
    assert roles.to_json() == data["columns"]
    assert list(roles) == list(read_frame(demo_path()).columns)


def test_prepare_qi_accepts_the_demo() -> None:
    ds = load_demo()
    qi = prepare_qi(ds)
    assert qi.n == ds.n_records
    assert qi.ordinal_names == ("education",)
    assert qi.ordinal_orders[0] == EDUCATION
    assert np.isfinite(qi.continuous).all()
    assert set(qi.nominal_names) >= {"region"}


def test_values_are_plausible() -> None:
    frame = load_demo().frame
    age = frame["age"].astype(int)
    assert age.min() >= 18 and age.max() <= 90
    income = frame["income"].astype(float)
    assert (income > 0).all() and (income % 10 == 0).all()
    assert income.skew() > 1  # right-skewed, as incomes are
    health = frame["health_score"].astype(float)
    assert health.between(0, 100).all()
    assert np.corrcoef(age, health)[0, 1] < -0.3
    assert frame["survey_weight"].astype(float).gt(0).all()


def test_demo_csv_survives_a_read_write_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "copy.csv"
    write_csv_atomic(load_demo().frame, out, protect_from=demo_path())
    assert out.read_bytes() == demo_path().read_bytes()


def test_make_demo_is_deterministic(tmp_path: Path) -> None:
    module = make_demo_module()
    first = module.write_demo(tmp_path / "a")
    second = module.write_demo(tmp_path / "b")
    for made_a, made_b, shipped in zip(
        first, second, (demo_path(), demo_roles_path()), strict=True
    ):
        assert made_a.name == shipped.name
        assert made_a.read_bytes() == made_b.read_bytes() == shipped.read_bytes()
