#!/usr/bin/env bash
# Sanitizer runs: ASan+UBSan (build-asan: Catch2 tests, then a subset of the
# Python tests with libasan preloaded) and TSan (build-tsan: [threads] and
# [allocator] Catch2 tests; every test case that starts a std::thread must
# carry [threads], checked first). Usage: scripts/sanitize.sh [asan|tsan|all]
# (default all); "tsan-omp" adds the slow TSan pass with OpenMP threads.
# Add a Python test file to the ASan run by appending it to PY_TESTS below.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WHAT=${1:-all}
JOBS=${FASTT_SANITIZE_JOBS:-2}
NICE="nice -n 10"
PY=$(command -v python3)
# -O1 -g: usable stacks at a tolerable speed on 2 cores.
OPT_FLAGS="-O1 -g"

declare -a SUMMARY=()
FAILED=0
step() {  # step NAME CMD... : runs CMD, records status and wall time.
  local name=$1; shift
  local t0=$SECONDS
  echo "==> $name"
  if "$@"; then
    SUMMARY+=("PASS  $name ($((SECONDS - t0))s)")
  else
    SUMMARY+=("FAIL  $name ($((SECONDS - t0))s)")
    FAILED=1
    return 1
  fi
}

configure() {  # configure BUILD_DIR EXTRA_ARGS...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$OPT_FLAGS" \
    -DFASTT_CUDA=OFF -DFASTT_BUILD_BENCH=OFF -DFASTT_BUILD_EXAMPLES=OFF \
    -DFASTT_CPU_ISA_LEVELS=native \
    -DPython_EXECUTABLE="$PY" "$@" >/dev/null
}

# ---------------- ASan + UBSan ----------------
asan_build() {
  configure build-asan -DFASTT_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" \
    -DFASTT_PYTHON_OUTPUT_DIR="$ROOT/build-asan/pkg/fastt" &&
  $NICE cmake --build build-asan -j"$JOBS" --target fastt_tests _C || return 1
  # The pure-Python package around the sanitized _C (as scripts/dev_pkg.sh).
  local pkg=build-asan/pkg/fastt f
  mkdir -p "$pkg"
  for f in python/fastt/*; do
    case "$f" in *.so) continue ;; esac
    ln -sfn "$ROOT/$f" "$pkg/$(basename "$f")"
  done
}

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
asan_cpp() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
    build-asan/tests/cpp/fastt_tests
}

# A representative slice: autograd, ops, nn, optim, threads, numerics
# (about a minute under ASan on 2 cores).
PY_TESTS=(
  tests/python/test_autograd.py
  tests/python/test_ops.py
  tests/python/test_nn.py
  tests/python/test_optim.py
  tests/python/test_threads.py
  tests/python/test_numerics.py
)
asan_py() {
  # libstdc++ is preloaded too: python3 itself does not link it, and ASan's
  # __cxa_throw interceptor must find the real one at startup (otherwise the
  # first C++ exception aborts with "real___cxa_throw != 0").
  local preload
  preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)"
  # CPython and torch leak at exit by design: leak checking is for C++ only.
  # torch (the tests' reference) is not instrumented; fastt's memory is.
  # --capture=sys: a sanitizer report goes to fd 2 and must not be swallowed
  # by pytest's fd capture when the process aborts.
  # RSS-growth tests measure the process, and ASan's quarantine and shadow
  # memory grow it by design: they run in the plain build only.
  env LD_PRELOAD="$preload" PYTHONPATH="$ROOT/build-asan/pkg" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
    PYTHONMALLOC=malloc OMP_NUM_THREADS=2 \
    "$PY" -m pytest -q -x --capture=sys -p no:cacheprovider "${PY_TESTS[@]}" \
    -k "not does_not_grow_memory"
}

# ---------------- TSan ----------------
# TSan runs the [threads] and [allocator] cases only, so a test case that
# starts threads without the [threads] tag would never be race-checked.
tsan_tags() {  # tsan_tags [DIR (tests/cpp)]
  "$PY" - "${1:-tests/cpp}" <<'EOF'
import glob, re, sys
bad = []
for f in sorted(glob.glob(sys.argv[1] + "/*.cpp")):
    src = open(f).read()
    starts = [m.start() for m in re.finditer(r"^TEST_CASE\(", src, re.M)]
    for i, p in enumerate(starts):
        body = src[p:starts[i + 1] if i + 1 < len(starts) else len(src)]
        head = body[:body.index("{")]
        if (re.search(r"std::(thread|jthread|async)\b|pthread_create", body)
                and "[threads]" not in head):
            bad.append("%s:%d" % (f, src.count("\n", 0, p) + 1))
if bad:
    print("test cases that start threads but lack the [threads] tag:")
    print("\n".join("  " + b for b in bad))
    sys.exit(1)
EOF
}
tsan_build() {
  configure build-tsan -DFASTT_SANITIZE_THREAD=ON -DFASTT_BUILD_PYTHON=OFF &&
  $NICE cmake --build build-tsan -j"$JOBS" --target fastt_tests
}
TSAN_BASE="halt_on_error=1:second_deadlock_stack=1:history_size=4:allocator_may_return_null=1"
tsan_strict() {
  # One OpenMP thread: no libgomp workers, so no suppressions are needed
  # and every report is about fastt's (or the test's) own threads.
  TSAN_OPTIONS="$TSAN_BASE" OMP_NUM_THREADS=1 \
    build-tsan/tests/cpp/fastt_tests "[threads],[allocator]"
}
tsan_omp() {
  # Two OpenMP threads inside each std::thread. libgomp is not
  # TSan-instrumented (its barriers are invisible to TSan): scripts/tsan.supp
  # silences reports whose stacks run through libgomp, and only those.
  # OpenBLAS's own pthread pool (sized by fastt to the OpenMP count) is
  # uninstrumented for the same reason and is suppressed the same way.
  # history_size=7: the suppressions need the libgomp worker's old stack.
  TSAN_OPTIONS="$TSAN_BASE:history_size=7:suppressions=$ROOT/scripts/tsan.supp" \
    OMP_NUM_THREADS=2 \
    build-tsan/tests/cpp/fastt_tests "[threads],[allocator]"
}

T0=$SECONDS
case "$WHAT" in
  asan|tsan|tsan-omp|all) ;;
  *) echo "usage: $0 [asan|tsan|tsan-omp|all]"; exit 2 ;;
esac
if [[ $WHAT == asan || $WHAT == all ]]; then
  if step "asan+ubsan build" asan_build; then
    step "asan+ubsan C++ tests, all (leak check on)" asan_cpp
    step "asan+ubsan Python tests (${#PY_TESTS[@]} files)" asan_py
  fi
fi
if [[ $WHAT == tsan || $WHAT == all ]]; then
  step "threads tests tagged [threads]" tsan_tags
  step "tsan build" tsan_build &&
    step "tsan C++ [threads],[allocator], 1 OpenMP thread, no supp" \
      tsan_strict
fi
# Opt-in: every suppressed libgomp report is symbolized to be matched, so
# this pass takes well over 10 minutes on 2 cores.
if [[ $WHAT == tsan-omp ]]; then
  step "tsan build" tsan_build &&
    step "tsan C++ [threads],[allocator], 2 OpenMP threads, supp" tsan_omp
fi
echo
echo "==== sanitize.sh summary ($((SECONDS - T0))s) ===="
printf '%s\n' "${SUMMARY[@]}"
exit $FAILED
