// The reference provider's prepared kernels (denote/plan/prepared.h) for compiled plans: unary
// elementwise ops (fusable into a producer's output pass), same-shape binary elementwise ops,
// max/avg pooling and batch_norm_eval. Each computes exactly what the op's rule in src/ops/ computes,
// with the same scalar operations in the same order (so bit for bit); the differential tests check
// that. Every other op, and any node whose payload is not usable, gets no prepared form.
#include "reference_prepared.h"

#include <cstring>

#include "denote/plan/capsule.h"
#include "denote/plan/native_context.h"
#include "prepared_util.h"
#include "../ops/axis_lanes.h"
#include "../ops/normalization_eval.h"
#include "../ops/window_eval.h"

namespace denote {

namespace {

using prepared::chunk_range;
using prepared::chunks_of;
using prepared::kElementChunk;

// data[i] = expr(x) over the native context: the expressions of src/ops/pointwise_eval.h.
#define DENOTE_ARRAY_FN(name, expr)                   \
  template <class S>                                  \
  void array_##name(S* p, int64_t n) {                \
    const NativeContextFor<S> ctx;                    \
    for (int64_t i = 0; i < n; ++i) {                 \
      const S x = p[i];                               \
      p[i] = expr;                                    \
    }                                                 \
  }
DENOTE_ARRAY_FN(Relu, ctx.relu(x))
DENOTE_ARRAY_FN(Tanh, ctx.tanh(x))
DENOTE_ARRAY_FN(Abs, ctx.abs(x))
DENOTE_ARRAY_FN(Sqrt, ctx.sqrt(x))
DENOTE_ARRAY_FN(Inv, ctx.div(ctx.one(), x))
DENOTE_ARRAY_FN(Sigmoid, ctx.sigmoid(x))
DENOTE_ARRAY_FN(Exp, ctx.exp(x))
DENOTE_ARRAY_FN(Sin, ctx.sin(x))
DENOTE_ARRAY_FN(Cos, ctx.cos(x))
DENOTE_ARRAY_FN(Softplus, ctx.softplus(x))
DENOTE_ARRAY_FN(Neg, ctx.neg(x))
DENOTE_ARRAY_FN(Rsqrt, ctx.rsqrt(x))
DENOTE_ARRAY_FN(Erf, ctx.erf(x))
DENOTE_ARRAY_FN(Gelu, ctx.gelu(x))
#undef DENOTE_ARRAY_FN

template <class S>
struct UnaryEntry {
  Op op;
  ArrayFn<S> fn;
};

template <class S>
ArrayFn<S> unary_fn(Op op) {
  static const UnaryEntry<S> kTable[] = {
      {Op::Relu, &array_Relu<S>}, {Op::Tanh, &array_Tanh<S>},       {Op::Abs, &array_Abs<S>},
      {Op::Sqrt, &array_Sqrt<S>}, {Op::Inv, &array_Inv<S>},         {Op::Sigmoid, &array_Sigmoid<S>},
      {Op::Exp, &array_Exp<S>},   {Op::Sin, &array_Sin<S>},         {Op::Cos, &array_Cos<S>},
      {Op::Softplus, &array_Softplus<S>}, {Op::Neg, &array_Neg<S>}, {Op::Rsqrt, &array_Rsqrt<S>},
      {Op::Erf, &array_Erf<S>},   {Op::Gelu, &array_Gelu<S>},
  };
  for (const UnaryEntry<S>& e : kTable)
    if (e.op == op) return e.fn;
  return nullptr;
}

// out = f(in) in chunks of kElementChunk values, then the epilogue.
template <class S>
std::optional<PreparedKernel<S>> prepare_unary(const PrepareArgs<S>& a, ArrayFn<S> fn) {
  const int64_t n = numel(a.out_shape);
  PreparedKernel<S> k;
  k.chunks = chunks_of(n, kElementChunk);
  k.takes_epilogue = true;
  k.pointwise = fn;
  k.is_relu = a.node.op == Op::Relu;
  k.run = [n, fn](const KernelCall<S>& c) {
    const auto r = chunk_range(c.chunk, n, kElementChunk);
    S* y = c.out + r.begin;
    if (c.in[0] + r.begin != y) std::memcpy(y, c.in[0] + r.begin, static_cast<size_t>(r.size()) * sizeof(S));
    fn(y, r.size());
    c.epilogue->apply(y, r.size());
  };
  return k;
}

template <class S, class F>
PreparedKernel<S> binary_kernel(int64_t n, F f) {
  PreparedKernel<S> k;
  k.chunks = chunks_of(n, kElementChunk);
  k.takes_epilogue = true;
  k.run = [n, f](const KernelCall<S>& c) {
    const NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, n, kElementChunk);
    const S* x = c.in[0];
    const S* y = c.in[1];
    for (int64_t i = r.begin; i < r.end; ++i) c.out[i] = f(ctx, x[i], y[i]);
    c.epilogue->apply(c.out + r.begin, r.size());
  };
  return k;
}

