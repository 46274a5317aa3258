#!/usr/bin/env bash
# Compares denote's generic f32 evaluator with PyTorch on three workloads (ACAS Xu-sized MLP at
# batch 1 and 1024, a small CNN at batch 64) and against the OpenBLAS sgemm rate of this machine.
# Builds the benchmarks (Release), runs bench/eval_bench, bench/sgemm_bench and bench/torch_bench.py
# with the same thread count, keeps the best of --repeat runs of each, and prints a table; then the
# same workloads through a prefer:openblas kernel plan (bench/plan_bench) against PyTorch and against
# the plan's GEMMs alone (docs/PERF.md, "Kernel plan with the openblas provider"); then the compiled
# f32 plan (prepared kernels, fused epilogues, arena, thread pool) at 1 and 2 threads against PyTorch
# at 1 and 2 threads, measured in the same run, and against the GEMMs alone with OpenBLAS on as many
# threads (docs/PERF.md, "Fast f32 plan (issue 19)").
#
# The denote evaluator is single-threaded whatever the thread count; the count applies to PyTorch
# (torch.set_num_threads, OMP_NUM_THREADS) and OpenBLAS (OPENBLAS_NUM_THREADS, sgemm_bench).
#
# Usage: bench/compare_pytorch.sh [--threads N] [--repeat R] [--build-dir DIR] [--no-build]
#                                  [--torch-blas system|reference]
#   --threads N       threads for PyTorch and OpenBLAS (default: nproc)
#   --repeat R        repetitions of every measurement; the best is kept (default: 5)
#   --build-dir DIR   CMake build directory (default: build-bench)
#   --no-build        use the eval_bench, sgemm_bench and plan_bench already built in DIR
#   --torch-blas B    system: the BLAS behind /usr/lib/x86_64-linux-gnu/libblas.so.3 (default);
#                     reference: force Debian's reference BLAS for PyTorch via LD_LIBRARY_PATH
# Needs: scripts/deps.sh --extra (python3-torch), libopenblas-dev, /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=$(nproc)
repeat=5
build_dir=build-bench
torch_blas=system
build=1
while (($# > 0)); do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --torch-blas) torch_blas="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "compare_pytorch: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$torch_blas" in system|reference) ;; *) echo "compare_pytorch: --torch-blas must be system or reference" >&2; exit 2 ;; esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Runs a command with its stderr kept in $out/log (Google Benchmark's context banner); shows it on failure.
quiet() { "$@" 2>"$out/log" || { cat "$out/log" >&2; echo "compare_pytorch: failed: $*" >&2; return 1; }; }

if ((build)); then
  echo "== building eval_bench and sgemm_bench (Release) in $build_dir" >&2
  quiet cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOTE_BUILD_BENCH=ON \
    -DDENOTE_BUILD_TESTS=OFF >"$out/build.log"
  quiet ninja -C "$build_dir" eval_bench sgemm_bench plan_bench >"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
fi
export OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads"

echo "== denote evaluator (single-threaded), $repeat repetitions" >&2
quiet "$build_dir/bin/eval_bench" --benchmark_repetitions="$repeat" --benchmark_out="$out/eval.json" \
  --benchmark_out_format=json >/dev/null
echo "== OpenBLAS sgemm, 1 and $threads threads, $repeat repetitions" >&2
quiet "$build_dir/bin/sgemm_bench" --blas_threads="$threads" --benchmark_filter='sgemm/1024/' \
  --benchmark_repetitions="$repeat" --benchmark_out="$out/sgemm.json" --benchmark_out_format=json >/dev/null
echo "== kernel plan (prefer:openblas, 1 thread) and its GEMMs alone, $repeat repetitions" >&2
echo '{"benchmarks": []}' >"$out/plan.json"
if [[ -x "$build_dir/bin/plan_bench" ]]; then
  quiet "$build_dir/bin/plan_bench" --benchmark_repetitions="$repeat" --benchmark_out="$out/plan.json" \
    --benchmark_out_format=json >/dev/null
fi
echo "== PyTorch, $threads threads, BLAS: $torch_blas" >&2
torch_env=()
if [[ "$torch_blas" == reference ]]; then torch_env=(env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas); fi
quiet "${torch_env[@]}" /usr/bin/python3 bench/torch_bench.py --threads "$threads" --repeat "$repeat" >"$out/torch.txt"
for t in 1 2; do
  echo "== PyTorch, $t thread(s), BLAS: $torch_blas (for the compiled plan table)" >&2
  OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t quiet "${torch_env[@]}" /usr/bin/python3 bench/torch_bench.py \
    --threads "$t" --repeat "$repeat" >"$out/torch$t.txt"
done

blas_lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
[[ "$torch_blas" == reference ]] && blas_lib="/usr/lib/x86_64-linux-gnu/blas (reference, forced)"

/usr/bin/python3 - "$out" "$threads" "$blas_lib" <<'EOF'
import json, sys

out, threads, blas_lib = sys.argv[1], int(sys.argv[2]), sys.argv[3]
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

def best_runs(path):
    """name -> best (smallest real time) iteration entry of a Google Benchmark JSON file."""
    best = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        b["seconds"] = b["real_time"] * unit[b["time_unit"]]
        if name not in best or b["seconds"] < best[name]["seconds"]:
            best[name] = b
    return best

evals = best_runs(f"{out}/eval.json")
sgemm = best_runs(f"{out}/sgemm.json")
torch = {}
for line in open(f"{out}/torch.txt"):
    if line.startswith("torch "):
        fields = dict(kv.split("=") for kv in line.split()[1:])
        torch[fields["workload"]] = float(fields["seconds_per_call"])

def rate(threads):
    b = next((v for k, v in sgemm.items() if k.endswith(f"/threads:{threads}/real_time")), None)
    return b["FLOP/s"] if b else float("nan")

sgemm_n, sgemm_1 = rate(threads), rate(1)

def fmt_time(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"

print(f"PyTorch and OpenBLAS threads: {threads}; denote evaluator: 1 thread; PyTorch BLAS: {blas_lib}")
both = threads != 1  # also show the fraction of the 1-thread rate, the fair bound for a 1-thread evaluator
print(f"OpenBLAS sgemm 1024^3: {sgemm_n / 1e9:.1f} GFLOP/s ({threads} thread{'s' if both else ''})" +
      (f", {sgemm_1 / 1e9:.1f} GFLOP/s (1 thread)" if both else ""))
print()
print("| workload | denote | PyTorch | PyTorch/denote | denote GFLOP/s | denote % of sgemm "
      f"({threads} thr{' / 1 thr' if both else ''}) | PyTorch % of sgemm ({threads} thr) |")
print("|---|---|---|---|---|---|---|")
for name in ("mlp_b1", "mlp_b1024", "cnn_b64"):
    e = evals.get(f"denote/{name}/real_time")
    t = torch.get(name)
    if e is None or t is None:
        print(f"| {name} | missing | missing | | | | |")
        continue
    d, flops = e["seconds"], e["FLOP"]
    fraction = f"{100 * flops / d / sgemm_n:.2f}%" + (f" / {100 * flops / d / sgemm_1:.2f}%" if both else "")
    print(f"| {name} | {fmt_time(d)} | {fmt_time(t)} | {t / d:.2f}x | {flops / d / 1e9:.2f} | {fraction} | "
          f"{100 * flops / t / sgemm_n:.2f}% |")
plans = best_runs(f"{out}/plan.json")
if plans:
    print("\nKernel plan prefer:openblas (bench/plan_bench, OpenBLAS 1 thread) against PyTorch and against "
          "the plan's GEMMs alone:\n")
    print("| workload | plan | PyTorch | PyTorch/plan | GEMMs alone | plan/GEMMs |")
    print("|---|---|---|---|---|---|")
    for name in ("mlp_b1", "mlp_b1024", "cnn_b64"):
        p, g, t = plans.get(f"plan/{name}/real_time"), plans.get(f"gemms/{name}/real_time"), torch.get(name)
        if p is None or g is None or t is None:
            print(f"| {name} | missing | | | | |")
            continue
        print(f"| {name} | {fmt_time(p['seconds'])} | {fmt_time(t)} | {t / p['seconds']:.2f}x | "
              f"{fmt_time(g['seconds'])} | {p['seconds'] / g['seconds']:.2f}x |")
def torch_times(path):
    times = {}
    for line in open(path):
        if line.startswith("torch "):
            fields = dict(kv.split("=") for kv in line.split()[1:])
            times[fields["workload"]] = float(fields["seconds_per_call"])
    return times

if any(k.startswith("compiled/") for k in plans):
    print("\nCompiled f32 plans (bench/plan_bench compiled/<w>/threads:N = prefer:openblas, avx2/<w>/threads:N = "
          "prefer:avx2) against PyTorch on N threads (same run) and the GEMMs alone with OpenBLAS on N threads:\n")
    print("| workload | threads | PyTorch | plan openblas | PyTorch/plan | plan avx2 | PyTorch/plan | GEMMs alone | "
          "GEMMs/best plan |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in (1, 2):
        tt = torch_times(f"{out}/torch{t}.txt")
        for name in ("mlp_b1", "mlp_b1024", "cnn_b64"):
            p = plans.get(f"compiled/{name}/threads:{t}/real_time")
            a = plans.get(f"avx2/{name}/threads:{t}/real_time")
            g = plans.get(f"gemms/{name}/threads:{t}/real_time")
            if p is None or g is None or name not in tt:
                print(f"| {name} | {t} | missing | | | | | | |")
                continue
            best = min(p["seconds"], a["seconds"]) if a else p["seconds"]
            av = f"{fmt_time(a['seconds'])} | {tt[name] / a['seconds']:.2f}x" if a else "n/a | "
            print(f"| {name} | {t} | {fmt_time(tt[name])} | {fmt_time(p['seconds'])} | {tt[name] / p['seconds']:.2f}x | "
                  f"{av} | {fmt_time(g['seconds'])} | {100 * g['seconds'] / best:.0f}% |")
extra = evals.get("denote_all/mlp_b1/real_time")
if extra:
    print(f"\ndenote_all (whole value table) at batch 1: {fmt_time(extra['seconds'])} per call")
EOF
