// The fast conv fold (src/scalar/binary_fast_fold.h, FastConv; the BinaryContext rule of
// src/eval/eval_binary.cc) against the op table's generic conv rule (rules::eval_Conv over the same
// context, one ctx.add / ctx.mul per step): words, flags and errors must be identical, for bfloat16,
// binary16 and fp8 formats, in every rounding mode, on random convs (1-D and 2-D, groups, stride,
// padding with asymmetric padding_after, dilation, windows with no tap), with operands that keep the
// fast path, that leave it per lane (overflowing and subnormal products and sums, max-finite and
// subnormal words) and that send the whole conv to the generic rule (NaN, infinity, malformed words).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/binary_context.h"
#include "ops/window_eval.h"
#include "scalar/binary_fast_fold.h"
#include "unit/binary_fast_test_util.h"
#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::format_named;
using testing::kAllModes;

enum class Mix { Finite, Wide, Special, Malformed };

// Words of values in [-1, 1] (Wide: some scaled by 2^(3/4 emax) or 2^(3/4 emin), so that products and
// sums overflow or go subnormal, and some max-finite and subnormal words), plus specials or a
// malformed word where asked.
std::vector<FpWord> words(const BinaryFormat& f, size_t n, Mix mix, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double big = std::ldexp(1.0, f.emax() * 3 / 4), tiny = std::ldexp(1.0, f.emin() * 3 / 4);
  std::vector<FpWord> out(n);
  FpEnv env;
  for (size_t i = 0; i < n; ++i) {
    double v = u(rng);
    if (mix != Mix::Finite && rng() % 6 == 0) v *= (rng() % 2) ? big : tiny;
    if (rng() % 16 == 0) v = 0.0;
    out[i].bits = fp_from_double(f, env, v, true);
    if (mix != Mix::Finite && rng() % 24 == 0) out[i].bits = max_finite(f, rng() % 2 == 0);
    if (mix != Mix::Finite && rng() % 24 == 0) out[i].bits = 1 + rng() % ((uint64_t{1} << f.frac_bits) - 1);
  }
  if (n == 0) return out;
  if (mix == Mix::Special && f.has_nan()) out[n / 2].bits = canonical_nan(f);
  if (mix == Mix::Special && f.has_inf()) out[n / 3].bits = infinity_word(f, true);
  if (mix == Mix::Malformed) out[n / 2].bits = f.word_mask() + 1;
  return out;
}

struct Case {
  Shape in;
  ConvConfig c;
};

ConvConfig config(int64_t axis, int64_t cin, int64_t cout, int64_t groups, std::vector<int64_t> k,
                  std::vector<int64_t> s, std::vector<int64_t> p, std::vector<int64_t> pa, std::vector<int64_t> d) {
  ConvConfig c;
  c.window = WindowConfig{static_cast<int64_t>(k.size()), std::move(k), std::move(s), std::move(p)};
  c.padding_after = std::move(pa);
  c.dilation = std::move(d);
  c.groups = groups;
  c.channel_axis = axis;
  c.in_channels = cin;
  c.out_channels = cout;
  return c;
}

// A few chosen convs, then random ones (1-D or 2-D, with or without a batch axis).
std::vector<Case> cases() {
  std::vector<Case> out{
      {{2, 3, 7, 6}, config(1, 3, 19, 1, {3, 2}, {2, 1}, {1, 0}, {2, 1}, {1, 2})},  // two blocks, the second partial
      {{4, 5}, config(0, 4, 4, 4, {3}, {1}, {2}, {0}, {2})},                          // depthwise, 1-D, no batch
      {{1, 2, 3, 3}, config(1, 2, 6, 2, {1, 1}, {1, 1}, {2, 2}, {2, 1}, {})},         // windows without a tap
      {{1, 1, 9, 9}, config(1, 1, 16, 1, {3, 3}, {1, 1}, {1, 1}, {}, {})},            // exactly one block
  };
  std::mt19937_64 rng(21);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  while (out.size() < 12) {
    const int64_t rank = pick(1, 2), axis = pick(0, 1), groups = pick(1, 3);
    const int64_t cin = groups * pick(1, 3), cout = groups * pick(1, 12);
    Shape in;
    if (axis == 1) in.push_back(pick(1, 2));
    in.push_back(cin);
    std::vector<int64_t> k, s, p, pa, d;
    for (int64_t i = 0; i < rank; ++i) {
      in.push_back(pick(3, 8));
      k.push_back(pick(1, 3)), s.push_back(pick(1, 2)), p.push_back(pick(0, 2)), pa.push_back(pick(0, 2));
      d.push_back(pick(1, 2));
      if (d.back() * (k.back() - 1) + 1 > in.back() + p.back() + pa.back()) d.back() = 1;
    }
    out.push_back({in, config(axis, cin, cout, groups, k, s, p, pa, d)});
  }
  return out;
}

struct Outcome {
  Result<Tensor<FpWord>> value;
  uint32_t flags;
};

// The generic rule of the op table, called directly (no BinaryContext override).
Outcome generic_conv(const Model& m, const Payload<FpWord>& pw, const Tensor<FpWord>& x, const BinaryFormat& f,
                     Rounding r) {
  BinaryContext ctx(f, r);
  const Node& node = m.graph.nodes[1];
  const Tensor<FpWord>* parents[] = {&x};
  const EvalOptions options{};
  const rules::EvalArgs<FpWord> args{node, parents, pw, node.out_shape, nullptr, options};
  Result<Tensor<FpWord>> y = rules::eval_Conv(ctx, args);
  if (std::string err = ctx.take_error(); y.ok() && !err.empty()) y = Status::error(ErrorCode::kEval, err);
  return {std::move(y), ctx.flags()};
}

