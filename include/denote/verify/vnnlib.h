// VNN-LIB properties (the SMT-LIB subset VNN-COMP 2021-2025 uses): declare-const of X_i / Y_j,
// assert with <=, >=, <, >, and, or (nested), linear terms (constants, X_i / Y_j, (* c V), (+ ...),
// (- a b), (- a)), comments. A property states the *counterexample*: the instance is sat iff some
// point of the input region makes the output constraints true.
//
// Normal form (what parse_vnnlib returns): a disjunction of cases; each case is an input box (the
// intersection of every input bound that applies to it, decimal bounds kept exactly as directed
// doubles) and an output condition in DNF (a disjunction of conjunctions of linear atoms over Y).
// Constraints that mix X and Y in one atom are refused (no VNN-COMP benchmark uses them).
//
//   auto p = parse_vnnlib(text, "prop_1.vnnlib");
//   // p->num_inputs == 5, p->cases[0].lo_out[i] <= X_i <= p->cases[0].hi_out[i]
//   // p->cases[0].output: [[atom, atom, ...], ...]; atom: sum_j coef[j] * Y_j  <=  rhs  (or <)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/scalar/real_context.h"

namespace denote {

// A decimal constant of the file: its text and the doubles just below and above it (equal when the
// decimal is exactly a double).
struct VnnDecimal {
  std::string text;
  double down = 0, up = 0;
};

// sum_j coef[j] * Y_j <= rhs (strict: <). coef has num_outputs entries (zeros where Y_j is absent).
// rhs is the exact sum of the decimals in rhs_terms (each with its sign); rhs_down/rhs_up enclose it.
struct VnnAtom {
  std::vector<double> coef;  // exact: coefficients are decimals that must be exactly doubles (else an error)
  double rhs_down = 0, rhs_up = 0;
  std::vector<VnnDecimal> rhs_terms;  // rhs = sum of these decimals (each with its sign in its text)
  bool strict = false;
};

struct VnnCase {
  // The input box: lo_out/hi_out round outward (for bounding), lo_in/hi_in inward (a witness inside
  // [lo_in, hi_in] is inside the exact decimal box, strict bounds excluded; lo_in > hi_in when no
  // double lies in the box). The decimal texts and strictness for exact re-checks: a bound from
  // (> X_i d) or (< X_i d) is strict, and a witness equal to d is outside the box.
  std::vector<double> lo_out, hi_out, lo_in, hi_in;
  std::vector<VnnDecimal> lo_text, hi_text;
  std::vector<uint8_t> lo_strict, hi_strict;  // 1 where the bound is strict
  std::vector<std::vector<VnnAtom>> output;  // DNF; empty outer vector: no output condition (always true)
};

struct VnnProperty {
  int64_t num_inputs = 0, num_outputs = 0;
  std::vector<VnnCase> cases;
};

// Errors: `{file}:{line}:{column}: {what}; expected {what was expected}` (a declaration after use, an
// undeclared or duplicate name, a malformed term, an unbounded input, an empty box, nesting deeper
// than 256, a file over 64 MiB or with more than 10^6 cases after distributing or over and).
// The parser's resource limits (defaults as below). A caller may lower them: the fuzz target does, so
// that its units stay small; raising them beyond the defaults is refused (the default limits apply).
struct VnnlibLimits {
  int64_t max_conjunctions = 1'000'000;  // disjuncts of any DNF (so cases and conjunctions)
  int64_t max_dnf_work = 50'000'000;     // atom copies made while distributing 'and' over 'or', in all
  int64_t max_box_entries = 4'000'000;   // cases * num_inputs
  int64_t max_output_words = 20'000'000; // stored output atoms, in 8-byte words (about 10 + outputs each)
  // The normal form stops here (a kResource error with field "deadline"; e.g. a verify timeout
  // that the load counts against). Default: none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};
Result<VnnProperty> parse_vnnlib(std::string_view text, std::string_view file = "<vnnlib>",
                                 const VnnlibLimits& limits = {});
Result<VnnProperty> load_vnnlib_file(const std::string& path, const VnnlibLimits& limits = {});

// Exact decimal comparison: sign of (x - d) for a double x and a decimal d (-1, 0, 1), by MPFR;
// 2 when x is NaN (a NaN is never inside a box: test both sides).
int compare_exact(double x, const VnnDecimal& d);
// Whether the atom holds at outputs y, exactly (sum coef * y compared with the decimal sum by MPFR
// at enough precision to be exact); false for a NaN, a wrong-size y, inf - inf, or an unreadable term.
bool atom_holds_exact(const VnnAtom& a, const std::vector<double>& y);
// Whether the atom holds at every y with lo[j] <= y[j] <= hi[j] (an enclosure of the real network's
// outputs, e.g. from enclose_real), exactly; false for NaN or empty intervals and wrong sizes.
bool atom_holds_on_box(const VnnAtom& a, const std::vector<RealScalar>& lo, const std::vector<RealScalar>& hi);

}  // namespace denote
