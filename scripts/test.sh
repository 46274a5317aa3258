#!/usr/bin/env bash
# Sets up a fresh machine, builds denote (Release) and runs every test through CTest, then builds
# the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer (debug preset) and runs them too.
# Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc)

echo "== release build and tests"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

if [[ "${1:-}" != "--no-sanitize" ]]; then
  echo "== sanitizer build (ASan + UBSan) and tests"
  cmake --preset debug >/dev/null
  cmake --build --preset debug -j "$jobs" --target denote_tests denote_cli
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset debug -j "$jobs"
fi
echo "== all tests passed"
