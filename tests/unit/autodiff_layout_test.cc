// The derivative rules of the layout (permute, transpose, broadcast_to, reshape, flatten, concat),
// reduction (reduce_sum, reduce_mean, sum) and contraction (matmul, linear) families, called
// directly on hand-built nodes:
//   - the JVP equals central finite differences of the eval rule (f64, h = 1e-6, 1e-7 relative);
//   - the adjoint identity <v, J u> = <J^T v, u> (f64, 1e-12 relative), over every parent and, for
//     linear, over weight and bias perturbations through the parameter gradients;
//   - a VJP fills exactly the wanted parents (and parameters only on request);
//   - linear's weight and bias gradients equal finite differences of <v, y>;
//   - MPFR at 200 bits and bfloat16 run every rule and agree with f64 within the format's error bound.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "autodiff/diff_contraction.h"
#include "autodiff/diff_layout.h"
#include "autodiff/diff_reduction.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"
#include "ops/rules.h"

namespace denote {
namespace {

using ad::DiffArgs;
using ad::VjpOut;

// ---- the ops under test, dispatched by hand (only these ops have rules in the headers above)

#define LRC_OPS(X) \
  X(Permute) X(Transpose) X(BroadcastTo) X(Reshape) X(Flatten) X(Concat) X(ReduceSum) X(ReduceMean) X(Sum) \
  X(Matmul) X(Linear)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_op(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a) {
  switch (a.node.op) {
#define X(op) \
  case Op::op: return rules::eval_##op<Ctx>(ctx, a);
    LRC_OPS(X)
#undef X
    default: return rules::eval_error("not an op of this test");
  }
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_op(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                            std::span<const Tensor<typename Ctx::Scalar>* const> t) {
  switch (a.node.op) {
#define X(op) \
  case Op::op: return ad::jvp_##op<Ctx>(ctx, a, t);
    LRC_OPS(X)
#undef X
    default: return rules::eval_error("not an op of this test");
  }
}

template <class Ctx>
Status vjp_op(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
              VjpOut<typename Ctx::Scalar>& out) {
  switch (a.node.op) {
#define X(op) \
  case Op::op: return ad::vjp_##op<Ctx>(ctx, a, cot, out);
    LRC_OPS(X)
#undef X
    default: return rules::eval_error("not an op of this test");
  }
}

// ---- cases: a node whose parents are nodes 0..n-1, its parent shapes, and (linear) its dims

struct Case {
  std::string name;
  Node node;
  std::vector<Shape> shapes;
  int64_t out_dim = 0;  // linear only
};

Case make_case(std::string name, Op op, Attrs attrs, std::vector<Shape> shapes, int64_t out_dim = 0) {
  Case c{std::move(name), Node{}, std::move(shapes), out_dim};
  c.node.id = static_cast<int64_t>(c.shapes.size());
  for (size_t k = 0; k < c.shapes.size(); ++k) c.node.parents.push_back(static_cast<int64_t>(k));
  c.node.op = op;
  c.node.attrs = std::move(attrs);
  if (op == Op::Linear) {
    c.node.out_shape = c.shapes[0];
    c.node.out_shape.back() = out_dim;
  }
  auto s = rules::infer_fn(op)(c.node, c.shapes);
  EXPECT_TRUE(s.ok()) << c.name << ": " << s.message();
  if (s.ok()) c.node.out_shape = *s;
  return c;
}

Case linear_case(std::string name, Shape in, int64_t out_dim) {
  return make_case(std::move(name), Op::Linear, NoAttrs{}, {std::move(in)}, out_dim);
}

std::vector<Case> layout_cases() {
  return {
      make_case("permute_201", Op::Permute, PermAttrs{{2, 0, 1}}, {{2, 3, 4}}),
      make_case("permute_0213", Op::Permute, PermAttrs{{0, 2, 1, 3}}, {{2, 3, 4, 2}}),
      make_case("permute_120_unit", Op::Permute, PermAttrs{{1, 2, 0}}, {{4, 1, 3}}),
      make_case("permute_rank1", Op::Permute, PermAttrs{{0}}, {{5}}),
      make_case("transpose_01", Op::Transpose, TransposeAttrs{0, 1}, {{3, 4}}),
      make_case("transpose_20", Op::Transpose, TransposeAttrs{2, 0}, {{2, 3, 4}}),
      make_case("transpose_12", Op::Transpose, TransposeAttrs{1, 2}, {{2, 3, 4}}),
      make_case("broadcast_rank_growth", Op::BroadcastTo, BroadcastAttrs{{3}, {2, 3}}, {{3}}),
      make_case("broadcast_unit", Op::BroadcastTo, BroadcastAttrs{{1}, {4}}, {{1}}),
      make_case("broadcast_inner_unit", Op::BroadcastTo, BroadcastAttrs{{2, 1, 3}, {2, 4, 3}}, {{2, 1, 3}}),
      make_case("broadcast_growth_and_unit", Op::BroadcastTo, BroadcastAttrs{{1, 3}, {2, 2, 3}}, {{1, 3}}),
      make_case("broadcast_trailing_unit", Op::BroadcastTo, BroadcastAttrs{{4, 1}, {3, 4, 5}}, {{4, 1}}),
      make_case("broadcast_scalar", Op::BroadcastTo, BroadcastAttrs{{}, {2, 3}}, {{}}),
      make_case("broadcast_identity", Op::BroadcastTo, BroadcastAttrs{{2, 3}, {2, 3}}, {{2, 3}}),
      make_case("reshape_234_64", Op::Reshape, ReshapeAttrs{{2, 3, 4}, {6, 4}}, {{2, 3, 4}}),
      make_case("reshape_6_23", Op::Reshape, ReshapeAttrs{{6}, {2, 3}}, {{6}}),
      make_case("flatten_234", Op::Flatten, ValueShapeAttrs{{2, 3, 4}}, {{2, 3, 4}}),
      make_case("concat_axis0_2", Op::Concat, AxisAttrs{0}, {{2, 3}, {1, 3}}),
      make_case("concat_axis0_3", Op::Concat, AxisAttrs{0}, {{2, 3, 2}, {1, 3, 2}, {3, 3, 2}}),
      make_case("concat_axis1_3", Op::Concat, AxisAttrs{1}, {{2, 1, 2}, {2, 3, 2}, {2, 2, 2}}),
      make_case("concat_axis2_2", Op::Concat, AxisAttrs{2}, {{2, 3, 1}, {2, 3, 4}}),
      make_case("concat_rank1_3", Op::Concat, AxisAttrs{0}, {{2}, {3}, {1}}),
  };
}

std::vector<Case> reduction_cases() {
  return {
      make_case("reduce_sum_axis0", Op::ReduceSum, AxisAttrs{0}, {{2, 3, 4}}),
      make_case("reduce_sum_axis1", Op::ReduceSum, AxisAttrs{1}, {{2, 3, 4}}),
      make_case("reduce_sum_axis2", Op::ReduceSum, AxisAttrs{2}, {{2, 3, 4}}),
      make_case("reduce_sum_rank1", Op::ReduceSum, AxisAttrs{0}, {{5}}),
      make_case("reduce_mean_axis0", Op::ReduceMean, AxisAttrs{0}, {{2, 3, 4}}),
      make_case("reduce_mean_axis1", Op::ReduceMean, AxisAttrs{1}, {{2, 3, 4}}),
      make_case("reduce_mean_axis2", Op::ReduceMean, AxisAttrs{2}, {{2, 3, 4}}),
      make_case("reduce_mean_unit_axis", Op::ReduceMean, AxisAttrs{1}, {{3, 1}}),
      make_case("sum_rank3", Op::Sum, NoAttrs{}, {{2, 3, 4}}),
      make_case("sum_rank1", Op::Sum, NoAttrs{}, {{7}}),
      make_case("sum_scalar", Op::Sum, NoAttrs{}, {{}}),
  };
}

std::vector<Case> contraction_cases() {
  return {
      make_case("matmul_dot", Op::Matmul, NoAttrs{}, {{4}, {4}}),
      make_case("matmul_vec_mat", Op::Matmul, NoAttrs{}, {{3}, {3, 4}}),
      make_case("matmul_mat_vec", Op::Matmul, NoAttrs{}, {{2, 3}, {3}}),
      make_case("matmul_2d", Op::Matmul, NoAttrs{}, {{2, 3}, {3, 4}}),
      make_case("matmul_batched", Op::Matmul, NoAttrs{}, {{3, 2, 3}, {3, 3, 4}}),
      make_case("matmul_batch_by_mat", Op::Matmul, NoAttrs{}, {{3, 2, 3}, {3, 4}}),
      make_case("matmul_mat_by_batch", Op::Matmul, NoAttrs{}, {{2, 3}, {2, 3, 4}}),
      make_case("matmul_vec_by_batch", Op::Matmul, NoAttrs{}, {{3}, {2, 3, 4}}),
      make_case("matmul_batch_by_vec", Op::Matmul, NoAttrs{}, {{2, 2, 3}, {3}}),
      make_case("matmul_broadcast_both", Op::Matmul, NoAttrs{}, {{2, 1, 2, 3}, {3, 3, 4}}),
      make_case("matmul_broadcast_unit", Op::Matmul, NoAttrs{}, {{1, 2, 3}, {2, 1, 3, 2}}),
      linear_case("linear_rank1", {4}, 3),
      linear_case("linear_rank2", {5, 4}, 3),
      linear_case("linear_rank3", {2, 3, 4}, 5),
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (auto* f : {layout_cases, reduction_cases, contraction_cases})
    for (auto& c : f()) out.push_back(std::move(c));
  return out;
}

// ---- data: random parents (and a linear record), tangents and cotangents, in f64

using T64 = Tensor<double>;

T64 random_tensor(std::mt19937_64& rng, const Shape& shape) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  T64 t = T64::filled(shape, 0.0);
  for (double& v : t.data) v = u(rng);
  return t;
}

std::vector<T64> random_tensors(std::mt19937_64& rng, const std::vector<Shape>& shapes) {
  std::vector<T64> out;
  for (const Shape& s : shapes) out.push_back(random_tensor(rng, s));
  return out;
}

Payload<double> random_payload(std::mt19937_64& rng, const Case& c) {
  Payload<double> p;
  if (c.node.op != Op::Linear) return p;
  const int64_t in = c.shapes[0].back();
  p.linear[c.node.id] = LinearRecord<double>{c.out_dim, in, random_tensor(rng, {c.out_dim, in}).data,
                                             random_tensor(rng, {c.out_dim}).data};
  return p;
}

double dot(const T64& a, const T64& b) {
  EXPECT_EQ(a.data.size(), b.data.size());
  double s = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

double dot_abs(const T64& a, const T64& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) s += std::fabs(a.data[i] * b.data[i]);
  return s;
}

// x + s * d, entrywise.
std::vector<T64> shifted(const std::vector<T64>& x, const std::vector<T64>& d, double s) {
  std::vector<T64> out = x;
  for (size_t k = 0; k < x.size(); ++k)
    for (size_t i = 0; i < x[k].data.size(); ++i) out[k].data[i] += s * d[k].data[i];
  return out;
}

// ---- running the rules of one node in one context

template <class Ctx>
struct Harness {
  using S = typename Ctx::Scalar;
  Ctx& ctx;
  const Node& node;
  Payload<S> payload;
  std::vector<Tensor<S>> xs;
  EvalOptions options;
  Tensor<S> y;

  Harness(Ctx& c, const Node& n, const Payload<S>& p, std::vector<Tensor<S>> x)
      : ctx(c), node(n), payload(p), xs(std::move(x)) {
    y = eval(xs, payload);
  }

  static std::vector<const Tensor<S>*> ptrs(const std::vector<Tensor<S>>& v) {
    std::vector<const Tensor<S>*> out;
    for (const auto& t : v) out.push_back(&t);
    return out;
  }

  Tensor<S> eval(const std::vector<Tensor<S>>& values, const Payload<S>& p) {
    const auto ps = ptrs(values);
    const rules::EvalArgs<S> a{node, ps, p, node.out_shape, nullptr, options};
    auto r = eval_op(ctx, a);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? *r : Tensor<S>{};
  }

  Tensor<S> jvp(const std::vector<Tensor<S>>& tangents) {
    const auto ps = ptrs(xs), ts = ptrs(tangents);
    const DiffArgs<S> a{node, ps, y, payload, options};
    auto r = jvp_op(ctx, a, std::span<const Tensor<S>* const>(ts));
    EXPECT_TRUE(r.ok()) << r.message();
    if (r.ok()) {
      EXPECT_EQ(r->shape, node.out_shape);
    }
    return r.ok() ? *r : Tensor<S>{};
  }

  VjpOut<S> vjp(const Tensor<S>& cot, std::vector<bool> want, bool want_params) {
    const auto ps = ptrs(xs);
    const DiffArgs<S> a{node, ps, y, payload, options};
    VjpOut<S> out;
    out.want = std::move(want);
    out.parents.resize(xs.size());
    out.want_params = want_params;
    const Status st = vjp_op(ctx, a, cot, out);
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }

  VjpOut<S> vjp_all(const Tensor<S>& cot) { return vjp(cot, std::vector<bool>(xs.size(), true), true); }
};

// Everything one case needs in f64.
struct F64Run {
  F64Context ctx;
  Payload<double> payload;
  std::vector<T64> xs, us;
  T64 v;
};

F64Run random_run(const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  F64Run r;
  r.payload = random_payload(rng, c);
  r.xs = random_tensors(rng, c.shapes);
  r.us = random_tensors(rng, c.shapes);
  r.v = random_tensor(rng, c.node.out_shape);
  return r;
}

uint64_t seed_of(const std::string& name) { return std::hash<std::string>{}(name) | 1; }

// ---- (1) JVP = central finite differences of the eval rule

TEST(AutodiffLayout, JvpMatchesCentralFiniteDifferences) {
  constexpr double h = 1e-6;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    F64Run r = random_run(c, seed_of(c.name));
    Harness<F64Context> hs(r.ctx, c.node, r.payload, r.xs);
    const T64 jvp = hs.jvp(r.us);
    const T64 plus = hs.eval(shifted(r.xs, r.us, h), r.payload);
    const T64 minus = hs.eval(shifted(r.xs, r.us, -h), r.payload);
    ASSERT_EQ(jvp.data.size(), plus.data.size());
    for (size_t i = 0; i < jvp.data.size(); ++i) {
      const double fd = (plus.data[i] - minus.data[i]) / (2 * h);
      EXPECT_NEAR(jvp.data[i], fd, 1e-7 * std::max(1.0, std::fabs(fd))) << "at " << i;
    }
  }
}

// ---- (2) adjoint identity, over every parent and (linear) the parameters

// <v, dW x + db>: the output's change along a weight/bias perturbation (linear is affine in them).
double param_directional(Harness<F64Context>& hs, const Case& c, const T64& v, const T64& dw, const T64& db) {
  Payload<double> p;
  p.linear[c.node.id] = LinearRecord<double>{c.out_dim, c.shapes[0].back(), dw.data, db.data};
  return dot(v, hs.eval(hs.xs, p));
}

TEST(AutodiffLayout, AdjointIdentityHolds) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    F64Run r = random_run(c, seed_of(c.name) + 2);
    Harness<F64Context> hs(r.ctx, c.node, r.payload, r.xs);
    const T64 ju = hs.jvp(r.us);
    const VjpOut<double> g = hs.vjp_all(r.v);
    double lhs = dot(r.v, ju), rhs = 0, scale = dot_abs(r.v, ju);
    for (size_t k = 0; k < r.xs.size(); ++k) {
      ASSERT_EQ(g.parents[k].shape, c.shapes[k]) << "parent " << k;
      rhs += dot(g.parents[k], r.us[k]);
      scale += dot_abs(g.parents[k], r.us[k]);
    }
    if (c.node.op == Op::Linear) {
      std::mt19937_64 rng(seed_of(c.name) + 3);
      const T64 dw = random_tensor(rng, {c.out_dim, c.shapes[0].back()}), db = random_tensor(rng, {c.out_dim});
      ASSERT_EQ(g.params.size(), 2u);
      EXPECT_EQ(g.params[0].field, "weight");
      EXPECT_EQ(g.params[1].field, "bias");
      const T64 gw(g.params[0].shape, g.params[0].values), gb(g.params[1].shape, g.params[1].values);
      EXPECT_EQ(gw.shape, dw.shape);
      EXPECT_EQ(gb.shape, db.shape);
      lhs += param_directional(hs, c, r.v, dw, db);
      rhs += dot(gw, dw) + dot(gb, db);
      scale += dot_abs(gw, dw) + dot_abs(gb, db);
    } else {
      EXPECT_TRUE(g.params.empty());
    }
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(scale, 1e-300));
  }
}

