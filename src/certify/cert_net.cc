// The checker's view of a network (src/certify/cert_net.h).
#include "certify/cert_net.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "denote/ir/op.h"

namespace denote::certify {

namespace {

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Status unsupported(const Node& n, const std::string& why) {
  const std::string what = fmt::format("certificate checker: node {} ({}): {}", n.id, op_tag(n.op), why);
  return error_status(ErrorCode::kUnsupported, what).with_node(n.id, what);
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// Index of the broadcast operand's element for each element of `out` (numpy rules, right-aligned).
bool broadcast_index(const Shape& from, const Shape& out, std::vector<int64_t>& idx) {
  if (from.size() > out.size()) return false;
  const size_t off = out.size() - from.size();
  std::vector<int64_t> stride(out.size(), 0);
  int64_t s = 1;
  for (size_t d = from.size(); d-- > 0;) {
    if (from[d] != 1 && from[d] != out[off + d]) return false;
    stride[off + d] = from[d] == 1 ? 0 : s;
    s *= from[d];
  }
  idx.assign(static_cast<size_t>(count(out)), 0);
  std::vector<int64_t> pos(out.size(), 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t k = 0;
    for (size_t d = 0; d < out.size(); ++d) k += pos[d] * stride[d];
    idx[i] = k;
    for (size_t d = out.size(); d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return true;
}

// Add/sub/mul/div with one constant parent, or neg: elementwise a * x + b.
Status prepare_scale(const Model& m, const Node& n, Prepared& p) {
  const Graph& g = m.graph;
  const size_t len = static_cast<size_t>(p.numel);
  p.a_mid.assign(len, 1.0), p.a_rad.assign(len, 0.0), p.b_mid.assign(len, 0.0), p.b_rad.assign(len, 0.0);
  if (n.op == Op::Neg) {
    p.var = n.parents[0];
    std::fill(p.a_mid.begin(), p.a_mid.end(), -1.0);
    return ok_status();
  }
  int ci = -1;
  for (int k = 0; k < 2; ++k)
    if (g.nodes[static_cast<size_t>(n.parents[static_cast<size_t>(k)])].op == Op::Const) ci = k;
  if (ci < 0) return unsupported(n, "expected one constant operand");
  const Node& c = g.nodes[static_cast<size_t>(n.parents[static_cast<size_t>(ci)])];
  p.var = n.parents[static_cast<size_t>(1 - ci)];
  const auto* rec = find_record(m.payload.consts, c.id);
  std::vector<int64_t> idx;
  if (!rec || !all_finite(rec->values) || !broadcast_index(c.out_shape, n.out_shape, idx) ||
      count(g.nodes[static_cast<size_t>(p.var)].out_shape) != p.numel)
    return unsupported(n, "a constant that is missing, not finite or not broadcast to the variable's shape");
  for (size_t i = 0; i < len; ++i) {
    const double v = rec->values[static_cast<size_t>(idx[i])];
    if (n.op == Op::Add) {
      p.b_mid[i] = v;
    } else if (n.op == Op::Sub) {
      if (ci == 1) p.b_mid[i] = -v; else p.b_mid[i] = v, p.a_mid[i] = -1;
    } else if (n.op == Op::MulElem) {
      p.a_mid[i] = v;
    } else {  // div: x / c only
      if (ci != 1 || v == 0) return unsupported(n, "a division by a variable or by zero");
      p.a_mid[i] = 1 / v;
      p.a_rad[i] = next_up(std::fabs(p.a_mid[i]) * kUnit + kEta);
    }
  }
  return ok_status();
}

// y = gamma (x - mean) / sqrt(var + eps) + beta per channel: a = gamma / sqrt(var + eps), b = beta - mean a.
Status prepare_batch_norm(const Model& m, const Node& n, Prepared& p) {
  const auto* at = std::get_if<BatchNormAttrs>(&n.attrs);
  const auto* rec = find_record(m.payload.batch_norm, n.id);
  const Shape& s = n.out_shape;
  if (!at || !rec || at->channel_axis < 0 || static_cast<size_t>(at->channel_axis) >= s.size())
    return unsupported(n, "batch-norm parameters or channel axis missing");
  const int64_t C = s[static_cast<size_t>(at->channel_axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(at->channel_axis) + 1; d < s.size(); ++d) inner *= s[d];
  if (static_cast<int64_t>(rec->gamma.size()) != C || rec->beta.size() != rec->gamma.size() ||
      rec->mean.size() != rec->gamma.size() || rec->var.size() != rec->gamma.size() || !all_finite(rec->gamma) ||
      !all_finite(rec->beta) || !all_finite(rec->mean) || !all_finite(rec->var) || !(rec->eps >= 0))
    return unsupported(n, "batch-norm parameters of the wrong size or not finite");
  p.var = n.parents[0];
  const size_t len = static_cast<size_t>(p.numel);
  p.a_mid.resize(len), p.a_rad.resize(len), p.b_mid.resize(len), p.b_rad.resize(len);
  p.bn_mean.resize(len), p.bn_gamma.resize(len);
  for (size_t i = 0; i < len; ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % C);
    const double d = rec->var[c] + rec->eps;  // each step below within a few ulps, bounded by 16 u
    if (!(d > 0)) return unsupported(n, fmt::format("channel {}: var + eps is not positive", c));
    const double a = rec->gamma[c] / std::sqrt(d);
    p.bn_mean[i] = std::fabs(rec->mean[c]), p.bn_gamma[i] = std::fabs(rec->gamma[c]);
    p.a_mid[i] = a;
    p.a_rad[i] = next_up(std::fabs(a) * (16 * kUnit) + kEta);
    Sum b;
    b.add(rec->beta[c]);
    b.add_prod(-rec->mean[c], a);
    p.b_mid[i] = b.s;
    p.b_rad[i] = next_up(next_up(b.upper() - b.s) + std::fabs(rec->mean[c]) * p.a_rad[i] * (1 + 4 * kUnit));
  }
  return ok_status();
}

Status prepare_linear(const Model& m, const Node& n, Prepared& p) {
  const auto* rec = find_record(m.payload.linear, n.id);
  if (!rec || rec->out_dim <= 0 || rec->in_dim <= 0 ||
      rec->weight.size() != static_cast<size_t>(rec->out_dim * rec->in_dim) ||
      (!rec->bias.empty() && rec->bias.size() != static_cast<size_t>(rec->out_dim)) || !all_finite(rec->weight) ||
      !all_finite(rec->bias))
    return unsupported(n, "linear parameters missing, of the wrong size or not finite");
  p.var = n.parents[0];
  p.in = rec->in_dim, p.out = rec->out_dim;
  p.w = rec->weight;
  p.aw.resize(p.w.size());
  for (size_t i = 0; i < p.w.size(); ++i) p.aw[i] = std::fabs(p.w[i]);
  p.b = rec->bias.empty() ? std::vector<double>(static_cast<size_t>(p.out), 0.0) : rec->bias;
  return ok_status();
}

Status prepare_conv(const Model& m, const Node& n, Prepared& p) {
  const auto* cfg = std::get_if<ConvConfig>(&n.attrs);
  const auto* rec = find_record(m.payload.conv, n.id);
  const Shape& in = m.graph.nodes[static_cast<size_t>(n.parents[0])].out_shape;
  const Shape& out = n.out_shape;
  if (!cfg || !rec || cfg->window.spatial_rank != 2 || cfg->groups != 1 || in.size() < 3 || out.size() != in.size() ||
      count(Shape(in.begin(), in.end() - 3)) != 1 || cfg->channel_axis != static_cast<int64_t>(in.size()) - 3)
    return unsupported(n, "expected a 2-d convolution of one image (channels first, groups 1)");
  p.var = n.parents[0];
  p.cin = in[in.size() - 3], p.ih = in[in.size() - 2], p.iw = in[in.size() - 1];
  p.out = out[out.size() - 3], p.oh = out[out.size() - 2], p.ow = out[out.size() - 1];
  p.kh = cfg->window.kernel[0], p.kw = cfg->window.kernel[1];
  p.sh = cfg->window.stride[0], p.sw = cfg->window.stride[1];
  p.ph = cfg->window.padding[0], p.pw = cfg->window.padding[1];
  if (cfg->dilation.size() == 2) p.dh = cfg->dilation[0], p.dw = cfg->dilation[1];
  const size_t wlen = static_cast<size_t>(p.out * p.cin * p.kh * p.kw);
  if (rec->weight.size() != wlen || (!rec->bias.empty() && rec->bias.size() != static_cast<size_t>(p.out)) ||
      !all_finite(rec->weight) || !all_finite(rec->bias))
    return unsupported(n, "conv parameters of the wrong size or not finite");
  p.w = rec->weight;
  p.aw.resize(wlen);
  for (size_t i = 0; i < wlen; ++i) p.aw[i] = std::fabs(p.w[i]);
  p.b = rec->bias.empty() ? std::vector<double>(static_cast<size_t>(p.out), 0.0) : rec->bias;
  return ok_status();
}

// avg_pool as the convolution it is (weight 1/k from each channel to itself; the divisor counts padding):
// only where k = kh kw is a power of two, so that 1/k is exact.
Status prepare_avg_pool(const Model& m, const Node& n, Prepared& p) {
  const auto* w = std::get_if<WindowConfig>(&n.attrs);
  const Shape& in = m.graph.nodes[static_cast<size_t>(n.parents[0])].out_shape;
  const Shape& out = n.out_shape;
  if (!w || w->spatial_rank != 2 || in.size() < 3 || out.size() != in.size() || count(Shape(in.begin(), in.end() - 3)) != 1)
    return unsupported(n, "expected a 2-d average pool of one image (channels first)");
  const int64_t k = w->kernel[0] * w->kernel[1];
  if (k <= 0 || (k & (k - 1)) != 0) return unsupported(n, "a window whose size is not a power of two (1/size inexact)");
  p.kind = Kind::Conv, p.var = n.parents[0];
  p.cin = p.out = in[in.size() - 3], p.ih = in[in.size() - 2], p.iw = in[in.size() - 1];
  p.oh = out[out.size() - 2], p.ow = out[out.size() - 1];
  p.kh = w->kernel[0], p.kw = w->kernel[1], p.sh = w->stride[0], p.sw = w->stride[1], p.ph = w->padding[0], p.pw = w->padding[1];
  p.w.assign(static_cast<size_t>(p.out * p.cin * k), 0.0);
  for (int64_t c = 0; c < p.out; ++c)
    for (int64_t t = 0; t < k; ++t) p.w[static_cast<size_t>((c * p.cin + c) * k + t)] = 1.0 / static_cast<double>(k);
  p.aw = p.w;
  p.b.assign(static_cast<size_t>(p.out), 0.0);
  return ok_status();
}

Status prepare(const Model& m, const Node& n, Prepared& p) {
  const Graph& g = m.graph;
  p.numel = count(n.out_shape);
  auto parent_is_const = [&](size_t k) { return g.nodes[static_cast<size_t>(n.parents[k])].op == Op::Const; };
  switch (n.op) {
    case Op::Input: p.kind = Kind::Input; return ok_status();
    case Op::Const: {
      const auto* rec = find_record(m.payload.consts, n.id);
      if (!rec || static_cast<int64_t>(rec->values.size()) != p.numel || !all_finite(rec->values))
        return unsupported(n, "constant values missing or not finite");
      p.kind = Kind::Const, p.b_mid = rec->values;
      return ok_status();
    }
    case Op::Linear: p.kind = Kind::Linear; return prepare_linear(m, n, p);
    case Op::Conv: p.kind = Kind::Conv; return prepare_conv(m, n, p);
    case Op::AvgPool: return prepare_avg_pool(m, n, p);
    case Op::Relu: p.kind = Kind::Relu, p.var = n.parents[0]; return ok_status();
    case Op::BatchNormEval: p.kind = Kind::Scale; return prepare_batch_norm(m, n, p);
    case Op::Neg: p.kind = Kind::Scale; return prepare_scale(m, n, p);
    case Op::Add:
    case Op::Sub:
      if (!parent_is_const(0) && !parent_is_const(1)) {
        for (int64_t q : n.parents)
          if (g.nodes[static_cast<size_t>(q)].out_shape != n.out_shape) return unsupported(n, "a broadcast of a variable");
        p.kind = Kind::Add, p.var = n.parents[0], p.other = n.parents[1], p.other_sign = n.op == Op::Add ? 1 : -1;
        return ok_status();
      }
      p.kind = Kind::Scale;
      return prepare_scale(m, n, p);
    case Op::MulElem:
    case Op::Div: p.kind = Kind::Scale; return prepare_scale(m, n, p);
    default: break;
  }
  if (keeps_order(n.op) && n.parents.size() == 1) {
    p.kind = Kind::Same, p.var = n.parents[0];
    return ok_status();
  }
  return unsupported(n, "not covered (covered: input, const, linear, conv, avg_pool, relu, batch_norm_eval, add, sub, "
                        "neg, mul_elem/div by a constant, reshape/flatten/detach)");
}

}  // namespace

Result<Net> Net::make(const Model& m) {
  Net net;
  const Graph& g = m.graph;
  net.g_ = &g;
  const auto inputs = g.input_ids();
  if (inputs.size() != 1 || m.output_ids.size() != 1)
    return error_status(ErrorCode::kInvalidInput, "certificate checker: expected one input and one output");
  net.input_ = inputs[0], net.output_ = m.output_ids[0];
  if (net.output_ < 0 || static_cast<size_t>(net.output_) >= g.nodes.size())
    return error_status(ErrorCode::kInvalidInput, "certificate checker: the output is not a node");
  net.cone_.assign(g.nodes.size(), 0);
  net.cone_[static_cast<size_t>(net.output_)] = 1;
  for (size_t i = g.nodes.size(); i-- > 0;)  // parents have smaller ids: one sweep down
    if (net.cone_[i])
      for (int64_t q : g.nodes[i].parents) net.cone_[static_cast<size_t>(q)] = 1;
  net.nodes_.resize(g.nodes.size());
  net.readers_.resize(g.nodes.size());
  for (const Node& n : g.nodes) {
    if (!net.cone_[static_cast<size_t>(n.id)]) continue;
    Status s = prepare(m, n, net.nodes_[static_cast<size_t>(n.id)]);
    if (!s.ok()) return s;
    if (n.op == Op::Relu) net.readers_[static_cast<size_t>(n.parents[0])].push_back(n.id);
  }
  if (!net.cone_[static_cast<size_t>(net.input_)])
    return error_status(ErrorCode::kInvalidInput, "certificate checker: the output does not depend on the input");
  return net;
}

}  // namespace denote::certify
