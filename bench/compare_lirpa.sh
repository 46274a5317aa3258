#!/usr/bin/env bash
# Interval bound propagation: denote's run_ibp (bench/ibp_bench.cc) on an ACAS Xu-sized and an
# MNIST-sized ReLU MLP, against auto_LiRPA's IBP on the same networks when a checkout is given.
# Builds ibp_bench (Release), runs it with --repeat repetitions (best kept) and prints a table.
# With --lirpa DIR it also exports the networks (ibp_bench --dump), runs bench/lirpa_ibp.py with
# Debian's /usr/bin/python3 (python3-torch) and auto_LiRPA from DIR, and prints the measured time
# ratio and the largest bound difference. Without --lirpa it compares only with the published
# reference (auto_LiRPA 0.7.1 on this machine class: ~2 ms to build + ~2 ms IBP, ACAS Xu network).
#
# Usage: bench/compare_lirpa.sh [--lirpa DIR] [--repeat R] [--threads N] [--build-dir DIR] [--no-build]
#   --lirpa DIR       an auto_LiRPA checkout (the directory that holds the auto_LiRPA package)
#   --repeat R        repetitions of every measurement; the best is kept (default: 3)
#   --threads N       PyTorch threads for auto_LiRPA (default: 1; denote is single-threaded)
#   --build-dir DIR   CMake build directory (default: build-bench)
#   --no-build        use the ibp_bench already built in DIR
set -euo pipefail
cd "$(dirname "$0")/.."

lirpa=""
repeat=3
threads=1
build_dir=build-bench
build=1
while (($# > 0)); do
  case "$1" in
    --lirpa) lirpa="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "compare_lirpa: unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -n "$lirpa" && ! -d "$lirpa/auto_LiRPA" ]]; then
  echo "compare_lirpa: $lirpa has no auto_LiRPA package directory" >&2
  exit 2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
quiet() { "$@" 2>"$out/log" || { cat "$out/log" >&2; echo "compare_lirpa: failed: $*" >&2; return 1; }; }

if ((build)); then
  echo "== building ibp_bench (Release) in $build_dir" >&2
  quiet cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOTE_BUILD_BENCH=ON \
    -DDENOTE_BUILD_TESTS=OFF >"$out/build.log"
  quiet ninja -C "$build_dir" ibp_bench >"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
fi

echo "== denote run_ibp (single-threaded), $repeat repetitions; load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
quiet "$build_dir/bin/ibp_bench" --benchmark_repetitions="$repeat" --benchmark_out="$out/ibp.json" \
  --benchmark_out_format=json >/dev/null
grep '^ibp_bench:' "$out/log" >&2 || true   # the containment checks

: >"$out/lirpa.txt"
if [[ -n "$lirpa" ]]; then
  echo "== exporting the networks; auto_LiRPA from $lirpa, $threads PyTorch thread(s)" >&2
  quiet "$build_dir/bin/ibp_bench" --dump "$out/nets"
  export OMP_NUM_THREADS="$threads"
  quiet /usr/bin/python3 bench/lirpa_ibp.py --lirpa "$lirpa" --data "$out/nets" --repeat "$repeat" \
    --threads "$threads" >"$out/lirpa.txt"
else
  echo "== auto_LiRPA was not given (--lirpa DIR): only denote's numbers, compared with the published reference" >&2
fi

/usr/bin/python3 - "$out" <<'EOF'
import json, sys

out = sys.argv[1]
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
PUBLISHED = {"acas": {"build": 2e-3, "ibp": 2e-3}}  # auto_LiRPA 0.7.1, the issue's reference
GOAL = 20.0  # >= 20x faster than auto_LiRPA IBP

best = {}
for b in json.load(open(f"{out}/ibp.json"))["benchmarks"]:
    if b.get("run_type") != "iteration" or b.get("error_occurred"):
        continue
    name = b.get("run_name", b["name"]).removesuffix("/real_time")
    s = b["real_time"] * unit[b["time_unit"]]
    best[name] = min(best.get(name, s), s)

lirpa = {}
for line in open(f"{out}/lirpa.txt"):
    if line.startswith("lirpa "):
        fields = dict(kv.split("=", 1) for kv in line.split()[1:])
        lirpa[fields["net"]] = fields
    elif line.startswith("lirpa_info "):
        print("auto_LiRPA run:", line.split(" ", 1)[1].strip())

def t(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"

print("denote: single-threaded, best of the repetitions; time per propagation (whole graph, every node's box)")
header = "| net | run | denote | denote / f32 forward | published auto_LiRPA IBP (2 ms) / denote |"
if lirpa:
    header += " auto_LiRPA IBP (measured) | auto_LiRPA / denote | max bound diff |"
print(header)
print("|" + "---|" * (header.count("|") - 1))
for net in ("acas", "mnist"):
    fwd = best.get(f"forward/{net}/f32")
    for run in ("ibp/{}/f64", "ibp/{}/f32", "ibp/{}/bfloat16", "ibp_double/{}/f32", "forward/{}/f32"):
        key = run.format(net)
        s = best.get(key)
        if s is None:
            print(f"| {net} | {key} | missing | | |")
            continue
        rel = f"{s / fwd:.0f}x" if fwd and not key.startswith("forward") else "-"
        pub = PUBLISHED.get(net)
        vs = f"{pub['ibp'] / s:.3g}x" if pub and not key.startswith("forward") else "-"
        row = f"| {net} | {key} | {t(s)} | {rel} | {vs} |"
        if lirpa:
            l = lirpa.get(net)
            if l and key.startswith("ibp"):
                ls = float(l["ibp_s"])
                diff = l["diff_f64"] if key.endswith("f64") else l["diff_f32"] if key.endswith("f32") else "-"
                row += f" {t(ls)} | {ls / s:.3g}x | {diff} |"
            else:
                row += " - | - | - |"
        print(row)
print()
for net, p in PUBLISHED.items():
    s = best.get(f"ibp/{net}/f32")
    if s:
        print(f"published reference ({net}): auto_LiRPA 0.7.1 ~{t(p['build'])} build + ~{t(p['ibp'])} IBP; "
              f"goal >= {GOAL:.0f}x faster: <= {t(p['ibp'] / GOAL)} per IBP; denote f32 now {t(s)} "
              f"({p['ibp'] / s:.3g}x; missing factor {GOAL * s / p['ibp']:.1f}x) [against the published number, "
              "not measured side by side]")
for net, l in lirpa.items():
    print(f"measured auto_LiRPA ({net}): build {t(float(l['build_s']))}, IBP {t(float(l['ibp_s']))}, "
          f"output width {l['lirpa_width']}")
EOF
