// Internal: the ONNX importer's state (value table by name, IR emission with shape inference,
// numpy broadcasting) shared by the op-mapping files src/io/onnx_map_*.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "denote/base/status.h"
#include "denote/io/onnx.h"
#include "denote/ir/model.h"

namespace denote::onnxio {

// Largest element count of a tensor read from the file (its data must also be present in full,
// which protobuf's 2 GiB message limit bounds) and of a constant the importer synthesizes
// (ConstantOfShape, padding blocks, masks), which has no data in the file to bound it.
inline constexpr int64_t kMaxImportElements = int64_t{1} << 31;
inline constexpr int64_t kMaxSynthesizedElements = int64_t{1} << 24;

// A tensor known at import time (initializer, Constant, folded shape arithmetic).
struct HostTensor {
  Shape shape;
  std::vector<double> values;  // always filled
  std::vector<int64_t> ints;   // exact values for integer and bool element types
  int32_t dtype = onnx::TensorProto::DOUBLE;
  bool is_int() const;
};

std::string dtype_name(int32_t data_type);
bool is_real_dtype(int32_t data_type);  // FLOAT or DOUBLE
Result<HostTensor> tensor_from_proto(const onnx::TensorProto& t);
// A host tensor of integer values (shape outputs and the like): dtype INT64.
HostTensor int_tensor(Shape shape, std::vector<int64_t> ints);

// Product of s[from:to]: 0 when any of those dims is 0, INT64_MAX when it overflows (a suffix of
// a valid shape such as [0, 2^40, 2^40] can).
inline int64_t dims_product(const Shape& s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (s[i] == 0) return 0;
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    if (__builtin_mul_overflow(p, s[i], &p)) return INT64_MAX;
  return p;
}

// Shape `a` and `b` broadcast to, numpy rules; nullopt when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

class Importer {
 public:
  Importer(int64_t opset, const OnnxImportOptions& options) : opset_(opset), options_(options) {}

  int64_t opset() const { return opset_; }
  const OnnxImportOptions& options() const { return options_; }
  Model& model() { return model_; }

  // The ONNX node being mapped (for messages and operand lookup).
  void begin_node(const onnx::NodeProto* node, size_t index) {
    node_ = node;
    index_ = index;
  }
  const onnx::NodeProto& node() const { return *node_; }
  size_t node_index() const { return index_; }
  // "onnx: node 3 ('fc1', Gemm): MESSAGE"
  Status fail(const std::string& message) const;
  // Charges n elements that the import creates without data in the file (what: for the message);
  // an error once one tensor is over 2^24 or all of them over options().max_synthesized_elements.
  Status synthesize(int64_t n, std::string_view what);

  // Operands of the current node (an empty name is an absent optional input).
  int input_count() const { return node_->input_size(); }
  bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
  // The IR node of input i; constants are materialized as const nodes (once per name).
  Result<int64_t> input(int i);
  // The import-time value of input i, or nullptr when it is computed by the graph.
  const HostTensor* const_input(int i) const;
  // Binds output i of the current node (an absent output is skipped).
  Status set_output(int i, int64_t id);
  Status set_output_const(int i, HostTensor t);
  // Whether output i is requested (present and non-empty).
  bool wants_output(int i) const { return i < node_->output_size() && !node_->output(i).empty(); }
  // How many node inputs and graph outputs read `name`.
  int64_t use_count(const std::string& name) const;

  // Appends an IR node; its shape is inferred unless `declared` is given. Errors name the node.
  Result<int64_t> emit(Op op, std::vector<int64_t> parents, Attrs attrs = NoAttrs{},
                       std::optional<Shape> declared = {});
  Result<int64_t> emit_const(const HostTensor& t);
  Result<int64_t> emit_scalar(double v, const Shape& shape);  // a constant of `shape` filled with v
  const Shape& shape(int64_t id) const { return model_.graph.nodes[static_cast<size_t>(id)].out_shape; }

  Result<int64_t> broadcast(int64_t id, const Shape& to);
  Result<int64_t> reshape(int64_t id, const Shape& to);
  // Binary elementwise op with numpy broadcasting (explicit broadcast_to nodes).
  Result<int64_t> binary(Op op, int64_t a, int64_t b);

