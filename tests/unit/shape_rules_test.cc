// Shape rules of every op in ops.def: one passing case (the inferred shape, worked out by hand from
// SPEC-IR.md and the PyTorch shape formulas) and one failing case with its exact message, checked
// through infer_shape, check_shapes and diagnose. Then the structural check: arity, parent order,
// id discipline, declared dims and attribute kinds.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "denote/check/check.h"
#include "denote/ir/graph.h"

namespace denote {
namespace {

// A passing case: the node under test gets `parents` as parent shapes and must infer `expected`.
struct PassCase {
  Op op;
  Attrs attrs;
  std::vector<Shape> parents;
  Shape expected;
};

// How a failing case fails.
enum class FailKind {
  kRule,       // infer_shape returns `message`; check_shapes returns it as is
  kMismatch,   // the rule cannot fail: it infers `message` (a shape text) != the declared shape
  kStructure,  // check_well_formed rejects the node; `message` is the part after "IR graph: node i: "
};

struct FailCase {
  Op op;
  Attrs attrs;
  std::vector<Shape> parents;
  Shape declared;
  FailKind kind;
  std::string message;
};

constexpr int64_t kBig = int64_t{1} << 40;

ConvConfig conv2d_config() {
  // Input [1, 3, 5, 5] (channel axis 1): H: eff = 1*(3-1)+1 = 3, padded = 5+1+0 = 6 -> (6-3)/2+1 = 2;
  // W: eff = 2*(3-1)+1 = 5, padded = 5+0+1 = 6 -> (6-5)/1+1 = 2.
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {2, 1}, {1, 0}};
  c.dilation = {1, 2};
  c.padding_after = {0, 1};
  c.groups = 1;
  c.channel_axis = 1;
  c.in_channels = 3;
  c.out_channels = 8;
  return c;
}

ConvConfig conv1d_grouped() {
  // Input [2, 4, 7]: groups 2, kernel 3, stride 2, padding 1 (symmetric): (7+2-3)/2+1 = 4
  // (torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2) gives [2, 6, 4]).
  ConvConfig c;
  c.window = WindowConfig{1, {3}, {2}, {1}};
  c.groups = 2;
  c.channel_axis = 1;
  c.in_channels = 4;
  c.out_channels = 6;
  return c;
}

HardMask mask_2x3() { return HardMask{{2, 3}, {1, 0, 1, 1, 1, 0}}; }

std::vector<PassCase> pass_cases() {
  std::vector<PassCase> c;
  c.push_back({Op::Input, NoAttrs{}, {}, {2, 3}});
  c.push_back({Op::Const, ValueShapeAttrs{{3, 1}}, {}, {3, 1}});
  c.push_back({Op::RandUniform, SeedAttrs{7}, {}, {2, 2}});
  c.push_back({Op::Custom, CustomAttrs{"f", {{2}, {3, 1}}}, {{2}, {3, 1}}, {4}});
  c.push_back({Op::Permute, PermAttrs{{2, 0, 1}}, {{2, 3, 4}}, {4, 2, 3}});
  c.push_back({Op::Transpose, TransposeAttrs{0, 2}, {{2, 3, 4}}, {4, 3, 2}});
  c.push_back({Op::Detach, NoAttrs{}, {{2, 3}}, {2, 3}});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{3, 1}, {2, 3, 4}}, {{3, 1}}, {2, 3, 4}});
  c.push_back({Op::Reshape, ReshapeAttrs{{2, 3}, {3, 1, 2}}, {{2, 3}}, {3, 1, 2}});
  c.push_back({Op::Flatten, ValueShapeAttrs{{2, 3, 4}}, {{2, 3, 4}}, {24}});
  c.push_back({Op::Concat, AxisAttrs{1}, {{2, 3}, {2, 4}, {2, 1}}, {2, 8}});
  c.push_back({Op::Gather, GatherAttrs{1, {2, 0, 2, 1}}, {{2, 3}}, {2, 4}});
  c.push_back({Op::Gather, GatherAttrs{0, {}}, {{0, 3}}, {0, 3}});
  for (Op op : {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem, Op::MinElem, Op::Div, Op::DivTrunc, Op::DivFloor,
                Op::Remainder, Op::Pow})
    c.push_back({op, NoAttrs{}, {{2, 3}, {2, 3}}, {2, 3}});
  c.push_back({Op::MseLoss, NoAttrs{}, {{2, 3}, {2, 3}}, {}});
  c.push_back({Op::SafeLog, NoAttrs{}, {{2, 3}, {}}, {2, 3}});
  c.push_back({Op::BernoulliMask, SeedAttrs{3}, {{}}, {4, 2}});
  for (Op op : {Op::Abs, Op::Sqrt, Op::Inv, Op::Relu, Op::Tanh, Op::Sigmoid, Op::Exp, Op::Log, Op::Sin, Op::Cos,
                Op::Softplus, Op::Neg, Op::Rsqrt, Op::Erf, Op::Gelu, Op::Floor, Op::Ceil, Op::Round, Op::Sign})
    c.push_back({op, NoAttrs{}, {{3, 0, 2}}, {3, 0, 2}});
  c.push_back({Op::ClampMin, ClampAttrs{-0.5}, {{5}}, {5}});
  c.push_back({Op::Cast, CastAttrs{"binary16", "toward-zero"}, {{2, 2}}, {2, 2}});
  c.push_back({Op::MxCast, MxCastAttrs{"mxfp8_e5m2", 32, -1}, {{3, 40}}, {3, 40}});
  c.push_back({Op::MxCast, MxCastAttrs{"mxint8", 2, 0}, {{}}, {}});
  c.push_back({Op::ReduceSum, AxisAttrs{1}, {{2, 3, 4}}, {2, 4}});
  c.push_back({Op::ReduceMean, AxisAttrs{0}, {{5}}, {}});
  c.push_back({Op::Sum, NoAttrs{}, {{2, 3}}, {}});
  // torch.matmul(torch.zeros(5,1,2,3), torch.zeros(4,3,6)).shape == [5, 4, 2, 6]
  c.push_back({Op::Matmul, NoAttrs{}, {{5, 1, 2, 3}, {4, 3, 6}}, {5, 4, 2, 6}});
  c.push_back({Op::Linear, NoAttrs{}, {{2, 7, 4}}, {2, 7, 5}});
  c.push_back({Op::Conv, conv2d_config(), {{1, 3, 5, 5}}, {1, 8, 2, 2}});
  // torch.nn.MaxPool2d(2, 2) on [1, 2, 5, 5] gives [1, 2, 2, 2].
  c.push_back({Op::MaxPool, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}}, {{1, 2, 5, 5}}, {1, 2, 2, 2}});
  // torch.nn.AvgPool1d(3, 2, padding=1) on [2, 5] gives [2, 3].
  c.push_back({Op::AvgPool, WindowConfig{1, {3}, {2}, {1}}, {{2, 5}}, {2, 3}});
  c.push_back({Op::BatchNormEval, BatchNormAttrs{1, 3}, {{2, 3, 4}}, {2, 3, 4}});
  c.push_back({Op::Softmax, AxisAttrs{1}, {{2, 3}}, {2, 3}});
  c.push_back({Op::LogSoftmax, AxisAttrs{0}, {{2, 3}}, {2, 3}});
  c.push_back({Op::HardMaskedSoftmax, mask_2x3(), {{2, 3}}, {2, 3}});
  c.push_back({Op::Layernorm, AxisAttrs{1}, {{2, 3, 4}}, {2, 3, 4}});
  return c;
}

