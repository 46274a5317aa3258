// Whole networks under an MX policy (include/denote/typed/policy.h, MxRunner): the evaluator's walk in
// binary32 with linear nodes replaced by MX products on quantized operands.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>

#include "denote/typed/policy.h"
#include "eval/evaluator_impl.h"
#include "scalar/binary_fast_simd.h"
#include "typed/fp8_scaled.h"
#include "typed/mx_conv.h"
#include "typed/mx_dot.h"

namespace denote {
namespace {

// A linear node's weights [out, in] blocked along axis 1: their operand rows are mx_matmul's b columns.
struct MxWeight {
  int64_t id = 0;
  MxTensor w;
  mx_detail::Operand operand;
  std::optional<kernels::BlockPanel> panel;  // packed for the fused kernel (no special codes or scales)
};

// A linear node's weights as per-tensor scaled FP8 (MxPolicy::per_tensor).
struct ScaledWeight {
  int64_t id = 0, in = 0, out = 0;
  mx_detail::ScaledTensor w;
};

FpWord word_of(float f) { return FpWord{std::bit_cast<uint32_t>(f)}; }

// A binary32 value tensor's values (exact), as floats or doubles.
template <class T>
std::vector<T> values_of(const std::vector<FpWord>& words) {
  std::vector<T> v(words.size());
  for (size_t i = 0; i < words.size(); ++i) v[i] = mx_detail::float_of_word(words[i].bits);
  return v;
}

// binary32 results as the node's value.
Tensor<FpWord> words_of(const Shape& shape, const std::vector<float>& y) {
  Tensor<FpWord> t(shape, std::vector<FpWord>(y.size()));
  for (size_t k = 0; k < y.size(); ++k) t.data[k] = word_of(y[k]);
  return t;
}

// The working memory of one MX product (rows x k operands as values, codes and decoded elements; rows x
// n results) against the run's memory budget, checked before allocating (docs/CLI.md, --max-memory).
Status within_budget(const rules::EvalArgs<FpWord>& a, int64_t rows, int64_t k, int64_t n, double extra = 0) {
  const double bytes =
      static_cast<double>(rows) * static_cast<double>(k) * 26 + static_cast<double>(rows) * n * 48 + extra;
  const int64_t budget = effective_max_bytes(a.options);
  if (bytes <= static_cast<double>(budget)) return ok_status();
  return Status::error(ErrorCode::kResource,
                       fmt::format("the MX product needs about {:.0f} bytes ({} x {} operands, {} outputs a row), above "
                                   "the memory budget of {} (--max-memory)",
                                   bytes, rows, k, n, budget))
      .with_field("max-memory");
}

struct MxRule {
  const MxPolicy& p;
  const std::vector<MxWeight>& weights;
  const std::vector<ScaledWeight>& scaled;
  const std::vector<mx_detail::MxConvWeights>& convs;
  uint32_t& flags;
  bool fast = false;  // hardware binary32 (nearest even, the MXCSR in its default state)

  Result<Tensor<FpWord>> scaled_linear(const rules::EvalArgs<FpWord>& a, const ScaledWeight& w) const {
    if (!fast)
      return Status::error(ErrorCode::kUnsupported, "per-tensor scaled FP8 runs in hardware binary32: it needs "
                                                    "round to nearest even and the MXCSR in its default state");
    const Tensor<FpWord>& x = a.in();
    const int64_t rows = numel(x.shape.begin(), x.shape.end() - 1);  // K may be 0
    const std::vector<float> xf = values_of<float>(x.data);
    const std::vector<float> bias = values_of<float>(find_record(a.payload.linear, a.node.id)->bias);
    std::vector<float> y(static_cast<size_t>(rows * w.out));
    const mx_detail::ScaledTensor xq =
        mx_detail::scale_to_fp8(p.activations.element, xf.data(), static_cast<int64_t>(xf.size()), flags);
    mx_detail::scaled_linear(xq, w.w, bias.empty() ? nullptr : bias.data(), rows, w.in, w.out, y.data(), flags);
    return words_of(a.out_shape, y);
  }

