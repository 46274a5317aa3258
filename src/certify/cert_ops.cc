// The checker's per-kind forward enclosures and transposed maps (src/certify/cert_net.h). Every value
// is a midpoint-radius pair: a sum s of products in round to nearest, t the sum of their magnitudes,
// q the sum of the radii's terms; radius_of(t, q, n) bounds what rounding and the operands' radii add.
#include <algorithm>
#include <cmath>

#include "certify/cert_net.h"

namespace denote::certify {

namespace {

void set_box(Box& b, size_t i, double mid, double rad) {
  b.lo[i] = lo_of(mid, rad);
  b.hi[i] = hi_of(mid, rad);
}

void forward_linear(const Prepared& p, const Box& x, Box& y) {
  const int64_t k = p.numel / p.out;
  std::vector<double> c(static_cast<size_t>(p.in)), w(c.size());
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t i = 0; i < p.in; ++i) {
      const size_t xi = static_cast<size_t>(r * p.in + i);
      mid_rad(x.lo[xi], x.hi[xi], c[static_cast<size_t>(i)], w[static_cast<size_t>(i)]);
    }
    for (int64_t o = 0; o < p.out; ++o) {
      const double* W = &p.w[static_cast<size_t>(o * p.in)];
      const double* A = &p.aw[static_cast<size_t>(o * p.in)];
      double s = p.b[static_cast<size_t>(o)], t = std::fabs(s), q = 0;
      for (int64_t i = 0; i < p.in; ++i) {
        const size_t ii = static_cast<size_t>(i);
        s += W[i] * c[ii];
        t += A[i] * std::fabs(c[ii]);
        q += A[i] * w[ii];
      }
      set_box(y, static_cast<size_t>(r * p.out + o), s, radius_of(t, q, 2.0 * static_cast<double>(p.in) + 1));
    }
  }
}

// The input element read by output (oy, ox) at tap (ky, kx), or -1 in the padding.
inline int64_t tap(const Prepared& p, int64_t ci, int64_t oy, int64_t ox, int64_t ky, int64_t kx) {
  const int64_t iy = oy * p.sh - p.ph + ky * p.dh, ix = ox * p.sw - p.pw + kx * p.dw;
  if (iy < 0 || iy >= p.ih || ix < 0 || ix >= p.iw) return -1;
  return (ci * p.ih + iy) * p.iw + ix;
}

// f(j, wi) for each input element j that output (co, oy, ox) reads (padding skipped), wi its weight.
template <class F>
void for_taps(const Prepared& p, int64_t co, int64_t oy, int64_t ox, F&& f) {
  for (int64_t ci = 0; ci < p.cin; ++ci)
    for (int64_t ky = 0; ky < p.kh; ++ky)
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const int64_t j = tap(p, ci, oy, ox, ky, kx);
        if (j >= 0) f(static_cast<size_t>(j), static_cast<size_t>(((co * p.cin + ci) * p.kh + ky) * p.kw + kx));
      }
}

void forward_conv(const Prepared& p, const Box& x, Box& y) {
  const size_t nin = x.lo.size();
  std::vector<double> c(nin), w(nin);
  for (size_t i = 0; i < nin; ++i) mid_rad(x.lo[i], x.hi[i], c[i], w[i]);
  const double n = 2.0 * static_cast<double>(p.cin * p.kh * p.kw) + 1;
  for (int64_t co = 0; co < p.out; ++co)
    for (int64_t oy = 0; oy < p.oh; ++oy)
      for (int64_t ox = 0; ox < p.ow; ++ox) {
        double s = p.b[static_cast<size_t>(co)], t = std::fabs(s), q = 0;
        for_taps(p, co, oy, ox, [&](size_t j, size_t wi) {
          s += p.w[wi] * c[j];
          t += p.aw[wi] * std::fabs(c[j]);
          q += p.aw[wi] * w[j];
        });
        set_box(y, static_cast<size_t>((co * p.oh + oy) * p.ow + ox), s, radius_of(t, q, n));
      }
}

void forward_scale(const Prepared& p, const Box& x, Box& y) {
  for (size_t i = 0; i < x.lo.size(); ++i) {
    double c, w;
    mid_rad(x.lo[i], x.hi[i], c, w);
    const double s = p.a_mid[i] * c + p.b_mid[i];
    const double t = std::fabs(p.a_mid[i] * c) + std::fabs(p.b_mid[i]);
    const double q = std::fabs(p.a_mid[i]) * w + p.a_rad[i] * (std::fabs(c) + w) + p.b_rad[i];
    set_box(y, i, s, radius_of(t, q, 4));
  }
}

