// The openblas provider (cpu): linear (gemv / gemm), matmul (one gemm per broadcast batch), conv
// (im2col + one gemm per leading index and group) and add/sub (axpy), in f32 and f64. Elementwise
// ops without a BLAS routine (mul, relu, ...) are not claimed: they stay on the reference provider,
// which is also what the seed's prefer:openblas plan shows. Contractions have an implementation-defined summation order (OpenBLAS's
// blocking, FMA), documented with an error bound per capsule; the elementwise ops are exact.
// Payload errors, empty extents and extents beyond BLAS's 32-bit ints are handed to the reference
// kernel, so error texts are the reference's. OpenBLAS runs with 1 thread (DENOTE_OPENBLAS_THREADS=N
// overrides), so results do not depend on the thread count.
#include "denote/providers/providers.h"
#include "cpu_capsule.h"
#include "reference_kernel.h"

#ifdef DENOTE_HAVE_OPENBLAS

#include "kernels/blas.h"
#include "openblas_prepared.h"

#include <climits>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "../ops/contraction_eval.h"
#include "../ops/window_eval.h"

namespace denote {

namespace {

using kernels::blas::ensure_threads;

bool fits_blas(std::initializer_list<int64_t> dims) { return kernels::blas::fits(dims); }

template <class S>
void gemm(bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S* c, int64_t ldc, S beta = 0) {
  kernels::blas::gemm(false, trans_b, m, n, k, a, b, c, ldc, beta);
}

template <class S>
void gemv_acc(int64_t rows, int64_t cols, const S* a, const S* x, S* y) {
  kernels::blas::gemv(rows, cols, a, x, y, S(1));
}

template <class S>
Result<Tensor<S>> linear_kernel(const KernelArgs<S>& k) {
  ensure_threads();
  const auto* rec = find_record(k.payload.linear, k.node.id);
  const Tensor<S>& x = *k.parents[0];
  if (!rec || x.shape.back() != rec->in_dim || k.out_shape.back() != rec->out_dim ||
      static_cast<int64_t>(rec->weight.size()) != rec->out_dim * rec->in_dim ||
      static_cast<int64_t>(rec->bias.size()) != rec->out_dim)
    return reference_kernel(k);  // the reference rule reports the payload error
  const int64_t out = rec->out_dim, in = rec->in_dim, lead = numel(k.out_shape) / std::max<int64_t>(out, 1);
  if (!fits_blas({out, in, lead})) return reference_kernel(k);
  // Y starts as the bias rows and the BLAS call accumulates into it (beta = 1): the bias is one more
  // term of each sum, in OpenBLAS's order (covered by the capsule's tolerance).
  Tensor<S> y;
  y.shape = k.out_shape;
  y.data.reserve(static_cast<size_t>(lead * out));
  for (int64_t r = 0; r < lead; ++r) y.data.insert(y.data.end(), rec->bias.begin(), rec->bias.end());
  if (lead == 1) gemv_acc(out, in, rec->weight.data(), x.data.data(), y.data.data());
  else gemm(/*trans_b=*/true, lead, out, in, x.data.data(), rec->weight.data(), y.data.data(), out, S(1));
  return y;
}

template <class S>
Result<Tensor<S>> matmul_kernel(const KernelArgs<S>& k) {
  ensure_threads();
  const Tensor<S>& x = *k.parents[0];
  const Tensor<S>& y = *k.parents[1];
  const rules::MatmulDims d = rules::matmul_dims(x.shape, y.shape);
  if (!fits_blas({d.m, d.n, d.k})) return reference_kernel(k);
  const std::vector<int64_t> a_off = rules::strided_offsets(0, d.batch, d.a_strides);
  const std::vector<int64_t> b_off = rules::strided_offsets(0, d.batch, d.b_strides);
  Tensor<S> out;
  out.shape = k.out_shape;
  out.data.resize(static_cast<size_t>(numel(k.out_shape)));
  for (size_t t = 0; t < a_off.size(); ++t)
    gemm(/*trans_b=*/false, d.m, d.n, d.k, x.data.data() + a_off[t] * d.m * d.k, y.data.data() + b_off[t] * d.k * d.n,
         out.data.data() + static_cast<int64_t>(t) * d.m * d.n, d.n);
  return out;
}

// For every kernel position kk and output position p, the input offset the tap reads within one
// channel's spatial block, or -1 where it falls on padding: gather[kk * out_vol + p].
std::vector<int64_t> conv_gather(const rules::Window& w) {
  const int64_t out_vol = numel(w.out);
  std::vector<int64_t> gather(static_cast<size_t>(numel(w.kernel) * out_vol), -1);
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (const rules::Tap& t : taps) gather[static_cast<size_t>(t.k * out_vol + p)] = t.in;
  });
  return gather;
}

