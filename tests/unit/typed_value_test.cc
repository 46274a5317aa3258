// DType descriptors, element words, read/write/load/words (issue 6). The round-trip property
// write(read(w)) == w is checked exhaustively for widths <= 16 and on sampled words above
// (widths 17..64, 65, 100, 128, 300); decoded values are compared with hand-computed ones. The
// model check's restatement of the integer dtype names (payload_check.cc) agrees with parse_dtype.
#include <gtest/gtest.h>

#include <random>

#include "denote/check/check.h"
#include "denote/program/builder.h"
#include "denote/typed/dtype.h"
#include "denote/typed/value.h"

namespace denote::typed {
namespace {

Word random_word(std::mt19937_64& rng, int64_t width) {
  std::vector<uint64_t> limbs(static_cast<size_t>((width + 63) / 64));
  for (auto& l : limbs) l = rng();
  if (width % 64 != 0) limbs.back() &= (uint64_t{1} << (width % 64)) - 1;
  // Edge words too: all ones, the sign bit alone, one.
  const uint64_t top_mask = width % 64 ? (uint64_t{1} << (width % 64)) - 1 : ~uint64_t{0};
  const uint64_t sign = width % 64 ? uint64_t{1} << (width % 64 - 1) : uint64_t{1} << 63;
  const uint64_t kind = rng() % 8;
  if (kind <= 2) {
    for (auto& l : limbs) l = kind == 1 ? ~uint64_t{0} : 0;
    if (kind == 0) limbs.back() = sign;             // the minimum of a signed int
    if (kind == 1) limbs.back() = top_mask;         // all ones
    if (kind == 2) limbs[0] = 1;
  }
  return Word::from_limbs(limbs);
}

void expect_round_trip(const DType& t, const Word& w) {
  auto e = read(t, w);
  ASSERT_TRUE(e.ok()) << dtype_name(t) << " " << to_hex(w) << ": " << e.message();
  auto back = write(t, *e);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, w) << dtype_name(t) << " " << to_hex(w);
}

TEST(TypedDType, ParseAndName) {
  EXPECT_EQ(dtype_name(*parse_dtype("int8")), "int8");
  EXPECT_EQ(dtype_name(*parse_dtype("int(8)")), "int8");
  EXPECT_EQ(dtype_name(*parse_dtype("uint(65)")), "uint(65)");
  EXPECT_EQ(dtype_name(*parse_dtype("uint64")), "uint64");
  EXPECT_EQ(dtype_name(*parse_dtype("bool")), "bool");
  EXPECT_EQ(dtype_name(*parse_dtype("bfloat16")), "bfloat16");
  EXPECT_TRUE(parse_dtype("f32")->is_binary());
  EXPECT_EQ(limb_count(*parse_dtype("int(65)")), 2u);
  EXPECT_EQ(limb_count(*parse_dtype("int(300)")), 5u);
  EXPECT_NE(parse_dtype("int(0)").message().find("int width 0 is unsupported"), std::string::npos);
  EXPECT_NE(parse_dtype("int0").message().find("unsupported"), std::string::npos);
  EXPECT_FALSE(parse_dtype("int(70000)").ok());
  EXPECT_FALSE(parse_dtype("int(-3)").ok());
  EXPECT_FALSE(parse_dtype("int(8").ok());
  EXPECT_FALSE(parse_dtype("float7").ok());
  EXPECT_FALSE(is_supported(DType::integer(0, true)));
}

TEST(TypedWord, ParseAndHex) {
  EXPECT_EQ(*parse_word("0x1ff"), Word::of(0x1ff));
  EXPECT_EQ(*parse_word("511"), Word::of(511));
  EXPECT_EQ(*parse_word("0x0"), Word{});
  EXPECT_EQ(*parse_word("0x000000000000000000000001"), Word::of(1));
  // 2^64 + 2: two limbs, hex and decimal agree.
  EXPECT_EQ(*parse_word("0x10000000000000002"), (Word{{2, 1}}));
  EXPECT_EQ(*parse_word("18446744073709551618"), (Word{{2, 1}}));
  EXPECT_EQ(to_hex(Word{{2, 1}}), "0x10000000000000002");
  EXPECT_FALSE(parse_word("0x").ok());
  EXPECT_FALSE(parse_word("-1").ok());
  EXPECT_FALSE(parse_word("0xfg").ok());
  EXPECT_FALSE(parse_word("").ok());
  EXPECT_FALSE(parse_word(std::string(kMaxWordTextChars + 1, '1')).ok());
}

TEST(TypedRead, DecodesHandComputedValues) {
  const DType i8 = DType::integer(8, true), u8 = DType::integer(8, false);
  EXPECT_EQ(*read(i8, Word::of(0xff)), (Element{0, false, true, Word::of(1)}));       // -1
  EXPECT_EQ(*read(i8, Word::of(0x80)), (Element{0, false, true, Word::of(128)}));     // -128
  EXPECT_EQ(*read(i8, Word::of(0x7f)), (Element{0, false, false, Word::of(127)}));
  EXPECT_EQ(*read(u8, Word::of(0xff)), (Element{0, false, false, Word::of(255)}));
  const DType i1 = DType::integer(1, true);
  EXPECT_EQ(*read(i1, Word::of(1)), (Element{0, false, true, Word::of(1)}));          // int(1): {-1, 0}
  // int(65): the word 2^64 is -2^64.
  EXPECT_EQ(*read(DType::integer(65, true), Word{{0, 1}}), (Element{0, false, true, Word{{0, 1}}}));
  EXPECT_EQ(format_element(i8, Word::of(0x80)), "-128");
  EXPECT_EQ(format_element(DType::integer(65, true), Word{{0, 1}}), "-18446744073709551616");
  EXPECT_EQ(format_element(DType::boolean(), Word::of(1)), "true");
  EXPECT_EQ(format_element(*parse_dtype("bfloat16"), Word::of(0x3fc0)), "1.5");
  EXPECT_EQ(format_element(*parse_dtype("binary16"), Word::of(0x8000)), "-0");
}

TEST(TypedRead, RejectsExcessBitsNeverTruncates) {
  EXPECT_NE(read(DType::integer(8, false), Word::of(0x100)).message().find("bits above the 8-bit width of uint8"),
            std::string::npos);
  EXPECT_FALSE(read(DType::integer(3, true), Word::of(8)).ok());
  EXPECT_FALSE(read(DType::boolean(), Word::of(2)).ok());
  EXPECT_FALSE(read(*parse_dtype("bfloat16"), Word::of(0x10000)).ok());
  EXPECT_FALSE(read(DType::integer(65, false), Word{{0, 2}}).ok());
  EXPECT_FALSE(read(DType::integer(0, false), Word{}).ok());
}

TEST(TypedWrite, RejectsValuesOutOfRange) {
  EXPECT_FALSE(write(DType::integer(8, true), Element{0, false, false, Word::of(128)}).ok());
  EXPECT_FALSE(write(DType::integer(8, true), Element{0, false, true, Word::of(129)}).ok());
  EXPECT_EQ(*write(DType::integer(8, true), Element{0, false, true, Word::of(128)}), Word::of(0x80));
  EXPECT_FALSE(write(DType::integer(8, false), Element{0, false, true, Word::of(1)}).ok());
}

TEST(TypedRoundTrip, ExhaustiveUpTo16Bits) {
  for (int64_t width = 1; width <= 16; ++width)
    for (bool s : {false, true}) {
      const DType t = DType::integer(width, s);
      for (uint64_t w = 0; w < (uint64_t{1} << width); ++w) expect_round_trip(t, Word::of(w));
      EXPECT_FALSE(read(t, Word::of(uint64_t{1} << width)).ok());
    }
  expect_round_trip(DType::boolean(), Word::of(0));
  expect_round_trip(DType::boolean(), Word::of(1));
  for (const char* f : {"binary16", "bfloat16", "e4m3fn", "e4m3fnuz", "e5m2", "e2m1fn", "e8m0fnu"}) {
    const DType t = *parse_dtype(f);
    for (uint64_t w = 0; w < (uint64_t{1} << bit_width(t)); ++w) expect_round_trip(t, Word::of(w));
  }
}

TEST(TypedRoundTrip, SampledWideWidths) {
  std::mt19937_64 rng(6);
  std::vector<int64_t> widths = {65, 100, 127, 128, 129, 300};
  for (int64_t w = 17; w <= 64; ++w) widths.push_back(w);
  for (int64_t width : widths)
    for (bool s : {false, true})
      for (int k = 0; k < 300; ++k) expect_round_trip(DType::integer(width, s), random_word(rng, width));
  for (const char* f : {"binary32", "binary64"})
    for (int k = 0; k < 2000; ++k) expect_round_trip(*parse_dtype(f), random_word(rng, bit_width(*parse_dtype(f))));
}

TEST(TypedLoad, ChecksDTypeCountShapeAndWords) {
  const DType i8 = DType::integer(8, true);
  auto t = load(i8, {2, 2}, std::vector<Word>{Word::of(1), Word::of(2), Word::of(0xff), Word{}});
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(words(*t), (std::vector<Word>{Word::of(1), Word::of(2), Word::of(0xff), Word{}}));
  EXPECT_NE(load(i8, {2, 2}, std::vector<Word>{Word::of(1)}).message().find("has 4 elements, got 1 words"),
            std::string::npos);
  EXPECT_NE(load(i8, {2}, std::vector<Word>{Word::of(1), Word::of(0x100)}).message().find("word 1:"),
            std::string::npos);
  EXPECT_FALSE(load(DType::integer(0, true), {1}, std::vector<Word>{Word{}}).ok());
  const Shape huge{int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_FALSE(load(i8, huge, std::vector<Word>{}).ok());
  EXPECT_FALSE(load(i8, {-1}, std::vector<Word>{}).ok());
  auto wide = load(DType::integer(300, false), {1}, std::vector<Word>{*parse_word("0x" + std::string(75, 'f'))});
  ASSERT_TRUE(wide.ok()) << wide.message();
  EXPECT_EQ(to_hex(words(*wide)[0]), "0x" + std::string(75, 'f'));
  EXPECT_FALSE(load(DType::integer(300, false), {1}, std::vector<Word>{*parse_word("0x1" + std::string(75, '0'))}).ok());
  // NaN payloads and signed zeros survive.
  const DType h = *parse_dtype("binary16");
  auto nan = load(h, {2}, std::vector<Word>{Word::of(0x7d23), Word::of(0x8000)});
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(words(*nan), (std::vector<Word>{Word::of(0x7d23), Word::of(0x8000)}));
}

// diagnose_model's cast rule restates parse_dtype's int / uint / bool names (the check layer
// cannot include the typed one): both accept the same names and refuse them with the same texts.
TEST(TypedDType, TheModelCheckAgreesWithParseDtypeOnIntegerCastTargets) {
  const char* names[] = {"bool", "int8", "uint8", "int16", "uint64", "int1", "int(1)", "uint(7)", "int(65536)",
                         "uint65536", "int(65537)", "int(0)", "uint0", "int(000000008)", "int(0000000008)",
                         "int(999999999)", "int()", "int", "uint", "int(", "int(8", "int8)", "intx", "int-8",
                         "int(-3)", "int( 8)", "int((8))", "integer", "uint(8)x", "int 8", "int+8"};
  for (const char* name : names) {
    GraphBuilder b;
    const int64_t y = b.add(Op::Cast, {b.input({2})}, CastAttrs{name, "nearest-even"});
    Model m = b.model();
    m.output_ids = {y};
    const std::vector<Diagnostic> d = diagnose_model(m);
    auto t = parse_dtype(name);
    ASSERT_EQ(d.empty(), t.ok()) << name << ": " << (d.empty() ? t.message() : d[0].message);
    if (!t.ok()) EXPECT_NE(d[0].message.find("cast: " + t.message() + " ("), std::string::npos) << d[0].message;
  }
  EXPECT_EQ(kMaxIntWidth, 65536);  // payload_check.cc's kMaxCastIntWidth
}

}  // namespace
}  // namespace denote::typed
