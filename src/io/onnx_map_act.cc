// ONNX -> IR mapping of activations the IR spells with several ops: LeakyRelu, PRelu, Elu, Selu,
// Celu, Softsign, HardSigmoid, HardSwish, Sinh, Cosh, Tan. Each composition is exact where the
// ONNX definition is a selection (x or alpha * x) and otherwise follows the ONNX formula.
#include <fmt/format.h>

#include "onnx_import.h"

namespace denote::onnxio {
namespace {

// `x op c` for a scalar constant c, broadcast.
Result<int64_t> with_scalar(Importer& im, Op op, int64_t x, double c) {
  DENOTE_ASSIGN_OR_RETURN(int64_t k, im.emit_scalar(c, {}));
  return im.binary(op, x, k);
}

// relu(-x) = -min(x, 0), exact.
Result<int64_t> negative_part(Importer& im, int64_t x) {
  DENOTE_ASSIGN_OR_RETURN(int64_t n, im.emit(Op::Neg, {x}));
  return im.emit(Op::Relu, {n});
}

// relu(x) - slope * relu(-x): x for x >= 0, slope * x below (exact: one product).
Result<int64_t> leaky(Importer& im, int64_t x, int64_t slope) {
  DENOTE_ASSIGN_OR_RETURN(int64_t r, im.emit(Op::Relu, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t n, negative_part(im, x));
  DENOTE_ASSIGN_OR_RETURN(int64_t s, im.binary(Op::MulElem, n, slope));
  return im.binary(Op::Sub, r, s);
}

Status map_leaky_relu(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double alpha, attr_float(im, "alpha", 0.01));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.emit_scalar(alpha, {}));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, leaky(im, x, a));
  return im.set_output(0, y);
}

Status map_prelu(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t slope, im.input(1));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, leaky(im, x, slope));
  if (im.shape(y) != im.shape(x)) return im.fail("slope must broadcast to X's shape");
  return im.set_output(0, y);
}

// relu(x) + alpha * (exp(min(x, 0) / scale) - 1): Elu (scale 1) and Celu (scale alpha).
Result<int64_t> elu(Importer& im, int64_t x, double alpha, double scale) {
  DENOTE_ASSIGN_OR_RETURN(int64_t n, negative_part(im, x));
  DENOTE_ASSIGN_OR_RETURN(int64_t m, im.emit(Op::Neg, {n}));
  if (scale != 1.0) { DENOTE_ASSIGN_OR_RETURN(m, with_scalar(im, Op::Div, m, scale)); }
  DENOTE_ASSIGN_OR_RETURN(int64_t e, im.emit(Op::Exp, {m}));
  DENOTE_ASSIGN_OR_RETURN(int64_t em1, with_scalar(im, Op::Sub, e, 1.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t neg, with_scalar(im, Op::MulElem, em1, alpha));
  DENOTE_ASSIGN_OR_RETURN(int64_t r, im.emit(Op::Relu, {x}));
  return im.binary(Op::Add, r, neg);
}

template <int kKind>  // 0 Elu, 1 Selu, 2 Celu
Status map_elu(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double alpha, attr_float(im, "alpha", kKind == 1 ? 1.67326319217681884765625 : 1.0));
  DENOTE_ASSIGN_OR_RETURN(double gamma, attr_float(im, "gamma", 1.05070102214813232421875));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  if (kKind == 2 && alpha == 0.0) return im.fail("alpha must not be 0");
  DENOTE_ASSIGN_OR_RETURN(int64_t y, elu(im, x, alpha, kKind == 2 ? alpha : 1.0));
  if (kKind == 1) { DENOTE_ASSIGN_OR_RETURN(y, with_scalar(im, Op::MulElem, y, gamma)); }
  return im.set_output(0, y);
}

Status map_softsign(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.emit(Op::Abs, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t d, with_scalar(im, Op::Add, a, 1.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Div, {x, d}));
  return im.set_output(0, y);
}

// max(0, min(1, alpha * x + beta)).
Result<int64_t> hard_sigmoid(Importer& im, int64_t x, double alpha, double beta) {
  DENOTE_ASSIGN_OR_RETURN(int64_t t, with_scalar(im, Op::MulElem, x, alpha));
  DENOTE_ASSIGN_OR_RETURN(t, with_scalar(im, Op::Add, t, beta));
  DENOTE_ASSIGN_OR_RETURN(t, im.emit(Op::ClampMin, {t}, ClampAttrs{0.0}));
  DENOTE_ASSIGN_OR_RETURN(t, im.emit(Op::Neg, {t}));
  DENOTE_ASSIGN_OR_RETURN(t, im.emit(Op::ClampMin, {t}, ClampAttrs{-1.0}));
  return im.emit(Op::Neg, {t});
}

Status map_hard_sigmoid(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double alpha, attr_float(im, "alpha", 0.2));
  DENOTE_ASSIGN_OR_RETURN(double beta, attr_float(im, "beta", 0.5));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, hard_sigmoid(im, x, alpha, beta));
  return im.set_output(0, y);
}

Status map_hard_swish(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t h, hard_sigmoid(im, x, 1.0 / 6.0, 0.5));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::MulElem, {x, h}));
  return im.set_output(0, y);
}

// Sinh, Cosh: (e^x -/+ e^-x) / 2.
template <Op kCombine>
Status map_hyperbolic(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t n, im.emit(Op::Neg, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t ep, im.emit(Op::Exp, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t en, im.emit(Op::Exp, {n}));
  DENOTE_ASSIGN_OR_RETURN(int64_t c, im.emit(kCombine, {ep, en}));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, with_scalar(im, Op::Div, c, 2.0));
  return im.set_output(0, y);
}

Status map_tan(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t s, im.emit(Op::Sin, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t c, im.emit(Op::Cos, {x}));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Div, {s, c}));
  return im.set_output(0, y);
}

}  // namespace

std::vector<MapEntry> act_mappers() {
  return {
      {"LeakyRelu", map_leaky_relu}, {"PRelu", map_prelu}, {"Elu", map_elu<0>}, {"Selu", map_elu<1>},
      {"Celu", map_elu<2>}, {"Softsign", map_softsign}, {"HardSigmoid", map_hard_sigmoid},
      {"HardSwish", map_hard_swish}, {"Sinh", map_hyperbolic<Op::Sub>}, {"Cosh", map_hyperbolic<Op::Add>},
      {"Tan", map_tan},
  };
}

}  // namespace denote::onnxio