// Coefficients of the rows at the variable parent of a Linear node, and the bias terms.
void backward_linear(const Prepared& p, int64_t rows, const Coef& in, std::vector<double>& mid,
                     std::vector<double>& rad, std::vector<Sum>& sums) {
  const int64_t k = p.numel / p.out;
  const size_t len = static_cast<size_t>(k * p.in);
  mid.assign(static_cast<size_t>(rows) * len, 0.0);
  rad.assign(mid.size(), 0.0);
  const double n = 2.0 * static_cast<double>(p.out), kap = kappa(n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < k; ++b) {
      double* S = &mid[static_cast<size_t>(r) * len + static_cast<size_t>(b * p.in)];
      double* Q = &rad[static_cast<size_t>(r) * len + static_cast<size_t>(b * p.in)];
      for (int64_t o = 0; o < p.out; ++o) {
        const size_t ci = static_cast<size_t>((r * k + b) * p.out + o);
        const double m = in.mid[ci], rr = in.rad[ci];
        if (m == 0 && rr == 0) continue;
        sums[static_cast<size_t>(r)].add_prod(m, p.b[static_cast<size_t>(o)]);
        sums[static_cast<size_t>(r)].add_prod(-rr, std::fabs(p.b[static_cast<size_t>(o)]));
        const double q = rr + kap * std::fabs(m);  // the radius and m's rounding share, per |w|
        const double* W = &p.w[static_cast<size_t>(o * p.in)];
        const double* A = &p.aw[static_cast<size_t>(o * p.in)];
        for (int64_t i = 0; i < p.in; ++i) {
          S[i] += m * W[i];
          Q[i] += q * A[i];
        }
      }
      for (int64_t i = 0; i < p.in; ++i) Q[i] = radius_folded(Q[i], n);
    }
}

void backward_conv(const Prepared& p, int64_t rows, const Coef& in, std::vector<double>& mid, std::vector<double>& rad,
                   std::vector<Sum>& sums) {
  const size_t len = static_cast<size_t>(p.cin * p.ih * p.iw), olen = static_cast<size_t>(p.numel);
  mid.assign(static_cast<size_t>(rows) * len, 0.0);
  rad.assign(mid.size(), 0.0);
  const double n = 2.0 * static_cast<double>(p.out * p.kh * p.kw), kap = kappa(n);
  for (int64_t r = 0; r < rows; ++r) {
    double* S = &mid[static_cast<size_t>(r) * len];
    double* Q = &rad[static_cast<size_t>(r) * len];
    for (int64_t co = 0; co < p.out; ++co)
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          const size_t ci = static_cast<size_t>(r) * olen + static_cast<size_t>((co * p.oh + oy) * p.ow + ox);
          const double m = in.mid[ci], rr = in.rad[ci];
          if (m == 0 && rr == 0) continue;
          sums[static_cast<size_t>(r)].add_prod(m, p.b[static_cast<size_t>(co)]);
          sums[static_cast<size_t>(r)].add_prod(-rr, std::fabs(p.b[static_cast<size_t>(co)]));
          const double q = rr + kap * std::fabs(m);
          for_taps(p, co, oy, ox, [&](size_t j, size_t wi) {
            S[j] += m * p.w[wi];
            Q[j] += q * p.aw[wi];
          });
        }
    for (size_t i = 0; i < len; ++i) Q[i] = radius_folded(Q[i], n);
  }
}

void backward_scale(const Prepared& p, int64_t rows, const Coef& in, std::vector<double>& mid, std::vector<double>& rad,
                    std::vector<Sum>& sums) {
  const size_t len = static_cast<size_t>(p.numel);
  mid.assign(static_cast<size_t>(rows) * len, 0.0);
  rad.assign(mid.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < len; ++i) {
      const size_t ci = static_cast<size_t>(r) * len + i;
      const double m = in.mid[ci], rr = in.rad[ci];
      if (m == 0 && rr == 0) continue;
      Sum& s = sums[static_cast<size_t>(r)];
      s.add_prod(m, p.b_mid[i]);
      s.add_prod(-std::fabs(m), p.b_rad[i]);
      s.add_prod(-rr, std::fabs(p.b_mid[i]) + p.b_rad[i]);
      mid[ci] = m * p.a_mid[i];
      const double q = std::fabs(m) * p.a_rad[i] + rr * (std::fabs(p.a_mid[i]) + p.a_rad[i]);
      rad[ci] = radius_of(std::fabs(mid[ci]), q, 3);
    }
}

