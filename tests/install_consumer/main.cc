// Builds a two-node model, checks it, evaluates it in f64 and MPFR, and round-trips it through
// torchlean.ir.v1 JSON and ONNX: one call into each dependency the static library links.
#include <cstdio>
#include <vector>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"

int main() {
  using namespace denote;
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.unary(Op::Relu, b.linear(x, 2, {1, 2, 3, 4}, {0.5, -100}));
  Result<Model> m = b.build({y});
  if (!m.ok() || !check_model(*m).ok()) return std::puts("consumer: build/check failed"), 1;
  const std::vector<Tensor<double>> in = {Tensor<double>{{2}, {1, 1}}};
  F64Context f64;
  RealContext real(128);
  auto a = denote::denote(m->graph, m->payload, std::span<const Tensor<double>>(in), y, f64);
  Payload<RealContext::Scalar> rp = convert_payload<RealContext::Scalar>(m->payload, [&](double v) { return real.from_double(v); });
  std::vector<Tensor<RealContext::Scalar>> rin = {Tensor<RealContext::Scalar>{{2}, {real.from_double(1), real.from_double(1)}}};
  auto r = denote::denote(m->graph, rp, std::span<const Tensor<RealContext::Scalar>>(rin), y, real);
  auto back = read_model_json(write_model_json(*m));
  auto onnx = write_model_onnx(*m);
  if (!a.ok() || !r.ok() || !back.ok() || !onnx.ok() || !read_model_onnx(*onnx).ok())
    return std::puts("consumer: evaluation or round trip failed"), 1;
  std::printf("consumer: y = [%g, %g], real y0 = %g\n", a->data[0], a->data[1], real.to_double(r->data[0]));
  return a->data[0] == 3.5 && a->data[1] == 0 && real.to_double(r->data[0]) == 3.5 ? 0 : 1;
}