// The binary elementwise rules of src/ops/pointwise_eval.h, for parents of equal shape.
template <class S>
std::optional<PreparedKernel<S>> prepare_binary(const PrepareArgs<S>& a) {
  using Ctx = NativeContextFor<S>;
  if (a.parent_shapes.size() != 2 || a.parent_shapes[0] != a.parent_shapes[1] || a.parent_shapes[0] != a.out_shape)
    return std::nullopt;
  const int64_t n = numel(a.out_shape);
  const std::optional<BackendOp> op = backend_op_of(a.node.op);
  if (!op) return std::nullopt;
  switch (*op) {  // the provider's backend ops of the binary family: one line per rule it mirrors
    case BackendOp::Add: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.add(x, y); });
    case BackendOp::Sub: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.sub(x, y); });
    case BackendOp::Mul: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.mul(x, y); });
    case BackendOp::Max: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.max(x, y); });
    case BackendOp::Min: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.min(x, y); });
    case BackendOp::Div: return binary_kernel<S>(n, [](const Ctx& c, S x, S y) { return c.div(x, y); });
    default: return std::nullopt;
  }
}

// The taps of every output position of a pool window, as offsets (CSR: begin[p] .. begin[p + 1]).
struct TapTable {
  std::vector<int64_t> begin, in;
};

TapTable tap_table(const rules::Window& w) {
  TapTable t;
  rules::for_each_window(w, [&](int64_t, const std::vector<rules::Tap>& taps) {
    t.begin.push_back(static_cast<int64_t>(t.in.size()));
    for (const rules::Tap& tap : taps) t.in.push_back(tap.in);
  });
  t.begin.push_back(static_cast<int64_t>(t.in.size()));
  return t;
}

