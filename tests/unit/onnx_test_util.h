// Test helper: builds small ONNX ModelProtos in code (graph inputs, initializers, nodes with
// attributes) and serializes them, so importer tests state their model next to their checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "denote/tensor/shape.h"

namespace denote::testing {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 17) {
    m_.set_ir_version(8);
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  onnx::GraphProto* graph() { return m_.mutable_graph(); }
  onnx::ModelProto& proto() { return m_; }

  void input(const std::string& name, const Shape& shape, int32_t elem = onnx::TensorProto::FLOAT) {
    typed(graph()->add_input(), name, shape, elem);
  }
  void output(const std::string& name) { graph()->add_output()->set_name(name); }
  void output(const std::string& name, const Shape& shape, int32_t elem = onnx::TensorProto::FLOAT) {
    typed(graph()->add_output(), name, shape, elem);
  }
  void init(const std::string& name, const Shape& shape, const std::vector<float>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void init_ints(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }
  std::string bytes() const { return m_.SerializeAsString(); }

  static void attr(onnx::NodeProto* n, const std::string& key, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_f(onnx::NodeProto* n, const std::string& key, float v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

 private:
  static void typed(onnx::ValueInfoProto* v, const std::string& name, const Shape& shape, int32_t elem) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    for (int64_t d : shape) s->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto m_;
};

// The import error of `bytes` (a test failure when the import succeeds).
inline std::string error_of(const std::string& bytes) {
  auto m = read_model_onnx(bytes);
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.message();
}

// x[2] -> Relu -> y: the smallest valid model, for tests that break one thing in it.
inline OnnxBuilder relu_model() {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"}, "r");
  b.output("y");
  return b;
}

}  // namespace denote::testing
