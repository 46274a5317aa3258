// ONNX node-test conformance runner: every test of the ONNX backend node suite (libonnx-testdata,
// /usr/share/libonnx-testdata/data/node) is imported with denote's ONNX importer, evaluated in f64
// and compared with the suite's expected outputs (|got - want| <= atol + rtol * |want|, rtol 1e-3,
// atol 1e-7 as in onnx's backend test runner; NaN matches NaN). Tests are classified as
//   passed / failed / unsupported op (an op the importer does not map) / unsupported dtype (a graph
//   input or output without a dtype: STRING, sequence, optional; or an op the typed import does not
//   map for the test's integer type) / unsupported attribute (a supported op with an attribute
//   value the importer rejects, e.g. MaxPool dilations) / known divergence
//   (test_cast_FLOAT_to_BFLOAT16, whose ONNX 1.12 expected output truncates; checked to be exactly
//   that) / inconsistent test data (an input file whose shape differs from the model's declared
//   input shape).
// Tests whose graph inputs and outputs are FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (integer and bool
// inputs bound as constants) take the f64 path; FLOAT16 / BFLOAT16 ones run in the binary-format
// context over binary64. Tests with an integer or bool output, or an integer input of another kind
// (UINT16..UINT64, ...), take the typed path: read_typed_model_onnx + typed::eval_typed, integer
// and bool outputs compared word for word, float outputs with the tolerance above.
// Exit status: 0 when nothing failed, 1 otherwise, 77 (CTest skip) when the data is missing.
//
//   onnx_conformance [DIR] [--verbose]
#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/typed/cast.h"
#include "denote/typed/interp.h"

namespace fs = std::filesystem;
using namespace denote;

namespace {

int32_t elem_type(const onnx::TypeProto& t) { return t.has_tensor_type() ? t.tensor_type().elem_type() : -1; }

constexpr double kRtol = 1e-3, kAtol = 1e-7;

enum class Outcome { Passed, Failed, UnsupportedOp, UnsupportedDtype, UnsupportedAttr, KnownDivergence, BadTestData };

struct Verdict {
  Outcome outcome;
  std::string detail;
};

std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool reduced_float(int32_t et) { return et == onnx::TensorProto::FLOAT16 || et == onnx::TensorProto::BFLOAT16; }

bool real_type(int32_t et) {
  return et == onnx::TensorProto::FLOAT || et == onnx::TensorProto::DOUBLE || reduced_float(et);
}

// Tests with FLOAT16 / BFLOAT16 tensors run in the binary-format context over binary64 (the same
// values as f64 for these graphs, and it can round a cast to binary16 / bfloat16 exactly once).
bool uses_reduced_float(const onnx::ModelProto& m) {
  for (const auto& v : m.graph().input())
    if (reduced_float(elem_type(v.type()))) return true;
  for (const auto& v : m.graph().output())
    if (reduced_float(elem_type(v.type()))) return true;
  return false;
}

// The ONNX 1.12 reference Cast FLOAT -> BFLOAT16 truncates (drops the low 16 bits); denote's cast
// rounds to nearest-even (IEEE, and the ONNX reference since 1.14). This test is checked to
// differ only in that way and counted as a known divergence.
const char* const kBfloat16TruncationTest = "test_cast_FLOAT_to_BFLOAT16";
const char* const kBfloat16TruncationLikeTest = "test_castlike_FLOAT_to_BFLOAT16";

// Integer and bool inputs (shapes, axes, flags) are bound as constants; they have no real value.
bool bindable_type(int32_t et) {
  using T = onnx::TensorProto;
  return et == T::INT64 || et == T::INT32 || et == T::BOOL || et == T::INT8 || et == T::INT16 || et == T::UINT8;
}

// Unsupported ops of a model (domain-qualified outside the default domain).
std::set<std::string> unsupported_ops(const onnx::ModelProto& m, const std::set<std::string>& supported) {
  std::set<std::string> out;
  for (const auto& n : m.graph().node()) {
    const bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (std_domain && supported.count(n.op_type())) continue;
    out.insert(std_domain ? n.op_type() : n.domain() + "::" + n.op_type());
  }
  return out;
}

// The graph inputs that are not initializers, in order.
std::vector<const onnx::ValueInfoProto*> real_inputs(const onnx::ModelProto& m) {
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& v : m.graph().input())
    if (!inits.count(v.name())) out.push_back(&v);
  return out;
}

