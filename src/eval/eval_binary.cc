// Explicit instantiation of the evaluator for BinaryContext (software binary formats), and the
// context's whole-tensor rules (issue 20): where the format has a fast path (binary_fast.h),
// linear, matmul, conv, add/sub/mul_elem, relu and avg_pool run as tensor kernels that give the op table's words, flags
// and errors; any other case (no fast path, a shape or payload the op table's rule reports) goes to
// the op table's rule.
#include "evaluator_impl.h"

#include <algorithm>

#include "denote/scalar/binary_fast.h"
#include "base/thread_pool.h"
#include "scalar/binary_fast_fold.h"

namespace denote {

namespace {

using Value = Tensor<FpWord>;
using Args = rules::EvalArgs<FpWord>;

// fn(env, r0, r1) over rows [0, rows) (or any other independent units, e.g. linear's outputs): on the calling thread, or, with ctx's pool and at least
// kSplitWork operations, in chunks of rows fixed by `rows` and the thread count, each with its own
// FpEnv; the flags are or-ed and the error kept is the lowest chunk's first (the sequential first).
constexpr int64_t kSplitWork = int64_t{1} << 16;

// `unit_chunk` > 0: at most that many units a chunk, on one thread too (each chunk in order).
template <class Fn>
void split_rows(BinaryContext& ctx, int64_t rows, int64_t work_per_row, Fn&& fn, int64_t unit_chunk = 0) {
  detail::ThreadPool* pool = ctx.pool();
  if (!pool || rows < 2 || rows * work_per_row < kSplitWork) {
    if (unit_chunk <= 0) return fn(ctx.env(), int64_t{0}, rows);
    for (int64_t r0 = 0; r0 < rows; r0 += unit_chunk) fn(ctx.env(), r0, std::min(rows, r0 + unit_chunk));
    return;
  }
  int64_t chunks = 4 * pool->threads();
  if (unit_chunk > 0) chunks = std::max(chunks, (rows + unit_chunk - 1) / unit_chunk);
  chunks = std::min(chunks, rows);
  std::vector<FpEnv> envs(static_cast<size_t>(chunks), FpEnv{ctx.rounding(), 0, {}});
  struct State {
    std::remove_reference_t<Fn>* fn;
    FpEnv* envs;
    int64_t rows, chunks;
  } st{&fn, envs.data(), rows, chunks};
  pool->parallel_for(
      chunks,
      [](void* p, int64_t c, int) {
        auto& s = *static_cast<State*>(p);
        (*s.fn)(s.envs[c], s.rows * c / s.chunks, s.rows * (c + 1) / s.chunks);
      },
      &st);
  FpEnv& env = ctx.env();
  for (const FpEnv& e : envs) {
    env.flags |= e.flags;
    if (env.error.empty() && !e.error.empty()) env.error = e.error;
  }
}

Result<Value> linear_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  const auto* rec = find_record(a.payload.linear, a.node.id);
  const Value& x = a.in();
  if (!ff || !rec || x.shape.empty()) return rules::eval_Linear(ctx, a);
  Shape expected = x.shape;
  expected.back() = rec->out_dim;
  const int64_t out = rec->out_dim, in = rec->in_dim;
  const bool fits = expected == a.node.out_shape && x.shape.back() == in &&
                    static_cast<int64_t>(rec->weight.size()) == out * in &&
                    static_cast<int64_t>(rec->bias.size()) == out;
  if (!fits) return rules::eval_Linear(ctx, a);  // its error texts
  const int64_t rows = numel(x.shape.begin(), x.shape.end() - 1);
  Value y;
  y.shape = expected;
  y.data.resize(static_cast<size_t>(rows * out));
  // One row (batch 1): the outputs split instead, each chunk a contiguous slice of y, in chunks of at
  // most 32 outputs on one thread too: fast_linear decodes and transposes the weights it is given on
  // every call (about 40% of the fold's time for one row), which stays in cache only in chunks. The
  // units are blocks of kLaneBlock outputs (the fold's lane count: a chunk of fewer outputs costs a
  // whole block), two a chunk.
  constexpr int64_t kLaneBlock = 16;
  if (rows == 1) {
    const int64_t blocks = (out + kLaneBlock - 1) / kLaneBlock;
    split_rows(
        ctx, blocks, kLaneBlock * in,
        [&](FpEnv& env, int64_t b0, int64_t b1) {
          const int64_t o0 = b0 * kLaneBlock, o1 = std::min(out, b1 * kLaneBlock);
          fast_linear(*ff, env, x.data.data(), rec->weight.data() + o0 * in, rec->bias.data() + o0,
                      y.data.data() + o0, 1, in, o1 - o0);
        },
        2);
    return y;
  }
  split_rows(ctx, rows, in * out, [&](FpEnv& env, int64_t r0, int64_t r1) {
    fast_linear(*ff, env, x.data.data() + r0 * in, rec->weight.data(), rec->bias.data(), y.data.data() + r0 * out,
                r1 - r0, in, out);
  });
  return y;
}

Result<Value> matmul_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  if (!ff) return rules::eval_Matmul(ctx, a);
  const Value& x = a.in(0);
  const Value& y = a.in(1);
  const rules::MatmulDims d = rules::matmul_dims(x.shape, y.shape);
  const std::vector<int64_t> a_off = rules::strided_offsets(0, d.batch, d.a_strides);
  const std::vector<int64_t> b_off = rules::strided_offsets(0, d.batch, d.b_strides);
  Value out;
  out.shape = a.out_shape;
  out.data.resize(static_cast<size_t>(numel(a.out_shape)));
  if (out.data.size() != a_off.size() * static_cast<size_t>(d.m * d.n)) return rules::eval_Matmul(ctx, a);
  for (size_t t = 0; t < a_off.size(); ++t) {
    const FpWord* xa = x.data.data() + a_off[t] * d.m * d.k;
    const FpWord* yb = y.data.data() + b_off[t] * d.k * d.n;
    FpWord* o = out.data.data() + t * d.m * d.n;
    split_rows(ctx, d.m, d.k * d.n, [&](FpEnv& env, int64_t r0, int64_t r1) {
      fast_matmul(*ff, env, xa + r0 * d.k, yb, o + r0 * d.n, r1 - r0, d.k, d.n);
    });
  }
  return out;
}