// A VJP fills exactly the wanted parents, with the same values as when every parent is wanted.
TEST(AutodiffLayout, VjpComputesOnlyWantedParents) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    F64Run r = random_run(c, seed_of(c.name) + 4);
    Harness<F64Context> hs(r.ctx, c.node, r.payload, r.xs);
    const VjpOut<double> all = hs.vjp_all(r.v);
    for (size_t k = 0; k < r.xs.size(); ++k) {
      std::vector<bool> want(r.xs.size(), false);
      want[k] = true;
      const VjpOut<double> one = hs.vjp(r.v, want, false);
      EXPECT_TRUE(one.params.empty());
      for (size_t j = 0; j < r.xs.size(); ++j) {
        if (j == k) {
          EXPECT_EQ(one.parents[j], all.parents[j]) << "parent " << j;
        } else {
          EXPECT_TRUE(one.parents[j].data.empty() && one.parents[j].shape.empty()) << "parent " << j;
        }
      }
    }
    const VjpOut<double> none = hs.vjp(r.v, std::vector<bool>(r.xs.size(), false), c.node.op == Op::Linear);
    for (const auto& p : none.parents) EXPECT_TRUE(p.data.empty());
    if (c.node.op == Op::Linear) {
      ASSERT_EQ(none.params.size(), 2u);
      EXPECT_EQ(none.params[0].values, all.params[0].values);
      EXPECT_EQ(none.params[1].values, all.params[1].values);
    }
  }
}

