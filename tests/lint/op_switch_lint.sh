#!/usr/bin/env bash
# Lint (issue 12, issue 49, DESIGN.md section 3): per-op facts live in include/denote/ir/ops.def or in
# tables generated from it, so outside the allow-lists
#   - no `case Op::` label may appear in src/ or tools/, and
#   - no comparison of an op with a named op (`op == Op::X`, `Op::X != op`, `if constexpr (O == Op::X)`)
#     may appear in src/ or tools/, except with Op::Input and Op::Const (a graph input or a constant: the
#     node's role in the graph, not a fact about an op).
# Ask ops.def's flags instead (op.h: keeps_order, is_affine, is_relaxed, splits_at_zero, ...), or write a
# table of specialisations over ops.def (`kRule<Op::Linear> = &rule_linear`, src/bounds/kernel_ops.h).
# Usage: op_switch_lint.sh SOURCE_DIR
set -euo pipefail
root="${1:?usage: op_switch_lint.sh SOURCE_DIR}"
cd "$root"

# Files allowed a switch over Op (a new entry needs its reason next to it).
allow_switch=(
  src/certify/cert_net.cc          # the certificate checker names the few ops it covers, on purpose: its trust
                                   # base is the op's meaning, not the bound engine's facts in the table
)
# Files and folders allowed to compare ops by name, each with its reason.
allow_compare=(
  src/io/                          # readers and writers map file formats' operators to ops, by name
  tools/denote/cmd_demo.cc         # a builder: the demo's cases name the op they build
  src/scalar/binary_fast_simd.cc   # fastsimd::Op (add, sub, mul of the SIMD kernels), not the graph's Op
  src/scalar/binary_fast_simd_small.cc  # the same fastsimd::Op
  src/certify/cert_net.cc          # the certificate checker's own list of covered ops (as allow_switch)
)

allowed() {
  local file="$1"; shift
  local a
  for a in "$@"; do
    [[ -z "$a" ]] && continue
    if [[ "$a" == */ ]]; then [[ "$file" == "$a"* ]] && return 0; else [[ "$file" == "$a" ]] && return 0; fi
  done
  return 1
}

status=0
while IFS= read -r hit; do
  file="${hit%%:*}"
  if ! allowed "$file" "${allow_switch[@]+"${allow_switch[@]}"}"; then
    echo "op table bypassed (switch): $hit"
    status=1
  fi
done < <(grep -rnE 'case[[:space:]]+(denote::)?Op::' src tools --include='*.cc' --include='*.h' || true)

compare='(==|!=)[[:space:]]*(denote::)?Op::[A-Za-z0-9_]+|(denote::)?Op::[A-Za-z0-9_]+[[:space:]]*(==|!=)'
while IFS= read -r hit; do
  file="${hit%%:*}"
  allowed "$file" "${allow_compare[@]}" && continue
  # Every comparison on the line must be with Op::Input or Op::Const.
  rest=$(grep -oE "$compare" <<<"${hit#*:*:}" | grep -vE 'Op::(Input|Const)$|^(denote::)?Op::(Input|Const)[[:space:]]*(==|!=)' || true)
  if [[ -n "$rest" ]]; then
    echo "op table bypassed (comparison): $hit"
    status=1
  fi
done < <(grep -rnE "$compare" src tools --include='*.cc' --include='*.h' || true)

if [[ $status -ne 0 ]]; then
  echo "dispatch over ops through a table generated from include/denote/ir/ops.def (see DESIGN.md section 3)"
fi
exit $status
