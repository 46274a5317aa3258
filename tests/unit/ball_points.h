// Points of an L2 / L1 ball ||x - c||_p <= eps for the ball tests (lp_ball_test.cc, crown_ball_test.cc): its
// points at 0.999 eps along each axis (at most `max_axis` of them), then n random directions at radii in
// [0.5, 1) x 0.999 eps.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace denote {

inline std::vector<std::vector<double>> ball_points(const std::vector<double>& c, double eps, double p, int n,
                                                    uint64_t seed, size_t max_axis = 64) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::uniform_real_distribution<double> r(0.5, 1);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < c.size() && i < max_axis; ++i)
    for (double s : {0.999, -0.999}) {
      out.push_back(c);
      out.back()[i] += s * eps;
    }
  for (int k = 0; k < n; ++k) {
    std::vector<double> v(c.size());
    double norm = 0;
    for (double& e : v) e = p == 2 ? g(rng) : std::copysign(-std::log(r(rng) - 0.5 + 1e-12), g(rng));
    for (double e : v) norm = p == 2 ? norm + e * e : norm + std::fabs(e);
    norm = p == 2 ? std::sqrt(norm) : norm;
    const double scale = eps / norm * r(rng) * 0.999;
    out.push_back(c);
    for (size_t i = 0; i < c.size(); ++i) out.back()[i] += v[i] * scale;
  }
  return out;
}

}  // namespace denote