// ---- (3) linear's parameter gradients = finite differences of <v, y>

TEST(AutodiffLayout, LinearParamGradsMatchFiniteDifferences) {
  constexpr double h = 1e-6;
  for (const Case& c : contraction_cases()) {
    if (c.node.op != Op::Linear) continue;
    SCOPED_TRACE(c.name);
    F64Run r = random_run(c, seed_of(c.name) + 5);
    Harness<F64Context> hs(r.ctx, c.node, r.payload, r.xs);
    const VjpOut<double> g = hs.vjp(r.v, {false}, true);
    ASSERT_EQ(g.params.size(), 2u);
    EXPECT_EQ(g.params[0].node, c.node.id);
    EXPECT_EQ(g.params[0].shape, (Shape{c.out_dim, c.shapes[0].back()}));
    EXPECT_EQ(g.params[1].shape, (Shape{c.out_dim}));
    for (int field = 0; field < 2; ++field) {
      const size_t n = g.params[static_cast<size_t>(field)].values.size();
      for (size_t i = 0; i < n; ++i) {
        auto phi = [&](double s) {
          Payload<double> p = r.payload;
          auto& rec = p.linear[c.node.id];
          (field == 0 ? rec.weight : rec.bias)[i] += s;
          return dot(r.v, hs.eval(r.xs, p));
        };
        const double fd = (phi(h) - phi(-h)) / (2 * h);
        EXPECT_NEAR(g.params[static_cast<size_t>(field)].values[i], fd, 1e-7 * std::max(1.0, std::fabs(fd)))
            << g.params[static_cast<size_t>(field)].field << "[" << i << "]";
      }
    }
  }
}

