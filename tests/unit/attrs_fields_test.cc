// Attribute records are declared once (their fields() lists): the listing text and the
// torchlean.ir.v1 form both come from the list. The listing of every record, byte for byte, a
// JSON round trip of every AttrKind, field errors that carry the field, and the parsed cast target.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/ir/attrs.h"
#include "io/json_attrs.h"
#include "ops/pointwise_eval.h"

namespace denote {
namespace {

ConvConfig sample_conv() {
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
  c.dilation = {1, 2};
  c.groups = 2;
  c.channel_axis = 1;
  c.in_channels = 2;
  c.out_channels = 4;
  return c;
}

// One record of every AttrKind, in AttrKind order, each with its listing text.
std::vector<std::pair<Attrs, std::string>> samples() {
  return {
      {NoAttrs{}, ""},
      {ValueShapeAttrs{{2, 3}}, "shape=[2, 3]"},
      {SeedAttrs{18446744073709551615ull}, "seed=18446744073709551615"},
      {CustomAttrs{"f", {{2, 3}, {}}}, "name=f, inputs=[[2, 3], []]"},
      {PermAttrs{{1, 0}}, "perm=[1, 0]"},
      {TransposeAttrs{0, 2}, "axis1=0, axis2=2"},
      {BroadcastAttrs{{1, 3}, {2, 3}}, "from=[1, 3], to=[2, 3]"},
      {ReshapeAttrs{{2, 3}, {6}}, "in_shape=[2, 3], out_shape=[6]"},
      {AxisAttrs{-1}, "axis=-1"},
      {ClampAttrs{0.25}, "bound=0.25"},
      {CastAttrs{"binary16", "toward-zero"}, "dtype=binary16, rounding=toward-zero"},
      {sample_conv(),
       "config={spatial_rank=2, kernel=[3, 3], stride=[1, 1], padding=[1, 1], dilation=[1, 2], padding_after=[], "
       "groups=2, channel_axis=1, in=2, out=4}"},
      {WindowConfig{1, {2}, {2}, {0}}, "spatial_rank=1, kernel=[2], stride=[2], padding=[0]"},
      {BatchNormAttrs{1, 4}, "channel_axis=1, channels=4"},
      {HardMask{{2, 2}, {1, 0, 1, 1}}, "mask=[2, 2], allowed=3/4"},
      {GatherAttrs{1, {2, 0, 2}}, "axis=1, indices=[2, 0, 2]"},
      {MxCastAttrs{"mxint8", 16, -1}, "format=mxint8, block=16, axis=-1"},
  };
}

TEST(AttrFields, EveryKindHasASample) {
  const auto s = samples();
  ASSERT_EQ(s.size(), std::variant_size_v<Attrs>);
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i].first.index(), i);
}

TEST(AttrFields, ListingTextIsDerivedFromTheFieldList) {
  for (const auto& [attrs, text] : samples()) EXPECT_EQ(describe_attrs(attrs), text);
}

TEST(AttrFields, JsonRoundTripOfEveryKind) {
  for (const auto& [attrs, text] : samples()) {
    jsonio::ojson out;
    jsonio::write_attrs(attrs, out);
    const jsonio::json in = jsonio::json::parse(out.dump());
    auto back = jsonio::read_attrs(attr_kind_of(attrs), in, jsonio::Where{"n"});
    ASSERT_TRUE(back.ok()) << text << ": " << back.message();
    EXPECT_EQ(*back, attrs) << text;
  }
}

