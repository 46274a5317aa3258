// `denote run` over typed models (docs/TYPED.md): inputs given as element words with a dtype
// (--input-words ID=DTYPE:[w0,w1,...]), outputs printed as words plus decoded values and flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace denote::cli {

struct TypedRunRequest {
  std::string path;
  std::vector<std::string> input_words;  // "ID=DTYPE:[w0,...]" or "DTYPE:[...]" in input order
  std::string rounding = "nearest-even";
  bool trace = false;
  bool json = false;
  int64_t max_bytes = int64_t{1} << 30;  // --max-memory
};

// Whether `denote run` should take the typed path: --input-words given, or the model file has
// input/const nodes with a dtype.
bool wants_typed_run(const std::string& path, const std::vector<std::string>& input_words);
// Runs the typed interpreter and prints; returns the exit code.
int run_typed(const TypedRunRequest& r);

}  // namespace denote::cli
