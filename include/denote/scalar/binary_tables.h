// Tables of the elementary functions of formats of at most 16 bits (issue 20): for one function,
// format and rounding mode, the correctly rounded result word of every input word together with
// the flags it raises, filled once per process from fp_function (binary_functions.h), so a lookup
// gives exactly what fp_function gives. An input whose computation reports an error (e.g. log of a
// negative number in a format without NaN) is marked and recomputed on lookup, which yields the
// error text.
//
//   const FunctionTable* t = function_table(FpFunction::Exp, bf16, Rounding::NearestEven);
//   uint64_t e = table_lookup(*t, bf16, env, 0x3f80);   // 0x402e, env.flags |= inexact
#pragma once

#include <cstdint>
#include <vector>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_ops.h"

namespace denote {

struct FunctionTable {
  struct Entry {
    uint16_t word;
    uint8_t flags;
    uint8_t error;  // 1: recompute (the computation reported an error)
  };
  FpFunction fn = FpFunction::Exp;
  Rounding rounding = Rounding::NearestEven;
  std::vector<Entry> entries;  // indexed by the input word
};

// The table of fn for f in mode r, filled on the first request (thread-safe; kept for the rest of
// the process); nullptr for formats of more than 16 storage bits.
const FunctionTable* function_table(FpFunction fn, const BinaryFormat& f, Rounding r);

// fn(a) from the table, flags or-ed into env.flags; malformed words and marked entries go to
// fp_function (env.rounding must be the table's mode).
uint64_t table_lookup(const FunctionTable& t, const BinaryFormat& f, FpEnv& env, uint64_t a);

}  // namespace denote