// max_pool / avg_pool as eval_MaxPool / eval_AvgPool: the same taps in the same order per window.
template <class S>
std::optional<PreparedKernel<S>> prepare_pool(const PrepareArgs<S>& a, bool is_max) {
  const Shape& in = a.parent_shapes[0];
  const rules::Window w = rules::pool_window(std::get<WindowConfig>(a.node.attrs), in, a.out_shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  if (out_vol == 0) return std::nullopt;
  const int64_t lead = numel(a.out_shape) / out_vol;
  auto taps = std::make_shared<TapTable>(tap_table(w));
  for (int64_t p = 0; p < out_vol; ++p)
    if (is_max && taps->begin[p] == taps->begin[p + 1]) return std::nullopt;  // the rule's error
  double volume = 1.0;
  for (int64_t k : std::get<WindowConfig>(a.node.attrs).kernel) volume *= static_cast<double>(k);
  const S divisor = NativeContextFor<S>{}.from_double(volume);
  const int64_t per = prepared::blocks_per_chunk(lead, out_vol + static_cast<int64_t>(taps->in.size()), kElementChunk);
  PreparedKernel<S> k;
  k.chunks = chunks_of(lead, per);
  k.takes_epilogue = true;
  k.run = [=](const KernelCall<S>& c) {
    const NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, lead, per);
    for (int64_t l = r.begin; l < r.end; ++l) {
      const S* xs = c.in[0] + l * in_vol;
      S* ys = c.out + l * out_vol;
      for (int64_t p = 0; p < out_vol; ++p) {
        const int64_t* t = taps->in.data() + taps->begin[p];
        const int64_t count = taps->begin[p + 1] - taps->begin[p];
        if (is_max) {
          S m = xs[t[0]];
          for (int64_t j = 1; j < count; ++j) m = ctx.max(m, xs[t[j]]);
          ys[p] = m;
        } else {
          S acc = ctx.zero();
          for (int64_t j = 0; j < count; ++j) acc = ctx.add(acc, xs[t[j]]);
          ys[p] = ctx.div(acc, divisor);
        }
      }
      c.epilogue->apply(ys, out_vol);
    }
  };
  return k;
}

// batch_norm_eval as eval_BatchNormEval: ((x - mean) / sqrt(var + eps)) * gamma + beta.
template <class S>
std::optional<PreparedKernel<S>> prepare_batch_norm(const PrepareArgs<S>& a) {
  const auto& attrs = std::get<BatchNormAttrs>(a.node.attrs);
  const auto* rec = find_record(a.payload.batch_norm, a.node.id);
  if (!rec || !rules::check_batch_norm_record(*rec, a.node.id, attrs.channels).ok()) return std::nullopt;
  const rules::AxisLanes lanes = rules::axis_lanes(a.parent_shapes[0], attrs.channel_axis);
  if (lanes.extent != attrs.channels) return std::nullopt;
  const NativeContextFor<S> ctx0;
  const S eps = ctx0.from_double(rec->eps);
  std::vector<S> denom;
  for (int64_t c = 0; c < lanes.extent; ++c) denom.push_back(ctx0.sqrt(ctx0.add(rec->var[c], eps)));
  const int64_t outer = lanes.outer, extent = lanes.extent, inner = lanes.inner;
  const int64_t per = prepared::blocks_per_chunk(outer, extent * inner, kElementChunk);
  PreparedKernel<S> k;
  k.chunks = chunks_of(outer, per);
  k.takes_epilogue = true;
  k.run = [=, mean = rec->mean, gamma = rec->gamma, beta = rec->beta](const KernelCall<S>& c) {
    const NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, outer, per);
    for (int64_t o = r.begin; o < r.end; ++o)
      for (int64_t ch = 0; ch < extent; ++ch) {
        const S* x = c.in[0] + (o * extent + ch) * inner;
        S* y = c.out + (o * extent + ch) * inner;
        for (int64_t i = 0; i < inner; ++i)
          y[i] = ctx.add(ctx.mul(ctx.div(ctx.sub(x[i], mean[ch]), denom[ch]), gamma[ch]), beta[ch]);
        c.epilogue->apply(y, inner);
      }
  };
  return k;
}

}  // namespace

template <class S>
std::optional<PreparedKernel<S>> reference_prepare(const PrepareArgs<S>& a) {
  if (a.node.parents.size() != a.parent_shapes.size()) return std::nullopt;
  if (ArrayFn<S> fn = unary_fn<S>(a.node.op)) return prepare_unary(a, fn);
  if (a.node.op == Op::MaxPool || a.node.op == Op::AvgPool) return prepare_pool(a, a.node.op == Op::MaxPool);
  if (a.node.op == Op::BatchNormEval) return prepare_batch_norm(a);
  return prepare_binary(a);
}

template std::optional<PreparedKernel<double>> reference_prepare<double>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> reference_prepare<float>(const PrepareArgs<float>&);

}  // namespace denote