// The first dtype problem among graph inputs and outputs, or empty.
std::string dtype_problem(const onnx::ModelProto& m) {
  for (const auto* v : real_inputs(m))
    if (!real_type(elem_type(v->type())) && !bindable_type(elem_type(v->type()))) return "input " + v->name();
  for (const auto& v : m.graph().output())
    if (!real_type(elem_type(v.type()))) return "output " + v.name();
  return "";
}

bool close(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= kAtol + kRtol * std::fabs(want);
}

// The suite stores BFLOAT16 tensors as UINT16 words: reinterpret them as bfloat16 values.
void bfloat16_from_words(Tensor<double>& t) {
  for (double& v : t.data) v = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(v) << 16));
}

// Loads input_K.pb / output_K.pb of one data set, in K order; `declared` are the model's element
// types of those tensors (for the BFLOAT16 words), when known.
Result<std::vector<Tensor<double>>> load_set(const fs::path& dir, const std::string& prefix,
                                             const std::vector<int32_t>& declared = {}) {
  std::vector<Tensor<double>> out;
  for (int k = 0;; ++k) {
    const fs::path p = dir / fmt::format("{}_{}.pb", prefix, k);
    if (!fs::exists(p)) break;
    DENOTE_ASSIGN_OR_RETURN(OnnxTensor t, read_onnx_tensor(read_bytes(p)));
    const size_t i = static_cast<size_t>(k);
    if (i < declared.size() && declared[i] == onnx::TensorProto::BFLOAT16 && t.data_type == onnx::TensorProto::UINT16)
      bfloat16_from_words(t.tensor);
    out.push_back(std::move(t.tensor));
  }
  return out;
}

// Static declared shape of a graph input or output (empty optional when a dim is not static).
std::optional<Shape> declared_shape(const onnx::ValueInfoProto& v) {
  if (!v.type().tensor_type().has_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    s.push_back(d.dim_value());
  }
  return s;
}

Verdict compare(const Model& m, const ValueTable<double>& table, const std::vector<Tensor<double>>& wants) {
  if (wants.size() != m.output_ids.size()) return {Outcome::Failed, "output count differs"};
  for (size_t k = 0; k < wants.size(); ++k) {
    const Tensor<double>& got = table[static_cast<size_t>(m.output_ids[k])];
    const Tensor<double>& want = wants[k];
    if (got.shape != want.shape)
      return {Outcome::Failed, fmt::format("output {}: shape {} vs expected {}", k, to_string(got.shape),
                                           to_string(want.shape))};
    for (size_t i = 0; i < want.data.size(); ++i)
      if (!close(got.data[i], want.data[i]))
        return {Outcome::Failed, fmt::format("output {} element {}: {} vs expected {}", k, i, got.data[i], want.data[i])};
  }
  return {Outcome::Passed, ""};
}

Result<ValueTable<double>> eval_f64(const Model& m, const std::vector<Tensor<double>>& in) {
  F64Context ctx;
  return denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), ctx);
}

Result<ValueTable<double>> eval_binary64(const Model& m, const std::vector<Tensor<double>>& in) {
  BinaryContext ctx(binary64_format(), Rounding::NearestEven);
  auto word = [&](double v) { return ctx.from_double(v); };
  std::vector<Tensor<FpWord>> words;
  for (const auto& t : in) {
    Tensor<FpWord> w;
    w.shape = t.shape;
    for (double v : t.data) w.data.push_back(word(v));
    words.push_back(std::move(w));
  }
  const Payload<FpWord> payload = convert_payload<FpWord>(m.payload, word);
  DENOTE_ASSIGN_OR_RETURN(auto table, denote_all(m.graph, payload, std::span<const Tensor<FpWord>>(words), ctx));
  ValueTable<double> out;
  for (const auto& t : table) {
    Tensor<double> d;
    d.shape = t.shape;
    for (const FpWord& w : t.data) d.data.push_back(ctx.to_double(w));
    out.push_back(std::move(d));
  }
  return out;
}

