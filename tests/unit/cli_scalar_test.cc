// End-to-end tests of `denote scalar` (the line protocol of docs/CLI.md) and of `denote run` with
// the software binary formats and MPFR. Expected words are hand-computed: 1 + 1 = 2 is 0x4000 in
// bfloat16; e = 2.71828... lies between the bfloat16 values 2.7109375 and 2.71875 (0x402e), nearer
// the second; 1 + 2^-23 rounds upward to 1 + 2^-7 (0x3f81) in bfloat16.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "denote/program/examples.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

// Runs the given input lines and returns the output lines (one per input line).
std::vector<std::string> scalar(const std::vector<std::string>& in) {
  std::string text;
  for (const std::string& l : in) text += l + "\n";
  CliRun r = run_cli("scalar", text);
  EXPECT_EQ(r.code, 0) << r.err;
  auto out = lines_of(r.out);
  EXPECT_EQ(out.size(), in.size()) << r.out;
  return out;
}

TEST(CliScalar, TheSpecExample) {
  EXPECT_EQ(scalar({"add bfloat16 nearest-even 0x3f80 0x3f80"}), std::vector<std::string>{"0x4000 -"});
}

TEST(CliScalar, OperationsAndFlags) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"exp bfloat16 nearest-even 0x3f80", "0x402e inexact"},
      {"cast binary32->bfloat16 upward 0x3f800001", "0x3f81 inexact"},
      {"cast binary32->bfloat16 toward-zero 0x3f800001", "0x3f80 inexact"},
      {"div binary16 nearest-even 0x3c00 0x0000", "0x7c00 divide-by-zero"},
      {"log binary16 nearest-even 0x0", "0xfc00 divide-by-zero"},
      {"sqrt binary16 nearest-even 0xbc00", "0x7e00 invalid"},
      {"fma binary16 nearest-even 0x3c00 0x3c00 0x3c00", "0x4000 -"},
      {"div_floor binary64 nearest-even 0x3ff0000000000000 0x3fb999999999999a", "0x4022000000000000 -"},
      {"clamp_min binary16 nearest-even 0xbc00 0x0000", "0x0 -"},
      {"rsqrt binary16 nearest-even 0x4400", "0x3800 -"},              // 1/sqrt(4) = 0.5
      {"neg e4m3fnuz nearest-even 0x0", "0x0 -"},                      // no negative zero
      {"exp e4m3fn nearest-even 0x58", "0x7f overflow,inexact"},      // exp(16) > 448: NaN
      {"exp e2m1fn nearest-even 0x6", "0x7 overflow,inexact,saturated"},
      {"pow binary16 nearest-even 0x4000 0x4900", "0x6400 -"},        // 2^10 = 1024
  };
  std::vector<std::string> in;
  for (const auto& c : cases) in.push_back(c.first);
  const auto out = scalar(in);
  ASSERT_EQ(out.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(out[i], cases[i].second) << cases[i].first;
}

