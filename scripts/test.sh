#!/usr/bin/env bash
# Installs dependencies, builds fastt (C++ core, tests, Python module) and
# runs every test: Catch2 through ctest, then pytest. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

PY=${PYTHON:-python3}
BUILD=${FASTT_BUILD_DIR:-build}
JOBS=$(nproc)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$(command -v "$PY")" \
  -DFASTT_PYTHON_OUTPUT_DIR="$PWD/python/fastt" ${FASTT_CMAKE_ARGS:-}
cmake --build "$BUILD" -j"$JOBS"

echo "== find_package(fastt): install, then build the C++ example against it =="
PREFIX=$(mktemp -d)
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
cmake -S examples/cpp -B "$BUILD/examples-installed" -G Ninja \
  -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$BUILD/examples-installed" >/dev/null
"$BUILD/examples-installed/fastt_demo" >/dev/null
echo "installed-package example: OK"
rm -rf "$PREFIX"

echo "== C++ tests (ctest) =="
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS"

if ls python/fastt/_C*.so >/dev/null 2>&1; then
  echo "== Python tests (pytest) =="
  PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
    "$PY" -m pytest -q -p no:cacheprovider tests/python
  # Without a GPU the CUDA suite skips; running it CPU-against-CPU checks
  # the test code itself (bench/gpu_check.sh runs it on a GPU).
  echo "== CUDA test suite, self-check on the CPU =="
  PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" FASTT_TEST_DEVICE=cpu \
    "$PY" -m pytest -q -p no:cacheprovider tests/python/test_cuda_*.py
fi
