// The fast folds (fast_matmul, fast_linear), the evaluator's BinaryContext tensor rules and the
// function tables against plain sequences of the general routines (fp_add, fp_mul, fp_function):
// words, flags and the first error must be identical, in every rounding mode, with operands that
// keep the fast path, that leave it per lane (subnormal and overflowing products and sums), and
// that force the one-at-a-time path (NaN, infinity, malformed words).
#include <gtest/gtest.h>

#include <array>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_fast.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_tables.h"
#include "unit/binary_fast_test_util.h"
#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::format_named;
using testing::kAllModes;

enum class Mix { Finite, Wide, Special, Malformed };

// Words of values in [-scale, scale] rounded to f (Wide: a few huge and tiny values too, so that
// products and sums overflow or go subnormal), plus specials or a malformed word where asked.
std::vector<FpWord> words(const BinaryFormat& f, size_t n, Mix mix, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<FpWord> out(n);
  FpEnv env;
  for (size_t i = 0; i < n; ++i) {
    double v = u(rng);
    if (mix != Mix::Finite && rng() % 8 == 0) v *= (rng() % 2) ? 1e30 : 1e-30;
    if (rng() % 16 == 0) v = 0.0;
    out[i].bits = fp_from_double(f, env, v, true);
  }
  if (mix == Mix::Special && f.has_nan()) out[n / 2].bits = canonical_nan(f);
  if (mix == Mix::Special && f.has_inf()) out[n / 3].bits = infinity_word(f, true);
  if (mix == Mix::Malformed) out[n / 2].bits = f.word_mask() + 1;
  return out;
}

using testing::ref_matmul;

std::vector<FpWord> ref_linear(const BinaryFormat& f, FpEnv& env, const std::vector<FpWord>& x,
                               const std::vector<FpWord>& w, const std::vector<FpWord>& bias, int64_t rows,
                               int64_t in, int64_t out) {
  std::vector<FpWord> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      uint64_t acc = zero_word(f, false);
      for (int64_t i = 0; i < in; ++i) acc = fp_add(f, env, acc, fp_mul(f, env, w[o * in + i].bits, x[r * in + i].bits));
      y[r * out + o].bits = fp_add(f, env, acc, bias[o].bits);
    }
  return y;
}

const char* const kFoldFormats[] = {"bfloat16", "binary16", "e4m3fn", "e4m3fnuz", "e5m2", "e2m1fn", "binary32"};

TEST(BinaryFastFold, MatmulEqualsTheSequentialFold) {
  std::mt19937_64 rng(5);
  const int64_t m = 5, k = 37, n = 21;  // two blocks of lanes and a tail
  for (const char* name : kFoldFormats) {
    const FastFormat ff = *FastFormat::of(format_named(name));
    for (Rounding r : kAllModes) {
      for (Mix mix : {Mix::Finite, Mix::Wide, Mix::Special, Mix::Malformed}) {
        const auto a = words(ff.format, m * k, mix, rng);
        const auto b = words(ff.format, k * n, mix == Mix::Malformed ? Mix::Wide : mix, rng);
        FpEnv fe{r, 0, {}}, re{r, 0, {}};
        std::vector<FpWord> got(static_cast<size_t>(m * n));
        fast_matmul(ff, fe, a.data(), b.data(), got.data(), m, k, n);
        EXPECT_EQ(got, ref_matmul(ff.format, re, a, b, m, k, n)) << name << " " << rounding_name(r);
        EXPECT_EQ(fe.flags, re.flags) << name << " " << rounding_name(r) << " " << static_cast<int>(mix);
        EXPECT_EQ(fe.error, re.error) << name;
        if (mix == Mix::Malformed) {
          EXPECT_FALSE(fe.error.empty()) << name;
        }
      }
    }
  }
}

TEST(BinaryFastFold, LinearEqualsTheSequentialFoldPlusBias) {
  std::mt19937_64 rng(6);
  // (4, 29, 19): two strips of 8 outputs and a tail; (2, 150, 11): inputs over several 64-wide tiles.
  for (const auto& [rows, in, out] : {std::array<int64_t, 3>{4, 29, 19}, std::array<int64_t, 3>{2, 150, 11}}) {
    for (const char* name : kFoldFormats) {
      const FastFormat ff = *FastFormat::of(format_named(name));
      for (Rounding r : kAllModes) {
        for (Mix mix : {Mix::Finite, Mix::Wide, Mix::Special, Mix::Malformed}) {
          const auto x = words(ff.format, rows * in, mix == Mix::Malformed ? Mix::Wide : mix, rng);
          const auto w = words(ff.format, out * in, mix, rng);
          const auto bias = words(ff.format, out, mix == Mix::Special ? Mix::Special : Mix::Wide, rng);
          FpEnv fe{r, 0, {}}, re{r, 0, {}};
          std::vector<FpWord> got(static_cast<size_t>(rows * out));
          fast_linear(ff, fe, x.data(), w.data(), bias.data(), got.data(), rows, in, out);
          EXPECT_EQ(got, ref_linear(ff.format, re, x, w, bias, rows, in, out)) << name << " " << rounding_name(r);
          EXPECT_EQ(fe.flags, re.flags) << name << " " << rounding_name(r);
          EXPECT_EQ(fe.error, re.error) << name;
        }
      }
    }
  }
}

