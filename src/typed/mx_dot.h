// Internal: the MX dot products' operands and block sums (src/typed/mx_dot.cc), shared with the fast
// path over the kernels layer's gemm (src/typed/mx_dot_fast.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "denote/scalar/binary_ops.h"
#include "denote/tensor/mx.h"
#include "kernels/block_gemm.h"

namespace denote::mx_detail {

// A finite element as an integer multiple of 2^quantum (the element format's smallest step).
struct Fixed {
  int64_t value = 0;     // signed
  bool special = false;  // NaN or infinity (FP8 encodings only)
};

int64_t quantum_exp(const MxFormat& f);
Fixed fixed_of(const MxFormat& f, uint8_t code);
// The largest |Fixed::value| of the format's finite codes.
int64_t max_fixed(const MxFormat& f);

// The operands laid out for the products: a row-major [M, K], b transposed to [N, K].
struct Operand {
  std::vector<Fixed> fixed;     // [rows, K]
  std::vector<uint8_t> scales;  // [rows, blocks]
  std::vector<uint8_t> codes;   // [rows, K], for blocks with specials
  int64_t rows = 0, k = 0, blocks = 0;
};
Operand operand_of(const MxTensor& t, bool transposed);

// The operands' formats and block (a and b are read for their formats only: the operands carry the
// codes, so b may be given in either layout).
struct DotSetup {
  const MxTensor& a;
  const MxTensor& b;
  const BinaryFormat& acc;
  int64_t block = 32;
};

// Row ra of a times row rb of b over block bk: exact, rounded once to s.acc (a word of it).
uint64_t block_dot(const DotSetup& s, const Operand& a, const Operand& b, int64_t ra, int64_t rb, int64_t bk,
                   FpEnv& env);

// Hardware binary32 with the binary layer's flags (callers check the MXCSR): a binary32 word's
// value; v rounded to nearest even; acc + x.
float float_of_word(uint64_t w);
float to_binary32(double v, uint32_t& flags);
float add_binary32(float acc, float x, uint32_t& flags);

// The product of prepared operands (mx_matmul after its checks).
MxMatmulResult multiply(const DotSetup& s, const Operand& a, const Operand& b);

// The binary32 product when every block sum is exact in a double (max_fixed(a) max_fixed(b) block <=
// 2^53: every format pair but E5M2 with E5M2 or E4M3): each block's integer products through the
// kernels layer's gemm, scaled, rounded to binary32 and summed in block order, with the same values
// and flags as the word-by-word path. False (nothing written) where it does not apply.
bool mx_matmul_binary32(const DotSetup& s, const Operand& a, const Operand& b, MxMatmulResult& r);

// An operand for the fused kernel (src/kernels/block_gemm.h): each element's integer (the Fixed value) as
// a double, [rows, k], and each block's factor 2^(scale - 127 + quantum), [rows, blocks]; ok false where
// a NaN or infinity code or a NaN scale is present (the general path then). Blocks of `block` elements
// along k, the last one partial.
struct DenseOperand {
  std::vector<double> v, s;
  std::vector<double> t;     // [rows, blocks] with `divisors`: the largest power of two dividing the block's elements
  std::vector<double> norm;  // [rows, blocks] with `divisors`: kernels::block_norms of v
  bool ok = false;
};
DenseOperand dense_of(const MxFormat& f, const uint8_t* codes, const uint8_t* scales, int64_t rows, int64_t k,
                      int64_t block, bool divisors = false);
// Whether the fused kernel's precondition holds for the formats and block: every block sum of element
// products exact in a double (every pair but E5M2 with E5M2 or E4M3 at 32; those take the certified one).
bool fused_applies(const MxFormat& a, const MxFormat& b, int64_t block);
// The same product where block sums may not be exact in a double (kernels::block_gemm_f32_certified; b
// packed with its norms and divisors): an ambiguous block's value comes from block_dot on a_op (or on the operand of
// a_t, made on first use) and b_op; its flags join the result's.
bool mx_certified_binary32(const DotSetup& s, const DenseOperand& a, const Operand* a_op, const MxTensor* a_t, int64_t m,
                           const kernels::BlockPanel& b, const Operand& b_op, MxMatmulResult& r);
// a [m, k] times the packed b by the fused kernel, the values and flags of mx_matmul_binary32; false
// (nothing written) where it does not apply (a special operand, the MXCSR, a tiny or infinite value).
bool mx_fused_binary32(const DenseOperand& a, int64_t m, const kernels::BlockPanel& b, MxMatmulResult& r);

}  // namespace denote::mx_detail