// Extra passing cases for the rules with several branches.
std::vector<PassCase> more_pass_cases() {
  std::vector<PassCase> c;
  c.push_back({Op::Permute, PermAttrs{{}}, {{}}, {}});
  c.push_back({Op::Transpose, TransposeAttrs{1, 1}, {{2, 3}}, {2, 3}});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{}, {2, 2}}, {{}}, {2, 2}});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{1}, {0}}, {{1}}, {0}});
  c.push_back({Op::Reshape, ReshapeAttrs{{2, 0}, {0, 7}}, {{2, 0}}, {0, 7}});
  c.push_back({Op::Reshape, ReshapeAttrs{{}, {1, 1}}, {{}}, {1, 1}});
  c.push_back({Op::Flatten, ValueShapeAttrs{{}}, {{}}, {1}});
  c.push_back({Op::Concat, AxisAttrs{0}, {{1, 2}, {0, 2}}, {1, 2}});
  c.push_back({Op::Concat, AxisAttrs{2}, {{1, 2, 3}, {1, 2, 4}}, {1, 2, 7}});
  c.push_back({Op::Add, NoAttrs{}, {{}, {}}, {}});
  c.push_back({Op::Custom, CustomAttrs{"g", {}}, {}, {2}});
  c.push_back({Op::ReduceSum, AxisAttrs{2}, {{2, 0, 4}}, {2, 0}});
  c.push_back({Op::Sum, NoAttrs{}, {{}}, {}});
  c.push_back({Op::MseLoss, NoAttrs{}, {{0}, {0}}, {}});
  // torch.matmul 1-D promotion: [3] @ [3] -> [], [3] @ [3, 4] -> [4], [2, 3] @ [3] -> [2],
  // [3] @ [2, 3, 4] -> [2, 4], [2, 1, 3, 4] @ [4, 5] -> [2, 1, 3, 5], [1, 2, 3] @ [6, 3, 2] -> [6, 2, 2].
  c.push_back({Op::Matmul, NoAttrs{}, {{3}, {3}}, {}});
  c.push_back({Op::Matmul, NoAttrs{}, {{3}, {3, 4}}, {4}});
  c.push_back({Op::Matmul, NoAttrs{}, {{2, 3}, {3}}, {2}});
  c.push_back({Op::Matmul, NoAttrs{}, {{3}, {2, 3, 4}}, {2, 4}});
  c.push_back({Op::Matmul, NoAttrs{}, {{2, 1, 3, 4}, {4, 5}}, {2, 1, 3, 5}});
  c.push_back({Op::Matmul, NoAttrs{}, {{1, 2, 3}, {6, 3, 2}}, {6, 2, 2}});
  c.push_back({Op::Matmul, NoAttrs{}, {{0, 3}, {3, 0}}, {0, 0}});
  c.push_back({Op::Linear, NoAttrs{}, {{4}}, {5}});
  c.push_back({Op::Conv, conv1d_grouped(), {{2, 4, 7}}, {2, 6, 4}});
  // Channel axis 0 (unbatched): torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2) on [4, 7] -> [6, 4].
  ConvConfig unbatched = conv1d_grouped();
  unbatched.channel_axis = 0;
  c.push_back({Op::Conv, unbatched, {{4, 7}}, {6, 4}});
  // Pools: oversized window -> empty axis (3 + 0 < 5); padding > k/2 -> 0; k = 0 -> 0; in = 0 -> 0.
  c.push_back({Op::MaxPool, WindowConfig{1, {5}, {1}, {0}}, {{2, 3}}, {2, 0}});
  c.push_back({Op::MaxPool, WindowConfig{1, {2}, {1}, {2}}, {{4}}, {0}});
  c.push_back({Op::AvgPool, WindowConfig{1, {0}, {1}, {0}}, {{4}}, {0}});
  c.push_back({Op::AvgPool, WindowConfig{2, {1, 1}, {1, 1}, {0, 0}}, {{0, 3}}, {0, 3}});
  // torch.nn.MaxPool2d((3, 2), stride=(2, 3), padding=(1, 1)) on [1, 7, 8] -> [1, 4, 3].
  c.push_back({Op::MaxPool, WindowConfig{2, {3, 2}, {2, 3}, {1, 1}}, {{1, 7, 8}}, {1, 4, 3}});
  c.push_back({Op::AvgPool, WindowConfig{0, {}, {}, {}}, {{2}}, {2}});
  c.push_back({Op::Layernorm, AxisAttrs{0}, {{5}}, {5}});
  c.push_back({Op::BatchNormEval, BatchNormAttrs{0, 0}, {{0, 2}}, {0, 2}});
  c.push_back({Op::HardMaskedSoftmax, HardMask{{0}, {}}, {{0}}, {0}});
  return c;
}