// linear -> relu -> linear -> mul_elem(y, y) -> sub(., y) through denote_all, against fp_* by hand.
TEST(BinaryFastFold, EvaluatorRulesGiveTheOpTablesWordsAndFlags) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t rows = 3, d0 = 20, d1 = 13, d2 = 9;
  auto vals = [&](int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& e : v) e = u(rng);
    return v;
  };
  GraphBuilder g;
  const int64_t x = g.input({rows, d0});
  const int64_t h = g.unary(Op::Relu, g.linear(x, d1, vals(d1 * d0), vals(d1)));
  const int64_t y = g.linear(h, d2, vals(d2 * d1), vals(d2));
  const int64_t z = g.binary(Op::Sub, g.binary(Op::MulElem, y, y), y);
  Result<Model> model = g.build({z});
  ASSERT_TRUE(model.ok()) << model.message();
  const std::vector<double> xin = vals(rows * d0);
  for (const char* name : {"bfloat16", "e4m3fn"}) {
    for (Rounding r : {Rounding::NearestEven, Rounding::Downward}) {
      BinaryContext ctx(format_named(name), r);
      const BinaryFormat& f = ctx.format();
      auto to_word = [&](double v) { return ctx.from_double(v); };
      Payload<FpWord> pw = convert_payload<FpWord>(model->payload, to_word);
      std::vector<FpWord> xw;
      for (double v : xin) xw.push_back(to_word(v));
      ctx.clear_flags();
      std::vector<Tensor<FpWord>> inputs{Tensor<FpWord>({rows, d0}, xw)};
      auto table = denote_all(model->graph, pw, std::span<const Tensor<FpWord>>(inputs), ctx, EvalOptions{});
      ASSERT_TRUE(table.ok()) << table.message();
      FpEnv env{r, 0, {}};
      const auto& l1 = pw.linear.at(1);
      auto hw = ref_linear(f, env, xw, l1.weight, l1.bias, rows, d0, d1);
      for (FpWord& e : hw) e = ctx.relu(e);  // exact, no flags
      const auto& l2 = pw.linear.at(3);
      auto yw = ref_linear(f, env, hw, l2.weight, l2.bias, rows, d1, d2);
      std::vector<FpWord> zw(yw.size());
      for (size_t i = 0; i < yw.size(); ++i)
        zw[i].bits = fp_sub(f, env, fp_mul(f, env, yw[i].bits, yw[i].bits), yw[i].bits);
      EXPECT_EQ((*table)[static_cast<size_t>(z)].data, zw) << name;
      EXPECT_EQ(ctx.flags(), env.flags) << name;
    }
  }
}

TEST(BinaryFastFold, TablesGiveTheFunctionsWordsAndFlags) {
  const BinaryFormat f8 = format_named("e4m3fn");
  for (Rounding r : kAllModes) {
    for (int fn = 0; fn <= static_cast<int>(FpFunction::Rsqrt); ++fn) {
      const FpFunction func = static_cast<FpFunction>(fn);
      const FunctionTable* t = function_table(func, f8, r);
      ASSERT_NE(t, nullptr);
      int bad = 0;
      for (uint64_t w = 0; w < 512; ++w) {  // 256.. are malformed: the error of fp_function
        FpEnv te{r, 0, {}}, de{r, 0, {}};
        bad += table_lookup(*t, f8, te, w) != fp_function(func, f8, de, w) || te.flags != de.flags ||
               te.error != de.error;
      }
      EXPECT_EQ(bad, 0) << function_name(func) << " " << rounding_name(r);
    }
  }
  EXPECT_EQ(function_table(FpFunction::Exp, binary32_format(), Rounding::NearestEven), nullptr);
}

