#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) through the `fuzz` CMake preset and runs
# the torchlean.ir.v1 import target for N seconds (default 60). New corpus entries go to
# build-fuzz/corpus/json_import (the committed seeds in fuzz/corpus/json_import stay untouched);
# a crashing input is saved under build-fuzz/artifacts/ and the script exits non-zero. Each target
# runs with its dictionary fuzz/dict/<target>.dict (field names, overflow numbers like 1e400 and
# 9223372036854775808, UTF-8 edge cases, deep nesting tokens).
# Usage: scripts/fuzz.sh [seconds] [extra libFuzzer flags...]   (JOBS=n sets build parallelism;
#        TARGET=words_load or TARGET=onnx_import picks another target, FUZZ_BUILD=dir another build directory)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
cd "$root"

target="${TARGET:-json_import}"
build="${FUZZ_BUILD:-$root/build-fuzz}"
cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" --target "fuzz_$target" --parallel "${JOBS:-2}"

work="$build/corpus/$target"
artifacts="$build/artifacts/"
mkdir -p "$work" "$artifacts" "$root/fuzz/corpus/$target"
dict=()
[[ -f "$root/fuzz/dict/$target.dict" ]] && dict=(-dict="$root/fuzz/dict/$target.dict")
exec "$build/bin/fuzz_$target" "$work" "$root/fuzz/corpus/$target" "${dict[@]}" \
  -max_len=8192 -max_total_time="$seconds" -artifact_prefix="$artifacts" -print_final_stats=1 "$@"
