// The arithmetic of a run as one value (denote/scalar/arith.h): parsing --arith / --rounding /
// --precision with the CLI's error texts, and the one dispatch to the scalar context.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "denote/scalar/arith.h"

namespace denote {
namespace {

// The context visit_arith picked, by name.
std::string context_of(const ArithSpec& spec) {
  return visit_arith(spec, [](auto& ctx) -> std::string {
    using Ctx = std::decay_t<decltype(ctx)>;
    if constexpr (std::is_same_v<Ctx, F64Context>) return "f64";
    else if constexpr (std::is_same_v<Ctx, F32Context>) return "f32";
    else if constexpr (std::is_same_v<Ctx, BinaryContext>)
      return ctx.format().name + "/" + std::string(rounding_name(ctx.rounding()));
    else return "real/" + std::to_string(ctx.bits());
  });
}

TEST(Arith, NamesPickTheirContext) {
  EXPECT_EQ(context_of(*parse_arith("f64", "nearest-even", 256)), "f64");
  EXPECT_EQ(context_of(*parse_arith("f32", "nearest-even", 256)), "f32");
  EXPECT_EQ(context_of(*parse_arith("bfloat16", "upward", 256)), "bfloat16/upward");
  EXPECT_EQ(context_of(*parse_arith("real", "nearest-even", 64)), "real/64");
  EXPECT_EQ(context_of(*parse_arith_name("e4m3fn")), "e4m3fn/nearest-even");
  EXPECT_EQ(context_of(ArithSpec{}), "f64");
  EXPECT_TRUE(parse_arith("f32", "nearest-even", 256)->native());
  EXPECT_FALSE(parse_arith("binary(5,2)", "nearest-even", 256)->native());
  EXPECT_EQ(parse_arith("binary(5,2)", "nearest-even", 256)->name, "binary(5,2)");
}

TEST(Arith, ErrorsAreTheCliTexts) {
  auto r = parse_arith("bfloat16", "sideways", 256);
  EXPECT_EQ(r.message(), "--rounding sideways: expected nearest-even, toward-zero, upward, downward (or nearest-away)");
  EXPECT_EQ(r.status().field(), "rounding");
  EXPECT_EQ(parse_arith("f64", "upward", 256).message(),
            "--rounding upward: the f64 context rounds to nearest-even only (binary formats take any mode)");
  EXPECT_EQ(parse_arith("real", "downward", 256).message(),
            "--rounding downward: the real context rounds to nearest-even only (binary formats take any mode)");
  auto p = parse_arith("real", "nearest-even", 1);
  EXPECT_EQ(p.message(), "--precision 1: expected 2..1000000 bits");
  EXPECT_EQ(p.status().field(), "precision");
  EXPECT_TRUE(parse_arith("f64", "nearest-even", 1).ok());  // precision matters for real only
  auto a = parse_arith("f33", "nearest-even", 256);
  EXPECT_EQ(a.message().rfind("--arith f33: expected f64, f32, real or a binary format (", 0), 0u) << a.message();
  EXPECT_EQ(a.status().code(), ErrorCode::kInvalidInput);
  EXPECT_EQ(a.status().field(), "arith");
  EXPECT_EQ(parse_arith_name("f33").status().field(), "arith");
  // Without real (bounds, sampling): "real" is an unknown format, in parse_format's words.
  EXPECT_TRUE(parse_arith_name("real").ok());
  auto no_real = parse_arith_name("real", /*allow_real=*/false);
  ASSERT_FALSE(no_real.ok());
  EXPECT_EQ(no_real.message(), parse_format("real").message());
}

}  // namespace
}  // namespace denote
