// Programs (include/denote/program/): one model source run eagerly (Eager<Ctx>) or lowered
// (IrBuilder, lower, lower_chain). The lowered graph's denotation must equal the direct evaluation
// bit for bit in f64, f32 and bfloat16, errors must name the same step / node both ways, and a
// lowered model must pass `check`.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/program/chain.h"
#include "denote/program/eager.h"
#include "denote/program/ir_builder.h"

namespace denote {
namespace {

static_assert(Interpreter<IrBuilder>);
static_assert(Interpreter<Eager<F64Context>>);
static_assert(Interpreter<Eager<BinaryContext>>);

BinaryContext bfloat16_context() { return BinaryContext(*parse_format("bfloat16"), Rounding::NearestEven); }

uint64_t bits_of(double v) { return std::bit_cast<uint64_t>(v); }
uint64_t bits_of(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t bits_of(FpWord w) { return w.bits; }

template <class Ctx>
using T = Tensor<typename Ctx::Scalar>;

template <class Ctx>
T<Ctx> to_ctx(Ctx& ctx, const Tensor<double>& x) {
  T<Ctx> out;
  out.shape = x.shape;
  for (double v : x.data) out.data.push_back(ctx.from_double(v));
  return out;
}

template <class Ctx>
std::vector<T<Ctx>> to_ctx(Ctx& ctx, const std::vector<Tensor<double>>& xs) {
  std::vector<T<Ctx>> out;
  for (const auto& x : xs) out.push_back(to_ctx(ctx, x));
  return out;
}

Tensor<double> random_tensor(SplitMix64& rng, const Shape& s, double scale = 2.0) {
  Tensor<double> t = Tensor<double>::filled(s, 0.0);
  for (double& v : t.data) v = (static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * 2 - 1) * scale;
  return t;
}

// The lowered model's outputs under ctx, its f64 payload converted with ctx.from_double.
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_lowered(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& xs) {
  const auto payload = convert_payload<typename Ctx::Scalar>(m.payload, [&](double v) { return ctx.from_double(v); });
  const auto inputs = to_ctx(ctx, xs);
  return denote_outputs(m.graph, payload, std::span<const T<Ctx>>(inputs), std::span<const int64_t>(m.output_ids), ctx);
}

template <class S>
void expect_bit_equal(const Tensor<S>& got, const Tensor<S>& want, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.data.size(), want.data.size()) << what;
  ASSERT_GT(got.data.size(), 0u) << what;
  for (size_t i = 0; i < got.data.size(); ++i)
    ASSERT_EQ(bits_of(got.data[i]), bits_of(want.data[i])) << what << " at element " << i;
}

// (a) the lowered chain's denotation equals apply_chain on Eager<Ctx>, bit for bit.
template <class Ctx>
void expect_chain_lowering_exact(Ctx ctx, const Chain& c, const Model& m, uint64_t seed) {
  SplitMix64 rng(seed);
  for (int trial = 0; trial < 3; ++trial) {
    const Tensor<double> x = random_tensor(rng, c.input);
    auto want = eval_chain(ctx, c, to_ctx(ctx, x));
    ASSERT_TRUE(want.ok()) << describe(c) << ": " << want.message();
    auto got = denote_lowered(ctx, m, {x});
    ASSERT_TRUE(got.ok()) << describe(c) << ": " << got.message();
    expect_bit_equal((*got)[static_cast<size_t>(m.output_ids[0])], *want, describe(c));
  }
}

void expect_chain_everywhere(const Chain& c, uint64_t seed) {
  auto m = lower_chain(c);
  ASSERT_TRUE(m.ok()) << describe(c) << ": " << m.message();
  ASSERT_TRUE(check_model(*m).ok()) << describe(c);
  ASSERT_EQ(m->graph.size(), c.layers.size() + 1) << describe(c);  // one node per layer
  expect_chain_lowering_exact(F64Context{}, c, *m, seed);
  expect_chain_lowering_exact(F32Context{}, c, *m, seed);
  expect_chain_lowering_exact(bfloat16_context(), c, *m, seed);
}

// How often each layer kind (and conv feature) occurs over the drawn chains.
std::map<std::string, int> layer_census(const std::vector<Chain>& chains) {
  std::map<std::string, int> n;
  for (const Chain& c : chains)
    for (const Layer& l : c.layers) {
      if (const auto* a = std::get_if<layer::Activation>(&l)) ++n[std::string(op_tag(a->op))];
      if (const auto* cv = std::get_if<layer::Conv>(&l)) {
        ++n["conv"];
        if (cv->config.groups > 1) ++n["groups"];
        if (!cv->config.padding_after.empty()) ++n["padding_after"];
        for (int64_t d : cv->config.dilation) n["dilation"] += d > 1;
      }
      n["batch_norm"] += std::holds_alternative<layer::BatchNorm>(l);
      n["layernorm"] += std::holds_alternative<layer::LayerNorm>(l);
      n["max_pool"] += std::holds_alternative<layer::MaxPool>(l);
      n["avg_pool"] += std::holds_alternative<layer::AvgPool>(l);
      n["softmax"] += std::holds_alternative<layer::Softmax>(l);
      n["log_softmax"] += std::holds_alternative<layer::LogSoftmax>(l);
      n["reshape"] += std::holds_alternative<layer::Reshape>(l);
      n["flatten"] += std::holds_alternative<layer::Flatten>(l);
    }
  return n;
}

TEST(ProgramChain, RandomMlpsLowerToTheirDirectEvaluationInF64F32AndBfloat16) {
  std::vector<Chain> chains;
  for (uint64_t seed = 0; seed < 80; ++seed) {
    chains.push_back(random_mlp_chain(seed));
    expect_chain_everywhere(chains.back(), 1000 + seed);
    if (HasFatalFailure()) return;
  }
  auto n = layer_census(chains);
  for (const char* kind : {"relu", "tanh", "sigmoid", "softplus", "gelu", "erf", "abs", "layernorm", "softmax",
                           "log_softmax"})
    EXPECT_GT(n[kind], 0) << kind << " never drawn";
}

TEST(ProgramChain, RandomConvNetsLowerToTheirDirectEvaluationInF64F32AndBfloat16) {
  std::vector<Chain> chains;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    chains.push_back(random_conv_chain(seed));
    expect_chain_everywhere(chains.back(), 2000 + seed);
    if (HasFatalFailure()) return;
  }
  auto n = layer_census(chains);
  for (const char* kind : {"conv", "groups", "padding_after", "dilation", "batch_norm", "max_pool", "avg_pool",
                           "reshape", "flatten", "relu", "gelu"})
    EXPECT_GT(n[kind], 0) << kind << " never drawn";
}

TEST(ProgramChain, SameSeedSameChain) {
  EXPECT_EQ(describe(random_conv_chain(5)), describe(random_conv_chain(5)));
  EXPECT_EQ(describe(random_mlp_chain(5)), describe(random_mlp_chain(5)));
  EXPECT_NE(describe(random_mlp_chain(5)), describe(random_mlp_chain(6)));
}

TEST(ProgramChain, HandCheckedValues) {
  // [1, 1] -> linear [[1, 2], [3, 4]] + [1, -20] = [4, -13] -> relu = [4, 0].
  Chain c{{2}, {layer::Linear{2, {1, 2, 3, 4}, {1, -20}}, layer::Activation{Op::Relu}}};
  F64Context ctx;
  auto y = eval_chain(ctx, c, Tensor<double>{{2}, {1, 1}});
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_EQ(y->data, (std::vector<double>{4, 0}));
  auto m = lower_chain(c);
  ASSERT_TRUE(m.ok()) << m.message();
  auto z = denote_lowered(ctx, *m, {Tensor<double>{{2}, {1, 1}}});
  ASSERT_TRUE(z.ok()) << z.message();
  EXPECT_EQ((*z)[2].data, (std::vector<double>{4, 0}));
  EXPECT_EQ(describe(c), "[2] -> linear(2) -> relu");
}

// (b) one model function, two outputs, several inputs, written once.
struct NetWeights {
  std::vector<double> w1, b1, w2, b2, gamma, beta, proj;
};

NetWeights draw_weights(uint64_t seed) {
  SplitMix64 rng(seed);
  auto v = [&](int64_t n, double scale) { return random_tensor(rng, {n}, scale).data; };
  return {v(12, 0.5), v(4, 0.5), v(16, 0.5), v(4, 0.5), v(4, 0.3), v(4, 0.3), v(8, 1.0)};
}

template <class I>
std::vector<typename I::Value> residual_net(I& in, std::vector<typename I::Value> xs, const NetWeights& w) {
  auto h = nn::gelu(in, in.linear(xs[0], 4, w.w1, w.b1));                        // [2, 4]
  auto r = nn::add(in, h, nn::tanh(in, in.linear(h, 4, w.w2, w.b2)));            // residual
  auto n = in.layernorm(r, 1, w.gamma, w.beta);
  auto z = nn::matmul(in, n, in.constant({4, 2}, w.proj));                        // [2, 2]
  auto s = nn::softmax(in, z, 1);
  auto loss = nn::mse_loss(in, s, xs[1]);                                          // []
  return {s, loss};
}

template <class Ctx>
void expect_program_exact(Ctx ctx, const Model& m, const NetWeights& w, const std::vector<Tensor<double>>& xs) {
  auto fn = [&](auto& in, auto v) { return residual_net(in, std::move(v), w); };
  auto eager = run_eager_multi(ctx, fn, to_ctx(ctx, xs));
  ASSERT_TRUE(eager.ok()) << eager.message();
  auto lowered = denote_lowered(ctx, m, xs);
  ASSERT_TRUE(lowered.ok()) << lowered.message();
  ASSERT_EQ(eager->size(), 2u);
  for (size_t k = 0; k < 2; ++k)
    expect_bit_equal((*lowered)[static_cast<size_t>(m.output_ids[k])], (*eager)[k], "output " + std::to_string(k));
}

TEST(ProgramModel, OneSourceEagerEqualsLowered) {
  const NetWeights w = draw_weights(11);
  auto fn = [&](auto& in, auto v) { return residual_net(in, std::move(v), w); };
  auto m = lower_multi(fn, {{2, 3}, {2, 2}});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(check_model(*m).ok());
  EXPECT_EQ(m->graph.input_ids(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m->output_ids.size(), 2u);
  EXPECT_EQ(m->graph.nodes[static_cast<size_t>(m->output_ids[1])].out_shape, Shape{});
  SplitMix64 rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<Tensor<double>> xs = {random_tensor(rng, {2, 3}), random_tensor(rng, {2, 2}, 1.0)};
    expect_program_exact(F64Context{}, *m, w, xs);
    expect_program_exact(F32Context{}, *m, w, xs);
    expect_program_exact(bfloat16_context(), *m, w, xs);
  }
}

TEST(ProgramModel, RealContextAgreesWithF64) {
  const NetWeights w = draw_weights(12);
  auto fn = [&](auto& in, auto v) { return residual_net(in, std::move(v), w); };
  SplitMix64 rng(4);
  const std::vector<Tensor<double>> xs = {random_tensor(rng, {2, 3}), random_tensor(rng, {2, 2}, 1.0)};
  F64Context f64;
  RealContext real(200);
  auto a = run_eager_multi(f64, fn, to_ctx(f64, xs));
  auto b = run_eager_multi(real, fn, to_ctx(real, xs));
  ASSERT_TRUE(a.ok() && b.ok()) << a.message() << b.message();
  for (size_t k = 0; k < 2; ++k)
    for (size_t i = 0; i < (*a)[k].data.size(); ++i)
      EXPECT_NEAR((*a)[k].data[i], real.to_double((*b)[k].data[i]), 1e-12) << k << ", " << i;
  // The lowered model under MPFR gives the same words as the eager run.
  auto m = lower_multi(fn, {{2, 3}, {2, 2}});
  ASSERT_TRUE(m.ok()) << m.message();
  auto c = denote_lowered(real, *m, xs);
  ASSERT_TRUE(c.ok()) << c.message();
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ((*c)[static_cast<size_t>(m->output_ids[k])].data, (*b)[k].data);
}

// (c) errors: the same problem with the same position, eagerly and lowered.
template <class F>
void expect_same_error(F fn, const Shape& input, int64_t node, const std::string& field, const std::string& detail) {
  auto m = lower(fn, input);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().node(), node);
  EXPECT_EQ(m.status().field(), field);
  EXPECT_EQ(m.status().detail(), detail);
  EXPECT_TRUE(m.message().starts_with("IR graph: node " + std::to_string(node) + ": " + detail + " (Node(id=" +
                                      std::to_string(node)))
      << m.message();
  F64Context ctx;
  auto e = run_eager(ctx, fn, Tensor<double>::filled(input, 0.5));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().node(), node);
  EXPECT_EQ(e.status().field(), field);
  EXPECT_EQ(e.status().code(), m.status().code());
  EXPECT_TRUE(e.message().starts_with("program step " + std::to_string(node) + " (")) << e.message();
  EXPECT_TRUE(e.message().ends_with("): " + detail)) << e.message();
}

