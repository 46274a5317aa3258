// Payload<S>: the parameters of a graph, keyed by node id and kept apart from the node array, so
// one graph runs with trained, initial, interval or low-precision parameters. Every lookup is
// absent by default. `convert_payload` re-reads a payload in another scalar.
//
//   Payload<double> p;
//   p.linear[1] = LinearRecord<double>{5, 4, W1, b1};   // W row-major [out, in] (PyTorch layout)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <map>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/attrs.h"
#include "denote/tensor/tensor.h"

namespace denote {

template <class S>
struct ConstRecord {
  std::vector<S> values;  // flat row-major; length must equal the element count of value_shape
  bool operator==(const ConstRecord&) const = default;
};

template <class S>
struct LinearRecord {
  int64_t out_dim = 0, in_dim = 0;
  std::vector<S> weight;  // [out_dim, in_dim] row-major
  std::vector<S> bias;    // [out_dim]
  bool operator==(const LinearRecord&) const = default;
};

template <class S>
struct ConvRecord {
  ConvConfig config;     // must equal the node's ConvConfig exactly
  Shape input_spatial;   // the spatial extents the weights were prepared for
  std::vector<S> weight; // [out, in/groups, k1..kd] row-major
  std::vector<S> bias;   // [out]
  bool operator==(const ConvRecord&) const = default;
};

template <class S>
struct BatchNormRecord {
  std::vector<S> gamma, beta, mean, var;  // each [channels]
  double eps = 1e-5;
  bool operator==(const BatchNormRecord&) const = default;
};

template <class S>
struct LayerNormRecord {
  Shape normalized_shape;
  std::vector<S> gamma, beta;  // each numel(normalized_shape)
  double eps = 1e-5;
  bool operator==(const LayerNormRecord&) const = default;
};

// A custom node's body: computes output element `index` from the parent values.
template <class S>
using CustomBody = std::function<Result<S>(std::span<const Tensor<S>* const> inputs, int64_t index)>;

template <class S>
struct Payload {
  std::map<int64_t, ConstRecord<S>> consts;
  std::map<int64_t, LinearRecord<S>> linear;
  std::map<int64_t, ConvRecord<S>> conv;
  std::map<int64_t, BatchNormRecord<S>> batch_norm;
  std::map<int64_t, LayerNormRecord<S>> layernorm;
  std::map<int64_t, CustomBody<S>> custom;  // not serialized

  bool operator==(const Payload& o) const {
    return consts == o.consts && linear == o.linear && conv == o.conv && batch_norm == o.batch_norm &&
           layernorm == o.layernorm && custom.size() == o.custom.size();
  }
};

template <class K, class V>
const V* find_record(const std::map<K, V>& m, const K& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

// Maps every stored value through `f` (e.g. double -> interval, double -> binary16 word).
// Custom bodies are not convertible and are dropped.
template <class T, class S, class F>
Payload<T> convert_payload(const Payload<S>& p, F&& f) {
  auto vec = [&](const std::vector<S>& v) {
    std::vector<T> out;
    out.reserve(v.size());
    for (const S& x : v) out.push_back(f(x));
    return out;
  };
  Payload<T> q;
  for (const auto& [id, r] : p.consts) q.consts[id] = {vec(r.values)};
  for (const auto& [id, r] : p.linear) q.linear[id] = {r.out_dim, r.in_dim, vec(r.weight), vec(r.bias)};
  for (const auto& [id, r] : p.conv) q.conv[id] = {r.config, r.input_spatial, vec(r.weight), vec(r.bias)};
  for (const auto& [id, r] : p.batch_norm)
    q.batch_norm[id] = {vec(r.gamma), vec(r.beta), vec(r.mean), vec(r.var), r.eps};
  for (const auto& [id, r] : p.layernorm) q.layernorm[id] = {r.normalized_shape, vec(r.gamma), vec(r.beta), r.eps};
  return q;
}

}  // namespace denote