// The bfloat16 truncation test: the expected output must be the input with its low 16 bits
// dropped, and denote's nearest-even cast must differ from it somewhere (else the note is stale).
Verdict check_bfloat16_truncation(const fs::path& dir, const Verdict& v) {
  auto in = load_set(dir / "test_data_set_0", "input");
  auto want = load_set(dir / "test_data_set_0", "output", {onnx::TensorProto::BFLOAT16});
  if (!in.ok() || !want.ok() || in->empty() || want->size() != 1) return {Outcome::Failed, "bfloat16 test data"};
  for (size_t i = 0; i < (*in)[0].data.size(); ++i) {
    const float x = static_cast<float>((*in)[0].data[i]);
    const uint32_t bits = std::bit_cast<uint32_t>(x) & 0xffff0000u;
    const double truncated = std::isnan(x) ? x : static_cast<double>(std::bit_cast<float>(bits));
    const double w = (*want)[0].data[i];
    if (!(w == truncated || (std::isnan(w) && std::isnan(truncated))))
      return {Outcome::Failed, fmt::format("bfloat16 element {} is not the truncation of the input", i)};
  }
  if (v.outcome == Outcome::Passed) return {Outcome::Failed, "bfloat16 cast now matches truncation: update the note"};
  return {Outcome::KnownDivergence, "expected outputs truncate; denote rounds to nearest-even (" + v.detail + ")"};
}

// Imports with the inputs in `bound` (indices into real_inputs) read as constants, evaluates
// with the others and compares.
Verdict run_data_set(const std::string& bytes, const onnx::ModelProto& proto, const fs::path& dir,
                     const std::vector<bool>& bound) {
  const auto names = real_inputs(proto);
  std::vector<int32_t> in_types, out_types;
  for (const auto* v : names) in_types.push_back(elem_type(v->type()));
  for (const auto& v : proto.graph().output()) out_types.push_back(elem_type(v.type()));
  auto inputs = load_set(dir, "input", in_types);
  auto wants = load_set(dir, "output", out_types);
  if (!inputs.ok() || !wants.ok()) return {Outcome::Failed, "test data: " + inputs.message() + wants.message()};
  if (inputs->size() != names.size())
    return {Outcome::Failed, fmt::format("{} input files for {} graph inputs", inputs->size(), names.size())};
  for (size_t k = 0; k < names.size(); ++k) {
    auto decl = declared_shape(*names[k]);
    if (decl && *decl != (*inputs)[k].shape)
      return {Outcome::BadTestData, fmt::format("input_{}.pb has shape {} but the model declares {}", k,
                                                to_string((*inputs)[k].shape), to_string(*decl))};
  }
  OnnxImportOptions options;
  std::vector<Tensor<double>> fed;
  for (size_t k = 0; k < names.size(); ++k) {
    if (bound[k]) options.constant_inputs[names[k]->name()] = (*inputs)[k];
    else fed.push_back((*inputs)[k]);
  }
  auto m = read_model_onnx(bytes, options);
  if (!m.ok()) {
    const bool attr = m.message().find("not supported") != std::string::npos;
    return {attr ? Outcome::UnsupportedAttr : Outcome::Failed, m.message()};
  }
  auto table = uses_reduced_float(proto) ? eval_binary64(*m, fed) : eval_f64(*m, fed);
  if (!table.ok()) return {Outcome::Failed, "eval: " + table.message()};
  return compare(*m, *table, *wants);
}