std::vector<FailCase> fail_cases() {
  using K = FailKind;
  std::vector<FailCase> c;
  c.push_back({Op::Input, NoAttrs{}, {}, {2, -1}, K::kStructure, "outShape: negative dimension -1 in shape [2, -1]"});
  c.push_back({Op::Const, ValueShapeAttrs{{3, -2}}, {}, {3}, K::kRule,
               "const: value_shape: negative dimension -2 in shape [3, -2]"});
  c.push_back({Op::RandUniform, SeedAttrs{1}, {}, {kBig, kBig}, K::kStructure,
               "outShape: element count of shape [1099511627776, 1099511627776] overflows"});
  c.push_back({Op::Custom, CustomAttrs{"f", {{2}, {3}}}, {{2}, {4}}, {1}, K::kRule,
               "custom: input 1 shape mismatch: [4] vs declared [3]"});
  c.push_back({Op::Permute, PermAttrs{{0, 0, 1}}, {{2, 3, 4}}, {2, 3, 4}, K::kRule,
               "permute: perm [0, 0, 1] is not a permutation of 0..3"});
  c.push_back({Op::Transpose, TransposeAttrs{0, 3}, {{2, 3, 4}}, {2, 3, 4}, K::kRule,
               "transpose: invalid axis 3 for rank 3"});
  c.push_back({Op::Detach, NoAttrs{}, {{2, 3}}, {3, 2}, K::kMismatch, "[2, 3]"});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{3, 2}, {3, 4}}, {{3, 2}}, {3, 4}, K::kRule,
               "broadcast_to: cannot broadcast [3, 2] to [3, 4]"});
  c.push_back({Op::Reshape, ReshapeAttrs{{2, 3}, {4, 2}}, {{2, 3}}, {4, 2}, K::kRule, "reshape numel mismatch: 6 vs 8"});
  c.push_back({Op::Flatten, ValueShapeAttrs{{3, 2}}, {{2, 3}}, {6}, K::kRule,
               "flatten: parent shape [2, 3] is not shape [3, 2]"});
  c.push_back({Op::Gather, GatherAttrs{1, {0, 3}}, {{2, 3}}, {2, 2}, K::kRule,
               "gather: index 3 at position 1 is outside [0, 3) (axis 1 of [2, 3])"});
  c.push_back({Op::Gather, GatherAttrs{2, {0}}, {{2, 3}}, {2, 3}, K::kRule, "gather: invalid axis 2 for rank 2"});
  c.push_back({Op::Concat, AxisAttrs{1}, {{2, 3}, {3, 3}}, {2, 6}, K::kRule,
               "concat: parent 1 shape [3, 3] does not fit [2, 3] along axis 1"});
  for (Op op : {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem, Op::MinElem, Op::Div, Op::DivTrunc, Op::DivFloor,
                Op::Remainder, Op::Pow, Op::MseLoss})
    c.push_back({op, NoAttrs{}, {{2}, {3}}, {2}, K::kRule, std::string(op_tag(op)) + ": shape mismatch: [2] vs [3]"});
  c.push_back({Op::SafeLog, NoAttrs{}, {{2, 3}, {1}}, {2, 3}, K::kRule, "safe_log: eps must be a scalar [], got [1]"});
  c.push_back({Op::BernoulliMask, SeedAttrs{3}, {{2}}, {2}, K::kRule,
               "bernoulli_mask: keep probability must be a scalar [], got [2]"});
  for (Op op : {Op::Abs, Op::Sqrt, Op::Inv, Op::Relu, Op::Tanh, Op::Sigmoid, Op::Exp, Op::Log, Op::Sin, Op::Cos,
                Op::Softplus, Op::Neg, Op::Rsqrt, Op::Erf, Op::Gelu, Op::Floor, Op::Ceil, Op::Round, Op::Sign})
    c.push_back({op, NoAttrs{}, {{4}}, {5}, K::kMismatch, "[4]"});
  c.push_back({Op::ClampMin, ClampAttrs{0.0}, {{4, 1}}, {4}, K::kMismatch, "[4, 1]"});
  c.push_back({Op::Cast, CastAttrs{"binary16", "sideways"}, {{2}}, {2}, K::kRule,
               "cast: unknown rounding mode 'sideways'"});
  c.push_back({Op::MxCast, MxCastAttrs{"mxfp9", 32, -1}, {{2}}, {2}, K::kRule,
               "mx_cast: unknown MX format 'mxfp9': expected one of mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, "
               "mxfp4_e2m1, mxint8"});
  c.push_back({Op::MxCast, MxCastAttrs{"mxfp4_e2m1", 0, -1}, {{2}}, {2}, K::kRule, "mx_cast: MX: block 0 is outside [1, 16777216]"});
  c.push_back({Op::MxCast, MxCastAttrs{"mxfp4_e2m1", 32, 2}, {{2, 3}}, {2, 3}, K::kRule, "mx_cast: MX: axis 2 is out of range for rank 2"});
  c.push_back({Op::ReduceSum, AxisAttrs{1}, {{2, 0}}, {2}, K::kRule,
               "reduce_sum: invalid or empty reduction axis 1 for shape [2, 0]"});
  c.push_back({Op::ReduceMean, AxisAttrs{3}, {{2, 3, 4}}, {2, 3}, K::kRule,
               "reduce_mean: invalid or empty reduction axis 3 for shape [2, 3, 4]"});
  c.push_back({Op::Sum, NoAttrs{}, {{2, 3}}, {1}, K::kMismatch, "[]"});
  c.push_back({Op::Matmul, NoAttrs{}, {{2, 3}, {4, 5}}, {2, 5}, K::kRule, "matmul: inner dims mismatch: 3 vs 4"});
  c.push_back({Op::Linear, NoAttrs{}, {{}}, {5}, K::kRule, "linear: input must have rank >= 1, got []"});
  ConvConfig too_small = conv1d_grouped();
  too_small.window.kernel = {5};
  too_small.window.padding = {0};
  c.push_back({Op::Conv, too_small, {{2, 4, 3}}, {2, 6, 1}, K::kRule,
               "conv: padded input 3 is smaller than the dilated kernel 5 at spatial axis 0"});
  c.push_back({Op::MaxPool, WindowConfig{2, {2}, {1, 1}, {0, 0}}, {{3, 3}}, {2, 2}, K::kRule,
               "max_pool: kernel has 1 entries, expected spatial_rank = 2"});
  c.push_back({Op::AvgPool, WindowConfig{3, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}}, {{3, 3}}, {3, 3}, K::kRule,
               "avg_pool: spatial_rank 3 exceeds input rank 2"});
  c.push_back({Op::BatchNormEval, BatchNormAttrs{1, 4}, {{2, 3}}, {2, 3}, K::kRule,
               "batch_norm_eval: input has 3 channels on axis 1, expected 4"});
  c.push_back({Op::Softmax, AxisAttrs{2}, {{2, 3}}, {2, 3}, K::kRule, "softmax: invalid axis 2 for rank 2"});
  c.push_back({Op::LogSoftmax, AxisAttrs{-1}, {{2, 3}}, {2, 3}, K::kRule, "log_softmax: invalid axis -1 for rank 2"});
  c.push_back({Op::HardMaskedSoftmax, mask_2x3(), {{3, 2}}, {3, 2}, K::kRule,
               "hard_masked_softmax: mask shape [2, 3] differs from input [3, 2]"});
  c.push_back({Op::Layernorm, AxisAttrs{1}, {{2, 0}}, {2, 0}, K::kRule, "layernorm: embedDim must be > 0"});
  return c;
}

