// VNN-LIB properties (src/verify/vnnlib.cc, docs/VNNLIB.md): every benchmark file under
// shared/data parses to the expected normal form; directed decimals are the doubles just below and
// above (checked against glibc's exact printf expansions); malformed inputs give
// `file:line:column: what; expected ...`; the exact comparisons decide ties and cancellations that
// double arithmetic gets wrong.
#include <gtest/gtest.h>

#include <chrono>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "denote/verify/vnnlib.h"
#include "verify/vnnlib_lex.h"
#include "sanitized.h"

namespace denote {
namespace {

// Every benchmark file: ../shared/data when present (skipped otherwise); the files the other tests read
// are copies in tests/data (a clean clone has no ../shared).
const std::string kData = std::string(DENOTE_SOURCE_DIR) + "/../shared/data";
const std::string kRepoData = std::string(DENOTE_SOURCE_DIR) + "/tests/data";

std::string decls(int nx, int ny) {
  std::string s;
  for (int i = 0; i < nx; ++i) s += "(declare-const X_" + std::to_string(i) + " Real)\n";
  for (int j = 0; j < ny; ++j) s += "(declare-const Y_" + std::to_string(j) + " Real)\n";
  return s;
}

Result<VnnProperty> parse(const std::string& text) { return parse_vnnlib(text, "t.vnnlib"); }

std::string error_of(const std::string& text) {
  auto r = parse(text);
  return r.ok() ? "<parsed>" : r.message();
}

VnnDecimal dec(const std::string& text) {
  vnnlib::Dec d;
  EXPECT_EQ(vnnlib::parse_decimal(text, d), vnnlib::DecParse::kOk) << text;
  VnnDecimal v{text, 0, 0};
  vnnlib::directed_doubles(d, v.down, v.up);
  return v;
}

bool has_data() { return std::filesystem::is_directory(kData); }

// Structural invariants of any parsed property.
void check_invariants(const VnnProperty& p, const std::string& what) {
  for (const VnnCase& c : p.cases) {
    ASSERT_EQ(static_cast<int64_t>(c.lo_out.size()), p.num_inputs) << what;
    ASSERT_EQ(static_cast<int64_t>(c.hi_in.size()), p.num_inputs) << what;
    ASSERT_EQ(static_cast<int64_t>(c.lo_text.size()), p.num_inputs) << what;
    for (int64_t i = 0; i < p.num_inputs; ++i) {
      EXPECT_LE(c.lo_out[i], c.lo_in[i]) << what << " X_" << i;
      EXPECT_LE(c.hi_in[i], c.hi_out[i]) << what << " X_" << i;
      EXPECT_LE(c.lo_out[i], c.hi_out[i]) << what << " X_" << i;
      EXPECT_LE(compare_exact(c.lo_out[i], c.lo_text[i]), 0) << what << " X_" << i;
      EXPECT_GE(compare_exact(c.lo_in[i], c.lo_text[i]), 0) << what << " X_" << i;
      EXPECT_LE(compare_exact(c.hi_in[i], c.hi_text[i]), 0) << what << " X_" << i;
      EXPECT_GE(compare_exact(c.hi_out[i], c.hi_text[i]), 0) << what << " X_" << i;
    }
    for (const auto& conj : c.output) {
      EXPECT_FALSE(conj.empty()) << what;
      for (const VnnAtom& a : conj) {
        ASSERT_EQ(static_cast<int64_t>(a.coef.size()), p.num_outputs) << what;
        EXPECT_LE(a.rhs_down, a.rhs_up) << what;
      }
    }
  }
}

// ---- the benchmark files ----

TEST(VnnlibFiles, EveryBenchmarkFileParses) {
  if (!has_data()) GTEST_SKIP() << kData << " not present";
  int files = 0, multi_case = 0;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kData))
    if (e.is_regular_file() && e.path().extension() == ".vnnlib") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  // Under the sanitizers (about 10x slower) every directory still parses, the large ones one file in
  // eight (the release pass parses them all; fuzz/vnnlib_parse.cc covers the parser's corners).
  std::map<std::string, int> per_dir, seen;
  for (const auto& f : paths) ++per_dir[f.parent_path().string()];
  for (const auto& f : paths) {
    const std::string d = f.parent_path().string();
    if (denote::testing::sanitized_build() && per_dir[d] > 20 && seen[d]++ % 8 != 0) continue;
    const std::string path = f.string();
    auto p = load_vnnlib_file(path);
    ASSERT_TRUE(p.ok()) << p.message();
    ++files;
    check_invariants(*p, path);
    ASSERT_GE(p->cases.size(), 1u) << path;
    if (p->cases.size() > 1) ++multi_case;
    const std::string dir = d;
    auto expect_io = [&](int64_t nx, int64_t ny) {
      EXPECT_EQ(p->num_inputs, nx) << path;
      EXPECT_EQ(p->num_outputs, ny) << path;
    };
    if (dir.ends_with("/acasxu")) {
      expect_io(5, 5);
    } else if (dir.ends_with("/mnistfc") || dir.ends_with("/eran/specs/mnist") || dir.find("/verivital/") != std::string::npos) {
      expect_io(784, 10);
      // Robustness: one box, "some other class scores at least the label": 9 one-atom conjunctions.
      ASSERT_EQ(p->cases.size(), 1u) << path;
      ASSERT_EQ(p->cases[0].output.size(), 9u) << path;
      for (const auto& conj : p->cases[0].output) {
        ASSERT_EQ(conj.size(), 1u) << path;
        int ones = 0, minus = 0;
        for (double c : conj[0].coef) ones += c == 1, minus += c == -1;
        EXPECT_EQ(ones, 1) << path;
        EXPECT_EQ(minus, 1) << path;
        EXPECT_TRUE(conj[0].rhs_terms.empty()) << path;
      }
    } else if (dir.ends_with("/oval21/vnnlib")) {
      expect_io(3072, 10);
      ASSERT_EQ(p->cases.size(), 1u) << path;
      EXPECT_EQ(p->cases[0].output.size(), 9u) << path;
    }
  }
  EXPECT_GE(files, denote::testing::sanitized_build() ? 30 : 240);
  EXPECT_GE(multi_case, 1);  // acasxu prop_6
}

