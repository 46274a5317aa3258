// The op table (include/denote/ir/ops.def) is the one place per-op facts live (issue 12): its
// columns are populated consistently and agree with the passes generated from them: the integer
// and bool flags with what the typed integer rules accept, the ONNX column with what the exporter
// writes and the importer maps back.
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "denote/ir/op.h"
#include "denote/program/builder.h"
#include "denote/typed/int_ops.h"
#include "io/onnx_import.h"
#include "ops/rules.h"

namespace denote {
namespace {

TEST(OpTable, RowsAreInEnumOrderWithUniqueTags) {
  std::set<std::string_view> tags;
  for (size_t i = 0; i < kOpTable.size(); ++i) {
    const OpInfo& info = kOpTable[i];
    EXPECT_EQ(static_cast<size_t>(info.op), i);
    EXPECT_FALSE(info.tag.empty());
    EXPECT_TRUE(tags.insert(info.tag).second) << info.tag;
    EXPECT_EQ(op_from_tag(info.tag), info.op);
    EXPECT_FALSE(info.shape_rule.empty()) << info.tag;
    EXPECT_FALSE(info.meaning.empty()) << info.tag;
    EXPECT_TRUE(info.max_parents < 0 || info.max_parents >= info.min_parents) << info.tag;
  }
}

TEST(OpTable, IntegerFlagIsExactlyWhatTheIntegerRulesAccept) {
  const typed::DType ints[] = {typed::DType::integer(8, true), typed::DType::integer(32, false),
                               typed::DType::integer(64, true), typed::DType::integer(128, false)};
  int integer_ops = 0;
  for (const OpInfo& info : kOpTable) {
    const bool flagged = (info.flags & kFlagInteger) != 0;
    integer_ops += flagged;
    for (const typed::DType& t : ints)
      EXPECT_EQ(typed::check_int_op(info.op, t).ok(), flagged) << info.tag << " on " << typed::dtype_name(t);
    EXPECT_EQ(typed::check_int_op(info.op, typed::DType::boolean()).ok(), (info.flags & kFlagBool) != 0)
        << info.tag;
    if (info.flags & kFlagBool) {
      EXPECT_TRUE(flagged) << info.tag << ": bool meaning without integer meaning";
    }
    if (typed::is_unary_int_op(info.op)) {
      EXPECT_EQ(info.max_parents, 1) << info.tag;
    }
    if (!flagged) {
      EXPECT_FALSE(typed::is_unary_int_op(info.op) || typed::is_int_division(info.op)) << info.tag;
    }
  }
  // docs/TYPED.md: add sub mul_elem max_elem min_elem div_trunc div_floor remainder pow neg abs clamp_min
  EXPECT_EQ(integer_ops, 12);
}

TEST(OpTable, IntegerRulesRunForEveryFlaggedOpAndRejectTheOthers) {
  const typed::DType i16 = typed::DType::integer(16, true), i100 = typed::DType::integer(100, true);
  for (const OpInfo& info : kOpTable) {
    for (const typed::DType& t : {i16, i100}) {
      auto r = typed::apply_words(info.op, t, Word::of(7), Word::of(3));
      EXPECT_EQ(r.ok(), (info.flags & kFlagInteger) != 0) << info.tag << " " << r.message();
    }
  }
}

TEST(OpTable, OnnxColumnIsConsistent) {
  std::map<std::string_view, Op> direct_names;
  for (const OpInfo& info : kOpTable) {
    switch (info.onnx.how) {
      case OnnxExport::None: EXPECT_TRUE(info.onnx.name.empty()) << info.tag; break;
      case OnnxExport::Direct:
        EXPECT_FALSE(info.onnx.name.empty()) << info.tag;
        EXPECT_TRUE(direct_names.emplace(info.onnx.name, info.op).second)
            << info.tag << ": two ops export 1:1 as " << info.onnx.name;
        EXPECT_EQ(info.attr, AttrKind::None) << info.tag << ": a 1:1 export writes no attributes";
        EXPECT_EQ(info.flags & kFlagPayload, 0u) << info.tag;
        break;
      case OnnxExport::Custom: break;
    }
    EXPECT_EQ(onnx_name(info.op), info.onnx.name);
    EXPECT_EQ(onnx_export(info.op), info.onnx.how);
  }
}

// Every ONNX op type the column names is one the importer maps (both directions use the column).
TEST(OpTable, OnnxNamesRoundTripThroughTheImportersLookup) {
  const std::vector<std::string> supported = onnx_supported_ops();
  const std::set<std::string> mapped(supported.begin(), supported.end());
  for (const OpInfo& info : kOpTable) {
    if (info.onnx.name.empty()) continue;
    EXPECT_NE(onnxio::find_mapper(info.onnx.name), nullptr) << info.tag << " -> " << info.onnx.name;
    EXPECT_TRUE(mapped.count(std::string(info.onnx.name))) << info.onnx.name;
  }
  // The generated 1:1 mappers are keyed by the column and cover unary and elementwise binary ops.
  for (const auto& e : onnxio::direct_mappers()) {
    bool named = false;
    for (const OpInfo& info : kOpTable) named |= info.onnx.how == OnnxExport::Direct && info.onnx.name == e.op_type;
    EXPECT_TRUE(named) << e.op_type;
  }
}

// A one-op model of each 1:1 op exports as one node of its ONNX type and imports back to that op.
TEST(OpTable, DirectOpsExportAndImportOneToOne) {
  for (const OpInfo& info : kOpTable) {
    if (info.onnx.how != OnnxExport::Direct) continue;
    GraphBuilder b;
    const int64_t x = b.input({3, 3});
    const int64_t y = info.max_parents == 1 ? b.unary(info.op, x) : b.binary(info.op, x, b.input({3, 3}));
    auto m = b.build({y});
    ASSERT_TRUE(m.ok()) << info.tag << ": " << m.message();
    auto bytes = write_model_onnx(*m);
    ASSERT_TRUE(bytes.ok()) << info.tag << ": " << bytes.message();
    onnx::ModelProto mp;
    ASSERT_TRUE(mp.ParseFromString(*bytes));
    ASSERT_GE(mp.graph().node_size(), 1);
    EXPECT_EQ(mp.graph().node(0).op_type(), info.onnx.name) << info.tag;
    auto back = read_model_onnx(*bytes);
    ASSERT_TRUE(back.ok()) << info.tag << ": " << back.message();
    bool found = false;
    for (const Node& n : back->graph.nodes) found |= n.op == info.op;
    if (info.op == Op::Detach) found = true;  // Identity imports as an alias of its input (no node)
    EXPECT_TRUE(found) << info.tag << " did not import back to itself";
  }
}

// The elementwise shape rule is generated from the table: every elementwise op without attributes
// (one or two parents) gets it, and no other op does; every op has a rule.
TEST(OpTable, ElementwiseShapeRulesComeFromTheTable) {
  for (const OpInfo& info : kOpTable) {
    SCOPED_TRACE(std::string(info.tag));
    ASSERT_NE(rules::infer_fn(info.op), nullptr);
    const bool expect_generated = (info.flags & kFlagElementwise) && info.attr == AttrKind::None &&
                                  info.min_parents == info.max_parents && info.max_parents >= 1 &&
                                  info.max_parents <= 2;
    EXPECT_EQ(rules::shape_rule_generated(info.op), expect_generated);
    if (!expect_generated) continue;
    const Node n{2, info.max_parents == 2 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0}, info.op,
                 NoAttrs{}, {2, 3}};
    const std::vector<Shape> same(static_cast<size_t>(info.max_parents), Shape{2, 3});
    auto ok = rules::infer_fn(info.op)(n, same);
    ASSERT_TRUE(ok.ok()) << ok.message();
    EXPECT_EQ(*ok, (Shape{2, 3}));
    if (info.max_parents == 2) {
      const std::vector<Shape> differ = {{2, 3}, {3, 2}};
      EXPECT_EQ(rules::infer_fn(info.op)(n, differ).message(),
                std::string(info.tag) + ": shape mismatch: [2, 3] vs [3, 2]");
    }
  }
}

}  // namespace
}  // namespace denote
