// Issue 13, the CLI part: no crash on hostile options (overflowing numbers, huge node ids), every
// message names its option / corner / element / node, usage errors exit 2 in every command,
// --max-memory, bounds printing only the outputs by default, sample over a box wider than the
// largest double, `denote demo --save` creating its directory.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/program/examples.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;
using testing::write_file;

std::string six() { return write_file("six.json", write_model_json(six_node_model())); }

// The exit code and stderr of a run that must fail cleanly (no abort, one "error: " line).
void expect_error(const CliRun& r, int code, const std::string& needle) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "want: " << needle << "\ngot: " << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

TEST(CliHardening, OverflowingNumbersNameOptionCornerAndElement) {
  const std::string m = six();
  expect_error(run_cli("run " + m + " --input '[1e400,0,0,0]'"), 1,
               "--input for input node 0: element 0: 1e400 overflows");
  expect_error(run_cli("bounds " + m + " --box '[0,0,1e400,0]' '[1,1,1,1]'"), 1,
               "--box LO for input node 0: element 2: 1e400 overflows");
  expect_error(run_cli("sample " + m + " --box '[0,0,0,0]' '[1,-1e999,1,1]'"), 1,
               "--box HI for input node 0: element 1: -1e999 overflows");
  expect_error(run_cli("bounds " + m + " --center '[0,0,0,1e400]' --eps 0.1"), 1,
               "--center for input node 0: element 3: 1e400 overflows");
  expect_error(run_cli("run " + m + " --input '[1,2,'"), 1, "--input for input node 0: malformed JSON at byte");
}

TEST(CliHardening, BoxErrorsNameTheCornerAndElement) {
  const std::string m = six();
  expect_error(run_cli("bounds " + m + " --box '[0,0,0,0]' '[1,-1,1,1]'"), 1,
               "--box for input node 0: element 1 has LO 0 > HI -1");
  expect_error(run_cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1]'"), 1,
               "--box HI for input node 0: expected shape [4] (4 elements), got shape [3] (3 elements)");
  expect_error(run_cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1,\"a\"]'"), 1,
               "--box HI for input node 0: element 3: expected a number, got string");
  expect_error(run_cli("run " + m + " --input '[0.3,-0.2,0.1]'"), 1,
               "--input for input node 0: expected shape [4] (4 elements), got shape [3] (3 elements)");
}

TEST(CliHardening, HugeOrJunkNodeIdsAreErrors) {
  const std::string m = six();
  expect_error(run_cli("run " + m + " --input-words '9223372036854775808=int8:[1,2]'"), 1,
               "--input-words 9223372036854775808=int8:[1,2]: node id 9223372036854775808 is too large");
  expect_error(run_cli("run " + m + " --input '0junk=[0.3,-0.2,0.1,0.4]'"), 1,
               "expected ID=TENSOR with a decimal node id, got '0junk'");
  expect_error(run_cli("run " + m + " --input '99999999999999999999=[0.3,-0.2,0.1,0.4]'"), 1, "decimal node id");
  expect_error(run_cli("run " + m + " --input '-1=[0.3,-0.2,0.1,0.4]'"), 1, "decimal node id");
  EXPECT_EQ(run_cli("run " + m + " --input '0=[0.3,-0.2,0.1,0.4]'").code, 0);
}

TEST(CliHardening, EpsIsCheckedAndNamed) {
  const std::string m = six(), c = " --center '[0.3,-0.2,0.1,0.4]'";
  expect_error(run_cli("bounds " + m + c + " --eps nan"), 2, "--eps nan: eps is NaN; expected a finite number >= 0");
  expect_error(run_cli("bounds " + m + c + " --eps ''"), 2, "--eps '': empty");
  expect_error(run_cli("bounds " + m + c + " --eps abc"), 2, "--eps 'abc': not a number");
  expect_error(run_cli("bounds " + m + c + " --eps -0.5"), 2, "--eps -0.5: eps is negative");
  expect_error(run_cli("bounds " + m + c + " --eps inf"), 2, "--eps inf: eps is infinite");
  expect_error(run_cli("sample " + m + c + " --eps 1e400"), 2, "--eps 1e400: overflows a double");
  expect_error(run_cli("bounds " + m + c), 2, "--center needs --eps E");
  expect_error(run_cli("bounds " + m + " --box '[0,0,0,0]' '[1,1,1,1]' --eps 0.1"), 2, "--eps goes with --center");
  EXPECT_EQ(run_cli("bounds " + m + c + " --eps 0").code, 0);
}

TEST(CliHardening, UsageErrorsExitTwoInEveryCommand) {
  const std::string m = six(), box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  expect_error(run_cli("run " + m + " --input '[0,0,0,0]' --arith foo"), 2, "--arith foo");
  expect_error(run_cli("bounds " + m + box + " --arith foo"), 2, "--arith foo: expected f64, f32, auto or a binary format");
  expect_error(run_cli("sample " + m + box + " --arith foo"), 2, "--arith foo");
  expect_error(run_cli("bounds " + m), 2, "give either --center T --eps E or --box LO HI");
  expect_error(run_cli("run " + m + " --input '[0,0,0,0]' --provider bad"), 2, "--provider: provider policy `bad`");
  expect_error(run_cli("plan " + m + " --provider bad"), 2, "provider policy `bad`");
  expect_error(run_cli("run " + m + " --input '[0,0,0,0]' --provider ''"), 2, "--provider '': expected auto");
  expect_error(run_cli("plan " + m + " --device tpu"), 2, "--device tpu: unknown device (known: cpu, cuda)");
  expect_error(run_cli("sample " + m + box + " --samples 0"), 2, "--samples 0: expected 1 to 10000000");
  expect_error(run_cli("sample " + m + box + " --samples 10000001"), 2, "--samples 10000001: expected 1 to 10000000");
}