TEST(VnnlibFiles, AcasProp1Box) {
  auto p = load_vnnlib_file(kRepoData + "/acasxu/prop_1.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->num_inputs, 5);
  EXPECT_EQ(p->num_outputs, 5);
  ASSERT_EQ(p->cases.size(), 1u);
  const VnnCase& c = p->cases[0];
  const double lo[5] = {0.6, -0.5, -0.5, 0.45, -0.5}, hi[5] = {0.679857769, 0.5, 0.5, 0.5, -0.45};
  const char* lo_text[5] = {"0.6", "-0.5", "-0.5", "0.45", "-0.5"};
  const char* hi_text[5] = {"0.679857769", "0.5", "0.5", "0.5", "-0.45"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(c.lo_text[i].text, lo_text[i]);
    EXPECT_EQ(c.hi_text[i].text, hi_text[i]);
    // The nearest double lies on one side; the directed doubles straddle the decimal.
    EXPECT_TRUE(c.lo_out[i] == lo[i] || c.lo_in[i] == lo[i]);
    EXPECT_TRUE(c.hi_out[i] == hi[i] || c.hi_in[i] == hi[i]);
  }
  EXPECT_LT(c.lo_out[0], c.lo_in[0]);  // 0.6 is not a double
  EXPECT_EQ(std::nextafter(c.lo_out[0], 1.0), c.lo_in[0]);
  EXPECT_EQ(c.lo_out[1], -0.5);  // -0.5 and 0.5 are
  EXPECT_EQ(c.lo_in[1], -0.5);
  EXPECT_EQ(c.hi_in[1], 0.5);
  EXPECT_EQ(c.hi_out[1], 0.5);
  // (>= Y_0 3.991125645861615): -Y_0 <= -3.991125645861615.
  ASSERT_EQ(c.output.size(), 1u);
  ASSERT_EQ(c.output[0].size(), 1u);
  const VnnAtom& a = c.output[0][0];
  EXPECT_EQ(a.coef, (std::vector<double>{-1, 0, 0, 0, 0}));
  ASSERT_EQ(a.rhs_terms.size(), 1u);
  EXPECT_EQ(a.rhs_terms[0].text, "-3.991125645861615");
  EXPECT_FALSE(a.strict);
  EXPECT_LE(a.rhs_down, -3.991125645861615);
  EXPECT_GE(a.rhs_up, -3.991125645861615);
}

TEST(VnnlibFiles, AcasProp2FourAtoms) {
  auto p = load_vnnlib_file(kRepoData + "/acasxu/prop_2.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  ASSERT_EQ(p->cases[0].output.size(), 1u);
  const auto& conj = p->cases[0].output[0];
  ASSERT_EQ(conj.size(), 4u);
  for (int k = 0; k < 4; ++k) {  // (<= Y_{k+1} Y_0): Y_{k+1} - Y_0 <= 0
    std::vector<double> coef(5, 0.0);
    coef[0] = -1;
    coef[k + 1] = 1;
    EXPECT_EQ(conj[k].coef, coef);
    EXPECT_TRUE(conj[k].rhs_terms.empty());
    EXPECT_EQ(conj[k].rhs_down, 0.0);
    EXPECT_EQ(conj[k].rhs_up, 0.0);
  }
}

TEST(VnnlibFiles, AcasProp6TwoBoxesEachWithTheOutputDnf) {
  auto p = load_vnnlib_file(kRepoData + "/acasxu/prop_6.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 2u);
  EXPECT_EQ(p->cases[0].lo_text[1].text, "0.11140846");
  EXPECT_EQ(p->cases[0].hi_text[1].text, "0.499999896");
  EXPECT_EQ(p->cases[1].lo_text[1].text, "-0.499999896");
  EXPECT_EQ(p->cases[1].hi_text[1].text, "-0.11140846");
  for (const VnnCase& c : p->cases) {
    EXPECT_EQ(c.lo_text[0].text, "-0.129289109");
    EXPECT_EQ(c.hi_text[2].text, "-0.499204121");
    ASSERT_EQ(c.output.size(), 4u);  // (or (and (<= Y_k Y_0)) ...), k = 1..4
    for (const auto& conj : c.output) ASSERT_EQ(conj.size(), 1u);
    EXPECT_EQ(c.output[3][0].coef, (std::vector<double>{-1, 0, 0, 0, 1}));
  }
}

TEST(VnnlibFiles, AcasProp7OneBoxTwoConjunctions) {
  auto p = load_vnnlib_file(kRepoData + "/acasxu/prop_7.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  ASSERT_EQ(p->cases[0].output.size(), 2u);
  EXPECT_EQ(p->cases[0].output[0].size(), 3u);
  EXPECT_EQ(p->cases[0].output[1][2].coef, (std::vector<double>{0, 0, -1, 0, 1}));  // (<= Y_4 Y_2)
}

TEST(VnnlibFiles, BoxAndOutputInsideOneDisjunct) {
  // (assert (or (and (>= X_0 -1) (<= X_0 1) (>= Y_0 100))))
  auto p = load_vnnlib_file(kRepoData + "/vnncomp2021_test/test_small.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->num_inputs, 1);
  EXPECT_EQ(p->num_outputs, 1);
  ASSERT_EQ(p->cases.size(), 1u);
  EXPECT_EQ(p->cases[0].lo_out[0], -1.0);
  EXPECT_EQ(p->cases[0].hi_in[0], 1.0);
  ASSERT_EQ(p->cases[0].output.size(), 1u);
  ASSERT_EQ(p->cases[0].output[0].size(), 1u);
  EXPECT_EQ(p->cases[0].output[0][0].coef, (std::vector<double>{-1}));
  EXPECT_EQ(p->cases[0].output[0][0].rhs_down, -100.0);
  EXPECT_EQ(p->cases[0].output[0][0].rhs_up, -100.0);
}

TEST(VnnlibFiles, MissingFileIsAnError) {
  auto p = load_vnnlib_file("/nonexistent/prop.vnnlib");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.message(), "cannot open file '/nonexistent/prop.vnnlib'");
}

// ---- decimals ----

TEST(VnnlibDecimal, DirectedDoublesOfInexactAndExactDecimals) {
  const VnnDecimal a = dec("0.679857769");
  EXPECT_LT(a.down, a.up);
  EXPECT_EQ(std::nextafter(a.down, 1.0), a.up);  // within one ulp on each side
  EXPECT_TRUE(a.down == 0.679857769 || a.up == 0.679857769);
  EXPECT_EQ(compare_exact(a.down, a), -1);
  EXPECT_EQ(compare_exact(a.up, a), 1);
  const VnnDecimal h = dec("0.5");
  EXPECT_EQ(h.down, 0.5);
  EXPECT_EQ(h.up, 0.5);
  EXPECT_EQ(compare_exact(0.5, h), 0);
  EXPECT_EQ(dec(".5").down, 0.5);
  EXPECT_EQ(dec("5.").down, 5.0);
  EXPECT_EQ(dec("-0.5").up, -0.5);
  EXPECT_EQ(dec("1E+2").down, 100.0);
  EXPECT_EQ(dec("-0").down, 0.0);
  const VnnDecimal m = dec("1e-3");
  EXPECT_TRUE(m.down == 1e-3 || m.up == 1e-3);
  EXPECT_EQ(std::nextafter(m.down, 1.0), m.up);
  // Outside the double range.
  EXPECT_EQ(dec("1e400").down, DBL_MAX);
  EXPECT_EQ(dec("1e400").up, INFINITY);
  EXPECT_EQ(dec("-1e400").down, -INFINITY);
  EXPECT_EQ(dec("1e-400").down, 0.0);
  EXPECT_EQ(dec("1e-400").up, std::numeric_limits<double>::denorm_min());
}

// glibc prints a double's exact decimal expansion when asked for enough digits: that decimal must
// come back as down == up == x; one more nonzero digit puts it strictly between x and the next double.
TEST(VnnlibDecimal, ExactExpansionsOfRandomDoubles) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> bits;
  int tested = 0;
  while (tested < 300) {
    uint64_t b = bits(rng);
    double x;
    std::memcpy(&x, &b, sizeof x);
    if (!std::isfinite(x) || x == 0) continue;
    const int e = std::ilogb(x);
    if (e < -300 || e > 300) continue;  // keep the exact expansion within the lexeme limit
    char buf[1200];
    std::snprintf(buf, sizeof buf, "%.800e", x);
    std::string s(buf);
    const size_t epos = s.find('e');
    std::string mant = s.substr(0, epos), ex = s.substr(epos);
    while (mant.back() == '0') mant.pop_back();
    const std::string exact = mant + ex;
    if (exact.size() > 1000) continue;
    const VnnDecimal d = dec(exact);
    EXPECT_EQ(d.down, x) << exact;
    EXPECT_EQ(d.up, x) << exact;
    EXPECT_EQ(compare_exact(x, d), 0) << exact;
    EXPECT_EQ(compare_exact(std::nextafter(x, INFINITY), d), 1) << exact;
    EXPECT_EQ(compare_exact(std::nextafter(x, -INFINITY), d), -1) << exact;
    const std::string beyond = (mant.find('.') == std::string::npos ? mant + ".": mant) + "1" + ex;
    const VnnDecimal f = dec(beyond);  // |f| slightly above |x|
    if (x > 0) {
      EXPECT_EQ(f.down, x) << beyond;
      EXPECT_EQ(f.up, std::nextafter(x, INFINITY)) << beyond;
    } else {
      EXPECT_EQ(f.up, x) << beyond;
      EXPECT_EQ(f.down, std::nextafter(x, -INFINITY)) << beyond;
    }
    EXPECT_EQ(compare_exact(x, f), x > 0 ? -1 : 1) << beyond;
    ++tested;
  }
}

TEST(VnnlibDecimal, ExactDecimalArithmetic) {
  auto d = [](const char* s) {
    vnnlib::Dec v;
    EXPECT_EQ(vnnlib::parse_decimal(s, v), vnnlib::DecParse::kOk) << s;
    return v;
  };
  EXPECT_EQ(vnnlib::dec_text(vnnlib::add_dec(d("0.1"), d("0.2"))), "0.3");
  EXPECT_EQ(vnnlib::dec_text(vnnlib::add_dec(d("0.75"), d("-0.25"))), "0.5");
  EXPECT_EQ(vnnlib::dec_text(vnnlib::add_dec(d("1e-30"), d("-1e-30"))), "0");
  EXPECT_EQ(vnnlib::dec_text(vnnlib::add_dec(d("999"), d("1"))), "1000");
  EXPECT_EQ(vnnlib::dec_text(vnnlib::add_dec(d("-1"), d("0.001"))), "-0.999");
  EXPECT_EQ(vnnlib::dec_text(d("1.5e-300")), "1.5e-300");
  EXPECT_EQ(vnnlib::compare_dec(d("0.50"), d(".5")), 0);
  EXPECT_EQ(vnnlib::compare_dec(d("0.4999999999999999999999"), d("0.5")), -1);
  EXPECT_EQ(vnnlib::compare_dec(d("-2"), d("-10")), 1);
  EXPECT_EQ(vnnlib::compare_dec(d("0"), d("-0.0")), 0);
  vnnlib::Dec v;
  EXPECT_EQ(vnnlib::parse_decimal("1.2.3", v), vnnlib::DecParse::kSyntax);
  EXPECT_EQ(vnnlib::parse_decimal("1e", v), vnnlib::DecParse::kSyntax);
  EXPECT_EQ(vnnlib::parse_decimal(".", v), vnnlib::DecParse::kSyntax);
  EXPECT_EQ(vnnlib::parse_decimal("1e1001", v), vnnlib::DecParse::kExponentRange);
  EXPECT_EQ(vnnlib::parse_decimal(std::string(1001, '1'), v), vnnlib::DecParse::kTooLong);
  EXPECT_EQ(vnnlib::negate_text("-0.5"), "0.5");
  EXPECT_EQ(vnnlib::negate_text("+0.5"), "-0.5");
  EXPECT_EQ(vnnlib::negate_text("0.5"), "-0.5");
}

// ---- shapes and normal form ----

TEST(VnnlibShapes, DisjunctionOfBoxesWithOwnOutputs) {
  auto p = parse(decls(2, 2) +
                 "(assert (or (and (>= X_0 0) (<= X_0 1) (>= X_1 0) (<= X_1 1) (<= Y_0 Y_1))\n"
                 "            (and (>= X_0 2) (<= X_0 3) (>= X_1 0) (<= X_1 1) (>= Y_0 0.25))))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  check_invariants(*p, "two boxes");
  ASSERT_EQ(p->cases.size(), 2u);
  EXPECT_EQ(p->cases[0].hi_out[0], 1.0);
  EXPECT_EQ(p->cases[1].lo_out[0], 2.0);
  ASSERT_EQ(p->cases[0].output.size(), 1u);
  EXPECT_EQ(p->cases[0].output[0][0].coef, (std::vector<double>{1, -1}));
  ASSERT_EQ(p->cases[1].output.size(), 1u);
  EXPECT_EQ(p->cases[1].output[0][0].coef, (std::vector<double>{-1, 0}));
  EXPECT_EQ(p->cases[1].output[0][0].rhs_terms[0].text, "-0.25");
}

TEST(VnnlibShapes, IdenticalBoxesShareACase) {
  // 0 and 0.0 are the same bound; both disjuncts have the box [0, 1].
  auto p = parse(decls(1, 1) +
                 "(assert (or (and (>= X_0 0) (<= X_0 1) (<= Y_0 -1))\n"
                 "            (and (<= X_0 1) (>= X_0 0.0) (>= Y_0 1))))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  EXPECT_EQ(p->cases[0].output.size(), 2u);
}

TEST(VnnlibShapes, TopLevelBoxIntersectsDisjunctBounds) {
  auto p = parse(decls(2, 1) +
                 "(assert (>= X_0 0)) (assert (<= X_0 1)) (assert (>= X_1 -1)) (assert (<= X_1 1))\n"
                 "(assert (or (and (<= X_0 0.5) (<= X_0 2)) (and (>= X_0 0.5) (>= X_0 -3))))\n"
                 "(assert (or (<= Y_0 0) (>= Y_0 10)))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  check_invariants(*p, "intersect");
  ASSERT_EQ(p->cases.size(), 2u);
  EXPECT_EQ(p->cases[0].lo_text[0].text, "0");
  EXPECT_EQ(p->cases[0].hi_text[0].text, "0.5");  // 0.5 is tighter than 1 and 2
  EXPECT_EQ(p->cases[1].lo_text[0].text, "0.5");
  EXPECT_EQ(p->cases[1].hi_text[0].text, "1");
  for (const VnnCase& c : p->cases) {
    EXPECT_EQ(c.lo_out[1], -1.0);
    EXPECT_EQ(c.output.size(), 2u);
  }
}

TEST(VnnlibShapes, TightestBoundAndStrictInputBounds) {
  auto p = parse(decls(2, 0) +
                 "(assert (>= X_0 0.1)) (assert (>= X_0 0.25)) (assert (> X_0 0.25)) (assert (>= X_0 0.2))\n"
                 "(assert (< X_0 0.5)) (assert (<= X_0 0.75))\n"
                 "(assert (>= X_1 0.1)) (assert (< X_1 0.3))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  const VnnCase& c = p->cases[0];
  EXPECT_EQ(c.lo_text[0].text, "0.25");
  EXPECT_EQ(c.lo_out[0], 0.25);
  EXPECT_EQ(c.lo_in[0], std::nextafter(0.25, 1.0));  // strict: 0.25 itself is outside
  EXPECT_EQ(c.hi_out[0], 0.5);
  EXPECT_EQ(c.hi_in[0], std::nextafter(0.5, 0.0));
  // 0.3 is not a double: down(0.3) < 0.3 already.
  EXPECT_EQ(c.hi_in[1], dec("0.3").down);
  EXPECT_EQ(c.hi_out[1], dec("0.3").up);
  EXPECT_TRUE(c.output.empty());  // no output condition: always true
}

TEST(VnnlibShapes, LinearTermsNormalise) {
  // 2 Y_0 - Y_1 + 1 <= 3 - Y_2  ->  2 Y_0 - Y_1 + Y_2 <= -1 + 3
  auto p = parse(decls(1, 3) + "(assert (>= X_0 -1)) (assert (<= (- X_0) 1)) (assert (<= X_0 1))\n"
                 "(assert (<= (+ (* 2 Y_0) (- Y_1) 1) (- 3 Y_2)))\n"
                 "(assert (> (- Y_0 Y_1 (* Y_2 0.5) -0.25) 1e-3))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  const VnnCase& c = p->cases[0];
  EXPECT_EQ(c.hi_text[0].text, "1");
  EXPECT_EQ(c.lo_text[0].text, "-1");  // (<= (- X_0) 1) is X_0 >= -1, as tight as the first
  ASSERT_EQ(c.output.size(), 1u);
  ASSERT_EQ(c.output[0].size(), 2u);
  const VnnAtom& a = c.output[0][0];
  EXPECT_EQ(a.coef, (std::vector<double>{2, -1, 1}));
  ASSERT_EQ(a.rhs_terms.size(), 2u);
  EXPECT_EQ(a.rhs_terms[0].text, "-1");
  EXPECT_EQ(a.rhs_terms[1].text, "3");
  EXPECT_EQ(a.rhs_down, 2.0);
  EXPECT_EQ(a.rhs_up, 2.0);
  EXPECT_FALSE(a.strict);
  // Y_0 - Y_1 - 0.5 Y_2 - (-0.25) > 1e-3  ->  -Y_0 + Y_1 + 0.5 Y_2 < 0.25 - 1e-3 = 0.249
  const VnnAtom& b = c.output[0][1];
  EXPECT_EQ(b.coef, (std::vector<double>{-1, 1, 0.5}));
  EXPECT_TRUE(b.strict);
  ASSERT_EQ(b.rhs_terms.size(), 2u);
  EXPECT_EQ(b.rhs_terms[0].text, "0.25");
  EXPECT_EQ(b.rhs_terms[1].text, "-1e-3");
  EXPECT_EQ(b.rhs_down, dec("0.249").down);
  EXPECT_EQ(b.rhs_up, dec("0.249").up);
  EXPECT_LT(b.rhs_down, b.rhs_up);
}

TEST(VnnlibShapes, BoundWithSeveralConstantsIsTheExactSum) {
  auto p = parse(decls(1, 0) + "(assert (<= (+ X_0 0.25) 0.75)) (assert (>= (- X_0 0.1) 0.2))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->cases[0].hi_text[0].text, "0.5");
  EXPECT_EQ(p->cases[0].lo_text[0].text, "0.3");
  EXPECT_EQ(p->cases[0].lo_out[0], dec("0.3").down);
}

TEST(VnnlibShapes, CommandsCommentsAndLineEndings) {
  auto p = parse("; comment\r\n(set-logic QF_LRA)\r\n(declare-fun X_0 () Real) ; trailing comment\r\n"
                 "(declare-const Y_0 Real)\n(assert (and (>= X_0 0) (<= X_0 1)))\n"
                 "(assert (<= (- Y_0 Y_0) 1))\n(check-sat)\n(get-model)\n(exit)\n");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  ASSERT_EQ(p->cases[0].output.size(), 1u);
  EXPECT_EQ(p->cases[0].output[0][0].coef, (std::vector<double>{0}));  // Y_0 - Y_0 cancels
}

TEST(VnnlibShapes, AnEmptyConjunctionMakesTheCaseTrue) {
  auto p = parse(decls(1, 1) + "(assert (or (and (>= X_0 0) (<= X_0 1) (<= Y_0 0)) (and (>= X_0 0) (<= X_0 1))))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  EXPECT_TRUE(p->cases[0].output.empty());
}

TEST(VnnlibShapes, DistributesAndOverOr) {
  // (Y_0 <= 0 or Y_0 >= 1) and (Y_1 <= 0 or Y_1 >= 1): four conjunctions of two atoms.
  auto p = parse(decls(1, 2) + "(assert (and (>= X_0 0) (<= X_0 1)))\n"
                 "(assert (and (or (<= Y_0 0) (>= Y_0 1)) (or (<= Y_1 0) (>= Y_1 1))))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  ASSERT_EQ(p->cases[0].output.size(), 4u);
  for (const auto& conj : p->cases[0].output) EXPECT_EQ(conj.size(), 2u);
  EXPECT_EQ(p->cases[0].output[1][0].coef, (std::vector<double>{1, 0}));
  EXPECT_EQ(p->cases[0].output[1][1].coef, (std::vector<double>{0, -1}));
}

// ---- errors ----

TEST(VnnlibErrors, MessagesNameLineAndColumn) {
  const std::string d11 = decls(1, 1);  // two lines
  EXPECT_EQ(error_of(d11 + "(assert (<= X_0 1)"),
            "t.vnnlib:3:19: unexpected end of file; expected ')' closing the '(' at 3:1");
  EXPECT_EQ(error_of("(declare-const X_0 Real))"),
            "t.vnnlib:1:25: unexpected ')' (unbalanced parentheses); expected '(' starting a command, or the end of "
            "the file");
  EXPECT_EQ(error_of(d11 + "(assert (not (<= Y_0 1)))"),
            "t.vnnlib:3:10: unknown operator 'not'; expected and, or, <=, >=, < or >");
  EXPECT_EQ(error_of(d11 + "(assert (<= X_0 1))\n(assert (<= X_1 1))"),
            "t.vnnlib:4:13: undeclared variable 'X_1'; expected a declaration (declare-const X_1 Real) before its first use");
  EXPECT_EQ(error_of(d11 + "(assert (<= X_0 1))"),
            "t.vnnlib:1:16: input X_0 has no lower bound; expected every input bounded below and above, e.g. (assert "
            "(>= X_0 0))");
  EXPECT_EQ(error_of(d11 + "(assert (>= X_0 0.6))\n(assert (<= X_0 0.5))"),
            "t.vnnlib:4:9: empty input box: X_0 >= 0.6 and X_0 <= 0.5; expected lower bound <= upper bound (< when a bound is strict)");
  EXPECT_EQ(error_of(d11 + "(assert (>= X_0 0.5))\n  (assert (< X_0 0.5))"),
            "t.vnnlib:4:11: empty input box: X_0 >= 0.5 and X_0 < 0.5; expected lower bound <= upper bound (< when a bound is strict)");
  EXPECT_EQ(error_of(d11 + "(assert (<= X_0 Y_0))"),
            "t.vnnlib:3:9: atom mixes inputs and outputs (X_0 and Y_0); expected an atom over inputs X_i only (a "
            "bound) or over outputs Y_j only");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 1.2.3))"),
            "t.vnnlib:3:17: bad number '1.2.3'; expected a decimal such as 0.5, -1, .25 or 1e-3");
  EXPECT_EQ(error_of("(declare-const X_0 Real)\n(declare-const X_0 Real)"),
            "t.vnnlib:2:16: duplicate declaration of X_0 (first declared at 1:16); expected each variable declared once");
  EXPECT_EQ(error_of("(declare-const X_1 Real)"),
            "t.vnnlib:1:16: X_1 declared out of order; expected X_0 next (declarations count X_0, X_1, ... without gaps)");
  EXPECT_EQ(error_of(d11 + "(assert (>= X_0 0)) (assert (<= X_0 1)) garbage"),
            "t.vnnlib:3:41: unexpected 'garbage' outside a command; expected '(' starting a command, or the end of the "
            "file");
  EXPECT_EQ(error_of(decls(2, 0) + "(assert (<= (+ X_0 X_1) 1))"),
            "t.vnnlib:3:9: atom over several inputs (X_0, X_1): general input polytopes are not supported; expected "
            "a bound on one input, (<= X_i c) or (>= X_i c)");
  EXPECT_EQ(error_of(d11 + "(assert (<= (* 0.1 Y_0) 1))"),
            "t.vnnlib:3:16: coefficient '0.1' is not exactly a double; expected a coefficient that is a binary "
            "floating-point number, e.g. 2, -1 or 0.5");
  EXPECT_EQ(error_of(d11 + "(assert (<= (* 2 X_0) 1))"),
            "t.vnnlib:3:9: input bound with coefficient 2 on X_0; expected coefficient 1 or -1: (<= X_i c) or (>= X_i c)");
  EXPECT_EQ(error_of(d11 + "(assert (<= (* Y_0 Y_0) 1))"),
            "t.vnnlib:3:13: (* 'Y_0' 'Y_0') is not a constant times a variable; expected (* c X_i), (* c Y_j) or (* "
            "Y_j c) with c a number");
  EXPECT_EQ(error_of("(declare-const X_0 Int)"), "t.vnnlib:1:20: sort 'Int' of X_0; expected Real");
  EXPECT_EQ(error_of("(declare-const Z Real)"),
            "t.vnnlib:1:16: declared name 'Z'; expected X_<i> (an input) or Y_<j> (an output), i and j without leading "
            "zeros");
  EXPECT_EQ(error_of("(declare-fun X_0 (Real) Real)"),
            "t.vnnlib:1:19: unexpected 'Real' in declare-fun; expected an empty argument list () (only constants are "
            "supported)");
  EXPECT_EQ(error_of("(push 1)"),
            "t.vnnlib:1:2: unknown command 'push'; expected declare-const, declare-fun, assert, set-logic, check-sat, "
            "get-model or exit");
  EXPECT_EQ(error_of(d11 + "(assert (or))"), "t.vnnlib:3:9: (or) without operands; expected at least one formula");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 1 2))"),
            "t.vnnlib:3:19: unexpected '2'; expected ')' after the two operands of '<=' (closing the '(' at 3:9)");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 |x|))"),
            "t.vnnlib:3:17: '|' (quoted symbols and strings are not supported); expected a symbol, a number, '(' or ')'");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 \xc3\xa9))"),
            "t.vnnlib:3:17: unexpected character byte 0xc3; expected a symbol, a number, '(', ')' or a comment");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 foo))"),
            "t.vnnlib:3:17: unknown symbol 'foo'; expected a number, X_i, Y_j or a parenthesised term");
  EXPECT_EQ(error_of(d11 + "(assert (<= 1 2))"), "t.vnnlib:3:9: atom without a variable; expected an atom over X_i or Y_j");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 -" + std::string(1001, '1') + "))"),
            "t.vnnlib:3:17: number of 1002 characters is too long; expected at most 1000 characters after the sign");
  EXPECT_EQ(error_of(d11 + "(assert (<= Y_0 1e5000))"),
            "t.vnnlib:3:17: exponent of number '1e5000' out of range; expected an exponent within -1000..1000");
}

