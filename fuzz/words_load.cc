// libFuzzer target: typed element words (issue 6). An input is "DTYPE\nSHAPE\nWORDS" (SHAPE and WORDS
// JSON arrays, e.g. "int(7)\n[2]\n[\"0x7f\", 3]") or, when it starts with '{', a typed
// torchlean.ir.v1 document. Every input must give a value or an error, never a crash (ASan + UBSan
// watch). Loaded tensors must give their words back unchanged and every word must survive
// read/write; integer ops and casts then run on the loaded values (errors are fine).
//
//   scripts/fuzz.sh 60 words_load
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "denote/check/check.h"
#include "denote/io/json_typed.h"
#include "denote/typed/cast.h"
#include "denote/typed/int_ops.h"
#include "denote/typed/check.h"
#include "denote/typed/interp.h"

namespace {

using namespace denote;

constexpr int64_t kMaxElements = 256;
constexpr int64_t kMaxOpWidth = 2048;
// Integer pow work per call (int_ops.h: pow_work), well below the default 2^32 so that an input
// stays fast under the sanitizers while the bound's error path is exercised.
constexpr int64_t kMaxPowWork = int64_t{1} << 24;

void exercise_ops(const typed::TypedTensor& t) {
  if (t.size() > kMaxElements || typed::bit_width(t.dtype) > kMaxOpWidth) return;
  uint32_t flags = 0;
  (void)typed::cast_tensor(t, typed::DType::binary(binary32_format()), Rounding::Upward, flags);
  (void)typed::cast_tensor(t, typed::DType::integer(13, true), Rounding::NearestEven, flags);
  if (t.dtype.is_binary()) return;
  for (Op op : {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem, Op::MinElem, Op::DivTrunc, Op::DivFloor,
                Op::Remainder, Op::Pow, Op::ClampMin, Op::Neg, Op::Abs, Op::Exp})
    (void)typed::apply_tensors(op, t, &t, kMaxPowWork);
}

void words_case(std::string_view dtype, std::string_view shape_text, std::string_view words_text) {
  auto t = typed::parse_dtype(dtype);
  auto ws = parse_word_list(words_text);
  const nlohmann::json shape_json = nlohmann::json::parse(shape_text.begin(), shape_text.end(), nullptr, false);
  if (!t.ok() || !ws.ok() || !shape_json.is_array()) return;
  Shape shape;
  for (const auto& d : shape_json) {
    if (!d.is_number_integer()) return;
    shape.push_back(d.get<int64_t>());
  }
  for (const Word& w : *ws) {
    auto e = typed::read(*t, w);
    if (!e.ok()) continue;
    auto back = typed::write(*t, *e);
    if (!back.ok() || !(*back == w)) __builtin_trap();  // write(read(w)) == w
  }
  auto v = typed::load(*t, shape, *ws);
  if (!v.ok()) return;
  if (typed::words(*v) != *ws) __builtin_trap();  // words(load(ws)) == ws
  exercise_ops(*v);
}

void model_case(std::string_view text) {
  auto tm = read_typed_model_json(text);
  if (!tm.ok()) return;
  (void)diagnose_typed_model(*tm);
  // The typed writer's document reads back to the same typed model (convert keeps dtypes/words).
  const std::string once = write_typed_model_json(*tm);
  auto back = parse_typed_model_json(once);
  if (!back.ok() || write_typed_model_json(*back) != once || back->input_dtypes != tm->input_dtypes) __builtin_trap();
  std::vector<typed::TypedTensor> inputs;
  int64_t total = 0;
  for (int64_t id : tm->model.graph.input_ids()) {
    const Shape& shape = tm->model.graph.nodes[static_cast<size_t>(id)].out_shape;
    auto n = checked_numel(shape);
    auto dt = tm->input_dtypes.find(id);
    if (!n.ok() || *n > kMaxElements - total || dt == tm->input_dtypes.end()) return;
    total += *n;
    auto z = typed::load(dt->second, shape, std::vector<Word>(static_cast<size_t>(*n)));
    if (!z.ok()) return;
    inputs.push_back(std::move(*z));
  }
  typed::TypedOptions o;
  o.max_elements = 4096;
  o.max_pow_work = kMaxPowWork;
  auto run = typed::eval_typed(*tm, inputs, o);
  if (run.ok())
    for (size_t i = 0; i < run->table.size(); ++i)
      if (run->table[i].shape != tm->model.graph.nodes[i].out_shape) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text[0] == '{') {
    model_case(text);
    return 0;
  }
  const size_t a = text.find('\n');
  if (a == std::string_view::npos) return 0;
  const size_t b = text.find('\n', a + 1);
  if (b == std::string_view::npos) return 0;
  words_case(text.substr(0, a), text.substr(a + 1, b - a - 1), text.substr(b + 1));
  return 0;
}
