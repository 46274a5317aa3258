// Model.bounds (IBP, CROWN, alpha-CROWN), Model.grad / Model.jvp (reverse and forward mode),
// Model.plan (the kernel plan) and denote.verify (a VNN-LIB property). The GIL is released while the
// library computes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "common.h"
#include "bounds_batch.h"
#include "interrupt.h"
#include "denote/autodiff/grad.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/lp_ball.h"
#include "denote/check/check.h"
#include "denote/plan/provider_check.h"
#include "denote/plan/registry.h"
#include "denote/scalar/arith.h"
#include "denote/verify/verify.h"

namespace denote::python {

namespace {

// One tensor per input: `x` itself for a one-input model, else a sequence with one entry per input.
std::vector<Tensor<double>> per_input(const PyModel& m, const py::object& x, const std::string& what) {
  const size_t n = m.model().graph.input_ids().size();
  std::vector<Tensor<double>> out;
  if (n == 1) {
    out.push_back(to_tensor(x, {what.c_str()}, true));
    return out;
  }
  if (!py::isinstance<py::sequence>(x) || py::len(x) != n)
    raise_invalid(fmt::format("{}: the model has {} inputs; give a list with one array per input", what, n), what);
  for (size_t k = 0; k < n; ++k) out.push_back(to_tensor(x[py::int_(k)], {what.c_str(), static_cast<int64_t>(k)}, true));
  return out;
}

py::tuple box_pair(const std::optional<DoubleBox>& b, const Shape& shape) {
  if (!b) {  // no sound box: the whole line
    const size_t n = static_cast<size_t>(numel(shape));
    return py::make_tuple(to_numpy(shape, std::vector<double>(n, -INFINITY)),
                          to_numpy(shape, std::vector<double>(n, INFINITY)));
  }
  DoubleBox c = *b;
  return py::make_tuple(to_numpy(c.shape, std::move(c.lo)), to_numpy(c.shape, std::move(c.hi)));
}

struct BoundArgs {
  std::string method, arith;
  bool all_nodes = false, lirpa_compatible = false;
  int alpha_iters = 20;
  std::string intermediate = "crown";
  std::optional<double> eps;  // lo is the center of an L-infinity ball of this radius
  py::object eps_obj = py::none();  // eps as given: a number, or one per sample of a batch
  py::object norm = py::none();
  bool bound_lower = true, bound_upper = true, return_A = false;  // auto_LiRPA's compute_bounds flags
  // With eps: the ball's norm (inf, 2 or 1) and its centers, one per input (set by bounds()).
  double p = INFINITY;
  std::vector<std::vector<double>> centers;
  // An L2 / L1 ball around the one input, for crown: the bound engine's (Subdomain::ball). Set by bounds().
  Subdomain where;
};

// (lo, hi) of C y with a spec; else per output (IBP's box, or the CROWN pass started there), or
// {node: (lo, hi)} for every node.
py::object bound_result(const Model& m, const DoubleIbp& ibp, std::vector<CrownResult>& runs, bool has_spec,
                        bool all_nodes) {
  if (has_spec) {
    CrownResult& r = runs.front();
    const Shape rows{static_cast<int64_t>(r.spec_lo.size())};
    return py::make_tuple(to_numpy(rows, std::move(r.spec_lo)), to_numpy(rows, std::move(r.spec_hi)));
  }
  // The box of node i: IBP's, or the CROWN pass started at i (an output) when there is one.
  auto box_of = [&](int64_t i) -> const std::optional<DoubleBox>& {
    if (runs.empty()) return ibp.boxes[static_cast<size_t>(i)];
    const CrownResult* best = &runs.front();
    for (const auto& r : runs)
      if (r.output == i) best = &r;
    return best->boxes[static_cast<size_t>(i)];
  };
  if (all_nodes) {
    py::dict d;
    for (const Node& n : m.graph.nodes) d[py::int_(n.id)] = box_pair(box_of(n.id), n.out_shape);
    return d;
  }
  std::vector<py::tuple> outs;
  for (int64_t id : m.output_ids) outs.push_back(box_pair(box_of(id), m.graph.nodes[static_cast<size_t>(id)].out_shape));
  if (outs.size() == 1) return outs[0];
  return py::cast(outs);
}

// With eps: lo is the center x (per input) and the box is the L-infinity ball x +- eps (box_around, as the
// CLI's --center/--eps); auto_LiRPA's PerturbationLpNorm(norm, eps). An L2 or L1 ball (norm=2, 1) is the
// bounding box x +- eps for IBP; CROWN and alpha-CROWN bound the ball itself (Subdomain::ball; with return_A
// the box's passes and each row's minimum over the ball, lp_ball_min). The norm and the centers go to `a`.
std::vector<DoubleBox> balls_of(const PyModel& self, const py::object& x, const py::object& hi, BoundArgs& a) {
  if (!hi.is_none()) raise_invalid("eps: pass the center as lo and no hi (or lo and hi without eps)", "hi");
  a.p = a.norm.is_none() ? INFINITY : py::float_(a.norm).cast<double>();
  if (!(std::isinf(a.p) && a.p > 0) && a.p != 1 && a.p != 2)
    raise_invalid(fmt::format("norm {}: expected inf, 2 or 1", a.p), "norm");
  std::vector<DoubleBox> boxes;
  for (Tensor<double>& c : per_input(self, x, "lo")) {
    auto b = box_around(c, *a.eps);
    if (!b.ok()) raise_invalid("eps: " + b.message(), "eps");
    boxes.push_back(std::move(*b));
    a.centers.push_back(c.data);
  }
  return boxes;
}

std::vector<DoubleBox> boxes_of(const PyModel& self, const py::object& lo, const py::object& hi) {
  if (hi.is_none()) raise_invalid("hi: expected the box's upper corner (or eps=, with lo the center)", "hi");
  std::vector<Tensor<double>> los = per_input(self, lo, "lo"), his = per_input(self, hi, "hi");
  std::vector<DoubleBox> boxes;
  for (size_t k = 0; k < los.size(); ++k) {
    if (los[k].shape != his[k].shape)
      raise_invalid(fmt::format("lo and hi of input {}: shapes {} and {} differ", k, to_string(los[k].shape),
                                to_string(his[k].shape)), "hi");
    boxes.push_back(DoubleBox{los[k].shape, std::move(los[k].data), std::move(his[k].data)});
  }
  return boxes;
}

std::optional<SpecMatrix> spec_of(const Model& m, const py::object& spec) {
  if (spec.is_none()) return std::nullopt;
  if (m.output_ids.size() != 1) raise_invalid("spec: a spec needs a model with exactly one output", "spec");
  Tensor<double> c = to_tensor(spec, {"spec"}, true);
  if (c.shape.size() > 2 || c.shape.empty()) raise_invalid("spec: expected a matrix (rows x output elements)", "spec");
  return SpecMatrix{c.shape.size() == 2 ? c.shape[0] : 1, c.shape.back(), std::move(c.data)};
}


// One side of C y (auto_LiRPA's bound_lower / bound_upper): the lower bounds of the rows of `rows` (C, or
// -C for the upper side) by a lower-only pass, with CROWN's input coefficients for return_A. C++ only (it
// runs without the GIL).
Result<CrownResult> run_side(const Model& m, const std::vector<DoubleBox>& boxes, const SpecMatrix& rows, CrownOptions co,
                             bool return_A, const Subdomain& where) {
  co.lower_only = true;
  co.input_coefficients = return_A;
  return run_crown(m.graph, m.payload, boxes, m.output_ids[0], &rows, co, where);
}

// The side's bounds and, with return_A, its coefficients and constants (box_bias).
struct Side {
  std::vector<double> lower, A, bias;
};
Side finish_side(const Model& m, const std::vector<DoubleBox>& boxes, CrownResult& r, bool coefficients,
                 const BoundArgs& a) {
  Side out;
  out.lower = r.spec_lo;
  if (!coefficients || (!a.return_A && !r.input_linear)) return out;  // a ball's rows cut: its box's bounds
  if (!r.input_linear)
    raise_invalid("return_A: the linear bounds did not reach the input as one linear function (" +
                      (r.cut.empty() ? std::string("no linear pass ran") : "cut at " + describe_cut(m.graph, r.cut)) + ")",
                  "return_A");
  out.A = r.input_coef;
  const size_t nx = boxes[0].lo.size();
  auto row = [&](size_t k) { return std::span<const double>(out.A.data() + k * nx, nx); };
  for (size_t k = 0; k < out.lower.size(); ++k) out.bias.push_back(box_bias(row(k), boxes[0], out.lower[k]));
  if (std::isfinite(a.p))  // the L2 / L1 ball inside the box: its own minimum of each row's linear bound
    for (size_t k = 0; k < out.lower.size(); ++k)
      out.lower[k] = std::max(out.lower[k], lp_ball_min(row(k), out.bias[k], a.centers[0], *a.eps, a.p));
  return out;
}

// bound_lower / bound_upper / return_A: each side by its own pass (the upper through -C); a side not asked
// for is None. Returns (lb, ub) or (lb, ub, {"lA", "lbias", "uA", "ubias"}): lA x + lbias <= C y <= uA x +
// ubias on the box, A shaped [rows, *input shape]; rows are C's, or the output's elements without a spec
// (then lb, ub are shaped like the output).
py::object side_bounds(const PyModel& self, const std::vector<DoubleBox>& boxes, const std::optional<SpecMatrix>& spec,
                       const CrownOptions& co, const BoundArgs& a) {
  const Model& m = self.model();
  if (m.output_ids.size() != 1)
    raise_invalid("bound_lower, bound_upper and return_A need a model with one output", "bound_lower");
  if (a.return_A && (co.method == BoundMethod::Ibp || boxes.size() != 1))
    raise_invalid("return_A: the linear bounds in the input come from method=\"crown\" or \"alpha-crown\" on a "
                  "one-input model",
                  "return_A");
  const Shape& out_shape = m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape;
  const int64_t ny = numel(out_shape);
  const SpecMatrix C = spec_or_identity(spec ? &*spec : nullptr, ny);
  SpecMatrix neg = C;
  for (double& v : neg.c) v = -v;
  // CROWN's input coefficients for return_A: they hold on the box, so those passes bound the box (an L2 / L1
  // ball's rows then minimised over it, finish_side); otherwise a ball is the engine's.
  const bool coefficients = a.return_A;
  const Subdomain where = a.return_A ? Subdomain{} : a.where;
  Result<CrownResult> lo_run = CrownResult{}, hi_run = CrownResult{};
  run_interruptible([&] {
    if (a.bound_lower) lo_run = run_side(m, boxes, C, co, coefficients, where);
    if (a.bound_upper && lo_run.ok()) hi_run = run_side(m, boxes, neg, co, coefficients, where);
    return true;
  });
  check(lo_run.status());
  check(hi_run.status());
  std::vector<CrownResult> cuts(2);  // warn_cut reads only the cut nodes and the fallback
  cuts[0].cut = lo_run->cut, cuts[1].cut = hi_run->cut;
  cuts[0].fallback = lo_run->fallback, cuts[1].fallback = hi_run->fallback;
  warn_cut(m, cuts);
  Side lower, upper;
  if (a.bound_lower) lower = finish_side(m, boxes, *lo_run, coefficients, a);
  if (a.bound_upper) upper = finish_side(m, boxes, *hi_run, coefficients, a);
  for (double& v : upper.lower) v = -v;
  for (double& v : upper.A) v = -v;
  for (double& v : upper.bias) v = -v;
  if (!spec) {  // the rows bound the output itself: its IBP box holds too, as in the two-sided result
    const size_t out = static_cast<size_t>(m.output_ids[0]);
    const auto& lb_box = lo_run->boxes.size() > out ? lo_run->boxes[out] : std::nullopt;
    const auto& ub_box = hi_run->boxes.size() > out ? hi_run->boxes[out] : std::nullopt;
    for (size_t j = 0; lb_box && j < lower.lower.size(); ++j) lower.lower[j] = std::max(lower.lower[j], lb_box->lo[j]);
    for (size_t j = 0; ub_box && j < upper.lower.size(); ++j) upper.lower[j] = std::min(upper.lower[j], ub_box->hi[j]);
  }
  const Shape rows = spec ? Shape{C.rows} : out_shape;
  Shape a_shape{C.rows};
  for (int64_t d : boxes[0].shape) a_shape.push_back(d);
  auto arr = [](bool on, const Shape& sh, std::vector<double>&& v) -> py::object {
    return on ? py::object(to_numpy(sh, std::move(v))) : py::object(py::none());
  };
  py::object lb = arr(a.bound_lower, rows, std::move(lower.lower)), ub = arr(a.bound_upper, rows, std::move(upper.lower));
  if (!a.return_A) return py::make_tuple(lb, ub);
  py::dict A;
  A["lA"] = arr(a.bound_lower, a_shape, std::move(lower.A));
  A["lbias"] = arr(a.bound_lower, rows, std::move(lower.bias));
  A["uA"] = arr(a.bound_upper, a_shape, std::move(upper.A));
  A["ubias"] = arr(a.bound_upper, rows, std::move(upper.bias));
  return py::make_tuple(lb, ub, A);
}

// A batch with bound_lower / bound_upper / return_A: side_bounds sample by sample, each result stacked along
// a new leading axis (a side not asked for stays None).
py::object batch_sides(const PyModel& self, const py::object& lo, const py::object& hi, const py::object& spec_obj,
                       const CrownOptions& co, const BoundArgs& a, int64_t n) {
  const Model& m = self.model();
  if (m.output_ids.size() != 1) raise_invalid("a batch of samples needs a model with one output", "lo");
  if (co.method == BoundMethod::Ibp) raise_invalid("bound_lower, bound_upper and return_A go with method crown or alpha-crown", "method");
  const Shape& in = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  const int64_t ny = numel(m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape);
  const Tensor<double> x = to_tensor(lo, {"lo"}, true);
  const std::vector<DoubleBox> boxes = sample_boxes(x, hi, a.eps_obj, in, n);
  const std::vector<std::shared_ptr<const InputBall>> balls =  // an L2 / L1 ball per sample
      std::isfinite(a.p) ? sample_balls(x, a.eps_obj, in, n, a.p) : std::vector<std::shared_ptr<const InputBall>>{};
  const std::vector<SpecMatrix> specs = sample_specs(spec_obj, n, ny);
  std::vector<py::tuple> per;
  for (int64_t i = 0; i < n; ++i) {
    const std::optional<SpecMatrix> spec = specs.empty() ? std::nullopt : std::optional(specs[static_cast<size_t>(i)]);
    BoundArgs ai = a;  // sample i's ball: the engine's, and return_A's minimum over it (finish_side)
    if (!balls.empty()) {
      const InputBall& b = *balls[static_cast<size_t>(i)];
      if (co.method != BoundMethod::Ibp) ai.where.ball = balls[static_cast<size_t>(i)];
      ai.centers = {b.center};
      ai.eps = b.eps;
    }
    per.push_back(side_bounds(self, {boxes[static_cast<size_t>(i)]}, spec, co, ai).cast<py::tuple>());
  }
  // Shapes as the two-sided batch's and auto_LiRPA's: [N, rows] (the output without its leading 1 for rows
  // without C), lA / uA [N, rows, *input without its leading 1].
  const int64_t rows = specs.empty() ? ny : specs[0].rows;
  const Shape& out_shape = m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape;
  py::list row_shape, a_shape;
  row_shape.append(n), a_shape.append(n), a_shape.append(rows);
  for (int64_t d : specs.empty() ? drop_leading_one(out_shape) : Shape{rows}) row_shape.append(d);
  for (int64_t d : drop_leading_one(in)) a_shape.append(d);
  const py::object stack = py::module_::import("numpy").attr("stack");
  auto stacked = [&](auto&& pick, const py::list& shape) -> py::object {
    py::list items;
    for (const py::tuple& t : per) items.append(pick(t));
    return items[0].is_none() ? py::object(py::none()) : stack(items).attr("reshape")(py::tuple(shape));
  };
  py::object lb = stacked([](const py::tuple& t) { return t[0]; }, row_shape);
  py::object ub = stacked([](const py::tuple& t) { return t[1]; }, row_shape);
  if (!a.return_A) return py::make_tuple(lb, ub);
  py::list bias_shape;
  bias_shape.append(n), bias_shape.append(rows);
  py::dict A;
  for (const char* key : {"lA", "lbias", "uA", "ubias"})
    A[key] = stacked([key](const py::tuple& t) { return t[2].cast<py::dict>()[key]; },
                     key[1] == 'A' ? a_shape : bias_shape);
  return py::make_tuple(lb, ub, A);
}

py::object bounds(const PyModel& self, const py::object& lo, const py::object& hi, const py::object& spec_obj,
                  BoundArgs a, const EvalOptions& options) {
  const std::optional<BoundMethod> method = parse_bound_method(a.method);
  if (!method) raise_invalid("method " + a.method + ": expected ibp, crown or alpha-crown", "method");
  // As the CLI's --alpha-iters: 1 to 100000 (a negative count once ran no step and 10^9 ran for hours).
  if (a.alpha_iters < 1 || a.alpha_iters > 100000)
    raise_invalid(fmt::format("alpha_iters {}: expected 1 to 100000", a.alpha_iters), "alpha_iters");
  CrownOptions co;
  if (!set_intermediate(a.intermediate, co))
    raise_invalid("intermediate " + a.intermediate + ": expected crown, forward, forward+crown or ibp (crown-ibp)",
                  "intermediate");
  const Model& m = self.model();
  const Result<ArithSpec> parsed = parse_arith_name(a.arith, /*allow_real=*/false);
  if (!parsed.ok())
    raise_invalid("IR bounds: arith " + a.arith + ": expected f64, f32 or a binary format (" + parsed.message() + ")",
                  "arith");
  const ArithSpec& arith = *parsed;
  if (const std::optional<int64_t> n = batch_size(m, lo)) {
    a.p = a.norm.is_none() ? INFINITY : py::float_(a.norm).cast<double>();
    if (!(std::isinf(a.p) && a.p > 0) && a.p != 1 && a.p != 2)
      raise_invalid(fmt::format("norm {}: expected inf, 2 or 1", a.p), "norm");
    if (std::isfinite(a.p) && a.eps_obj.is_none()) raise_invalid("norm goes with eps (a ball around lo)", "norm");
    if (a.all_nodes && (!a.bound_lower || !a.bound_upper || a.return_A))
      raise_invalid("bound_lower, bound_upper and return_A bound the output, not all_nodes", "all_nodes");
    co.method = *method;
    co.arith = arith;
    co.alpha_iters = a.alpha_iters;
    co.lirpa_compatible = a.lirpa_compatible;
    co.eval = options;
    if (!a.bound_lower || !a.bound_upper || a.return_A) return batch_sides(self, lo, hi, spec_obj, co, a, *n);
    return batch_bounds(self, lo, hi, a.eps_obj, spec_obj, co, *method == BoundMethod::Ibp && spec_obj.is_none(), *n, a.p,
                        a.all_nodes);
  }
  if (!a.eps_obj.is_none() && !a.eps)
    raise_invalid("eps: one radius per sample goes with a batch (lo with a leading sample axis)", "eps");
  const std::vector<DoubleBox> boxes = a.eps ? balls_of(self, lo, hi, a) : boxes_of(self, lo, hi);
  if (!a.eps && !a.norm.is_none()) raise_invalid("norm goes with eps (a ball around lo)", "norm");
  const std::optional<SpecMatrix> spec = spec_of(m, spec_obj);
  if (!a.bound_lower && !a.bound_upper) raise_invalid("bound_lower and bound_upper are both False: nothing to bound", "bound_lower");
  // An L2 / L1 ball: the bound engine's (Subdomain::ball); IBP bounds its box.
  if (std::isfinite(a.p) && *method != BoundMethod::Ibp && boxes.size() == 1)
    a.where.ball = std::make_shared<const InputBall>(InputBall{a.centers[0], *a.eps, a.p});
  if (!a.bound_lower || !a.bound_upper || a.return_A) {
    if (*method == BoundMethod::Ibp) raise_invalid("bound_lower, bound_upper and return_A go with method crown or alpha-crown", "method");
    if (a.all_nodes) raise_invalid("bound_lower, bound_upper and return_A bound the output, not all_nodes", "all_nodes");
    co.method = *method;
    co.arith = arith;
    co.alpha_iters = a.alpha_iters;
    co.lirpa_compatible = a.lirpa_compatible;
    co.eval = options;
    return side_bounds(self, boxes, spec, co, a);
  }
  std::vector<CrownResult> runs;
  Result<DoubleIbp> ibp_r = DoubleIbp{};
  Status failed;
  run_interruptible([&] {
    if (*method == BoundMethod::Ibp && !spec) {
      ibp_r = run_ibp_double(prepared_for(self, arith), boxes, options);
    } else {
      co.method = *method;
      co.arith = arith;
      co.alpha_iters = a.alpha_iters;
      co.lirpa_compatible = a.lirpa_compatible;
      co.eval = options;
      for (int64_t out : m.output_ids) {
        Result<CrownResult> r = run_crown(m.graph, m.payload, boxes, out, spec ? &*spec : nullptr, co, a.where);
        if (!r.ok()) {
          failed = r.status();
          break;
        }
        runs.push_back(std::move(*r));
      }
    }
    return true;
  });
  check(failed);
  warn_cut(m, runs);
  const DoubleIbp ibp = unwrap(std::move(ibp_r));
  return bound_result(m, ibp, runs, spec.has_value(), a.all_nodes);
}

int64_t pick_output(const Model& m, const std::optional<int64_t>& output) {
  if (!output) {
    if (m.output_ids.size() != 1)
      raise_invalid(fmt::format("the model has {} outputs; choose one with output=ID", m.output_ids.size()), "output");
    return m.output_ids[0];
  }
  if (*output < 0 || *output >= static_cast<int64_t>(m.graph.nodes.size()))
    raise_invalid(fmt::format("output {}: expected a node id below {}", *output, m.graph.nodes.size()), "output");
  return *output;
}

template <class Ctx>
std::vector<Tensor<typename Ctx::Scalar>> to_ctx(Ctx& ctx, const std::vector<Tensor<double>>& ts) {
  std::vector<Tensor<typename Ctx::Scalar>> r;
  for (const auto& t : ts) {
    Tensor<typename Ctx::Scalar> c;
    c.shape = t.shape;
    for (double v : t.data) c.data.push_back(ctx.from_double(v));
    r.push_back(std::move(c));
  }
  return r;
}

template <class Ctx, class V>
std::vector<double> widen(Ctx& ctx, const V& values) {
  std::vector<double> r;
  r.reserve(values.size());
  for (const auto& v : values) r.push_back(ctx.to_double(v));
  return r;
}

// A derivative's results, widened to double.
struct Derivs {
  Tensor<double> value, tangent;
  std::vector<Tensor<double>> inputs;
  std::vector<ParamGrad<double>> params;
};

template <class Ctx>
Result<Derivs> run_diff(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& inputs,
                        const std::vector<Tensor<double>>* tangents, const std::optional<Tensor<double>>& cot,
                        int64_t output, const GradOptions& options) {
  using S = typename Ctx::Scalar;
  auto in = to_ctx(ctx, inputs);
  const Payload<S> payload = convert_payload<S>(m.payload, [&](double v) { return ctx.from_double(v); });
  Derivs d;
  if (tangents) {
    const auto tan = to_ctx(ctx, *tangents);
    DENOTE_ASSIGN_OR_RETURN(auto t, jvp(m.graph, payload, std::span<const Tensor<S>>(in),
                                        std::span<const Tensor<S>>(tan), output, ctx, options.eval));
    d.value = Tensor<double>(t.value.shape, widen(ctx, t.value.data));
    d.tangent = Tensor<double>(t.tangent.shape, widen(ctx, t.tangent.data));
    return d;
  }
  std::optional<Tensor<S>> c;
  if (cot) c = to_ctx(ctx, std::vector<Tensor<double>>{*cot})[0];
  DENOTE_ASSIGN_OR_RETURN(auto g, vjp_lent(m.graph, payload, std::span<Tensor<S>>(in), output,
                                           c ? &*c : nullptr, ctx, options));
  d.value = Tensor<double>(g.value.shape, widen(ctx, g.value.data));
  for (const auto& t : g.inputs) d.inputs.emplace_back(t.shape, widen(ctx, t.data));
  for (const auto& p : g.params) d.params.push_back({p.node, p.field, p.shape, widen(ctx, p.values)});
  return d;
}

struct DiffArgs {
  std::optional<int64_t> output;
  std::string wrt = "inputs", kernels = "exact", arith = "f64", rounding = "nearest-even";
  long precision = 256;
};

Derivs differentiate(const PyModel& self, const py::args& xs, const py::object& tangents, const py::object& cotangent,
                     const DiffArgs& a, const EvalOptions& eval) {
  const Model& m = self.model();
  const ArithSpec spec = unwrap(parse_arith(a.arith, a.rounding, a.precision));
  GradOptions o;
  o.eval = eval;
  const std::optional<GradWrt> wrt = parse_grad_wrt(a.wrt);
  if (!wrt) raise_invalid("wrt " + a.wrt + ": expected inputs, params or all", "wrt");
  o.wrt = *wrt;
  const std::optional<GradKernels> kernels = parse_grad_kernels(a.kernels);
  if (!kernels) raise_invalid("kernels " + a.kernels + ": expected exact or openblas", "kernels");
  o.kernels = *kernels;
  const int64_t output = pick_output(m, a.output);
  std::vector<Tensor<double>> inputs;
  for (size_t k = 0; k < xs.size(); ++k) inputs.push_back(to_tensor(xs[k], {"input", static_cast<int64_t>(k)}, true));
  std::optional<std::vector<Tensor<double>>> tan;
  if (!tangents.is_none()) tan = per_input(self, tangents, "tangents");
  std::optional<Tensor<double>> cot;
  if (!cotangent.is_none()) cot = to_tensor(cotangent, {"cotangent"}, true);
  Result<Derivs> r = Status::error(ErrorCode::kInternal, "internal: derivative did not run");
  {
    py::gil_scoped_release release;
    r = visit_arith(spec, [&](auto& ctx) { return run_diff(ctx, m, inputs, tan ? &*tan : nullptr, cot, output, o); });
  }
  return unwrap(std::move(r));
}

py::object grad_result(Derivs d, const std::string& wrt) {
  py::list inputs;
  for (auto& t : d.inputs) inputs.append(to_numpy(std::move(t)));
  py::object in = inputs.size() == 1 ? py::object(inputs[0]) : py::object(py::tuple(inputs));
  if (wrt == "inputs") return in;
  py::dict params;
  for (auto& p : d.params) params[py::make_tuple(p.node, p.field)] = to_numpy(p.shape, std::move(p.values));
  if (wrt == "params") return params;
  return py::make_tuple(in, params);
}

py::object json_to_python(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

py::object plan(const PyModel& self, const std::string& provider, const std::string& device,
                const std::string& assurance, bool report) {
  PlanPolicy policy;
  policy.device = device;
  check(parse_provider_policy(provider, policy).with_field("provider"));
  check(parse_assurance(assurance, policy).with_field("assurance"));
  const Environment env = detect_environment();
  check(check_provider_present(policy, env));
  if (std::find(env.devices.begin(), env.devices.end(), device) == env.devices.end()) {
    std::string present;
    for (const auto& d : env.devices) present += (present.empty() ? "" : ", ") + d;
    raise_invalid(fmt::format("device '{}': expected a device present here ({})", device.substr(0, 40), present), "device");
  }
  CapsuleRegistry registered = unwrap(standard_registry());
  GraphKernelPlan p = unwrap(plan_graph(self.model().graph, registered.available(env), policy));
  return report ? py::object(py::str(plan_report(p))) : json_to_python(plan_json(p));
}

py::dict verify_result(const VerifyOutcome& r) {
  py::dict d, stats;
  d["result"] = std::string(verify_result_name(r.result));
  d["time_s"] = r.stats.total_s;
  if (r.witness) {
    py::dict w;
    std::vector<double> x = r.witness->x, y = r.witness->y;
    const Shape xs{static_cast<int64_t>(x.size())}, ys{static_cast<int64_t>(y.size())};
    w["x"] = to_numpy(xs, std::move(x));
    w["y"] = to_numpy(ys, std::move(y));
    py::list texts;
    for (const std::string& t : r.witness->x_exact) texts.append(t);
    w["x_exact"] = texts;
    w["semantics"] = r.witness->semantics;
    w["outside"] = r.witness->outside;
    d["witness"] = w;
  } else {
    d["witness"] = py::none();
  }
  const VerifyStats& s = r.stats;
  stats["decided_by"] = s.decided_by;
  stats["falsify_s"] = s.falsify_s, stats["bounds_s"] = s.bounds_s, stats["bab_s"] = s.bab_s;
  stats["bab_bounds_s"] = s.bab_bounds_s, stats["bab_probe_s"] = s.bab_probe_s, stats["threads"] = s.threads;
  stats["samples"] = s.samples, stats["pgd_steps"] = s.pgd_steps, stats["domains"] = s.domains;
  stats["crown_calls"] = s.crown_calls, stats["alpha_calls"] = s.alpha_calls, stats["combined"] = s.combined, stats["disagreements"] = s.disagreements;
  stats["intermediate"] = s.intermediate;
  d["stats"] = stats;
  d["note"] = r.note;
  return d;
}

// An arith argument: the caller's name, or (None) the model's own arithmetic (PyModel::native_arith), else
// `fallback`.
std::string resolve_arith(const PyModel& self, const py::object& arith, const std::string& fallback) {
  if (!arith.is_none()) return arith.cast<std::string>();
  return self.native_arith.empty() ? fallback : self.native_arith;
}

py::dict verify(const PyModel& self, const std::string& vnnlib_path, double timeout, const py::object& arith_arg,
                uint64_t seed, int threads, const std::string& split, const std::optional<int64_t>& max_memory,
                double witness_tolerance, const std::string& intermediate, bool certificate) {
  const auto mode = parse_split_mode(split);
  if (!mode) raise_invalid("split " + split + ": expected auto, input or relu", "split");
  if (threads < 1 || threads > 256) raise_invalid(fmt::format("threads {}: expected 1 to 256", threads), "threads");
  if (!(timeout > 0)) raise_invalid(fmt::format("timeout {}: expected a number of seconds > 0", timeout), "timeout");
  if (max_memory && *max_memory < 1) raise_invalid("max_memory: expected a byte count >= 1", "max_memory");
  if (!(witness_tolerance >= 0 && witness_tolerance <= 1))
    raise_invalid(fmt::format("witness_tolerance {}: expected a distance from 0 to 1", witness_tolerance), "witness_tolerance");
  check(check_shapes(self.model().graph));
  VerifyOptions o;
  o.timeout_s = timeout;
  const std::string arith = resolve_arith(self, arith_arg, o.arith.name);
  const Result<ArithSpec> parsed = parse_arith_name(arith, /*allow_real=*/false);
  if (!parsed.ok() || !(parsed->is_f32() || parsed->is_f64()))
    raise_invalid("verify: arith " + arith + ": expected f32 or f64", "arith");
  o.arith = *parsed;
  o.seed = seed;
  o.threads = threads;
  o.split = *mode;
  o.max_bytes = max_memory.value_or(0);
  o.witness_tolerance = witness_tolerance;
  if (!valid_intermediate(intermediate))
    raise_invalid("intermediate " + intermediate + ": expected auto, crown, forward, forward+crown or ibp", "intermediate");
  o.intermediate = intermediate;
  o.certificate = certificate;
  // The property's normal form counts against the timeout, as in the CLI.
  const auto start = std::chrono::steady_clock::now();
  VnnlibLimits limits;
  limits.deadline = deadline_after(start, timeout);
  // The VNN-LIB text itself (no file needed) when the string holds a declaration or an assertion.
  const bool text = vnnlib_path.find("(declare-const") != std::string::npos || vnnlib_path.find("(assert") != std::string::npos;
  Result<VnnProperty> p = run_interruptible([&] {
    return text ? parse_vnnlib(vnnlib_path, "<vnnlib text>", limits) : load_vnnlib_file(vnnlib_path, limits);
  });
  if (!p.ok() && p.status().field() == "deadline") {
    VerifyOutcome late;
    late.result = VerifyResult::Timeout;
    late.stats.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    late.note = "the timeout passed while reading the property";
    return verify_result(std::move(late));
  }
  const VnnProperty prop = unwrap(std::move(p), /*parsing=*/true);
  o.timeout_s = timeout - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Result<VerifyOutcome> r = run_interruptible([&] { return denote::verify(self.model(), prop, o); });
  if (r.ok()) r->stats.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const VerifyOutcome out = unwrap(std::move(r));
  py::dict d = verify_result(out);
  if (certificate) {  // the unsat answer's certificate as JSON text (None otherwise), or why none was made
    d["certificate"] = out.certificate ? py::object(py::str(certificate_json(*out.certificate))) : py::object(py::none());
    d["certificate_error"] = out.certificate_error;
  }
  return d;
}

}  // namespace

void register_analysis(py::module_& m, py::class_<PyModel, ModelPtr>& cls) {
  cls.def(
      "bounds",
      [](const PyModel& self, const py::object& lo, const py::object& hi, const std::string& method,
         const py::object& spec, const py::object& arith_arg, bool all_nodes, int alpha_iters, bool lirpa_compatible,
         const std::optional<int64_t>& max_memory, const std::string& intermediate, const py::object& eps,
         const py::object& norm, const py::object& C, bool bound_lower, bool bound_upper, bool return_A) {
        if (!C.is_none() && !spec.is_none()) raise_invalid("C and spec name the same matrix: give one", "C");
        std::optional<double> radius;  // eps as one number (an array: one per sample of a batch)
        if (!eps.is_none() && !py::hasattr(eps, "__len__")) radius = eps.cast<double>();
        const std::string arith = resolve_arith(self, arith_arg, "f64");
        BoundArgs args{method, arith, all_nodes, lirpa_compatible, alpha_iters, intermediate, radius, eps, norm,
                       bound_lower, bound_upper, return_A};
        return bounds(self, lo, hi, C.is_none() ? spec : C, std::move(args), eval_options(max_memory));
      },
      py::arg("lo"), py::arg("hi") = py::none(), py::arg("method") = "ibp", py::arg("spec") = py::none(),
      py::arg("arith") = py::none(), py::arg("all_nodes") = false, py::arg("alpha_iters") = 20,
      py::arg("lirpa_compatible") = false, py::arg("max_memory") = py::none(), py::arg("intermediate") = "crown",
      py::arg("eps") = py::none(), py::arg("norm") = py::none(), py::arg("C") = py::none(),
      py::arg("bound_lower") = true, py::arg("bound_upper") = true, py::arg("return_A") = false,
      R"doc(Sound bounds over the input box [lo, hi] (arrays for a one-input model, else one per input).

method: "ibp" (default), "crown" or "alpha-crown" (any case; auto_LiRPA's "CROWN-Optimized" is alpha-crown). arith: the endpoint arithmetic (ibp: f64, f32 or a
binary format; crown: f64 or f32); None (default): the model's own (Model.arith: f32 for an ONNX file of
FLOAT inputs or a float32 torch capture, so the bounds hold for its float32 outputs too), else f64. spec: a matrix C (rows x output elements): returns (lo, hi) of C y,
one entry per row. Otherwise returns (lower, upper) arrays shaped like the output (a list of pairs for
several outputs, {node_id: (lower, upper)} with all_nodes); a node without a sound box gets -inf..inf.
intermediate (crown/alpha-crown): where the boxes inside come from, as the CLI's --intermediate: "crown"
(default), "forward", "forward+crown" or "ibp" ("CROWN-IBP": IBP inside, CROWN at the output).
eps (norm=inf, the default): lo is the center x and the box is x +- eps, as auto_LiRPA's
PerturbationLpNorm(norm=np.inf, eps=eps) and the CLI's --center/--eps.
norm=2 or norm=1 (with eps): an L2 / L1 ball around lo, bounded through its bounding box lo +- eps; crown
then also takes, per row, the ball's own minimum of its linear bound (a . x0 - eps ||a||_q + bias, rounded
down; the intermediate bounds stay the box's, so auto_LiRPA's may be tighter); ibp and alpha-crown give the
box's bounds. A batch (auto_LiRPA's leading batch axis): lo (and hi) of shape [N, *input shape without its leading 1],
eps a number or N numbers, C [rows, outputs] or [N, rows, outputs]; returns [N, ...] bounds, each sample's
those of its own call (the model prepared once); with bound_lower / bound_upper / return_A each sample's
results stacked (lA [N, rows, *input shape without its leading 1]). C: the spec, as auto_LiRPA names it. bound_lower / bound_upper (crown, alpha-crown; one output): only that
side (the other is None), each side one lower-only pass (the upper through -C). return_A (crown or alpha-crown
(each row's coefficients those of its best step), one input):
also the linear bounds in the input, as a third result {"lA", "lbias", "uA", "ubias"}: lA x + lbias <= C y <=
uA x + ubias for every x of the box (lA: [rows, *input shape]; rows are C's, or the output's elements); the
constants are rounded so that this holds in exact arithmetic.)doc");
  cls.def(
      "grad",
      [](const PyModel& self, const py::args& xs, const std::optional<int64_t>& output, const py::object& cotangent,
         const std::string& wrt, const std::string& kernels, const std::string& arith, const std::string& rounding,
         long precision, const std::optional<int64_t>& max_memory) {
        DiffArgs a{output, wrt, kernels, arith, rounding, precision};
        return grad_result(differentiate(self, xs, py::none(), cotangent, a, eval_options(max_memory)), wrt);
      },
      py::arg("output") = py::none(), py::arg("cotangent") = py::none(), py::arg("wrt") = "inputs",
      py::arg("kernels") = "exact", py::arg("arith") = "f64", py::arg("rounding") = "nearest-even",
      py::arg("precision") = 256, py::arg("max_memory") = py::none(),
      R"doc(Reverse mode: the gradient of sum(cotangent * y) (cotangent default: ones), y = node `output`
(default: the only output), at the given inputs, in the arithmetic `arith`.

wrt="inputs" (default): one array per input (a tuple for several); "params": {(node_id, field): array}
for the weights, biases, norm parameters and constants the output reads; "all": (inputs, params).
kernels: "exact" (default) or "openblas" (f32/f64 linear nodes as gemm).)doc");
  cls.def(
      "jvp",
      [](const PyModel& self, const py::args& xs, const py::object& tangents, const std::optional<int64_t>& output,
         const std::string& arith, const std::string& rounding, long precision,
         const std::optional<int64_t>& max_memory) {
        DiffArgs a{output, "inputs", "exact", arith, rounding, precision};
        Derivs d = differentiate(self, xs, tangents, py::none(), a, eval_options(max_memory));
        return py::make_tuple(to_numpy(std::move(d.value)), to_numpy(std::move(d.tangent)));
      },
      py::arg("tangents"), py::arg("output") = py::none(), py::arg("arith") = "f64",
      py::arg("rounding") = "nearest-even", py::arg("precision") = 256, py::arg("max_memory") = py::none(),
      "Forward mode: (value, tangent) of node `output` along `tangents` (one array per input, like bounds' lo).");
  cls.def("plan", &plan, py::arg("provider") = "auto", py::arg("device") = "cpu", py::arg("assurance") = "checked",
          py::arg("report") = false,
          R"doc(The kernel plan under a policy (provider "auto", "prefer:P", "only:P"; assurance "checked" or
"external"): {'device': ..., 'nodes': [{'id', 'op', 'capsule', 'provider', 'device', 'trust', 'reduction'}]},
or the report text (one line per node, as `denote plan`) with report=True.)doc");
  const VerifyOptions defaults;  // the library's defaults are Python's (and the CLI's)
  m.def("verify", &verify, py::arg("model"), py::arg("vnnlib_path"), py::arg("timeout") = defaults.timeout_s,
        py::arg("arith") = py::none(), py::arg("seed") = defaults.seed, py::arg("threads") = defaults.threads,
        py::arg("split") = "auto",
        py::arg("max_memory") = py::none(), py::arg("witness_tolerance") = defaults.witness_tolerance,
        py::arg("intermediate") = defaults.intermediate, py::arg("certificate") = false,
        R"doc(Decides a VNN-LIB property on the model (one input, one output): a dict like `denote verify --json`.
vnnlib_path: a VNN-LIB file, or the property's text itself (a string holding "(declare-const" or "(assert").
The result:
{'result': 'sat'|'unsat'|'unknown'|'timeout', 'time_s', 'witness': {'x', 'y', 'x_exact', 'semantics', 'outside'} or
None, 'stats': {...}, 'note'}. Where the property pins an input to a decimal that no value of the arithmetic reaches
(lo = hi = 0.1), the witness holds for the real network at that decimal (x_exact; semantics says so).
witness_tolerance: also accept a witness that far outside the box in the arithmetic alone (VNN-COMP scores
with 1e-4; 0: exact). intermediate: the bound passes' intermediate bounds, "auto" (default: CROWN, forward bounds
for a conjunction whose whole-box CROWN pass runs past a quarter of the time left or the memory budget), "crown",
"forward", "forward+crown" or "ibp" (CROWN-IBP), as bounds(intermediate=...); stats['intermediate'] says which. arith: the network's arithmetic, "f32" or "f64"; None (default): the model's own (Model.arith), else f32. threads: branch and bound
threads (the answer does not depend on them). split: what branch and bound splits, "auto" (relu phases when more
than 16 inputs are open), "input" or "relu". max_memory: the bound passes' memory budget in bytes (default: half
the RAM). certificate: with an unsat answer also 'certificate', its proof as JSON text (None for another
answer), and 'certificate_error' (why none was made); denote.check_certificate re-validates it
(docs/CERTIFICATES.md). Ctrl-C stops the call (KeyboardInterrupt) at its next deadline check.)doc");
}

}  // namespace denote::python