// ---- (4) MPFR and bfloat16: the rules run there and agree with f64 within the format's error

template <class Ctx>
Tensor<typename Ctx::Scalar> to_ctx(Ctx& ctx, const T64& t) {
  std::vector<typename Ctx::Scalar> d;
  for (double v : t.data) d.push_back(ctx.from_double(v));
  return Tensor<typename Ctx::Scalar>(t.shape, std::move(d));
}

template <class Ctx>
std::vector<Tensor<typename Ctx::Scalar>> to_ctx(Ctx& ctx, const std::vector<T64>& ts) {
  std::vector<Tensor<typename Ctx::Scalar>> out;
  for (const auto& t : ts) out.push_back(to_ctx(ctx, t));
  return out;
}

template <class Ctx>
T64 to_f64(Ctx& ctx, const Tensor<typename Ctx::Scalar>& t) {
  T64 out(t.shape, {});
  for (const auto& v : t.data) out.data.push_back(ctx.to_double(v));
  return out;
}

// Rounds every value to the context's format (so f64 sees exactly the context's inputs).
template <class Ctx>
void round_to(Ctx& ctx, std::vector<T64>& ts) {
  for (auto& t : ts) t = to_f64(ctx, to_ctx(ctx, t));
}

template <class Ctx>
void round_to(Ctx& ctx, Payload<double>& p) {
  for (auto& [id, rec] : p.linear) {
    for (double& w : rec.weight) w = ctx.to_double(ctx.from_double(w));
    for (double& b : rec.bias) b = ctx.to_double(ctx.from_double(b));
  }
}

