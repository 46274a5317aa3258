// The avx2 provider (cpu with AVX2 and FMA): linear and conv on the register-blocked GEMM of
// kernels/panel_gemm.h, in f32 and f64. linear packs W^T into 16-column panels once (compile time of a
// compiled plan); conv with unit strides and rank 2 is an implicit GEMM over a padded copy of the
// image (no im2col: each tap is an offset into the image), other convs use im2col. Every output is
// one fma chain over k in order, then + bias and a fused relu in registers at the store, then any
// further fused pointwise stages; the order is fixed per
// output (independent of blocking and threads), but FMA rounds once per product-sum, so the capsule
// is implementation-defined with the openblas capsules' tolerance. Registered only when the CPU has
// AVX2 and FMA. Payload errors and unusual extents go to the reference kernel.
#include <cmath>
#include <type_traits>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "kernels/panel_gemm.h"
#include "cpu_capsule.h"
#include "denote/providers/providers.h"
#include "im2col.h"
#include "prepared_util.h"
#include "reference_kernel.h"

namespace denote {

namespace {

namespace panel = kernels::panel;
using panel::kNr;
using panel::Panel;
using prepared::chunk_range;

constexpr int64_t kMaxOffset = int64_t{1} << 30;  // boff entries are int32

template <class S>
std::optional<PreparedKernel<S>> prepare_linear(const PrepareArgs<S>& a) {
  const auto* rec = find_record(a.payload.linear, a.node.id);
  if (a.parent_shapes.size() != 1 || a.parent_shapes[0].empty() || a.out_shape.empty() || !rec) return std::nullopt;
  const int64_t out = rec->out_dim, in = rec->in_dim;
  if (a.parent_shapes[0].back() != in || a.out_shape.back() != out ||
      static_cast<int64_t>(rec->weight.size()) != out * in || static_cast<int64_t>(rec->bias.size()) != out)
    return std::nullopt;
  const int64_t lead = out > 0 ? numel(a.out_shape) / out : 0;
  if (lead <= 0 || out <= 0 || in <= 0 || in * kNr<S> > kMaxOffset) return std::nullopt;
  // W^T in panels of kNr columns: packed[j][k][c] = W[j * kNr + c][k], zero past out.
  const int64_t panels = (out + kNr<S> - 1) / kNr<S>;
  auto packed = std::make_shared<std::vector<S>>(static_cast<size_t>(panels * in * kNr<S>), S(0));
  auto boff = std::make_shared<std::vector<int32_t>>();
  auto table = std::make_shared<std::vector<Panel>>();
  for (int64_t j = 0; j < panels; ++j) {
    for (int64_t k = 0; k < in; ++k)
      for (int64_t c = 0; c < kNr<S> && j * kNr<S> + c < out; ++c)
        (*packed)[static_cast<size_t>((j * in + k) * kNr<S> + c)] = rec->weight[static_cast<size_t>((j * kNr<S> + c) * in + k)];
    table->push_back(Panel{j * in * kNr<S>, j * kNr<S>, std::min<int64_t>(kNr<S>, out - j * kNr<S>)});
  }
  for (int64_t k = 0; k < in; ++k) boff->push_back(static_cast<int32_t>(k * kNr<S>));
  const int64_t chunks = lead < 32 ? 1 : std::min<int64_t>(8, lead / 16);
  const int64_t per = (lead + chunks - 1) / chunks;
  std::vector<S> bias(static_cast<size_t>(panels * kNr<S>), S(0));  // padded: the store reads whole panels
  std::copy(rec->bias.begin(), rec->bias.end(), bias.begin());
  PreparedKernel<S> k;
  k.chunks = prepared::chunks_of(lead, per);
  k.takes_epilogue = true;
  k.run = [=, bias = std::move(bias)](const KernelCall<S>& c) {
    const auto r = chunk_range(c.chunk, lead, per);
    S* y = c.out + r.begin * out;
    const panel::Output how{panel::Output::Bias::PerColumn, c.epilogue->first_is_relu};
    panel::gemm(r.size(), in, c.in[0] + r.begin * in, in, packed->data(), boff->data(), *table, y, out, bias.data(),
                how);
    if (c.epilogue->stages.size() > (how.relu ? 1u : 0u))
      for (int64_t row = 0; row < r.size(); ++row) c.epilogue->apply_after_relu(y + row * out, out);
  };
  return k;
}

// The B operand of a conv chunk: how to build it, its tap offsets and its column panels.
struct ConvPlan {
  prepared::ConvGeometry g;
  bool implicit = false;         // unit strides, rank 2: B is the padded image, boff the tap offsets
  bool in_place = false;         // implicit without padding or over-reads: B is the input image
  int64_t hp = 0, wp = 0;        // implicit: the padded image extents
  std::vector<int32_t> boff;
  std::vector<Panel> panels;
  int64_t scratch = 0;           // values (with kNr slack: panels may read past their last column)
};

template <class S>
std::optional<ConvPlan> conv_plan(const ConvConfig& c, const Shape& xs, const Shape& out_shape) {
  ConvPlan p;
  p.g = prepared::conv_geometry(c, xs, out_shape);
  const rules::Window& w = p.g.w;
  const int64_t gin = c.in_channels / c.groups, kdim = gin * p.g.k_vol;
  p.implicit = w.in.size() == 2 && w.stride[0] == 1 && w.stride[1] == 1;
  if (p.implicit) {
    const int64_t OH = w.out[0], OW = w.out[1];
    p.hp = OH + (w.kernel[0] - 1) * w.dilation[0];
    p.wp = OW + (w.kernel[1] - 1) * w.dilation[1];
    if (c.in_channels * p.hp * p.wp > kMaxOffset) return std::nullopt;
    for (int64_t ic = 0; ic < gin; ++ic)
      for (int64_t kh = 0; kh < w.kernel[0]; ++kh)
        for (int64_t kw = 0; kw < w.kernel[1]; ++kw)
          p.boff.push_back(static_cast<int32_t>(ic * p.hp * p.wp + kh * w.dilation[0] * p.wp + kw * w.dilation[1]));
    // A row of 17..24 outputs is one 24-wide panel (f32, at least 4 output channels per group).
    const bool wide = std::is_same_v<S, float> && c.out_channels / c.groups >= 4;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW;) {
        const int64_t left = OW - ow, n = wide && left > 16 && left <= 24 ? left : std::min<int64_t>(kNr<S>, left);
        p.panels.push_back(Panel{oh * p.wp + ow, oh * OW + ow, n});
        ow += n;
      }
    p.scratch = c.in_channels * p.hp * p.wp + 3 * kNr<S>;
    // No padding and no panel reading past its last column: B is the image itself (no copy).
    p.in_place = w.pad_before[0] == 0 && w.pad_before[1] == 0 && p.hp == w.in[0] && p.wp == w.in[1];
    for (const Panel& q : p.panels)  // (fewer than 4 rows read whole 16-column panels)
      p.in_place = p.in_place && (q.n == 16 || ((q.n == 8 || q.n == 24) && wide));
  } else {
    if (kdim * p.g.out_vol > kMaxOffset) return std::nullopt;
    for (int64_t k = 0; k < kdim; ++k) p.boff.push_back(static_cast<int32_t>(k * p.g.out_vol));
    for (int64_t j = 0; j < p.g.out_vol; j += kNr<S>)
      p.panels.push_back(Panel{j, j, std::min<int64_t>(kNr<S>, p.g.out_vol - j)});
    p.scratch = kdim * p.g.out_vol + kNr<S>;
  }
  return p;
}

// The image of one leading index, zero-padded into hp x wp planes (pad before = the conv's).
template <class S>
void pad_image(const ConvPlan& p, const S* x, int64_t channels, S* dst) {
  const rules::Window& w = p.g.w;
  std::fill(dst, dst + channels * p.hp * p.wp, S(0));
  const int64_t H = w.in[0], W = w.in[1], ph = w.pad_before[0], pw = w.pad_before[1];
  const int64_t w0 = std::max<int64_t>(0, -pw), w1 = std::min<int64_t>(W, p.wp - pw);
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t ih = std::max<int64_t>(0, -ph); ih < H && ih + ph < p.hp; ++ih)
      if (w1 > w0)
        std::memcpy(dst + (ch * p.hp + ih + ph) * p.wp + pw + w0, x + (ch * H + ih) * W + w0,
                    static_cast<size_t>(w1 - w0) * sizeof(S));
}

