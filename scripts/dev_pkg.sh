#!/usr/bin/env bash
# Development helper: builds fastt._C in its own build dir and mirrors the
# pure-Python package around it, so several checkouts of the extension can
# coexist. Usage: scripts/dev_pkg.sh BUILD_DIR  -> then
#   PYTHONPATH=BUILD_DIR/pkg python -m pytest tests/python/...
# Re-run after adding a file or subpackage under python/fastt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: scripts/dev_pkg.sh BUILD_DIR}
PKG="$BUILD/pkg/fastt"
mkdir -p "$PKG"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTT_BUILD_BENCH=OFF -DFASTT_BUILD_EXAMPLES=OFF -DFASTT_CUDA=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" \
  -DFASTT_PYTHON_OUTPUT_DIR="$PWD/$PKG" >/dev/null
cmake --build "$BUILD" -j2 --target _C
for f in python/fastt/*; do
  case "$f" in *.so) continue ;; esac
  ln -sfn "$PWD/$f" "$PKG/$(basename "$f")"
done
echo "PYTHONPATH=$PWD/$BUILD/pkg"
