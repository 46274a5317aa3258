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
  cmake --build --preset debug -j "$jobs" --target denote_tests denote_cli onnx_conformance
  # The exhaustive/random numerical sweeps already ran in the release build; under the sanitizers
  # (about 10x slower) every other test runs, including the property test (a quarter of its random
  # graphs: DENOTE_SANITIZED_BUILD) and the 1M-node chain.
  # onnx_export_check (python's onnx.checker over exported files) also ran in the release pass, and so did the
  # one-process-per-case PyTorch golden tables (Case/Golden*: ~320 value comparisons of rules that the unit,
  # property and random-graph tests also run under the sanitizers; about 3.5 minutes of ASan start-up), and the
  # ACAS Xu ground-truth runs (VerifyGroundTruth.*: verify() on instances, as verify_test.cc does here).
  heavy='GroundTruth|Exhaustive|RandomPairs|RandomTriples|EveryWord|EveryPair|EveryTriple|EverySmall|Every.*Golden|Case/Golden|onnx_export_check'
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset debug -j "$jobs" -E "$heavy"
fi
echo "== all tests passed"
