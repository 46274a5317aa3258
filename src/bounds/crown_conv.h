// Internal: CROWN's conv rule. All rows of the coefficient tensor A [rows, Cout, out...] go back to
// the input as one transposed convolution: per group, W_g^T times the packed coefficient columns
// (one dgemm over a block of rows, src/kernels/gemm.h), then col2im. The bias and the
// evaluation's error terms are rule_affine's (src/bounds/crown_affine.h); the coefficients' own
// rounding is bounded a priori by gamma(Cout_g + k_vol + 2) |A| |W| xmax plus an underflow term
// (docs/NUMERICS.md, "Linear bounds"). alpha-CROWN's forward rule is the batched forward conv
// (im2col, then W_g times the columns) plus the bias.
//
//   ConvBackward cb;                       // geometry and weights of one conv node
//   if (conv_backward_plan(c.g, c.payload, n, cb)) conv_backward(cb, A.data(), batch, out.data());
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "bounds/crown_rules.h"

namespace denote::crown {

// One conv node's geometry, flattened: batch entries b = (row, leading index) each map
// A[b, Cout, out_vol] to A'[b, Cin, in_vol].
struct ConvBackward {
  int64_t cin = 0, cout = 0, group_in = 0, group_out = 0, groups = 1;
  int64_t in_vol = 0, out_vol = 0, k_vol = 0, lead = 1;
  std::vector<double> wt;         // per group: W_g^T, [group_in * k_vol, group_out] row-major
  std::vector<double> weight;     // the record's weight, [cout, group_in * k_vol]
  std::vector<double> weight_abs;  // |weight|
  std::vector<double> bias;       // [cout]
  // The taps of kernel position k as runs [run_start[k], run_start[k + 1]): run i covers the output
  // positions p + t and input offsets in + t * step for t < len (flat spatial indices).
  struct Run {
    int64_t p, in, step, len;
  };
  std::vector<int64_t> run_start;
  std::vector<Run> runs;
  // The output positions kernel position k reads no input at (zero padding) as ranges [p, p + len):
  // [gap_start[k], gap_start[k + 1]) of gaps (im2col writes their zeros, each column entry once).
  struct Gap {
    int64_t p, len;
  };
  std::vector<int64_t> gap_start;
  std::vector<Gap> gaps;
  // The same taps by output position p: [pos_start[p], pos_start[p + 1]), kernel position and input offset.
  std::vector<int64_t> pos_start, pos_k, pos_in;
  // And by input offset i: [in_start[i], in_start[i + 1]), output position and kernel position.
  std::vector<int64_t> in_start, in_q, in_k;
};

// Fills cb for node n (an Op::Conv node with a matching payload record); false when the node's
// record or shapes do not fit (the caller falls back to the generic rule).
bool conv_backward_plan(const Graph& g, const Payload<double>& payload, const Node& n, ConvBackward& cb);
// The same from a conv's config, its input and output shapes and its parameters ([cout, cin/groups,
// k...] and [cout]), checked against each other.
bool conv_plan(const ConvConfig& cfg, const Shape& in, const Shape& out, std::vector<double> weight,
               std::vector<double> bias, ConvBackward& cb);

// Every conv node's plan, built once on first use and kept (a model's plans: IbpPrepared holds one
// across run_crown calls, an Engine its own where there is none). Thread-safe: branch and bound's
// workers share a prepared model.
class ConvPlans {
 public:
  explicit ConvPlans(size_t nodes) : plans_(nodes), tried_(nodes, 0) {}
  // Node n's plan (conv_backward_plan), or nullptr where it has none.
  const ConvBackward* get(const Graph& g, const Payload<double>& payload, const Node& n);

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<ConvBackward>> plans_;
  std::vector<char> tried_;
};
// The plan of conv node n from the pass's ConvPlans (RuleCtx::conv_plans), else built into scratch;
// nullptr where the node's record or shapes do not fit.
const ConvBackward* conv_plan_for(const RuleCtx& c, const Node& n, ConvBackward& scratch);

// The conv's error scales and f(0), as affine_scale's (crown_affine.h) but on the batched product:
// f(0)_o = b[co] exactly, mx = |W| * xmax (the parent's magnitudes) by conv_forward on |W|.
// Per output ([lead, cout, out_vol]): the products of its sum that can be nonzero (a tap inside the
// image whose input magnitude xm is not 0; NaN counts) plus one for the bias. A product with an exact
// 0 is an exact 0 (weights are finite), and adding an exact 0 rounds nothing, so the evaluation's sum
// rounds at most that many times in any order: a dead relu or zero padding adds no rounding error.
std::vector<double> conv_live_fan(const ConvBackward& cb, const std::vector<double>& xm);
void conv_scale(const RuleCtx& c, const Node& n, const ConvBackward& cb, double g_coef, std::vector<double>& scale,
                std::vector<double>& f0);

// The coefficients' underflow term of one backward step through the conv, the same for every row:
// each of the at most 2 group_out k_vol operations of a coefficient is off by at most kEta / 2 beyond
// the relative bound, so |A' - A M| . |x| gains at most that times sum |x| over the parent's box.
double conv_underflow(const RuleCtx& c, const Node& n, const ConvBackward& cb);

// out[b, Cin, in_vol] = the transposed conv of a[b, Cout, out_vol], for batch entries b (out overwritten).
// ws (may be null): where the column buffers come from and go back to.
void conv_backward(const ConvBackward& cb, const double* a, int64_t batch, double* out, Workspace* ws = nullptr);
// out[b, Cout, out_vol] = the conv of x[b, Cin, in_vol] without bias (out overwritten); with |W|
// where magnitudes.
void conv_forward(const ConvBackward& cb, const double* x, int64_t batch, double* out, Workspace* ws = nullptr,
                  bool magnitudes = false);

// The CROWN rule and alpha-CROWN's forward rule of conv (the generic affine ones where
// conv_backward_plan fails). Where the conv reads the input directly and the pass fuses the input
// (PassRows::fuse_input), the input's coefficients are concretised a block of rows at a time and
// never stored whole, as the linear rule does (with alpha-CROWN's vertex values of the conv). Rows
// that are the pass's signed unit vectors at the conv (intermediate bounds' start rows) go back
// exactly: row r is +-the weights of its output's taps, its bias +-b, no product rounds.
bool rule_conv(RuleCtx& c, const Node& n, std::vector<double>&& A);
bool fwd_conv(ForwardCtx& f, const Node& n);

}  // namespace denote::crown