template <class S>
std::optional<PreparedKernel<S>> prepare_conv(const PrepareArgs<S>& a) {
  const auto* rec = prepared::usable_conv_record(a);
  if (!rec) return std::nullopt;
  const Shape& xs = a.parent_shapes[0];
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  const int64_t lead = numel(xs.begin(), xs.begin() + c.channel_axis);
  const int64_t gin = c.in_channels / c.groups, gout = c.out_channels / c.groups, groups = c.groups;
  const int64_t cin = c.in_channels, cout = c.out_channels;
  if (lead <= 0 || gin <= 0 || gout <= 0 || numel(a.out_shape) == 0) return std::nullopt;
  std::optional<ConvPlan> plan = conv_plan<S>(c, xs, a.out_shape);
  if (!plan) return std::nullopt;
  auto p = std::make_shared<const ConvPlan>(std::move(*plan));
  const int64_t kdim = gin * p->g.k_vol, in_vol = p->g.in_vol, out_vol = p->g.out_vol;
  PreparedKernel<S> k;
  k.chunks = lead;
  k.scratch = p->scratch;
  k.takes_epilogue = true;
  k.run = [=, w = rec->weight, b = rec->bias](const KernelCall<S>& call) {
    const int64_t l = call.chunk;
    const S* image = call.in[0] + l * cin * in_vol;
    if (p->implicit && !p->in_place) pad_image(*p, image, cin, call.scratch);
    const S* padded = p->in_place ? image : call.scratch;
    for (int64_t grp = 0; grp < groups; ++grp) {
      const S* bmat = padded + grp * gin * p->hp * p->wp;
      if (!p->implicit) {
        const S* x = image + grp * gin * in_vol;
        if (p->g.two_d) prepared::im2col_2d(p->g, x, gin, call.scratch);
        else if (p->g.direct) std::memcpy(call.scratch, x, static_cast<size_t>(gin * in_vol) * sizeof(S));
        else prepared::im2col_gather(p->g, x, gin, call.scratch);
        bmat = call.scratch;
      }
      S* y = call.out + (l * cout + grp * gout) * out_vol;
      const panel::Output how{panel::Output::Bias::PerRow, call.epilogue->first_is_relu};
      panel::gemm(gout, kdim, w.data() + grp * gout * kdim, kdim, bmat, p->boff.data(), p->panels, y, out_vol,
                 b.data() + grp * gout, how);
      if (call.epilogue->stages.size() > (how.relu ? 1u : 0u))
        for (int64_t o = 0; o < gout; ++o) call.epilogue->apply_after_relu(y + o * out_vol, out_vol);
    }
  };
  return k;
}