TEST(AttrFields, OptionalFieldsKeepTheirDefaults) {
  const auto j = jsonio::json::parse(
      R"({"spatial_rank": 1, "kernel": [2], "stride": [1], "padding": [0], "channel_axis": 1,
          "in_channels": 3, "out_channels": 5})");
  auto conv = jsonio::read_attrs(AttrKind::Conv, j, jsonio::Where{});
  ASSERT_TRUE(conv.ok()) << conv.message();
  EXPECT_EQ(std::get<ConvConfig>(*conv).groups, 1);
  EXPECT_TRUE(std::get<ConvConfig>(*conv).dilation.empty());
  auto cast = jsonio::read_attrs(AttrKind::Cast, jsonio::json::parse(R"({"dtype": "e4m3fn"})"), jsonio::Where{});
  ASSERT_TRUE(cast.ok()) << cast.message();
  EXPECT_EQ(std::get<CastAttrs>(*cast).rounding, "nearest-even");
}

TEST(AttrFields, ReaderErrorsNameTheField) {
  auto missing = jsonio::read_attrs(AttrKind::Transpose, jsonio::json::parse(R"({"axis1": 0})"), jsonio::Where{"n"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "torchlean.ir.v1: n: field 'axis2': missing");
  EXPECT_EQ(missing.status().field(), "axis2");
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidInput);
  auto bound = jsonio::read_attrs(AttrKind::Clamp, jsonio::json::parse(R"({})"), jsonio::Where{"n"});
  EXPECT_EQ(bound.message(), "torchlean.ir.v1: n: field 'bound': missing");
  auto shapes = jsonio::read_attrs(AttrKind::Custom, jsonio::json::parse(R"({"name": "f"})"), jsonio::Where{"n"});
  EXPECT_EQ(shapes.message(), "torchlean.ir.v1: n: field 'input_shapes': expected an array of shapes");
}

TEST(AttrFields, CastTargetIsParsedOnce) {
  auto t = cast_target(CastAttrs{"bfloat16", "upward"});
  ASSERT_TRUE(t.ok()) << t.message();
  ASSERT_TRUE(t->format.has_value());
  EXPECT_EQ(t->format->name, "bfloat16");
  EXPECT_EQ(t->rounding, Rounding::Upward);
  auto f32 = cast_target(CastAttrs{"f32", "nearest-even"});
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ(*f32->format, binary32_format());
  auto typed = cast_target(CastAttrs{"int(8)", "toward-zero"});
  ASSERT_TRUE(typed.ok());
  EXPECT_FALSE(typed->format.has_value());  // integer targets run in typed execution
  auto bad = cast_target(CastAttrs{"binary16", "sideways"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "cast: unknown rounding mode 'sideways'");
  EXPECT_EQ(bad.status().field(), "rounding");
  EXPECT_EQ(cast_target(CastAttrs{"", "nearest-even"}).status().field(), "dtype");
  EXPECT_EQ(cast_target(CastAttrs{"f33", "nearest-even"}).status().field(), "dtype");
}

// A context with both cast forms: the rule must take the parsed one and parse once per node.
struct CountingCastContext {
  using Scalar = double;
  static constexpr std::string_view kName = "counting";
  int string_casts = 0;
  int parsed_casts = 0;
  bool can_cast(std::string_view, std::string_view) const { return true; }
  double cast(double x, std::string_view, std::string_view) {
    ++string_casts;
    return x;
  }
  double cast(double x, const BinaryFormat& f, Rounding r) {
    ++parsed_casts;
    return f == binary32_format() && r == Rounding::Upward ? -x : x;
  }
};

TEST(AttrFields, CastRuleTakesTheParsedTarget) {
  const Node n{1, {0}, Op::Cast, CastAttrs{"f32", "upward"}, {3}};
  const Tensor<double> x({3}, {1, 2, 3});
  const Tensor<double>* parents[] = {&x};
  const Payload<double> payload;
  const EvalOptions options;
  CountingCastContext ctx;
  const rules::EvalArgs<double> args{n, parents, payload, n.out_shape, nullptr, options};
  auto y = rules::eval_Cast(ctx, args);
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_EQ(y->data, (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(ctx.parsed_casts, 3);
  EXPECT_EQ(ctx.string_casts, 0);
}

}  // namespace
}  // namespace denote
