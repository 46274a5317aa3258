// Evaluation of the random sources (rand_uniform, bernoulli_mask) against an independent splitmix64
// written here, and of custom nodes, under F64Context and F32Context.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eval_ctx_util.h"

namespace denote {
namespace {

using eval_ctx::build_or_die;

template <class Ctx>
class EvalSource : public ::testing::Test {};
using Contexts = ::testing::Types<F64Context, F32Context>;
TYPED_TEST_SUITE(EvalSource, Contexts);

// Reference splitmix64 (Vigna): the output for state s is mix(s + 0x9E3779B97F4A7C15).
uint64_t ref_splitmix64(uint64_t state) {
  uint64_t z = state + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// u_j of the node with `id` and `seed`, computed in scalar T: (bits mod 2^32) converted, then / 2^32.
template <class T>
T ref_uniform(uint64_t seed, int64_t id, int64_t j) {
  const uint64_t key = ref_splitmix64(seed + static_cast<uint64_t>(id));
  const uint64_t bits = ref_splitmix64(key + static_cast<uint64_t>(j)) % (uint64_t{1} << 32);
  return static_cast<T>(bits) / static_cast<T>(4294967296.0);
}

TEST(EvalSourceReference, SplitmixMatchesPublishedOutputs) {
  // First outputs of the reference generator for seed 0 and seed 1234567 (second output: state + gamma).
  EXPECT_EQ(ref_splitmix64(0), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(ref_splitmix64(1234567), 6457827717110365317ULL);
  EXPECT_EQ(ref_splitmix64(1234567 + 0x9E3779B97F4A7C15ULL), 3203168211198807973ULL);
}

// A graph whose node 1 (after an unused input 0) is rand_uniform(seed) of `shape`.
Model rand_model(uint64_t seed, const Shape& shape) {
  GraphBuilder b;
  b.input({1});
  const int64_t r = b.add(Op::RandUniform, {}, SeedAttrs{seed}, shape);
  return build_or_die(b, {r});
}

TYPED_TEST(EvalSource, RandUniformMatchesTheReferenceStream) {
  using S = typename TypeParam::Scalar;
  const Model m = rand_model(42, {3, 5});
  auto y = eval_ctx::run<TypeParam>(m, {Tensor<double>({1}, {0})}, 1);
  ASSERT_TRUE(y.ok()) << y.message();
  ASSERT_EQ(y->shape, (Shape{3, 5}));
  for (int64_t j = 0; j < 15; ++j) EXPECT_EQ(y->data[j], ref_uniform<S>(42, 1, j)) << j;
}

TYPED_TEST(EvalSource, RandUniformIsDeterministicAndInRange) {
  const Model m = rand_model(7, {1000});
  auto y1 = eval_ctx::run<TypeParam>(m, {Tensor<double>({1}, {0})}, 1);
  auto y2 = eval_ctx::run<TypeParam>(m, {Tensor<double>({1}, {0})}, 1);
  ASSERT_TRUE(y1.ok() && y2.ok());
  EXPECT_EQ(*y1, *y2);
  double lo = 1, hi = 0;
  for (auto v : y1->data) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 1);
    lo = std::min(lo, static_cast<double>(v));
    hi = std::max(hi, static_cast<double>(v));
  }
  EXPECT_LT(lo, 0.01);  // 1000 draws spread over [0, 1)
  EXPECT_GT(hi, 0.99);
  auto other = eval_ctx::run<TypeParam>(rand_model(8, {1000}), {Tensor<double>({1}, {0})}, 1);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*y1, *other);
}

TYPED_TEST(EvalSource, RandUniformKeyDependsOnNodeId) {
  GraphBuilder b;
  const int64_t r1 = b.add(Op::RandUniform, {}, SeedAttrs{5}, Shape{4});
  const int64_t r2 = b.add(Op::RandUniform, {}, SeedAttrs{5}, Shape{4});
  const Model m = build_or_die(b, {r1, r2});
  auto a = eval_ctx::run<TypeParam>(m, {}, r1);
  auto c = eval_ctx::run<TypeParam>(m, {}, r2);
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_NE(a->data, c->data);
  // seed 5 at node 1 is the same stream as seed 6 at node 0 (key = splitmix64(seed + id)).
  GraphBuilder b2;
  const int64_t s = b2.add(Op::RandUniform, {}, SeedAttrs{6}, Shape{4});
  auto d = eval_ctx::run<TypeParam>(build_or_die(b2, {s}), {}, s);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(c->data, d->data);
}

// bernoulli_mask of shape [n] with seed 3 and keep probability p (a const node 0).
template <class Ctx>
Tensor<typename Ctx::Scalar> mask(double p, int64_t n) {
  GraphBuilder b;
  const int64_t prob = b.constant({}, {p});
  const int64_t k = b.add(Op::BernoulliMask, {prob}, SeedAttrs{3}, Shape{n});
  auto r = eval_ctx::run<Ctx>(build_or_die(b, {k}), {}, k);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : Tensor<typename Ctx::Scalar>{};
}

TYPED_TEST(EvalSource, BernoulliMaskFollowsTheStream) {
  using S = typename TypeParam::Scalar;
  const auto y = mask<TypeParam>(0.3, 200);
  ASSERT_EQ(y.shape, (Shape{200}));
  int kept = 0;
  for (int64_t j = 0; j < 200; ++j) {
    const S want = static_cast<S>(0.3) > ref_uniform<S>(3, 1, j) ? S(1) : S(0);
    EXPECT_EQ(y.data[j], want) << j;
    kept += y.data[j] == S(1);
  }
  EXPECT_GT(kept, 30);
  EXPECT_LT(kept, 90);
}

TYPED_TEST(EvalSource, BernoulliMaskEdgeProbabilities) {
  using S = typename TypeParam::Scalar;
  for (double p : {0.0, -0.5}) EXPECT_EQ(mask<TypeParam>(p, 50).data, std::vector<S>(50, S(0))) << p;
  for (double p : {1.0, 2.5}) EXPECT_EQ(mask<TypeParam>(p, 50).data, std::vector<S>(50, S(1))) << p;
  EXPECT_EQ(mask<TypeParam>(std::numeric_limits<double>::quiet_NaN(), 5).data, std::vector<S>(5, S(0)));
}

// custom node 2 over inputs 0 ([2]) and 1 ([2]) with declared output [2, 2].
Model custom_model() {
  GraphBuilder b;
  const int64_t x = b.input({2}), y = b.input({2});
  const int64_t c = b.add(Op::Custom, {x, y}, CustomAttrs{"outer", {{2}, {2}}}, Shape{2, 2});
  return build_or_die(b, {c});
}

TYPED_TEST(EvalSource, CustomRunsTheBodyPerElement) {
  using S = typename TypeParam::Scalar;
  const Model m = custom_model();
  auto payload = eval_ctx::payload_of<TypeParam>(m);
  payload.custom[2] = [](std::span<const Tensor<S>* const> in, int64_t i) -> Result<S> {
    return in[0]->data[i / 2] * in[1]->data[i % 2];  // outer product
  };
  auto r = eval_ctx::run_with<TypeParam>(m, payload, {Tensor<double>({2}, {2, 3}), Tensor<double>({2}, {5, 7})}, 2);
  ASSERT_TRUE(r.ok()) << r.message();
  eval_ctx::expect_values<TypeParam>(*r, {2, 2}, {10, 14, 15, 21});
}

TYPED_TEST(EvalSource, CustomErrors) {
  using S = typename TypeParam::Scalar;
  const Model m = custom_model();
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {2, 3}), Tensor<double>({2}, {5, 7})};
  auto missing = eval_ctx::run<TypeParam>(m, in, 2);
  EXPECT_EQ(missing.status().detail(), "missing custom payload");
  EXPECT_EQ(missing.status().node(), 2);
  EXPECT_EQ(missing.message().rfind("IR eval: node 2: missing custom payload (Node(id=2", 0), 0u) << missing.message();
  auto payload = eval_ctx::payload_of<TypeParam>(m);
  payload.custom[2] = [](std::span<const Tensor<S>* const>, int64_t i) -> Result<S> {
    if (i == 3) return error_status("outer: element 3 refused");
    return S(0);
  };
  // The body's own error is attributed to the custom node like any rule error.
  auto refused = eval_ctx::run_with<TypeParam>(m, payload, in, 2);
  EXPECT_EQ(refused.status().detail(), "outer: element 3 refused");
  EXPECT_EQ(refused.status().node(), 2);
  EXPECT_EQ(refused.message().rfind("IR eval: node 2: outer: element 3 refused (Node(id=2", 0), 0u) << refused.message();
}

