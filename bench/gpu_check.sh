#!/usr/bin/env bash
# The GPU check (issue 5, item 8): on a machine with an NVIDIA GPU and torch,
# builds fastt with CUDA (sm_90 + PTX), runs the C++ tests, the CUDA test
# suite against the CPU (tests/python/test_cuda_*.py), compute-sanitizer
# memcheck over a few of them where it works, then the GPU benchmarks
# (host-side per-op cost vs torch and a raw launch, GPT step, curves).
# Everything lands in $OUT (default bench/results/gpu): logs, junit XML,
# launch.json, gpu.json, gpu.md. Each stage has its own time limit and a
# failing stage does not stop the later ones; the exit status is non-zero
# if any failed.
#   bash bench/gpu_check.sh [--quick]
# FASTT_GPU_SKIP_BUILD=1 reuses an existing build (a second device call).
# FASTT_GPU_STAGES (default: all) names the stages to run, e.g. "build
# cuda_tests launch" for a first call and "bench ctest" for a second one on
# the still-warm machine; FASTT_GPU_TARGETS limits what the build stage
# builds (e.g. "_C fastt_cuda_launch"); FASTT_GPU_XDIST=N runs the CUDA
# tests in N pytest-xdist workers; FASTT_GPU_BENCH_FULL=1 runs the full
# benchmark (more repeats and batch sizes) after a --quick test run.
# Machines without fmt/OpenBLAS/Catch2 (the device tool's): run
# scripts/gpu_deps.sh first where apt works; .gpudeps/ is unpacked here.
set -uo pipefail
cd "$(dirname "$0")/.."
QUICK=""
[ "${1:-}" = "--quick" ] && QUICK="--quick"
# Stage limits (s). --quick fits the device tool's 10-minute calls after a
# build: shorter limits and no memcheck or full Python suite.
if [ -n "$QUICK" ]; then T_TESTS=300 T_BENCH=300 T_CTEST=120
else T_TESTS=900 T_BENCH=900 T_CTEST=600; fi
T_TESTS=${FASTT_GPU_T_TESTS:-$T_TESTS} T_BENCH=${FASTT_GPU_T_BENCH:-$T_BENCH}
OUT=${OUT:-bench/results/gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
BUILD=${FASTT_GPU_BUILD:-build-gpu}
JOBS=$(nproc)
status=0
STAGES=${FASTT_GPU_STAGES:-build cuda_tests launch bench profile ctest memcheck python_tests}
want() { [[ " $STAGES " == *" $1 "* ]]; }
stage() {  # stage NAME SECONDS CMD...: runs CMD, logs to $OUT/NAME.log
  local name=$1 secs=$2
  shift 2
  echo "== $name ($(date +%T)) =="
  local t0=$SECONDS
  timeout "$secs" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc in $((SECONDS - t0)) s; tail:"
  tail -n 15 "$OUT/$name.log" | sed 's/^/   /'
  [ $rc -eq 0 ] || status=1
  return $rc
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -n 2; "$PY" -c "import torch; print('torch', torch.__version__)"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

if [ -d .gpudeps ] && ls .gpudeps/*.deb >/dev/null 2>&1; then
  DEPS=/tmp/fastt-deps
  mkdir -p "$DEPS"
  for f in .gpudeps/*.deb; do dpkg -x "$f" "$DEPS"; done
  export CMAKE_PREFIX_PATH="$DEPS/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu:$DEPS/usr/lib/x86_64-linux-gnu/openblas-openmp:$DEPS/usr/lib/x86_64-linux-gnu/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# cuDNN loads its sub-libraries (libcudnn_cnn etc.) by name at run time:
# put the wheel's library folders on the search path.
NVLIBS=$("$PY" -c "import nvidia, os; r = list(nvidia.__path__)[0]; print(':'.join(os.path.join(r, d, 'lib') for d in ('cudnn', 'cu13', 'cublas') if os.path.isdir(os.path.join(r, d, 'lib'))))" 2>/dev/null || true)
[ -n "$NVLIBS" ] && export LD_LIBRARY_PATH="$NVLIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

PKG="$PWD/$BUILD/pkg/fastt"
mkdir -p "$PKG"
if want build && { [ -z "${FASTT_GPU_SKIP_BUILD:-}" ] || [ ! -f "$BUILD/build.ninja" ]; }; then
stage configure 300 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" \
  -DFASTT_BUILD_BENCH=ON -DFASTT_BUILD_EXAMPLES=OFF \
  -DPython_EXECUTABLE="$(command -v "$PY")" \
  -DFASTT_PYTHON_OUTPUT_DIR="$PKG" || exit 1
targets=()
for t in ${FASTT_GPU_TARGETS:-}; do targets+=(--target "$t"); done
# -k 0: a target that fails (a test file) does not stop the others.
stage build 900 cmake --build "$BUILD" -j"$JOBS" "${targets[@]}" -- -k 0 ||
  ls "$PKG"/_C*.so >/dev/null 2>&1 || exit 1
fi
for f in python/fastt/*; do
  case "$f" in *.so) continue ;; esac
  ln -sfn "$PWD/$f" "$PKG/$(basename "$f")"
done
export PYTHONPATH="$PWD/$BUILD/pkg${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c "import fastt; print('fastt sees', fastt.cuda.device_count(), 'GPU(s)')"

XDIST=()
[ -n "${FASTT_GPU_XDIST:-}" ] && XDIST=(-n "$FASTT_GPU_XDIST")
want cuda_tests &&
stage cuda_tests "$T_TESTS" "$PY" -m pytest -q -p no:cacheprovider --maxfail=200 \
  "${XDIST[@]}" -rf --junitxml="$OUT/cuda_tests.xml" tests/python/test_cuda_*.py
want launch && stage launch 120 "$BUILD/bench/fastt_cuda_launch" &&
  cp "$OUT/launch.log" "$OUT/launch.json"
BQUICK=$QUICK
[ -n "${FASTT_GPU_BENCH_FULL:-}" ] && BQUICK=""
want bench && stage bench "$T_BENCH" "$PY" -m bench.gpu --out "$OUT" $BQUICK \
  $( [ -s "$OUT/launch.json" ] && echo --launch-json "$OUT/launch.json")
want profile && stage profile 120 env CUDA_LAUNCH_BLOCKING=1 "$PY" -m \
  bench.gpu_profile --model transformer --batch 64 --mode train
want ctest &&
stage ctest "$T_CTEST" ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure
if want memcheck && [ -z "$QUICK" ] && command -v compute-sanitizer >/dev/null 2>&1; then
  stage memcheck 600 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$PY" -m pytest -q -p no:cacheprovider -x \
    tests/python/test_cuda_elementwise.py tests/python/test_cuda_reduce.py \
    tests/python/test_cuda_nn.py -k "not large"
fi
if want python_tests && [ -z "$QUICK" ]; then
  stage python_tests 900 "$PY" -m pytest -q -p no:cacheprovider \
    tests/python --ignore=tests/python/test_examples.py
fi
echo "results in $OUT (status $status)"
exit $status