std::vector<T64> abs_of(std::vector<T64> ts) {
  for (auto& t : ts)
    for (double& v : t.data) v = std::fabs(v);
  return ts;
}

Payload<double> abs_of(Payload<double> p) {
  for (auto& [id, rec] : p.linear) {
    for (double& w : rec.weight) w = std::fabs(w);
    for (double& b : rec.bias) b = std::fabs(b);
  }
  return p;
}

// |got - want| <= (depth + 2) u mag entrywise, mag the same rule over absolute values (every rule
// here sums products of its data with positive coefficients, so each entry's error is at most
// depth roundings of relative size u times mag).
void expect_within(const T64& got, const T64& want, const T64& mag, double u, double depth, const char* what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  for (size_t i = 0; i < want.data.size(); ++i)
    EXPECT_NEAR(got.data[i], want.data[i], (depth + 2) * u * mag.data[i] + 1e-300) << what << " at " << i;
}

template <class Ctx>
void agrees_with_f64(Ctx& ctx, double u) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    F64Run r = random_run(c, seed_of(c.name) + 6);
    round_to(ctx, r.xs);
    round_to(ctx, r.us);
    std::vector<T64> vs{r.v};
    round_to(ctx, vs);
    round_to(ctx, r.payload);
    double depth = static_cast<double>(numel(c.node.out_shape));
    for (const Shape& s : c.shapes) depth = std::max(depth, static_cast<double>(numel(s)));

    Harness<F64Context> ref(r.ctx, c.node, r.payload, r.xs);
    Harness<F64Context> mag(r.ctx, c.node, abs_of(r.payload), abs_of(r.xs));
    using S = typename Ctx::Scalar;
    const Payload<S> payload = convert_payload<S>(r.payload, [&](double v) { return ctx.from_double(v); });
    Harness<Ctx> hs(ctx, c.node, payload, to_ctx(ctx, r.xs));
    expect_within(to_f64(ctx, hs.y), ref.y, mag.y, u, depth, "value");
    expect_within(to_f64(ctx, hs.jvp(to_ctx(ctx, r.us))), ref.jvp(r.us), mag.jvp(abs_of(r.us)), u, depth, "jvp");

    const VjpOut<S> g = hs.vjp_all(to_ctx(ctx, vs[0]));
    const VjpOut<double> gr = ref.vjp_all(vs[0]), gm = mag.vjp_all(abs_of(vs)[0]);
    for (size_t k = 0; k < r.xs.size(); ++k)
      expect_within(to_f64(ctx, g.parents[k]), gr.parents[k], gm.parents[k], u, depth, "vjp");
    ASSERT_EQ(g.params.size(), gr.params.size());
    for (size_t p = 0; p < g.params.size(); ++p) {
      const Tensor<S> got(g.params[p].shape, g.params[p].values);
      expect_within(to_f64(ctx, got), T64(gr.params[p].shape, gr.params[p].values),
                    T64(gm.params[p].shape, gm.params[p].values), u, depth, "param");
    }
  }
}