double magnitude(const Box& b, size_t i) { return std::fmax(std::fabs(b.lo[i]), std::fabs(b.hi[i])); }

// Per output element the sum of |w| |x| + |b| over its terms (x's magnitude from its box), and n: how
// many terms can be nonzero (a zero product adds no rounding: dead relus, zero weights).
std::vector<double> f32_terms(const Prepared& p, const Box& x, std::vector<double>& n) {
  std::vector<double> t(static_cast<size_t>(p.numel), 0.0);
  n.assign(t.size(), 1.0);
  auto add = [&](size_t o, double w, double v) {
    t[o] += w * v;
    n[o] += w != 0 && v != 0;
  };
  if (p.kind == Kind::Linear) {
    for (size_t o = 0; o < t.size(); ++o) {
      const size_t r = o / static_cast<size_t>(p.out), oo = o % static_cast<size_t>(p.out), in = static_cast<size_t>(p.in);
      t[o] = std::fabs(p.b[oo]);
      for (size_t i = 0; i < in; ++i) add(o, p.aw[oo * in + i], magnitude(x, r * in + i));
    }
  } else if (p.kind == Kind::Conv) {
    for (int64_t co = 0; co < p.out; ++co)
      for (int64_t oy = 0; oy < p.oh; ++oy)
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          const size_t o = static_cast<size_t>((co * p.oh + oy) * p.ow + ox);
          t[o] = std::fabs(p.b[static_cast<size_t>(co)]);
          for_taps(p, co, oy, ox, [&](size_t j, size_t wi) { add(o, p.aw[wi], magnitude(x, j)); });
        }
  } else {  // scale: a x + b in up to two f32 operations, the constant rounded to f32
    for (size_t i = 0; i < t.size(); ++i) t[i] = (std::fabs(p.a_mid[i]) + p.a_rad[i]) * magnitude(x, i) + std::fabs(p.b_mid[i]) + p.b_rad[i];
  }
  for (double& v : t) v = next_up(v * (1 + 0x1p-40));  // the sums' own rounding
  return t;
}

// batch_norm_eval's f32 evaluation, ((x - mean) / sqrt(var + eps)) gamma + beta with every parameter
// rounded to f32 first, against a x + b (a = gamma / sqrt(var + eps), b = beta - mean a): x - mean rounds
// at |x| + 2 |mean| (the mean's own rounding), sqrt(var + eps) and the division, the product and the sum
// each once more, relative to |a| (|x| + |mean|) and |beta| <= |b| + |mean| |a|: at most
// 8 u32 (|a| (|x| + 2 |mean|) + |beta|) to first order; 12 u32 with slack, plus the underflows of the
// division, the product (times |gamma|) and the sum.
double bn_f32_err(const Prepared& p, size_t i, double x) {
  const double a = std::fabs(p.a_mid[i]) + p.a_rad[i], m = p.bn_mean[i];
  const double beta = std::fabs(p.b_mid[i]) + p.b_rad[i] + m * a;
  const double t = next_up((a * (x + 2 * m) + beta) * (1 + 0x1p-40));
  return next_up(next_up(t * (12 * 1.02 * kUnit32)) + (p.bn_gamma[i] + 4) * kEta32);
}

}  // namespace

bool Net::add_f32_error(int64_t id, std::vector<Box>& boxes) const {
  const Prepared& p = node(id);
  Box& y = boxes[static_cast<size_t>(id)];
  if (p.kind == Kind::Input || p.kind == Kind::Same || p.kind == Kind::Relu) return true;  // exact in f32
  y.err.assign(static_cast<size_t>(p.numel), 0.0);
  if (!p.bn_mean.empty()) {
    const Box& x = boxes[static_cast<size_t>(p.var)];
    for (size_t i = 0; i < y.err.size(); ++i) y.err[i] = bn_f32_err(p, i, magnitude(x, i));
  } else if (p.kind == Kind::Const) {
    for (size_t i = 0; i < y.err.size(); ++i) y.err[i] = f32_err(std::fabs(p.b_mid[i]), 0);
  } else if (p.kind == Kind::Add) {
    for (size_t i = 0; i < y.err.size(); ++i) y.err[i] = f32_err(magnitude(y, i), 0);
  } else {
    std::vector<double> n;
    const std::vector<double> t = f32_terms(p, boxes[static_cast<size_t>(p.var)], n);
    for (size_t i = 0; i < y.err.size(); ++i) y.err[i] = f32_err(t[i], n[i]);
  }
  for (size_t i = 0; i < y.err.size(); ++i) y.lo[i] = next_down(y.lo[i] - y.err[i]), y.hi[i] = next_up(y.hi[i] + y.err[i]);
  return true;
}

