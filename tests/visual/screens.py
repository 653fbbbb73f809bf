"""Screenshots of the app under Xvfb and their comparison with the reference images.

:func:`capture` starts a private Xvfb server (a free display number, its own screen size), runs
``capture_app.py`` in a new process on Qt's xcb platform (a real window; the Qt platform of a
process is fixed when its QApplication starts, and the Qt tests run offscreen) and returns the
names of the images written. :func:`compare` tells how far an image is from its reference.

The comparison is made to survive what does not matter and to catch what does: both images are
the stored ones (at most 1200 px wide: views and docks at screen resolution, the whole window
downscaled), taken to grey levels; a pixel counts as different when
its grey level is more than :data:`GREY_THRESHOLD` away from every pixel of the other image's
3 × 3 neighbourhood (so a one-pixel shift of a glyph or a line is not a difference; a label, a
panel or a series that appears, moves or disappears is). An image fails when more than
:data:`DEFAULT_BOUND` of all its pixels differ (a panel, a plot), when more than
:data:`LOCAL_BOUND` of the pixels of some 16 × 16 square differ (one label changed, moved or cut),
or when its size changed by more than :data:`SIZE_SLACK`; :data:`BOUNDS` gives one image more room.

Measured on the demo views at 1366×768: two captures on one machine, 0 pixels
differ; another fontconfig set-up (subpixel rendering, full hinting): at most 0.13 % of the
pixels and 3.9 % of a square; one word of the risk–utility map's title changed: 16 % of a
square; the Results dock hidden: every view's size changes.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HERE",
    "REFERENCE_DIR",
    "OUT_DIR",
    "SIZES",
    "GREY_THRESHOLD",
    "DEFAULT_BOUND",
    "WINDOW",
    "LOCAL_BOUND",
    "BOUNDS",
    "SIZE_SLACK",
    "REGENERATE_COMMAND",
    "CaptureUnavailable",
    "Difference",
    "xvfb",
    "capture",
    "capture_all",
    "compare",
    "read_grey",
    "write_rgb",
    "reference_names",
    "read_capture_info",
    "read_manifest",
]

HERE = Path(__file__).resolve().parent
#: The reference images, one folder per screen size, and manifest.json (how they were made).
REFERENCE_DIR = HERE / "reference"
#: Where a test run writes what it captured, and the diff images of a mismatch (not kept in git).
OUT_DIR = HERE / "out"
#: Screen sizes of the references: a 1366 × 768 laptop and a 1920 × 1080 desktop.
SIZES = ("1366x768", "1920x1080")
#: Grey-level distance (0-255) above which a pixel differs.
GREY_THRESHOLD = 64
#: Largest fraction of differing pixels an image may have (a panel, plot or series changed).
DEFAULT_BOUND = 0.004
#: Side of the square in which differences are also counted (a label changed, moved or cut).
WINDOW = 16
#: Largest fraction of differing pixels in any WINDOW × WINDOW square.
LOCAL_BOUND = 0.10
#: Bounds of particular images (name: (DEFAULT_BOUND, LOCAL_BOUND)) that need more room.
BOUNDS: dict[str, tuple[float, float]] = {}
#: Largest relative change of an image's width or height (a dock a few pixels wider).
SIZE_SLACK = 0.02
REGENERATE_COMMAND = "python -m tests.visual.regenerate"
#: First X display number tried for the private Xvfb servers (MICROGUI_XVFB_DISPLAY overrides).
FIRST_DISPLAY = 100
CAPTURE_TIMEOUT_S = 300.0  # an empty kernel cache compiles for tens of seconds first
XVFB_START_TIMEOUT_S = 10.0


class CaptureUnavailable(Exception):
    """This machine cannot draw a real window (no Xvfb, or Qt cannot use its xcb platform)."""


@contextmanager
def xvfb(size: str) -> Iterator[str]:
    """Run a private Xvfb server with one ``size`` ("WxH") screen; yields its display (":N").

    The server reports on a pipe when it accepts connections (``-displayfd``); a display number
    in use makes it exit, and the next one is tried."""
    exe = shutil.which("Xvfb")
    if exe is None:
        raise CaptureUnavailable("Xvfb is not installed (Debian/Ubuntu: apt-get install xvfb)")
    first = int(os.environ.get("MICROGUI_XVFB_DISPLAY", FIRST_DISPLAY))
    for number in range(first, first + 100):
        if Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists():
            continue
        read_end, write_end = os.pipe()
        server = subprocess.Popen(
            [exe, f":{number}", "-screen", "0", f"{size}x24", "-dpi", "96", "-nolisten", "tcp"]
            + ["-displayfd", str(write_end)],
            pass_fds=(write_end,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write_end)
        try:
            answer = _read_line(read_end, XVFB_START_TIMEOUT_S)
            if answer:
                try:
                    yield f":{answer}"
                finally:
                    server.terminate()
                    try:
                        server.wait(10)
                    except subprocess.TimeoutExpired:
                        server.kill()
                        server.wait()
                return
            server.kill()
            server.wait()
        finally:
            # Open until the server is gone: a write to a closed pipe would kill it (SIGPIPE).
            os.close(read_end)
    raise CaptureUnavailable(f"Xvfb could not start on any display from :{first}")


def _read_line(fd: int, timeout_s: float) -> str:
    """What the server writes on ``fd`` up to its newline ('' when it exits or times out)."""
    import time

    deadline = time.monotonic() + timeout_s
    text = b""
    while not text.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 64) if ready else b""
        if not chunk:
            return ""
        text += chunk
    return text.decode().strip()


def capture(size: str, out: Path) -> list[str]:
    """Draw the app at ``size`` into ``out`` (see ``capture_app.py``); the names written.

    Raises :class:`CaptureUnavailable` when there is no Xvfb or Qt cannot open an xcb window,
    RuntimeError when the app itself failed."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with xvfb(size) as display, tempfile.TemporaryDirectory(prefix="microgui-visual-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "WAYLAND"))}
        env.update(
            DISPLAY=display,
            QT_QPA_PLATFORM="xcb",
            QT_QPA_PLATFORMTHEME="",  # no desktop theme: the Fusion style of capture_app
            QT_ENABLE_HIGHDPI_SCALING="0",
            QT_FONT_DPI="96",
            LC_ALL="C.UTF-8",
            LANG="C.UTF-8",
            XDG_CONFIG_HOME=home,  # the user's Qt and microgui settings stay out
            MICROGUI_STATE_DIR=home,
        )
        try:
            done = subprocess.run(
                [sys.executable, str(HERE / "capture_app.py"), str(out)],
                env=env,
                capture_output=True,
                text=True,
                timeout=CAPTURE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"the app drew nothing within {CAPTURE_TIMEOUT_S:.0f} s") from exc
    if done.returncode != 0:
        if 'Could not load the Qt platform plugin "xcb"' in done.stderr:
            line = next(ln for ln in done.stderr.splitlines() if "libxcb" in ln or "xcb" in ln)
            raise CaptureUnavailable(
                f"Qt cannot open an xcb window ({line.strip()}); Debian/Ubuntu: "
                "apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"
            )
        raise RuntimeError(f"capture_app.py failed at {size}:\n{done.stderr[-3000:]}")
    info = json.loads((out / "capture.json").read_text(encoding="utf-8"))
    return list(info["names"])


