// eval_margins (src/verify/relu_bab.h): an a-priori forward error bound, node by node on the one
// graph walk. For a point x of the boxes, e_n bounds |v_n(x) in the arithmetic - v_n(x) exactly|:
//   input, const  u |v|                      (rounding into the arithmetic)
//   layout        e_parent
//   relu          min(e_parent, max(hi, 0) - max(lo, 0))   (1-Lipschitz; both values in the clamped box)
//   linear        |W| e_x + (u + gamma_{n+2}) (|W| |x| + |b|) + (n + 2) tiny
//   add, sub      e_a + e_b + u |out| + tiny
//   mul           e_a |b| + |a| e_b + u |out| + tiny          (|a|, |b|: the boxes' magnitudes)
//   div           e_a / min|b| + |a| e_b / min|b|^2 + u |out| + tiny   (b's box away from 0)
// with every magnitude the box's max(|lo|, |hi|) (the boxes enclose both values) and every sum
// rounded up (bounds/crown_state.h's up_sum).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

#include "bounds/crown_affine.h"
#include "bounds/crown_conv.h"
#include "bounds/kernel_ops.h"
#include "ops/axis_lanes.h"
#include "bounds/crown_state.h"
#include "eval/walk.h"
#include "verify/relu_bab.h"

namespace denote::verify_detail {

namespace {

using crown::gamma;
using crown::up;
using crown::up_sum;

// The rule each op has, a table over the op table: rounding into the arithmetic (input, const), the
// parent's margin (same-order views, neg), relu's (the parent's, at most its clamped box's width), linear, an elementwise binary op (sum, product,
// quotient), another affine op (conv, avg_pool, batch_norm_eval, layout, reductions: `affine`), max_pool
// (the window's largest margin), or none.
enum class Kind : uint8_t { None, Rounding, Same, Relu, Linear, Sum, Product, Quotient, Affine, Pool, BatchNorm };
template <Op O>
constexpr Kind kKind = keeps_order(O) ? Kind::Same : is_affine(O) ? Kind::Affine : Kind::None;
template <>
constexpr Kind kKind<Op::Neg> = Kind::Same;
template <>
constexpr Kind kKind<Op::MaxPool> = Kind::Pool;
// batch_norm_eval rounds (x - mean) before scaling, which |M| |x| + |c| does not bound: its own rule.
template <>
constexpr Kind kKind<Op::BatchNormEval> = Kind::BatchNorm;
template <>
constexpr Kind kKind<Op::Input> = Kind::Rounding;
template <>
constexpr Kind kKind<Op::Const> = Kind::Rounding;
template <>
constexpr Kind kKind<Op::Relu> = Kind::Relu;
template <>
constexpr Kind kKind<Op::Linear> = Kind::Linear;
template <>
constexpr Kind kKind<Op::Add> = Kind::Sum;
template <>
constexpr Kind kKind<Op::Sub> = Kind::Sum;
template <>
constexpr Kind kKind<Op::MulElem> = Kind::Product;
template <>
constexpr Kind kKind<Op::Div> = Kind::Quotient;
Kind kind_of(Op op) {
  static constexpr Kind kKinds[] = {
#define DENOTE_OP(name, ...) kKind<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kKinds) == kNumOps);
  return kKinds[static_cast<size_t>(op)];
}

struct Margin {
  Shape shape;
  std::vector<double> e;
};

struct MarginPass {
  using Value = Margin;
  const Model& m;
  const NodeBoxes& boxes;
  double u, tiny;

  static const Shape& shape_of(const Value& v) { return v.shape; }
  static bool well_sized(const Value& v) { return static_cast<int64_t>(v.e.size()) == numel(v.shape); }

  const DoubleBox* box(int64_t id) const {
    const auto& b = boxes[static_cast<size_t>(id)];
    return b ? &*b : nullptr;
  }
  static double mag(const DoubleBox& b, size_t j) { return std::max(std::fabs(b.lo[j]), std::fabs(b.hi[j])); }
  // Element j of a parent of numel 1 (broadcast) or of the output's numel.
  static size_t at(size_t len, size_t j) { return len == 1 ? 0 : j; }

  Result<Value> visit(const Node& n, std::span<const Value* const> ps, const Shape& out_shape, const Value*) {
    const DoubleBox* b = box(n.id);
    const size_t len = static_cast<size_t>(numel(out_shape));
    if (!b || b->lo.size() != len) return error_status(ErrorCode::kUnsupported, "no box");
    Value out{out_shape, std::vector<double>(len, 0.0)};
    switch (kind_of(n.op)) {
      case Kind::Rounding:
        for (size_t j = 0; j < len; ++j) out.e[j] = up(u * mag(*b, j));
        return out;
      case Kind::Same:
        if (ps[0]->e.size() != len) break;
        out.e = ps[0]->e;
        return out;
      case Kind::Relu:  // both values lie in [max(lo, 0), max(hi, 0)] of the input's box, 1-Lipschitz
        if (const DoubleBox* pb = box(n.parents[0]); pb && pb->lo.size() == len && ps[0]->e.size() == len) {
          for (size_t j = 0; j < len; ++j) {
            const double w = std::max(pb->hi[j], 0.0) - std::max(pb->lo[j], 0.0);  // 0 exactly where always off
            out.e[j] = std::min(ps[0]->e[j], w > 0 ? up(w) : 0.0);
          }
          return out;
        }
        break;
      case Kind::Linear:
        if (linear(n, *ps[0], out)) return out;
        break;
      case Kind::Affine:
        if (affine(n, ps, out)) return out;
        break;
      case Kind::BatchNorm:
        if (batch_norm(n, *ps[0], out)) return out;
        break;
      case Kind::Pool:  // |max a - max b| <= max |a - b|: max_pool of the margins, exact
        if (auto e = crown::apply_node(m.graph, m.payload, n, {ps[0]->e}, false); e && e->size() == len) {
          out.e = std::move(*e);
          return out;
        }
        break;
      case Kind::Sum:
      case Kind::Product:
      case Kind::Quotient:
        if (binary(n, *ps[0], *ps[1], *b, out)) return out;
        break;
      case Kind::None:
        break;
    }
    return error_status(ErrorCode::kUnsupported, "no forward error rule");
  }

  // An affine op y = M x + c (M >= 0 where it has no parameters; |M| from |weights| where it has):
  //   e_y = |M| e_x + (u + gamma_{k+2}) (|M| |x| + |c|) + (k + 2) tiny,  k its fan-in;
  // data movement (storage-only ops) is exact: e_y = M e_x. The three products are evaluated in f64 with
  // the op's own rule (crown_affine.h's apply_node) and rounded up by gamma_{k+1} in f64.
  bool affine(const Node& n, std::span<const Margin* const> ps, Margin& out) const {
    std::vector<std::vector<double>> e, x, zero;
    for (size_t k = 0; k < n.parents.size(); ++k) {
      const DoubleBox* pb = box(n.parents[k]);
      if (!pb || pb->lo.size() != ps[k]->e.size()) return false;
      e.push_back(ps[k]->e);
      std::vector<double> xm(pb->lo.size());
      for (size_t j = 0; j < xm.size(); ++j) xm[j] = mag(*pb, j);
      x.push_back(std::move(xm));
      zero.emplace_back(pb->lo.size(), 0.0);
    }
    const auto me = crown::apply_node(m.graph, m.payload, n, e, true);
    if (!me || me->size() != out.e.size()) return false;
    if (has_flag(n.op, kFlagStorageOnly)) {
      out.e = *me;
      return true;
    }
    const auto mx = crown::apply_node(m.graph, m.payload, n, x, true);
    const auto f0 = crown::apply_node(m.graph, m.payload, n, zero, false);
    if (!mx || !f0 || mx->size() != out.e.size() || f0->size() != out.e.size()) return false;
    const double k = crown::affine_fan_in(m.graph, m.payload, n);
    const double g_all = up(u + gamma(k + 2, u) * (1 + u)), g64 = 1 + gamma(k + 1);
    // A conv's evaluation rounds each output as often as it has products that can be nonzero
    // (crown::conv_live_fan: dead inputs and zero padding round nothing); other ops count the fan-in.
    std::vector<double> live;
    crown::ConvBackward cb;
    if (bound_kernel(n.op) == BoundKernel::Conv && x.size() == 1 && crown::conv_backward_plan(m.graph, m.payload, n, cb))
      live = crown::conv_live_fan(cb, x[0]);
    for (size_t j = 0; j < out.e.size(); ++j) {
      const double kj = live.size() == out.e.size() ? std::min(live[j], k) : k;
      const double g = live.size() == out.e.size() ? up(u + gamma(kj + 2, u) * (1 + u)) : g_all;
      const double size = up(up((*mx)[j] * g64) + up(std::fabs((*f0)[j]) * g64));
      out.e[j] = up(up((*me)[j] * g64) + up(g * size) + (k + 2) * tiny);
      if (!std::isfinite(out.e[j]) || out.e[j] < 0) return false;
    }
    return true;
  }

  // batch_norm_eval as the evaluator computes it, y = ((x - mean) / sqrt(var + eps)) gamma + beta, every
  // parameter rounded into the arithmetic: with s = |gamma| / sqrt(var + eps) (computed in f64, raised by
  // gamma_4 in f64), the subtraction's error u (|x| + 2 |mean|) and the rest's (about 10 roundings,
  // parameters included) relative to s (|x| + 2 |mean| + e) + |beta|:
  //   e_y = s e (1 + gamma_12) + gamma_12 (s (|x| + 2 |mean| + e) + |beta|) + 12 tiny (1 + s).
  bool batch_norm(const Node& n, const Margin& x, Margin& out) const {
    const auto* rec = find_record(m.payload.batch_norm, n.id);
    const auto* attrs = std::get_if<BatchNormAttrs>(&n.attrs);
    const DoubleBox* xb = box(n.parents[0]);
    if (!rec || !attrs || !xb || x.e.size() != out.e.size() || xb->lo.size() != x.e.size()) return false;
    const rules::AxisLanes lanes = rules::axis_lanes(n.out_shape, attrs->channel_axis);
    if (lanes.extent <= 0 || rec->gamma.size() != static_cast<size_t>(lanes.extent) ||
        rec->beta.size() != rec->gamma.size() || rec->mean.size() != rec->gamma.size() || rec->var.size() != rec->gamma.size())
      return false;
    const double g = gamma(12, u), g64 = 1 + gamma(4);
    for (size_t j = 0; j < out.e.size(); ++j) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(j) / lanes.inner) % lanes.extent);
      const double d = rec->var[c] + rec->eps;
      if (!(d > 0)) return false;
      const double s = up(std::fabs(rec->gamma[c]) / std::sqrt(d) * g64);
      const double size = up(s * up(mag(*xb, j) + 2 * std::fabs(rec->mean[c]) + x.e[j]) + std::fabs(rec->beta[c]));
      out.e[j] = up(up(s * x.e[j] * (1 + g)) + up(g * size) + 12 * tiny * (1 + s));
      if (!std::isfinite(out.e[j])) return false;
    }
    return true;
  }

