#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) through the `fuzz` CMake preset and runs
# the torchlean.ir.v1 import target for N seconds (default 60). New corpus entries go to
# build-fuzz/corpus/json_import (the committed seeds in fuzz/corpus/json_import stay untouched);
# a crashing input is saved under build-fuzz/artifacts/ and the script exits non-zero.
# Usage: scripts/fuzz.sh [seconds] [extra libFuzzer flags...]   (JOBS=n sets build parallelism)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_json_import --parallel "${JOBS:-2}"

work="$root/build-fuzz/corpus/json_import"
artifacts="$root/build-fuzz/artifacts/"
mkdir -p "$work" "$artifacts"
exec "$root/build-fuzz/bin/fuzz_json_import" "$work" "$root/fuzz/corpus/json_import" \
  -max_len=8192 -max_total_time="$seconds" -artifact_prefix="$artifacts" -print_final_stats=1 "$@"