// More rule failures (each branch of the rules with several checks).
std::vector<FailCase> more_fail_cases() {
  using K = FailKind;
  std::vector<FailCase> c;
  c.push_back({Op::Custom, CustomAttrs{"f", {{2}, {3}}}, {{2}}, {1}, K::kRule, "custom: 1 parents for 2 declared inputs"});
  c.push_back({Op::Permute, PermAttrs{{1, 0}}, {{2, 3, 4}}, {2, 3, 4}, K::kRule,
               "permute: perm length 2 does not match rank 3"});
  c.push_back({Op::Permute, PermAttrs{{0, 3, 1}}, {{2, 3, 4}}, {2, 3, 4}, K::kRule,
               "permute: perm [0, 3, 1] is not a permutation of 0..3"});
  c.push_back({Op::Permute, PermAttrs{{-1, 0}}, {{2, 3}}, {2, 3}, K::kRule,
               "permute: perm [-1, 0] is not a permutation of 0..2"});
  c.push_back({Op::Transpose, TransposeAttrs{-1, 0}, {{2}}, {2}, K::kRule, "transpose: invalid axis -1 for rank 1"});
  c.push_back({Op::Transpose, TransposeAttrs{0, 0}, {{}}, {}, K::kRule, "transpose: invalid axis 0 for rank 0"});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{3, 1}, {2, 3, 4}}, {{3}}, {2, 3, 4}, K::kRule,
               "broadcast_to: parent shape [3] is not from [3, 1]"});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{2, 3}, {3}}, {{2, 3}}, {3}, K::kRule,
               "broadcast_to: cannot broadcast [2, 3] to [3]"});
  c.push_back({Op::BroadcastTo, BroadcastAttrs{{1}, {-2}}, {{1}}, {2}, K::kRule,
               "broadcast_to: to: negative dimension -2 in shape [-2]"});
  c.push_back({Op::Reshape, ReshapeAttrs{{2, 3}, {6}}, {{3, 2}}, {6}, K::kRule,
               "reshape: parent shape [3, 2] is not in_shape [2, 3]"});
  c.push_back({Op::Reshape, ReshapeAttrs{{2}, {kBig, kBig}}, {{2}}, {2}, K::kRule,
               "reshape: out_shape: element count of shape [1099511627776, 1099511627776] overflows"});
  c.push_back({Op::Concat, AxisAttrs{2}, {{2, 3}, {2, 3}}, {2, 3}, K::kRule, "concat: invalid axis 2 for rank 2"});
  c.push_back({Op::Concat, AxisAttrs{0}, {{2, 3}, {2}}, {2, 3}, K::kRule,
               "concat: parent 1 shape [2] does not fit [2, 3] along axis 0"});
  c.push_back({Op::Concat, AxisAttrs{0}, {{int64_t{1} << 61, 2}, {int64_t{1} << 61, 2}}, {1}, K::kRule,
               "concat: output: element count of shape [4611686018427387904, 2] overflows"});
  c.push_back({Op::Cast, CastAttrs{"", "nearest-even"}, {{2}}, {2}, K::kRule, "cast: target dtype is empty"});
  c.push_back({Op::ReduceSum, AxisAttrs{0}, {{}}, {}, K::kRule,
               "reduce_sum: invalid or empty reduction axis 0 for shape []"});
  c.push_back({Op::ReduceSum, AxisAttrs{-1}, {{3}}, {}, K::kRule,
               "reduce_sum: invalid or empty reduction axis -1 for shape [3]"});
  c.push_back({Op::Matmul, NoAttrs{}, {{}, {3}}, {}, K::kRule, "matmul: scalar operands are not allowed: [] @ [3]"});
  c.push_back({Op::Matmul, NoAttrs{}, {{3}, {}}, {}, K::kRule, "matmul: scalar operands are not allowed: [3] @ []"});
  c.push_back({Op::Matmul, NoAttrs{}, {{2, 2, 3}, {3, 3, 4}}, {2, 2, 4}, K::kRule,
               "matmul: batch dims do not broadcast: [2, 2, 3] @ [3, 3, 4]"});
  c.push_back({Op::Matmul, NoAttrs{}, {{3}, {4}}, {}, K::kRule, "matmul: inner dims mismatch: 3 vs 4"});
  c.push_back({Op::Linear, NoAttrs{}, {{2, 4}}, {5}, K::kRule, "linear: declared rank 1 differs from input rank 2"});
  c.push_back({Op::Linear, NoAttrs{}, {{2, 4}}, {3, 5}, K::kMismatch, "[2, 5]"});
  return c;
}