  bool linear(const Node& n, const Margin& x, Margin& out) const {
    const auto* rec = find_record(m.payload.linear, n.id);
    const DoubleBox* xb = box(n.parents[0]);
    if (!rec || !xb || rec->in_dim <= 0) return false;
    const size_t in = static_cast<size_t>(rec->in_dim), od = static_cast<size_t>(rec->out_dim);
    if (x.e.size() % in != 0 || out.e.size() != x.e.size() / in * od) return false;
    const double nn = static_cast<double>(in);
    for (size_t l = 0; l < x.e.size() / in; ++l) {
      // The evaluation rounds as often as the block has inputs whose box is not the point 0.
      const double g = up(u + gamma(crown::live_count(*xb, l * in, in) + 2, u) * (1 + u));
      for (size_t o = 0; o < od; ++o) {
        const double* w = rec->weight.data() + o * in;
        double prop = 0, size = rec->bias.empty() ? 0.0 : std::fabs(rec->bias[o]);
        for (size_t i = 0; i < in; ++i) {
          prop += std::fabs(w[i]) * x.e[l * in + i];
          size += std::fabs(w[i]) * mag(*xb, l * in + i);
        }
        out.e[l * od + o] = up(up_sum(prop, nn) + up(g * up_sum(size, nn + 1)) + (nn + 2) * tiny);
      }
    }
    return true;
  }

