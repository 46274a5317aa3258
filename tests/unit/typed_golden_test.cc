// Integer ops and casts against PyTorch 1.13 tables (tests/data/golden_int/*.txt, generated offline by
// tests/golden/gen_torch_int_golden.py; never at test time). Rows where PyTorch traps (32/64-bit
// min / -1 and min % -1, SIGFPE) are not in the tables: the spec wins there and the last test checks
// them against it (min / -1 = min in both division modes, min % -1 = 0).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "denote/typed/cast.h"
#include "denote/typed/int_ops.h"

namespace denote::typed {
namespace {

std::optional<Op> op_of(const std::string& name) {
  if (name == "mul") return Op::MulElem;
  if (name == "max") return Op::MaxElem;
  if (name == "min") return Op::MinElem;
  return op_from_tag(name);
}

struct Tally {
  int rows = 0, errors = 0, casts = 0;
};

// Checks one table line; returns a failure text ("" when it matches).
std::string check_line(const std::string& line, Tally& tally) {
  std::istringstream in(line);
  std::string op, dtype, a, b, want;
  in >> op >> dtype;
  if (op == "cast") {
    std::string mode, x;
    in >> mode >> x >> want;
    const size_t arrow = dtype.find("->");
    auto r = cast_word(*parse_dtype(dtype.substr(0, arrow)), *parse_dtype(dtype.substr(arrow + 2)),
                       *parse_rounding(mode), *parse_word(x));
    ++tally.casts;
    if (!r.ok()) return "error " + r.message();
    return to_hex(r->word) == want ? "" : "got " + to_hex(r->word);
  }
  in >> a >> b >> want;
  const DType t = *parse_dtype(dtype);
  auto r = apply_words(*op_of(op), t, *parse_word(a), b == "-" ? Word{} : *parse_word(b));
  ++tally.rows;
  if (want == "error") {
    ++tally.errors;
    return r.ok() ? "got " + to_hex(*r) + ", PyTorch raised" : "";
  }
  if (!r.ok()) return "error " + r.message();
  return to_hex(*r) == want ? "" : "got " + to_hex(*r);
}

class TypedGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TypedGolden, MatchesPyTorch) {
  const std::string path = std::string(DENOTE_SOURCE_DIR) + "/tests/data/golden_int/" + GetParam() + ".txt";
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path;
  Tally tally;
  int failures = 0;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string problem = check_line(line, tally);
    if (!problem.empty() && ++failures <= 20) ADD_FAILURE() << line << ": " << problem;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(tally.rows, 1500);   // every op on edge and random values
  EXPECT_GT(tally.errors, 10);   // division by zero rows
  EXPECT_GT(tally.casts, 100);
}

INSTANTIATE_TEST_SUITE_P(Tables, TypedGolden, ::testing::Values("int8", "int16", "int32", "int64", "uint8"));

TEST(TypedGoldenSpec, RowsWherePyTorchTraps) {
  for (int64_t width : {32, 64}) {
    const DType t = DType::integer(width, true);
    const Word min = Word::of(uint64_t{1} << (width - 1));
    const Word m1 = Word::of(width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1);
    EXPECT_EQ(*apply_words(Op::DivTrunc, t, min, m1), min);
    EXPECT_EQ(*apply_words(Op::DivFloor, t, min, m1), min);
    EXPECT_EQ(*apply_words(Op::Remainder, t, min, m1), Word{});
  }
}

}  // namespace
}  // namespace denote::typed
