// Small models and properties the verify tests share: y = W x + b, and a VNN-LIB text parsed (a
// failed parse is a test failure, and an empty property then).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "denote/program/builder.h"
#include "denote/verify/vnnlib.h"

namespace denote::testing {

// y = W x + b with one input of `n` elements and `out` outputs (W row-major, out x n).
inline Model affine(int64_t n, int64_t out, std::vector<double> w, std::vector<double> bias) {
  GraphBuilder b;
  const int64_t y = b.linear(b.input({n}), out, std::move(w), std::move(bias));
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

inline VnnProperty prop(const std::string& text) {
  auto p = parse_vnnlib(text);
  EXPECT_TRUE(p.ok()) << p.message();
  return p.ok() ? std::move(*p) : VnnProperty{};
}

}  // namespace denote::testing
