// `denote verify` under hostile input (issue 47): instance CSVs that are directories or devices,
// whitespace lines, header rows, quoted fields, trailing junk in a timeout; writes that fail;
// a campaign journalled line by line to --out; huge timeouts; --root without --instances and
// --rank-grace 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "denote/io/npy.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::slurp;
using testing::temp_dir;
using testing::write_file;

const std::string kTest = std::string(DENOTE_SOURCE_DIR) + "/tests/data/vnncomp2021_test/";

CliRun campaign(const std::string& csv_name, const std::string& csv, const std::string& more = "") {
  const std::string path = write_file(csv_name, csv);
  return run_cli("verify --instances " + path + " --root " + kTest + " --jobs 1 " + more);
}

TEST(CliVerifyRobust, CsvWhitespaceHeaderAndQuotes) {
  CliRun r = campaign("robust_a.csv",
                      "onnx,vnnlib,timeout\n"
                      "   \n"
                      "\"test_nano.onnx\", \"test_nano.vnnlib\" ,60\r\n"
                      "\t\n"
                      "test_unsat.onnx,test_prop.vnnlib,\"30\"\n",
                      "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["instances"], 2);
  EXPECT_EQ(doc["counts"].value("error", 0), 0) << r.err;
}

TEST(CliVerifyRobust, CsvErrorsNameTheLine) {
  CliRun junk = campaign("robust_b.csv", "test_nano.onnx,test_nano.vnnlib,5abc\n");
  EXPECT_EQ(junk.code, 1);
  EXPECT_NE(junk.err.find("robust_b.csv:1: timeout '5abc'"), std::string::npos) << junk.err;
  // A word as the timeout after the first line is no header.
  CliRun late = campaign("robust_c.csv", "test_nano.onnx,test_nano.vnnlib,60\nonnx,vnnlib,timeout\n");
  EXPECT_EQ(late.code, 1);
  EXPECT_NE(late.err.find("robust_c.csv:2:"), std::string::npos) << late.err;
  CliRun fields = campaign("robust_d.csv", "test_nano.onnx,60\n");
  EXPECT_EQ(fields.code, 1);
  EXPECT_NE(fields.err.find("3 fields"), std::string::npos) << fields.err;
}

TEST(CliVerifyRobust, InstancesMustBeARegularFile) {
  for (const std::string& path : {temp_dir().string(), std::string("/dev/null"), std::string("/nonexistent.csv")}) {
    CliRun r = run_cli("verify --instances " + path);
    EXPECT_EQ(r.code, 1) << path;
    EXPECT_NE(r.err.find("--instances " + path), std::string::npos) << r.err;
  }
}

TEST(CliVerifyRobust, FailedWritesAreErrors) {
  CliRun one = run_cli("verify " + kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib --out /dev/full");
  EXPECT_EQ(one.code, 1);
  EXPECT_NE(one.err.find("--out /dev/full"), std::string::npos) << one.err;
  CliRun csv = run_cli("verify --instances " + kTest + "test_instances.csv --out /dev/full --jobs 1");
  EXPECT_EQ(csv.code, 1);
  EXPECT_NE(csv.err.find("--out /dev/full"), std::string::npos) << csv.err;
}

TEST(CliVerifyRobust, CampaignWritesEveryLineAndTheCsvOrderAtTheEnd) {
  const std::string out = (temp_dir() / "robust_out.csv").string();
  CliRun r = run_cli("verify --instances " + kTest + "test_instances.csv --jobs 2 --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = slurp(out);
  // The final file is the CSV's order, the same lines as stdout's first five.
  EXPECT_EQ(r.out.substr(0, text.size()), text);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
}

TEST(CliVerifyRobust, HugeTimeoutsDecide) {
  for (const char* t : {"1e10", "1e30", "inf"}) {
    CliRun r = run_cli("verify " + kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib --timeout " + t);
    ASSERT_EQ(r.code, 0) << t << r.err;
    EXPECT_EQ(r.out, "unsat\n") << t;
  }
  CliRun csv = campaign("robust_e.csv", "test_unsat.onnx,test_prop.vnnlib,1e30\n");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("test_unsat.onnx,test_prop.vnnlib,unsat,"), std::string::npos) << csv.out;
}

// Model, tensor and property files are regular files read with a bound: /dev/zero or a directory is an
// error naming the path at once (once 4.2 GB were read, then a misleading parse error).
TEST(CliVerifyRobust, ModelFilesMustBeRegularFiles) {
  const auto zero = temp_dir() / "zero.onnx", dir = temp_dir() / "dir.onnx";
  std::filesystem::remove(zero);
  std::filesystem::create_symlink("/dev/zero", zero);
  std::filesystem::create_directories(dir);
  for (const std::string& path : {zero.string(), dir.string()}) {
    CliRun check = run_cli("check " + path);
    EXPECT_EQ(check.code, 1) << path;
    EXPECT_NE(check.err.find("'" + path + "' is not a regular file"), std::string::npos) << check.err;
    CliRun verify = run_cli("verify " + path + " " + kTest + "test_prop.vnnlib");
    EXPECT_EQ(verify.code, 1) << path;
    EXPECT_NE(verify.err.find("not a regular file"), std::string::npos) << verify.err;
  }
}

TEST(CliVerifyRobust, BoundsSpecMustHaveRows) {
  const std::string acas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string box = " --box '[[[[0.6,-0.5,-0.5,0.45,-0.5]]]]' '[[[[0.68,0.5,0.5,0.5,-0.45]]]]' --method crown";
  CliRun empty = run_cli("bounds " + acas + box + " --spec ''");
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("--spec '': expected a matrix"), std::string::npos) << empty.err;
  const std::string npy = (temp_dir() / "zero_rows.npy").string();
  ASSERT_TRUE(write_npy_file(npy, Tensor<double>({0, 5}, {})).ok());
  CliRun zero = run_cli("bounds " + acas + box + " --spec @" + npy);
  EXPECT_EQ(zero.code, 1);
  EXPECT_NE(zero.err.find("--spec: the matrix has 0 rows"), std::string::npos) << zero.err;
}

// MPFR inputs and parameters count against --max-memory before they are made (run, grad, jvp, bench).
TEST(CliVerifyRobust, RealPrecisionWithinTheBudget) {
  const std::string acas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string in = " --input '[[[[0.6,-0.5,-0.5,0.45,-0.5]]]]' --arith real --precision 1000000 --max-memory 200M";
  for (const std::string& cmd : {"run " + acas + in, "grad " + acas + in, "bench " + acas + in + " --repeat 1",
                                 "jvp " + acas + in + " --tangent '[[[[1,0,0,0,0]]]]'"}) {
    CliRun r = run_cli(cmd);
    EXPECT_EQ(r.code, 1) << cmd << r.err;
    EXPECT_NE(r.err.find("--arith real --precision 1000000: the"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("above the --max-memory budget of 209715200 bytes"), std::string::npos) << r.err;
  }
  CliRun ok = run_cli("run " + acas + " --input '[[[[0.6,-0.5,-0.5,0.45,-0.5]]]]' --arith real --precision 300");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliVerifyRobust, UsageErrors) {
  const std::string inst = kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib";
  CliRun root = run_cli("verify " + inst + " --root /tmp");
  EXPECT_EQ(root.code, 2);
  EXPECT_NE(root.err.find("--root applies to --instances only"), std::string::npos) << root.err;
  CliRun grace = run_cli("verify " + inst + " --rank-grace 0");
  EXPECT_EQ(grace.code, 2);
  EXPECT_NE(grace.err.find("--rank-grace 0: expected a number of seconds > 0"), std::string::npos) << grace.err;
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// --max-memory bounds the branch and bound's open subdomains too (each keeps a set of node boxes): a search
// that would grow past it stops `unknown` with a note saying so, where the default budget decides it
// (ACAS Xu 2_2 property 3: a few hundred subdomains, verify_test.cc).
TEST(CliVerifyRobust, TheSearchStopsAtTheMemoryBudget) {
  const std::string acas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/";
  const std::string cmd = "verify " + acas + "ACASXU_run2a_2_2_batch_2000.onnx " + acas + "prop_3.vnnlib --timeout 120 --json";
  const CliRun starved = run_cli(cmd + " --max-memory 128K");  // 12 sets of 11.7 KB
  ASSERT_EQ(starved.code, 0) << starved.err;
  const auto doc = nlohmann::json::parse(starved.out);
  EXPECT_EQ(doc["result"], "unknown") << starved.out;
  EXPECT_NE(doc["note"].get<std::string>().find("open subdomains' node boxes"), std::string::npos) << starved.out;
  const CliRun full = run_cli(cmd);
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_EQ(nlohmann::json::parse(full.out)["result"], "unsat") << full.out;
}

}  // namespace
}  // namespace denote
