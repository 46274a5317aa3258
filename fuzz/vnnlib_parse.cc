// libFuzzer target: the VNN-LIB property parser (src/verify/vnnlib.cc). Every input must give a
// property or an error `file:line:column: ...; expected ...`, never a crash (ASan + UBSan watch). A
// parsed property must be consistent: every case box has num_inputs entries with
// lo_out <= lo_in, hi_in <= hi_out and lo_out <= hi_out, the outward doubles lie outside and the
// inward ones inside the exact decimal bounds (compare_exact), every atom has num_outputs
// coefficients, rhs_down <= rhs_up, each rhs term's directed doubles enclose its text, and at the
// zero output an atom holds as the sign of its rhs says. The parser runs with lowered resource limits
// (VnnlibLimits, at most 256 cases or conjunctions, 20,000 atom copies): mutated ACAS Xu properties with a dozen
// disjunctions otherwise distribute into thousands of cases and take seconds each under ASan, which
// starves the search; the limit paths themselves are reached more often this way.
//
//   TARGET=vnnlib_parse scripts/fuzz.sh 60
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "denote/verify/vnnlib.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  denote::VnnlibLimits limits;
  limits.max_conjunctions = 256;
  limits.max_dnf_work = 20'000;
  limits.max_box_entries = 20'000;
  limits.max_output_words = 200'000;
  auto p = denote::parse_vnnlib(text, "fuzz.vnnlib", limits);
  if (!p.ok()) {
    const std::string& m = p.message();
    check(m.rfind("fuzz.vnnlib:", 0) == 0 && m.find("; expected ") != std::string::npos);
    return 0;
  }
  check(p->num_inputs >= 0 && p->num_outputs >= 0 && !p->cases.empty());
  const auto nx = static_cast<size_t>(p->num_inputs), ny = static_cast<size_t>(p->num_outputs);
  const std::vector<double> zero(ny, 0.0);
  for (const denote::VnnCase& c : p->cases) {
    check(c.lo_out.size() == nx && c.hi_out.size() == nx && c.lo_in.size() == nx && c.hi_in.size() == nx &&
          c.lo_text.size() == nx && c.hi_text.size() == nx && c.lo_strict.size() == nx && c.hi_strict.size() == nx);
    for (size_t i = 0; i < nx; ++i) {
      check(c.lo_out[i] <= c.lo_in[i] && c.hi_in[i] <= c.hi_out[i] && c.lo_out[i] <= c.hi_out[i]);
      check(denote::compare_exact(c.lo_out[i], c.lo_text[i]) <= 0);
      check(denote::compare_exact(c.lo_in[i], c.lo_text[i]) >= 0);
      check(denote::compare_exact(c.hi_in[i], c.hi_text[i]) <= 0);
      check(denote::compare_exact(c.hi_out[i], c.hi_text[i]) >= 0);
      // The inward box excludes a strict bound's own decimal (issue 47: a witness on the excluded end).
      if (c.lo_strict[i]) check(denote::compare_exact(c.lo_in[i], c.lo_text[i]) > 0);
      if (c.hi_strict[i]) check(denote::compare_exact(c.hi_in[i], c.hi_text[i]) < 0);
    }
    for (const auto& conj : c.output) {
      check(!conj.empty());
      for (const denote::VnnAtom& a : conj) {
        check(a.coef.size() == ny && a.rhs_down <= a.rhs_up);
        for (const denote::VnnDecimal& t : a.rhs_terms)
          check(t.down <= t.up && denote::compare_exact(t.down, t) <= 0 && denote::compare_exact(t.up, t) >= 0);
        const bool holds = denote::atom_holds_exact(a, zero);
        if (a.rhs_down > 0) check(holds);
        if (a.rhs_up < 0) check(!holds);
        if (a.rhs_terms.size() == 1) {
          const int s = denote::compare_exact(0.0, a.rhs_terms[0]);  // sign of (0 - rhs)
          check(holds == (a.strict ? s < 0 : s <= 0));
        }
      }
    }
  }
  return 0;
}
