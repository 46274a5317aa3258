// MX conv (src/typed/mx_conv.h): one MX product per kernel position over every output position.
#include "typed/mx_conv.h"

#include <fmt/format.h>

#include <optional>

#include "ops/window_eval.h"

namespace denote::mx_detail {
namespace {

// W [cout, cin, k_vol] at kernel position k as [cout, cin], quantized along cin: its operand rows are
// mx_matmul's b columns.
Result<MxTensor> tap_weights(const ConvRecord<double>& rec, const MxFormat& f, int64_t block, int64_t k) {
  const int64_t cout = rec.config.out_channels, cin = rec.config.in_channels;
  const int64_t k_vol = static_cast<int64_t>(rec.weight.size()) / std::max<int64_t>(cout * cin, 1);
  Tensor<double> wk({cout, cin}, std::vector<double>(static_cast<size_t>(cout * cin)));
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t c = 0; c < cin; ++c)
      wk.data[static_cast<size_t>(o * cin + c)] = rec.weight[static_cast<size_t>((o * cin + c) * k_vol + k)];
  DENOTE_ASSIGN_OR_RETURN(MxQuantized q, mx_quantize(f, wk, 1, block));
  return std::move(q.q);
}

// For every output position p and kernel position k, the input's flat spatial offset, or -1 (padding).
std::vector<int64_t> tap_offsets(const rules::Window& w) {
  const int64_t out_vol = numel(w.out), k_vol = numel(w.kernel);
  std::vector<int64_t> at(static_cast<size_t>(out_vol * k_vol), -1);
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (const rules::Tap& t : taps) at[static_cast<size_t>(p * k_vol + t.k)] = t.in;
  });
  return at;
}

}  // namespace

Result<std::optional<MxConvWeights>> prepare_conv(int64_t id, const ConvRecord<double>& rec, const MxFormat& f,
                                                  int64_t block) {
  if (rec.config.groups != 1) return std::optional<MxConvWeights>();
  MxConvWeights w{id, rec.config, {}, {}};
  const int64_t k_vol = numel(rec.config.window.kernel);
  for (int64_t k = 0; k < k_vol; ++k) {
    DENOTE_ASSIGN_OR_RETURN(MxTensor t, tap_weights(rec, f, block, k));
    w.operands.push_back(operand_of(t, false));
    w.taps.push_back(std::move(t));
  }
  return std::optional<MxConvWeights>(std::move(w));
}

Result<std::vector<float>> mx_conv(const MxConvWeights& w, const MxFormat& act, int64_t block, const Tensor<double>& x,
                                   const Shape& out_shape, const std::vector<float>& bias, uint32_t& flags) {
  const ConvConfig& c = w.config;
  const rules::Window win = rules::conv_window(c, x.shape, out_shape);
  const int64_t lead = numel(x.shape.begin(), x.shape.begin() + c.channel_axis);
  const int64_t in_vol = numel(win.in), out_vol = numel(win.out), k_vol = numel(win.kernel);
  const int64_t cin = c.in_channels, cout = c.out_channels, blocks = (cin + block - 1) / block, M = lead * out_vol;
  DENOTE_ASSIGN_OR_RETURN(MxQuantized xq, mx_quantize(act, Tensor<double>({lead, cin, in_vol}, x.data), 1, block));
  flags |= xq.flags;
  const std::vector<int64_t> at = tap_offsets(win);
  const BinaryFormat acc32 = binary32_format();
  std::vector<float> acc(static_cast<size_t>(M * cout), 0.0f);
  MxTensor a{act, block, 1, {M, cin}, std::vector<uint8_t>(static_cast<size_t>(M * cin)),
             std::vector<uint8_t>(static_cast<size_t>(M * blocks))};
  for (int64_t k = 0; k < k_vol; ++k) {
    std::fill(a.elements.begin(), a.elements.end(), 0);  // padding: code 0 under scale code 0 is 0
    std::fill(a.scales.begin(), a.scales.end(), 0);
    for (int64_t l = 0; l < lead; ++l)
      for (int64_t p = 0; p < out_vol; ++p) {
        const int64_t in = at[static_cast<size_t>(p * k_vol + k)], row = l * out_vol + p;
        if (in < 0) continue;
        for (int64_t ch = 0; ch < cin; ++ch)
          a.elements[static_cast<size_t>(row * cin + ch)] = xq.q.elements[static_cast<size_t>((l * cin + ch) * in_vol + in)];
        for (int64_t b = 0; b < blocks; ++b)
          a.scales[static_cast<size_t>(row * blocks + b)] = xq.q.scales[static_cast<size_t>((l * blocks + b) * in_vol + in)];
      }
    const MxMatmulResult y = multiply(DotSetup{a, w.taps[static_cast<size_t>(k)], acc32, block}, operand_of(a, false),
                                      w.operands[static_cast<size_t>(k)]);
    flags |= y.flags;
    for (size_t i = 0; i < acc.size(); ++i) {
      const auto v = static_cast<float>(y.y.data[i]);
      acc[i] = k == 0 ? v : add_binary32(acc[i], v, flags);
    }
  }
  std::vector<float> out(static_cast<size_t>(lead * cout * out_vol));
  for (int64_t l = 0; l < lead; ++l)
    for (int64_t p = 0; p < out_vol; ++p)
      for (int64_t o = 0; o < cout; ++o) {
        const float v = acc[static_cast<size_t>((l * out_vol + p) * cout + o)];
        out[static_cast<size_t>((l * cout + o) * out_vol + p)] =
            bias.empty() ? v : add_binary32(v, bias[static_cast<size_t>(o)], flags);
      }
  return out;
}

}  // namespace denote::mx_detail
