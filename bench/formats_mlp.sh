#!/usr/bin/env bash
# The bfloat16 MNIST MLP against the same network in f32, per call, with `denote bench` (issue 20).
#
# Usage: bench/formats_mlp.sh [--build-dir DIR] [--batch N] [--repeat N] [--rounds N]
#
# The network is ../shared/data/mnistfc/mnist-net_256x2.onnx (784-256-256-10, trained weights),
# written at batch N (default 256) by bench/mnist_mlp_json.py with N seeded uniform [0, 1) images.
# First checks that the batch-1 document computes what the ONNX file computes (f64, every output,
# exactly), then times `denote bench` in rounds alternating the arithmetics, without --provider
# (the evaluator, `denote bench`'s default): f32, bfloat16 on 1 and 2 threads, binary16, e4m3fn.
# Prints the best min over the rounds (the medians in brackets), the ratios and the load average.
# Needs: a Release build (bin/denote), /usr/bin/python3 with python3-onnx and numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build batch=256 repeat=5 rounds=3
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "formats_mlp.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
denote=$build_dir/bin/denote
onnx=../shared/data/mnistfc/mnist-net_256x2.onnx
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

/usr/bin/python3 bench/mnist_mlp_json.py "$onnx" 1 "$out/mlp1.json" "$out/x1.npy"
/usr/bin/python3 bench/mnist_mlp_json.py "$onnx" "$batch" "$out/mlp.json" "$out/x.npy"
/usr/bin/python3 - "$out" <<'PY'
import numpy as np, sys
out = sys.argv[1]
np.save(f"{out}/x1_onnx.npy", np.load(f"{out}/x1.npy").reshape(1, 784, 1))
PY
"$denote" run "$onnx" --input "@$out/x1_onnx.npy" --json >"$out/onnx.json"
"$denote" run "$out/mlp1.json" --input "@$out/x1.npy" --json >"$out/doc.json"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def values(path):
    d = json.load(open(path))
    return [v for o in d["outputs"] for v in o["values"]]
a, b = values(f"{out}/onnx.json"), values(f"{out}/doc.json")
if a != b:
    sys.exit(f"formats_mlp: the batch-1 document differs from the ONNX file: {a} vs {b}")
PY

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; ++r)); do
  for cfg in "f32 1" "bfloat16 1" "bfloat16 2" "binary16 1" "e4m3fn 1"; do
    read -r arith threads <<<"$cfg"
    "$denote" bench "$out/mlp.json" --input "@$out/x.npy" --arith "$arith" --threads "$threads" --repeat "$repeat" \
      --json >>"$out/times_${arith}_$threads.jsonl"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

/usr/bin/python3 - "$out" "$batch" "$load_before" "$load_after" <<'PY'
import json, sys
out, batch, before, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
macs = batch * (784 * 256 + 256 * 256 + 256 * 10)
def best(name):
    rows = [json.loads(l) for l in open(f"{out}/times_{name}.jsonl")]
    return min(r["min_s"] for r in rows), min(r["median_s"] for r in rows)
f32 = best("f32_1")
print(f"mnistfc 784-256-256-10, batch {batch}, denote bench (evaluator), best min of the rounds [median]")
print(f"load average before: {before}; after: {after}")
print("| arith | threads | per call | ns per multiply-add | / f32 |")
print("|---|---|---|---|---|")
for name, label in (("f32_1", "f32 | 1"), ("bfloat16_1", "bfloat16 | 1"), ("bfloat16_2", "bfloat16 | 2"),
                    ("binary16_1", "binary16 | 1"), ("e4m3fn_1", "e4m3fn | 1")):
    t, med = best(name)
    print(f"| {label} | {t * 1e3:.2f} ms [{med * 1e3:.2f}] | {t / macs * 1e9:.2f} | {t / f32[0]:.1f}x |")
PY
