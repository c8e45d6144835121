#!/usr/bin/env bash
# Builds and runs the libFuzzer target for the safetensors loader (see
# fuzz/README.md) for a bounded time: FASTT_FUZZ_SECONDS (default 60) in
# build-fuzz (FASTT_FUZZ_BUILD_DIR). Installs clang, compiler-rt and libomp
# from apt when missing (Debian 12: clang 14, Debian 13: clang 19). Prints
# the runs executed and crashes found; exits non-zero on a crash.
# To add a target: add it in fuzz/CMakeLists.txt and a run_target line below.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FASTT_FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_PER_TARGET=${FASTT_FUZZ_SECONDS:-60}
JOBS=${FASTT_FUZZ_JOBS:-$(nproc)}
T0=$SECONDS

# ---------------- toolchain ----------------
# The unversioned names are the distribution's default LLVM on both Debian
# 12 and 13; libclang-rt-dev holds libFuzzer and the sanitizer runtimes,
# libomp-dev the OpenMP runtime clang links against.
APT_PACKAGES=(clang libclang-rt-dev libomp-dev)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] && command -v apt-get >/dev/null; then
  echo "[fuzz] apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi
CC_BIN=${FASTT_FUZZ_CC:-clang}
CXX_BIN=${FASTT_FUZZ_CXX:-clang++}
command -v "$CXX_BIN" >/dev/null || {
  echo "[fuzz] $CXX_BIN not found" >&2; exit 2; }
# Catch a clang without libFuzzer here, with a clear message, rather than
# as a CMake warning and a missing target later.
probe=$(mktemp -d)
printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
  'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) {return 0;}' \
  >"$probe/p.cpp"
if ! "$CXX_BIN" -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
  rm -rf "$probe"
  echo "[fuzz] $CXX_BIN cannot link -fsanitize=fuzzer (install" \
       "libclang-rt-dev, or libclang-rt-<N>-dev for clang-<N>)" >&2
  exit 2
fi
rm -rf "$probe"

# ---------------- build ----------------
echo "[fuzz] building $BUILD with $("$CXX_BIN" --version | head -n1)"
CC="$CC_BIN" CXX="$CXX_BIN" cmake -S . -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DFASTT_BUILD_FUZZ=ON -DFASTT_CUDA=OFF -DFASTT_BUILD_PYTHON=OFF \
  -DFASTT_BUILD_TESTS=OFF -DFASTT_BUILD_BENCH=OFF \
  -DFASTT_BUILD_EXAMPLES=OFF -DFASTT_CPU_ISA_LEVELS=native >/dev/null
nice -n 10 cmake --build "$BUILD" -j"$JOBS" --target fuzz_safetensors
BUILD_S=$((SECONDS - T0))

# ---------------- run ----------------
FAILED=0
declare -a SUMMARY=()
run_target() {  # run_target NAME SEED_DIR
  local name=$1 seeds=$2
  local work="$BUILD/fuzz-$name"
  rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
  cp "$seeds"/* "$work/corpus/"
  local log="$work/log.txt" rc=0
  echo "[fuzz] $name: ${SECONDS_PER_TARGET}s from $(ls "$work/corpus" | wc -l) seeds"
  # -timeout: one input taking >10 s is a hang; leaks are reported (ASan).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$BUILD/fuzz/$name" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" >"$log" 2>&1 || rc=$?
  local runs crashes
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
    grep -o '[0-9]*$' || true)
  if [ -z "$runs" ]; then  # killed before the final stats: last status line
    runs=$(grep -o '^#[0-9]*' "$log" | tail -n1 | tr -d '#' || true)
  fi
  crashes=$(find "$work/artifacts" -type f | wc -l)
  echo "[fuzz] $name: runs=${runs:-0} crashes=$crashes exit=$rc" \
       "cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1 | grep -o '[0-9]*' || echo ?)"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    FAILED=1
    echo "[fuzz] $name FAILED; log tail ($log):"
    tail -n 40 "$log"
    find "$work/artifacts" -type f -exec echo "[fuzz] crashing input: {}" \;
    SUMMARY+=("FAIL  $name runs=${runs:-0} crashes=$crashes")
  else
    SUMMARY+=("PASS  $name runs=${runs:-0} crashes=0")
  fi
}

SEEDS="$BUILD/fuzz-seeds"
rm -rf "$SEEDS"
python3 fuzz/make_corpus.py "$SEEDS" >/dev/null
run_target fuzz_safetensors "$SEEDS"

echo "== fuzz summary (build ${BUILD_S}s, total $((SECONDS - T0))s) =="
printf '%s\n' "${SUMMARY[@]}"
exit "$FAILED"