TEST(VnnlibErrors, ErrorsCarryCodes) {
  EXPECT_EQ(parse(decls(2, 0) + "(assert (<= (+ X_0 X_1) 1))").status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(parse("(declare-const X_0 Real))").status().code(), ErrorCode::kInvalidInput);
  EXPECT_EQ(parse(decls(1, 1) + "(assert (<= X_0 Y_0))").status().code(), ErrorCode::kUnsupported);
}

TEST(VnnlibErrors, UnboundedInputInOneDisjunct) {
  EXPECT_EQ(error_of(decls(1, 1) + "(assert (or (and (>= X_0 0) (<= X_0 1)) (and (>= X_0 2))))"),
            "t.vnnlib:1:16: input X_0 has no upper bound in disjunct 1 of the property's disjunctive normal form; "
            "expected every input bounded below and above, e.g. (assert (<= X_0 0))");
}

TEST(VnnlibErrors, NestingDeeperThan256IsRefused) {
  std::string f = decls(1, 1) + "(assert ";
  for (int i = 0; i < 1000; ++i) f += "(and ";
  f += "(<= Y_0 1)";
  for (int i = 0; i < 1000; ++i) f += ")";
  f += ")";
  // The command is level 1, the formula level 2: the 256th "(and " is the first too deep.
  EXPECT_EQ(error_of(f), "t.vnnlib:3:" + std::to_string(9 + 255 * 5) +
                             ": nesting deeper than 256 levels; expected at most 256 nested parentheses");
  EXPECT_EQ(parse(f).status().code(), ErrorCode::kResource);
  std::string t = decls(1, 1) + "(assert (<= ";
  for (int i = 0; i < 1000; ++i) t += "(- ";
  t += "Y_0";
  for (int i = 0; i < 1000; ++i) t += ")";
  t += " 1))";
  EXPECT_NE(error_of(t).find("nesting deeper than 256 levels"), std::string::npos);
  // 254 nested "and" under the assert is the deepest accepted (levels 2 .. 255, the atom at 256).
  std::string ok = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1)) (assert ";
  for (int i = 0; i < 254; ++i) ok += "(and ";
  ok += "(<= Y_0 1)";
  for (int i = 0; i < 254; ++i) ok += ")";
  ok += ")";
  EXPECT_TRUE(parse(ok).ok()) << parse(ok).message();
}

