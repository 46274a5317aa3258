// Internal: the fast conv fold of the exact binary formats (issue 20), next to fast_matmul and
// fast_linear (binary_fast.h) in binary_fast_fold.cc. The evaluator's conv rule (src/ops/window_eval.h)
// folds, for each output (l, o, p): acc = +0; for ic in the group's input channels, for each tap t of
// position p in its order, acc = add(acc, mul(x[l, c0 + ic, t.in], w[o, ic, t.k])); then add(acc, b[o]).
// FastConv gives the same words and flags, folding kLanes output channels at once (kLanes outputs of
// any channels where groups have fewer than kLanes / 2 output channels, e.g. depthwise). The caller (the
// evaluator, src/eval/eval_binary.cc) enumerates the window's taps and hands them over position by
// position; `prepare` says false when an operand is NaN, infinite or malformed, and the caller then
// uses the op table's rule (errors and NaN payloads in its order).
//
//   FastConv conv;
//   FastConvScratch scratch;  // one per thread: `position` is const, positions are independent
//   if (conv.prepare(ff, x, w, bias, dims))
//     for each output position p: conv.position(env, taps, n_taps, p, out_vol, out, scratch);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "denote/scalar/binary_fast.h"

namespace denote {

// One tap of a window: flat kernel position and flat offset into an input channel's spatial block.
struct ConvTap {
  int64_t k;
  int64_t in;
};

// x is [lead, cin, in_vol], w is [cout, cin / groups, k_vol], bias is [cout]; out is [lead, cout, out_vol].
struct FastConvDims {
  int64_t lead = 0, cin = 0, cout = 0, groups = 1, in_vol = 0, k_vol = 0;
};

// The steps (ic, tap) of one (l, group) of a position: x value, x index, weight row (gather: the x
// and w offsets from a lane's first element, in xi and k).
struct FastConvScratch {
  std::vector<double> x;
  std::vector<float> x32;  // x as binary32, for the binary32 lanes (fastsimd::rne_conv_blocks)
  std::vector<int64_t> xi, k;
};

class FastConv {
 public:
  // Decodes the operands and packs the weights by blocks of output channels; false (and nothing
  // to fold) when an operand is not a finite value of the format. The pointers must outlive `position`.
  bool prepare(const FastFormat& ff, const FpWord* x, const FpWord* w, const FpWord* bias, const FastConvDims& d);
  // Every output (l, o) of output position p: out[(l * cout + o) * out_vol + p].
  void position(FpEnv& env, const ConvTap* taps, size_t n_taps, int64_t p, int64_t out_vol, FpWord* out,
                FastConvScratch& scratch) const;

 private:
  // Fewer than kLanes / 2 output channels a group: lanes over any kLanes outputs of a position.
  void gather_position(FpEnv& env, const ConvTap* taps, size_t n_taps, int64_t p, int64_t out_vol, FpWord* out,
                       FastConvScratch& scratch) const;
  void prepare_lanes32();

  const FastFormat* ff_ = nullptr;
  const FpWord *x_ = nullptr, *w_ = nullptr, *bias_ = nullptr;
  FastConvDims d_;
  int64_t group_in_ = 0, group_out_ = 0, blocks_ = 0;  // blocks of kLanes output channels per group
  bool gather_ = false;
  std::vector<double> xd_, wd_, bd_;  // decoded (gather_: x and w with a block of zeros at the end)
  std::vector<double> wt_, bt_;       // weights and bias packed [group][block][ic * k_vol + k][lane]
  // binary32 copies of xd_, wt_ and bt_ where the binary32 lanes may run (bfloat16, binary16, the
  // small formats; nearest-even decided per call); empty otherwise.
  std::vector<float> xd32_, wt32_, bt32_;
};

}  // namespace denote
