#!/usr/bin/env bash
# Build the Linux one-folder app with PyInstaller and smoke-test it: the frozen app starts
# offscreen on its bundled demo data, runs the default method and saves a screenshot.
#
#   bash installers/build_linux.sh            (from anywhere; uses ./.venv-build)
#
# Takes a few minutes (PyInstaller analysis of numpy/scipy/numba/Qt); not part of CI for that
# reason. Output: dist/microgui/ and dist/microgui-smoke.png.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-build
.venv-build/bin/pip install -q -e . "pyinstaller>=6.10"
.venv-build/bin/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
    installers/microgui.spec
echo "built: dist/microgui ($(du -sh dist/microgui | cut -f1))"

# Smoke test: command line, then the app offscreen on the demo data.
./dist/microgui/microgui --version
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
QT_QPA_PLATFORM=offscreen NUMBA_CACHE_DIR="$tmp/numba" \
    ./dist/microgui/microgui gui --demo --screenshot dist/microgui-smoke.png
test -s dist/microgui-smoke.png
python3 - <<'PY'
import struct
with open("dist/microgui-smoke.png", "rb") as f:
    head = f.read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", head[16:24])
assert w >= 800 and h >= 500, (w, h)
print(f"smoke test passed: dist/microgui-smoke.png {w}x{h}")
PY