TEST(VnnlibErrors, DistributingPastAMillionConjunctionsIsRefused) {
  std::string f = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1)) (assert (and";
  for (int i = 0; i < 20; ++i) f += " (or (<= Y_0 " + std::to_string(i) + ") (>= Y_0 " + std::to_string(i) + "))";
  f += "))";
  auto r = parse(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.message(), "t.vnnlib:3:49: distributing 'and' over 'or' gives 1048576 conjunctions; expected at most "
                         "1000000 conjunctions");
  // Across asserts too (each assert is conjoined into the property).
  std::string g = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1))";
  for (int i = 0; i < 20; ++i) g += " (assert (or (<= Y_0 " + std::to_string(i) + ") (>= Y_0 1)))";
  EXPECT_NE(error_of(g).find("gives 1048576 conjunctions"), std::string::npos);
}

TEST(VnnlibErrors, CallerLimitsLowerTheDefaultsAndNeverRaiseThem) {
  // Three binary output choices: 8 conjunctions. A caller's limit of 4 refuses them, with the number in
  // the message; a limit above the default is clamped to the default (2^20 conjunctions still refused).
  const std::string f = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1)) (assert (and (or (<= Y_0 0) (>= Y_0 1))"
                        " (or (<= Y_0 2) (>= Y_0 3)) (or (<= Y_0 4) (>= Y_0 5))))";
  ASSERT_TRUE(parse(f).ok());
  denote::VnnlibLimits small;
  small.max_conjunctions = 4;
  auto r = denote::parse_vnnlib(f, "t.vnnlib", small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_NE(r.message().find("gives 8 conjunctions; expected at most 4 conjunctions"), std::string::npos) << r.message();
  denote::VnnlibLimits work;
  work.max_dnf_work = 10;
  r = denote::parse_vnnlib(f, "t.vnnlib", work);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("more than 10 atom copies"), std::string::npos) << r.message();
  std::string g = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1)) (assert (and";
  for (int i = 0; i < 20; ++i) g += " (or (<= Y_0 " + std::to_string(i) + ") (>= Y_0 " + std::to_string(i) + "))";
  g += "))";
  denote::VnnlibLimits huge;
  huge.max_conjunctions = int64_t{1} << 40;
  r = denote::parse_vnnlib(g, "t.vnnlib", huge);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("expected at most 1000000 conjunctions"), std::string::npos) << r.message();
}

