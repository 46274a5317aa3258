// parse_model_json_with_arrays (include/denote/io/json_arrays.h): tensor fields named {"array": k} read
// the k-th array, the same model as the values listed inline; every malformed reference is an error
// naming the node and field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/io/json.h"
#include "denote/io/json_arrays.h"

namespace denote {
namespace {

// A 3 -> 2 linear layer then a constant added; `weight` and `values` are the fields' JSON text.
std::string doc(const std::string& weight, const std::string& values) {
  return R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [3], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": [3]},
    {"id": 1, "kind": "linear", "parents": [0], "shape": [2], "out_dim": 2, "in_dim": 3, "weight": )" +
         weight + R"(, "bias": [0.5, -0.5]},
    {"id": 2, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "values": )" + values + R"(},
    {"id": 3, "kind": "add", "parents": [1, 2], "shape": [2]}]})";
}

TEST(JsonArrays, ReferencesReadTheArraysAsTheInlineValues) {
  const std::vector<std::vector<double>> arrays = {{7, 8}, {1, 2, 3, 4, 5, 6.25}};
  auto inline_model = parse_model_json(doc("[[1, 2, 3], [4, 5, 6.25]]", "[7, 8]"));
  auto by_ref = parse_model_json_with_arrays(doc(R"({"array": 1})", R"({"array": 0})"), arrays);
  ASSERT_TRUE(inline_model.ok()) << inline_model.message();
  ASSERT_TRUE(by_ref.ok()) << by_ref.message();
  EXPECT_EQ(write_model_json(*by_ref), write_model_json(*inline_model));
  EXPECT_EQ(by_ref->payload.linear.at(1).weight, arrays[1]);
  EXPECT_EQ(by_ref->payload.consts.at(2).values, arrays[0]);
}

TEST(JsonArrays, MalformedReferencesNameTheNodeAndField) {
  const std::vector<std::vector<double>> arrays = {{1, 2, 3, 4, 5, 6}};
  struct Case {
    std::string weight, want;
  };
  for (const Case& c : {Case{R"({"array": 1})", "array 1 is not one of the 1 arrays"},
                        Case{R"({"array": -1})", "array -1 is not one of the 1 arrays"},
                        Case{R"({"array": "0"})", "expected a list of numbers or {\"array\": k}"},
                        Case{R"({"array": 0, "x": 1})", "expected a list of numbers or {\"array\": k}"},
                        Case{R"({"arr": 0})", "expected a list of numbers or {\"array\": k}"}}) {
    auto r = parse_model_json_with_arrays(doc(c.weight, "[7, 8]"), arrays);
    ASSERT_FALSE(r.ok()) << c.weight;
    EXPECT_NE(r.message().find("nodes[1] (id 1, kind linear): field 'weight'"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find(c.want), std::string::npos) << r.message();
  }
  auto short_array = parse_model_json_with_arrays(doc(R"({"array": 0})", R"({"array": 0})"), arrays);
  ASSERT_FALSE(short_array.ok());
  EXPECT_NE(short_array.message().find("field 'values': array 0 has 6 values, the field's shape 2"), std::string::npos)
      << short_array.message();
  // Without arrays (the plain reader, `denote check`, files) a reference is refused, not read.
  auto plain = parse_model_json(doc(R"({"array": 0})", "[7, 8]"));
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.message().find("needs the arrays it names"), std::string::npos) << plain.message();
}

}  // namespace
}  // namespace denote
