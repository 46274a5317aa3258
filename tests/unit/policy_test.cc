// Precision policies (include/denote/typed/policy.h) on hand-computed models: bfloat16 storage with
// binary32 accumulation against bfloat16 throughout, input rounding and flags, the lowered graph's
// shape, and the errors. The bit-for-bit comparison with torch's bfloat16 CPU kernels is
// tests/python/test_policy.py.
#include <gtest/gtest.h>

#include <bit>

#include "denote/io/json.h"
#include "denote/typed/policy.h"

namespace denote {
namespace {

// y = [1, 1, 1] . x + 0, then relu.
const char* kSum3 = R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [2], "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 3]},
  {"id": 1, "kind": "linear", "parents": [0], "shape": [1, 1], "out_dim": 1, "in_dim": 3,
   "weight": [[1, 1, 1]], "bias": [0]},
  {"id": 2, "kind": "relu", "parents": [1], "shape": [1, 1]}]})";

Result<PolicyValues> run(const char* json, const char* storage, const char* accumulate, std::vector<double> x,
                         std::vector<int64_t> ids = {}) {
  DENOTE_ASSIGN_OR_RETURN(Model m, read_model_json(json));
  DENOTE_ASSIGN_OR_RETURN(PrecisionPolicy p, make_policy(storage, accumulate));
  DENOTE_ASSIGN_OR_RETURN(LoweredPolicy l, lower_policy(m, p));
  const auto n = static_cast<int64_t>(x.size());
  const Tensor<double> in({1, n}, std::move(x));
  return run_policy(l, std::span(&in, 1), ids.empty() ? m.output_ids : ids);
}

// 256 + 1 + 1: bfloat16 (8 bits) rounds 257 to 256 twice; binary32 holds 258, which bfloat16 holds too.
TEST(Policy, AccumulationFormatKeepsWhatStorageWouldLose) {
  Result<PolicyValues> mixed = run(kSum3, "bfloat16", "binary32", {256, 1, 1});
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  EXPECT_EQ(mixed->values[0].data, std::vector<double>({258}));
  EXPECT_EQ(mixed->flags, 0u);
  Result<PolicyValues> narrow = run(kSum3, "bfloat16", "bfloat16", {256, 1, 1});
  ASSERT_TRUE(narrow.ok()) << narrow.status().message();
  EXPECT_EQ(narrow->values[0].data, std::vector<double>({256}));
  EXPECT_NE(narrow->flags & kFpInexact, 0u);
}

// Inputs round to storage once (0.1 -> 0x3dcd = 0.10009765625, inexact); the trace of node 0 is
// that storage value, node 1 the linear's value rounded to storage.
TEST(Policy, InputsRoundToStorageAndEveryNodeHasAValue) {
  Result<PolicyValues> r = run(kSum3, "bfloat16", "binary32", {0.1, 0.2, -0.05}, {0, 1, 2});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->values[0].data, std::vector<double>({0.10009765625, 0.2001953125, -0.0500488281250}));
  // 0.10009765625 + 0.2001953125 - 0.050048828125 = 0.250244140625 exactly (binary32 holds each
  // partial sum); bfloat16's step at 0.25 is 2^-9, so it rounds down to 0.25.
  EXPECT_EQ(r->values[1].data, std::vector<double>({0.25}));
  EXPECT_EQ(r->values[2].data, r->values[1].data);
  EXPECT_NE(r->flags & kFpInexact, 0u);
}

TEST(Policy, LoweredGraphCastsAroundEachComputingNode) {
  Model m = *read_model_json(kSum3);
  Result<LoweredPolicy> l = lower_policy(m, *make_policy("binary16", "binary32"));
  ASSERT_TRUE(l.ok()) << l.status().message();
  // input, cast up; linear, cast down, cast up; relu, cast down, cast up.
  ASSERT_EQ(l->tm.model.graph.size(), 8u);
  EXPECT_EQ(l->tm.model.graph.nodes[2].op, Op::Linear);
  EXPECT_EQ(std::get<CastAttrs>(l->tm.model.graph.nodes[3].attrs).dtype, "binary16");
  EXPECT_EQ(l->tm.model.output_ids, std::vector<int64_t>({6}));
  EXPECT_EQ(l->node_of, std::vector<int64_t>({0, 3, 6}));
  EXPECT_EQ(l->tm.input_dtypes.at(0), typed::DType::binary(*parse_format("binary16")));
}