// --- the typed path: tests with integer or bool graph inputs/outputs are imported with
// read_typed_model_onnx and evaluated by typed::eval_typed; integer and bool outputs must match
// the expected words exactly, float outputs within the tolerance above.

// The first graph input or output without a typed dtype (STRING, sequences, optionals ...), or empty.
std::string typed_dtype_problem(const onnx::ModelProto& m) {
  for (const auto* v : real_inputs(m))
    if (!onnx_dtype(elem_type(v->type())).ok()) return "input " + v->name();
  for (const auto& v : m.graph().output())
    if (!onnx_dtype(elem_type(v.type())).ok()) return "output " + v.name();
  return "";
}

// input_K.pb / output_K.pb as exact words; BFLOAT16 tensors stored as UINT16 words are relabeled.
Result<std::vector<typed::TypedTensor>> load_typed_set(const fs::path& dir, const std::string& prefix,
                                                       const std::vector<int32_t>& declared) {
  std::vector<typed::TypedTensor> out;
  for (int k = 0;; ++k) {
    const fs::path p = dir / fmt::format("{}_{}.pb", prefix, k);
    if (!fs::exists(p)) break;
    DENOTE_ASSIGN_OR_RETURN(typed::TypedTensor t, read_onnx_typed_tensor(read_bytes(p)));
    const size_t i = static_cast<size_t>(k);
    if (i < declared.size() && declared[i] == onnx::TensorProto::BFLOAT16 &&
        t.dtype == typed::DType::integer(16, false))
      t.dtype = *onnx_dtype(onnx::TensorProto::BFLOAT16);
    out.push_back(std::move(t));
  }
  return out;
}

// A binary-format word as a double (exact for binary16/bfloat16/binary32/binary64).
double binary_value(const typed::DType& t, const Word& w) {
  const typed::DType f64 = *onnx_dtype(onnx::TensorProto::DOUBLE);
  auto r = typed::cast_word(t, f64, Rounding::NearestEven, w);
  return r.ok() ? std::bit_cast<double>(r->word.low()) : std::nan("");
}

Verdict compare_typed(const TypedModel& tm, const typed::TypedRun& run, const std::vector<typed::TypedTensor>& wants) {
  if (wants.size() != tm.model.output_ids.size()) return {Outcome::Failed, "output count differs"};
  for (size_t k = 0; k < wants.size(); ++k) {
    const typed::TypedTensor& got = run.table[static_cast<size_t>(tm.model.output_ids[k])];
    const typed::TypedTensor& want = wants[k];
    if (!(got.dtype == want.dtype))
      return {Outcome::Failed, fmt::format("output {}: dtype {} vs expected {}", k, typed::dtype_name(got.dtype),
                                           typed::dtype_name(want.dtype))};
    if (got.shape != want.shape)
      return {Outcome::Failed, fmt::format("output {}: shape {} vs expected {}", k, to_string(got.shape),
                                           to_string(want.shape))};
    for (int64_t i = 0; i < want.size(); ++i) {
      const Word g = typed::word_at(got, i), w = typed::word_at(want, i);
      const bool ok = want.dtype.is_binary() ? close(binary_value(got.dtype, g), binary_value(want.dtype, w)) : g == w;
      if (!ok)
        return {Outcome::Failed, fmt::format("output {} element {}: {} vs expected {}", k, i,
                                             typed::format_element(got.dtype, g), typed::format_element(want.dtype, w))};
    }
  }
  return {Outcome::Passed, ""};
}

// Import errors of the typed path: an op without an exact meaning on the test's integer/bool type
// or a cast our cast rules reject is "unsupported dtype"; other unsupported values "attribute".
Verdict typed_import_error(const std::string& message) {
  if (message.find("by the typed import") != std::string::npos ||
      message.find("need identical types") != std::string::npos)
    return {Outcome::UnsupportedDtype, message};
  if (message.find("not supported") != std::string::npos) return {Outcome::UnsupportedAttr, message};
  return {Outcome::Failed, message};
}

