#!/usr/bin/env bash
# The main job: install dependencies, build fastt, install the Python
# package, run the C++ frontend demo and print the per-op latency tables
# (C++ levels, then Python: fastt vs NumPy vs torch vs the C-API floor).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

PY=${PYTHON:-python3}
BUILD=${FASTT_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$(command -v "$PY")" \
  -DFASTT_PYTHON_OUTPUT_DIR="$PWD/python/fastt" ${FASTT_CMAKE_ARGS:-}
cmake --build "$BUILD" -j"$(nproc)"

echo "== pip install . =="
"$PY" -m pip install -q --disable-pip-version-check .

echo "== C++ frontend demo =="
"$BUILD"/examples/cpp/fastt_demo

# Older OpenBLAS builds need OPENBLAS_CORETYPE on some CPUs, but it slows
# a current one: the benchmarks run with OpenBLAS's own CPU detection.
BENCH_ENV=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)

echo "== C++ MLP on digits (header-only frontend, autograd) =="
DIGITS=$("$PY" -c "import os, sklearn; print(os.path.join(os.path.dirname(sklearn.__file__), 'datasets', 'data', 'digits.csv.gz'))")
OMP_NUM_THREADS=1 "$BUILD"/examples/cpp/fastt_mlp_digits "$DIGITS" 20 | tail -3

echo "== Training examples, fastt vs torch (same weights and batches) =="
(cd /tmp && OMP_NUM_THREADS=1 "$PY" "$OLDPWD/examples/compare_curves.py" --png)

echo "== Framework-tax benchmark suite (quick mode; full: python -m bench) =="
"${BENCH_ENV[@]}" env FASTT_BUILD_DIR="$BUILD" "$PY" -m bench --quick