  bool binary(const Node& n, const Margin& a, const Margin& c, const DoubleBox& ob, Margin& out) const {
    const DoubleBox* ab = box(n.parents[0]);
    const DoubleBox* cb = box(n.parents[1]);
    const size_t len = out.e.size();
    if (!ab || !cb || (a.e.size() != len && a.e.size() != 1) || (c.e.size() != len && c.e.size() != 1)) return false;
    for (size_t j = 0; j < len; ++j) {
      const size_t ja = at(a.e.size(), j), jc = at(c.e.size(), j);
      const double round = up(u * mag(ob, j)) + tiny;
      double prop = 0;
      const Kind k = kind_of(n.op);
      if (k == Kind::Sum) {
        prop = a.e[ja] + c.e[jc];
      } else if (k == Kind::Product) {
        prop = a.e[ja] * mag(*cb, jc) + mag(*ab, ja) * c.e[jc];
      } else {
        const double lo = cb->lo[jc] > 0 ? cb->lo[jc] : cb->hi[jc] < 0 ? -cb->hi[jc] : 0.0;  // min |c|
        if (!(lo > 0)) return false;
        prop = a.e[ja] / (lo * (1 - 4 * crown::kU)) + mag(*ab, ja) * c.e[jc] / (lo * lo * (1 - 8 * crown::kU));
      }
      out.e[j] = up_sum(prop + round, 4);
      if (!std::isfinite(out.e[j])) return false;
    }
    return true;
  }
};

}  // namespace

