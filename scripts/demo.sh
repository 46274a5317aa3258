#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages), builds denote in Release (CLI and Python module) and
# runs `denote demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
# The CLI, and the Python module when pybind11 and numpy are installed (PYTHONPATH=build/python).
targets=(denote_cli)
if cmake --build --preset release --target help | grep -q '^denote_python:'; then targets+=(denote_python); fi
cmake --build --preset release --target "${targets[@]}"
exec build/bin/denote demo