  // Graph-level bookkeeping used by the driver.
  Status define_const(const std::string& name, HostTensor t, const std::string& what);
  Status define_node(const std::string& name, int64_t id, const std::string& what);
  bool defined(const std::string& name) const { return values_.count(name) != 0; }
  Result<int64_t> value_node(const std::string& name);  // materializes a constant
  void count_uses(const onnx::GraphProto& g);

  // MatMul nodes mapped to linear with a zero bias that a following Add may fill (node id).
  std::set<int64_t> fusable_linear;
  // Typed import (onnx_typed.cc): graph inputs of every element type are accepted, their ONNX
  // element types and every const node's tensor are recorded; node_types caches the element type
  // of each IR node (filled by onnx_typed.cc).
  bool typed = false;
  std::map<int64_t, int32_t> input_types;
  std::map<int64_t, HostTensor> const_tensors;
  std::vector<int32_t> node_types;
  // How many value names are bound to IR node `id` (aliases: Identity, no-op reshapes ...).
  int64_t names_of(int64_t id) const {
    auto it = names_per_node_.find(id);
    return it == names_per_node_.end() ? 0 : it->second;
  }

 private:
  struct Value {
    int64_t node = -1;
    std::optional<HostTensor> constant;
  };
  Status define(const std::string& name, Value v, const std::string& what);

  int64_t opset_;
  OnnxImportOptions options_;
  Model model_;
  std::map<std::string, Value> values_;
  std::map<std::string, int64_t> uses_;
  std::map<int64_t, int64_t> names_per_node_;
  const onnx::NodeProto* node_ = nullptr;
  size_t index_ = 0;
  int64_t synthesized_ = 0;
};

// --- attributes of the current node
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name);
Result<int64_t> attr_int(const Importer& im, std::string_view name, int64_t fallback);
Result<double> attr_float(const Importer& im, std::string_view name, double fallback);
Result<std::vector<int64_t>> attr_ints(const Importer& im, std::string_view name);  // empty if absent
Result<std::string> attr_string(const Importer& im, std::string_view name, std::string fallback);
// Normalizes a possibly negative axis against `rank`; an error naming the attribute otherwise.
Result<int64_t> norm_axis(const Importer& im, int64_t axis, size_t rank, std::string_view what);

// --- the erf form of GELU (onnx_fuse.cc): node `final_node` computes gelu(x); `members` are the
// other nodes of the pattern, whose outputs have no use outside it.
struct GeluMatch {
  int final_node = -1;
  std::string x;
  std::vector<int> members;
};
std::vector<GeluMatch> find_gelu_patterns(const onnx::GraphProto& g);

// --- op mappers: one function per ONNX op type
using MapFn = Status (*)(Importer&);
struct MapEntry {
  std::string_view op_type;
  MapFn fn;
};
std::vector<MapEntry> basic_mappers();   // onnx_map_basic.cc
std::vector<MapEntry> layout_mappers();  // onnx_map_layout.cc
std::vector<MapEntry> nn_mappers();      // onnx_map_nn.cc
std::vector<MapEntry> act_mappers();     // onnx_map_act.cc
std::vector<MapEntry> index_mappers();   // onnx_map_index.cc
std::vector<MapEntry> select_mappers();  // onnx_map_select.cc
// The 1:1 mappers generated from ops.def's onnx column (onnx_direct ops; onnx_map_basic.cc); a
// hand-written mapper of the same ONNX op type takes precedence.
std::vector<MapEntry> direct_mappers();
// The mapper of a default-domain op type, nullptr when unmapped.
MapFn find_mapper(std::string_view op_type);

// The mapper of a two-input elementwise ONNX op onto IR op kOp (broadcasting made explicit by
// Importer::binary); shared by the float and the typed import.
template <Op kOp>
Status map_binary(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(kOp, a, b));
  return im.set_output(0, y);
}

// The ONNX element type the typed import gives IR node `id` (onnx_typed.cc): input / const types
// as recorded, a cast's target, else parent 0's.
Result<int32_t> typed_value_type(Importer& im, int64_t id);

// The import driver (onnx_read.cc), shared with the typed import: parse, opset, op support, name
// checks, then initializers, graph inputs, nodes and outputs. With `dispatch` set (typed import)
// every node is mapped by it, `extra_ops` are accepted besides the table's, and Importer::typed is
// set before the inputs are read.
Result<std::unique_ptr<Importer>> import_graph(std::string_view bytes, const OnnxImportOptions& options,
                                               MapFn dispatch = nullptr, const std::set<std::string>& extra_ops = {});

}  // namespace denote::onnxio
