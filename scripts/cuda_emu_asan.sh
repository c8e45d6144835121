#!/usr/bin/env bash
# The CUDA suite on the emulator under AddressSanitizer: finds out-of-bounds
# device-memory (and shared-memory) accesses of the real kernels/cuda
# sources. Builds BUILD (default build-emu-asan) with -DFASTT_EMU_ASAN=ON
# (ASan on the kernels, kernels/cuda/*.cpp and the emulated runtime; see
# tests/cuda_emu/README.md), then runs pytest with libasan preloaded and
# FASTT_NO_CUDA_MEMORY_CACHING=1, so every device buffer is its own heap
# block with a redzone right after its last byte. Reports do not stop the
# run (-fsanitize-recover=address, one report per code location); they go
# to stderr next to pytest -v's test names (all kept in BUILD/asan_run.log),
# and any report fails the script.
# Usage: scripts/cuda_emu_asan.sh [BUILD_DIR] [pytest args...]
#        (default: -m "not large" tests/python/test_cuda_*.py, less the
#        tests of the caching itself; ~5 min on 2 busy cores)
# Env: FASTT_EMU_JOBS (build parallelism, default 2), FASTT_EMU_SEED.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-build-emu-asan}
shift || true
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTT_CUDA=OFF -DFASTT_CUDA_EMULATE=ON -DFASTT_EMU_ASAN=ON \
  -DFASTT_BUILD_PYTHON=OFF -DFASTT_BUILD_TESTS=OFF -DFASTT_BUILD_BENCH=OFF \
  -DFASTT_BUILD_EXAMPLES=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
nice -n 10 cmake --build "$BUILD" -j"${FASTT_EMU_JOBS:-2}" \
  --target fastt_emu_C
# Tests asserting the caching itself (no cudaMalloc in steady state,
# block reuse) cannot pass without it: left out by default.
if [ $# -eq 0 ]; then
  files=()
  for f in tests/python/test_cuda_*.py; do
    [ "$f" = tests/python/test_cuda_host_path.py ] || files+=("$f")
  done
  rt=tests/python/test_cuda_runtime.py
  set -- -m "not large" "${files[@]}" \
    --deselect "$rt::test_memory_stats_and_reuse" \
    --deselect "$rt::test_steady_state_makes_no_device_allocations"
fi
log="$ROOT/$BUILD/asan_run.log"
# python3 is not instrumented: libasan goes first, and libstdc++ with it
# (ASan's __cxa_throw interceptor must find the real one; see
# scripts/sanitize.sh). Leaks are CPython's and torch's by design.
# Fibers: stack-use-after-return's fake stacks would need switching too.
# --capture=sys: reports on fd 2 stay next to the -v test names.
preload="$(gcc -print-file-name=libasan.so)"
preload+=" $(gcc -print-file-name=libstdc++.so)"
asan=detect_leaks=0:halt_on_error=0:detect_stack_use_after_return=0
asan+=:allocator_may_return_null=1
export LD_PRELOAD="$preload" PYTHONPATH="$ROOT/$BUILD/pkg" \
  FASTT_TEST_DEVICE=cuda FASTT_NO_CUDA_MEMORY_CACHING=1 \
  PYTHONMALLOC=malloc PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2 \
  ASAN_OPTIONS="$asan"
# The check must be able to fail: a global, a __shared__ and a dynamic
# shared memory overrun in tiny kernels each draw a report, and the device
# allocator hands out exact sizes.
python3 - <<'PY' 2>"$ROOT/$BUILD/asan_selftest.log"
import ctypes, fastt
lib = ctypes.CDLL(fastt._C.__file__)
for which in range(3):
    assert lib.fastt_emu_asan_selftest(which) == 0
x = fastt.empty(5, dtype=fastt.float32, device="cuda")
assert fastt.cuda.memory_reserved() == 20, fastt.cuda.memory_reserved()
PY
n=$(grep -c "ERROR: AddressSanitizer: heap-buffer-overflow" \
  "$ROOT/$BUILD/asan_selftest.log" || true)
if [ "$n" -ne 3 ]; then
  cat "$ROOT/$BUILD/asan_selftest.log"
  echo "cuda_emu_asan: self-test drew $n of 3 reports: the check is broken"
  exit 1
fi
echo "cuda_emu_asan: self-test OK (3 overruns reported)"
set +e
python3 -m pytest -v --capture=sys -p no:cacheprovider "$@" 2>&1 |
  tee "$log"
rc=${PIPESTATUS[0]}
set -e
n=$(grep -c "ERROR: AddressSanitizer" "$log" || true)
if [ "$n" -gt 0 ]; then
  echo "cuda_emu_asan: $n AddressSanitizer report(s); see $log"
  exit 1
fi
echo "cuda_emu_asan: no AddressSanitizer report (pytest rc $rc)"
exit $rc
