// Internal: the checker's view of a network (src/certify/cert_net.cc): each node of the output's cone
// as one of a few kinds with its parameters read once, and, per kind, an enclosure of its values from
// its parents' boxes (forward) and the transposed map of a linear functional's coefficients (backward),
// both with every rounding error bounded (cert_arith.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "certify/cert_arith.h"
#include "denote/base/status.h"
#include "denote/ir/model.h"

namespace denote::certify {

// A node's values on a domain. err (checking the f32 evaluation too): per element a bound of what the
// f32 evaluation of the node's op adds to the exact op on its parents' (f32) values; lo and hi enclose
// both the exact and the f32 values. Empty: no such term.
struct Box {
  std::vector<double> lo, hi, err;
};

// Coefficients of `rows` linear functionals at one node, rows x numel, as midpoint and radius.
struct Coef {
  std::vector<double> mid, rad;
  bool set = false;
};

enum class Kind : uint8_t {
  Input,
  Const,
  Same,     // the parent's elements in the same order (reshape, flatten, detach)
  Linear,   // W x + b along the last axis
  Conv,     // 2-d convolution, one image
  Scale,    // elementwise a * x + b (a, b intervals): add/sub/mul/div with a constant, neg, batch_norm_eval
  Add,      // x + y or x - y of two variables of the node's shape
  Relu,
};

struct Prepared {
  Kind kind = Kind::Same;
  int64_t numel = 0;
  int64_t var = -1;                // the variable parent (Linear, Conv, Scale, Same, Relu)
  int64_t other = -1;              // Add: the second parent
  double other_sign = 1;           // Add: +1 (add) or -1 (sub)
  // Linear: rows of `in` -> `out` (k = numel / out leading rows); Conv: out channels = out.
  int64_t in = 0, out = 0;
  std::vector<double> w, aw, b;    // weight, |weight|, bias
  // Conv geometry.
  int64_t cin = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  // Scale: per output element, a = a_mid +- a_rad, b = b_mid +- b_rad; Const: the values (b_mid).
  std::vector<double> a_mid, a_rad, b_mid, b_rad;
  // batch_norm_eval: per element |mean| and |gamma| of its channel (its f32 evaluation's error terms).
  std::vector<double> bn_mean, bn_gamma;
};

class Net {
 public:
  // Errors: an op the checker does not cover in the output's cone (naming the node), parameters that
  // are missing or not finite, not exactly one input and one output.
  static Result<Net> make(const Model& m);

  const Graph& graph() const { return *g_; }
  int64_t input() const { return input_; }
  int64_t output() const { return output_; }
  bool in_cone(int64_t id) const { return cone_[static_cast<size_t>(id)] != 0; }
  const Prepared& node(int64_t id) const { return nodes_[static_cast<size_t>(id)]; }
  int64_t numel(int64_t id) const { return nodes_[static_cast<size_t>(id)].numel; }
  // The relu nodes of the cone whose input is node `id` (a relu input node has its box clamped).
  const std::vector<int64_t>& relus_reading(int64_t id) const { return readers_[static_cast<size_t>(id)]; }

  // The box of node id from its parents' boxes (the input's is set by the caller).
  void forward(int64_t id, std::vector<Box>& boxes) const;
  // Checking the f32 evaluation too: node id's err from its parents' boxes (an a-priori bound of one f32
  // evaluation of its op, its parameters rounded to f32, in any summation order), and its box widened by
  // it. False for an op whose f32 evaluation this does not bound (batch_norm_eval).
  bool add_f32_error(int64_t id, std::vector<Box>& boxes) const;
  // Moves node id's coefficients (rows of them) to its parents (accumulating), adding the constant
  // terms' lower bounds to sums[r]. Relu nodes are the caller's (their relaxation).
  void backward(int64_t id, int64_t rows, std::vector<Coef>& coef, std::vector<Sum>& sums) const;
  // Adds coefficients (mid, rad) of `rows` functionals to node id's.
  void accumulate(int64_t id, std::vector<double> mid, std::vector<double> rad, std::vector<Coef>& coef) const;

 private:
  const Graph* g_ = nullptr;
  int64_t input_ = -1, output_ = -1;
  std::vector<char> cone_;
  std::vector<Prepared> nodes_;
  std::vector<std::vector<int64_t>> readers_;
};

}  // namespace denote::certify
