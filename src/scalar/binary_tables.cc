// Tables of the elementary functions of small formats (binary_tables.h).
#include "denote/scalar/binary_tables.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace denote {
namespace {

using Key = std::tuple<int, int, int, int, int, int>;  // E, F, bias, encoding, rounding, function

std::unique_ptr<FunctionTable> fill(FpFunction fn, const BinaryFormat& f, Rounding r) {
  auto t = std::make_unique<FunctionTable>();
  t->fn = fn;
  t->rounding = r;
  const uint64_t count = uint64_t{1} << f.storage_bits();
  t->entries.resize(count);
  for (uint64_t w = 0; w < count; ++w) {
    FpEnv env{r, 0, {}};
    const uint64_t y = fp_function(fn, f, env, w);
    t->entries[w] = {static_cast<uint16_t>(y), static_cast<uint8_t>(env.flags), static_cast<uint8_t>(!env.error.empty())};
  }
  return t;
}

}  // namespace

const FunctionTable* function_table(FpFunction fn, const BinaryFormat& f, Rounding r) {
  if (f.storage_bits() > 16) return nullptr;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<FunctionTable>> cache;
  const Key key{f.exp_bits, f.frac_bits, f.bias, static_cast<int>(f.encoding), static_cast<int>(r),
                static_cast<int>(fn)};
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<FunctionTable>& slot = cache[key];
  if (!slot) slot = fill(fn, f, r);
  return slot.get();
}

uint64_t table_lookup(const FunctionTable& t, const BinaryFormat& f, FpEnv& env, uint64_t a) {
  if (a >= t.entries.size() || t.entries[a].error) return fp_function(t.fn, f, env, a);
  const FunctionTable::Entry& e = t.entries[a];
  env.flags |= e.flags;
  return e.word;
}

}  // namespace denote