TEST(ProgramErrors, LinearWeightCountMismatch) {
  auto fn = [](auto& in, auto x) { return nn::relu(in, in.linear(x, 3, std::vector<double>(10, 0.1), {0, 0, 0})); };
  expect_same_error(fn, {4}, 1, "weight", "linear: weight has 10 values, expected 12");
  // The builder's error is what `denote check` says of the same graph built by hand.
  GraphBuilder b;
  const int64_t y = b.unary(Op::Relu, b.linear(b.input({4}), 3, std::vector<double>(10, 0.1), {0, 0, 0}));
  auto hand = b.build({y});
  ASSERT_TRUE(hand.ok());
  EXPECT_EQ(check_model(*hand).message(), lower(fn, {4}).message());
}

TEST(ProgramErrors, ReshapeToAWrongElementCount) {
  auto fn = [](auto& in, auto x) { return nn::reshape(in, nn::tanh(in, x), {4}); };
  expect_same_error(fn, {2, 3}, 2, "", "reshape numel mismatch: 6 vs 4");
  EXPECT_EQ(lower(fn, {2, 3}).status().code(), ErrorCode::kShape);
}

TEST(ProgramErrors, ShapeMismatchOfABinaryOp) {
  auto fn = [](auto& in, auto x) { return nn::add(in, x, nn::sum(in, x)); };
  auto m = lower(fn, {3});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().node(), 2);
  EXPECT_EQ(m.status().code(), ErrorCode::kShape);
  F64Context ctx;
  auto e = run_eager(ctx, fn, Tensor<double>{{3}, {1, 2, 3}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().node(), 2);
  EXPECT_EQ(e.message(), "program step 2 (add): " + m.status().detail());
}

