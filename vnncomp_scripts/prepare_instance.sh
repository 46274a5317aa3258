#!/usr/bin/env bash
# VNN-COMP tool script: prepare_instance.sh v1 CATEGORY ONNX VNNLIB
# Run before each instance, outside its timeout: stops the denote verify an earlier run_instance.sh left
# running (its process id is kept in $DENOTE_VNNCOMP_STATE, default ${TMPDIR:-/tmp}/denote-vnncomp), then loads the network and the property (`denote check`, `denote verify --check-only`), so that a file
# denote cannot read fails here (exit 1) instead of inside the timed run. The category is not used: denote
# picks its search from the network and the property.
set -uo pipefail
if [ "$#" -ne 4 ] || [ "$1" != "v1" ]; then
  echo "usage: prepare_instance.sh v1 CATEGORY ONNX VNNLIB (got: $*)" >&2
  exit 1
fi
onnx=$3 vnnlib=$4
here=$(cd "$(dirname "$0")/.." && pwd)
cli=${DENOTE_CLI:-$here/build/bin/denote}
state=${DENOTE_VNNCOMP_STATE:-${TMPDIR:-/tmp}/denote-vnncomp}
if [ -f "$state/run.pid" ]; then
  pid=$(cat "$state/run.pid")
  if [ -n "$pid" ] && grep -q denote "/proc/$pid/cmdline" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$state/run.pid"
fi
for f in "$onnx" "$vnnlib"; do
  if [ ! -r "$f" ]; then
    echo "prepare_instance.sh: $f: not a readable file" >&2
    exit 1
  fi
done
exec "$cli" verify "$onnx" "$vnnlib" --check-only
