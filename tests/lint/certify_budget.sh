#!/usr/bin/env bash
# The certificate checker stays small enough to read (issue 52, docs/CERTIFICATES.md): src/certify/ and
# include/denote/certify/ under 1,650 lines
# (1,500 for the real network; the f32 evaluation's error terms took about 90 more, avg-pool 25). (That it includes nothing of bounds/ or verify/ is
# lint.include_cycles's: certify sits right above ir in the declared order.)
set -euo pipefail
root="${1:?usage: certify_budget.sh SOURCE_DIR}"
lines=$(cat "$root"/src/certify/* "$root"/include/denote/certify/* | wc -l)
echo "certificate checker: $lines lines (budget 1650)"
if (( lines > 1650 )); then
  echo "the checker grew past its budget: docs/ARCHITECTURE.md states it"
  exit 1
fi