// A deadline (verify's timeout) stops the normal form of a large property (issue 47: 10^6 cases took
// 11 s at --timeout 3); no deadline reads it whole.
TEST(VnnlibErrors, ADeadlineStopsTheNormalForm) {
  std::string f = decls(1, 1) + "(assert (or";
  for (int i = 0; i < 5000; ++i)
    f += " (and (>= X_0 " + std::to_string(i) + ") (<= X_0 " + std::to_string(i + 1) + ") (<= Y_0 0))";
  f += "))";
  auto whole = denote::parse_vnnlib(f, "t.vnnlib");
  ASSERT_TRUE(whole.ok()) << whole.message();
  EXPECT_EQ(whole->cases.size(), 5000u);
  denote::VnnlibLimits late;
  late.deadline = std::chrono::steady_clock::now();
  auto r = denote::parse_vnnlib(f, "t.vnnlib", late);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.status().field(), "deadline");
  EXPECT_NE(r.message().find("the deadline passed while reading the property"), std::string::npos) << r.message();
}

TEST(VnnlibErrors, FileOver64MiBIsRefused) {
  std::string big(size_t{64} * 1024 * 1024 + 1, ' ');
  auto r = parse(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.message(), "t.vnnlib:1:1: file of 67108865 bytes is larger than 64 MiB; expected at most 67108864 bytes");
}