// out[l, group g, :] = W_g [group_out, group_in * taps] x col [group_in * taps, out_vol], + bias.
template <class S>
Result<Tensor<S>> conv_kernel(const KernelArgs<S>& k) {
  ensure_threads();
  const Tensor<S>& x = *k.parents[0];
  const auto* rec = find_record(k.payload.conv, k.node.id);
  if (!rules::check_conv_record(k.node, rec, x.shape).ok()) return reference_kernel(k);
  for (const S& w : rec->weight)
    if (!std::isfinite(w)) return reference_kernel(k);  // padded taps would multiply 0 by it
  const auto& c = std::get<ConvConfig>(k.node.attrs);
  const rules::Window w = rules::conv_window(c, x.shape, k.out_shape);
  const int64_t lead = numel(x.shape.begin(), x.shape.begin() + c.channel_axis);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out), k_vol = numel(w.kernel);
  const int64_t group_in = c.in_channels / c.groups, group_out = c.out_channels / c.groups;
  if (!fits_blas({group_out, out_vol, group_in * k_vol, lead})) return reference_kernel(k);
  const std::vector<int64_t> gather = conv_gather(w);
  Tensor<S> out;
  out.shape = k.out_shape;
  out.data.resize(static_cast<size_t>(numel(k.out_shape)));
  std::vector<S> col(static_cast<size_t>(group_in * k_vol * out_vol));
  for (int64_t l = 0; l < lead; ++l) {
    for (int64_t g = 0; g < c.groups; ++g) {
      for (int64_t ic = 0; ic < group_in; ++ic) {
        const S* xs = x.data.data() + (l * c.in_channels + g * group_in + ic) * in_vol;
        S* block = col.data() + ic * k_vol * out_vol;
        for (size_t i = 0; i < gather.size(); ++i) block[i] = gather[i] < 0 ? S(0) : xs[gather[i]];
      }
      S* dst = out.data.data() + (l * c.out_channels + g * group_out) * out_vol;
      for (int64_t o = 0; o < group_out; ++o)
        std::fill(dst + o * out_vol, dst + (o + 1) * out_vol, rec->bias[static_cast<size_t>(g * group_out + o)]);
      gemm(/*trans_b=*/false, group_out, out_vol, group_in * k_vol,
           rec->weight.data() + g * group_out * group_in * k_vol, col.data(), dst, out_vol, S(1));
    }
  }
  return out;
}

// add: y = b; y += 1 * a (axpy). sub: y = a; y += -1 * b. Both round once, exactly as a + b, a - b.
template <class S, bool kSub>
Result<Tensor<S>> axpy_kernel(const KernelArgs<S>& k) {
  ensure_threads();
  const Tensor<S>& a = *k.parents[0];
  const Tensor<S>& b = *k.parents[1];
  const int64_t n = static_cast<int64_t>(a.data.size());
  if (!fits_blas({n})) return reference_kernel(k);
  Tensor<S> y(k.out_shape, kSub ? a.data : b.data);
  const S* x = kSub ? b.data.data() : a.data.data();
  kernels::blas::axpy(n, kSub ? S(-1) : S(1), x, y.data.data());
  return y;
}

KernelCapsule openblas_capsule(BackendOp op, bool contraction) {
  KernelCapsule c = cpu_capsule::checked("openblas", op, true);
  c.layout = {"dense row-major tensors; BLAS calls use CblasRowMajor with leading dimension = row length",
              {EvidenceKind::RuntimeGuard, "openblas kernels: extents checked to fit BLAS int, else reference"}};
  c.value = {contraction ? "the IR denotation up to the summation order: within the stated tolerance"
                         : "the IR denotation, bit for bit",
             {EvidenceKind::TestSuite, "denote_tests: PlanDifferential.*"}};
  c.numerics.reduction = contraction ? Reduction::ImplementationDefined : Reduction::NotApplicable;
  c.numerics.accumulation = contraction ? "value" : "n/a";
  c.numerics.tolerance = contraction ? cpu_capsule::kContractionTolerance : "exact";
  return c;
}

struct Entry {
  BackendOp op;
  bool contraction;
  KernelFn<double> f64;
  KernelFn<float> f32;
  PrepareFn<double> prepare64 = nullptr;
  PrepareFn<float> prepare32 = nullptr;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {BackendOp::Linear, true, &linear_kernel<double>, &linear_kernel<float>, &openblas_prepare_linear<double>,
       &openblas_prepare_linear<float>},
      {BackendOp::Matmul, true, &matmul_kernel<double>, &matmul_kernel<float>, &openblas_prepare_matmul<double>,
       &openblas_prepare_matmul<float>},
      {BackendOp::Conv, true, &conv_kernel<double>, &conv_kernel<float>, &openblas_prepare_conv<double>,
       &openblas_prepare_conv<float>},
      {BackendOp::Add, false, &axpy_kernel<double, false>, &axpy_kernel<float, false>, &openblas_prepare_axpy<double, false>,
       &openblas_prepare_axpy<float, false>},
      {BackendOp::Sub, false, &axpy_kernel<double, true>, &axpy_kernel<float, true>, &openblas_prepare_axpy<double, true>,
       &openblas_prepare_axpy<float, true>},
  };
  return kEntries;
}

}  // namespace

bool openblas_built() { return true; }

CapsuleModule openblas_module() {
  CapsuleModule m{"openblas.cpu", "openblas", "cpu", {}};
  for (const Entry& e : entries()) m.capsules.push_back(openblas_capsule(e.op, e.contraction));
  return m;
}

std::vector<KernelHandler> openblas_handlers() {
  std::vector<KernelHandler> out;
  for (const Entry& e : entries())
    out.push_back(KernelHandler{fmt::format("openblas.{}", backend_op_name(e.op)), e.op, "openblas", "cpu", e.f64,
                                e.f32, e.prepare64, e.prepare32});
  return out;
}

void register_openblas_provider(ProviderList& out) {
  out.push_back(ProviderEntry{"openblas", &openblas_module, &openblas_handlers, &cpu_capsule::cpu_only, 1});
}

}  // namespace denote

#else  // !DENOTE_HAVE_OPENBLAS

namespace denote {

bool openblas_built() { return false; }
CapsuleModule openblas_module() { return CapsuleModule{"openblas.cpu", "openblas", "cpu", {}}; }
std::vector<KernelHandler> openblas_handlers() { return {}; }
void register_openblas_provider(ProviderList&) {}  // not built: nothing to register

}  // namespace denote

#endif
