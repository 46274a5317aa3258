#!/usr/bin/env bash
# Software binary formats (bfloat16, binary16, e4m3fn, binary32; exact, nearest-even) against
# native float on the same loops and against an MPFR emulation: builds bench/formats_bench
# (Release), runs it once with --repeat repetitions of every benchmark, keeps the best (smallest)
# time of each and prints a table of ns per element (matmul: per multiply-add) and the ratios
#   format/f32    software format time / native f32 time (the goal: <= 4 for bf16 and fp16)
#   f32novec      software format time / native f32 time with vectorization off (add, mul)
#   MPFR/format   MPFR emulation time / software format time (the goal: >= 10)
# For matmul two software rows are shown: the plain left fold (fp_add(acc, fp_mul(a, b))) and
# denote_all over BinaryContext; the latter's f32 reference is denote_all over F32Context.
#
# Usage: bench/formats_compare.sh [--repeat R] [--build-dir DIR] [--no-build] [--filter REGEX]
#   --repeat R        repetitions of every benchmark; the best is kept (default: 3)
#   --build-dir DIR   CMake build directory (default: build-bench)
#   --no-build        use the formats_bench already built in DIR
#   --filter REGEX    Google Benchmark filter (default: all; e.g. 'add|mul' or 'bfloat16')
set -euo pipefail
cd "$(dirname "$0")/.."

