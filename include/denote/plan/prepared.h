// Prepared kernels: the form of a handler that a compiled plan (denote/plan/compiled.h) runs without
// allocating. A handler may offer `prepare`: given the node, its parent shapes and the payload, once,
// it returns a kernel that writes its output into a buffer the plan owns, split into a fixed number
// of chunks (chosen from the shapes alone, never from the thread count, so the result does not depend
// on how many threads run the chunks), or nothing, and the plan calls the handler's ordinary form.
//
//   std::optional<PreparedKernel<float>> k = handler.prepare32(PrepareArgs<float>{node, shapes, payload, out});
//   for (int64_t c = 0; c < k->chunks; ++c) k->run(KernelCall<float>{inputs, out_ptr, c, scratch, &epilogue});
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "denote/ir/graph.h"
#include "denote/ir/payload.h"

namespace denote {

// An in-place elementwise function over n values: data[i] = f(data[i]).
template <class S>
using ArrayFn = void (*)(S* data, int64_t n);

// Pointwise stages applied, in order, to values a kernel has just written (fused epilogue).
// first_is_relu: stage 0 is relu (x > 0 or NaN ? x : +0); a kernel may apply it in registers and
// then run only the later stages (apply_after_relu); others simply call apply.
template <class S>
struct Epilogue {
  std::vector<ArrayFn<S>> stages;
  bool first_is_relu = false;
  void apply(S* data, int64_t n) const {
    for (ArrayFn<S> f : stages) f(data, n);
  }
  void apply_after_relu(S* data, int64_t n) const {
    for (size_t i = first_is_relu ? 1 : 0; i < stages.size(); ++i) stages[i](data, n);
  }
  bool empty() const { return stages.empty(); }
};

template <class S>
struct KernelCall {
  std::span<const S* const> in;  // the parents' values, dense row-major
  S* out;                        // the output buffer (numel(out_shape) values)
  int64_t chunk;                 // 0 <= chunk < PreparedKernel::chunks
  S* scratch;                    // PreparedKernel::scratch values owned by the running thread
  const Epilogue<S>* epilogue;   // applied by the kernel to every output value it writes
};

template <class S>
struct PreparedKernel {
  int64_t chunks = 1;              // independent pieces of work; each writes a disjoint part of out
  int64_t scratch = 0;             // values of per-thread scratch a chunk needs
  bool takes_epilogue = false;     // applies KernelCall::epilogue to what it writes (else it must be empty)
  ArrayFn<S> pointwise = nullptr;  // set by exact unary elementwise kernels: the node is out = f(in)
  bool is_relu = false;            // pointwise is relu (Epilogue::first_is_relu when fused first)
  std::function<void(const KernelCall<S>&)> run;
};

template <class S>
struct PrepareArgs {
  const Node& node;
  std::span<const Shape> parent_shapes;
  const Payload<S>& payload;
  const Shape& out_shape;
};

// nullopt: this node is not handled in prepared form (payload errors, an unusual layout, ...); the
// plan runs the handler's ordinary kernel for it instead.
template <class S>
using PrepareFn = std::optional<PreparedKernel<S>> (*)(const PrepareArgs<S>&);

}  // namespace denote
