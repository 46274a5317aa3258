#!/usr/bin/env bash
# VNN-COMP tool script: run_instance.sh v1 CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT
# Decides the instance with `denote verify` (one process, every core) within TIMEOUT seconds and writes
# RESULTS_FILE in VNN-COMP's format: the first line sat, unsat, unknown or timeout; for sat the witness
# follows, ((X_0 v) ... (Y_0 v) ...), each value with 17 significant digits, checked by denote against the
# exact real network or the network's f32 evaluation before it is written (docs/VERIFY.md). A run that
# fails (a file that does not load) writes `error`.
set -uo pipefail
if [ "$#" -ne 6 ] || [ "$1" != "v1" ]; then
  echo "usage: run_instance.sh v1 CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT (got: $*)" >&2
  exit 1
fi
onnx=$3 vnnlib=$4 results=$5 timeout=$6
here=$(cd "$(dirname "$0")/.." && pwd)
cli=${DENOTE_CLI:-$here/build/bin/denote}
state=${DENOTE_VNNCOMP_STATE:-${TMPDIR:-/tmp}/denote-vnncomp}
mkdir -p "$state"
rm -f "$results"
"$cli" verify "$onnx" "$vnnlib" --timeout "$timeout" --out "$results" &
pid=$!
echo "$pid" > "$state/run.pid"  # prepare_instance.sh stops it if it outlives this script
wait "$pid"
rc=$?
rm -f "$state/run.pid"
if [ "$rc" -ne 0 ] || [ ! -s "$results" ]; then
  echo "error" > "$results"
  exit 1
fi