// More rule failures of the window and normalization families.
std::vector<FailCase> more_window_fail_cases() {
  using K = FailKind;
  std::vector<FailCase> c;
  ConvConfig c1 = conv1d_grouped();
  c1.groups = 3;
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule, "conv: groups 3 must divide in_channels 4 and out_channels 6"});
  c1 = conv1d_grouped();
  c.push_back({Op::Conv, c1, {{2, 5, 7}}, {2, 6, 4}, K::kRule, "conv: input has 5 channels, expected in_channels = 4"});
  c.push_back({Op::Conv, c1, {{4, 7}}, {6, 4}, K::kRule,
               "conv: input [4, 7] does not have channel_axis 1 followed by 1 spatial axes"});
  c1.dilation = {0};
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule, "conv: dilation at spatial axis 0 must be >= 1"});
  c1 = conv1d_grouped();
  c1.padding_after = {1, 1};
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule,
               "conv: padding_after has 2 entries, expected spatial_rank = 1"});
  c1 = conv1d_grouped();
  c1.window.kernel = {0};
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule, "conv: kernel at spatial axis 0 must be >= 1"});
  c1 = conv1d_grouped();
  c1.window.stride = {0};
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule, "conv: stride 0 at spatial axis 0 must be >= 1"});
  c1 = conv1d_grouped();
  c1.dilation = {int64_t{1} << 62};
  c.push_back({Op::Conv, c1, {{2, 4, 7}}, {2, 6, 4}, K::kRule, "conv: window arithmetic overflows at spatial axis 0"});
  c.push_back({Op::MaxPool, WindowConfig{1, {2}, {1}, {-1}}, {{3}}, {3}, K::kRule,
               "max_pool: negative kernel or padding at spatial axis 0"});
  c.push_back({Op::MaxPool, WindowConfig{-1, {}, {}, {}}, {{3}}, {3}, K::kRule, "max_pool: spatial_rank -1 is negative"});
  c.push_back({Op::AvgPool, WindowConfig{1, {2}, {0}, {0}}, {{3}}, {3}, K::kRule,
               "avg_pool: stride 0 at spatial axis 0 must be >= 1"});
  c.push_back({Op::AvgPool, WindowConfig{1, {kBig * 2}, {1}, {0}}, {{3}}, {3}, K::kRule,
               "avg_pool: kernel or padding at spatial axis 0 is absurdly large"});
  c.push_back({Op::BatchNormEval, BatchNormAttrs{2, 3}, {{2, 3}}, {2, 3}, K::kRule,
               "batch_norm_eval: invalid axis 2 for rank 2"});
  c.push_back({Op::Softmax, AxisAttrs{0}, {{}}, {}, K::kRule, "softmax: invalid axis 0 for rank 0"});
  c.push_back({Op::HardMaskedSoftmax, HardMask{{2, 3}, {1, 1}}, {{2, 3}}, {2, 3}, K::kRule,
               "hard_masked_softmax: mask has 2 entries, expected 6"});
  c.push_back({Op::HardMaskedSoftmax, HardMask{{}, {1}}, {{}}, {}, K::kRule,
               "hard_masked_softmax: input must have rank >= 1, got []"});
  c.push_back({Op::Layernorm, AxisAttrs{3}, {{2, 3, 4}}, {2, 3, 4}, K::kRule, "layernorm: invalid axis 3 for rank 3"});
  c.push_back({Op::Layernorm, AxisAttrs{0}, {{3, 0, 2}}, {3, 0, 2}, K::kRule, "layernorm: embedDim must be > 0"});
  c.push_back({Op::Const, ValueShapeAttrs{{2}}, {}, {3}, K::kMismatch, "[2]"});
  return c;
}

// Input nodes with the given shapes, then the node under test (id = number of parents).
Graph graph_for(Op op, const Attrs& attrs, const std::vector<Shape>& parents, const Shape& declared) {
  Graph g;
  std::vector<int64_t> ids;
  for (const Shape& s : parents) {
    const int64_t id = static_cast<int64_t>(g.nodes.size());
    g.nodes.push_back(Node{id, {}, Op::Input, NoAttrs{}, s});
    ids.push_back(id);
  }
  g.nodes.push_back(Node{static_cast<int64_t>(g.nodes.size()), ids, op, attrs, declared});
  return g;
}

std::string label(Op op) { return std::string(op_tag(op)); }

void expect_pass(const PassCase& c) {
  SCOPED_TRACE(label(c.op));
  Graph g = graph_for(c.op, c.attrs, c.parents, c.expected);
  auto inferred = infer_shape(g.nodes.back(), c.parents);
  ASSERT_TRUE(inferred.ok()) << inferred.message();
  EXPECT_EQ(to_string(*inferred), to_string(c.expected));
  EXPECT_TRUE(check_well_formed(g).ok());
  Status s = check_shapes(g);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(diagnose(g).empty());
}

