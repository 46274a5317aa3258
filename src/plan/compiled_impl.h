// Internal: the data of a compiled plan (denote/plan/compiled.h). Values live in slots: the caller's
// inputs, constants evaluated at compile time, and temporaries; temporaries are assigned to arena
// buffers by liveness. Views (reshape, flatten, detach) share their parent's slot.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "denote/plan/compiled.h"
#include "base/thread_pool.h"

namespace denote {

enum class SlotKind : uint8_t { Input, Const, Temp };

struct Slot {
  SlotKind kind = SlotKind::Temp;
  int64_t index = 0;      // Input: input position; Const: index into consts; Temp: arena buffer
  int64_t size = 0;       // values
  int last_reader = -1;   // the last step that reads the slot
  bool pinned = false;    // an output: never reused
};

template <class S>
struct Step {
  std::string label;           // "linear[3] + relu[4]"
  std::string kernel;          // capsule name(s)
  int64_t out_node = 0;        // the last node of the fused group
  std::vector<int> in_slots;   // the parents' slots
  int out_slot = 0;
  PreparedKernel<S> prepared;  // run is empty for a generic step
  Epilogue<S> epilogue;
  // Generic steps: the handler's ordinary kernel on tensors copied from the slots.
  KernelFn<S> generic = nullptr;
  Node node;
  std::vector<Tensor<S>> parent_values;
  std::vector<const Tensor<S>*> parent_ptrs;
  std::vector<const S*> in_ptrs;  // filled per call
};

template <class S>
struct CompiledPlanImpl {
  Graph graph;  // the nodes (for error attribution and generic steps)
  Payload<S> payload;
  EvalOptions options;
  std::vector<int64_t> input_nodes;  // every input node, in id order
  std::vector<int64_t> outputs;      // output node ids
  std::vector<int> node_slot;        // per node: its slot, -1 when not needed
  std::vector<Slot> slots;
  std::vector<S*> slot_ptr;          // Const and Temp slots fixed at compile time; Input per call
  std::vector<std::vector<S>> consts;
  std::vector<std::vector<S>> buffers;
  std::vector<std::vector<S>> scratch;  // one per thread
  std::vector<Step<S>> steps;
  std::unique_ptr<detail::ThreadPool> pool;
  int threads = 1;

  // Checks input k against its node (shape, value count) and points its slots at `data`.
  Status bind_input(size_t k, std::span<const int64_t> shape, const S* data, size_t count);
  // Binds every input (by bind_input), then runs every step.
  template <class In>
  Status run(std::span<const In> inputs);
  Status run_step(Step<S>& st);
  Status run_generic(Step<S>& st);
};

}  // namespace denote