TEST(ProgramErrors, FirstErrorIsStickyAndLaterCallsDoNothing) {
  F64Context ctx;
  Eager<F64Context> e(ctx, {Tensor<double>{{2}, {1, 2}}});
  auto x = e.input({2});
  auto bad = e.linear(x, 2, {1, 2, 3}, {0, 0});  // 3 weights for [2, 2]
  auto later = nn::relu(e, x);
  EXPECT_FALSE(e.status().ok());
  EXPECT_EQ(e.status().node(), 1);
  EXPECT_TRUE(bad.data.empty() && later.data.empty());
  EXPECT_EQ(e.steps(), 3);
  IrBuilder b;
  auto xb = b.input({2});
  EXPECT_EQ(b.linear(xb, 2, {1, 2, 3}, {0, 0}), -1);
  EXPECT_EQ(nn::relu(b, xb), -1);
  EXPECT_EQ(b.size(), 1);
  EXPECT_EQ(b.status().node(), 1);
  EXPECT_EQ(b.finish({xb}).status().message(), b.status().message());
}

TEST(ProgramErrors, ApplyRefusesParameterisedOps) {
  auto fn = [](auto& in, auto x) { return in.apply(Op::Linear, {x}); };
  expect_same_error(fn, {2}, 1, "op", "linear: takes parameters or a declared shape: use the interpreter's linear()");
}