// The ordinary kernel: the prepared one run on fresh buffers (or the reference for what it declines).
template <class S, std::optional<PreparedKernel<S>> (*Prepare)(const PrepareArgs<S>&)>
Result<Tensor<S>> ordinary(const KernelArgs<S>& args) {
  std::vector<Shape> shapes;
  std::vector<const S*> ptrs;
  for (const Tensor<S>* t : args.parents) {
    shapes.push_back(t->shape);
    ptrs.push_back(t->data.data());
  }
  std::optional<PreparedKernel<S>> k = Prepare(PrepareArgs<S>{args.node, shapes, args.payload, args.out_shape});
  if (!k) return reference_kernel(args);
  Tensor<S> y = Tensor<S>::filled(args.out_shape, S(0));
  std::vector<S> scratch(static_cast<size_t>(std::max<int64_t>(k->scratch, 1)));
  const Epilogue<S> none;
  for (int64_t c = 0; c < k->chunks; ++c) k->run(KernelCall<S>{ptrs, y.data.data(), c, scratch.data(), &none});
  return y;
}

KernelCapsule avx2_capsule(BackendOp op) {
  KernelCapsule c = cpu_capsule::checked("avx2", op, true);
  c.layout = {"dense row-major tensors; weights repacked into 16-column panels; tap offsets checked to fit int32",
              {EvidenceKind::RuntimeGuard, "avx2 kernels: extents checked, else reference"}};
  c.value = {"the IR denotation up to the summation order (one fma chain per output): within the stated tolerance",
             {EvidenceKind::TestSuite, "denote_tests: PlanDifferential.*, PlanCompiled.*"}};
  c.numerics.reduction = Reduction::ImplementationDefined;
  c.numerics.accumulation = "value";
  c.numerics.tolerance = cpu_capsule::kContractionTolerance;
  return c;
}

}  // namespace

CapsuleModule avx2_module() {
  CapsuleModule m{"avx2.cpu", "avx2", "cpu", {}};
  if (panel::cpu_supported())
    for (BackendOp op : {BackendOp::Linear, BackendOp::Conv}) m.capsules.push_back(avx2_capsule(op));
  return m;
}

std::vector<KernelHandler> avx2_handlers() {
  if (!panel::cpu_supported()) return {};
  return {
      KernelHandler{"avx2.linear", BackendOp::Linear, "avx2", "cpu", &ordinary<double, &prepare_linear<double>>,
                    &ordinary<float, &prepare_linear<float>>, &prepare_linear<double>, &prepare_linear<float>},
      KernelHandler{"avx2.conv", BackendOp::Conv, "avx2", "cpu", &ordinary<double, &prepare_conv<double>>,
                    &ordinary<float, &prepare_conv<float>>, &prepare_conv<double>, &prepare_conv<float>},
  };
}

// Registers nothing on a CPU without AVX2 and FMA (the kernels would not run there).
void register_avx2_provider(ProviderList& out) {
  if (panel::cpu_supported())
    out.push_back(ProviderEntry{"avx2", &avx2_module, &avx2_handlers, &cpu_capsule::cpu_only, 2});
}

}  // namespace denote
