// Issue 13, the CLI part: no crash on hostile options (overflowing numbers, huge node ids), every
// message names its option / corner / element / node, usage errors exit 2 in every command,
// --max-memory, bounds printing only the outputs by default, sample over a box wider than the
// largest double, `denote demo --save` creating its directory.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/program/examples.h"

namespace denote {
namespace {

struct Ran {
  int code = -1;
  std::string out, err;
};

std::filesystem::path dir() {
  auto d = std::filesystem::temp_directory_path() / ("denote_cli_hardening_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Ran cli(const std::string& args) {
  const auto out = dir() / "stdout", err = dir() / "stderr";
  const std::string cmd =
      std::string(DENOTE_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

std::string file(const std::string& name, const std::string& text) {
  const auto p = dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string six() { return file("six.json", write_model_json(six_node_model())); }

// The exit code and stderr of a run that must fail cleanly (no abort, one "error: " line).
void expect_error(const Ran& r, int code, const std::string& needle) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "want: " << needle << "\ngot: " << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

TEST(CliHardening, OverflowingNumbersNameOptionCornerAndElement) {
  const std::string m = six();
  expect_error(cli("run " + m + " --input '[1e400,0,0,0]'"), 1, "--input for input node 0: element 0: 1e400 overflows");
  expect_error(cli("bounds " + m + " --box '[0,0,1e400,0]' '[1,1,1,1]'"), 1,
               "--box LO for input node 0: element 2: 1e400 overflows");
  expect_error(cli("sample " + m + " --box '[0,0,0,0]' '[1,-1e999,1,1]'"), 1,
               "--box HI for input node 0: element 1: -1e999 overflows");
  expect_error(cli("bounds " + m + " --center '[0,0,0,1e400]' --eps 0.1"), 1,
               "--center for input node 0: element 3: 1e400 overflows");
  expect_error(cli("run " + m + " --input '[1,2,'"), 1, "--input for input node 0: malformed JSON at byte");
}

TEST(CliHardening, BoxErrorsNameTheCornerAndElement) {
  const std::string m = six();
  expect_error(cli("bounds " + m + " --box '[0,0,0,0]' '[1,-1,1,1]'"), 1,
               "--box for input node 0: element 1 has LO 0 > HI -1");
  expect_error(cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1]'"), 1,
               "--box HI for input node 0: expected shape [4] (4 elements), got shape [3] (3 elements)");
  expect_error(cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1,\"a\"]'"), 1,
               "--box HI for input node 0: element 3: expected a number, got string");
  expect_error(cli("run " + m + " --input '[0.3,-0.2,0.1]'"), 1,
               "--input for input node 0: expected shape [4] (4 elements), got shape [3] (3 elements)");
}

TEST(CliHardening, HugeOrJunkNodeIdsAreErrors) {
  const std::string m = six();
  expect_error(cli("run " + m + " --input-words '9223372036854775808=int8:[1,2]'"), 1,
               "--input-words 9223372036854775808=int8:[1,2]: node id 9223372036854775808 is too large");
  expect_error(cli("run " + m + " --input '0junk=[0.3,-0.2,0.1,0.4]'"), 1,
               "expected ID=TENSOR with a decimal node id, got '0junk'");
  expect_error(cli("run " + m + " --input '99999999999999999999=[0.3,-0.2,0.1,0.4]'"), 1, "decimal node id");
  expect_error(cli("run " + m + " --input '-1=[0.3,-0.2,0.1,0.4]'"), 1, "decimal node id");
  EXPECT_EQ(cli("run " + m + " --input '0=[0.3,-0.2,0.1,0.4]'").code, 0);
}

TEST(CliHardening, EpsIsCheckedAndNamed) {
  const std::string m = six(), c = " --center '[0.3,-0.2,0.1,0.4]'";
  expect_error(cli("bounds " + m + c + " --eps nan"), 2, "--eps nan: eps is NaN; expected a finite number >= 0");
  expect_error(cli("bounds " + m + c + " --eps ''"), 2, "--eps '': empty");
  expect_error(cli("bounds " + m + c + " --eps abc"), 2, "--eps 'abc': not a number");
  expect_error(cli("bounds " + m + c + " --eps -0.5"), 2, "--eps -0.5: eps is negative");
  expect_error(cli("bounds " + m + c + " --eps inf"), 2, "--eps inf: eps is infinite");
  expect_error(cli("sample " + m + c + " --eps 1e400"), 2, "--eps 1e400: overflows a double");
  expect_error(cli("bounds " + m + c), 2, "--center needs --eps E");
  expect_error(cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1,1]' --eps 0.1"), 2, "--eps goes with --center");
  EXPECT_EQ(cli("bounds " + m + c + " --eps 0").code, 0);
}

TEST(CliHardening, UsageErrorsExitTwoInEveryCommand) {
  const std::string m = six(), box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  expect_error(cli("run " + m + " --input '[0,0,0,0]' --arith foo"), 2, "--arith foo");
  expect_error(cli("bounds " + m + box + " --arith foo"), 2, "--arith foo: expected f64, f32 or a binary format");
  expect_error(cli("sample " + m + box + " --arith foo"), 2, "--arith foo");
  expect_error(cli("bounds " + m), 2, "give either --center T --eps E or --box LO HI");
  expect_error(cli("run " + m + " --input '[0,0,0,0]' --provider bad"), 2, "--provider: provider policy `bad`");
  expect_error(cli("plan " + m + " --provider bad"), 2, "provider policy `bad`");
  expect_error(cli("run " + m + " --input '[0,0,0,0]' --provider ''"), 2, "--provider '': expected auto");
  expect_error(cli("plan " + m + " --device tpu"), 2, "--device tpu: unknown device (known: cpu, cuda)");
  expect_error(cli("sample " + m + box + " --samples 0"), 2, "--samples 0: expected 1 to 10000000");
  expect_error(cli("sample " + m + box + " --samples 10000001"), 2, "--samples 10000001: expected 1 to 10000000");
}

TEST(CliHardening, UnknownCommandSuggestsTheNearest) {
  expect_error(cli("dem"), 2, "unknown command 'dem' (did you mean 'demo'?); commands: demo, check");
  expect_error(cli("bonuds x.json"), 2, "unknown command 'bonuds' (did you mean 'bounds'?)");
  expect_error(cli("bogus"), 2, "unknown command 'bogus'");
  EXPECT_EQ(cli("--help").code, 0);
}

TEST(CliHardening, HelpTextsSayOnnxIsAccepted) {
  for (const char* command : {"run", "bounds", "sample", "plan", "print"}) {
    Ran r = cli(std::string(command) + " --help");
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_NE(r.out.find(".onnx"), std::string::npos) << command << "\n" << r.out;
  }
}

TEST(CliHardening, MaxMemoryTakesASize) {
  const std::string m = six(), in = " --input '[0.3,-0.2,0.1,0.4]'", box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  for (const char* size : {"512M", "4G", "1024K", "1000000", "2g", "64KiB", "1T"})
    EXPECT_EQ(cli("run " + m + in + " --max-memory " + std::string(size)).code, 0) << size;
  for (const char* size : {"4X", "''", "0", "-1", "M", "1.5G", "99999999999T", "12 G"})
    expect_error(cli("run " + m + in + " --max-memory '" + std::string(size) + "'"), 2, "--max-memory");
  expect_error(cli("bounds " + m + box + " --max-memory 4X"), 2, "--max-memory '4X': unknown suffix 'X'");
  expect_error(cli("sample " + m + box + " --max-memory 0"), 2, "--max-memory '0': must be at least 1 byte");
  EXPECT_EQ(cli("bounds " + m + box + " --max-memory 1G").code, 0);
  EXPECT_EQ(cli("sample " + m + box + " --max-memory 1G --samples 10").code, 0);
  // A budget too small for the model: an error naming the node and the budget, in run and in sample
  // (where it is not a counterexample).
  expect_error(cli("run " + m + in + " --max-memory 16"), 1, "IR eval: node 0: ");
  Ran s = cli("sample " + m + box + " --max-memory 16");
  expect_error(s, 1, "--max-memory");
  EXPECT_EQ(s.out.find("FAILED"), std::string::npos) << s.out;
}

TEST(CliHardening, RunBoundsSampleNameTheNodeOfAShapeError) {
  const std::string m = file("reshape.json", R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1],
  "nodes": [{"id": 0, "kind": "input", "parents": [], "shape": [3, 6]},
  {"id": 1, "kind": "reshape", "parents": [0], "shape": [3, 5], "in_shape": [3, 6], "out_shape": [3, 5]}]})");
  std::string zeros = "'[0";
  for (int i = 1; i < 18; ++i) zeros += ",0";
  zeros += "]'";
  expect_error(cli("run " + m + " --input " + zeros), 1, "IR graph: node 1: reshape numel mismatch: 18 vs 15");
  expect_error(cli("bounds " + m + " --box " + zeros + " " + zeros), 1, "IR graph: node 1: reshape numel mismatch");
  expect_error(cli("sample " + m + " --center " + zeros + " --eps 0"), 1, "IR graph: node 1: reshape numel mismatch");
}

TEST(CliHardening, BoundsPrintsOutputsUnlessAllNodes) {
  const std::string m = six(), box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  Ran outputs = cli("bounds " + m + box);
  ASSERT_EQ(outputs.code, 0) << outputs.err;
  EXPECT_NE(outputs.out.find("node 5: "), std::string::npos) << outputs.out;
  EXPECT_EQ(outputs.out.find("node 1: "), std::string::npos) << outputs.out;
  Ran all = cli("bounds " + m + box + " --all-nodes");
  ASSERT_EQ(all.code, 0) << all.err;
  for (int id = 0; id < 6; ++id) EXPECT_NE(all.out.find("node " + std::to_string(id) + ": "), std::string::npos) << id;
  auto doc = nlohmann::json::parse(cli("bounds " + m + box + " --json").out);
  EXPECT_EQ(doc["nodes"], "outputs");
  ASSERT_EQ(doc["boxes"].size(), 1u);
  EXPECT_EQ(doc["boxes"][0]["id"], 5);
}

TEST(CliHardening, SampleOverABoxWiderThanTheLargestDouble) {
  // lo + t*(hi - lo) overflowed to inf - inf = NaN: a false counterexample at x = NaN.
  const std::string m = six();
  Ran r = cli("sample " + m + " --box '[-1.7e308,-1e308,0,0]' '[1.7e308,1e308,0,0]' --samples 200 --json");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["contained"], 200);
  EXPECT_TRUE(doc["counterexample"].is_null());
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
}

TEST(CliHardening, DemoSaveCreatesTheDirectory) {
  const auto target = dir() / "a" / "b" / "c";
  std::filesystem::remove_all(dir() / "a");
  Ran r = cli("demo --save " + target.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(target / "six_node.json"));
  EXPECT_TRUE(std::filesystem::exists(target / "x0.npy"));
  const std::string blocker = file("not_a_dir", "x");
  expect_error(cli("demo --save " + blocker + "/sub"), 1, "--save " + blocker + "/sub: cannot create the directory");
}

}  // namespace
}  // namespace denote