TEST(CliScalar, ErrorsAreLinesAndTheBatchGoesOn) {
  const auto out = scalar({
      "add bfloat16 nearest-even 0x3g80 0x3f80",   // malformed word
      "add bfloat16 nearest-even 3f80 0x3f80",     // no 0x
      "neg bfloat16 nearest-even 0x10000",         // wider than 16 bits
      "add bfloat17 nearest-even 0x3f80 0x3f80",   // unknown format
      "frobnicate bfloat16 nearest-even 0x3f80",   // unknown op
      "add bfloat16 sideways 0x3f80 0x3f80",       // unknown rounding
      "add bfloat16 nearest-even 0x3f80",          // too few arguments
      "",                                          // empty line
      "div_trunc int8 nearest-even 0x1 0x0",       // integer division by zero
      "add uint(12) nearest-even 0x1000 0x2",      // wider than 12 bits
      "sub bool nearest-even 0x1 0x0",             // bool has no sub
      "cast bfloat16 nearest-even 0x3f80",         // cast needs SRC->DST
      "sqrt e2m1fn nearest-even 0xa",              // sqrt(-1) has no value without NaN
      "add bfloat16 nearest-even 0x3f80 0x3f80",   // still answered
  });
  ASSERT_EQ(out.size(), 14u);
  for (size_t i = 0; i + 1 < out.size(); ++i) EXPECT_EQ(out[i].rfind("error: ", 0), 0u) << i << ": " << out[i];
  EXPECT_NE(out[0].find("malformed word '0x3g80'"), std::string::npos) << out[0];
  EXPECT_NE(out[2].find("bits above"), std::string::npos) << out[2];
  EXPECT_NE(out[3].find("unknown format 'bfloat17'"), std::string::npos) << out[3];
  EXPECT_NE(out[4].find("unknown op"), std::string::npos) << out[4];
  EXPECT_NE(out[5].find("unknown rounding mode"), std::string::npos) << out[5];
  EXPECT_NE(out[8].find("division by zero"), std::string::npos) << out[8];
  EXPECT_NE(out[9].find("bits above the 12-bit width of uint(12)"), std::string::npos) << out[9];
  EXPECT_NE(out[10].find("sub is not defined on bool"), std::string::npos) << out[10];
  EXPECT_NE(out[12].find("e2m1fn"), std::string::npos) << out[12];
  EXPECT_EQ(out.back(), "0x4000 -");
}

// Integer, bool and cast lines (docs/TYPED.md); expected words by hand: int8 bits, bfloat16 256 = 0x4380.
TEST(CliScalar, IntegersBoolAndCasts) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"neg uint8 nearest-even 0x1", "0xff -"},                     // neg(1) = 255
      {"mul uint8 nearest-even 0xff 0x2", "0xfe -"},                // 510 mod 256
      {"div_trunc int8 toward-zero 0x80 0xff", "0x80 -"},           // min / -1 = min
      {"div_floor int32 nearest-even 0xfffffff9 0x2", "0xfffffffc -"},  // floor(-7 / 2) = -4
      {"remainder int8 nearest-even 0xf9 0x2", "0x1 -"},            // -7 mod 2 = 1
      {"pow int8 nearest-even 0xff 0xfb", "0xff -"},                // (-1)^-5 = -1
      {"clamp_min int16 nearest-even 0xfff9 0x3", "0x3 -"},
      {"max bool nearest-even 0x1 0x0", "0x1 -"},
      {"add int(65) nearest-even 0x1ffffffffffffffff 0x1", "0x0 -"},  // -1 + 1
      {"cast int32->bfloat16 nearest-even 0x101", "0x4380 inexact"},  // 257 -> 256
      {"cast binary32->int8 upward 0x40200000", "0x3 inexact"},       // ceil(2.5)
      {"cast bool->binary16 nearest-even 0x1", "0x3c00 -"},
      {"cast int8->int8 nearest-even 0x80", "0x80 -"},
  };
  std::vector<std::string> in;
  for (const auto& c : cases) in.push_back(c.first);
  const auto out = scalar(in);
  ASSERT_EQ(out.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(out[i], cases[i].second) << cases[i].first;
  const auto errors = scalar({"exp int8 nearest-even 0x1", "fma int8 nearest-even 0x1 0x1 0x1",
                              "cast int8->int16 nearest-even 0x1", "cast binary32->int8 nearest-even 0x7fc00000",
                              "add int(0) nearest-even 0x0 0x0"});
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_NE(errors[0].find("error: exp is not defined on int8"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("error: fma is not defined on int8"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("identical types"), std::string::npos) << errors[2];
  EXPECT_NE(errors[3].find("nan"), std::string::npos) << errors[3];
  EXPECT_NE(errors[4].find("unsupported"), std::string::npos) << errors[4];
}

// cast_sat (issue 13): the saturating conversion between binary formats; 1e6 is 0x49742400.
TEST(CliScalar, SaturatingCast) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cast_sat binary32->e4m3fn nearest-even 0x49742400", "0x7e overflow,inexact,saturated"},  // 448
      {"cast binary32->e4m3fn nearest-even 0x49742400", "0x7f overflow,inexact"},                // NaN
      {"cast_sat binary32->e4m3fn toward-zero 0x49742400", "0x7e overflow,inexact"},  // 448 is the mode's result
      {"cast_sat binary32->e4m3fn nearest-even 0xff800000", "0xfe saturated"},        // -inf -> -448
      {"cast_sat binary32->e5m2 nearest-even 0x7f800000", "0x7c -"},                  // inf stays inf
      {"cast_sat binary32->e4m3fnuz nearest-even 0x49742400", "0x7f overflow,inexact,saturated"},  // 240
      {"cast_sat binary32->bfloat16 nearest-even 0x3f800001", "0x3f80 inexact"},
      {"cast_sat e4m3fnuz->binary32 nearest-even 0x80", "0x7fc00000 -"},  // the fnuz NaN is +NaN
      {"cast e4m3fn->binary32 nearest-even 0xff", "0xffc00000 -"},       // an fn NaN keeps its sign
  };
  std::vector<std::string> in;
  for (const auto& c : cases) in.push_back(c.first);
  const auto out = scalar(in);
  ASSERT_EQ(out.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(out[i], cases[i].second) << cases[i].first;
  const auto errors = scalar({"cast_sat int8->e4m3fn nearest-even 0x1", "cast_sat binary32 nearest-even 0x1",
                              "cast_sat binary32->e2m1fn nearest-even 0x7fc00000"});
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "error: cast_sat: a saturating conversion is between binary formats, got int8->e4m3fn");
  EXPECT_EQ(errors[1], "error: cast_sat: expected SRC->DST, got 'binary32'");
  EXPECT_EQ(errors[2], "error: e2m1fn: nan has no value in a format without nan");
}

