#!/usr/bin/env bash
# Sets up a fresh machine, builds denote (Release) and runs every test through CTest, then builds
# the library, the CLI and the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer (debug
# preset) and runs them again. The tests' own objects are the same in both builds and ccache
# (scripts/deps.sh) compiles them once; docs/PERF.md "CI time" has the phases' times.
# Usage: scripts/test.sh [--no-sanitize] [--long]
#   --no-sanitize  the release pass only
#   --long         before a release, not per change: also the CTest label `long` (tests/long's
#                  exhaustive sweeps, the benches' build) and, under the sanitizers, the heavy sweeps too
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=1 long=0
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0 ;;
    --long) long=1 ;;
    *) echo "usage: scripts/test.sh [--no-sanitize] [--long]" >&2; exit 2 ;;
  esac
done
start=$SECONDS
phase() { echo "== $1 (at $((SECONDS - start)) s)"; }
phase "deps"
scripts/deps.sh
jobs=$(nproc)

phase "release build"
if ((long)); then
  cmake --preset release -DDENOTE_BUILD_LONG_TESTS=ON >/dev/null
else
  cmake --preset release >/dev/null
fi
cmake --build --preset release -j "$jobs"
phase "release tests"
if ((long)); then
  ctest --preset release -j "$jobs"
else
  ctest --preset release -j "$jobs" -LE long
fi

if ((sanitize)); then
  phase "sanitizer build (ASan + UBSan)"
  cmake --preset debug >/dev/null
  cmake --build --preset debug -j "$jobs" --target denote_tests denote_cli onnx_conformance
  phase "sanitizer tests"
  # The exhaustive/random numerical sweeps already ran in the release build; under the sanitizers
  # (about 10x slower) every other test runs, including the property test (a quarter of its random
  # graphs: tests/unit/sanitized.h) and the 1M-node chain.
  # onnx_export_check (python's onnx.checker over exported files) also ran in the release pass, and so did the
  # one-process-per-case PyTorch golden tables (Case/Golden*: ~320 value comparisons of rules that the unit,
  # property and random-graph tests also run under the sanitizers), and the
  # ACAS Xu ground-truth runs (VerifyGroundTruth.*: verify() on instances, as verify_test.cc does here).
  # The debug preset runs denote_tests as 16 CTest shards (DENOTE_TEST_SHARDS), so the sweeps are left out
  # by GoogleTest's filter: the same names as the CTest regex (a regex X unanchored is the glob *X*).
  heavy='GroundTruth|Exhaustive|RandomPairs|RandomTriples|EveryWord|EveryPair|EveryTriple|EverySmall|Every.*Golden|Case/Golden|onnx_export_check'
  filter='-*GroundTruth*:*Exhaustive*:*RandomPairs*:*RandomTriples*:*EveryWord*:*EveryPair*:*EveryTriple*'
  filter+=':*EverySmall*:*Every*Golden*:*Case/Golden*'
  # The CTest label release_only: four of the six mpi.* runs (tests/CMakeLists.txt says which and why).
  only=(-LE release_only)
  if ((long)); then heavy='^$' filter='*' only=(); fi
  GTEST_FILTER="$filter" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --preset debug -j "$jobs" -E "$heavy" "${only[@]}"
fi
phase "all tests passed"
if command -v ccache >/dev/null; then ccache -s | grep -E '^(Cacheable calls|  Hits|  Misses)' || true; fi