  Result<Tensor<FpWord>> linear(BinaryContext& ctx, const rules::EvalArgs<FpWord>& a, const MxWeight& w) const {
    const Tensor<FpWord>& x = a.in();
    const int64_t in = w.w.shape[1], out = w.w.shape[0], rows = numel(x.shape.begin(), x.shape.end() - 1);
    DENOTE_RETURN_IF_ERROR(within_budget(a, rows, in, out));
    DENOTE_ASSIGN_OR_RETURN(MxQuantized q, mx_quantize(p.activations, Tensor<double>({rows, in}, values_of<double>(x.data)),
                                                       1, p.block));
    const BinaryFormat acc = binary32_format();
    const mx_detail::DotSetup setup{q.q, w.w, acc, p.block};
    MxMatmulResult y;
    bool fused = false;
    if (fast && w.panel) {
      const mx_detail::DenseOperand d = mx_detail::dense_of(q.q.format, q.q.elements.data(), q.q.scales.data(), rows,
                                                            in, w.panel->block, !w.panel->norm.empty());
      fused = w.panel->norm.empty() ? mx_detail::mx_fused_binary32(d, rows, *w.panel, y)
                                    : mx_detail::mx_certified_binary32(setup, d, nullptr, &q.q, rows, *w.panel, w.operand, y);
    }
    if (!fused) y = mx_detail::multiply(setup, mx_detail::operand_of(q.q, false), w.operand);
    flags |= q.flags | y.flags;
    const LinearRecord<FpWord>* r = find_record(a.payload.linear, a.node.id);
    Tensor<FpWord> out_t(a.out_shape, std::vector<FpWord>(y.y.data.size()));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t o = 0; o < out; ++o) {
        const size_t k = static_cast<size_t>(i * out + o);
        const auto v = static_cast<float>(y.y.data[k]);  // a binary32 value: exact
        if (r->bias.empty()) {
          out_t.data[k] = word_of(v);
        } else if (fast) {
          out_t.data[k] = word_of(mx_detail::add_binary32(v, mx_detail::float_of_word(r->bias[static_cast<size_t>(o)].bits),
                                                          flags));
        } else {
          out_t.data[k] = ctx.add(word_of(v), r->bias[static_cast<size_t>(o)]);
        }
      }
    return out_t;
  }

  Result<Tensor<FpWord>> conv(const rules::EvalArgs<FpWord>& a, const mx_detail::MxConvWeights& w) const {
    if (!fast)
      return Status::error(ErrorCode::kUnsupported, "an MX conv sums in hardware binary32: it needs round to nearest "
                                                    "even and the MXCSR in its default state");
    const Tensor<FpWord>& x = a.in();
    const int64_t lead_cout = w.config.out_channels, positions = numel(a.out_shape) / std::max<int64_t>(lead_cout, 1);
    // plus the table of each output position's input offset per kernel position (src/typed/mx_conv.cc)
    const double taps = static_cast<double>(numel(a.out_shape) / std::max<int64_t>(lead_cout, 1)) *
                        static_cast<double>(numel(w.config.window.kernel)) * 8;
    DENOTE_RETURN_IF_ERROR(within_budget(a, positions, w.config.in_channels, lead_cout, taps));
    const Tensor<double> xd(x.shape, values_of<double>(x.data));
    const std::vector<float> bias = values_of<float>(find_record(a.payload.conv, a.node.id)->bias);
    DENOTE_ASSIGN_OR_RETURN(std::vector<float> y, mx_detail::mx_conv(w, p.activations, p.block, xd, a.out_shape, bias,
                                                                     flags));
    return words_of(a.out_shape, y);
  }

  // A matmul of two values ([.., M, K] @ [.., K, N], equal batch dims): both quantized along K at each
  // call, one MX product per batch entry.
  Result<Tensor<FpWord>> matmul(const rules::EvalArgs<FpWord>& a) const {
    const Tensor<FpWord>& x = a.in(0);
    const Tensor<FpWord>& y = a.in(1);
    const int64_t M = x.shape[x.shape.size() - 2], K = x.shape.back(), N = y.shape.back();
    const int64_t batch = numel(x.shape.begin(), x.shape.end() - 2);
    DENOTE_RETURN_IF_ERROR(within_budget(a, M + N, K, M > 0 ? N : 0));
    Tensor<FpWord> out_t(a.out_shape, std::vector<FpWord>(static_cast<size_t>(batch * M * N)));
    for (int64_t e = 0; e < batch; ++e) {
      Tensor<double> xa({M, K}, std::vector<double>(static_cast<size_t>(M * K)));
      Tensor<double> yb({K, N}, std::vector<double>(static_cast<size_t>(K * N)));
      for (size_t i = 0; i < xa.data.size(); ++i) xa.data[i] = mx_detail::float_of_word(x.data[e * M * K + i].bits);
      for (size_t i = 0; i < yb.data.size(); ++i) yb.data[i] = mx_detail::float_of_word(y.data[e * K * N + i].bits);
      DENOTE_ASSIGN_OR_RETURN(MxQuantized qa, mx_quantize(p.activations, xa, 1, p.block));
      DENOTE_ASSIGN_OR_RETURN(MxQuantized qb, mx_quantize(p.activations, yb, 0, p.block));
      DENOTE_ASSIGN_OR_RETURN(MxMatmulResult r, mx_matmul(qa.q, qb.q, binary32_format()));
      flags |= qa.flags | qb.flags | r.flags;
      for (size_t i = 0; i < r.y.data.size(); ++i)
        out_t.data[e * M * N + i] = word_of(static_cast<float>(r.y.data[i]));  // binary32 values: exact
    }
    return out_t;
  }

