// Internal: what a kernels file with per-ISA copies (isa_copies.inc) includes first: the intrinsics, the
// target attributes of the AVX-512 and AVX2+FMA copies, and GCC 12's false warnings inside
// avx512fintrin.h (_mm512_undefined_pd in cvtps_pd / reduce_add_pd) silenced for the file.
#pragma once

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

#define DENOTE_T512 __attribute__((target("avx512f")))
#define DENOTE_T256 __attribute__((target("avx2,fma")))