// The work of a line is bounded (issue 13: a 32 KB line, pow int(65536) with a 65536-bit exponent,
// took 14 s; sin/cos of huge binary(E,F) arguments took hours): such lines and over-long lines are
// error lines, and the batch goes on.
TEST(CliScalar, WorkPerLineIsBounded) {
  const std::string all_ones(16384, 'f');
  const std::string big_pow = "pow uint(65536) nearest-even 0x3 0x" + all_ones;  // 32.8 KB
  const std::string long_line = "add bfloat16 nearest-even 0x3f80 " + std::string(70000, ' ') + "0x3f80";
  // sin of the largest binary(30,33) number, about 2^(2^29): argument reduction would take hours.
  const auto trig = scalar({"sin binary(30,33) nearest-even 0x7ffffffdffffffff", "cos binary(30,33) nearest-even 0x1",
                            "cos binary(20,33) nearest-even 0x1ffffdffffffff"});
  ASSERT_EQ(trig.size(), 3u);
  EXPECT_EQ(trig[0],
            "error: sin: the argument is about 2^536870911, above the scalar line limit of 2^2097152 (its argument "
            "reduction needs that many bits)");
  EXPECT_EQ(trig[1].rfind("0x", 0), 0u) << trig[1];  // cos of the smallest subnormal: 1
  EXPECT_EQ(trig[2].rfind("0x", 0), 0u) << trig[2];  // a large allowed argument, about 2^(2^19)
  const auto out = scalar({big_pow, "pow int(65536) nearest-even 0x3 0x7" + all_ones.substr(1),
                           "pow int(65536) nearest-even 0x3 0x" + all_ones,  // exponent -1: 0, no squarings
                           "pow int(65536) nearest-even 0x3 0x" + std::string(256, 'f'),
                           "pow uint(8192) nearest-even 0x3 0x" + std::string(2048, 'f'), long_line,
                           "add bfloat16 nearest-even 0x3f80 0x3f80"});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0],
            "error: pow: a 65536-bit exponent in uint(65536) is 4294967296 bit-squarings, above the scalar line limit "
            "of 2^26 (exponent bits x width)");
  EXPECT_EQ(out[1].rfind("error: pow: a 65535-bit exponent in int(65536)", 0), 0u) << out[1].substr(0, 80);
  EXPECT_EQ(out[2], "0x0 -");
  EXPECT_EQ(out[3].rfind("0x", 0), 0u) << out[3].substr(0, 80);  // a 1024-bit exponent: allowed
  EXPECT_EQ(out[4].rfind("0x", 0), 0u) << out[4].substr(0, 80);  // every exponent of uint(8192)
  EXPECT_EQ(out[5], "error: line of " + std::to_string(long_line.size()) + " characters exceeds the limit of 65536");
  EXPECT_EQ(out[6], "0x4000 -");
}

