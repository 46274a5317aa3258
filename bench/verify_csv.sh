#!/usr/bin/env bash
# The verification benchmarks of docs/PERF.md: `denote verify --instances` on ACAS Xu (186 instances) and on
# the mnistfc instances whose network ../shared/data holds (256x2: 30), with the CSVs' timeouts or a cap, two
# jobs on the two cores, the machine load written before and after.
# verivital (VNN-COMP 2021: 60 instances, two MNIST CNNs, avg-pool and max-pool) and eran (72 instances: a
# 9x200 relu MLP and a 6x200 sigmoid MLP, both behind (x - mean) / std) on request.
# Usage: bench/verify_csv.sh [acasxu|mnistfc|verivital|eran|both] [--cap SECONDS] [-- extra denote verify options]
#   bench/verify_csv.sh mnistfc --cap 10 -- --beta-iters 20
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-both}
shift || true
cap=""
if [[ "${1:-}" == "--cap" ]]; then cap=$2; shift 2; fi
if [[ "${1:-}" == "--" ]]; then shift; fi
data=${DENOTE_DATA:-../shared/data}
out=${DENOTE_BENCH_OUT:-/tmp/denote_verify_bench}
mkdir -p "$out"

run() {  # name csv root
  local name=$1 csv=$2 root=$3 tmp="$out/$1.csv"
  shift 3
  : > "$tmp"
  while IFS=, read -r onnx prop timeout; do
    [[ -f "$root/$onnx" ]] || continue
    [[ -n "$cap" ]] && timeout=$(awk -v t="$timeout" -v c="$cap" 'BEGIN { print (t < c ? t : c) }')
    echo "$onnx,$prop,$timeout" >> "$tmp"
  done < "$csv"
  echo "== $name: $(wc -l < "$tmp") instances, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  build/bin/denote verify --instances "$tmp" --root "$root" --jobs 2 --out "$out/$name.results.csv" "$@" | tail -8
  echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg); results in $out/$name.results.csv"
}

[[ "$which" == acasxu || "$which" == both ]] && run acasxu "$data/acasxu/acasxu_instances.csv" "$data/acasxu" "$@"
[[ "$which" == mnistfc || "$which" == both ]] && run mnistfc "$data/mnistfc/mnistfc_instances.csv" "$data/mnistfc" "$@"
[[ "$which" == verivital ]] && run verivital "$data/vnncomp2021/verivital/verivital_instances.csv" \
  "$data/vnncomp2021/verivital" "$@"
[[ "$which" == eran ]] && run eran "$data/vnncomp2021/eran/eran_instances.csv" "$data/vnncomp2021/eran" "$@"
exit 0
