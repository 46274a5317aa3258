#!/usr/bin/env bash
# Installs the Debian packages denote needs to build and test. Idempotent; silent when nothing is missing.
# Usage: scripts/deps.sh [--extra]   (--extra also installs offline golden-file tools such as python3-torch)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  ccache  # compiles the tests once for both CI builds, and makes re-runs cheap (docs/PERF.md "CI time")
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libmpfr-dev libgmp-dev
  zlib1g-dev  # reads VNN-COMP's .onnx.gz / .vnnlib.gz as published
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  clang
  graphviz  # dot, for the README tour (print --dot | dot -Tpng)
  pybind11-dev python3-dev python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv  # the Python module (python/)
  libopenmpi-dev openmpi-bin  # optional: `mpirun -np N denote verify` (DENOTE_MPI=AUTO builds without it)
)
if [[ "${1:-}" == "--extra" ]]; then
  # PyTorch for golden files and benches; what the peers (../shared/peers: auto_LiRPA, nnenum) import.
  packages+=(python3-torch python3-appdirs python3-graphviz python3-tqdm python3-packaging
             python3-swiglpk python3-termcolor python3-threadpoolctl python3-scipy)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
((${#missing[@]} == 0)) && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
