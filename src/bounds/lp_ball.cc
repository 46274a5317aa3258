// Linear bounds over an L2 or L1 ball (include/denote/bounds/lp_ball.h).
#include "denote/bounds/lp_ball.h"

#include <algorithm>
#include <cmath>

namespace denote {

namespace {

// 2 (n + 2) u: covers the rounding of n products and their sum, and of the magnitudes' own sum.
double sum_error(size_t n) { return static_cast<double>(2 * (n + 2)) * 0x1p-53; }

}  // namespace

SpecMatrix spec_or_identity(const SpecMatrix* spec, int64_t ny) {
  if (spec) return *spec;
  SpecMatrix c{ny, ny, std::vector<double>(static_cast<size_t>(ny * ny), 0.0)};
  for (int64_t j = 0; j < ny; ++j) c.c[static_cast<size_t>(j * ny + j)] = 1;
  return c;
}

double box_bias(std::span<const double> a, const DoubleBox& box, double lower) {
  double s = 0, mag = 0;
  for (size_t j = 0; j < a.size() && j < box.lo.size(); ++j) {
    const double t = a[j] >= 0 ? a[j] * box.lo[j] : a[j] * box.hi[j];
    s += t, mag += std::fabs(t);
  }
  const double m = std::nextafter(s + sum_error(a.size()) * mag, INFINITY);
  return std::nextafter(lower - m, -INFINITY);
}

double lp_ball_min(std::span<const double> a, double bias, std::span<const double> c, double eps, double p) {
  double s = 0, mag = 0, norm = 0;
  for (size_t j = 0; j < a.size() && j < c.size(); ++j) {
    const double t = a[j] * c[j];
    s += t, mag += std::fabs(t);
    norm = p == 1 ? std::max(norm, std::fabs(a[j])) : norm + a[j] * a[j];
  }
  const double g = sum_error(a.size());
  if (p == 2) norm = std::nextafter(std::sqrt(std::nextafter(norm * (1 + g), INFINITY)), INFINITY);
  const double dot = std::nextafter(s - std::nextafter(g * mag, INFINITY), -INFINITY);
  const double radius = std::nextafter(eps * norm, INFINITY);
  return std::nextafter(std::nextafter(dot - radius, -INFINITY) + bias, -INFINITY);
}

Status tighten_on_ball(const Graph& g, const Payload<double>& payload, const DoubleBox& box, std::span<const double> center,
                       double eps, double p, int64_t output, const SpecMatrix* spec, const CrownOptions& o,
                       std::vector<double>& lo, std::vector<double>& hi) {
  if (o.method != BoundMethod::Crown || (p != 1 && p != 2)) return ok_status();
  Subdomain where;
  where.ball = std::make_shared<const InputBall>(InputBall{std::vector<double>(center.begin(), center.end()), eps, p});
  DENOTE_ASSIGN_OR_RETURN(CrownResult r, run_crown(g, payload, std::span<const DoubleBox>(&box, 1), output, spec, o, where));
  for (size_t k = 0; k < lo.size() && k < r.spec_lo.size(); ++k) lo[k] = std::max(lo[k], r.spec_lo[k]);
  for (size_t k = 0; k < hi.size() && k < r.spec_hi.size(); ++k) hi[k] = std::min(hi[k], r.spec_hi[k]);
  return ok_status();
}

}  // namespace denote