// The dims of a conv the fast fold covers (a payload the rule accepts, sizes that agree), else nullopt.
std::optional<FastConvDims> conv_dims(const Args& a, const rules::Window& w, const ConvRecord<FpWord>& rec) {
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  const Value& x = a.in();
  if (c.groups <= 0 || c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0) return std::nullopt;
  const FastConvDims d{numel(x.shape.begin(), x.shape.begin() + c.channel_axis), c.in_channels,
                       c.out_channels, c.groups, numel(w.in), numel(w.kernel)};
  const bool fits = static_cast<int64_t>(x.data.size()) == d.lead * d.cin * d.in_vol &&
                    numel(a.out_shape) == d.lead * d.cout * numel(w.out) &&
                    static_cast<int64_t>(rec.weight.size()) == d.cout * (d.cin / d.groups) * d.k_vol;
  if (!fits) return std::nullopt;
  return d;
}

// conv: the rule's taps (for_each_window), kLanes output channels folded at once (FastConv). With
// ctx's threads the positions are split (their taps gathered first, while they take at most
// kTapBytes): every output is its own fold, so words and flags do not depend on the split.
Result<Value> conv_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  const Value& x = a.in();
  const auto* rec = find_record(a.payload.conv, a.node.id);
  if (!ff || !rules::check_conv_record(a.node, rec, x.shape).ok()) return rules::eval_Conv(ctx, a);  // its errors
  const rules::Window w = rules::conv_window(std::get<ConvConfig>(a.node.attrs), x.shape, a.out_shape);
  const std::optional<FastConvDims> d = conv_dims(a, w, *rec);
  FastConv conv;
  if (!d || !conv.prepare(*ff, x.data.data(), rec->weight.data(), rec->bias.data(), *d))
    return rules::eval_Conv(ctx, a);  // a NaN, infinite or malformed operand: the rule's order
  Value out;
  out.shape = a.out_shape;
  out.data.resize(static_cast<size_t>(numel(a.out_shape)));
  const int64_t out_vol = numel(w.out);
  constexpr int64_t kTapBytes = int64_t{64} << 20;
  const int64_t work = d->lead * d->cout * (d->cin / d->groups) * d->k_vol;  // per position, at most
  const bool split = ctx.pool() && out_vol >= 2 && out_vol * work >= kSplitWork &&
                     out_vol * d->k_vol * static_cast<int64_t>(sizeof(ConvTap)) <= kTapBytes;
  std::vector<ConvTap> taps;
  if (!split) {
    FastConvScratch scratch;
    rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& t) {
      taps.resize(t.size());
      for (size_t i = 0; i < t.size(); ++i) taps[i] = ConvTap{t[i].k, t[i].in};
      conv.position(ctx.env(), taps.data(), taps.size(), p, out_vol, out.data.data(), scratch);
    });
    return out;
  }
  std::vector<int64_t> first(static_cast<size_t>(out_vol), 0), count(static_cast<size_t>(out_vol), 0);
  std::vector<ConvTap> flat;  // every position's taps, position p's from first[p]
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& t) {
    first[static_cast<size_t>(p)] = static_cast<int64_t>(flat.size());
    count[static_cast<size_t>(p)] = static_cast<int64_t>(t.size());
    for (const rules::Tap& tap : t) flat.push_back(ConvTap{tap.k, tap.in});
  });
  split_rows(ctx, out_vol, work, [&](FpEnv& env, int64_t p0, int64_t p1) {
    FastConvScratch scratch;
    for (int64_t p = p0; p < p1; ++p)
      conv.position(env, flat.data() + first[static_cast<size_t>(p)], static_cast<size_t>(count[static_cast<size_t>(p)]),
                    p, out_vol, out.data.data(), scratch);
  });
  return out;
}

using Bulk = void (*)(const FastFormat&, FpEnv&, const FpWord*, const FpWord*, FpWord*, size_t);

