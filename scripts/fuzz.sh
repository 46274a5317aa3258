#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) through the `fuzz` CMake preset and runs one
# target (default json_import) for N seconds (default 60). Targets, one per parser (fuzz/*.cc):
#   json_import   torchlean.ir.v1 JSON          onnx_import   ONNX protobuf (float and typed import)
#   words_load    typed dtype + words / typed documents
#   scalar_line   `denote scalar` lines          npy_load      .npy tensors (--input @file.npy)
#   vnnlib_parse  VNN-LIB properties (docs/VNNLIB.md)
#   precision_parse  precision policy files, MX specs, MX conversion (a projection)
#   certificate_check  certificates: parser and checker on a satisfiable property (a valid one traps)
# TARGET=all runs each in turn for N seconds. New corpus entries go to <build>/corpus/<target> (the
# committed seeds in fuzz/corpus/<target> stay untouched); a crashing input is saved under
# <build>/artifacts/ and the script exits non-zero. Each target runs with its dictionary
# fuzz/dict/<target>.dict (field names, overflow numbers like 1e400 and 9223372036854775808, UTF-8
# edge cases, deep nesting tokens), a 25 s per-input timeout and a 2 GB RSS limit.
# docs/FUZZ.md records the long runs (10^7 executions per target) and their commands.
# Not part of CI (scripts/test.sh does not build or run the fuzzers).
# Usage: scripts/fuzz.sh [seconds] [extra libFuzzer flags, e.g. -runs=10000000 ...]
#        (JOBS=n sets build parallelism, TARGET picks the target, FUZZ_BUILD=dir another build directory)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
cd "$root"

all_targets=(json_import onnx_import words_load scalar_line npy_load vnnlib_parse precision_parse certificate_check)
target="${TARGET:-json_import}"
if [[ "$target" == all ]]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $target "* ]]; then
  targets=("$target")
else
  echo "scripts/fuzz.sh: unknown TARGET '$target' (expected one of: ${all_targets[*]} all)" >&2
  exit 2
fi
build="${FUZZ_BUILD:-$root/build-fuzz}"
cmake --preset fuzz -B "$build" >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
cmake --build "$build" --target "${build_targets[@]}" --parallel "${JOBS:-2}"

artifacts="$build/artifacts/"
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  mkdir -p "$work" "$artifacts" "$root/fuzz/corpus/$t"
  dict=()
  [[ -f "$root/fuzz/dict/$t.dict" ]] && dict=(-dict="$root/fuzz/dict/$t.dict")
  echo "== fuzz_$t (${seconds} s)"
  "$build/bin/fuzz_$t" "$work" "$root/fuzz/corpus/$t" "${dict[@]}" -max_len=8192 -timeout=25 -rss_limit_mb=2048 -purge_allocator_interval=-1 \
    -max_total_time="$seconds" -artifact_prefix="$artifacts" -print_final_stats=1 "$@"
done