// denote run on a typed model with --input-words: words and decoded values in text and JSON.
TEST(CliRunTyped, InputWordsAndOutputs) {
  const auto path = temp_dir() / "typed.json";
  std::ofstream(path) << R"({"format": "torchlean.ir.v1", "input_ids": [0], "output_ids": [2], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": [3], "dtype": "uint16"},
    {"id": 1, "kind": "neg", "parents": [0], "shape": [3]},
    {"id": 2, "kind": "cast", "parents": [1], "shape": [3], "dtype": "bfloat16", "rounding": "nearest-even"}]})";
  CliRun r = run_cli("run " + path.string() + " --input-words '0=uint16:[1,\"0x100\",0]'");
  ASSERT_EQ(r.code, 0) << r.err;
  // neg = [65535, 65280, 0]; bfloat16 (8 significant bits): 65535 -> 65536 (0x4780, inexact),
  // 65280 = 255 * 2^8 exactly (0x477f), 0.
  EXPECT_NE(r.out.find("output 2 [3] bfloat16 = words [0x4780, 0x477f, 0x0] values [65536, 65280, 0]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("flags: inexact"), std::string::npos) << r.out;
  CliRun j = run_cli("run " + path.string() + " --input-words 'uint16:[1,256,0]' --json");
  ASSERT_EQ(j.code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["outputs"][0]["words"], nlohmann::json::array({"0x4780", "0x477f", "0x0"}));
  EXPECT_EQ(doc["outputs"][0]["dtype"], "bfloat16");
  EXPECT_EQ(doc["flags"], nlohmann::json::array({"inexact"}));
  CliRun bad = run_cli("run " + path.string() + " --input-words '0=uint16:[1,\"0x10000\",0]'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("word 1: word 0x10000 has bits above the 16-bit width of uint16"), std::string::npos)
      << bad.err;
  CliRun wrong = run_cli("run " + path.string() + " --input-words '0=int8:[1,2,0]'");
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("node 0 has dtype uint16"), std::string::npos) << wrong.err;
}

std::string six_node_file() {
  const auto path = temp_dir() / "six.json";
  std::ofstream(path) << write_model_json(six_node_model());
  return path.string();
}

// A NaN or an infinity input has no value in e2m1fn (no NaN, no inf): an error naming the input, not
// a silent 0 (issue 47).
TEST(CliRunArith, InputsWithoutAValueInTheFormatAreErrors) {
  const std::string model = six_node_file();
  for (double v : {static_cast<double>(NAN), static_cast<double>(INFINITY), -static_cast<double>(INFINITY)}) {
    const std::string npy = (temp_dir() / "special_input.npy").string();
    ASSERT_TRUE(write_npy_file(npy, Tensor<double>({4}, {0.5, v, 0, 0})).ok());
    CliRun r = run_cli("run " + model + " --input @" + npy + " --arith e2m1fn");
    EXPECT_EQ(r.code, 1) << v << r.out;
    EXPECT_NE(r.err.find("input 0"), std::string::npos) << r.err;
  }
  CliRun ok = run_cli("run " + model + " --input '[0.5,1,0,0]' --arith e2m1fn");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// The same in every command that takes an input into a format (grad, jvp, bench; sample's points
// come from a box, which refuses NaN itself): an error naming the input, tangent or cotangent.
TEST(CliRunArith, EveryCommandRefusesInputsWithoutAValueInTheFormat) {
  const std::string model = six_node_file();
  const std::string npy = (temp_dir() / "nan_input_all.npy").string();
  ASSERT_TRUE(write_npy_file(npy, Tensor<double>({4}, {0.5, static_cast<double>(NAN), 0, 0})).ok());
  const std::string cot = (temp_dir() / "nan_cotangent.npy").string();
  ASSERT_TRUE(write_npy_file(cot, Tensor<double>(Shape{}, {static_cast<double>(NAN)})).ok());
  const std::string good = " --input '[0.5,1,0,0]' --arith e2m1fn";
  struct Case {
    std::string args, names;
  };
  const std::vector<Case> cases = {
      {"grad " + model + " --input @" + npy + " --arith e2m1fn", "input 0"},
      {"jvp " + model + " --input @" + npy + " --tangent '[1,0,0,0]' --arith e2m1fn", "input 0"},
      {"jvp " + model + good + " --tangent @" + npy, "tangent 0"},
      {"grad " + model + good + " --cotangent @" + cot, "cotangent"},
      {"bench " + model + " --input @" + npy + " --arith e2m1fn --repeat 1 --warmup 0", "input 0"},
  };
  for (const Case& c : cases) {
    CliRun r = run_cli(c.args);
    EXPECT_EQ(r.code, 1) << c.args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << c.args << "\n" << r.err;
  }
  for (const std::string& ok : {"grad " + model + good, "jvp " + model + good + " --tangent '[1,0,0,0]'",
                                "bench " + model + good + " --repeat 1 --warmup 0"}) {
    CliRun r = run_cli(ok);
    EXPECT_EQ(r.code, 0) << ok << "\n" << r.err;
  }
}

TEST(CliRunArith, BinaryFormatsRoundingAndFlagsInJson) {
  const std::string model = six_node_file();
  CliRun r = run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith binary32 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["arith"], "binary32");
  EXPECT_EQ(doc["rounding"], "nearest-even");
  EXPECT_NEAR(doc["outputs"][0]["values"][0].get<double>(), 0.027713, 5e-7);
  EXPECT_EQ(doc["flags"], nlohmann::json::array({"inexact"}));
  // bfloat16 upward vs downward: the upward result is not below the downward one.
  CliRun up = run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith bfloat16 --rounding upward --json");
  CliRun down = run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith bfloat16 --rounding downward --json");
  ASSERT_EQ(up.code, 0) << up.err;
  ASSERT_EQ(down.code, 0) << down.err;
  const double yu = nlohmann::json::parse(up.out)["outputs"][0]["values"][0].get<double>();
  const double yd = nlohmann::json::parse(down.out)["outputs"][0]["values"][0].get<double>();
  EXPECT_LT(yd, yu);
  EXPECT_NEAR(yu, 0.027713, 1e-3);
  // Custom formats and the text output's flags line.
  CliRun custom = run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith 'binary(6,9)'");
  ASSERT_EQ(custom.code, 0) << custom.err;
  EXPECT_NE(custom.out.find("flags: inexact"), std::string::npos) << custom.out;
}

TEST(CliRunArith, RealAndUsageErrors) {
  const std::string model = six_node_file();
  CliRun r = run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith real --precision 128 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  // tanh of the exact sum 0.02772 (the f64 run rounds each step; the two agree to ~1e-17).
  EXPECT_NEAR(doc["outputs"][0]["values"][0].get<double>(), std::tanh(0.02772), 1e-16);
  EXPECT_EQ(doc["flags"], nlohmann::json::array());
  EXPECT_EQ(run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith bfloat17").code, 2);
  EXPECT_EQ(run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --rounding sideways --arith bfloat16").code, 2);
  EXPECT_EQ(run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --rounding upward").code, 2);  // f64
  EXPECT_EQ(run_cli("run " + model + " --input '[0.3,-0.2,0.1,0.4]' --arith real --precision 1").code, 2);
}

}  // namespace
}  // namespace denote
