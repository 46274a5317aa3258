// BinaryContext: the scalar context of a software binary format; see binary_context.h.
#include "denote/scalar/binary_context.h"

#include <fmt/format.h>

#include <utility>

#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_tables.h"
#include "base/thread_pool.h"

namespace denote {

Result<BinaryFormat> parse_cast_target(std::string_view dtype) {
  if (dtype == "f32") return binary32_format();
  if (dtype == "f64") return binary64_format();
  if (dtype == "bool" || dtype.starts_with("int") || dtype.starts_with("uint"))
    return error_status(fmt::format("cast: {} is not a binary format (casts to integer and bool dtypes run in "
                                    "typed execution: docs/TYPED.md)",
                                    dtype));
  return parse_format(dtype);
}

BinaryContext::BinaryContext(BinaryFormat format, Rounding rounding) : format_(std::move(format)) {
  env_.rounding = rounding;
  FpEnv scratch{rounding, 0, {}};
  zero_ = zero_word(format_, false);
  one_ = fp_from_int(format_, scratch, 1);
  fast_ = FastFormat::of(format_);
}

uint64_t BinaryContext::function(int fn, uint64_t a) const {
  const auto f = static_cast<FpFunction>(fn);
  const int bits = format_.storage_bits();
  if (bits > 16) return fp_function(f, format_, env_, a);
  const FunctionTable*& t = tables_[static_cast<size_t>(fn)];
  // Filling costs 2^bits evaluations: worth it once this context has made 1/8 of them.
  if (!t && ++calls_[static_cast<size_t>(fn)] > (uint32_t{1} << bits) / 8)
    t = function_table(f, format_, env_.rounding);
  return t ? table_lookup(*t, format_, env_, a) : fp_function(f, format_, env_, a);
}

std::string BinaryContext::take_error() const { return std::exchange(env_.error, std::string()); }

FpWord BinaryContext::from_double(double x) const { return {fp_from_double(format_, env_, x)}; }

void BinaryContext::set_threads(int threads) {
  pool_ = threads > 1 ? std::make_shared<detail::ThreadPool>(threads < 256 ? threads : 256) : nullptr;
}
int BinaryContext::threads() const { return pool_ ? pool_->threads() : 1; }

double BinaryContext::to_double(Scalar x) const {
  const bool fits = format_.precision() <= 53 && format_.emax() <= 1023 && format_.emin() - format_.frac_bits >= -1074;
  if (fits) return word_to_double(format_, x.bits);
  FpEnv scratch{Rounding::NearestEven, 0, {}};
  const BinaryFormat b64 = binary64_format();
  return word_to_double(b64, fp_convert(format_, b64, scratch, x.bits));
}

FpWord BinaryContext::relu(Scalar a) const {
  if (is_nan(a)) return max(a, a);  // quiets it; invalid for a signaling NaN
  if (format_.encoding == Encoding::E8m0) return a;  // every e8m0 value is positive
  return log_domain_ok(a) ? a : zero();
}

bool BinaryContext::log_domain_ok(Scalar a) const {
  const FloatClass c = classify(format_, a.bits);
  return c != FloatClass::QuietNaN && c != FloatClass::SignalingNaN && c != FloatClass::Zero &&
         !sign_bit(format_, a.bits);
}

FpWord BinaryContext::exp(Scalar a) const { return {function(static_cast<int>(FpFunction::Exp), a.bits)}; }
FpWord BinaryContext::log(Scalar a) const { return {function(static_cast<int>(FpFunction::Log), a.bits)}; }
FpWord BinaryContext::log1p(Scalar a) const { return {function(static_cast<int>(FpFunction::Log1p), a.bits)}; }
FpWord BinaryContext::tanh(Scalar a) const { return {function(static_cast<int>(FpFunction::Tanh), a.bits)}; }
FpWord BinaryContext::sigmoid(Scalar a) const { return {function(static_cast<int>(FpFunction::Sigmoid), a.bits)}; }
FpWord BinaryContext::rsqrt(Scalar a) const { return {function(static_cast<int>(FpFunction::Rsqrt), a.bits)}; }
FpWord BinaryContext::erf(Scalar a) const { return {function(static_cast<int>(FpFunction::Erf), a.bits)}; }
FpWord BinaryContext::gelu(Scalar a) const { return {function(static_cast<int>(FpFunction::Gelu), a.bits)}; }
FpWord BinaryContext::sin(Scalar a) const { return {function(static_cast<int>(FpFunction::Sin), a.bits)}; }
FpWord BinaryContext::cos(Scalar a) const { return {function(static_cast<int>(FpFunction::Cos), a.bits)}; }
FpWord BinaryContext::softplus(Scalar a) const { return {function(static_cast<int>(FpFunction::Softplus), a.bits)}; }
FpWord BinaryContext::pow(Scalar a, Scalar b) const { return {fp_pow(format_, env_, a.bits, b.bits)}; }
FpWord BinaryContext::div_trunc(Scalar a, Scalar b) const { return {fp_div_trunc(format_, env_, a.bits, b.bits)}; }
FpWord BinaryContext::div_floor(Scalar a, Scalar b) const { return {fp_div_floor(format_, env_, a.bits, b.bits)}; }
FpWord BinaryContext::remainder(Scalar a, Scalar b) const { return {fp_remainder(format_, env_, a.bits, b.bits)}; }

bool BinaryContext::can_cast(std::string_view dtype, std::string_view rounding) const {
  const std::optional<Rounding> r = parse_rounding(rounding);
  if (!r || !parse_cast_target(dtype).ok()) return false;
  return true;
}

FpWord BinaryContext::cast(Scalar a, std::string_view dtype, std::string_view rounding) const {
  const std::optional<Rounding> r = parse_rounding(rounding);
  auto target = parse_cast_target(dtype);
  if (!r || !target.ok()) {
    if (env_.error.empty())
      env_.error = !target.ok() ? target.message() : fmt::format("cast: unknown rounding mode '{}'", rounding);
    env_.flags |= kFpInvalid;
    return nan();
  }
  return cast(a, *target, *r);
}

FpWord BinaryContext::cast(Scalar a, const BinaryFormat& target, Rounding rounding) const {
  FpEnv to_env{rounding, 0, {}};
  const uint64_t w = fp_convert(format_, target, to_env, a.bits);
  env_.flags |= to_env.flags;
  if (env_.error.empty()) env_.error = to_env.error;
  return {fp_convert(target, format_, env_, w)};
}


}  // namespace denote
