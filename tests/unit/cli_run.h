// Shared helpers for the tests that run the built `denote` command line (cli_path(): the `denote` next
// to the test binary): run it through std::system with stdout and stderr redirected to files
// in a per-process temp directory, read files back, and write input files into that directory.
//
//   const std::string model = write_file("six.json", write_model_json(six_node_model()));
//   CliRun r = run_cli("check " + model);
//   EXPECT_EQ(r.code, 0) << r.err;
//   CliRun s = run_cli("scalar", "add bfloat16 nearest-even 0x3f80 0x3f80\n");  // with stdin text
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace denote::testing {

// The outcome of one run: the exit status (-1 if the process did not exit normally), stdout, stderr.
struct CliRun {
  int code = -1;
  std::string out, err;
};

// A temp directory unique to this process (created on first use, shared by every test in it).
inline std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("denote_tests_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole content of a file, byte for byte ("" if it cannot be opened).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes text to temp_dir() / name and returns the path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const auto path = temp_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// The built CLI: `denote` in the directory of this test binary (both go to the build's bin/,
// CMAKE_RUNTIME_OUTPUT_DIRECTORY). Found at run time rather than compiled in, so that the test objects
// are the same in the release and the sanitizer build (tests/CMakeLists.txt).
inline std::string cli_path() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "denote").string();
}

// Runs `cli_path() args` through the shell (so args may hold quoted words). stdin is
// /dev/null when stdin_text is empty, else a file holding stdin_text.
inline CliRun run_cli(const std::string& args, const std::string& stdin_text = "") {
  const auto dir = temp_dir();
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  std::string in = "/dev/null";
  if (!stdin_text.empty()) in = write_file("stdin", stdin_text);
  const std::string cmd = cli_path() + " " + args + " >" + out + " 2>" + err + " <" + in;
  CliRun r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace denote::testing
