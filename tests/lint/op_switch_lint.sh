#!/usr/bin/env bash
# Lint (issue 12, DESIGN.md section 3): per-op facts live in include/denote/ir/ops.def or in tables
# generated from it, so no `case Op::` label may appear in src/ or tools/ outside the allow-list.
# Usage: op_switch_lint.sh SOURCE_DIR
set -euo pipefail
root="${1:?usage: op_switch_lint.sh SOURCE_DIR}"
cd "$root"

# Files allowed a switch over Op (none today; a new entry needs its reason next to it).
allow=()

status=0
while IFS= read -r hit; do
  file="${hit%%:*}"
  allowed=0
  for a in "${allow[@]+"${allow[@]}"}"; do [[ "$file" == "$a" ]] && allowed=1; done
  if [[ $allowed -eq 0 ]]; then
    echo "op table bypassed: $hit"
    status=1
  fi
done < <(grep -rnE 'case[[:space:]]+(denote::)?Op::' src tools --include='*.cc' --include='*.h' || true)

if [[ $status -ne 0 ]]; then
  echo "dispatch over ops through a table generated from include/denote/ir/ops.def (see DESIGN.md section 3)"
fi
exit $status
