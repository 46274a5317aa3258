// Every public entry point that takes a graph either checks it or returns an error: a model that was
// never checked (wrong attrs kind, wrong arity, forward or out-of-range parents, ids that are not
// indices, declared shapes that disagree, absurd sizes) gives an error value, never a crash, an
// exception or an out-of-bounds access (the sanitizer build runs this too).
#include <gtest/gtest.h>

#include "denote/bounds/ibp.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"
#include "denote/io/text.h"
#include "denote/typed/interp.h"

namespace denote {
namespace {

// Input [2] followed by one malformed node.
Model with(Node bad) {
  Model m;
  m.graph.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  m.graph.nodes.push_back(std::move(bad));
  m.output_ids = {1};
  return m;
}

std::vector<Model> malformed() {
  return {
      with(Node{1, {0}, Op::Relu, AxisAttrs{3}, {2}}),                     // attrs of the wrong kind
      with(Node{1, {0}, Op::Softmax, NoAttrs{}, {2}}),                     // attrs missing
      with(Node{1, {0, 0, 0}, Op::Relu, NoAttrs{}, {2}}),                  // arity
      with(Node{1, {}, Op::Add, NoAttrs{}, {2}}),                          // arity (none)
      with(Node{1, {5}, Op::Relu, NoAttrs{}, {2}}),                        // parent out of range
      with(Node{1, {1}, Op::Relu, NoAttrs{}, {2}}),                        // self reference
      with(Node{1, {-1}, Op::Relu, NoAttrs{}, {2}}),                       // negative parent
      with(Node{7, {0}, Op::Relu, NoAttrs{}, {2}}),                        // id is not the index
      with(Node{1, {0}, Op::Relu, NoAttrs{}, {3}}),                        // declared shape disagrees
      with(Node{1, {0}, Op::Relu, NoAttrs{}, {-2}}),                       // negative dimension
      with(Node{1, {0}, Op::Transpose, TransposeAttrs{0, 9}, {2}}),        // axis out of range
      with(Node{1, {0}, Op::Permute, PermAttrs{{3, 1}}, {2}}),             // not a permutation
      with(Node{1, {0}, Op::Reshape, ReshapeAttrs{{2}, {int64_t{1} << 40, 1 << 30}}, {int64_t{1} << 40, 1 << 30}}),
      with(Node{1, {0}, Op::Concat, AxisAttrs{4}, {4}}),                   // arity and axis
  };
}

// Shape-valid graphs that cannot run: too large to evaluate, or without their payload.
std::vector<Model> unrunnable() {
  return {
      with(Node{1, {0}, Op::BroadcastTo, BroadcastAttrs{{2}, {1 << 30, 1 << 30, 2}}, {1 << 30, 1 << 30, 2}}),
      with(Node{1, {0}, Op::Linear, NoAttrs{}, {4}}),
  };
}

TEST(UncheckedApi, EveryEntryPointReturnsAnErrorNotACrash) {
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {0.5, -1.0})};
  const std::vector<DoubleBox> box = {DoubleBox{{2}, {0.0, -1.0}, {1.0, 0.0}}};
  int k = 0;
  for (const Model& m : malformed()) {
    SCOPED_TRACE(k++);
    EXPECT_FALSE(check_shapes(m.graph).ok());
    EXPECT_FALSE(diagnose(m.graph).empty());
    F64Context f64;
    EXPECT_FALSE(denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), f64).ok());
    EXPECT_FALSE(denote(m.graph, m.payload, std::span<const Tensor<double>>(in), 1, f64).ok());
    const auto ibp = run_ibp_double(m.graph, m.payload, box, "f32");
    // IBP either refuses the graph or gives the bad node no box.
    if (ibp.ok()) EXPECT_FALSE(ibp->boxes.back().has_value());
    EXPECT_FALSE(write_model_onnx(m).ok());
    TypedModel tm{m, {{0, *typed::parse_dtype("int(8)")}}, {}};
    const std::vector<typed::TypedTensor> words = {
        *typed::load(tm.input_dtypes[0], {2}, std::vector<Word>{Word::of(1), Word::of(2)})};
    EXPECT_FALSE(typed::eval_typed(tm, words).ok());
    // Printing and the JSON writer describe what is there, whatever it is.
    EXPECT_FALSE(format_listing(m.graph).empty());
    EXPECT_FALSE(format_dot(m.graph).empty());
    EXPECT_FALSE(write_model_json(m).empty());
  }
}

TEST(UncheckedApi, ShapeValidButUnrunnableGraphsGiveErrors) {
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {0.5, -1.0})};
  const std::vector<DoubleBox> box = {DoubleBox{{2}, {0.0, -1.0}, {1.0, 0.0}}};
  int k = 0;
  for (const Model& m : unrunnable()) {
    SCOPED_TRACE(k++);
    EXPECT_TRUE(check_shapes(m.graph).ok());
    F64Context f64;
    auto r = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), f64);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().node(), 1);
    // IBP: a missing payload leaves the node without a box (a note); a value over the limits
    // stops the run with a resource error naming the node.
    const auto ibp = run_ibp_double(m.graph, m.payload, box, "f64");
    if (k == 1) {
      EXPECT_EQ(ibp.status().code(), ErrorCode::kResource);
      EXPECT_EQ(ibp.status().node(), 1);
      continue;
    }
    ASSERT_TRUE(ibp.ok()) << ibp.message();
    EXPECT_FALSE(ibp->boxes[1].has_value());
    EXPECT_FALSE(ibp->notes[1].empty());
  }
}

TEST(UncheckedApi, HugeDeclaredShapesAreRefusedBeforeAllocating) {
  // A const declared with 2^40 elements and no payload: an error naming the node, no allocation.
  Model m;
  m.graph.nodes.push_back(Node{0, {}, Op::Const, ValueShapeAttrs{{int64_t{1} << 40}}, {int64_t{1} << 40}});
  m.output_ids = {0};
  F64Context f64;
  auto r = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(), f64);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().node(), 0);
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
}

}  // namespace
}  // namespace denote
