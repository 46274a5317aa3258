// Internal: a vector whose elements are computed by index and written once. `data.resize(n)` then a
// loop writes every element twice (value-initialisation, then the value): at a 1024 x 256 f64 tensor
// that first pass is 2 MB of stores per rule (about 1% of a batch-1024 mnistfc gradient each for
// relu's forward and backward rule). generated_values constructs the elements in place from f(i).
//
//   std::vector<double> y = generated_values<double>(x.size(), [&](size_t i) { return x[i] * 2; });
#pragma once

#include <cstddef>
#include <iterator>
#include <vector>

namespace denote::rules {

// A random-access iterator over f(0), f(1), ...: std::vector's range constructor takes the distance
// once, allocates, and constructs each element from *it (no value-initialisation first).
template <class S, class F>
struct IndexIterator {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = S;
  using difference_type = std::ptrdiff_t;
  using pointer = const S*;
  using reference = S;  // a prvalue: each element is computed when read

  std::ptrdiff_t i = 0;
  F* f = nullptr;

  S operator*() const { return (*f)(static_cast<size_t>(i)); }
  S operator[](std::ptrdiff_t k) const { return (*f)(static_cast<size_t>(i + k)); }
  IndexIterator& operator++() {
    ++i;
    return *this;
  }
  IndexIterator operator++(int) {
    IndexIterator t = *this;
    ++i;
    return t;
  }
  IndexIterator& operator--() {
    --i;
    return *this;
  }
  IndexIterator& operator+=(std::ptrdiff_t k) {
    i += k;
    return *this;
  }
  IndexIterator& operator-=(std::ptrdiff_t k) {
    i -= k;
    return *this;
  }
  friend IndexIterator operator+(IndexIterator a, std::ptrdiff_t k) { return a += k; }
  friend IndexIterator operator-(IndexIterator a, std::ptrdiff_t k) { return a -= k; }
  friend std::ptrdiff_t operator-(const IndexIterator& a, const IndexIterator& b) { return a.i - b.i; }
  friend bool operator==(const IndexIterator& a, const IndexIterator& b) { return a.i == b.i; }
  friend auto operator<=>(const IndexIterator& a, const IndexIterator& b) { return a.i <=> b.i; }
};

// n elements, element i = f(i), each written once.
template <class S, class F>
std::vector<S> generated_values(size_t n, F&& f) {
  using Fn = std::remove_reference_t<F>;
  IndexIterator<S, Fn> first{0, &f}, last{static_cast<std::ptrdiff_t>(n), &f};
  return std::vector<S>(first, last);
}

}  // namespace denote::rules
