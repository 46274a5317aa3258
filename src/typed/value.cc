#include "denote/typed/value.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "denote/scalar/binary_context.h"

#include "typed/gmp_util.h"

namespace denote::typed {

Status check_word(const DType& t, const Word& w) {
  DENOTE_RETURN_IF_ERROR(supported(t));
  if (w.bit_length() > bit_width(t))
    return error_status(
        fmt::format("word {} has bits above the {}-bit width of {}", to_hex(w), bit_width(t), dtype_name(t)));
  return ok_status();
}

Result<Element> read(const DType& t, const Word& w) {
  DENOTE_RETURN_IF_ERROR(check_word(t, w));
  Element e;
  switch (t.kind) {
    case DKind::Binary: e.fp = w.low(); return e;
    case DKind::Bool: e.truth = w.low() != 0; return e;
    case DKind::Int: break;
  }
  const bool top = w.bit_length() == t.width;
  if (!t.is_signed || !top) {
    e.magnitude = w;
    return e;
  }
  gmp::Int z;  // 2^width - w
  gmp::from_limbs(z.z, w.limbs);
  gmp::Int p;
  mpz_setbit(p.z, static_cast<mp_bitcnt_t>(t.width));
  mpz_sub(z.z, p.z, z.z);
  e.negative = true;
  e.magnitude = gmp::to_word(z);
  return e;
}

Result<Word> write(const DType& t, const Element& e) {
  DENOTE_RETURN_IF_ERROR(supported(t));
  switch (t.kind) {
    case DKind::Binary: {
      const Word w = Word::of(e.fp);
      DENOTE_RETURN_IF_ERROR(check_word(t, w));
      return w;
    }
    case DKind::Bool: return Word::of(e.truth ? 1 : 0);
    case DKind::Int: break;
  }
  gmp::Int z;
  gmp::from_limbs(z.z, e.magnitude.limbs);
  if (e.negative) mpz_neg(z.z, z.z);
  if (!gmp::fits(z.z, t.width, t.is_signed))
    return error_status(fmt::format("value {}{} is out of the range of {}", e.negative ? "-" : "",
                                    to_hex(e.magnitude), dtype_name(t)));
  std::vector<uint64_t> limbs(limb_count(t), 0);
  gmp::to_twos(z.z, t.width, limbs);
  return Word::from_limbs(std::move(limbs));
}

int64_t TypedTensor::size() const { return static_cast<int64_t>(limbs.size() / limb_count(dtype)); }

std::span<const uint64_t> TypedTensor::element(int64_t i) const {
  const size_t l = limb_count(dtype);
  return std::span<const uint64_t>(limbs).subspan(static_cast<size_t>(i) * l, l);
}

std::span<uint64_t> TypedTensor::element(int64_t i) {
  const size_t l = limb_count(dtype);
  return std::span<uint64_t>(limbs).subspan(static_cast<size_t>(i) * l, l);
}

namespace {
// The dtype is supported and the shape holds exactly `count` elements.
Status check_load(const DType& t, const Shape& shape, size_t count) {
  DENOTE_RETURN_IF_ERROR(supported(t));
  auto n = checked_numel(shape);
  if (!n.ok()) return error_status(fmt::format("shape {}: {}", to_string(shape), n.message()));
  if (static_cast<uint64_t>(*n) != count)
    return error_status(fmt::format("shape {} has {} elements, got {} words", to_string(shape), *n, count));
  return ok_status();
}
}  // namespace

Result<TypedTensor> load(const DType& t, const Shape& shape, std::span<const Word> words) {
  DENOTE_RETURN_IF_ERROR(check_load(t, shape, words.size()));
  const size_t l = limb_count(t);
  if (words.size() > 0 && l > (size_t{1} << 40) / words.size())
    return error_status(fmt::format("{} words of {} are too large to hold", words.size(), dtype_name(t)));
  TypedTensor out{t, shape, std::vector<uint64_t>(words.size() * l, 0)};
  for (size_t i = 0; i < words.size(); ++i) {
    if (Status s = check_word(t, words[i]); !s.ok()) return error_status(fmt::format("word {}: {}", i, s.message()));
    for (size_t k = 0; k < words[i].limbs.size(); ++k) out.limbs[i * l + k] = words[i].limbs[k];
  }
  return out;
}

Result<TypedTensor> load_narrow(const DType& t, const Shape& shape, std::vector<uint64_t> values) {
  DENOTE_RETURN_IF_ERROR(check_load(t, shape, values.size()));
  if (limb_count(t) != 1)
    return error_status(fmt::format("{} needs {} limbs an element, not one", dtype_name(t), limb_count(t)));
  const int64_t width = bit_width(t);
  const uint64_t high = width >= 64 ? 0 : ~uint64_t{0} << width;  // bits above the width
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] & high) {
      if (Status s = check_word(t, Word::of(values[i])); !s.ok())
        return error_status(fmt::format("word {}: {}", i, s.message()));
    }
  return TypedTensor{t, shape, std::move(values)};
}

Word word_at(const TypedTensor& t, int64_t i) {
  const auto e = t.element(i);
  return Word::from_limbs(std::vector<uint64_t>(e.begin(), e.end()));
}

std::vector<Word> words(const TypedTensor& t) {
  std::vector<Word> out;
  out.reserve(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) out.push_back(word_at(t, i));
  return out;
}

std::string format_element(const DType& t, const Word& w) {
  switch (t.kind) {
    case DKind::Bool: return w.low() != 0 ? "true" : "false";
    case DKind::Binary: {
      const double v = BinaryContext(t.format).to_double(FpWord{w.low()});
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      return fmt::format("{}", v);
    }
    case DKind::Int: break;
  }
  gmp::Int z;
  std::vector<uint64_t> limbs(limb_count(t), 0);
  for (size_t k = 0; k < w.limbs.size() && k < limbs.size(); ++k) limbs[k] = w.limbs[k];
  gmp::from_twos(z.z, limbs, t.width, t.is_signed);
  std::string out(mpz_sizeinbase(z.z, 10) + 2, '\0');
  mpz_get_str(out.data(), 10, z.z);
  out.resize(std::strlen(out.c_str()));
  return out;
}

}  // namespace denote::typed