// An import that needs an operand as a constant (a weight, a shape, an index, a condition) says
// "constant" in its error; such a test is retried with inputs bound as constants.
bool retry_bound(const Verdict& v) {
  return (v.outcome == Outcome::Failed || v.outcome == Outcome::UnsupportedAttr) &&
         v.detail.find("constant") != std::string::npos;
}

// One data set through the typed path; with `bind_ints`, integer and bool inputs are constants.
Verdict run_typed_data_set(const std::string& bytes, const onnx::ModelProto& proto, const fs::path& dir,
                           bool bind_ints) {
  const auto names = real_inputs(proto);
  std::vector<int32_t> in_types, out_types;
  for (const auto* v : names) in_types.push_back(elem_type(v->type()));
  for (const auto& v : proto.graph().output()) out_types.push_back(elem_type(v.type()));
  auto inputs = load_typed_set(dir, "input", in_types);
  auto wants = load_typed_set(dir, "output", out_types);
  auto doubles = load_set(dir, "input", in_types);
  if (!inputs.ok() || !wants.ok() || !doubles.ok())
    return {Outcome::Failed, "test data: " + inputs.message() + wants.message() + doubles.message()};
  if (inputs->size() != names.size())
    return {Outcome::Failed, fmt::format("{} input files for {} graph inputs", inputs->size(), names.size())};
  OnnxImportOptions options;
  std::vector<typed::TypedTensor> fed;
  for (size_t k = 0; k < names.size(); ++k) {
    auto decl = declared_shape(*names[k]);
    if (decl && *decl != (*inputs)[k].shape)
      return {Outcome::BadTestData, fmt::format("input_{}.pb has shape {} but the model declares {}", k,
                                                to_string((*inputs)[k].shape), to_string(*decl))};
    if (bind_ints && !(*inputs)[k].dtype.is_binary()) options.constant_inputs[names[k]->name()] = (*doubles)[k];
    else fed.push_back((*inputs)[k]);
  }
  auto tm = read_typed_model_onnx(bytes, options);
  if (!tm.ok()) return typed_import_error(tm.message());
  auto run = typed::eval_typed(*tm, fed);
  if (!run.ok()) return {Outcome::Failed, "typed eval: " + run.message()};
  return compare_typed(*tm, *run, *wants);
}

Verdict run_typed_test(const std::string& bytes, const onnx::ModelProto& proto, const fs::path& dir) {
  if (std::string p = typed_dtype_problem(proto); !p.empty()) return {Outcome::UnsupportedDtype, p};
  Verdict last{Outcome::Failed, "no test data"};
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    last = run_typed_data_set(bytes, proto, entry.path(), false);
    if (retry_bound(last)) last = run_typed_data_set(bytes, proto, entry.path(), true);
    if (last.outcome != Outcome::Passed) break;
  }
  return last;
}

