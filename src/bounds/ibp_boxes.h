// Internal: IBP on plain double arrays for the graphs most verification benchmarks are (inputs,
// constants, reshape / flatten / detach, add / sub of same-shape operands (input normalisation),
// dense linear layers, relu), with f32 or f64 endpoints (IbpPrepared).
// The boxes are those of the interval evaluation (src/bounds/ibp.cc) bit for bit: the same
// rounding of the input box into the endpoint format, the same dense product and output rounding
// (ibp::dense_linear_blocks), add / sub by the endpoints' directed operations, relu as the interval
// context's max(x, 0), constants as the prepared payload's intervals; only the per-element
// interval tensors, their conversions and one allocation per element go. Anything else (another op,
// a box that is not finite, a walker error) answers nullopt and the interval evaluation runs
// instead, so errors and notes stay the evaluation's.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bounds/ibp_dense.h"
#include "denote/bounds/ibp.h"
#include "eval/walk.h"

namespace denote::ibp {

// Whether the double-array pass can run the graph: every op one it has, every linear node dense.
template <class V>
bool boxes_pass_fits(const Graph& g, const std::map<int64_t, DenseLinear<V>>& dense) {
  auto same_shapes = [&](const Node& n) {
    for (int64_t p : n.parents)
      if (g.nodes[static_cast<size_t>(p)].out_shape != n.out_shape) return false;
    return true;
  };
  for (const Node& n : g.nodes) {
    const bool layout = n.op == Op::Input || n.op == Op::Const || n.op == Op::Reshape || n.op == Op::Flatten ||
                        n.op == Op::Detach || n.op == Op::Relu;
    const bool linear = n.op == Op::Linear && n.parents.size() == 1 && dense.count(n.id) == 1;
    const bool add_sub = (n.op == Op::Add || n.op == Op::Sub) && n.parents.size() == 2 && same_shapes(n);
    if (!layout && !linear && !add_sub) return false;
  }
  return true;
}

template <class E>
struct BoxesPass {
  using Value = DoubleBox;
  using V = typename E::Value;
  const E& endpoints;
  const Payload<Interval<V>>& payload;  // the prepared payload: constants as endpoint intervals
  const std::map<int64_t, DenseLinear<V>>& dense;
  FormatModel fm;

  static const Shape& shape_of(const DoubleBox& b) { return b.shape; }
  static bool well_sized(const DoubleBox& b) {
    return b.lo.size() == static_cast<size_t>(numel(b.shape)) && b.hi.size() == b.lo.size();
  }
  int64_t bytes_per_element() const { return 16; }

  double down(double x) const { return static_cast<double>(endpoints.from_double(x, Dir::Down)); }
  double up(double x) const { return static_cast<double>(endpoints.from_double(x, Dir::Up)); }

  // [a.lo + b.lo, a.hi + b.hi] or [a.lo - b.hi, a.hi - b.lo], each endpoint rounded outward by the
  // endpoints' own operation (the values are endpoint-format numbers, exact as V).
  Result<DoubleBox> add_sub(bool sub, const DoubleBox& a, const DoubleBox& b, const Shape& out_shape) const {
    if (a.lo.size() != b.lo.size()) return error_status("IR bounds: add/sub: operand sizes");
    DoubleBox y{out_shape, std::vector<double>(a.lo.size()), std::vector<double>(a.lo.size())};
    for (size_t i = 0; i < a.lo.size(); ++i) {
      const V al = static_cast<V>(a.lo[i]), ah = static_cast<V>(a.hi[i]);
      const V bl = static_cast<V>(b.lo[i]), bh = static_cast<V>(b.hi[i]);
      const V lo = sub ? endpoints.sub(al, bh, Dir::Down) : endpoints.add(al, bl, Dir::Down);
      const V hi = sub ? endpoints.sub(ah, bl, Dir::Up) : endpoints.add(ah, bh, Dir::Up);
      if (std::isnan(lo) || std::isnan(hi)) return error_status("IR bounds: add/sub: an endpoint is nan");
      y.lo[i] = lo, y.hi[i] = hi;
    }
    return y;
  }

