// CROWN's rule for affine ops (src/bounds/crown_affine.h).
#include "bounds/crown_affine.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/grad_impl.h"
#include "bounds/kernel_ops.h"
#include "eval/evaluator_impl.h"

namespace denote::crown {

namespace {

// Exact data movement (one to one): the coefficients move with the data and no rounding happens anywhere
// (broadcast_to and gather can read an entry twice: their VJP sums coefficients, which rounds).
bool exact_movement(Op op) { return moves_one_to_one(op); }
// Same flat layout as the parent: the coefficients pass unchanged.
bool same_layout(Op op) { return keeps_order(op); }

// The node's own parameter records (conv, batch_norm_eval), and for the magnitudes the records whose
// evaluation on |x| is an upper bound of every term the evaluation rounds: a conv's |W| without its bias
// (f(0) = b adds it), a batch-norm's (|x| + |mean|) / d |gamma| + |beta| (its x - mean and its shift
// round at |mean| and |beta| even where they cancel: f(0) = beta - mean k is then 0).
Payload<double> node_payload(const Payload<double>& p, int64_t id, bool magnitude) {
  Payload<double> out;
  if (const auto* rec = find_record(p.conv, id)) {
    auto r = *rec;
    if (magnitude) {
      for (double& w : r.weight) w = std::fabs(w);
      std::fill(r.bias.begin(), r.bias.end(), 0.0);
    }
    out.conv[id] = std::move(r);
  }
  if (const auto* rec = find_record(p.batch_norm, id)) {
    auto r = *rec;
    if (magnitude) {
      for (double& g : r.gamma) g = std::fabs(g);
      for (double& b : r.beta) b = std::fabs(b);
      for (double& v : r.mean) v = -std::fabs(v);
    }
    out.batch_norm[id] = std::move(r);
  }
  return out;
}

struct Operands {
  std::vector<Tensor<double>> values;
  std::vector<const Tensor<double>*> ptrs;
};
// A parent that is a constant (matmul's weight operand): it keeps its value (its magnitude) and
// receives no coefficients.
const std::vector<double>* const_value(const RuleCtx& c, int64_t p) {
  if (c.g.nodes[static_cast<size_t>(p)].op != Op::Const) return nullptr;
  const auto* rec = find_record(c.payload.consts, p);
  return rec ? &rec->values : nullptr;
}

bool vo_wanted(const RuleCtx& c, const Node& n, size_t k) { return const_value(c, n.parents[k]) == nullptr; }

Operands operands(const RuleCtx& c, const Node& n, bool magnitudes) {
  Operands o;
  for (int64_t p : n.parents) {
    const Shape& s = c.g.nodes[static_cast<size_t>(p)].out_shape;
    Tensor<double> t = Tensor<double>::filled(s, 0.0);
    if (const auto* v = const_value(c, p); v && v->size() == t.data.size()) {
      for (size_t j = 0; j < t.data.size(); ++j) t.data[j] = magnitudes ? std::fabs((*v)[j]) : (*v)[j];
    } else if (magnitudes) {
      for (int64_t j = 0; j < numel(s); ++j) t.data[static_cast<size_t>(j)] = c.absmax(p, j);
    }
    o.values.push_back(std::move(t));
  }
  for (const auto& t : o.values) o.ptrs.push_back(&t);
  return o;
}

Result<Tensor<double>> eval_node(const Node& n, const Operands& in, const Payload<double>& p) {
  F64Context ctx;
  EvalOptions opts;
  rules::EvalArgs<double> a{n, std::span<const Tensor<double>* const>(in.ptrs), p, n.out_shape, nullptr, opts};
  return detail::eval_fn<F64Context>(n.op)(ctx, a);
}


}  // namespace

std::optional<std::vector<double>> apply_node(const Graph& g, const Payload<double>& p, const Node& n,
                                                const std::vector<std::vector<double>>& values, bool magnitude) {
  if (values.size() != n.parents.size()) return std::nullopt;
  Operands o;
  for (size_t k = 0; k < values.size(); ++k) {
    const Shape& s = g.nodes[static_cast<size_t>(n.parents[k])].out_shape;
    if (static_cast<int64_t>(values[k].size()) != numel(s)) return std::nullopt;
    o.values.push_back(Tensor<double>(s, values[k]));
  }
  for (const auto& t : o.values) o.ptrs.push_back(&t);
  auto r = eval_node(n, o, node_payload(p, n.id, magnitude));
  if (!r.ok()) return std::nullopt;
  return std::move(r->data);
}

double affine_fan_in(const Graph& g, const Payload<double>& p, const Node& n) {
  if (const auto* rec = find_record(p.conv, n.id))
    return static_cast<double>(rec->weight.size()) / static_cast<double>(std::max<int64_t>(rec->config.out_channels, 1)) + 1;
  if (find_record(p.batch_norm, n.id)) return 6;  // (x - mean) / sqrt(var + eps) * gamma + beta
  if (const auto* w = std::get_if<WindowConfig>(&n.attrs); w && bound_kernel(n.op) == BoundKernel::Mean) {
    double k = 1;  // a window's sum of k inputs, then one division
    for (int64_t d : w->kernel) k *= static_cast<double>(d);
    return k + 1;
  }
  double total = 0;
  for (int64_t q : n.parents) total += static_cast<double>(numel(g.nodes[static_cast<size_t>(q)].out_shape));
  return total + 1;
}

bool affine_scale(RuleCtx& c, const Node& n, double g_coef, std::vector<double>& scale, std::vector<double>& f0) {
  const int64_t m = c.numel_of(n.id);
  auto z = eval_node(n, operands(c, n, false), node_payload(c.payload, n.id, false));
  auto mx = eval_node(n, operands(c, n, true), node_payload(c.payload, n.id, true));
  if (!z.ok() || !mx.ok()) return c.fail(fmt::format("node {}: {}", n.id, (!z.ok() ? z : mx).status().message()));
  // Coefficient rounding (g_coef |A| mx) and the evaluation's rounding.
  const double fan = affine_fan_in(c.g, c.payload, n), g_fan = 1 + gamma(fan);
  const double e_eval = c.err.u * (fan + 4) * 1.01;
  f0 = std::move(z->data);
  scale.resize(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) {
    const double mo = up(mx->data[static_cast<size_t>(o)] * g_fan);
    scale[static_cast<size_t>(o)] =
        g_coef * mo + e_eval * up(mo + std::fabs(f0[static_cast<size_t>(o)])) + (fan + 4) * c.err.tiny;
  }
  return true;
}

bool affine_bias_slack(RuleCtx& c, const Node& n, const std::vector<double>& A, double g_coef) {
  std::vector<double> scale, f0;
  if (!affine_scale(c, n, g_coef, scale, f0)) return false;
  add_bias_slack(c, A, scale, f0);
  return true;
}

void add_bias_slack(RuleCtx& c, const std::vector<double>& A, const std::vector<double>& scale,
                    const std::vector<double>& f0) {
  const int64_t m = static_cast<int64_t>(f0.size());
  c.slack_abs_dot(A, scale, 1.0);
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sum = 0, mag = 0;
    for (int64_t o = 0; o < m; ++o) {
      const double t = A[static_cast<size_t>(r * m + o)] * f0[static_cast<size_t>(o)];
      sum += t, mag += std::fabs(t);
    }
    c.st.bias[r] += sum, c.st.mag[r] += mag, c.st.terms[r] += static_cast<double>(m);
  }
}