  // Both operands of rank >= 2 with the same batch dims (no broadcast, no vector operand).
  static bool plain_matmul(const rules::EvalArgs<FpWord>& a) {
    const Shape& x = a.in(0).shape;
    const Shape& y = a.in(1).shape;
    return x.size() >= 2 && x.size() == y.size() && std::equal(x.begin(), x.end() - 2, y.begin());
  }

  Result<Tensor<FpWord>> operator()(BinaryContext& ctx, const rules::EvalArgs<FpWord>& a) const {
    const OpInfo& info = op_info(a.node.op);  // a contraction of two values: matmul
    if (!p.per_tensor && info.family == OpFamily::Contraction && a.parents.size() == 2 && plain_matmul(a))
      return matmul(a);
    auto cv = std::lower_bound(convs.begin(), convs.end(), a.node.id,
                               [](const mx_detail::MxConvWeights& w, int64_t id) { return w.id < id; });
    if (cv != convs.end() && cv->id == a.node.id) return conv(a, *cv);
    auto st = std::lower_bound(scaled.begin(), scaled.end(), a.node.id,
                               [](const ScaledWeight& w, int64_t id) { return w.id < id; });
    if (st != scaled.end() && st->id == a.node.id) return scaled_linear(a, *st);
    auto it = std::lower_bound(weights.begin(), weights.end(), a.node.id,
                               [](const MxWeight& w, int64_t id) { return w.id < id; });
    if (it != weights.end() && it->id == a.node.id) return linear(ctx, a, *it);
    return detail::node_rule<BinaryContext>(a.node.op)(ctx, a);
  }
};

}  // namespace

Result<MxPolicy> make_mx_policy(std::string_view activations, std::string_view weights, int64_t block) {
  MxPolicy p;
  Result<MxFormat> fa = parse_mx_format(activations);
  if (!fa.ok()) return fa.status().with_field("arith");
  Result<MxFormat> fw = parse_mx_format(weights.empty() ? activations : weights);
  if (!fw.ok()) return fw.status().with_field("weights");
  DENOTE_RETURN_IF_ERROR(mx_check_block(block));
  p.activations = *fa;
  p.weights = *fw;
  p.block = block;
  return p;
}

Result<MxPolicy> parse_mx_policy(std::string_view spec) {
  std::string_view head = spec.substr(0, spec.find(','));
  std::string weights;
  int64_t block = 32;
  bool per_tensor = false, block_given = false;
  for (size_t at = head.size(); at < spec.size();) {
    const size_t next = std::min(spec.find(',', at + 1), spec.size());
    const std::string_view item = spec.substr(at + 1, next - at - 1);
    if (item.rfind("weights=", 0) == 0 && item.size() > 8) {
      weights = std::string(item.substr(8));
    } else if (item.rfind("block=", 0) == 0 && item.size() > 6 && item.size() < 15 &&
               item.find_first_not_of("0123456789", 6) == std::string_view::npos) {
      block = std::stoll(std::string(item.substr(6)));
      block_given = true;
    } else if (item == "scale=tensor") {
      per_tensor = true;
    } else {
      return error_status(fmt::format("MX arithmetic '{}': unknown part '{}'; expected "
                                      "FORMAT[,weights=FORMAT][,block=N|,scale=tensor]",
                                      spec, item))
          .with_field("arith");
    }
    at = next;
  }
  DENOTE_ASSIGN_OR_RETURN(MxPolicy p, make_mx_policy(head, weights, block));
  p.per_tensor = per_tensor;
  if (per_tensor && (block_given || p.activations.bits != 8 || p.weights.bits != 8 || p.activations.kind != MxKind::Float ||
                     p.weights.kind != MxKind::Float))
    return error_status(fmt::format("MX arithmetic '{}': scale=tensor takes the FP8 formats (mxfp8_e4m3, mxfp8_e5m2) "
                                    "and no block",
                                    spec))
        .with_field("arith");
  return p;
}