void expect_fail(const FailCase& c) {
  SCOPED_TRACE(label(c.op) + ": " + c.message);
  Graph g = graph_for(c.op, c.attrs, c.parents, c.declared);
  const Node& n = g.nodes.back();
  const std::string at = "IR graph: node " + std::to_string(n.id) + ": ";
  std::string full;
  switch (c.kind) {
    case FailKind::kRule: {
      auto inferred = infer_shape(n, c.parents);
      ASSERT_FALSE(inferred.ok()) << "inferred " << to_string(*inferred);
      EXPECT_EQ(inferred.message(), c.message);
      EXPECT_TRUE(check_well_formed(g).ok());
      full = at + c.message + " (" + summary(n) + ")";
      // check_shapes attributes the rule's error to its node; the rule's own text is the detail.
      const Status s = check_shapes(g);
      EXPECT_EQ(s.message(), full);
      EXPECT_EQ(s.detail(), c.message);
      EXPECT_EQ(s.node(), n.id);
      break;
    }
    case FailKind::kMismatch: {
      auto inferred = infer_shape(n, c.parents);
      ASSERT_TRUE(inferred.ok()) << inferred.message();
      EXPECT_EQ(to_string(*inferred), c.message);
      full = at + "outShape mismatch: inferred=" + c.message + ", declared=" + to_string(c.declared) + " (" +
             summary(n) + ")";
      EXPECT_TRUE(check_well_formed(g).ok());
      EXPECT_EQ(check_shapes(g).message(), full);
      break;
    }
    case FailKind::kStructure:
      full = at + c.message + " (" + summary(n) + ")";
      EXPECT_EQ(check_well_formed(g).message(), full);
      EXPECT_EQ(check_shapes(g).message(), full);
      break;
  }
  std::vector<Diagnostic> d = diagnose(g);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].node, n.id);
  EXPECT_EQ(d[0].message, full);
}

TEST(ShapeRules, EveryOpPasses) {
  for (const PassCase& c : pass_cases()) expect_pass(c);
}

TEST(ShapeRules, MoreBranchesPass) {
  for (const PassCase& c : more_pass_cases()) expect_pass(c);
}

TEST(ShapeRules, EveryOpFailsWithItsMessage) {
  for (const FailCase& c : fail_cases()) expect_fail(c);
}

TEST(ShapeRules, MoreBranchesFailWithTheirMessages) {
  for (const FailCase& c : more_fail_cases()) expect_fail(c);
  for (const FailCase& c : more_window_fail_cases()) expect_fail(c);
}

// A new op in ops.def without a passing and a failing case here fails this test.
TEST(ShapeRules, EveryOpOfTheTableHasCases) {
  std::set<Op> passing, failing;
  for (const PassCase& c : pass_cases()) passing.insert(c.op);
  for (const FailCase& c : fail_cases()) failing.insert(c.op);
  for (const OpInfo& info : kOpTable) {
    EXPECT_TRUE(passing.count(info.op)) << "no passing shape case for " << info.tag;
    EXPECT_TRUE(failing.count(info.op)) << "no failing shape case for " << info.tag;
  }
}

// Every case uses the attrs record its op's table row names, and the table is internally consistent.
TEST(ShapeRules, CasesUseTheTableAttrKinds) {
  for (const PassCase& c : pass_cases()) EXPECT_TRUE(attrs_match(c.op, c.attrs)) << op_tag(c.op);
  for (const FailCase& c : fail_cases()) EXPECT_TRUE(attrs_match(c.op, c.attrs)) << op_tag(c.op);
  for (const OpInfo& info : kOpTable) {
    EXPECT_EQ(op_from_tag(info.tag), info.op);
    EXPECT_EQ(&op_info(info.op), &info);
    EXPECT_TRUE(attrs_match(info.op, default_attrs(info.op))) << info.tag;
  }
  EXPECT_FALSE(op_from_tag("Relu").has_value());
  EXPECT_FALSE(op_from_tag("").has_value());
}

// The complete text of a few diagnostics, written out by hand (summary and describe formats).
TEST(ShapeRules, DiagnosticTextsInFull) {
  Graph g = graph_for(Op::Add, NoAttrs{}, {{2}, {3}}, {2});
  ASSERT_EQ(diagnose(g).size(), 1u);
  EXPECT_EQ(diagnose(g)[0].message,
            "IR graph: node 2: add: shape mismatch: [2] vs [3] (Node(id=2, kind=add, parents=#[0, 1], outShape=[2]))");
  g = graph_for(Op::Softmax, AxisAttrs{2}, {{2, 3}}, {2, 3});
  EXPECT_EQ(diagnose(g)[0].message,
            "IR graph: node 1: softmax: invalid axis 2 for rank 2 (Node(id=1, kind=softmax(axis=2), parents=#[0], "
            "outShape=[2, 3]))");
  g = graph_for(Op::Sum, NoAttrs{}, {{2, 3}}, {1});
  EXPECT_EQ(check_shapes(g).message(),
            "IR graph: node 1: outShape mismatch: inferred=[], declared=[1] (Node(id=1, kind=sum, parents=#[0], "
            "outShape=[1]))");
  g = graph_for(Op::Transpose, TransposeAttrs{0, 3}, {{2}}, {2});
  EXPECT_EQ(diagnose(g)[0].message,
            "IR graph: node 1: transpose: invalid axis 3 for rank 1 (Node(id=1, kind=transpose(axis1=0, axis2=3), "
            "parents=#[0], outShape=[2]))");
  g = graph_for(Op::Linear, NoAttrs{}, {{}}, {5});
  EXPECT_EQ(diagnose(g)[0].message,
            "IR graph: node 1: linear: input must have rank >= 1, got [] (Node(id=1, kind=linear(payload=node_id), "
            "parents=#[0], outShape=[5]))");
  g = graph_for(Op::Const, ValueShapeAttrs{{3}}, {}, {2});
  EXPECT_EQ(diagnose(g)[0].message,
            "IR graph: node 0: outShape mismatch: inferred=[3], declared=[2] (Node(id=0, kind=const(shape=[3]), "
            "parents=#[], outShape=[2]))");
}