def capture_all(out_dir: Path = OUT_DIR) -> dict[str, list[str]]:
    """:func:`capture` at every size of :data:`SIZES`, two at a time; names written per size."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        futures = {size: pool.submit(capture, size, out_dir / size) for size in SIZES}
        return {size: future.result() for size, future in futures.items()}


@dataclass(frozen=True)
class Difference:
    """How an image differs from its reference (pixels: of the reference's size)."""

    fraction: float  #: of all the pixels, differing by more than GREY_THRESHOLD
    densest: float  #: the largest fraction differing in a WINDOW × WINDOW square
    densest_at: tuple[int, int]  #: x, y of that square's top left corner
    box: tuple[int, int, int, int] | None  #: x0, y0, x1, y1 of all the differing pixels
    size: tuple[int, int]  #: the reference's width, height
    actual_size: tuple[int, int]
    diff_image: np.ndarray  #: RGB picture: the reference faded, differing pixels red

    @property
    def size_changed(self) -> bool:
        """Width or height changed by more than SIZE_SLACK (the layout changed)."""
        (w, h), (aw, ah) = self.size, self.actual_size
        return abs(aw - w) > SIZE_SLACK * w or abs(ah - h) > SIZE_SLACK * h

    def fails(self, name: str) -> bool:
        """More than the image's bounds (:data:`BOUNDS`) differ, or its size changed."""
        bound, local = BOUNDS.get(name, (DEFAULT_BOUND, LOCAL_BOUND))
        return self.size_changed or self.fraction > bound or self.densest > local

    def describe(self, name: str = "") -> str:
        """One line: how much, where, and the limits."""
        bound, local = BOUNDS.get(name, (DEFAULT_BOUND, LOCAL_BOUND))
        w, h = self.size
        parts = []
        if self.size_changed:
            aw, ah = self.actual_size
            parts.append(f"its size changed from {w}×{h} to {aw}×{ah} px (the layout changed)")
        x, y = self.densest_at
        parts.append(
            f"{self.fraction:.2%} of the pixels differ (limit {bound:.2%}), up to "
            f"{self.densest:.0%} of a {WINDOW}-px square at x {x}, y {y} "
            f"({_region(x, y, x + WINDOW, y + WINDOW, w, h)}; limit {local:.0%})"
        )
        if self.box is not None:
            x0, y0, x1, y1 = self.box
            parts.append(f"differences within x {x0}–{x1}, y {y0}–{y1} of {w}×{h}")
        return "; ".join(parts)


def _region(x0: int, y0: int, x1: int, y1: int, w: int, h: int) -> str:
    """'top left', 'bottom right', 'centre'… for a box in a w × h image."""
    cx, cy = (x0 + x1) / 2 / w, (y0 + y1) / 2 / h
    vertical = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else "middle"
    horizontal = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else "centre"
    return f"{vertical} {horizontal}".replace("middle centre", "centre")


def read_grey(path: Path, size: tuple[int, int] | None = None) -> np.ndarray:
    """A PNG as grey levels (float, 0-255), scaled smoothly to ``size`` when given."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    if image.isNull():
        raise OSError(f"cannot read {path}")
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    if size is not None and (image.width(), image.height()) != size:
        image = image.scaled(
            size[0],
            size[1],
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    w, h = image.width(), image.height()
    data = np.frombuffer(image.constBits(), np.uint8, h * image.bytesPerLine())
    bgra = data.reshape(h, image.bytesPerLine() // 4, 4)[:, :w, :].astype(np.float64)
    return 0.114 * bgra[..., 0] + 0.587 * bgra[..., 1] + 0.299 * bgra[..., 2]


def _nearest_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pixel of ``a``, the least grey distance to the pixels of ``b`` around it (3 × 3)."""
    padded = np.pad(b, 1, mode="edge")
    h, w = a.shape
    best = np.full(a.shape, np.inf)
    for dy in range(3):
        for dx in range(3):
            np.minimum(best, np.abs(a - padded[dy : dy + h, dx : dx + w]), out=best)
    return best


def _densest(differs: np.ndarray) -> tuple[float, tuple[int, int]]:
    """The largest fraction of differing pixels in a WINDOW × WINDOW square, and where."""
    h, w = differs.shape
    if h < WINDOW or w < WINDOW:
        return float(differs.mean()), (0, 0)
    sums = np.zeros((h + 1, w + 1))
    sums[1:, 1:] = differs.cumsum(axis=0).cumsum(axis=1)
    n = WINDOW
    counts = sums[n:, n:] - sums[:-n, n:] - sums[n:, :-n] + sums[:-n, :-n]
    y, x = np.unravel_index(int(np.argmax(counts)), counts.shape)
    return float(counts[y, x]) / (n * n), (int(x), int(y))


def compare(actual: Path, reference: Path) -> Difference:
    """How ``actual`` differs from ``reference`` (both PNG files; ``actual`` is scaled to the
    reference's size first when they differ)."""
    from PySide6.QtGui import QImage

    ref = read_grey(reference)
    h, w = ref.shape
    probe = QImage(str(actual))
    if probe.isNull():
        raise OSError(f"cannot read {actual}")
    act = read_grey(actual, (w, h))
    # Different only when neither image has a close grey level near the other's pixel.
    differs = (_nearest_distance(act, ref) > GREY_THRESHOLD) | (
        _nearest_distance(ref, act) > GREY_THRESHOLD
    )
    ys, xs = np.nonzero(differs)
    box = (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())) if len(xs) else None
    densest, at = _densest(differs)
    picture = np.repeat((155 + ref[..., None] * 0.39).astype(np.uint8), 3, axis=2)
    picture[differs] = (220, 0, 0)
    return Difference(
        float(differs.mean()), densest, at, box, (w, h), (probe.width(), probe.height()), picture
    )


def write_rgb(path: Path, rgb: np.ndarray) -> None:
    """Save an h × w × 3 uint8 array as PNG."""
    from PySide6.QtGui import QImage

    h, w, _ = rgb.shape
    data = np.ascontiguousarray(rgb)
    image = QImage(data.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
    if not image.save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")


def reference_names(size: str) -> list[str]:
    """The images kept as reference at ``size``."""
    return sorted(p.stem for p in (REFERENCE_DIR / size).glob("*.png"))


def read_capture_info(size: str, out_dir: Path = OUT_DIR) -> dict[str, object]:
    """What ``capture_app.py`` says of its last capture at ``size`` (Qt version, font, names)."""
    data = json.loads((out_dir / size / "capture.json").read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def read_manifest() -> dict[str, object]:
    """What the references were made with (Qt version, font); empty when there are none."""
    path = REFERENCE_DIR / "manifest.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}
