#!/usr/bin/env bash
# VNN-COMP tool script: install_tool.sh v1
# Installs denote's dependencies (Debian packages, scripts/deps.sh) and builds the command-line tool
# (Release) into build/bin/denote, which prepare_instance.sh and run_instance.sh call.
set -euo pipefail
if [ "$#" -ne 1 ] || [ "$1" != "v1" ]; then
  echo "usage: install_tool.sh v1 (the VNN-COMP script version; got: $*)" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target denote_cli
test -x build/bin/denote
echo "denote installed: $(pwd)/build/bin/denote"
