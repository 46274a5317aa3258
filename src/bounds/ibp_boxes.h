// Internal: IBP on plain double arrays for the graphs most verification benchmarks are (inputs,
// constants, same-order views (reshape / flatten / detach), the other storage-only ops (permute,
// transpose, broadcast_to, gather, concat), add / sub / mul / div of same-shape operands (the input
// normalisation (x - mean) / std), dense linear layers, conv with point weights, relu), with f32 or
// f64 endpoints (IbpPrepared).
// The boxes are those of the interval evaluation (src/bounds/ibp.cc) bit for bit: the same
// rounding of the input box into the endpoint format, the same dense product and output rounding
// (ibp::dense_linear_blocks, ibp::conv_blocks), add / sub / mul / div by the endpoints' directed
// operations, relu as the interval context's max(x, 0), constants as the prepared payload's
// intervals; only the per-element interval tensors, their conversions and one allocation per element go. Anything else (another op,
// a box that is not finite, a walker error) answers nullopt and the interval evaluation runs
// instead, so errors and notes stay the evaluation's.
// A batch of N samples is one pass (run_ibp_batch): a node's value then holds N boxes one after
// the other (constants one, read by every sample), the dense product runs sample by sample as for
// one box (the same sums: the same boxes bit for bit), the conv as one batched product.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bounds/ibp_conv.h"
#include "bounds/ibp_dense.h"
#include "bounds/storage_map.h"
#include "denote/bounds/ibp.h"
#include "eval/evaluator_impl.h"
#include "eval/walk.h"

