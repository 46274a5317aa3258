#!/usr/bin/env bash
# The certificate checker stays small enough to read (issue 52, docs/CERTIFICATES.md): src/certify/ and
# include/denote/certify/ under 1,500 lines. (That it includes nothing of bounds/ or verify/ is
# lint.include_cycles's: certify sits right above ir in the declared order.)
set -euo pipefail
root="${1:?usage: certify_budget.sh SOURCE_DIR}"
lines=$(cat "$root"/src/certify/* "$root"/include/denote/certify/* | wc -l)
echo "certificate checker: $lines lines (budget 1500)"
if (( lines > 1500 )); then
  echo "the checker grew past its budget: docs/ARCHITECTURE.md states it"
  exit 1
fi