TEST(VnnlibErrors, TooManyBoxEntriesAreRefused) {
  // 13 binary choices on 13 different inputs: 8192 distinct boxes of 1000 inputs each.
  std::string f = decls(1000, 1);
  for (int i = 0; i < 1000; ++i)
    f += "(assert (>= X_" + std::to_string(i) + " 0)) (assert (<= X_" + std::to_string(i) + " 1))\n";
  f += "(assert (and";
  for (int i = 0; i < 13; ++i)
    f += " (or (<= X_" + std::to_string(i) + " 0.5) (>= X_" + std::to_string(i) + " 0.5))";
  f += "))\n";
  auto r = parse(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.message(), "t.vnnlib:2003:1: 4001 cases of 1000 inputs would hold more than 4000000 bounds; expected "
                         "fewer distinct input boxes");
}

TEST(VnnlibErrors, TooManyOutputAtomCopiesAreRefused) {
  // 2000 top-level output atoms copied into each of 1000 output disjuncts: 2 * 10^6 copies.
  std::string f = decls(1, 1) + "(assert (>= X_0 0)) (assert (<= X_0 1))\n";
  for (int i = 0; i < 2000; ++i) f += "(assert (<= Y_0 " + std::to_string(i) + "))\n";
  f += "(assert (or";
  for (int i = 0; i < 1000; ++i) f += " (>= Y_0 " + std::to_string(i) + ")";
  f += "))\n";
  auto r = parse(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.message(), "t.vnnlib:2005:1: the output conditions would take more than 20000000 words of memory; "
                         "expected fewer output atoms times outputs");
}