TEST(AutodiffLayout, RulesRunInMpfrAt200BitsAndAgreeWithF64) {
  RealContext ctx(200);
  agrees_with_f64(ctx, std::ldexp(1.0, -53));
}

TEST(AutodiffLayout, RulesRunInBfloat16AndAgreeWithF64) {
  auto fmt = parse_format("bfloat16");
  ASSERT_TRUE(fmt.ok()) << fmt.message();
  BinaryContext ctx(*fmt);
  agrees_with_f64(ctx, std::ldexp(1.0, -8));
}

// ---- a few exact values, to pin the conventions down

TEST(AutodiffLayout, BroadcastVjpSumsOverBroadcastAxes) {
  // [1, 3] -> [2, 2, 3]: the cotangent summed over the leading axis and the unit axis.
  const Case c = make_case("b", Op::BroadcastTo, BroadcastAttrs{{1, 3}, {2, 2, 3}}, {{1, 3}});
  F64Context ctx;
  Harness<F64Context> hs(ctx, c.node, {}, {T64({1, 3}, {0, 0, 0})});
  T64 cot({2, 2, 3}, {});
  for (int i = 0; i < 12; ++i) cot.data.push_back(i);
  const auto g = hs.vjp_all(cot);
  EXPECT_EQ(g.parents[0], T64({1, 3}, {0 + 3 + 6 + 9, 1 + 4 + 7 + 10, 2 + 5 + 8 + 11}));
}