// denote_all_owned / denote_outputs_owned move the caller's input tensors into the table: the input
// entries keep the caller's buffers (no copy), the values equal denote_all's, and a wrong input
// shape gives the same error.
TYPED_TEST(EvalSource, OwnedInputsMoveIntoTheTable) {
  using S = typename TypeParam::Scalar;
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t r = b.add(Op::Relu, {x});
  const Model m = build_or_die(b, {r});
  const auto payload = eval_ctx::payload_of<TypeParam>(m);
  TypeParam ctx;
  const std::vector<Tensor<S>> copied = {Tensor<S>({3}, {S(-1), S(2), S(-3)})};
  auto expected = denote_all(m.graph, payload, std::span<const Tensor<S>>(copied), ctx);
  ASSERT_TRUE(expected.ok()) << expected.message();

  std::vector<Tensor<S>> in = copied;
  const S* buffer = in[0].data.data();
  auto all = denote_all_owned(m.graph, payload, std::move(in), ctx);
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ((*all)[0].data.data(), buffer);
  EXPECT_EQ((*all)[0].data, (*expected)[0].data);
  EXPECT_EQ((*all)[1].data, (*expected)[1].data);

  std::vector<Tensor<S>> in2 = copied;
  const S* buffer2 = in2[0].data.data();
  const int64_t outs[] = {x, r};
  auto some = denote_outputs_owned(m.graph, payload, std::move(in2), std::span<const int64_t>(outs), ctx);
  ASSERT_TRUE(some.ok()) << some.message();
  EXPECT_EQ((*some)[0].data.data(), buffer2);
  EXPECT_EQ((*some)[1].data, (*expected)[1].data);

  const std::vector<Tensor<S>> wrong = {Tensor<S>({4}, {S(1), S(2), S(3), S(4)})};
  auto copied_error = denote_all(m.graph, payload, std::span<const Tensor<S>>(wrong), ctx);
  auto owned_error = denote_all_owned(m.graph, payload, std::vector<Tensor<S>>(wrong), ctx);
  ASSERT_FALSE(owned_error.ok());
  EXPECT_EQ(owned_error.message(), copied_error.message());
  EXPECT_EQ(owned_error.status().node(), x);
}

}  // namespace
}  // namespace denote