void Net::accumulate(int64_t id, std::vector<double> mid, std::vector<double> rad, std::vector<Coef>& coef) const {
  Coef& c = coef[static_cast<size_t>(id)];
  if (!c.set) {
    c.mid = std::move(mid), c.rad = std::move(rad), c.set = true;
    return;
  }
  for (size_t i = 0; i < c.mid.size(); ++i) {
    const double s = c.mid[i] + mid[i];
    const double t = std::fabs(c.mid[i]) + std::fabs(mid[i]);
    c.rad[i] = radius_of(t, c.rad[i] + rad[i], 1);
    c.mid[i] = s;
  }
}

void Net::forward(int64_t id, std::vector<Box>& boxes) const {
  const Prepared& p = node(id);
  if (p.kind == Kind::Input) return;  // the caller's
  Box& y = boxes[static_cast<size_t>(id)];
  y.lo.assign(static_cast<size_t>(p.numel), 0.0);
  y.hi.assign(y.lo.size(), 0.0);
  const Box* x = p.var >= 0 ? &boxes[static_cast<size_t>(p.var)] : nullptr;
  switch (p.kind) {
    case Kind::Input: return;
    case Kind::Const: y.lo = p.b_mid, y.hi = p.b_mid; return;
    case Kind::Same: y = *x; return;
    case Kind::Linear: forward_linear(p, *x, y); return;
    case Kind::Conv: forward_conv(p, *x, y); return;
    case Kind::Scale: forward_scale(p, *x, y); return;
    case Kind::Relu:
      for (size_t i = 0; i < y.lo.size(); ++i) y.lo[i] = std::max(x->lo[i], 0.0), y.hi[i] = std::max(x->hi[i], 0.0);
      return;
    case Kind::Add: {
      const Box& z = boxes[static_cast<size_t>(p.other)];
      for (size_t i = 0; i < y.lo.size(); ++i) {
        y.lo[i] = p.other_sign > 0 ? add_dn(x->lo[i], z.lo[i]) : add_dn(x->lo[i], -z.hi[i]);
        y.hi[i] = p.other_sign > 0 ? add_up(x->hi[i], z.hi[i]) : add_up(x->hi[i], -z.lo[i]);
      }
      return;
    }
  }
}

void Net::backward(int64_t id, int64_t rows, std::vector<Coef>& coef, std::vector<Sum>& sums) const {
  const Prepared& p = node(id);
  Coef& in = coef[static_cast<size_t>(id)];
  if (!in.set) return;
  std::vector<double> mid, rad;
  switch (p.kind) {
    case Kind::Input:
    case Kind::Relu: return;  // the caller's
    case Kind::Const: {
      const size_t len = static_cast<size_t>(p.numel);
      for (int64_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < len; ++i) {
          const size_t ci = static_cast<size_t>(r) * len + i;
          sums[static_cast<size_t>(r)].add_prod(in.mid[ci], p.b_mid[i]);
          sums[static_cast<size_t>(r)].add_prod(-in.rad[ci], std::fabs(p.b_mid[i]));
        }
      return;
    }
    case Kind::Same: accumulate(p.var, std::move(in.mid), std::move(in.rad), coef); break;
    case Kind::Linear: backward_linear(p, rows, in, mid, rad, sums); accumulate(p.var, std::move(mid), std::move(rad), coef); break;
    case Kind::Conv: backward_conv(p, rows, in, mid, rad, sums); accumulate(p.var, std::move(mid), std::move(rad), coef); break;
    case Kind::Scale: backward_scale(p, rows, in, mid, rad, sums); accumulate(p.var, std::move(mid), std::move(rad), coef); break;
    case Kind::Add: {
      std::vector<double> neg = in.mid;
      if (p.other_sign < 0)
        for (double& v : neg) v = -v;
      accumulate(p.other, std::move(neg), in.rad, coef);
      accumulate(p.var, std::move(in.mid), std::move(in.rad), coef);
      break;
    }
  }
  in = Coef{};
}

}  // namespace denote::certify