TEST(AutodiffLayout, ReduceMeanVjpDividesOncePerLane) {
  const Case c = make_case("m", Op::ReduceMean, AxisAttrs{1}, {{2, 3}});
  F64Context ctx;
  Harness<F64Context> hs(ctx, c.node, {}, {T64({2, 3}, {1, 2, 3, 4, 5, 6})});
  const auto g = hs.vjp_all(T64({2}, {3, 6}));
  EXPECT_EQ(g.parents[0], T64({2, 3}, {1, 1, 1, 2, 2, 2}));
}

TEST(AutodiffLayout, MatmulVjpSumsOverBroadcastBatches) {
  // [2, 3] @ [2, 3, 1] (A broadcast over 2 batches): gA = sum_t G_t B_t^T.
  const Case c = make_case("mm", Op::Matmul, NoAttrs{}, {{2, 3}, {2, 3, 1}});
  F64Context ctx;
  Harness<F64Context> hs(ctx, c.node, {}, {T64({2, 3}, {1, 2, 3, 4, 5, 6}), T64({2, 3, 1}, {1, 0, 0, 0, 1, 0})});
  const auto g = hs.vjp_all(T64({2, 2, 1}, {1, 2, 3, 4}));
  EXPECT_EQ(g.parents[0], T64({2, 3}, {1, 3, 0, 2, 4, 0}));
  EXPECT_EQ(g.parents[1], T64({2, 3, 1}, {1 + 8, 2 + 10, 3 + 12, 3 + 16, 6 + 20, 9 + 24}));
}

TEST(AutodiffLayout, LinearReportsAMissingPayload) {
  const Case c = linear_case("l", {2}, 1);
  F64Context ctx;
  Payload<double> none;
  const std::vector<T64> xs{T64({2}, {1, 2})};
  const T64 y({1}, {0});
  const EvalOptions options;
  const auto ps = Harness<F64Context>::ptrs(xs);
  const DiffArgs<double> a{c.node, ps, y, none, options};
  VjpOut<double> out{{true}, {T64{}}, true, {}};
  const Status st = ad::vjp_Linear(ctx, a, y, out);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.field(), "payload");
  const std::vector<const T64*> ts{&xs[0]};
  EXPECT_FALSE(ad::jvp_Linear(ctx, a, std::span<const T64* const>(ts)).ok());
}

}  // namespace
}  // namespace denote