TEST(ProgramErrors, EagerInputsAreCheckedAgainstTheProgram) {
  F64Context ctx;
  Eager<F64Context> e(ctx, {Tensor<double>{{3}, {1, 2, 3}}});
  (void)e.input({4});
  EXPECT_EQ(e.status().message(), "program step 0 (input): input shape mismatch: expected [4], got [3]");
  EXPECT_EQ(e.status().field(), "input");
  Eager<F64Context> empty(ctx);
  (void)empty.input({1});
  EXPECT_EQ(empty.status().message(), "program step 0 (input): no input value left: 0 supplied");
}

TEST(ProgramErrors, ValueErrorsNameTheSameNodeAsDenote) {
  // log of a negative entry: lowering succeeds (shapes are fine), evaluation fails at node 2.
  auto fn = [](auto& in, auto x) { return nn::log(in, nn::neg(in, x)); };
  auto m = lower(fn, {2});
  ASSERT_TRUE(m.ok()) << m.message();
  F64Context ctx;
  auto e = run_eager(ctx, fn, Tensor<double>{{2}, {1, -1}});
  ASSERT_FALSE(e.ok());
  auto d = denote_lowered(ctx, *m, {Tensor<double>{{2}, {1, -1}}});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(e.status().node(), 2);
  EXPECT_EQ(d.status().node(), 2);
  EXPECT_EQ(e.message(), "program step 2 (log): " + d.status().detail());
}

