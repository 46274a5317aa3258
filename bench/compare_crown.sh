#!/usr/bin/env bash
# Issue 15's benchmark: denote's IBP, CROWN and alpha-CROWN (bench/crown_bench.cc) against auto_LiRPA
# (bench/lirpa_crown.py, ../shared/peers/auto_LiRPA) on ACAS Xu 1_1 (prop_1 and prop_2 boxes, their C)
# and mnistfc 256x2 (prop_0_0.03, C = Y_label - Y_j), one thread each side, f32 (auto_LiRPA: float32
# tensors; denote: bounds that enclose the f32 evaluation and the exact network). The two programs
# alternate --rounds times so that a change of machine load hits both; the table gives medians over all
# rounds, auto_LiRPA's build (BoundedModule) and bound times apart, denote's model load and IbpPrepared
# apart (bound times with and without the prepared model: run_crown prepares it itself otherwise), and the
# load average before and after (docs/PERF.md, "Linear bounds (issue 15)").
#
# Usage: bench/compare_crown.sh [--rounds N] [--repeat R] [--build-dir DIR] [--lirpa DIR]
#   --rounds N       alternations (default 2)      --repeat R   repetitions per round and side (default 5)
#   --build-dir DIR  a Release build with crown_bench (default: build; built if missing)
#   --lirpa DIR      the auto_LiRPA checkout (default: ../shared/peers/auto_LiRPA)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2 repeat=5 build_dir=build lirpa=../shared/peers/auto_LiRPA
while (($# > 0)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --lirpa) lirpa="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "compare_crown: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$build_dir/bin/crown_bench" ]] || cmake --build "$build_dir" --target crown_bench >/dev/null
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load_before=$(cat /proc/loadavg)
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r/$rounds: denote" >&2
  "$build_dir/bin/crown_bench" --benchmark_repetitions="$repeat" --benchmark_out="$out/denote_$r.json" \
    --benchmark_out_format=json >/dev/null 2>"$out/denote_$r.err"
  echo "== round $r/$rounds: auto_LiRPA" >&2
  /usr/bin/python3 bench/lirpa_crown.py --lirpa "$lirpa" --repeat "$repeat" --threads 1 >"$out/lirpa_$r.txt" 2>/dev/null
done
load_after=$(cat /proc/loadavg)
cat "$out/denote_1.err" >&2
/usr/bin/python3 - "$out" "$load_before" "$load_after" <<'PY'
import glob, json, re, statistics, sys
out, before, after = sys.argv[1:4]
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
den = {}
for p in glob.glob(f"{out}/denote_*.json"):
    for b in json.load(open(p))["benchmarks"]:
        if b.get("run_type") == "iteration":
            den.setdefault(b["run_name"], []).append(b["real_time"] * unit[b["time_unit"]])
lir = {}
for p in glob.glob(f"{out}/lirpa_*.txt"):
    for line in open(p):
        m = re.match(r"lirpa row=(\S+) build_s=(\S+) bound_s=(\S+)", line)
        if m:
            lir.setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
def f(s): return f"{s*1e3:.3f} ms" if s < 1 else f"{s:.2f} s"
print(f"load before: {before.strip()}\nload after:  {after.strip()}")
print("| case | method | denote bound | denote bound, prepared | auto_LiRPA bound | ratio | ratio, prepared | denote load + prepare | auto_LiRPA build |")
print("|---|---|---|---|---|---|---|---|---|")
cases = [("acasxu_1_1_prop_1", "acasxu_1_1/prop_1", "acasxu_1_1"), ("acasxu_1_1_prop_2", "acasxu_1_1/prop_2", "acasxu_1_1"),
         ("mnistfc_256x2_prop_0_0.03", "mnistfc/prop_0_0.03", "mnistfc_256x2")]
for dc, lc, net in cases:
    for dm, lm in (("ibp", "IBP"), ("crown", "CROWN"), ("alpha-crown", "alpha-CROWN")):
        d = den.get(f"{dm}/{dc}"); dp = den.get(f"{dm}+prep/{dc}"); l = lir.get(f"{lm}/{lc}")
        ld = den.get(f"load/{net}"); lp = den.get(f"prepare/{net}")
        if not d or not dp or not l:
            print(f"| {dc} | {dm} | missing | missing | missing | | | | |"); continue
        dmed = statistics.median(d); pmed = statistics.median(dp)
        lb = statistics.median(x[1] for x in l); lbuild = statistics.median(x[0] for x in l)
        load = f"{f(statistics.median(ld))} + {f(statistics.median(lp))}" if ld and lp else ""
        print(f"| {dc} | {dm} | {f(dmed)} | {f(pmed)} | {f(lb)} | {lb/dmed:.1f}x | {lb/pmed:.1f}x | {load} | {f(lbuild)} |")
PY
