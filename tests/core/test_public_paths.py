"""Import paths that outside scripts may use keep working after the core moved into packages
(issue 28): every old module path of ``microgui.core.MOVED`` is the new module itself, and the
public names of the API, the readers, the runs and the release import from where they did.

(i28-rewrite: skip — this file names the old paths on purpose.)
"""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import subprocess
import sys

import pytest

import microgui.core
from microgui.core import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_new_module(old: str) -> None:
    new = MOVED[old]
    if importlib.util.find_spec(new) is None:
        pytest.skip(f"{new} is not in this tree yet")
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new
    assert module.__spec__ is not None and module.__spec__.name == new
    package, _, name = old.rpartition(".")
    assert getattr(importlib.import_module(package), name) is module  # from microgui.core import x


def test_old_path_from_import_and_patch_target() -> None:
    from microgui.core import dataset, export  # noqa: F401  (old names, as scripts wrote them)
    from microgui.core.release.check import export_run
    from microgui.core.table.dataset import Dataset

    assert dataset.Dataset is Dataset
    assert export.export_run is export_run


def test_objects_pickle_under_the_new_path() -> None:
    from microgui.core.dataset import Dataset
    from microgui.core.roles import AttributeRole

    assert Dataset.__module__ == "microgui.core.table.dataset"
    assert pickle.loads(pickle.dumps(AttributeRole.QUASI_IDENTIFIER)) is (
        AttributeRole.QUASI_IDENTIFIER
    )


#: module -> names that must import from it (issue 28, item 6).
PUBLIC = {
    "microgui": ["protect", "ProtectionResult", "UnsafeReleaseWarning", "__version__"],
    "microgui.core.io": ["read_table"],
    "microgui.core.runs": [
        "RunSpec",
        "RunResult",
        "run_protection",
        "parse_k",
        "parse_seed",
        "MAX_SEED",
        "validate_k",
        "build_report",
        "information_loss_text",
        "kind_refusal",
        "method_refusal",
        "check_kinds",
    ],
    "microgui.core.release": [
        "CSV_ENCODINGS",
        "CsvOptions",
        "csv_options_writer",
        "RELEASE_FORMATS",
        "FORMAT_NAMES",
        "EXCEL_MAX_ROWS",
        "EXCEL_MAX_COLUMNS",
        "is_missing_value",
        "release_format",
        "release_writer",
    ],
    "microgui.core.dataset": ["Dataset", "prepare_qi"],
    "microgui.core.roles": ["RoleMap", "AttributeRole", "AttributeKind", "ColumnSpec"],
    "microgui.core.export": ["export_run", "check_export", "neutralize_formulas"],
    "microgui.core.release_report": [],
    "microgui.core.sweep": ["SweepSpec"],
    "microgui.core.project_file": [],
    "microgui.core.methods": ["get_method", "available_methods"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names(module: str) -> None:
    imported = importlib.import_module(module)
    for name in PUBLIC[module]:
        assert hasattr(imported, name), f"{module}.{name} is gone"


def test_packages_re_export_what_they_declare() -> None:
    for name in ("runs", "release"):
        package = importlib.import_module(f"microgui.core.{name}")
        for exported in package.__all__:
            assert hasattr(package, exported), f"microgui.core.{name}.{exported}"


def test_import_microgui_stays_light() -> None:
    """``import microgui`` (and the alias finder of ``microgui.core``) load no numpy or pandas."""
    code = (
        "import sys, microgui, microgui.core; "
        "print(sorted(m for m in ('numpy', 'pandas', 'microgui.core.table.dataset') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert microgui.core.__name__ == "microgui.core"
