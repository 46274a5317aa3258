// Typed element values and tensors: decoding a word (`read`), encoding it again (`write`), loading
// a tensor from complete element words (`load`) and getting them back (`words`). Decoding never
// truncates: a word with bits above the dtype's width is an error. write(read(w)) == w for every
// accepted word (NaN payloads, signed zeros and integer bits are kept).
//
//   DType i8 = DType::integer(8, true);
//   Result<Element> e = typed::read(i8, Word::of(0xff));   // negative = true, magnitude = 1
//   typed::write(i8, *e) == Word::of(0xff);
//   Result<TypedTensor> t = typed::load(i8, {2}, {Word::of(1), Word::of(0x80)});
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/tensor/shape.h"
#include "denote/typed/dtype.h"

namespace denote::typed {

// A decoded element: a binary value's encoding, a bool, or an integer's exact value
// (-1)^negative * magnitude (negative is false for zero).
struct Element {
  uint64_t fp = 0;
  bool truth = false;
  bool negative = false;
  Word magnitude;
  bool operator==(const Element&) const = default;
};

// An error naming the word and the width when w has bits above bit_width(t).
Status check_word(const DType& t, const Word& w);
Result<Element> read(const DType& t, const Word& w);
// The element's word; an error when the value has no encoding in t (an integer out of range).
Result<Word> write(const DType& t, const Element& e);

// A tensor of one dtype: limb_count(dtype) limbs per element, row-major, every word within the
// width (bits above it are zero).
struct TypedTensor {
  DType dtype;
  Shape shape;
  std::vector<uint64_t> limbs;

  int64_t size() const;
  std::span<const uint64_t> element(int64_t i) const;
  std::span<uint64_t> element(int64_t i);
  bool operator==(const TypedTensor&) const = default;
};

// Checks the dtype is supported, the shape's element count (overflow-checked) equals the word
// count and every word's range; errors name the word index.
Result<TypedTensor> load(const DType& t, const Shape& shape, std::span<const Word> words);
// The same for a dtype of at most 64 bits (limb_count 1) from one value per element, without a
// Word per element (the ONNX typed import's constants: 2^16 small allocations otherwise).
Result<TypedTensor> load_narrow(const DType& t, const Shape& shape, std::vector<uint64_t> values);
// The complete element words of a tensor.
std::vector<Word> words(const TypedTensor& t);
// Element i's word.
Word word_at(const TypedTensor& t, int64_t i);

// A valid word's value as text: an int in decimal ("-128"), "true"/"false", a binary value as the
// shortest double that reads back to it ("nan", "inf", "-0" included; formats wider than binary64
// are rounded to nearest binary64 first).
std::string format_element(const DType& t, const Word& w);

}  // namespace denote::typed
