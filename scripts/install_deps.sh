#!/usr/bin/env bash
# Installs what fastt needs on a fresh Debian 12 or 13 machine: the C++
# toolchain and libraries from apt, the Python tooling from pip. Idempotent;
# skips apt when everything is already there. Needs root (or sudo).
set -euo pipefail

APT_PACKAGES=(build-essential cmake ninja-build ccache pkg-config git
  libfmt-dev catch2 libopenblas-dev libopenblas0-openmp libsleef-dev libdnnl-dev
  libgloo-dev
  libkissfft-dev
  libbenchmark-dev
  python3-dev)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[deps] apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
# numpy/pytest/hypothesis for the tests; pybind11/setuptools/cmake/ninja for
# the extension build; matplotlib for the benchmark plots; scikit-learn for
# the digits data set the training examples use (it ships inside the
# package, so nothing is downloaded at run time). torch (CPU build) is the
# reference the tests and benchmarks compare against; safetensors checks that
# fastt.save files interoperate; expecttest is what torch's OpInfo database
# (torch.testing._internal.common_methods_invocations) imports; scipy is the
# value reference for the special functions (and op_db's own refs). The test
# suite requires all of them: a failed install fails here, not as skips.
"$PY" -m pip install -q --disable-pip-version-check \
  numpy pytest hypothesis expecttest pybind11 setuptools wheel matplotlib \
  scikit-learn scipy safetensors
if ! "$PY" -c "import torch" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check torch==2.13.0
fi
"$PY" -c "import torch, expecttest, hypothesis, safetensors, sklearn, scipy" || {
  echo "[deps] a required Python package is missing (see above)" >&2
  exit 1
}
# cuBLAS and cuDNN for the CUDA backend, when nvcc is here (CMake finds their
# headers and libraries inside these wheels; the versions are the ones torch's
# CUDA 13 builds use).
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  if ! "$PY" -c "import nvidia.cudnn, nvidia.cu13" 2>/dev/null; then
    "$PY" -m pip install -q --disable-pip-version-check \
      nvidia-cublas==13.1.1.3 nvidia-cudnn-cu13==9.24.0.43 ||
      echo "[deps] cuBLAS/cuDNN wheels not installed: CUDA GEMM/conv use fastt's own kernels"
  fi
fi
