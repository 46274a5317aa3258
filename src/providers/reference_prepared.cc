// The reference provider's prepared kernels (denote/plan/prepared.h) for compiled plans: unary
// elementwise ops (fusable into a producer's output pass), same-shape binary elementwise ops,
// max/avg pooling, batch_norm_eval, matmul (broadcast batch dims included) and softmax, log_softmax,
// hard_masked_softmax. Each computes exactly what the op's rule in src/ops/ computes, with the same
// scalar operations in the same order for every output value (so bit for bit); the tests check that
// against denote_all. Every other op, and any node whose payload is not usable, gets no prepared form.
#include "reference_prepared.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "denote/plan/capsule.h"
#include "denote/plan/native_context.h"
#include "matmul_layout.h"
#include "prepared_util.h"
#include "../ops/axis_lanes.h"
#include "../ops/native_fold.h"
#include "../ops/normalization_eval.h"
#include "../ops/pointwise_eval.h"
#include "../ops/window_eval.h"

namespace denote {

namespace {

using prepared::chunk_range;
using prepared::chunks_of;
using prepared::kElementChunk;

// data[i] = the op's scalar rule (src/ops/pointwise_eval.h) of data[i], over the native context.
template <class S, class Rule>
void array_fn(S* p, int64_t n) {
  const NativeContextFor<S> ctx;
  for (int64_t i = 0; i < n; ++i) p[i] = Rule::apply(ctx, p[i]);
}

template <class S>
struct UnaryEntry {
  Op op;
  ArrayFn<S> fn;
};

template <class S>
ArrayFn<S> unary_fn(Op op) {
#define DENOTE_UNARY_ENTRY(name, expr) {Op::name, &array_fn<S, rules::Unary##name>},
  static const UnaryEntry<S> kTable[] = {DENOTE_UNARY_RULES(DENOTE_UNARY_ENTRY)};
#undef DENOTE_UNARY_ENTRY
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
  k.is_relu = fn == &array_fn<S, rules::UnaryRelu>;  // max(x, 0): the plan may fuse it into a product
  k.run = [n, fn](const KernelCall<S>& c) {
    const auto r = chunk_range(c.chunk, n, kElementChunk);
    S* y = c.out + r.begin;
    if (c.in[0] + r.begin != y) std::memcpy(y, c.in[0] + r.begin, static_cast<size_t>(r.size()) * sizeof(S));
    fn(y, r.size());
    c.epilogue->apply(y, r.size());
  };
  return k;
}

template <class S, class Rule>
PreparedKernel<S> binary_kernel(int64_t n) {
  PreparedKernel<S> k;
  k.chunks = chunks_of(n, kElementChunk);
  k.takes_epilogue = true;
  k.run = [n](const KernelCall<S>& c) {
    const NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, n, kElementChunk);
    const S* x = c.in[0];
    const S* y = c.in[1];
    for (int64_t i = r.begin; i < r.end; ++i) c.out[i] = Rule::apply(ctx, x[i], y[i]);
    c.epilogue->apply(c.out + r.begin, r.size());
  };
  return k;
}

template <class S>
struct BinaryEntry {
  Op op;
  PreparedKernel<S> (*make)(int64_t n);
};

// The binary elementwise rules of src/ops/pointwise_eval.h, for parents of equal shape.
template <class S>
std::optional<PreparedKernel<S>> prepare_binary(const PrepareArgs<S>& a) {
  if (a.parent_shapes.size() != 2 || a.parent_shapes[0] != a.parent_shapes[1] || a.parent_shapes[0] != a.out_shape)
    return std::nullopt;
#define DENOTE_BINARY_ENTRY(name, expr) {Op::name, &binary_kernel<S, rules::Binary##name>},
  static const BinaryEntry<S> kTable[] = {DENOTE_BINARY_RULES(DENOTE_BINARY_ENTRY)};
#undef DENOTE_BINARY_ENTRY
  for (const BinaryEntry<S>& e : kTable)
    if (e.op == a.node.op) return e.make(numel(a.out_shape));
  return std::nullopt;
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

// Multiply-adds per chunk of a matmul (chunks are whole output rows).
constexpr int64_t kMatmulChunk = 65536;

// matmul as eval_Matmul: batch matrices after 1-D promotion and broadcasting (matmul_layout.h); the
// chunks are runs of output rows (batch matrix t, row i) fixed by the shapes.
template <class S>
std::optional<PreparedKernel<S>> prepare_matmul(const PrepareArgs<S>& a) {
  std::optional<prepared::MatmulLayout> layout = prepared::matmul_layout(a);
  if (!layout) return std::nullopt;
  auto l = std::make_shared<const prepared::MatmulLayout>(std::move(*layout));
  const int64_t rows = l->batches() * l->m;
  const int64_t per = prepared::blocks_per_chunk(rows, l->k * l->n, kMatmulChunk);
  PreparedKernel<S> k;
  k.chunks = chunks_of(rows, per);
  k.takes_epilogue = true;
  k.run = [l, rows, per](const KernelCall<S>& c) {
    const NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, rows, per);
    for (int64_t g = r.begin; g < r.end; ++g) {
      const int64_t t = g / l->m, i = g % l->m;
      S* y = c.out + g * l->n;
      const S* arow = c.in[0] + l->a_off[static_cast<size_t>(t)] + i * l->k;
      rules::native_fold::matmul_row(ctx, arow, c.in[1] + l->b_off[static_cast<size_t>(t)], y, l->k, l->n);
      c.epilogue->apply(y, l->n);
    }
  };
  return k;
}

// softmax, log_softmax (the node's axis) and hard_masked_softmax (the last axis, blocked entries 0)
// through the rules' own softmax_lane (src/ops/normalization_eval.h) on the plan's buffers; chunks
// are runs of lanes. Lanes along the last axis are contiguous rows, and then the node takes an
// epilogue (applied per lane); lanes of an interior axis are strided, and then it takes none.
enum class SoftmaxForm : uint8_t { Plain, Log, Masked };
template <class S, SoftmaxForm F>
std::optional<PreparedKernel<S>> prepare_softmax(const PrepareArgs<S>& a) {
  if (a.parent_shapes.size() != 1 || a.parent_shapes[0] != a.out_shape || a.out_shape.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(a.out_shape.size());
  constexpr bool masked = F == SoftmaxForm::Masked;
  constexpr bool log_form = F == SoftmaxForm::Log;
  std::shared_ptr<const std::vector<uint8_t>> mask;
  int64_t axis = rank - 1;
  if (masked) {
    const auto& hm = std::get<HardMask>(a.node.attrs);
    if (static_cast<int64_t>(hm.allowed.size()) != numel(a.out_shape)) return std::nullopt;
    mask = std::make_shared<const std::vector<uint8_t>>(hm.allowed);
  } else {
    axis = std::get<AxisAttrs>(a.node.attrs).axis;
    if (axis < 0 || axis >= rank) return std::nullopt;
  }
  const rules::AxisLanes lanes = rules::axis_lanes(a.out_shape, axis);
  const int64_t count = lanes.count();
  const int64_t per = prepared::blocks_per_chunk(count, lanes.extent, kElementChunk);
  PreparedKernel<S> k;
  k.chunks = chunks_of(count, per);
  k.takes_epilogue = lanes.inner == 1;
  k.run = [=](const KernelCall<S>& c) {
    NativeContextFor<S> ctx;
    const auto r = chunk_range(c.chunk, count, per);
    for (int64_t l = r.begin; l < r.end; ++l) {
      if (mask) {  // the rule starts from zeros; blocked entries keep them
        for (int64_t e = 0; e < lanes.extent; ++e) c.out[lanes.at(l, e)] = ctx.zero();
        rules::softmax_lane(ctx, c.in[0], c.out, lanes, l, /*log_form=*/false,
                            [&m = *mask](int64_t i) { return m[static_cast<size_t>(i)] != 0; });
      } else {
        rules::softmax_lane(ctx, c.in[0], c.out, lanes, l, log_form, [](int64_t) { return true; });
      }
      if (lanes.inner == 1) c.epilogue->apply(c.out + lanes.base(l), lanes.extent);
    }
  };
  return k;
}

template <class S>
std::optional<PreparedKernel<S>> prepare_max_pool(const PrepareArgs<S>& a) {
  return prepare_pool(a, true);
}
template <class S>
std::optional<PreparedKernel<S>> prepare_avg_pool(const PrepareArgs<S>& a) {
  return prepare_pool(a, false);
}

// The kernel of each op that is not a unary pointwise one, a table over ops.def: the rows below, and
// the binary kernel (which declines the ops it has no rule for) for every other op.
template <class S, Op O>
constexpr PrepareFn<S> kPrepare = &prepare_binary<S>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::MaxPool> = &prepare_max_pool<S>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::AvgPool> = &prepare_avg_pool<S>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::BatchNormEval> = &prepare_batch_norm<S>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::Matmul> = &prepare_matmul<S>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::Softmax> = &prepare_softmax<S, SoftmaxForm::Plain>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::LogSoftmax> = &prepare_softmax<S, SoftmaxForm::Log>;
template <class S>
constexpr PrepareFn<S> kPrepare<S, Op::HardMaskedSoftmax> = &prepare_softmax<S, SoftmaxForm::Masked>;

}  // namespace

template <class S>
std::optional<PreparedKernel<S>> reference_prepare(const PrepareArgs<S>& a) {
  static constexpr PrepareFn<S> kTable[] = {
#define DENOTE_OP(name, ...) kPrepare<S, Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kTable) == kNumOps);
  if (a.node.parents.size() != a.parent_shapes.size()) return std::nullopt;
  if (ArrayFn<S> fn = unary_fn<S>(a.node.op)) return prepare_unary(a, fn);
  return kTable[static_cast<size_t>(a.node.op)](a);
}

template std::optional<PreparedKernel<double>> reference_prepare<double>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> reference_prepare<float>(const PrepareArgs<float>&);

}  // namespace denote