// Integer inputs are always bound; when the importer needs more constants (Conv weights given as
// graph inputs, BatchNormalization statistics), every input but the first is bound and the test
// counts as "passed with bound inputs".
// Tests with an integer or bool graph input (that is not bound) or output take the typed path.
Verdict run_test(const fs::path& dir, const std::set<std::string>& supported,
                 const std::set<std::string>& typed_supported, std::set<std::string>& missing_ops, bool& used_binding,
                 bool& used_typed) {
  const std::string bytes = read_bytes(dir / "model.onnx");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) return {Outcome::Failed, "model.onnx does not parse"};
  const std::string problem = dtype_problem(proto);
  const std::set<std::string> ops = unsupported_ops(proto, problem.empty() ? supported : typed_supported);
  if (!ops.empty()) {
    missing_ops.insert(ops.begin(), ops.end());
    return {Outcome::UnsupportedOp, fmt::format("{}", fmt::join(ops, ", "))};
  }
  used_typed = !problem.empty();
  if (used_typed) return run_typed_test(bytes, proto, dir);
  const auto names = real_inputs(proto);
  std::vector<bool> bound;
  for (const auto* v : names) bound.push_back(bindable_type(elem_type(v->type())));
  used_binding = false;
  Verdict last{Outcome::Failed, "no test data"};
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    last = run_data_set(bytes, proto, entry.path(), bound);
    if (retry_bound(last) && names.size() > 1) {
      std::vector<bool> all(names.size(), true);
      all[0] = false;
      last = run_data_set(bytes, proto, entry.path(), all);
      used_binding = true;
    }
    if (last.outcome != Outcome::Passed) break;
  }
  if ((dir.filename() == kBfloat16TruncationTest || dir.filename() == kBfloat16TruncationLikeTest) &&
      last.outcome != Outcome::BadTestData)
    return check_bfloat16_truncation(dir, last);
  return last;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root = "/usr/share/libonnx-testdata/data/node";
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--verbose") verbose = true;
    else root = a;
  }
  if (!fs::is_directory(root)) {
    std::cout << "onnx conformance: " << root << " not found (install libonnx-testdata); skipped\n";
    return 77;
  }
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());
  const std::vector<std::string> list = onnx_supported_ops();
  const std::set<std::string> supported(list.begin(), list.end());
  const std::vector<std::string> typed_list = onnx_typed_supported_ops();
  const std::set<std::string> typed_supported(typed_list.begin(), typed_list.end());
  std::set<std::string> missing_ops;
  std::map<Outcome, std::vector<std::string>> by;
  std::vector<std::string> passed_bound, passed_typed;
  for (const fs::path& t : tests) {
    bool bound = false, typed_path = false;
    Verdict v = run_test(t, supported, typed_supported, missing_ops, bound, typed_path);
    const std::string name = t.filename().string();
    by[v.outcome].push_back(name);
    if (bound && v.outcome == Outcome::Passed) passed_bound.push_back(name);
    if (typed_path && v.outcome == Outcome::Passed) passed_typed.push_back(name);
    if (v.outcome == Outcome::Failed) std::cout << "FAIL " << name << ": " << v.detail << "\n";
    else if (verbose) std::cout << (v.outcome == Outcome::Passed ? "pass " : "skip ") << name << " " << v.detail << "\n";
  }
  std::cout << fmt::format("onnx conformance: {} tests: {} passed, {} failed, {} unsupported op, {} unsupported dtype, "
                           "{} unsupported attribute, {} known divergence, {} inconsistent test data\n",
                           tests.size(), by[Outcome::Passed].size(), by[Outcome::Failed].size(),
                           by[Outcome::UnsupportedOp].size(), by[Outcome::UnsupportedDtype].size(),
                           by[Outcome::UnsupportedAttr].size(), by[Outcome::KnownDivergence].size(),
                           by[Outcome::BadTestData].size());
  std::cout << "inconsistent test data: " << fmt::format("{}", fmt::join(by[Outcome::BadTestData], ", ")) << "\n";
  for (const auto& name : by[Outcome::KnownDivergence])
    std::cout << "known divergence: " << name << " (ONNX 1.12 truncates float32 to bfloat16; denote rounds to "
              << "nearest-even)\n";
  std::cout << "unsupported dtype tests: " << fmt::format("{}", fmt::join(by[Outcome::UnsupportedDtype], ", "))
            << "\n";
  std::cout << "passed through the typed path (" << passed_typed.size()
            << "): " << fmt::format("{}", fmt::join(passed_typed, ", ")) << "\n";
  std::cout << "passed with weights bound as constants: " << fmt::format("{}", fmt::join(passed_bound, ", ")) << "\n";
  std::cout << "unsupported ops (" << missing_ops.size() << "): " << fmt::format("{}", fmt::join(missing_ops, ", "))
            << "\n";
  std::cout << "unsupported attribute tests: " << fmt::format("{}", fmt::join(by[Outcome::UnsupportedAttr], ", "))
            << "\n";
  return by[Outcome::Failed].empty() ? 0 : 1;
}