bool is_mx_spec(std::string_view spec) { return spec.rfind("mx", 0) == 0; }

struct MxRunner::Prepared {
  std::vector<MxWeight> weights;      // by node id (MX blocks)
  std::vector<ScaledWeight> scaled;   // by node id (per-tensor scaled FP8)
  std::vector<mx_detail::MxConvWeights> convs;  // by node id (MX blocks along the input channels)
  Payload<FpWord> payload;        // in binary32 (parameters are data: reading them raises no flag)
};

Result<MxRunner> MxRunner::prepare(const Model& m, const MxPolicy& p) {
  auto prep = std::make_shared<Prepared>();
  for (const auto& [id, rec] : m.payload.linear) {
    if (p.per_tensor) {  // parameters are data: their conversion raises no flag
      std::vector<float> wf;
      for (double v : rec.weight) wf.push_back(mx_detail::to_float(v));
      uint32_t ignored = 0;
      prep->scaled.push_back(
          ScaledWeight{id, rec.in_dim, rec.out_dim, mx_detail::scale_to_fp8(p.weights.element, wf.data(),
                                                                           static_cast<int64_t>(wf.size()), ignored)});
      continue;
    }
    Result<MxQuantized> q = mx_quantize(p.weights, Tensor<double>({rec.out_dim, rec.in_dim}, rec.weight), 1, p.block);
    if (!q.ok()) return q.status().with_node(id, fmt::format("MX: node {}: weights: {}", id, q.status().message()));
    MxWeight w{id, std::move(q->q), {}, std::nullopt};
    w.operand = mx_detail::operand_of(w.w, false);
    const bool exact_sums = mx_detail::fused_applies(p.activations, p.weights, p.block);
    const mx_detail::DenseOperand d = mx_detail::dense_of(w.w.format, w.w.elements.data(), w.w.scales.data(), rec.out_dim,
                                                          rec.in_dim, p.block, !exact_sums);
    if (d.ok)
      w.panel = kernels::pack_block_panel(d.v.data(), d.s.data(), rec.out_dim, rec.in_dim, p.block,
                                          exact_sums ? nullptr : d.t.data());
    prep->weights.push_back(std::move(w));
  }
  for (const auto& [id, rec] : m.payload.conv) {
    if (p.per_tensor) break;
    Result<std::optional<mx_detail::MxConvWeights>> c = mx_detail::prepare_conv(id, rec, p.weights, p.block);
    if (!c.ok()) return c.status().with_node(id, fmt::format("MX: node {}: weights: {}", id, c.status().message()));
    if (*c) prep->convs.push_back(std::move(**c));
  }
  const BinaryContext ctx(binary32_format(), p.rounding);
  prep->payload = convert_payload<FpWord>(m.payload, [&](double v) { return ctx.from_double(v); });
  MxRunner r;
  r.model_ = &m;
  r.policy_ = p;
  r.prepared_ = std::move(prep);
  return r;
}

Result<PolicyValues> MxRunner::run(std::span<const Tensor<double>> inputs, std::span<const int64_t> ids,
                                   const EvalOptions& o) const {
  BinaryContext ctx(binary32_format(), policy_.rounding);
  const bool fast = policy_.rounding == Rounding::NearestEven && fastsimd::mxcsr_is_default();
  uint32_t mx_flags = 0;
  std::vector<Tensor<FpWord>> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<FpWord> d;
    d.reserve(inputs[k].data.size());
    for (double v : inputs[k].data) d.push_back(fast ? word_of(mx_detail::to_binary32(v, mx_flags)) : ctx.from_double(v));
    in.emplace_back(inputs[k].shape, std::move(d));
  }
  const Payload<FpWord>& payload = prepared_->payload;
  PolicyValues out;
  MxRule rule{policy_, prepared_->weights, prepared_->scaled, prepared_->convs, mx_flags, fast};
  detail::EvalPass<BinaryContext, MxRule> pass{ctx, payload, o, rule, nullptr};
  walk::Config cfg;
  cfg.options = o;
  ValueTable<FpWord> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(model_->graph, pass, std::span<const Tensor<FpWord>>(in), cfg, table, present));
  for (int64_t id : ids) {
    const Tensor<FpWord>& t = table[static_cast<size_t>(id)];
    std::vector<double> v;
    v.reserve(t.data.size());
    for (const FpWord& w : t.data) v.push_back(ctx.to_double(w));
    out.values.emplace_back(t.shape, std::move(v));
  }
  out.flags = ctx.flags() | mx_flags;
  return out;
}

}  // namespace denote
