#!/usr/bin/env bash
# Issue 14's gradient benchmark: denote's vjp (bench/grad_bench.cc) against torch.autograd
# (bench/torch_grad_bench.py) on the ACAS Xu network, an ACAS Xu-size MLP at batch 1 and 1024, the
# MNIST network (batch 1) and an MNIST-size MLP at batch 1024, f32 and f64, one thread each side.
# Builds grad_bench (Release) unless --no-build, dumps its networks and f64 gradients
# (grad_bench --dump) so that PyTorch runs the same weights and inputs and checks its gradients
# against denote's first, then alternates the two programs --rounds times (so that a change of
# machine load hits both sides alike) and prints one side-by-side table of median per-call times
# over all rounds, with the load average before and after (docs/PERF.md, "Gradients (issue 14)").
#
# grad_x_blas / grad_p_blas are denote with --kernels openblas (linear nodes as gemms), compared
# with the same PyTorch rows. A second table puts each batch-1 gradient next to its memory traffic floor
# (grad_bench's traffic rows) and the time the 10x goal asks for.
# Goals (issue 14): grad rows at batch 1 >= 10x faster than PyTorch; at batch 1024 at least as fast.
#
# Usage: bench/compare_grad.sh [--rounds N] [--repeat R] [--build-dir DIR] [--no-build] [--jobs J]
#   --rounds N       alternations of denote and PyTorch (default 3)
#   --repeat R       repetitions of every row per round on each side (default 5)
#   --build-dir DIR  CMake build directory (default: build-bench)
#   --no-build       use the grad_bench already built in DIR
#   --jobs J         parallel build jobs (default 2)
# Environment: OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 are exported (PyTorch: set_num_threads(1)).
# Needs: libbenchmark-dev, python3-torch and python3-onnx (Debian's /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
repeat=5
build_dir=build-bench
build=1
jobs=2
while (($# > 0)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "compare_grad: unknown argument: $1" >&2; exit 2 ;;
  esac
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
quiet() { "$@" 2>"$out/log" || { cat "$out/log" >&2; echo "compare_grad: failed: $*" >&2; return 1; }; }

if ((build)); then
  echo "== building grad_bench (Release) in $build_dir" >&2
  quiet cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOTE_BUILD_BENCH=ON \
    -DDENOTE_BUILD_TESTS=OFF >"$out/build.log"
  quiet cmake --build "$build_dir" -j "$jobs" --target grad_bench >"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
fi
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

load_before=$(uptime)
echo "== grad_bench --dump (networks, inputs, f64 gradients for the PyTorch side)" >&2
quiet "$build_dir/bin/grad_bench" --dump "$out/data" >/dev/null
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r/$rounds: denote ($repeat repetitions; $(uptime | sed 's/.*load/load/'))" >&2
  quiet "$build_dir/bin/grad_bench" --benchmark_repetitions="$repeat" --benchmark_out="$out/denote_$r.json" \
    --benchmark_out_format=json >/dev/null
  echo "== round $r/$rounds: PyTorch ($repeat blocks; $(uptime | sed 's/.*load/load/'))" >&2
  quiet /usr/bin/python3 bench/torch_grad_bench.py --data "$out/data" --threads 1 --repeat "$repeat" \
    >"$out/torch_$r.txt"
done
load_after=$(uptime)

blas_lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
/usr/bin/python3 - "$out" "$rounds" "$blas_lib" "$cpu" "$load_before" "$load_after" <<'EOF'
import glob, json, statistics, sys

out, rounds, blas_lib, cpu, load_before, load_after = sys.argv[1:7]
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

denote = {}  # row -> per-repetition seconds, all rounds
for path in sorted(glob.glob(f"{out}/denote_*.json")):
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        row = b.get("run_name", b["name"]).removesuffix("/real_time")
        denote.setdefault(row, []).append(b["real_time"] * unit[b["time_unit"]])
torch = {}
torch_banner = "torch: no banner"
checks = []
for path in sorted(glob.glob(f"{out}/torch_*.txt")):
    for line in open(path):
        if line.startswith("torch "):
            f = dict(kv.split("=", 1) for kv in line.split()[1:])
            torch.setdefault(f["row"], []).append(float(f["median"]))
        elif line.startswith("# check") and path.endswith("_1.txt"):
            checks.append(line[2:].strip())
        elif line.startswith("# torch") and path.endswith("_1.txt"):
            torch_banner = line[2:].strip()

def fmt(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"

print(f"CPU: {cpu}; denote: 1 thread; {torch_banner}; PyTorch BLAS: {blas_lib}")
print(f"load before: {load_before.strip()}")
print(f"load after:  {load_after.strip()}")
print(f"medians over {rounds} rounds; ratio = PyTorch / denote (above 1: denote faster)")
for c in checks:
    print(f"  {c}")
print()
print("| network | dtype | row | denote | PyTorch | ratio | goal | denote row/forward | PyTorch row/forward |")
print("|---|---|---|---|---|---|---|---|---|")
nets = ["acasxu_onnx_b1", "acas_b1", "acas_b1024", "mnist_onnx_b1", "mnist_b1024"]
for net in nets:
    for tag in ("f32", "f64"):
        fd = denote.get(f"forward/{net}/{tag}")
        ft = torch.get(f"forward/{net}/{tag}")
        for kind in ("forward", "grad_x", "grad_p", "grad_x_blas", "grad_p_blas"):
            row = f"{kind}/{net}/{tag}"
            d, t = denote.get(row), torch.get(row.replace("_blas", ""))
            if kind.endswith("_blas") and not d:
                continue  # a build without OpenBLAS
            if not d or not t:
                print(f"| {net} | {tag} | {kind} | missing | missing | | | | |")
                continue
            dm, tm = statistics.median(d), statistics.median(t)
            ratio = tm / dm
            goal = ""
            if kind != "forward":
                target = 1.0 if net.endswith("b1024") else 10.0
                goal = f"{'met' if ratio >= target else 'missed'} (>= {target:g}x)"
            rel_d = f"{dm / statistics.median(fd):.2f}" if fd else ""
            rel_t = f"{tm / statistics.median(ft):.2f}" if ft else ""
            print(f"| {net} | {tag} | {kind} | {fmt(dm)} | {fmt(tm)} | {ratio:.2f}x | {goal} | {rel_d} | {rel_t} |")

# Batch 1: the memory traffic floor (grad_bench's traffic_x / traffic_p rows: the weights read twice, and
# for grad_p the weight gradients written, nothing computed) against the time the 10x goal asks for.
print()
print("| network | dtype | row | denote | traffic floor | PyTorch / 10 (the goal) | the goal against the floor |")
print("|---|---|---|---|---|---|---|")
for net in nets:
    for tag in ("f32", "f64"):
        for kind in ("grad_x", "grad_p"):
            row = f"{kind}/{net}/{tag}"
            d, t = denote.get(row), torch.get(row)
            f = denote.get(row.replace("grad_", "traffic_"))
            if not d or not t or not f:
                continue
            dm, tm, fm = statistics.median(d), statistics.median(t), statistics.median(f)
            where = "below the floor" if tm / 10 < fm else "above the floor"
            print(f"| {net} | {tag} | {kind} | {fmt(dm)} | {fmt(fm)} | {fmt(tm / 10)} | {where} ({tm / 10 / fm:.2f}x the floor) |")
EOF
