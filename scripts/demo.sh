#!/usr/bin/env bash
# Sets up a fresh machine (Debian packages), builds denote in Release and runs `denote demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target denote_cli
exec build/bin/denote demo
