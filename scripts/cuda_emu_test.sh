#!/usr/bin/env bash
# Runs the CUDA test suite (tests/python/test_cuda_*.py) on a machine
# without a GPU: builds fastt._C with the real CUDA kernel sources emulated
# on the CPU (tests/cuda_emu, -DFASTT_CUDA_EMULATE=ON) into BUILD/pkg and
# runs pytest against it with FASTT_TEST_DEVICE=cuda, then fails if a
# registered CUDA kernel (op, dtype) that no test executed is not on
# tests/cuda_emu/unrun_allowed.txt (full runs only). Tests marked
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
# The emulator-only tests (runtime-call counters) fail, not skip, when the
# counters cannot be read on this build (tests/python/emu_counters.py).
export FASTT_TEST_EMULATED=1
export FASTT_EMU_COVERAGE="$PWD/$BUILD/cuda_kernel_coverage.txt"
rm -f "$FASTT_EMU_COVERAGE"
python3 -c "import fastt; assert fastt.cuda.is_available(), 'emulated \
device missing'; print('fastt from', fastt.__file__)"
FULL_RUN=0
if [ $# -eq 0 ]; then
  FULL_RUN=1
  set -- -q -m "not large" tests/python/test_cuda_*.py
fi
rc=0
python3 -m pytest -p no:cacheprovider "$@" || rc=$?
# Every registered CUDA kernel must have run (a kernel no test reaches is an
# untested kernel), except those on tests/cuda_emu/unrun_allowed.txt. Only
# the default full run checks this: a filtered run reaches fewer kernels.
if [ "$FULL_RUN" = 1 ]; then
  if [ ! -s "$FASTT_EMU_COVERAGE" ]; then
    echo "no kernel coverage written to $FASTT_EMU_COVERAGE" >&2
    exit 1
  fi
  total=$(wc -l < "$FASTT_EMU_COVERAGE")
  allowed=$(awk '!/^[[:space:]]*#/ && NF {print $1 " " $2}' \
    tests/cuda_emu/unrun_allowed.txt | sort -u)
  unrun=$(awk '$3 == 0 {print $1 " " $2}' "$FASTT_EMU_COVERAGE" | sort -u)
  unlisted=$(comm -23 <(printf '%s\n' "$unrun" | sed '/^$/d') \
    <(printf '%s\n' "$allowed" | sed '/^$/d'))
  n_unrun=$(printf '%s\n' "$unrun" | sed '/^$/d' | wc -l)
  echo "CUDA kernels executed: $((total - n_unrun)) of $total registered" \
       "(op dtype calls: $FASTT_EMU_COVERAGE)"
  if [ -n "$unlisted" ]; then
    echo "FAILED: registered CUDA kernels no test executed (add a test, or"
    echo "list them with the reason in tests/cuda_emu/unrun_allowed.txt):"
    printf '%s\n' "$unlisted" | sed 's/^/  /'
    rc=1
  fi
fi
exit $rc