bool rule_affine(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  if (same_layout(n.op)) {
    c.add_to(n.parents[0], std::move(A));
    return c.st.failure.empty();
  }
  for (int64_t p : n.parents)
    if (!c.box[static_cast<size_t>(p)]) return c.fail(fmt::format("node {} has no box", p));
  const int64_t m = c.numel_of(n.id);
  const Payload<double> own = node_payload(c.payload, n.id, false);
  const Operands zero = operands(c, n, false);
  Tensor<double> out0 = Tensor<double>::filled(n.out_shape, 0.0);
  // Each VJP entry sums at most m terms.
  if (!exact_movement(n.op) && !affine_bias_slack(c, n, A, gamma(static_cast<double>(m) + 2))) return false;
  // Coefficients through the VJP, row by row.
  F64Context ctx;
  EvalOptions opts;
  ad::DiffArgs<double> da{n, std::span<const Tensor<double>* const>(zero.ptrs), out0, own, opts};
  const auto vjp = ad::vjp_fn<F64Context>(n.op);
  std::vector<std::vector<double>> parent_a(n.parents.size());
  for (size_t k = 0; k < n.parents.size(); ++k)
    parent_a[k].assign(static_cast<size_t>(c.st.rows * c.numel_of(n.parents[k])), 0.0);
  Tensor<double> cot = Tensor<double>::filled(n.out_shape, 0.0);
  for (int64_t r = 0; r < c.st.rows; ++r) {
    std::copy(A.begin() + r * m, A.begin() + (r + 1) * m, cot.data.begin());
    ad::VjpOut<double> vo;
    vo.want.assign(n.parents.size(), true);
    for (size_t k = 0; k < n.parents.size(); ++k) vo.want[k] = const_value(c, n.parents[k]) == nullptr;
    vo.parents.resize(n.parents.size());
    if (Status s = vjp(ctx, da, cot, vo); !s.ok()) return c.fail(fmt::format("node {}: {}", n.id, s.message()));
    for (size_t k = 0; k < n.parents.size(); ++k) {
      const int64_t pm = c.numel_of(n.parents[k]);
      if (vo.parents[k].data.size() == static_cast<size_t>(pm))
        std::copy(vo.parents[k].data.begin(), vo.parents[k].data.end(), parent_a[k].begin() + r * pm);
    }
  }
  for (size_t k = 0; k < n.parents.size(); ++k)
    if (vo_wanted(c, n, k)) c.add_to(n.parents[k], std::move(parent_a[k]));
  return c.st.failure.empty();
}

