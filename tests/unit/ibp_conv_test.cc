// IBP's conv rule for f64/f32 endpoints (src/bounds/ibp_conv.h: midpoint-radius on the batched
// conv) against the generic interval rule (the binary64/binary32 software endpoints run it, with
// outward rounding per operation): boxes of the same width up to the error terms, and boxes that
// contain the conv evaluated in f64 and f32 at random points and corners of the input box, for
// strides, padding, dilation, groups and a leading axis.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) {
  return lcg_values(n, seed * 0x9e3779b97f4a7c15ull + 1, scale);
}

struct Case {
  const char* name;
  Shape in;
  int64_t axis, cout, groups;
  std::vector<int64_t> kernel, stride, pad, pad_after, dilation;
};

Model conv_model(const Case& cc) {
  ConvConfig c;
  c.window = WindowConfig{static_cast<int64_t>(cc.kernel.size()), cc.kernel, cc.stride, cc.pad};
  c.padding_after = cc.pad_after;
  c.dilation = cc.dilation;
  c.groups = cc.groups;
  c.channel_axis = cc.axis;
  c.in_channels = cc.in[static_cast<size_t>(cc.axis)];
  c.out_channels = cc.cout;
  int64_t k = 1;
  for (int64_t e : cc.kernel) k *= e;
  GraphBuilder b;
  const int64_t x = b.input(cc.in);
  const int64_t cv = b.conv(x, c, values(cc.cout * (c.in_channels / cc.groups) * k, 3), values(cc.cout, 4, 0.2));
  auto m = b.build({cv});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(IbpConv, MidpointRadiusBoxesMatchTheIntervalRuleAndContainSamples) {
  const std::vector<Case> cases = {
      {"plain", {2, 6, 6}, 0, 3, 1, {3, 3}, {1, 1}, {0, 0}, {}, {}},
      {"stride2_pad1", {1, 3, 8, 8}, 1, 4, 1, {4, 4}, {2, 2}, {1, 1}, {}, {}},
      {"asym_pad_dilation", {2, 7, 6}, 0, 3, 1, {3, 2}, {1, 2}, {2, 0}, {0, 1}, {2, 1}},
      {"groups", {4, 5, 5}, 0, 6, 2, {3, 3}, {1, 1}, {1, 1}, {}, {}},
      {"lead_1d", {2, 2, 9}, 1, 3, 1, {3}, {2}, {1}, {}, {2}},
  };
  for (const Case& cc : cases) {
    const Model m = conv_model(cc);
    const int64_t out = m.output_ids[0], im = numel(cc.in);
    const std::vector<double> centre = values(im, 9, 1.0);
    DoubleBox box{cc.in, {}, {}};
    for (size_t i = 0; i < centre.size(); ++i)  // some elements are points
      box.lo.push_back(centre[i] - (i % 5 ? 0.1 : 0)), box.hi.push_back(centre[i] + (i % 5 ? 0.1 : 0));
    std::vector<DoubleBox> in = {box};
    for (const auto& [fast_arith, slow_arith] : {std::pair{"f64", "binary64"}, std::pair{"f32", "binary32"}}) {
      auto fast = run_ibp_double(m.graph, m.payload, in, fast_arith);
      auto slow = run_ibp_double(m.graph, m.payload, in, slow_arith);
      ASSERT_TRUE(fast.ok() && slow.ok()) << cc.name << fast.message() << slow.message();
      ASSERT_TRUE(fast->boxes[static_cast<size_t>(out)] && slow->boxes[static_cast<size_t>(out)]) << cc.name;
      const DoubleBox& f = *fast->boxes[static_cast<size_t>(out)];
      const DoubleBox& s = *slow->boxes[static_cast<size_t>(out)];
      const bool f32 = std::string(fast_arith) == "f32";
      for (size_t o = 0; o < f.lo.size(); ++o) {
        const double wf = f.hi[o] - f.lo[o], ws = s.hi[o] - s.lo[o];
        const double mag = std::fabs(f.lo[o]) + std::fabs(f.hi[o]) + 1;
        // Both enclose the same exact range; they differ by their rounding terms only.
        EXPECT_NEAR(wf, ws, (f32 ? 1e-5 : 1e-12) * mag) << cc.name << " " << fast_arith << " output " << o;
        EXPECT_GT(wf, 0) << cc.name;
      }
      const Payload<float> pf = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
      for (int t = 0; t < 40; ++t) {
        std::vector<double> x = values(im, static_cast<uint64_t>(t) + 100, 1.0);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = t < 2 ? (t == 0 ? box.lo[i] : box.hi[i]) : box.lo[i] + (x[i] + 1) / 2 * (box.hi[i] - box.lo[i]);
        std::vector<double> y;
        if (f32) {
          std::vector<Tensor<float>> xf = {Tensor<float>(cc.in, std::vector<float>(x.begin(), x.end()))};
          F32Context ctx;
          auto v = denote(m.graph, pf, std::span<const Tensor<float>>(xf), out, ctx);
          ASSERT_TRUE(v.ok());
          y.assign(v->data.begin(), v->data.end());
        } else {
          std::vector<Tensor<double>> xd = {Tensor<double>(cc.in, x)};
          F64Context ctx;
          auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xd), out, ctx);
          ASSERT_TRUE(v.ok());
          y = v->data;
        }
        for (size_t o = 0; o < y.size(); ++o) {
          ASSERT_GE(y[o], f.lo[o]) << cc.name << " " << fast_arith << " sample " << t;
          ASSERT_LE(y[o], f.hi[o]) << cc.name << " " << fast_arith << " sample " << t;
        }
      }
    }
  }
}

}  // namespace
}  // namespace denote
