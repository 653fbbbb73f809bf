"""Visual regression tests (issue 15): the main window and each view on the demo data, drawn in a
real window under a private Xvfb at 1366×768 and 1920×1080, against the reference images in
``tests/visual/reference`` (how they are compared: ``screens.py``).

A mismatch names the image and where it differs, and leaves the actual image, the reference and
a diff picture (differences in red) in ``tests/visual/out/<size>/diff``. After a deliberate
change to the app, make the references again with ``python -m tests.visual.regenerate`` and
look at them before committing. Skipped, with the reason, when Xvfb or Qt's xcb platform is
missing, or when the references were made with another Qt version or font.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import qVersion
from visual import screens

pytestmark = pytest.mark.visual

#: (size, image) of every reference image, known when the tests are collected.
CASES = [(size, name) for size in screens.SIZES for name in screens.reference_names(size)]
MANIFEST = screens.read_manifest()


def _minor(version: object) -> str:
    return ".".join(str(version).split(".")[:2])


# One line in the summary when this machine cannot run them (the reason is in the message).
if shutil.which("Xvfb") is None:
    pytest.skip("no Xvfb here (Debian/Ubuntu: apt-get install xvfb)", allow_module_level=True)
if not CASES or not MANIFEST:
    pytest.skip(
        f"no reference images: make them with {screens.REGENERATE_COMMAND}",
        allow_module_level=True,
    )
if _minor(MANIFEST.get("qt")) != _minor(qVersion()):
    pytest.skip(
        f"reference images made with Qt {MANIFEST.get('qt')}, this is Qt {qVersion()}: make "
        f"them again with {screens.REGENERATE_COMMAND}",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def captured() -> dict[str, list[str]]:
    """Everything drawn at every size (once for the module; the two sizes side by side)."""
    try:
        names = screens.capture_all()
    except screens.CaptureUnavailable as exc:
        pytest.skip(f"no real window here: {exc}")
    font = screens.read_capture_info(screens.SIZES[0]).get("font")
    if font != MANIFEST.get("font"):
        pytest.skip(f"the references use the font {MANIFEST.get('font')}, Qt found {font}")
    return names


@pytest.mark.parametrize("size", screens.SIZES)
def test_every_image_has_a_reference(captured: dict[str, list[str]], size: str) -> None:
    """A view added, removed or renamed needs new references."""
    drawn, kept = set(captured[size]), set(screens.reference_names(size))
    assert drawn == kept, (
        f"at {size}, images without a reference: {sorted(drawn - kept) or 'none'}; references "
        f"no longer drawn: {sorted(kept - drawn) or 'none'} (make them again with "
        f"{screens.REGENERATE_COMMAND})"
    )


@pytest.mark.parametrize(("size", "name"), CASES, ids=[f"{s}-{n}" for s, n in CASES])
def test_image_matches_its_reference(captured: dict[str, list[str]], size: str, name: str) -> None:
    actual = screens.OUT_DIR / size / f"{name}.png"
    reference = screens.REFERENCE_DIR / size / f"{name}.png"
    if name not in captured[size]:
        pytest.fail(f"{name} at {size} was not drawn (the view is gone or hidden)", pytrace=False)
    difference = screens.compare(actual, reference)
    if not difference.fails(name):
        return
    keep = screens.OUT_DIR / size / "diff"
    keep.mkdir(exist_ok=True)
    shutil.copyfile(actual, keep / f"{name}.actual.png")
    shutil.copyfile(reference, keep / f"{name}.reference.png")
    screens.write_rgb(keep / f"{name}.diff.png", difference.diff_image)
    pytest.fail(
        f"{name} at {size} differs from its reference: {difference.describe(name)}. See "
        f"{_shown(keep)}/{name}.{{actual,reference,diff}}.png; if the change is intended: "
        f"{screens.REGENERATE_COMMAND}",
        pytrace=False,
    )


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