bool rule_matmul(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  const bool a_const = const_value(c, n.parents[0]) != nullptr, b_const = const_value(c, n.parents[1]) != nullptr;
  if (a_const == b_const) return c.concretize(n.id, A);  // a product of two variables: cut
  return rule_affine(c, n, std::move(A));
}

bool matmul_is_affine(const RuleCtx& c, const Node& n) {
  return (const_value(c, n.parents[0]) != nullptr) != (const_value(c, n.parents[1]) != nullptr);
}

bool fwd_affine(ForwardCtx& f, const Node& n) {
  const RuleCtx& c = f.rc;
  auto& V = f.V[static_cast<size_t>(n.id)];
  for (int64_t p : n.parents)
    if (f.V[static_cast<size_t>(p)].empty() && !const_value(c, p)) return false;
  if (same_layout(n.op)) {
    V = f.V[static_cast<size_t>(n.parents[0])];
    return true;
  }
  const int64_t m = c.numel_of(n.id);
  const Payload<double> own = node_payload(c.payload, n.id, false);
  const Operands zero = operands(c, n, false);
  auto f0 = eval_node(n, zero, own);
  if (!f0.ok()) return false;
  Tensor<double> out0 = Tensor<double>::filled(n.out_shape, 0.0);
  F64Context ctx;
  EvalOptions opts;
  ad::DiffArgs<double> da{n, std::span<const Tensor<double>* const>(zero.ptrs), out0, own, opts};
  const auto jvp = ad::jvp_fn<F64Context>(n.op);
  V.assign(static_cast<size_t>(c.st.rows * m), 0.0);
  Operands tan = operands(c, n, false);
  for (size_t k = 0; k < n.parents.size(); ++k)  // a constant operand has a zero tangent
    if (const_value(c, n.parents[k])) std::fill(tan.values[k].data.begin(), tan.values[k].data.end(), 0.0);
  for (int64_t r = 0; r < c.st.rows; ++r) {
    for (size_t k = 0; k < n.parents.size(); ++k) {
      if (const_value(c, n.parents[k])) continue;  // the constant operand keeps its value: zero tangent part
      const auto& src = f.V[static_cast<size_t>(n.parents[k])];
      const size_t pm = tan.values[k].data.size();
      std::copy(src.begin() + static_cast<int64_t>(r * pm), src.begin() + static_cast<int64_t>((r + 1) * pm),
                tan.values[k].data.begin());
    }
    auto t = jvp(ctx, da, std::span<const Tensor<double>* const>(tan.ptrs));
    if (!t.ok() || t->data.size() != static_cast<size_t>(m)) return false;
    for (int64_t o = 0; o < m; ++o) V[static_cast<size_t>(r * m + o)] = t->data[static_cast<size_t>(o)] + f0->data[static_cast<size_t>(o)];
  }
  return true;
}

}  // namespace denote::crown