// (d) an ACAS Xu-sized MLP: 5 -> 6 hidden layers of 50 (relu) -> 5.
struct AcasWeights {
  std::vector<std::vector<double>> w, b;
};

AcasWeights acas_weights(uint64_t seed) {
  SplitMix64 rng(seed);
  AcasWeights a;
  int64_t in = 5;
  for (int64_t out : {50, 50, 50, 50, 50, 50, 5}) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(in));
    a.w.push_back(random_tensor(rng, {out * in}, scale).data);
    a.b.push_back(random_tensor(rng, {out}, scale).data);
    in = out;
  }
  return a;
}

template <class I>
typename I::Value acas_like(I& in, typename I::Value x, const AcasWeights& a) {
  for (size_t k = 0; k < 6; ++k) x = nn::relu(in, in.linear(x, 50, a.w[k], a.b[k]));
  return in.linear(x, 5, a.w[6], a.b[6]);
}

TEST(ProgramModel, AcasXuSizedMlpLowersAndPassesCheck) {
  const AcasWeights a = acas_weights(21);
  auto fn = [&](auto& in, auto x) { return acas_like(in, x, a); };
  auto m = lower(fn, {5});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(check_model(*m).ok());
  EXPECT_TRUE(diagnose_model(*m).empty());
  ASSERT_EQ(m->graph.size(), 14u);  // input, 6 x (linear, relu), linear
  EXPECT_EQ(m->payload.linear.size(), 7u);
  EXPECT_EQ(m->graph.nodes.back().out_shape, Shape{5});
  EXPECT_EQ(m->payload.linear.at(1).in_dim, 5);
  EXPECT_EQ(m->payload.linear.at(13).in_dim, 50);
  SplitMix64 rng(9);
  F64Context ctx;
  const Tensor<double> x = random_tensor(rng, {5}, 1.0);
  auto want = run_eager(ctx, fn, x);
  auto got = denote_lowered(ctx, *m, {x});
  ASSERT_TRUE(want.ok() && got.ok());
  expect_bit_equal((*got)[13], want->front(), "acas");
}

}  // namespace
}  // namespace denote