TEST(VnnlibErrors, LargeFileIsRefusedBeforeReading) {
  const std::string path = (std::filesystem::temp_directory_path() / "denote_vnnlib_big.vnnlib").string();
  { std::ofstream(path) << "(declare-const X_0 Real)\n"; }
  std::filesystem::resize_file(path, (size_t{64} << 20) + 1);  // sparse: nothing is written
  auto r = load_vnnlib_file(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), path + ":1:1: file of 67108865 bytes is larger than 64 MiB; expected at most 67108864 bytes");
}

// Random byte edits of a real property: every input parses or gives a well-formed message.
TEST(VnnlibErrors, MutatedInputsGiveValuesNotCrashes) {
  const std::string base = decls(5, 5) +
                           "(assert (or (and (<= X_0 0.700434925) (>= X_0 -0.129289109) (<= X_1 0.5) (>= X_1 -0.5)\n"
                           "  (<= X_2 0.5) (>= X_2 -0.5) (<= X_3 0.5) (>= X_3 -0.5) (<= X_4 0.5) (>= X_4 -0.5))\n"
                           "  (and (<= X_0 0.7) (>= X_0 -0.1) (<= X_1 0.5) (>= X_1 -0.5) (<= X_2 0.5) (>= X_2 -0.5)\n"
                           "  (<= X_3 0.5) (>= X_3 -0.5) (<= X_4 0.5) (>= X_4 -0.5))))\n"
                           "(assert (or (and (<= Y_1 Y_0)) (and (<= (+ Y_2 (* 2 Y_3)) (- Y_0 1e-3) ))))\n";
  ASSERT_TRUE(parse(base).ok()) << parse(base).message();
  const std::regex format(R"(t\.vnnlib:[0-9]+:[0-9]+: .+; expected .+)");
  const std::string alphabet = "()XY_0123456789.-+*<=>e ;\n\tandor";
  std::mt19937 rng(11);
  int ok = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    auto r = parse(s);
    if (r.ok()) {
      ++ok;
      check_invariants(*r, s);
    } else {
      EXPECT_TRUE(std::regex_match(r.message(), format)) << r.message();
    }
  }
  EXPECT_GT(ok, 0);
}