TEST(CliHardening, UnknownCommandSuggestsTheNearest) {
  expect_error(run_cli("dem"), 2, "unknown command 'dem' (did you mean 'demo'?); commands: demo, check");
  expect_error(run_cli("bonuds x.json"), 2, "unknown command 'bonuds' (did you mean 'bounds'?)");
  expect_error(run_cli("bogus"), 2, "unknown command 'bogus'");
  EXPECT_EQ(run_cli("--help").code, 0);
}

TEST(CliHardening, HelpTextsSayOnnxIsAccepted) {
  for (const char* command : {"run", "bounds", "sample", "plan", "print"}) {
    CliRun r = run_cli(std::string(command) + " --help");
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_NE(r.out.find(".onnx"), std::string::npos) << command << "\n" << r.out;
  }
}

TEST(CliHardening, MaxMemoryTakesASize) {
  const std::string m = six(), in = " --input '[0.3,-0.2,0.1,0.4]'", box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  for (const char* size : {"512M", "4G", "1024K", "1000000", "2g", "64KiB", "1T"})
    EXPECT_EQ(run_cli("run " + m + in + " --max-memory " + std::string(size)).code, 0) << size;
  for (const char* size : {"4X", "''", "0", "-1", "M", "1.5G", "99999999999T", "12 G"})
    expect_error(run_cli("run " + m + in + " --max-memory '" + std::string(size) + "'"), 2, "--max-memory");
  expect_error(run_cli("bounds " + m + box + " --max-memory 4X"), 2, "--max-memory '4X': unknown suffix 'X'");
  expect_error(run_cli("sample " + m + box + " --max-memory 0"), 2, "--max-memory '0': must be at least 1 byte");
  EXPECT_EQ(run_cli("bounds " + m + box + " --max-memory 1G").code, 0);
  EXPECT_EQ(run_cli("sample " + m + box + " --max-memory 1G --samples 10").code, 0);
  // A budget too small for the model: an error naming the node and the budget, in run and in sample
  // (where it is not a counterexample).
  expect_error(run_cli("run " + m + in + " --max-memory 16"), 1, "IR eval: node 0: ");
  CliRun s = run_cli("sample " + m + box + " --max-memory 16");
  expect_error(s, 1, "--max-memory");
  EXPECT_EQ(s.out.find("FAILED"), std::string::npos) << s.out;
}

TEST(CliHardening, RunBoundsSampleNameTheNodeOfAShapeError) {
  const std::string m = write_file("reshape.json", R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1],
  "nodes": [{"id": 0, "kind": "input", "parents": [], "shape": [3, 6]},
  {"id": 1, "kind": "reshape", "parents": [0], "shape": [3, 5], "in_shape": [3, 6], "out_shape": [3, 5]}]})");
  std::string zeros = "'[0";
  for (int i = 1; i < 18; ++i) zeros += ",0";
  zeros += "]'";
  expect_error(run_cli("run " + m + " --input " + zeros), 1, "IR graph: node 1: reshape numel mismatch: 18 vs 15");
  expect_error(run_cli("bounds " + m + " --box " + zeros + " " + zeros), 1, "IR graph: node 1: reshape numel mismatch");
  expect_error(run_cli("sample " + m + " --center " + zeros + " --eps 0"), 1,
               "IR graph: node 1: reshape numel mismatch");
}

TEST(CliHardening, BoundsPrintsOutputsUnlessAllNodes) {
  const std::string m = six(), box = " --box '[0,0,0,0]' '[1,1,1,1]'";
  CliRun outputs = run_cli("bounds " + m + box);
  ASSERT_EQ(outputs.code, 0) << outputs.err;
  EXPECT_NE(outputs.out.find("node 5: "), std::string::npos) << outputs.out;
  EXPECT_EQ(outputs.out.find("node 1: "), std::string::npos) << outputs.out;
  CliRun all = run_cli("bounds " + m + box + " --all-nodes");
  ASSERT_EQ(all.code, 0) << all.err;
  for (int id = 0; id < 6; ++id) EXPECT_NE(all.out.find("node " + std::to_string(id) + ": "), std::string::npos) << id;
  auto doc = nlohmann::json::parse(run_cli("bounds " + m + box + " --json").out);
  EXPECT_EQ(doc["nodes"], "outputs");
  ASSERT_EQ(doc["boxes"].size(), 1u);
  EXPECT_EQ(doc["boxes"][0]["id"], 5);
}

TEST(CliHardening, SampleOverABoxWiderThanTheLargestDouble) {
  // lo + t*(hi - lo) overflowed to inf - inf = NaN: a false counterexample at x = NaN.
  const std::string m = six();
  CliRun r = run_cli("sample " + m + " --box '[-1.7e308,-1e308,0,0]' '[1.7e308,1e308,0,0]' --samples 200 --json");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["contained"], 200);
  EXPECT_TRUE(doc["counterexample"].is_null());
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
}

TEST(CliHardening, DemoSaveCreatesTheDirectory) {
  const auto target = temp_dir() / "a" / "b" / "c";
  std::filesystem::remove_all(temp_dir() / "a");
  CliRun r = run_cli("demo --save " + target.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(target / "six_node.json"));
  EXPECT_TRUE(std::filesystem::exists(target / "x0.npy"));
  const std::string blocker = write_file("not_a_dir", "x");
  expect_error(run_cli("demo --save " + blocker + "/sub"), 1,
               "--save " + blocker + "/sub: cannot create the directory");
}

}  // namespace
}  // namespace denote
