// BinaryEndpoints: directed bounds in a software binary format (see denote/bounds/interval.h).
#include <cmath>
#include <limits>

#include "denote/bounds/interval.h"

namespace denote {

FpWord BinaryEndpoints::fn(Fn f, FpWord x, Dir d) const {
  const BinaryContext& c = ctx(d);
  switch (f) {
    case Fn::Exp: return c.exp(x);
    case Fn::Log: return c.log(x);
    case Fn::Log1p: return c.log1p(x);
    case Fn::Tanh: return c.tanh(x);
    case Fn::Sigmoid: return c.sigmoid(x);
    case Fn::Softplus: return c.softplus(x);
    case Fn::Erf: return c.erf(x);
    case Fn::Sqrt: return c.sqrt(x);
    case Fn::Rsqrt: return c.rsqrt(x);
    case Fn::Gelu: return c.gelu(x);
    case Fn::Sin: return c.sin(x);
    case Fn::Cos: return c.cos(x);
  }
  return c.nan();
}

// Exact for formats inside binary64; otherwise the nearest double is stepped outward until the
// word's exact value lies on the right side of it.
double BinaryEndpoints::to_double(FpWord x, Dir d) const {
  double v = down_.to_double(x);
  const BinaryFormat& f = format();
  if ((f.exp_bits <= 11 && f.frac_bits <= 52) || std::isnan(v)) return v;
  const double inf = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 4; ++i) {
    if (d == Dir::Down) {
      if (!less(x, up_.from_double(v))) return v;  // x >= RU(v) >= v
      v = std::nextafter(v, -inf);
    } else {
      if (!less(down_.from_double(v), x)) return v;  // x <= RD(v) <= v
      v = std::nextafter(v, inf);
    }
  }
  return d == Dir::Down ? -inf : inf;
}

// Besides the contexts' own errors: in a format without infinity an overflow gives NaN (fn, fnuz,
// e8m0: the nearest-even evaluator's value is NaN) or saturates to the largest finite value (finite
// formats, or a saturating conversion), neither of which bounds the real value.
std::string BinaryEndpoints::take_error() const {
  std::string a = down_.take_error(), b = up_.take_error();
  const uint32_t flags = down_.flags() | up_.flags();
  down_.clear_flags();
  up_.clear_flags();
  if (!a.empty()) return a;
  if (!b.empty()) return b;
  const BinaryFormat& f = format();
  if (f.has_inf() || (flags & (kFpOverflow | kFpSaturated)) == 0) return "";
  if ((flags & kFpSaturated) != 0 || f.encoding == Encoding::Finite)
    return "interval: overflow in " + f.name + " saturates to the largest finite value, which bounds nothing";
  return "interval: the value can be nan (overflow in " + f.name + " gives nan)";
}

}  // namespace denote