std::optional<std::vector<std::vector<double>>> eval_margins(const Model& m, const NodeBoxes& boxes, int64_t output,
                                                             const ArithSpec& arith) {
  const Graph& g = m.graph;
  if (boxes.size() != g.nodes.size() || output < 0 || output >= static_cast<int64_t>(g.nodes.size())) return std::nullopt;
  // The same error model as CROWN's: none where a parameter or an overflow leaves it.
  if (!crown_model_gap(parameter_range_gap(m.payload, arith), boxes).empty()) return std::nullopt;
  const bool f32 = arith.is_f32();
  MarginPass pass{m, boxes, f32 ? 0x1p-24 : 0x1p-53, f32 ? 0x1p-149 : 0x1p-1074};
  std::vector<Margin> inputs;
  for (int64_t id : g.input_ids()) {
    const Node& n = g.nodes[static_cast<size_t>(id)];
    inputs.push_back(Margin{n.out_shape, std::vector<double>(static_cast<size_t>(numel(n.out_shape)), 0.0)});
  }
  const std::vector<bool> needed = walk::ancestors(g, output);
  walk::Config cfg;
  cfg.layer = "verify margins";
  cfg.needed = &needed;
  std::vector<Margin> table;
  std::vector<bool> present;
  if (!walk::forward(g, pass, std::span<const Margin>(inputs), cfg, table, present).ok()) return std::nullopt;
  std::vector<std::vector<double>> out(g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i)
    if (present[i]) out[i] = std::move(table[i].e);
  return out;
}

bool prefer_relu_split(const VnnCase& c) {
  int64_t open = 0;
  for (size_t i = 0; i < c.lo_out.size(); ++i) open += c.hi_out[i] > c.lo_out[i];
  return open > 16;
}

}  // namespace denote::verify_detail