// ---- exact comparisons ----

VnnAtom output_atom(const std::string& assert_text, int ny) {
  std::string text = decls(1, ny) + "(assert (>= X_0 0)) (assert (<= X_0 1)) " + assert_text;
  auto p = parse(text);
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p.ok() || p->cases.empty() || p->cases[0].output.empty()) return {};
  return p->cases[0].output[0][0];
}

TEST(VnnlibExact, TiesAtAnExactDouble) {
  const VnnAtom le = output_atom("(assert (<= Y_0 0.5))", 1);
  const VnnAtom lt = output_atom("(assert (< Y_0 0.5))", 1);
  EXPECT_TRUE(atom_holds_exact(le, {0.5}));
  EXPECT_FALSE(atom_holds_exact(lt, {0.5}));
  EXPECT_TRUE(atom_holds_exact(lt, {std::nextafter(0.5, 0.0)}));
  EXPECT_FALSE(atom_holds_exact(le, {std::nextafter(0.5, 1.0)}));
  const VnnAtom ge = output_atom("(assert (>= Y_0 0.5))", 1);  // -Y_0 <= -0.5
  EXPECT_TRUE(atom_holds_exact(ge, {0.5}));
  EXPECT_FALSE(atom_holds_exact(ge, {std::nextafter(0.5, 0.0)}));
  EXPECT_EQ(compare_exact(0.5, dec("0.5")), 0);
  EXPECT_EQ(compare_exact(0.5, dec("0.50000000000000000000000001")), -1);
  EXPECT_EQ(compare_exact(0.5, dec("0.49999999999999999999999999")), 1);
  EXPECT_EQ(compare_exact(-0.0, dec("0")), 0);
  EXPECT_EQ(compare_exact(0.0, dec("-0.0")), 0);
}

TEST(VnnlibExact, InexactDecimalsAreStrictlyBetweenTheirDoubles) {
  const VnnDecimal d = dec("0.1");
  const VnnAtom le = output_atom("(assert (<= Y_0 0.1))", 1);
  const VnnAtom lt = output_atom("(assert (< Y_0 0.1))", 1);
  EXPECT_TRUE(atom_holds_exact(le, {d.down}));
  EXPECT_TRUE(atom_holds_exact(lt, {d.down}));
  EXPECT_FALSE(atom_holds_exact(le, {d.up}));
  EXPECT_EQ(compare_exact(0.1, d), 1);  // the double 0.1 is above the decimal 0.1
}

TEST(VnnlibExact, SumsAreExactWhereDoublesCancel) {
  const VnnAtom a = output_atom("(assert (<= (+ Y_0 Y_1 Y_2) 0))", 3);
  // (1 + 1e-30) - 1 is 0 in doubles; exactly it is 1e-30 > 0.
  EXPECT_EQ((1.0 + 1e-30) + -1.0, 0.0);
  EXPECT_FALSE(atom_holds_exact(a, {1.0, 1e-30, -1.0}));
  EXPECT_TRUE(atom_holds_exact(a, {1.0, -1e-30, -1.0}));
  EXPECT_TRUE(atom_holds_exact(a, {DBL_MAX, DBL_MAX, -DBL_MAX}) == false);  // no overflow: 2 DBL_MAX - DBL_MAX > 0
  EXPECT_TRUE(atom_holds_exact(a, {DBL_MAX, -DBL_MAX, 0.0}));
  EXPECT_TRUE(atom_holds_exact(a, {5e-324, -5e-324, 0.0}));
  // The rhs is the exact decimal sum 0.1 + 0.2 = 0.3, not the double 0.1 + 0.2.
  const VnnAtom s = output_atom("(assert (<= (- Y_0 0.2) 0.1))", 1);
  ASSERT_EQ(s.rhs_terms.size(), 2u);
  EXPECT_EQ(s.rhs_down, dec("0.3").down);
  EXPECT_EQ(s.rhs_up, dec("0.3").up);
  EXPECT_FALSE(atom_holds_exact(s, {0.1 + 0.2}));  // 0.30000000000000004 > 0.3
  EXPECT_TRUE(atom_holds_exact(s, {0.3}));         // 0.29999999999999998889... < 0.3
  // Coefficients other than 1: 0.5 Y_0 + 3 Y_1 <= 1.
  const VnnAtom c = output_atom("(assert (<= (+ (* 0.5 Y_0) (* Y_1 3)) 1))", 2);
  EXPECT_TRUE(atom_holds_exact(c, {2.0 / 3 * 0 + 0.5, 0.25}));  // 0.25 + 0.75 = 1
  EXPECT_FALSE(atom_holds_exact(c, {0.5, std::nextafter(0.25, 1.0)}));
}

TEST(VnnlibExact, NonFiniteValues) {
  const VnnAtom le = output_atom("(assert (<= Y_0 1))", 1);
  EXPECT_FALSE(atom_holds_exact(le, {NAN}));
  EXPECT_FALSE(atom_holds_exact(le, {INFINITY}));
  EXPECT_TRUE(atom_holds_exact(le, {-INFINITY}));
  EXPECT_FALSE(atom_holds_exact(le, {}));  // wrong size
  const VnnAtom diff = output_atom("(assert (<= (- Y_0 Y_1) 1))", 2);
  EXPECT_FALSE(atom_holds_exact(diff, {INFINITY, INFINITY}));  // inf - inf: undefined, not a witness
  EXPECT_EQ(compare_exact(NAN, dec("1")), 2);
  EXPECT_EQ(compare_exact(INFINITY, dec("1e400")), 1);
  EXPECT_EQ(compare_exact(-INFINITY, dec("-1e400")), -1);
  EXPECT_EQ(compare_exact(DBL_MAX, dec("1e400")), -1);
}

}  // namespace
}  // namespace denote