  Result<DoubleBox> visit(const Node& n, std::span<const DoubleBox* const> parents, const Shape& out_shape,
                          const DoubleBox* supplied) const {
    if (n.op == Op::Input) {  // rounded outward into the endpoint format, as IntervalContext::make
      if (supplied->shape != out_shape) return error_status("IR bounds: input box shape");
      DoubleBox b{out_shape, std::vector<double>(supplied->lo.size()), std::vector<double>(supplied->lo.size())};
      for (size_t i = 0; i < b.lo.size(); ++i) b.lo[i] = down(supplied->lo[i]), b.hi[i] = up(supplied->hi[i]);
      return b;
    }
    if (n.op == Op::Const) {
      const auto* rec = find_record(payload.consts, n.id);
      if (!rec || static_cast<int64_t>(rec->values.size()) != numel(out_shape)) return error_status("const payload");
      DoubleBox b{out_shape, std::vector<double>(rec->values.size()), std::vector<double>(rec->values.size())};
      for (size_t i = 0; i < b.lo.size(); ++i) b.lo[i] = rec->values[i].lo, b.hi[i] = rec->values[i].hi;
      return b;
    }
    const DoubleBox& x = *parents[0];
    if (n.op == Op::Add || n.op == Op::Sub) return add_sub(n.op == Op::Sub, x, *parents[1], out_shape);
    if (n.op == Op::Relu) {  // max(x, 0) per endpoint: 0 where the endpoint is below 0
      DoubleBox b{out_shape, x.lo, x.hi};
      for (size_t i = 0; i < b.lo.size(); ++i) {
        b.lo[i] = b.lo[i] < 0 ? 0.0 : b.lo[i];
        b.hi[i] = b.hi[i] < 0 ? 0.0 : b.hi[i];
      }
      return b;
    }
    if (n.op != Op::Linear) return DoubleBox{out_shape, x.lo, x.hi};  // reshape, flatten, detach
    const DenseLinear<V>& d = dense.at(n.id);
    if (x.shape.empty() || x.shape.back() != d.in) return error_status("IR bounds: dense linear: input shape");
    const size_t lead = x.lo.size() / static_cast<size_t>(d.in);
    DoubleBox y{out_shape, std::vector<double>(lead * static_cast<size_t>(d.out)), {}};
    y.hi.resize(y.lo.size());
    const bool ok = dense_linear_blocks(
        d, fm, lead,
        [&](size_t i) {
          return DInterval{x.lo[i], x.hi[i]};
        },
        [&](size_t k, DInterval b) { y.lo[k] = down(b.lo), y.hi[k] = up(b.hi); });
    if (!ok) return error_status("IR bounds: dense linear: a box is not finite");
    return y;
  }
};

// Every node's box by the double-array pass, the input boxes already checked (ibp.cc's check_box: no
// NaN, lo <= hi, sizes that fit their shapes), or nullopt: the interval evaluation must run (a box
// that is not finite, any walker error such as the wrong number or shape of input boxes).
template <class E>
std::optional<DoubleIbp> boxes_pass(const Graph& g, const E& endpoints,
                                    const Payload<Interval<typename E::Value>>& payload,
                                    const std::map<int64_t, DenseLinear<typename E::Value>>& dense,
                                    std::span<const DoubleBox> inputs, const EvalOptions& options) {
  BoxesPass<E> pass{endpoints, payload, dense, format_model(endpoints)};
  walk::Config cfg;
  cfg.options = options;
  cfg.layer = "IR bounds";
  cfg.value_noun = "box";
  std::vector<DoubleBox> table;
  std::vector<bool> present;
  if (!walk::forward(g, pass, inputs, cfg, table, present).ok()) return std::nullopt;
  DoubleIbp out;
  out.notes.resize(g.nodes.size());
  out.boxes.resize(g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i)
    if (present[i]) out.boxes[i] = std::move(table[i]);
  return out;
}

}  // namespace denote::ibp