namespace denote::ibp {

// The steps of the double-array pass, a table over ops.def: sources, same-order views, relu, dense
// linear, add, sub, mul and div; any other op: the pass does not run.
enum class BoxStep : uint8_t { None, Input, Const, Same, Move, Relu, Dense, Conv, Add, Sub, Mul, Div };
template <Op O>
inline constexpr BoxStep kBoxStep = keeps_order(O)                           ? BoxStep::Same
                                    : has_flag(O, kFlagStorageOnly) && !has_flag(O, kFlagPayload) ? BoxStep::Move
                                                                                                  : BoxStep::None;
template <>
inline constexpr BoxStep kBoxStep<Op::Input> = BoxStep::Input;
template <>
inline constexpr BoxStep kBoxStep<Op::Const> = BoxStep::Const;
template <>
inline constexpr BoxStep kBoxStep<Op::Relu> = BoxStep::Relu;
template <>
inline constexpr BoxStep kBoxStep<Op::Linear> = BoxStep::Dense;
template <>
inline constexpr BoxStep kBoxStep<Op::Conv> = BoxStep::Conv;
template <>
inline constexpr BoxStep kBoxStep<Op::Add> = BoxStep::Add;
template <>
inline constexpr BoxStep kBoxStep<Op::Sub> = BoxStep::Sub;
template <>
inline constexpr BoxStep kBoxStep<Op::MulElem> = BoxStep::Mul;
template <>
inline constexpr BoxStep kBoxStep<Op::Div> = BoxStep::Div;
inline BoxStep box_step(Op op) {
  static constexpr BoxStep kSteps[] = {
#define DENOTE_OP(name, ...) kBoxStep<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kSteps) == kNumOps);
  return kSteps[static_cast<size_t>(op)];
}

// Whether the double-array pass can run the graph: every op one it has, every linear node dense,
// every conv node prepared (ConvBoxes), add, sub, mul and div on operands of the output's shape.
template <class V>
bool boxes_pass_fits(const Graph& g, const std::map<int64_t, DenseLinear<V>>& dense, const ConvMap& conv) {
  auto shape_of = [&](int64_t p) -> const Shape& { return g.nodes[static_cast<size_t>(p)].out_shape; };
  for (const Node& n : g.nodes) {
    switch (box_step(n.op)) {
      case BoxStep::None: return false;
      case BoxStep::Dense:
        if (n.parents.size() != 1 || dense.count(n.id) != 1) return false;
        break;
      case BoxStep::Conv:
        if (n.parents.size() != 1 || conv.count(n.id) != 1) return false;
        break;
      case BoxStep::Add: case BoxStep::Sub: case BoxStep::Mul: case BoxStep::Div:
        if (n.parents.size() != 2 || shape_of(n.parents[0]) != n.out_shape || shape_of(n.parents[1]) != n.out_shape)
          return false;
        break;
      default: break;
    }
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
  const ConvMap& conv;
  FormatModel fm;
  int64_t batch = 1;  // samples per value (a constant's value holds one)

  static const Shape& shape_of(const DoubleBox& b) { return b.shape; }
  bool well_sized(const DoubleBox& b) const {
    const auto k = static_cast<size_t>(numel(b.shape));
    return b.hi.size() == b.lo.size() && (b.lo.size() == k || b.lo.size() == k * static_cast<size_t>(batch));
  }
  int64_t bytes_per_element() const { return 16 * batch; }

  double down(double x) const { return static_cast<double>(endpoints.from_double(x, Dir::Down)); }
  double up(double x) const { return static_cast<double>(endpoints.from_double(x, Dir::Up)); }

  // The interval context's add, sub, mul and div (IntervalContext in denote/bounds/interval.h), endpoint
  // by endpoint with the endpoints' own directed operations, the same minimum and maximum of the four
  // products or quotients. An endpoint that is not finite, or a divisor whose interval holds 0, is an
  // error: the interval evaluation runs instead (with its own messages).
  V min2(V a, V b) const { return b < a ? b : a; }
  V max2(V a, V b) const { return a < b ? b : a; }
  template <class F>
  DInterval corners(F f, V al, V ah, V bl, V bh) const {
    const V lo = min2(min2(f(al, bl, Dir::Down), f(al, bh, Dir::Down)), min2(f(ah, bl, Dir::Down), f(ah, bh, Dir::Down)));
    const V hi = max2(max2(f(al, bl, Dir::Up), f(al, bh, Dir::Up)), max2(f(ah, bl, Dir::Up), f(ah, bh, Dir::Up)));
    return {static_cast<double>(lo), static_cast<double>(hi)};
  }
  DInterval arith(BoxStep step, V al, V ah, V bl, V bh) const {
    switch (step) {
      case BoxStep::Add: return {static_cast<double>(endpoints.add(al, bl, Dir::Down)), static_cast<double>(endpoints.add(ah, bh, Dir::Up))};
      case BoxStep::Sub: return {static_cast<double>(endpoints.sub(al, bh, Dir::Down)), static_cast<double>(endpoints.sub(ah, bl, Dir::Up))};
      case BoxStep::Mul: return corners([&](V x, V y, Dir d) { return endpoints.mul(x, y, d); }, al, ah, bl, bh);
      case BoxStep::Div:
        if (!(V(0) < bl || bh < V(0))) return {NAN, NAN};
        return corners([&](V x, V y, Dir d) { return endpoints.div(x, y, d); }, al, ah, bl, bh);
      default: return {NAN, NAN};
    }
  }
  // Operands of the output's shape; one holding a single sample (a constant) is read by every sample.
  Result<DoubleBox> binary(BoxStep step, const DoubleBox& a, const DoubleBox& b, const Shape& out_shape) const {
    const size_t per = static_cast<size_t>(numel(out_shape)), size = std::max(a.lo.size(), b.lo.size());
    if (per == 0 || a.lo.size() % per != 0 || b.lo.size() % per != 0 || (a.lo.size() != size && a.lo.size() != per) ||
        (b.lo.size() != size && b.lo.size() != per))
      return error_status("IR bounds: binary: operand sizes");
    DoubleBox y{out_shape, std::vector<double>(size), std::vector<double>(size)};
    for (size_t i = 0; i < size; ++i) {
      const size_t j = a.lo.size() == size ? i : i % per, k = b.lo.size() == size ? i : i % per;
      const V al = static_cast<V>(a.lo[j]), ah = static_cast<V>(a.hi[j]);
      const V bl = static_cast<V>(b.lo[k]), bh = static_cast<V>(b.hi[k]);
      const DInterval r = arith(step, al, ah, bl, bh);
      if (!std::isfinite(al) || !std::isfinite(ah) || !std::isfinite(bl) || !std::isfinite(bh) ||
          !std::isfinite(r.lo) || !std::isfinite(r.hi))
        return error_status("IR bounds: binary: an endpoint is not finite");
      y.lo[i] = r.lo, y.hi[i] = r.hi;
    }
    return y;
  }

  Result<DoubleBox> visit(const Node& n, std::span<const DoubleBox* const> parents, const Shape& out_shape,
                          const DoubleBox* supplied) const {
    const BoxStep step = box_step(n.op);
    if (step == BoxStep::Input) {  // rounded outward into the endpoint format, as IntervalContext::make
      if (supplied->shape != out_shape || supplied->lo.size() != static_cast<size_t>(numel(out_shape) * batch))
        return error_status("IR bounds: input box shape");
      DoubleBox b{out_shape, std::vector<double>(supplied->lo.size()), std::vector<double>(supplied->lo.size())};
      for (size_t i = 0; i < b.lo.size(); ++i) b.lo[i] = down(supplied->lo[i]), b.hi[i] = up(supplied->hi[i]);
      return b;
    }
    if (step == BoxStep::Const) {
      const auto* rec = find_record(payload.consts, n.id);
      if (!rec || static_cast<int64_t>(rec->values.size()) != numel(out_shape)) return error_status("const payload");
      DoubleBox b{out_shape, std::vector<double>(rec->values.size()), std::vector<double>(rec->values.size())};
      for (size_t i = 0; i < b.lo.size(); ++i) b.lo[i] = rec->values[i].lo, b.hi[i] = rec->values[i].hi;
      return b;
    }
    const DoubleBox& x = *parents[0];
    if (step == BoxStep::Add || step == BoxStep::Sub || step == BoxStep::Mul || step == BoxStep::Div)
      return binary(step, x, *parents[1], out_shape);
    if (step == BoxStep::Move) return move_box(n, parents, out_shape);
    if (step == BoxStep::Conv) return conv_box(conv.at(n.id), x, out_shape);
    if (step == BoxStep::Relu) {  // max(x, 0) per endpoint: 0 where the endpoint is below 0
      DoubleBox b{out_shape, x.lo, x.hi};
      for (size_t i = 0; i < b.lo.size(); ++i) {
        b.lo[i] = b.lo[i] < 0 ? 0.0 : b.lo[i];
        b.hi[i] = b.hi[i] < 0 ? 0.0 : b.hi[i];
      }
      return b;
    }
    if (step != BoxStep::Dense) return DoubleBox{out_shape, x.lo, x.hi};  // same-order views
    return dense_box(dense.at(n.id), x, out_shape);
  }

  // A storage-only op (permute, transpose, broadcast_to, gather, concat): each output element a copy of
  // one parent element, found by the op's own rule on the elements' indices (as the typed interpreter
  // does), so a box moves endpoint by endpoint; a parent holding one sample (a constant) serves every sample.
  Result<DoubleBox> move_box(const Node& n, std::span<const DoubleBox* const> parents, const Shape& out_shape) const {
    std::vector<Shape> shapes;
    size_t samples = 1;
    for (const DoubleBox* p : parents) {
      shapes.push_back(p->shape);
      const auto k = static_cast<size_t>(numel(p->shape));
      samples = std::max(samples, k == 0 ? 1 : p->lo.size() / k);
    }
    DENOTE_ASSIGN_OR_RETURN(bounds::StorageMap map, bounds::storage_map(n, shapes, out_shape));
    const size_t per = map.elem.size();
    DoubleBox y{out_shape, std::vector<double>(samples * per), std::vector<double>(samples * per)};
    for (size_t j = 0; j < per; ++j) {
      const DoubleBox& p = *parents[map.parent[j]];
      const auto i = static_cast<size_t>(map.elem[j]), size = static_cast<size_t>(numel(p.shape));
      const bool one = p.lo.size() == size;  // one sample: every sample reads it
      for (size_t s = 0; s < samples; ++s) {
        y.lo[s * per + j] = p.lo[(one ? 0 : s * size) + i];
        y.hi[s * per + j] = p.hi[(one ? 0 : s * size) + i];
      }
    }
    return y;
  }

  Result<DoubleBox> conv_box(const ConvBoxes& c, const DoubleBox& x, const Shape& out_shape) const {
    const size_t samples = x.lo.size() / static_cast<size_t>(std::max<int64_t>(numel(x.shape), 1));
    DoubleBox y{out_shape, std::vector<double>(samples * static_cast<size_t>(numel(out_shape))), {}};
    y.hi.resize(y.lo.size());
    const bool ok = conv_blocks(*c.plan, c.bias, fm, x.lo.size(), x.lo.data(), x.hi.data(),
                                [&](size_t k, DInterval b) { y.lo[k] = down(b.lo), y.hi[k] = up(b.hi); });
    if (!ok) return error_status("IR bounds: conv: a box is not finite");
    return y;
  }

  Result<DoubleBox> dense_box(const DenseLinear<V>& d, const DoubleBox& x, const Shape& out_shape) const {
    if (x.shape.empty() || x.shape.back() != d.in) return error_status("IR bounds: dense linear: input shape");
    const size_t lead = x.lo.size() / static_cast<size_t>(d.in);  // every sample's leading blocks
    DoubleBox y{out_shape, std::vector<double>(lead * static_cast<size_t>(d.out)), {}};
    y.hi.resize(y.lo.size());
    const bool ok = dense_linear_blocks(d, fm, lead, x.lo.data(), x.hi.data(),
                                        [&](size_t k, DInterval b) { y.lo[k] = down(b.lo), y.hi[k] = up(b.hi); });
    if (!ok) return error_status("IR bounds: dense linear: a box is not finite");
    return y;
  }
};

// Every node's box by the double-array pass, the input boxes already checked (ibp.cc's check_box: no
// NaN, lo <= hi, sizes that fit their shapes; with a batch, `batch` samples each), or nullopt: the
// interval evaluation must run (a box that is not finite, any walker error such as the wrong number or
// shape of input boxes). With
// `only` >= 0 the boxes of that node alone.
template <class E>
std::optional<DoubleIbp> boxes_pass(const Graph& g, const E& endpoints,
                                    const Payload<Interval<typename E::Value>>& payload,
                                    const std::map<int64_t, DenseLinear<typename E::Value>>& dense,
                                    const ConvMap& conv, std::span<const DoubleBox> inputs,
                                    const EvalOptions& options, int64_t batch = 1, int64_t only = -1) {
  BoxesPass<E> pass{endpoints, payload, dense, conv, format_model(endpoints), batch};
  walk::Config cfg;
  cfg.options = options;
  std::vector<bool> needed, keep;
  if (only >= 0) {  // node `only`'s box alone: its ancestors visited, every other value freed after use
    needed = walk::ancestors(g, only);
    keep.assign(g.nodes.size(), false);
    keep[static_cast<size_t>(only)] = true;
    cfg.needed = &needed, cfg.keep = &keep;
  }
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