// The evaluator (denote_all: the fast rule where it applies).
Outcome evaluator_conv(const Model& m, const Payload<FpWord>& pw, const Tensor<FpWord>& x, const BinaryFormat& f,
                       Rounding r) {
  BinaryContext ctx(f, r);
  std::vector<Tensor<FpWord>> inputs{x};
  auto table = denote_all(m.graph, pw, std::span<const Tensor<FpWord>>(inputs), ctx, EvalOptions{});
  if (!table.ok()) return {table.status(), ctx.flags()};
  return {(*table)[1], ctx.flags()};
}

// Whether FastConv takes the conv (all operands finite), as the rule would ask it.
bool fast_prepares(const FastFormat& ff, const Case& k, const Tensor<FpWord>& x, const ConvRecord<FpWord>& rec) {
  const int64_t axis = k.c.channel_axis;
  const FastConvDims d{numel(Shape(k.in.begin(), k.in.begin() + axis)), k.c.in_channels, k.c.out_channels,
                       k.c.groups, numel(Shape(k.in.begin() + axis + 1, k.in.end())), numel(k.c.window.kernel)};
  FastConv conv;
  return conv.prepare(ff, x.data.data(), rec.weight.data(), rec.bias.data(), d);
}

// fp8 with and without infinity, fnuz (one zero), and fp4 (no NaN: saturating, specials stay fast).
const char* const kConvFormats[] = {"bfloat16", "binary16", "e4m3fn", "e5m2", "e4m3fnuz", "e2m1fn"};

// Every case, format, mode and mix at the kernel level in effect; counts the comparisons and the
// convs FastConv takes.
void compare_cases(std::mt19937_64& rng, int& compared, int& fast) {
  for (const Case& k : cases()) {
    GraphBuilder b;
    const int64_t wcount = k.c.out_channels * (k.c.in_channels / k.c.groups) * numel(k.c.window.kernel);
    const int64_t id = b.conv(b.input(k.in), k.c, std::vector<double>(wcount, 0.0),
                              std::vector<double>(k.c.out_channels, 0.0));
    Result<Model> m = b.build({id});
    ASSERT_TRUE(m.ok()) << m.message() << " in=" << to_string(k.in);
    for (const char* name : kConvFormats) {
      const BinaryFormat f = format_named(name);
      const FastFormat ff = *FastFormat::of(f);
      for (Rounding r : kAllModes) {
        for (Mix mix : {Mix::Finite, Mix::Wide, Mix::Special, Mix::Malformed}) {
          Payload<FpWord> pw = convert_payload<FpWord>(m->payload, [](double) { return FpWord{}; });
          ConvRecord<FpWord>& rec = pw.conv.at(id);
          rec.weight = words(f, rec.weight.size(), mix == Mix::Malformed ? Mix::Wide : mix, rng);
          rec.bias = words(f, rec.bias.size(), mix == Mix::Malformed ? Mix::Wide : mix, rng);
          const Tensor<FpWord> x(k.in, words(f, static_cast<size_t>(numel(k.in)), mix, rng));
          const Outcome want = generic_conv(*m, pw, x, f, r), got = evaluator_conv(*m, pw, x, f, r);
          const std::string what =
              fmt::format("{} {} mix {} in={}", name, rounding_name(r), static_cast<int>(mix), to_string(k.in));
          ASSERT_EQ(got.value.ok(), want.value.ok()) << what << ": " << got.value.message();
          if (want.value.ok()) {
            EXPECT_EQ(got.value->shape, want.value->shape) << what;
            EXPECT_EQ(got.value->data, want.value->data) << what;
          } else {
            EXPECT_NE(got.value.message().find(want.value.message()), std::string::npos)
                << what << ": " << got.value.message() << " vs " << want.value.message();
          }
          EXPECT_EQ(got.flags, want.flags) << what;
          const bool takes = fast_prepares(ff, k, x, rec);
          EXPECT_EQ(takes, mix == Mix::Finite || mix == Mix::Wide || (mix == Mix::Special && !f.has_nan()))
              << what;
          fast += takes;
          ++compared;
        }
      }
    }
  }
}

// At every kernel level the CPU has: 2 (AVX-512: the binary32 lanes of fastsimd::rne_conv_blocks for
// bfloat16, binary16 and the fp8/fp4 formats), 1 (AVX2 + F16C: binary32 lanes for bfloat16 and
// binary16) and 0 (the double lanes).
TEST(BinaryFastConv, EqualsTheGenericRuleWordsFlagsAndErrors) {
  std::mt19937_64 rng(20);
  int compared = 0, fast = 0, levels = 0;
  for (int want_level : {2, 1, 0}) {
    const testing::SimdLevel level(want_level);
    if (level.got != want_level) continue;
    ++levels;
    compare_cases(rng, compared, fast);
  }
  EXPECT_EQ(compared, levels * 12 * 6 * 5 * 4);
  EXPECT_GT(fast, compared / 2);  // Finite and Wide everywhere, Special in e2m1fn
}

}  // namespace
}  // namespace denote