repeat=3
build_dir=build-bench
build=1
filter=.
while (($# > 0)); do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --filter) filter="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "formats_compare: unknown argument: $1" >&2; exit 2 ;;
  esac
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if ((build)); then
  echo "== building formats_bench (Release) in $build_dir" >&2
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOTE_BUILD_BENCH=ON \
    -DDENOTE_BUILD_TESTS=OFF >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
  ninja -C "$build_dir" -j1 formats_bench >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== formats_bench, $repeat repetitions, load: $load_before" >&2
"$build_dir/bin/formats_bench" --benchmark_repetitions="$repeat" --benchmark_filter="$filter" \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json >/dev/null 2>"$out/log" ||
  { cat "$out/log" >&2; echo "formats_compare: formats_bench failed" >&2; exit 1; }
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== done, load: $load_after" >&2

python3 - "$out/bench.json" "$repeat" "$load_before" "$load_after" <<'EOF'
import json, sys

unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
best = {}  # "op/format/variant" -> best seconds per call
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") != "iteration" or b.get("error_occurred"):
        continue
    name = b.get("run_name", b["name"]).removesuffix("/real_time")
    s = b["real_time"] * unit[b["time_unit"]]
    best[name] = min(s, best.get(name, s))

per_call = {"add": 4096, "mul": 4096, "exp": 4096, "matmul": 256 ** 3}
formats = ("bfloat16", "binary16", "e4m3fn", "binary32")

def t(op, fmt, variant):
    return best.get(f"{op}/{fmt}/{variant}")

def ns(s, op):
    return f"{s / per_call[op] * 1e9:.2f}" if s is not None else "-"

def ratio(x, y):
    return f"{x / y:.1f}x" if x is not None and y is not None else "-"

print(f"ns per element (matmul: per multiply-add); best of {sys.argv[2]} repetitions; "
      f"load average (1, 5, 15 min) before: {sys.argv[3]}, after: {sys.argv[4]}")
print()
print("| op | format | software | native f32 | MPFR | format/f32 | format/f32novec | MPFR/format |")
print("|---|---|---|---|---|---|---|---|")
for op in ("add", "mul", "exp", "matmul"):
    for fmt in formats:
        soft, native, mpfr = t(op, fmt, "soft"), t(op, fmt, "native"), t(op, fmt, "mpfr")
        novec = t(op, fmt, "native_novec")
        label = "matmul (fold)" if op == "matmul" else op
        if soft is None and native is None:
            continue
        print(f"| {label} | {fmt} | {ns(soft, op)} | {ns(native, op)} | {ns(mpfr, op)} | {ratio(soft, native)} | "
              f"{ratio(soft, novec)} | {ratio(mpfr, soft)} |")
    if op == "matmul":
        for fmt in formats:
            ev, ev32, mpfr = t(op, fmt, "denote_all"), t(op, fmt, "denote_all_f32"), t(op, fmt, "mpfr")
            if ev is None:
                continue
            print(f"| matmul (denote_all) | {fmt} | {ns(ev, op)} | {ns(ev32, op)} (evaluator) | {ns(mpfr, op)} | "
                  f"{ratio(ev, ev32)} | - | {ratio(mpfr, ev)} |")
print()
print("Fast exact formats (binary_fast.h): fast = fast_add_n / fast_mul_n (64-bit words, the evaluator's), fast16 =")
print("fast_add_n16 / fast_mul_n16 (packed 16-bit words), fast_lanes = fast without the hand-vectorised nearest-even")
print("kernels (binary_fast_simd.h; bfloat16/binary16 and, under AVX-512, e4m3fn differ)")
print()
print("| op | format | fast | fast16 | fast_lanes | native f32 | MPFR | fast/f32 | fast16/f32 | MPFR/fast | lanes/fast |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for op in ("add", "mul"):
    for fmt in formats:
        fast, lanes, native, mpfr = t(op, fmt, "fast"), t(op, fmt, "fast_lanes"), t(op, fmt, "native"), t(op, fmt, "mpfr")
        f16 = t(op, fmt, "fast16")
        if fast is None:
            continue
        print(f"| {op} | {fmt} | {ns(fast, op)} | {ns(f16, op)} | {ns(lanes, op)} | {ns(native, op)} | {ns(mpfr, op)} | "
              f"{ratio(fast, native)} | {ratio(f16, native)} | {ratio(mpfr, fast)} | {ratio(lanes, fast)} |")
print()
print("Folds (matmul 256^3, ns per multiply-add): fast = fast_matmul at the CPU's widest kernel level, fast_avx2 = level 1")
print("(AVX2 + F16C binary32 lanes), fast_lanes = level 0 (the double lanes); bfloat16/binary16 only")
print()
print("| format | fast | fast_avx2 | fast_lanes | native f32 fold | denote_all | denote_all f32 | MPFR | fast/native | "
      "denote_all/f32 | MPFR/fast | lanes/fast |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for fmt in ("bfloat16", "binary16"):
    v = {k: t("matmul", fmt, k) for k in ("fast", "fast_avx2", "fast_lanes", "native", "denote_all", "denote_all_f32", "mpfr")}
    if v["fast"] is None:
        continue
    print(f"| {fmt} | " + " | ".join(ns(v[k], "matmul") for k in ("fast", "fast_avx2", "fast_lanes", "native", "denote_all",
                                                                  "denote_all_f32", "mpfr")) +
          f" | {ratio(v['fast'], v['native'])} | {ratio(v['denote_all'], v['denote_all_f32'])} | "
          f"{ratio(v['mpfr'], v['fast'])} | {ratio(v['fast_lanes'], v['fast'])} |")
print()
print("exp (ns per element): fast = BinaryContext::exp (a table for formats of <= 16 bits; the Ziv loop for binary32)")
print()
print("| format | fast | MPFR | native expf | MPFR/fast |")
print("|---|---|---|---|---|")
for fmt in formats:
    fast, mpfr, native = t("exp", fmt, "fast"), t("exp", fmt, "mpfr"), t("exp", fmt, "native")
    if fast is not None:
        print(f"| {fmt} | {ns(fast, 'exp')} | {ns(mpfr, 'exp')} | {ns(native, 'exp')} | {ratio(mpfr, fast)} |")
print()
gf = []
for fmt in formats:
    variants = ("native", "soft", "denote_all", "denote_all_f32", "mpfr")
    parts = [f"{v} {2 * per_call['matmul'] / s / 1e9:.3f}" for v in variants if (s := t("matmul", fmt, v)) is not None]
    if parts:
        gf.append(f"{fmt}: " + ", ".join(parts))
if gf:
    print("matmul GFLOP/s: " + "; ".join(gf))
EOF
