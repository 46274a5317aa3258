#!/usr/bin/env bash
# Peak memory (RSS) and time of `denote bounds --method crown` on a convolutional network under several
# --max-memory budgets (issue 47: CROWN's coefficient matrices count in the budget; intermediate bounds
# run their rows in chunks that fit). Default network: VNN-COMP 2021 verivital Convnet_avgpool (1x28x28
# input, conv -> relu -> avg_pool -> gemm), centre 0.5, eps 0.02 (a verivital-sized box).
# Usage: bench/crown_memory.sh [MODEL.onnx] [EPS] [BUDGET...]   (run from the repository root after a
# release build; prints one line per budget: budget, exit code, peak RSS, wall seconds, the bounds' width)
set -euo pipefail
model=${1:-../shared/data/vnncomp2021/verivital/Convnet_avgpool.onnx}
eps=${2:-0.02}
shift $(( $# > 2 ? 2 : $# ))
budgets=("$@")
((${#budgets[@]})) || budgets=(auto 1G 256M 64M)
cli=build/bin/denote
py=${PYTHON:-/usr/bin/python3}  # Debian's, with onnx and numpy (scripts/deps.sh)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shape=$("$py" -c "
import onnx, sys
m = onnx.load(sys.argv[1])
init = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in init][0]
print(','.join(str(d.dim_value) for d in x.type.tensor_type.shape.dim))" "$model")
"$py" -c "
import numpy as np, sys
np.save(sys.argv[1], np.full([int(d) for d in sys.argv[2].split(',')], 0.5))" "$tmp/x.npy" "$shape"
echo "model $model input [$shape] eps $eps; $(lscpu | grep 'Model name' | sed 's/  */ /g'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${budgets[@]}"; do
  rc=0
  /usr/bin/time -f "%M %e" -o "$tmp/time" "$cli" bounds "$model" --center @"$tmp/x.npy" --eps "$eps" \
    --method crown --max-memory "$b" > "$tmp/out" 2> "$tmp/err" || rc=$?
  read -r kb secs < <(tail -1 "$tmp/time")
  width=$("$py" -c "
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r'\[(.*?)\] \.\. \[(.*?)\]', t)
print('%.6f' % max(float(h) - float(l) for l, h in zip(m.group(1).split(','), m.group(2).split(','))) if m else '-')" "$tmp/out")
  echo "budget $b: exit $rc, peak RSS $((kb / 1024)) MB, $secs s, widest output bound $width $(head -c 200 "$tmp/err" | tr '\n' ' ')"
done