// ---- structural check (check_well_formed)

Graph two_inputs_and(Node n) {
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(Node{1, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(std::move(n));
  return g;
}

TEST(WellFormed, ArityMessages) {
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0}, Op::Add, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: bad parent count for add: expected 2..2, got 1 (Node(id=2, kind=add, parents=#[0], "
            "outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0, 1, 1}, Op::Sub, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: bad parent count for sub: expected 2..2, got 3 (Node(id=2, kind=sub, parents=#[0, 1, "
            "1], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {1}, Op::Concat, AxisAttrs{0}, {2}})).message(),
            "IR graph: node 2: bad parent count for concat: expected at least 2, got 1 (Node(id=2, "
            "kind=concat(axis=0), parents=#[1], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0}, Op::Input, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: bad parent count for input: expected 0..0, got 1 (Node(id=2, kind=input, "
            "parents=#[0], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {}, Op::Relu, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: bad parent count for relu: expected 1..1, got 0 (Node(id=2, kind=relu, parents=#[], "
            "outShape=[2]))");
  // Concat is unbounded above; custom takes any number including none.
  EXPECT_TRUE(check_well_formed(two_inputs_and(Node{2, {0, 1, 0, 1, 0}, Op::Concat, AxisAttrs{0}, {10}})).ok());
  EXPECT_TRUE(check_shapes(two_inputs_and(Node{2, {0, 1, 0, 1, 0}, Op::Concat, AxisAttrs{0}, {10}})).ok());
  EXPECT_TRUE(check_well_formed(two_inputs_and(Node{2, {}, Op::Custom, CustomAttrs{"c", {}}, {1}})).ok());
  // Every op of the table rejects one parent too few (and one too many when bounded).
  for (const OpInfo& info : kOpTable) {
    if (info.min_parents > 0) {
      Node n{2, std::vector<int64_t>(static_cast<size_t>(info.min_parents) - 1, 0), info.op, default_attrs(info.op), {2}};
      std::string msg = check_well_formed(two_inputs_and(n)).message();
      EXPECT_NE(msg.find("bad parent count for " + std::string(info.tag)), std::string::npos) << msg;
    }
    if (info.max_parents >= 0) {
      Node n{2, std::vector<int64_t>(static_cast<size_t>(info.max_parents) + 1, 0), info.op, default_attrs(info.op), {2}};
      std::string msg = check_well_formed(two_inputs_and(n)).message();
      EXPECT_NE(msg.find("bad parent count for " + std::string(info.tag)), std::string::npos) << msg;
    }
  }
}

TEST(WellFormed, ParentsMustComeFirst) {
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0, 3}, Op::Add, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: parent id 3 is not < 2 (Node(id=2, kind=add, parents=#[0, 3], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {2}, Op::Relu, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: parent id 2 is not < 2 (Node(id=2, kind=relu, parents=#[2], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {-1}, Op::Relu, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: parent id -1 is not < 2 (Node(id=2, kind=relu, parents=#[-1], outShape=[2]))");
  // A two-node cycle is a forward parent at the first of them.
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(Node{1, {2}, Op::Relu, NoAttrs{}, {2}});
  g.nodes.push_back(Node{2, {1}, Op::Relu, NoAttrs{}, {2}});
  EXPECT_EQ(check_well_formed(g).message(),
            "IR graph: node 1: parent id 2 is not < 1 (Node(id=1, kind=relu, parents=#[2], outShape=[2]))");
  EXPECT_EQ(check_shapes(g).message(), check_well_formed(g).message());
}

TEST(WellFormed, IdDiscipline) {
  Graph g = two_inputs_and(Node{2, {0, 1}, Op::Add, NoAttrs{}, {2}});
  g.nodes[1].id = 0;
  EXPECT_EQ(check_well_formed(g).message(), "IR graph: id discipline violated at index 1: nodes[1].id = 0");
  g.nodes[1].id = 5;
  EXPECT_EQ(check_well_formed(g).message(), "IR graph: id discipline violated at index 1: nodes[1].id = 5");
  g.nodes[1].id = -1;
  EXPECT_EQ(check_well_formed(g).message(), "IR graph: id discipline violated at index 1: nodes[1].id = -1");
  // The id check comes first at a node; the first failing node wins.
  Graph h = two_inputs_and(Node{7, {0}, Op::Add, NoAttrs{}, {2}});
  EXPECT_EQ(check_well_formed(h).message(), "IR graph: id discipline violated at index 2: nodes[2].id = 7");
  h.nodes[0].out_shape = {-1};
  EXPECT_EQ(check_well_formed(h).message(),
            "IR graph: node 0: outShape: negative dimension -1 in shape [-1] (Node(id=0, kind=input, parents=#[], "
            "outShape=[-1]))");
  // Arity before parent order.
  Graph k = two_inputs_and(Node{2, {5}, Op::Add, NoAttrs{}, {2}});
  EXPECT_NE(check_well_formed(k).message().find("bad parent count for add"), std::string::npos);
  EXPECT_TRUE(check_well_formed(Graph{}).ok());
  EXPECT_TRUE(check_shapes(Graph{}).ok());
}

TEST(WellFormed, DeclaredDims) {
  Graph g = two_inputs_and(Node{2, {0}, Op::Relu, NoAttrs{}, {-3}});
  EXPECT_EQ(check_well_formed(g).message(),
            "IR graph: node 2: outShape: negative dimension -3 in shape [-3] (Node(id=2, kind=relu, parents=#[0], "
            "outShape=[-3]))");
  // 2^62 elements is the largest count allowed; one more, or a product past int64, overflows.
  const int64_t limit = int64_t{1} << 62;
  g.nodes[2].out_shape = {limit};
  EXPECT_TRUE(check_well_formed(g).ok());
  g.nodes[2].out_shape = {int64_t{1} << 31, int64_t{1} << 31};
  EXPECT_TRUE(check_well_formed(g).ok());
  g.nodes[2].out_shape = {limit + 1};
  EXPECT_EQ(check_well_formed(g).message(),
            "IR graph: node 2: outShape: element count of shape [4611686018427387905] overflows (Node(id=2, kind=relu, "
            "parents=#[0], outShape=[4611686018427387905]))");
  g.nodes[2].out_shape = {int64_t{1} << 32, int64_t{1} << 32, 0};
  EXPECT_NE(check_well_formed(g).message().find("overflows"), std::string::npos);
  g.nodes[2].out_shape = {0, int64_t{1} << 62, int64_t{1} << 62};  // zero elements, no overflow
  EXPECT_TRUE(check_well_formed(g).ok());
  g.nodes[2].out_shape = {0, -1};
  EXPECT_NE(check_well_formed(g).message().find("negative dimension -1 in shape [0, -1]"), std::string::npos);
}

TEST(WellFormed, AttrsOfTheWrongKind) {
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0}, Op::Softmax, NoAttrs{}, {2}})).message(),
            "IR graph: node 2: attrs: softmax needs a record of kind axis, got kind none (Node(id=2, kind=softmax, "
            "parents=#[0], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0}, Op::Relu, AxisAttrs{0}, {2}})).message(),
            "IR graph: node 2: attrs: relu needs a record of kind none, got kind axis (Node(id=2, kind=relu(axis=0), "
            "parents=#[0], outShape=[2]))");
  EXPECT_EQ(check_well_formed(two_inputs_and(Node{2, {0}, Op::MaxPool, ConvConfig{}, {2}})).message().rfind(
                "IR graph: node 2: attrs: max_pool needs a record of kind window, got kind conv (Node(id=2, kind=max_pool(", 0),
            0u);
  // check_shapes and diagnose stop at the structural error instead of reading the wrong record.
  Graph g = two_inputs_and(Node{2, {0}, Op::Flatten, PermAttrs{{0}}, {2}});
  EXPECT_FALSE(check_shapes(g).ok());
  ASSERT_EQ(diagnose(g).size(), 1u);
  EXPECT_EQ(diagnose(g)[0].message, check_well_formed(g).message());
  // Every op with every wrong attrs kind is a structural error, never a crash.
  for (const OpInfo& info : kOpTable) {
    for (const OpInfo& other : kOpTable) {
      if (other.attr == info.attr) continue;
      Node n{2, std::vector<int64_t>(static_cast<size_t>(info.min_parents), 0), info.op, default_attrs(other.op), {2}};
      Graph h = two_inputs_and(n);
      EXPECT_NE(check_shapes(h).message().find("needs a record of kind"), std::string::npos) << info.tag;
      EXPECT_EQ(diagnose(h).size(), 1u);
    }
  }
}

