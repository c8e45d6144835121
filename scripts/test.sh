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

ls python/fastt/_C*.so >/dev/null 2>&1 || {
  echo "fastt._C was not built into python/fastt: the Python tests cannot run" >&2
  exit 1
}
echo "== Python tests (pytest) =="
# The CUDA files collect here (so their code imports) and skip without a GPU,
# except test_cuda_runtime.py's CPU-only checks; scripts/cuda_emu_test.sh
# runs them for real on the emulated device (.ci/run), and
# bench/gpu_check.sh on a GPU. Under CI=true, tests/python/conftest.py fails
# any skip whose reason it does not list.
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$PY" -m pytest -q -p no:cacheprovider tests/python

# The op suites again with the per-ISA kernel families at the baseline
# (SSE2) level; the run above took the widest the CPU has, ctest ran the
# C++ suite at every level (kernels/cpu/cpu_isa.h).
echo "== Python op tests at FASTT_CPU_ISA=sse2 =="
FASTT_CPU_ISA=sse2 PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$PY" -m pytest -q -p no:cacheprovider \
  tests/python/test_ops.py tests/python/test_op_rows.py \
  tests/python/test_numerics.py tests/python/test_ew_edges.py \
  tests/python/test_vec_math.py tests/python/test_nn_kernels.py \
  tests/python/test_nn.py tests/python/test_rnn.py \
  tests/python/test_optim.py tests/python/test_optim_more.py \
  tests/python/test_gradcheck.py tests/python/test_reduce_dense.py \
  tests/python/test_copy_layouts.py tests/python/test_half_kernels.py
