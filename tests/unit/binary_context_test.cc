// BinaryContext and RealContext through the evaluator: the seed's six-node graph in exact binary32
// (the same words as hardware float arithmetic, which rounds every add and mul once to nearest,
// with tanh from MPFR rounded to 24 bits), every PyTorch golden model in bfloat16 with upward
// rounding (no error), the same models in MPFR at 200 bits against PyTorch's float64 values, a
// finite-format invalid operation as an `IR eval: node {i}: ...` error, casts, and the IEEE
// maximum/minimum meanings.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "mpfr_test_util.h"

namespace denote {
namespace {

namespace fs = std::filesystem;

template <class Ctx>
std::vector<Tensor<typename Ctx::Scalar>> to_ctx(const Ctx& ctx, const std::vector<Tensor<double>>& xs) {
  std::vector<Tensor<typename Ctx::Scalar>> out;
  for (const auto& x : xs) {
    std::vector<typename Ctx::Scalar> d;
    for (double v : x.data) d.push_back(ctx.from_double(v));
    out.emplace_back(x.shape, std::move(d));
  }
  return out;
}

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> run_all(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& xs) {
  using S = typename Ctx::Scalar;
  const auto payload = convert_payload<S>(m.payload, [&](double v) { return ctx.from_double(v); });
  const auto in = to_ctx(ctx, xs);
  return denote_all(m.graph, payload, std::span<const Tensor<S>>(in), ctx);
}

TEST(BinaryContext, SixNodeGraphInBinary32IsTheFloatEmulation) {
  const Model m = six_node_model();
  const std::vector<Tensor<double>> x0 = {Tensor<double>({4}, six_node_x0())};
  BinaryContext ctx;  // binary32, nearest-even
  auto table = run_all(ctx, m, x0);
  ASSERT_TRUE(table.ok()) << table.message();
  F32Context fctx;
  auto ftable = run_all(fctx, m, x0);
  ASSERT_TRUE(ftable.ok()) << ftable.message();
  // Nodes 0..4 use only + and * (each one IEEE rounding in hardware): the same words.
  for (int id = 0; id <= 4; ++id) {
    ASSERT_EQ((*table)[id].data.size(), (*ftable)[id].data.size());
    for (size_t i = 0; i < (*table)[id].data.size(); ++i)
      EXPECT_EQ((*table)[id].data[i].bits, std::bit_cast<uint32_t>((*ftable)[id].data[i])) << "node " << id;
  }
  // Node 5 = tanh(node 4): MPFR's tanh at 24 bits (binary32's precision, normal range).
  mpfr_test::Mp s(24), y(24);
  mpfr_set_flt(s, (*ftable)[4].data[0], MPFR_RNDN);
  mpfr_tanh(y, s, MPFR_RNDN);
  EXPECT_EQ((*table)[5].data[0].bits, std::bit_cast<uint32_t>(mpfr_get_flt(y, MPFR_RNDN)));
  EXPECT_EQ(fmt::format("{:.6f}", ctx.to_double((*table)[5].data[0])), "0.027713");
  EXPECT_EQ(flags_to_string(ctx.flags()), "inexact");
}

std::string golden_dir() { return std::string(DENOTE_SOURCE_DIR) + "/tests/data/golden"; }

struct GoldenCase {
  std::string name;
  Model model;
  std::vector<Tensor<double>> inputs;
  Tensor<double> expected_f64;
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(golden_dir()))
    if (fs::exists(e.path() / "model.json")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    GoldenCase c{dir.filename().string(), {}, {}, {}};
    auto m = load_model_file((dir / "model.json").string());
    EXPECT_TRUE(m.ok()) << m.message();
    if (!m.ok()) continue;
    c.model = *m;
    for (size_t k = 0; k < c.model.graph.input_ids().size(); ++k) {
      auto a = read_npy_file((dir / fmt::format("input_{}.npy", k)).string());
      EXPECT_TRUE(a.ok()) << a.message();
      if (a.ok()) c.inputs.push_back(a->tensor);
    }
    auto e = read_npy_file((dir / "expected_f64.npy").string());
    EXPECT_TRUE(e.ok()) << e.message();
    if (e.ok()) c.expected_f64 = e->tensor;
    out.push_back(std::move(c));
  }
  return out;
}

TEST(BinaryContext, EveryGoldenModelRunsInBfloat16Upward) {
  const auto cases = golden_cases();
  ASSERT_GT(cases.size(), 100u);
  const BinaryFormat bf16 = *parse_format("bfloat16");
  for (const GoldenCase& c : cases) {
    BinaryContext ctx(bf16, Rounding::Upward);
    auto table = run_all(ctx, c.model, c.inputs);
    ASSERT_TRUE(table.ok()) << c.name << ": " << table.message();
    const auto& y = (*table)[c.model.output_ids[0]];
    EXPECT_EQ(y.shape, c.expected_f64.shape) << c.name;
    // 8-bit significands lose a lot (log_softmax_large_offset), but nothing becomes NaN or
    // infinite where PyTorch's float64 value is an ordinary number.
    for (size_t i = 0; i < y.data.size() && i < c.expected_f64.data.size(); ++i)
      if (std::isfinite(c.expected_f64.data[i])) {
        EXPECT_TRUE(std::isfinite(ctx.to_double(y.data[i]))) << c.name << " [" << i << "]";
      }
  }
}

TEST(RealContext, EveryGoldenModelAt200BitsMatchesPyTorchFloat64) {
  for (const GoldenCase& c : golden_cases()) {
    RealContext ctx(200);
    auto table = run_all(ctx, c.model, c.inputs);
    ASSERT_TRUE(table.ok()) << c.name << ": " << table.message();
    const auto& y = (*table)[c.model.output_ids[0]];
    ASSERT_EQ(y.data.size(), c.expected_f64.data.size()) << c.name;
    for (size_t i = 0; i < y.data.size(); ++i) {
      const double got = ctx.to_double(y.data[i]), want = c.expected_f64.data[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << c.name;
        continue;
      }
      if (got == want) continue;
      EXPECT_NEAR(got, want, 1e-12 * std::max(1.0, std::fabs(want))) << c.name << " [" << i << "]";
    }
  }
}

// x -> op(x) (or op(x, y)) over one input of shape [n], evaluated in `format`.
Result<Tensor<FpWord>> run_op(const char* format, Op op, const std::vector<double>& x,
                              const std::vector<double>& y = {}) {
  GraphBuilder b;
  const int64_t in = b.input({static_cast<int64_t>(x.size())});
  int64_t out = in;
  std::vector<Tensor<double>> inputs = {Tensor<double>({static_cast<int64_t>(x.size())}, x)};
  if (y.empty()) {
    out = b.unary(op, in);
  } else {
    const int64_t in2 = b.input({static_cast<int64_t>(y.size())});
    inputs.emplace_back(Shape{static_cast<int64_t>(y.size())}, y);
    out = b.binary(op, in, in2);
  }
  auto m = b.build({out});
  if (!m.ok()) return m.status();
  BinaryContext ctx(*parse_format(format));
  DENOTE_ASSIGN_OR_RETURN(auto table, run_all(ctx, *m, inputs));
  return table[out];
}

TEST(BinaryContext, AnInvalidOperationWithoutNaNIsAnEvalError) {
  // e2m1fn has no NaN: sqrt(-1) and 0/0 have no value there.
  auto r = run_op("e2m1fn", Op::Sqrt, {4.0, -1.0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("IR eval: node 1: e2m1fn: invalid operation", 0), 0u) << r.message();
  auto d = run_op("e2m1fn", Op::Div, {0.0}, {0.0});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.message().rfind("IR eval: node 2: ", 0), 0u) << d.message();
  // In a format with NaN the same operation is a canonical NaN, not an error.
  auto n = run_op("e4m3fn", Op::Sqrt, {-1.0});
  ASSERT_TRUE(n.ok()) << n.message();
  EXPECT_EQ(n->data[0].bits, 0x7fu);
  // Overflow in e2m1fn saturates (no error): exp(4) = 54.6 -> 6.
  auto s = run_op("e2m1fn", Op::Exp, {4.0});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(s->data[0].bits, 0x7u);
}

TEST(BinaryContext, MaxMinReluAreIeeeAndFlagsAccumulate) {
  BinaryContext ctx(*parse_format("binary16"));
  const FpWord pz{0x0000}, nz{0x8000}, one{0x3c00}, qnan{0x7e00}, snan{0x7c01};
  EXPECT_EQ(ctx.max(nz, pz), pz);
  EXPECT_EQ(ctx.max(pz, nz), pz);
  EXPECT_EQ(ctx.min(pz, nz), nz);
  EXPECT_EQ(ctx.relu(nz), pz);
  EXPECT_EQ(ctx.relu(one), one);
  EXPECT_TRUE(ctx.is_nan(ctx.relu(qnan)));
  EXPECT_TRUE(ctx.is_nan(ctx.max(one, qnan)));
  EXPECT_EQ(ctx.flags(), 0u);
  EXPECT_EQ(ctx.relu(snan), FpWord{0x7e01});
  EXPECT_EQ(ctx.flags(), uint32_t{kFpInvalid});
  EXPECT_FALSE(ctx.log_domain_ok(pz));
  EXPECT_FALSE(ctx.log_domain_ok(qnan));
  EXPECT_TRUE(ctx.log_domain_ok(one));
  EXPECT_TRUE(ctx.less(nz, one));
  ctx.div(one, pz);
  EXPECT_EQ(flags_to_string(ctx.flags()), "invalid,divide-by-zero");
  EXPECT_EQ(ctx.take_error(), "");
}

TEST(BinaryContext, CastsRoundOnceInTheirOwnMode) {
  BinaryContext ctx;  // binary32
  const FpWord x = ctx.from_double(1.0 + std::ldexp(1.0, -10));  // exact in binary32
  EXPECT_EQ(ctx.flags(), 0u);
  ASSERT_TRUE(ctx.can_cast("bfloat16", "upward"));
  EXPECT_EQ(ctx.to_double(ctx.cast(x, "bfloat16", "upward")), 1.0 + std::ldexp(1.0, -7));
  ASSERT_TRUE(ctx.can_cast("bfloat16", "toward-zero"));
  EXPECT_EQ(ctx.to_double(ctx.cast(x, "bfloat16", "toward-zero")), 1.0);
  EXPECT_EQ(ctx.to_double(ctx.cast(x, "bfloat16", "nearest-even")), 1.0);
  EXPECT_EQ(flags_to_string(ctx.flags()), "inexact");
  // e4m3fn is non-saturating: 1e6 has no value there but its NaN (overflow).
  EXPECT_TRUE(ctx.is_nan(ctx.cast(ctx.from_double(1e6), "e4m3fn", "nearest-even")));
  EXPECT_TRUE(ctx.flags() & kFpOverflow);
  EXPECT_FALSE(ctx.can_cast("int8", "nearest-even"));
  EXPECT_FALSE(ctx.can_cast("bool", "nearest-even"));
  EXPECT_FALSE(ctx.can_cast("bfloat16", "sideways"));
  EXPECT_TRUE(ctx.can_cast("f64", "downward"));
  // The cast op through the evaluator, rounding from the node's attributes.
  GraphBuilder b;
  const int64_t in = b.input({2});
  const int64_t c = b.unary(Op::Cast, in, CastAttrs{"e4m3fn", "upward"});
  auto m = b.build({c});
  ASSERT_TRUE(m.ok()) << m.message();
  BinaryContext ectx;
  auto table = run_all(ectx, *m, {Tensor<double>({2}, {0.3, -0.3})});
  ASSERT_TRUE(table.ok()) << table.message();
  EXPECT_EQ(ectx.to_double((*table)[c].data[0]), 0.3125);   // e4m3fn values near 0.3: 0.28125, 0.3125
  EXPECT_EQ(ectx.to_double((*table)[c].data[1]), -0.28125);
}

// A cast target that is no format is said to be that, in the binary context too (it once said the
// cast "needs the binary-format context" while running in it).
TEST(BinaryContext, ACastToNoFormatSaysWhy) {
  for (const char* dtype : {"binary(-1,3)", "binary(100,100)", "f33"}) {
    GraphBuilder b;
    const int64_t in = b.input({2});
    const int64_t c = b.unary(Op::Cast, in, CastAttrs{dtype, "nearest-even"});
    Model m = b.model();
    m.output_ids = {c};
    BinaryContext ctx;
    auto table = run_all(ctx, m, {Tensor<double>({2}, {0.3, -0.3})});
    ASSERT_FALSE(table.ok()) << dtype;
    EXPECT_EQ(table.message().find("needs the binary-format context"), std::string::npos) << table.message();
    EXPECT_NE(table.message().find(std::string("cast to ") + dtype + ": "), std::string::npos) << table.message();
    EXPECT_EQ(table.status().field(), "dtype") << table.message();
  }
}

TEST(RealContext, CompositesAreCorrectlyRoundedAndQuotientsExact) {
  RealContext ctx(256);
  for (double x : {-3.5, -0.75, 0.001, 2.0, 30.0}) {
    // Independent: the naive formulas at 2000 bits, rounded to 256.
    mpfr_test::Mp mx(64), z(2000), want(256);
    mpfr_set_d(mx, x, MPFR_RNDN);
    for (FpFunction fn : {FpFunction::Sigmoid, FpFunction::Softplus, FpFunction::Gelu}) {
      ASSERT_EQ(mpfr_test::reference_value(fn, mx, z), 2);
      mpfr_set(want, z, MPFR_RNDN);
      const RealScalar a = ctx.from_double(x);
      const RealScalar got = fn == FpFunction::Sigmoid ? ctx.sigmoid(a) : fn == FpFunction::Softplus ? ctx.softplus(a) : ctx.gelu(a);
      EXPECT_TRUE(mpfr_equal_p(got.get(), want)) << function_name(fn) << "(" << x << ")";
    }
  }
  EXPECT_EQ(ctx.to_double(ctx.div_floor(ctx.from_double(1.0), ctx.from_double(0.1))), 9.0);
  EXPECT_EQ(ctx.to_double(ctx.div_floor(ctx.from_double(-1.0), ctx.from_double(HUGE_VAL))), -1.0);
  EXPECT_EQ(ctx.to_double(ctx.remainder(ctx.from_double(-7.0), ctx.from_double(2.0))), 1.0);
  EXPECT_EQ(ctx.to_double(ctx.rsqrt(ctx.from_double(-0.0))), -HUGE_VAL);
  EXPECT_TRUE(std::signbit(ctx.to_double(ctx.gelu(ctx.from_double(-HUGE_VAL)))));
  ASSERT_TRUE(ctx.can_cast("bfloat16", "upward"));
  EXPECT_EQ(ctx.to_double(ctx.cast(ctx.from_double(1.0 + std::ldexp(1.0, -10)), "bfloat16", "upward")), 1.0 + std::ldexp(1.0, -7));
  EXPECT_TRUE(ctx.is_nan(ctx.cast(ctx.nan(), "e2m1fn", "nearest-even")));
  EXPECT_NE(ctx.take_error().find("e2m1fn"), std::string::npos);
  // Copies own their numbers.
  RealScalar a = ctx.from_double(2.0), b = a;
  mpfr_set_d(a.get(), 3.0, MPFR_RNDN);
  EXPECT_EQ(ctx.to_double(b), 2.0);
}

}  // namespace
}  // namespace denote
