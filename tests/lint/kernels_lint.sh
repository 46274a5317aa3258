#!/usr/bin/env bash
# Lint (issue 49 part 3, docs/ARCHITECTURE.md "Kernels"): kernels live in one layer. Outside src/kernels/
# and the allow-list below, no file in src/ or tools/ may
#   - include <immintrin.h> or name a vector type (__m256, __m512, ...): SIMD intrinsics,
#   - include <cblas.h>, call cblas_* or test DENOTE_HAVE_OPENBLAS: BLAS,
# so every vectorised or BLAS-backed kernel follows the one level switch (base/cpu.h) and is covered
# by the differential test over every level (tests/unit/kernels_test.cc).
# Usage: kernels_lint.sh SOURCE_DIR
set -euo pipefail
root="${1:?usage: kernels_lint.sh SOURCE_DIR}"
cd "$root"

# Files allowed intrinsics or BLAS outside src/kernels/, each with its reason.
allow=(
  src/scalar/binary_fast_simd.cc            # the exact binary formats' lanes: they compute the formats of
  src/scalar/binary_fast_simd_small.cc      # src/scalar/ bit for bit (rounding, flags), above the kernels
  src/scalar/binary_fast_simd_fold.cc       # layer in the order; they follow the same level switch
  src/scalar/binary_fast_simd_fold_small.cc
  src/base/thread_pool.cc                   # _mm_pause in the pool's spin wait, not a kernel
  src/providers/openblas.cc                 # the openblas provider exists only with BLAS (its whole file
  src/providers/openblas_prepared.cc        # is under DENOTE_HAVE_OPENBLAS); its calls go through kernels/blas.h
)

status=0
pattern='#[[:space:]]*include[[:space:]]*<(immintrin|x86intrin|cblas)\.h>|__m(128|256|512)[di]?\b|\bcblas_[a-z]|DENOTE_HAVE_OPENBLAS'
while IFS= read -r hit; do
  file="${hit%%:*}"
  [[ "$file" == src/kernels/* ]] && continue
  ok=0
  for a in "${allow[@]}"; do [[ "$file" == "$a" ]] && ok=1; done
  [[ $ok -eq 1 ]] && continue
  echo "kernel outside the kernels layer: $hit"
  status=1
done < <(grep -rnE "$pattern" src tools --include='*.cc' --include='*.h' --include='*.inc' || true)

if [[ $status -ne 0 ]]; then
  echo "move the loop into src/kernels/ (docs/ARCHITECTURE.md, \"Adding a kernel\") and call it from there"
fi
exit $status