// The context switches to a table after 2^bits / 8 calls; before and after, fp_function's words.
TEST(BinaryFastFold, ContextFunctionsAreTheSameBeforeAndAfterTheTable) {
  for (const char* name : {"bfloat16", "e2m1fn"}) {
    BinaryContext ctx(format_named(name), Rounding::Upward);
    const BinaryFormat& f = ctx.format();
    const uint64_t count = uint64_t{1} << f.storage_bits();
    int bad = 0;
    for (uint64_t w = 0; w < count; ++w) {
      FpEnv env{Rounding::Upward, 0, {}};
      ctx.clear_flags();
      (void)ctx.take_error();
      const FpWord got = ctx.exp(FpWord{w});
      const uint64_t want = fp_exp(f, env, w);
      bad += got.bits != want || ctx.flags() != env.flags || ctx.take_error() != env.error;
    }
    EXPECT_EQ(bad, 0) << name;
  }
}

// avg_pool [2, 3, 7, 6], kernel 3x2, stride 2, padding 1 through denote_all (the fast rule) against
// the rule's arithmetic by hand: per window, from +0, fp_add over the in-range taps in row-major
// kernel order, then fp_div by the kernel volume 6; an inf and a NaN among the inputs.
TEST(BinaryFastFold, AvgPoolEqualsTheRulesSumThenDivide) {
  const int64_t lead = 6, H = 7, W = 6, kh = 3, kw = 2, s = 2, pad = 1, OH = 4, OW = 4;
  GraphBuilder g;
  const int64_t x = g.input({2, 3, H, W});
  const int64_t y = g.unary(Op::AvgPool, x, WindowConfig{2, {kh, kw}, {s, s}, {pad, pad}});
  Result<Model> model = g.build({y});
  ASSERT_TRUE(model.ok()) << model.message();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<double> xin(static_cast<size_t>(lead * H * W));
  for (double& e : xin) e = u(rng);
  xin[5] = INFINITY;
  xin[100] = NAN;
  for (const char* name : {"bfloat16", "binary16", "e4m3fn"}) {
    for (Rounding r : kAllModes) {
      BinaryContext ctx(format_named(name), r);
      const BinaryFormat& f = ctx.format();
      std::vector<FpWord> xw;
      for (double v : xin) xw.push_back(ctx.from_double(v));
      ctx.clear_flags();
      std::vector<Tensor<FpWord>> inputs{Tensor<FpWord>({2, 3, H, W}, xw)};
      Payload<FpWord> pw;
      auto got = denote_all(model->graph, pw, std::span<const Tensor<FpWord>>(inputs), ctx, EvalOptions{});
      ASSERT_TRUE(got.ok()) << got.message();
      FpEnv env{r, 0, {}};
      const uint64_t six = ctx.from_double(6.0).bits;
      std::vector<FpWord> want;
      for (int64_t l = 0; l < lead; ++l)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            uint64_t acc = ctx.zero().bits;
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t h = oh * s - pad + i, w = ow * s - pad + j;
                if (h >= 0 && h < H && w >= 0 && w < W)
                  acc = fp_add(f, env, acc, xw[static_cast<size_t>((l * H + h) * W + w)].bits);
              }
            want.push_back(FpWord{fp_div(f, env, acc, six)});
          }
      EXPECT_EQ((*got)[static_cast<size_t>(y)].data, want) << name << " " << rounding_name(r);
      EXPECT_EQ(ctx.flags(), env.flags) << name << " " << rounding_name(r);
    }
  }
}

