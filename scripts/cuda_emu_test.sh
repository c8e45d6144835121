#!/usr/bin/env bash
# Runs the CUDA test suite (tests/python/test_cuda_*.py) on a machine
# without a GPU: builds fastt._C with the real CUDA kernel sources emulated
# on the CPU (tests/cuda_emu, -DFASTT_CUDA_EMULATE=ON) into BUILD/pkg and
# runs pytest against it with FASTT_TEST_DEVICE=cuda, then lists the
# registered CUDA kernels (op, dtype) no test executed. Tests marked
# `large` are deselected (emulation runs every CUDA thread as a fiber).
# Usage: scripts/cuda_emu_test.sh [BUILD_DIR (build-emu)] [pytest args...]
# Env: FASTT_EMU_SEED (thread/block order; fixed by default, so runs
#      repeat), FASTT_EMU_SM_COUNT (default 2: grid-stride loops iterate),
#      FASTT_EMU_VERBOSE=1 (print each emulated launch error),
#      FASTT_EMU_JOBS (build parallelism, default 2). See tests/cuda_emu.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-emu}
shift || true
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTT_CUDA=OFF -DFASTT_CUDA_EMULATE=ON -DFASTT_BUILD_PYTHON=OFF \
  -DFASTT_BUILD_TESTS=OFF -DFASTT_BUILD_BENCH=OFF -DFASTT_BUILD_EXAMPLES=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build "$BUILD" -j"${FASTT_EMU_JOBS:-2}" --target fastt_emu_C
export PYTHONPATH="$PWD/$BUILD/pkg"
export FASTT_TEST_DEVICE=cuda
export FASTT_EMU_COVERAGE="$PWD/$BUILD/cuda_kernel_coverage.txt"
rm -f "$FASTT_EMU_COVERAGE"
python3 -c "import fastt; assert fastt.cuda.is_available(), 'emulated \
device missing'; print('fastt from', fastt.__file__)"
if [ $# -eq 0 ]; then
  set -- -q -m "not large" tests/python/test_cuda_*.py
fi
rc=0
python3 -m pytest -p no:cacheprovider "$@" || rc=$?
if [ -f "$FASTT_EMU_COVERAGE" ]; then
  total=$(wc -l < "$FASTT_EMU_COVERAGE")
  unrun=$(awk '$3 == 0' "$FASTT_EMU_COVERAGE" | wc -l)
  echo "CUDA kernels executed: $((total - unrun)) of $total registered" \
       "(op dtype calls: $FASTT_EMU_COVERAGE)"
  if [ "$unrun" -gt 0 ]; then
    echo "never executed:"
    awk '$3 == 0 {print "  " $1 " " $2}' "$FASTT_EMU_COVERAGE" | column -c 100
  fi
fi
exit $rc