// diagnose reports every broken node; nodes that depend on a broken node stay quiet, and a node
// whose declared shape is wrong still lets its dependents be checked against that declared shape.
TEST(Diagnose, CollectsEveryNode) {
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2, 3}});
  g.nodes.push_back(Node{1, {0}, Op::Softmax, AxisAttrs{5}, {2, 3}});       // rule error
  g.nodes.push_back(Node{2, {1}, Op::Relu, NoAttrs{}, {2, 3}});              // depends on 1: quiet
  g.nodes.push_back(Node{3, {0}, Op::Relu, NoAttrs{}, {3, 2}});              // declared mismatch
  g.nodes.push_back(Node{4, {3}, Op::Transpose, TransposeAttrs{0, 1}, {2, 3}});  // fine given [3, 2]
  g.nodes.push_back(Node{5, {9}, Op::Relu, NoAttrs{}, {2, 3}});              // forward parent
  g.nodes.push_back(Node{6, {0, 4}, Op::Add, NoAttrs{}, {2, 3}});            // fine
  std::vector<Diagnostic> d = diagnose(g);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].node, 1);
  EXPECT_EQ(d[0].message,
            "IR graph: node 1: softmax: invalid axis 5 for rank 2 (Node(id=1, kind=softmax(axis=5), parents=#[0], "
            "outShape=[2, 3]))");
  EXPECT_EQ(d[1].node, 3);
  EXPECT_EQ(d[1].message,
            "IR graph: node 3: outShape mismatch: inferred=[2, 3], declared=[3, 2] (Node(id=3, kind=relu, "
            "parents=#[0], outShape=[3, 2]))");
  EXPECT_EQ(d[2].node, 5);
  EXPECT_EQ(d[2].message,
            "IR graph: node 5: parent id 9 is not < 5 (Node(id=5, kind=relu, parents=#[9], outShape=[2, 3]))");
  // check_shapes stops at the first error (the structural one at node 5 is found first).
  EXPECT_EQ(check_shapes(g).message(), d[2].message);
}

TEST(Diagnose, InferShapesReturnsEveryShape) {
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2, 3}});
  g.nodes.push_back(Node{1, {0}, Op::Transpose, TransposeAttrs{0, 1}, {3, 2}});
  g.nodes.push_back(Node{2, {1}, Op::ReduceSum, AxisAttrs{1}, {3}});
  auto shapes = infer_shapes(g);
  ASSERT_TRUE(shapes.ok()) << shapes.message();
  ASSERT_EQ(shapes->size(), 3u);
  EXPECT_EQ((*shapes)[2], (Shape{3}));
  g.nodes[2].out_shape = {2};
  EXPECT_FALSE(infer_shapes(g).ok());
}

}  // namespace
}  // namespace denote