// linear -> matmul with a constant through denote_all on 1, 2 and 3 threads (BinaryContext::
// set_threads): the same words, flags and first error, with NaN, inf and a malformed word among
// the inputs (rows 40: the work is over the split threshold), a one-row linear (outputs split) and
// two convs (output positions split).
TEST(BinaryFastFold, ThreadCountDoesNotChangeWordsFlagsOrErrors) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  auto vals = [&](int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& e : v) e = u(rng);
    return v;
  };
  const int64_t rows = 40, d0 = 64, d1 = 48, d2 = 40;
  GraphBuilder g;
  const int64_t x = g.input({rows, d0});
  const int64_t h = g.linear(x, d1, vals(d1 * d0), vals(d1));
  const int64_t y = g.binary(Op::Matmul, h, g.constant({d1, d2}, vals(d1 * d2)));
  const int64_t x1 = g.input({1, 2048});  // one row: linear splits its 64 outputs
  const int64_t y1 = g.linear(x1, 64, vals(64 * 2048), vals(64));
  // Convs split by output positions: 3 -> 20 channels (lanes over channels; padded borders have fewer
  // taps) and a depthwise 6 -> 6 (lanes over any outputs).
  auto conv_config = [](int64_t cin, int64_t cout, int64_t groups) {
    ConvConfig c;
    c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
    c.padding_after = {1, 1};
    c.dilation = {1, 1};
    c.channel_axis = 1;
    c.in_channels = cin;
    c.out_channels = cout;
    c.groups = groups;
    return c;
  };
  const int64_t x2 = g.input({2, 3, 14, 14});
  const int64_t y2 = g.conv(x2, conv_config(3, 20, 1), vals(20 * 3 * 9), vals(20));
  const int64_t x3 = g.input({4, 6, 20, 20});
  const int64_t y3 = g.conv(x3, conv_config(6, 6, 6), vals(6 * 9), vals(6));
  Result<Model> model = g.build({y, y1, y2, y3});
  ASSERT_TRUE(model.ok()) << model.message();
  const std::vector<double> x1in = vals(2048), x2in = vals(2 * 3 * 14 * 14), x3in = vals(4 * 6 * 20 * 20);
  std::vector<double> xin = vals(rows * d0);
  xin[70] = INFINITY;
  xin[900] = NAN;
  for (const char* name : {"bfloat16", "e4m3fn"}) {
    for (Rounding r : {Rounding::NearestEven, Rounding::Upward}) {
      for (bool malformed : {false, true}) {
        std::vector<FpWord> first_words;
        uint32_t first_flags = 0;
        std::string first_error;
        for (int threads : {1, 2, 3}) {
          BinaryContext ctx(format_named(name), r);
          ctx.set_threads(threads);
          EXPECT_EQ(ctx.threads(), threads);
          Payload<FpWord> pw = convert_payload<FpWord>(model->payload, [&](double v) { return ctx.from_double(v); });
          std::vector<FpWord> xw, x1w, x2w, x3w;
          for (double v : xin) xw.push_back(ctx.from_double(v));
          for (double v : x1in) x1w.push_back(ctx.from_double(v));
          for (double v : x2in) x2w.push_back(ctx.from_double(v));
          for (double v : x3in) x3w.push_back(ctx.from_double(v));
          if (malformed) {
            xw[2000].bits = ctx.format().word_mask() + 1;  // an error in row 31 of the linear's input
            xw[1500].bits = ctx.format().word_mask() + 2;  // and an earlier one, in row 23: the one kept
          }
          ctx.clear_flags();
          std::vector<Tensor<FpWord>> inputs{Tensor<FpWord>({rows, d0}, xw), Tensor<FpWord>({1, 2048}, x1w),
                                             Tensor<FpWord>({2, 3, 14, 14}, x2w), Tensor<FpWord>({4, 6, 20, 20}, x3w)};
          auto got = denote_all(model->graph, pw, std::span<const Tensor<FpWord>>(inputs), ctx, EvalOptions{});
          // A malformed word is an error of the node (the evaluator reports the context's first error).
          ASSERT_EQ(got.ok(), !malformed) << got.message();
          std::vector<FpWord> words;
          if (got.ok()) {
            words = (*got)[static_cast<size_t>(y)].data;
            const auto& w1 = (*got)[static_cast<size_t>(y1)].data;
            words.insert(words.end(), w1.begin(), w1.end());
            for (int64_t id : {y2, y3}) {
              const auto& wc = (*got)[static_cast<size_t>(id)].data;
              words.insert(words.end(), wc.begin(), wc.end());
            }
            EXPECT_EQ(words.size(), static_cast<size_t>(rows * d2 + 64 + 2 * 20 * 196 + 4 * 6 * 400));
            // The one-row linear (run in chunks of outputs) equals one fast_linear over all 64.
            const auto& rec = pw.linear.at(y1);
            FpEnv env{r, 0, {}};
            std::vector<FpWord> whole(64);
            fast_linear(*ctx.fast(), env, x1w.data(), rec.weight.data(), rec.bias.data(), whole.data(), 1, 2048, 64);
            EXPECT_EQ(w1, whole) << name << " " << threads;
          }
          const std::string error = got.ok() ? ctx.take_error() : got.message();
          if (threads == 1) {
            first_words = words;
            first_flags = ctx.flags();
            first_error = error;
            EXPECT_EQ(error.empty(), !malformed) << error;
            continue;
          }
          EXPECT_EQ(words, first_words) << name << " " << threads;
          EXPECT_EQ(ctx.flags(), first_flags) << name << " " << threads;
          EXPECT_EQ(error, first_error) << name << " " << threads;
        }
      }
    }
  }
}

}  // namespace
}  // namespace denote