TEST(Policy, ErrorsNameTheFieldOrNode) {
  EXPECT_EQ(make_policy("bf16x", "binary32").status().field(), "storage");
  EXPECT_EQ(make_policy("bfloat16", "binary17").status().field(), "accumulate");
  Result<PrecisionPolicy> narrow = make_policy("binary32", "bfloat16");
  ASSERT_FALSE(narrow.ok());
  EXPECT_EQ(narrow.status().field(), "accumulate");
  EXPECT_NE(narrow.status().message().find("does not hold every binary32 value"), std::string::npos);
  EXPECT_FALSE(make_policy("binary16", "bfloat16").ok());  // bfloat16 has fewer bits than binary16
  EXPECT_TRUE(make_policy("e4m3fn", "bfloat16").ok());
  const char* with_cast = R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": [2]},
    {"id": 1, "kind": "cast", "parents": [0], "shape": [2], "dtype": "binary16"}]})";
  Result<LoweredPolicy> l = lower_policy(*read_model_json(with_cast), *make_policy("bfloat16", "binary32"));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().node(), 1);
  EXPECT_NE(l.status().message().find("cast has no meaning under a precision policy"), std::string::npos);
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// linear [1, 3] -> softmax: bfloat16 storage with softmax kept in binary32 by op kind, or by node id.
const char* kSoftmax = R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [2], "nodes": [
  {"id": 0, "kind": "input", "parents": [], "shape": [1, 3]},
  {"id": 1, "kind": "linear", "parents": [0], "shape": [1, 3], "out_dim": 3, "in_dim": 3,
   "weight": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "bias": [0, 0, 0]},
  {"id": 2, "kind": "softmax", "parents": [1], "shape": [1, 3], "axis": 1}]})";

bool is_bfloat16(double v) { return static_cast<double>(static_cast<float>(v)) == v &&
                                    (std::bit_cast<uint32_t>(static_cast<float>(v)) & 0xFFFF) == 0; }

TEST(Policy, FileOverridesStoragePerOpKindAndPerNode) {
  const Model m = *read_model_json(kSoftmax);
  const Tensor<double> x({1, 3}, {0.1, 0.7, -0.4});
  const std::vector<int64_t> ids = {1, 2};
  for (const char* text : {R"({"storage": "bfloat16", "accumulate": "binary32", "ops": {"softmax": "binary32"}})",
                           R"({"storage": "bfloat16", "accumulate": "binary32", "nodes": {"2": "binary32"}})"}) {
    Result<PrecisionPolicy> p = parse_policy_json(text);
    ASSERT_TRUE(p.ok()) << p.status().message();
    Result<PolicyValues> v = run_policy(*lower_policy(m, *p), std::span(&x, 1), ids);
    ASSERT_TRUE(v.ok()) << v.status().message();
    for (double y : v->values[0].data) EXPECT_TRUE(is_bfloat16(y)) << y;  // the linear: bfloat16
    int wider = 0;
    for (double y : v->values[1].data) wider += is_bfloat16(y) ? 0 : 1;  // softmax: binary32 values
    EXPECT_GT(wider, 0) << text;
  }
  Result<PolicyValues> all16 = run_policy(*lower_policy(m, *make_policy("bfloat16", "binary32")), std::span(&x, 1), ids);
  for (double y : all16->values[1].data) EXPECT_TRUE(is_bfloat16(y));
}

TEST(Policy, FileErrorsNameTheKey) {
  auto field = [](const char* text) { return parse_policy_json(text).status().field(); };
  EXPECT_EQ(field(R"({"storage": "bfloat16"})"), "accumulate");
  EXPECT_EQ(field(R"({"storage": "bfloat16", "accumulate": "binary32", "ops": {"sofmax": "binary32"}})"), "ops.sofmax");
  EXPECT_EQ(field(R"({"storage": "bfloat16", "accumulate": "binary32", "ops": {"relu": "binary64"}})"), "ops.relu");
  EXPECT_EQ(field(R"({"storage": "bfloat16", "accumulate": "binary32", "nodes": {"x": "binary32"}})"), "nodes.x");
  EXPECT_EQ(field(R"({"storage": "bfloat16", "accumulate": "binary32", "rounding": "up"})"), "rounding");
  EXPECT_EQ(field(R"({"storage": "bfloat16", "accumulate": "binary32", "extra": 1})"), "extra");
  EXPECT_FALSE(parse_policy_json("[1, 2").ok());
  Result<PrecisionPolicy> far = parse_policy_json(R"({"storage": "bfloat16", "accumulate": "binary32",
                                                      "nodes": {"9": "binary32"}})");
  ASSERT_TRUE(far.ok());
  EXPECT_EQ(lower_policy(*read_model_json(kSoftmax), *far).status().field(), "nodes.9");
}

}  // namespace
}  // namespace denote
