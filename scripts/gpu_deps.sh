#!/usr/bin/env bash
# Run HERE (a Debian machine with apt) before bench/gpu_check.sh goes to a
# GPU machine that cannot download anything: fetches the .debs of fastt's
# C++ build dependencies the GPU image lacks (fmt, OpenBLAS, SLEEF, oneDNN,
# Catch2) into .gpudeps/ (git-ignored), which the device tool carries
# along. The GPU
# script unpacks them into a private prefix (dpkg -x), never into /.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpudeps
grep -qx '/.gpudeps/' .git/info/exclude 2>/dev/null ||
  echo '/.gpudeps/' >>.git/info/exclude
fmt_lib=$(apt-cache depends libfmt-dev | awk '/Depends: libfmt[0-9]/ {print $2; exit}')
pkgs=(libfmt-dev "$fmt_lib" libopenblas-dev libopenblas0 libopenblas0-pthread
      libopenblas0-openmp libsleef-dev libsleef3 libdnnl-dev libdnnl2
      libopenblas-pthread-dev libgfortran5 catch2 libkissfft-dev)
(cd .gpudeps && rm -f ./*.deb && apt-get download "${pkgs[@]}")
ls -la .gpudeps
