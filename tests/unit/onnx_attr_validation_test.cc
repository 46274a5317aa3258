// ONNX attributes checked against the operator spec (issue 47): Pad by INT64_MAX (once wrapped to an
// axis of length 1) and by 10^12, Tile by 10^9 and Resize scales of 1e9 (once bad_alloc after
// seconds) are resource errors naming the node; an unknown coordinate_transformation_mode or
// nearest_mode, ConvTranspose's negative output_shape and output_padding >= stride, repeated axes
// in Slice and Pad are refused; the valid neighbours of each still import.
#include <gtest/gtest.h>

#include <string>

#include "denote/io/onnx.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using testing::error_of;
using testing::OnnxBuilder;

std::string string_attr(onnx::NodeProto* n, const std::string& key, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
  return v;
}

std::string pad_model(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes = {}) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.init_ints("pads", pads);
  std::vector<std::string> ins = {"x", "pads"};
  if (!axes.empty()) {
    b.init_ints("axes", axes);
    ins = {"x", "pads", "", "axes"};
  }
  b.node("Pad", ins, {"y"}, "pad0");
  b.output("y");
  return b.bytes();
}

TEST(OnnxAttrValidation, PadSizesAndAxes) {
  EXPECT_TRUE(read_model_onnx(pad_model({0, 1, 0, 1})).ok()) << error_of(pad_model({0, 1, 0, 1}));
  const std::string big = error_of(pad_model({0, INT64_MAX, 0, 0}));
  EXPECT_NE(big.find("more than"), std::string::npos) << big;
  EXPECT_NE(big.find("pad0"), std::string::npos) << big;
  EXPECT_NE(error_of(pad_model({0, 1000000000000, 0, 0})).find("more than"), std::string::npos);
  EXPECT_NE(error_of(pad_model({0, 0, 0, INT64_MAX})).find("more than"), std::string::npos);
  const std::string dup = error_of(pad_model({1, 1, 1, 1}, {1, -1}));
  EXPECT_NE(dup.find("axes name axis 1 twice"), std::string::npos) << dup;
}

TEST(OnnxAttrValidation, TileRepeats) {
  auto tile = [](int64_t k) {
    OnnxBuilder b;
    b.input("x", {2, 3});
    b.init_ints("r", {1, k});
    b.node("Tile", {"x", "r"}, {"y"}, "tile0");
    b.output("y");
    return b.bytes();
  };
  EXPECT_TRUE(read_model_onnx(tile(2)).ok()) << error_of(tile(2));
  const std::string msg = error_of(tile(1000000000));
  EXPECT_NE(msg.find("more than"), std::string::npos) << msg;
}

TEST(OnnxAttrValidation, SliceAxesAreDistinct) {
  auto slice = [](std::vector<int64_t> axes) {
    OnnxBuilder b;
    b.input("x", {4, 4});
    b.init_ints("s", {0, 1});
    b.init_ints("e", {2, 3});
    b.init_ints("a", axes);
    b.node("Slice", {"x", "s", "e", "a"}, {"y"}, "slice0");
    b.output("y");
    return b.bytes();
  };
  EXPECT_TRUE(read_model_onnx(slice({0, 1})).ok()) << error_of(slice({0, 1}));
  EXPECT_NE(error_of(slice({0, -2})).find("Slice axes name axis 0 twice"), std::string::npos);
}

std::string resize_model(const std::string& ctm, float scale, const std::string& nearest = "") {
  OnnxBuilder b;
  b.input("x", {1, 1, 2, 2});
  b.init("roi", {0}, {});
  b.init("scales", {4}, {1.0f, 1.0f, scale, scale});
  auto* n = b.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize0");
  string_attr(n, "mode", "nearest");
  if (!ctm.empty()) string_attr(n, "coordinate_transformation_mode", ctm);
  if (!nearest.empty()) string_attr(n, "nearest_mode", nearest);
  b.output("y");
  return b.bytes();
}

TEST(OnnxAttrValidation, ResizeModesAndScales) {
  for (const char* ctm : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"})
    EXPECT_TRUE(read_model_onnx(resize_model(ctm, 2.0f)).ok()) << ctm << error_of(resize_model(ctm, 2.0f));
  const std::string bogus = error_of(resize_model("bogus", 2.0f));
  EXPECT_NE(bogus.find("coordinate_transformation_mode 'bogus' is unknown"), std::string::npos) << bogus;
  EXPECT_NE(error_of(resize_model("asymmetric", 2.0f, "nearest_cat")).find("nearest_mode 'nearest_cat'"),
            std::string::npos);
  const std::string huge = error_of(resize_model("asymmetric", 1e9f));
  EXPECT_NE(huge.find("exceeds"), std::string::npos) << huge;
}

std::string convt_model(const std::vector<int64_t>& output_padding, const std::vector<int64_t>& output_shape) {
  OnnxBuilder b;
  b.input("x", {1, 1, 3, 3});
  b.init("w", {1, 1, 2, 2}, std::vector<float>(4, 0.5f));
  auto* n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "convt0");
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  if (!output_padding.empty()) OnnxBuilder::attr(n, "output_padding", output_padding);
  if (!output_shape.empty()) OnnxBuilder::attr(n, "output_shape", output_shape);
  b.output("y");
  return b.bytes();
}

TEST(OnnxAttrValidation, ConvTransposeOutputPaddingAndShape) {
  EXPECT_TRUE(read_model_onnx(convt_model({1, 1}, {})).ok()) << error_of(convt_model({1, 1}, {}));
  const std::string pad = error_of(convt_model({2, 0}, {}));
  EXPECT_NE(pad.find("output_padding 2 on spatial axis 0"), std::string::npos) << pad;
  EXPECT_NE(error_of(convt_model({-1, 0}, {})).find("output_padding -1"), std::string::npos);
  const std::string shape = error_of(convt_model({}, {-6, 6}));
  EXPECT_NE(shape.find("output_shape has a negative entry -6"), std::string::npos) << shape;
  EXPECT_TRUE(read_model_onnx(convt_model({}, {6, 7})).ok()) << error_of(convt_model({}, {6, 7}));
}

}  // namespace
}  // namespace denote
