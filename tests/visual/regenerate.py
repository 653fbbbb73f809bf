"""Make the reference images again: ``python -m tests.visual.regenerate`` (from the checkout).

Draws the app at every size of :data:`~screens.SIZES` under a private Xvfb, replaces
``tests/visual/reference/<size>/*.png`` with the new images and writes ``manifest.json`` (Qt
version, font). The full-size screenshots stay in ``tests/visual/out/<size>/full`` for a look
before committing.
"""

from __future__ import annotations

import json
import shutil
import sys

from tests.visual import screens

__all__ = ["main"]


def main() -> int:
    try:
        written = screens.capture_all()
    except screens.CaptureUnavailable as exc:
        print(f"cannot regenerate the reference images: {exc}", file=sys.stderr)
        return 2
    total = 0
    info: dict[str, object] = {}
    for size, names in written.items():
        target = screens.REFERENCE_DIR / size
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in names:
            shutil.copyfile(screens.OUT_DIR / size / f"{name}.png", target / f"{name}.png")
            total += (target / f"{name}.png").stat().st_size
        info = screens.read_capture_info(size)
        print(f"{size}: {len(names)} images in {target}")
    manifest = {
        "qt": info.get("qt"),
        "font": info.get("font"),
        "sizes": list(written),
        "made_by": screens.REGENERATE_COMMAND,
    }
    (screens.REFERENCE_DIR / "manifest.json").write_text(
        json.dumps(manifest, indent=1) + "\n", encoding="utf-8"
    )
    print(
        f"{total / 1024:.0f} KB of reference images; full-size screenshots to look at in "
        f"{screens.OUT_DIR}/<size>/full"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
