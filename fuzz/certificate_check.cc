// libFuzzer target: certificates (include/denote/certify/certificate.h, issue 52). The input is a
// certificate's JSON text: parse_certificate gives a value or an error, and whatever it parses,
// check_certificate gives a report or an error, never a crash (ASan + UBSan watch). And the checker's
// soundness: the model and property below are satisfiable (y <= y(0, 0), attained at x = (0, 0) of the
// box), so no certificate may check valid: a valid report traps.
//
//   TARGET=certificate_check scripts/fuzz.sh 60
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "denote/certify/certificate.h"
#include "denote/program/builder.h"

namespace {

struct Fixture {
  denote::Model model;
  denote::certify::Property property;
};

// x in [-1, 1]^2, (x - 0.1) / 0.5, linear 2 -> 3, relu, linear 3 -> 3 plus the relu (a residual), relu,
// linear 3 -> 1; the atom y <= y(0) with y(0) the evaluation at 0 computed by hand below.
Fixture make() {
  using denote::Op;
  denote::GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t xs = b.binary(Op::Div, b.binary(Op::Sub, x, b.constant({2}, {0.1, 0.1})), b.constant({2}, {0.5, 0.5}));
  const int64_t h1 = b.unary(Op::Relu, b.linear(xs, 3, {1, -1, 0.5, 2, -1, 0.25}, {0.5, -0.25, 0}));
  const int64_t h2 = b.unary(Op::Relu, b.binary(Op::Add, b.linear(h1, 3, {1, 0, -1, 0.5, 1, 0, -0.5, 0.5, 1}, {0, 0, 0}), h1));
  const int64_t y = b.linear(h2, 1, {1, -2, 0.5}, {0.125});
  Fixture f{*b.build({y}), {}};
  // At x = 0: xs = (-0.2, -0.2); linear: 0.5 + (-0.2 + 0.2) = 0.5, -0.25 + (-0.1 - 0.4) = -0.75,
  // 0 + (0.2 - 0.05) = 0.15; h1 = (0.5, 0, 0.15); second linear: 0.5 - 0.15 = 0.35, 0.25, -0.25 + 0.15 = -0.1,
  // plus h1: (0.85, 0.25, 0.05); h2 = the same; y = 0.85 - 0.5 + 0.025 + 0.125 = 0.5.
  f.property.inputs = 2, f.property.outputs = 1;
  denote::certify::Case c;
  c.lo = {-1, -1}, c.hi = {1, 1};
  c.conjunctions = {{denote::certify::Atom{{1.0}, 0.5, false}}};
  f.property.cases.push_back(c);
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture f = make();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cert = denote::certify::parse_certificate(text, "fuzz");
  if (!cert.ok()) return 0;
  auto report = denote::certify::check_certificate(f.model, f.property, *cert);
  if (report.ok() && report->valid) __builtin_trap();  // a satisfiable property certified
  return 0;
}