// An elementwise op of two equally shaped tensors through a bulk kernel, else the table's rule.
template <Bulk kernel, Result<Value> (*table)(BinaryContext&, const Args&)>
Result<Value> elementwise_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  const Value& x = a.in(0);
  const Value& y = a.in(1);
  if (!ff || x.data.size() != y.data.size()) return table(ctx, a);
  Value out;
  out.shape = x.shape;
  out.data.resize(x.data.size());
  kernel(*ff, ctx.env(), x.data.data(), y.data.data(), out.data.data(), x.data.size());
  return out;
}

// relu: positive values kept and the rest +0 by word operations; NaN, inf and malformed words by
// BinaryContext::relu (the op table's scalar rule), in index order.
Result<Value> relu_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  if (!ff) return rules::eval_Relu(ctx, a);
  const Value& x = a.in();
  Value out;
  out.shape = x.shape;
  out.data.resize(x.data.size());
  std::vector<size_t> special;
  fast_relu_n(*ff, x.data.data(), out.data.data(), x.data.size(), special);
  for (size_t i : special) out.data[i] = ctx.relu(x.data[i]);
  return out;
}

// avg_pool: the rule's sum from +0 over each window's in-range taps (row-major kernel order), then
// / kernel volume, done for all leading indices (batch x channels) of a window at once through the
// bulk add. Each element's operations are the rule's, so words and flags are too; malformed words
// (whose error order would differ) and windows without taps (the rule's error) go to the rule.
Result<Value> avg_pool_rule(BinaryContext& ctx, const Args& a) {
  const FastFormat* ff = ctx.fast();
  const Value& x = a.in();
  if (!ff) return rules::eval_AvgPool(ctx, a);
  for (const FpWord& e : x.data)
    if ((e.bits & ~ff->format.word_mask()) != 0) return rules::eval_AvgPool(ctx, a);
  const auto& c = std::get<WindowConfig>(a.node.attrs);
  const rules::Window w = rules::pool_window(c, x.shape, a.out_shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  const int64_t lead = out_vol == 0 ? 0 : numel(a.out_shape) / out_vol;
  bool empty = false;
  rules::for_each_window(w, [&](int64_t, const std::vector<rules::Tap>& t) { empty = empty || t.empty(); });
  if (empty || static_cast<int64_t>(x.data.size()) != lead * in_vol) return rules::eval_AvgPool(ctx, a);
  double volume = 1.0;
  for (int64_t k : c.kernel) volume *= static_cast<double>(k);
  const FpWord divisor = ctx.from_double(volume);
  Value out = Value::filled(a.out_shape, ctx.zero());
  std::vector<FpWord> acc(static_cast<size_t>(lead)), col(static_cast<size_t>(lead));
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    std::fill(acc.begin(), acc.end(), ctx.zero());
    for (const rules::Tap& t : taps) {
      for (int64_t l = 0; l < lead; ++l) col[static_cast<size_t>(l)] = x.data[static_cast<size_t>(l * in_vol + t.in)];
      fast_add_n(*ff, ctx.env(), acc.data(), col.data(), acc.data(), acc.size());
    }
    for (int64_t l = 0; l < lead; ++l)
      out.data[static_cast<size_t>(l * out_vol + p)] = ctx.div(acc[static_cast<size_t>(l)], divisor);
  });
  return out;
}

template <Op>
struct FastRule {
  static constexpr detail::EvalFn<BinaryContext> fn = nullptr;
};
template <>
struct FastRule<Op::Linear> {
  static constexpr detail::EvalFn<BinaryContext> fn = &linear_rule;
};
template <>
struct FastRule<Op::Matmul> {
  static constexpr detail::EvalFn<BinaryContext> fn = &matmul_rule;
};
template <>
struct FastRule<Op::Conv> {
  static constexpr detail::EvalFn<BinaryContext> fn = &conv_rule;
};
template <>
struct FastRule<Op::Relu> {
  static constexpr detail::EvalFn<BinaryContext> fn = &relu_rule;
};
template <>
struct FastRule<Op::AvgPool> {
  static constexpr detail::EvalFn<BinaryContext> fn = &avg_pool_rule;
};
template <>
struct FastRule<Op::Add> {
  static constexpr detail::EvalFn<BinaryContext> fn = &elementwise_rule<&fast_add_n, &rules::eval_Add<BinaryContext>>;
};
template <>
struct FastRule<Op::Sub> {
  static constexpr detail::EvalFn<BinaryContext> fn = &elementwise_rule<&fast_sub_n, &rules::eval_Sub<BinaryContext>>;
};
template <>
struct FastRule<Op::MulElem> {
  static constexpr detail::EvalFn<BinaryContext> fn =
      &elementwise_rule<&fast_mul_n, &rules::eval_MulElem<BinaryContext>>;
};

}  // namespace

detail::EvalFn<BinaryContext> detail::RuleOverride<BinaryContext>::find(Op op) {
  static constexpr EvalFn<BinaryContext> kRules[] = {
#define DENOTE_OP(name, ...) FastRule<Op::name>::fn,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kRules[static_cast<size_t>(op)];
}

DENOTE_INSTANTIATE_EVAL(BinaryContext)
}  // namespace denote
