#!/usr/bin/env bash
# The mutation check (a test of the tests): builds fastt._C with the planted
# bugs of csrc/mutation.h compiled in (-DFASTT_MUTANTS=ON, CPU only, into
# build-mut; only the files with hooks differ from the normal build, so the
# rest come from ccache), then runs tests/mutation/run.py: a fixed selection
# of the Python suite with no mutant (must pass), then once per mutant
# (must fail). Usage:
#   scripts/mutation.sh            every mutant (the full run)
#   scripts/mutation.sh 3          3 mutants picked from the commit hash (CI)
#   scripts/mutation.sh NAME...    those mutants
# FASTT_MUTANTS_SAMPLE=all|N is the default when no argument is given.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=$(command -v python3)
JOBS=${FASTT_MUTATION_JOBS:-2}
BUILD=build-mut
T0=$SECONDS

# Release, like scripts/test.sh's build, so the files without hooks hash the
# same in ccache's preprocessor mode (-D and -I are not part of that hash).
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFASTT_MUTANTS=ON -DFASTT_CUDA=OFF -DFASTT_BUILD_TESTS=OFF \
  -DFASTT_BUILD_BENCH=OFF -DFASTT_BUILD_EXAMPLES=OFF \
  -DFASTT_CPU_ISA_LEVELS=native \
  -DFASTT_PYTHON_OUTPUT_DIR="$ROOT/$BUILD/pkg/fastt" \
  -DPython_EXECUTABLE="$PY" >/dev/null
nice -n 10 cmake --build "$BUILD" -j"$JOBS" --target _C
# The pure-Python package around the mutant _C (as scripts/sanitize.sh).
pkg=$BUILD/pkg/fastt
mkdir -p "$pkg"
for f in python/fastt/*; do
  case "$f" in *.so) continue ;; esac
  ln -sfn "$ROOT/$f" "$pkg/$(basename "$f")"
done
echo "mutation build: $((SECONDS - T0))s"

rc=0
"$PY" tests/mutation/run.py --pkg "$BUILD/pkg" "$@" || rc=$?
echo "mutation check: $((SECONDS - T0))s in all"
exit $rc
