// Model.bounds over a batch of samples (python/src/bounds_batch.h): auto_LiRPA's x of shape [N, ...] with
// one eps or one per sample, and C shared or per sample. IBP bounds the batch in one pass
// (run_ibp_batch); CROWN each sample as its own call, the model prepared once (the payload's
// intervals, the dense layers, the conv plans).
#include "bounds_batch.h"

#include <fmt/format.h>

#include <cmath>

#include "interrupt.h"

namespace denote::python {

namespace {

// Sample i of x ([N, *sample]) as a tensor of the model's input shape.
Tensor<double> sample(const Tensor<double>& x, const Shape& in, int64_t i) {
  const int64_t k = numel(in);
  return Tensor<double>(in, std::vector<double>(x.data.begin() + i * k, x.data.begin() + (i + 1) * k));
}

}  // namespace

Shape drop_leading_one(const Shape& s) { return !s.empty() && s[0] == 1 ? Shape(s.begin() + 1, s.end()) : s; }

std::vector<DoubleBox> sample_boxes(const Tensor<double>& x, const py::object& hi, const py::object& eps,
                                    const Shape& in, int64_t n) {
  std::vector<DoubleBox> boxes;
  if (!eps.is_none()) {
    if (!hi.is_none()) raise_invalid("eps: pass the centers as lo and no hi (or lo and hi without eps)", "hi");
    const Tensor<double> e = to_tensor(eps, {"eps"}, true);
    const int64_t ne = numel(e.shape);
    if (ne != 1 && ne != n) raise_invalid(fmt::format("eps: {} values; expected one, or one per sample ({})", ne, n), "eps");
    for (int64_t i = 0; i < n; ++i) {
      auto b = box_around(sample(x, in, i), e.data[static_cast<size_t>(ne == 1 ? 0 : i)]);
      if (!b.ok()) raise_invalid(fmt::format("eps of sample {}: {}", i, b.message()), "eps");
      boxes.push_back(std::move(*b));
    }
    return boxes;
  }
  if (hi.is_none()) raise_invalid("hi: expected the boxes' upper corners (or eps=, with lo the centers)", "hi");
  const Tensor<double> h = to_tensor(hi, {"hi"}, true);
  if (h.shape != x.shape)
    raise_invalid(fmt::format("lo and hi: shapes {} and {} differ", to_string(x.shape), to_string(h.shape)), "hi");
  for (int64_t i = 0; i < n; ++i) {
    Tensor<double> l = sample(x, in, i), u = sample(h, in, i);
    boxes.push_back(DoubleBox{in, std::move(l.data), std::move(u.data)});
  }
  return boxes;
}

std::vector<std::shared_ptr<const InputBall>> sample_balls(const Tensor<double>& x, const py::object& eps,
                                                          const Shape& in, int64_t n, double p) {
  const Tensor<double> e = to_tensor(eps, {"eps"}, true);
  const int64_t ne = numel(e.shape);
  if (ne != 1 && ne != n) raise_invalid(fmt::format("eps: {} values; expected one, or one per sample ({})", ne, n), "eps");
  std::vector<std::shared_ptr<const InputBall>> balls;
  for (int64_t i = 0; i < n; ++i)
    balls.push_back(std::make_shared<const InputBall>(
        InputBall{sample(x, in, i).data, e.data[static_cast<size_t>(ne == 1 ? 0 : i)], p}));
  return balls;
}

std::vector<SpecMatrix> sample_specs(const py::object& spec, int64_t n, int64_t ny) {
  std::vector<SpecMatrix> out;
  if (spec.is_none()) return out;
  const Tensor<double> c = to_tensor(spec, {"C"}, true);
  const size_t r = c.shape.size();
  if ((r != 2 && r != 3) || c.shape.back() != ny || (r == 3 && c.shape[0] != n))
    raise_invalid(fmt::format("C of shape {}: expected [rows, {}] or [{}, rows, {}]", to_string(c.shape), ny, n, ny), "C");
  const int64_t rows = c.shape[r - 2], per = rows * ny;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = r == 3 ? i * per : 0;
    out.push_back(SpecMatrix{rows, ny, std::vector<double>(c.data.begin() + at, c.data.begin() + at + per)});
  }
  return out;
}

void warn_cut(const Model& m, const std::vector<CrownResult>& runs) {
  auto warn = [](const std::string& msg) {
    if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
  };
  const std::vector<int64_t> cut = cut_nodes(runs);
  if (!cut.empty())
    warn("no linear relaxation at " + describe_cut(m.graph, cut) + "; the linear bounds take their IBP box there");
  for (const CrownResult& r : runs)  // CROWN's error model does not hold: the bounds are IBP's (sound there)
    if (!r.fallback.empty()) return warn("the linear bounds are IBP's: " + r.fallback);
}

namespace {

// {node: (lo, hi)} with lo and hi [N, *node shape without its leading 1] from each sample's node boxes (a
// node without a box in a sample: that sample's whole line).
py::dict stack_nodes(const Model& m, const std::vector<std::vector<std::optional<DoubleBox>>>& every) {
  py::dict d;
  const auto n = static_cast<int64_t>(every.size());
  for (const Node& node : m.graph.nodes) {
    const auto k = static_cast<size_t>(numel(node.out_shape));
    std::vector<double> lo(static_cast<size_t>(n) * k, -INFINITY), hi(lo.size(), INFINITY);
    for (size_t i = 0; i < every.size(); ++i) {
      const auto& b = every[i].size() > static_cast<size_t>(node.id) ? every[i][static_cast<size_t>(node.id)] : std::nullopt;
      if (!b || b->lo.size() != k) continue;
      std::copy(b->lo.begin(), b->lo.end(), lo.begin() + static_cast<std::ptrdiff_t>(i * k));
      std::copy(b->hi.begin(), b->hi.end(), hi.begin() + static_cast<std::ptrdiff_t>(i * k));
    }
    Shape shape{n};
    for (int64_t dim : drop_leading_one(node.out_shape)) shape.push_back(dim);
    d[py::int_(node.id)] = py::make_tuple(to_numpy(shape, std::move(lo)), to_numpy(shape, std::move(hi)));
  }
  return d;
}

}  // namespace

std::optional<int64_t> batch_size(const Model& m, const py::object& lo) {
  const std::vector<int64_t> ids = m.graph.input_ids();
  if (ids.size() != 1 || lo.is_none()) return std::nullopt;
  const Shape& in = m.graph.nodes[static_cast<size_t>(ids[0])].out_shape;
  const Tensor<double> x = to_tensor(lo, {"lo"}, true);
  const Shape s = drop_leading_one(in);
  if (x.shape == in || x.shape.size() != s.size() + 1) return std::nullopt;
  if (!std::equal(s.begin(), s.end(), x.shape.begin() + 1)) return std::nullopt;
  return x.shape[0];
}

IbpPrepared prepared_for(const PyModel& self, const ArithSpec& arith) {
  const std::string key = fmt::format("{}/{}", arith.name, static_cast<int>(arith.rounding));
  std::lock_guard<std::mutex> lock(self.cache_mutex);
  auto it = self.ibp_prepared.find(key);
  if (it == self.ibp_prepared.end())
    it = self.ibp_prepared.emplace(key, unwrap(IbpPrepared::prepare(self.model().graph, self.model().payload, arith))).first;
  return it->second;
}

py::object batch_bounds(const PyModel& self, const py::object& lo, const py::object& hi, const py::object& eps,
                        const py::object& spec, const CrownOptions& co, bool ibp_box, int64_t n,
                        double p, bool all_nodes) {
  const Model& m = self.model();
  if (m.output_ids.size() != 1) raise_invalid("a batch of samples needs a model with one output", "lo");
  const Shape& in = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  const int64_t out = m.output_ids[0];
  const Shape& out_shape = m.graph.nodes[static_cast<size_t>(out)].out_shape;
  const Tensor<double> x = to_tensor(lo, {"lo"}, true);
  const std::vector<DoubleBox> boxes = sample_boxes(x, hi, eps, in, n);
  const std::vector<std::shared_ptr<const InputBall>> balls =
      std::isfinite(p) ? sample_balls(x, eps, in, n, p) : std::vector<std::shared_ptr<const InputBall>>{};
  const std::vector<SpecMatrix> specs = sample_specs(spec, n, numel(out_shape));
  const IbpPrepared prep = prepared_for(self, co.arith);
  const int64_t k = specs.empty() ? numel(out_shape) : specs[0].rows;
  std::vector<double> lower(static_cast<size_t>(n * k), -INFINITY), upper(static_cast<size_t>(n * k), INFINITY);
  Status failed;
  std::vector<CrownResult> cuts(1);
  all_nodes = all_nodes && specs.empty();  // with C: C y's bounds, as a single call's
  std::vector<std::vector<std::optional<DoubleBox>>> every(all_nodes ? static_cast<size_t>(n) : 0);
  auto put = [&](int64_t i, const std::optional<DoubleBox>& b) {  // sample i's bounds (none: the whole line)
    if (!b) return;
    std::copy(b->lo.begin(), b->lo.end(), lower.begin() + i * k);
    std::copy(b->hi.begin(), b->hi.end(), upper.begin() + i * k);
  };
  run_interruptible([&] {
    if (ibp_box && all_nodes) {  // every node's box, sample by sample on the prepared model
      for (int64_t i = 0; i < n && failed.ok(); ++i) {
        Result<DoubleIbp> r = run_ibp_double(prep, std::span<const DoubleBox>(&boxes[static_cast<size_t>(i)], 1), co.eval);
        if (!r.ok()) failed = r.status();
        else every[static_cast<size_t>(i)] = std::move(r->boxes);
      }
      return true;
    }
    if (ibp_box) {  // the batch as one pass (run_ibp_batch)
      Result<std::vector<std::optional<DoubleBox>>> r = run_ibp_batch(prep, boxes, out, co.eval);
      if (!r.ok()) failed = r.status();
      for (size_t i = 0; r.ok() && i < r->size(); ++i)
        put(static_cast<int64_t>(i), (*r)[i]);
      return true;
    }
    Subdomain where;
    where.prepared = prep;
    for (int64_t i = 0; i < n && failed.ok(); ++i) {
      const std::span<const DoubleBox> box(&boxes[static_cast<size_t>(i)], 1);
      where.ball = balls.empty() ? nullptr : balls[static_cast<size_t>(i)];
      Result<CrownResult> r = run_crown(m.graph, m.payload, box, out, specs.empty() ? nullptr : &specs[static_cast<size_t>(i)], co, where);
      if (!r.ok()) {
        failed = r.status();
        break;
      }
      if (i == 0) cuts[0].cut = r->cut, cuts[0].fallback = r->fallback;
      if (all_nodes) every[static_cast<size_t>(i)] = std::move(r->boxes);
      else if (specs.empty()) put(i, r->boxes[static_cast<size_t>(out)]);
      else put(i, DoubleBox{Shape{k}, std::move(r->spec_lo), std::move(r->spec_hi)});
    }
    return true;
  });
  check(failed);
  warn_cut(m, cuts);
  if (all_nodes) return stack_nodes(m, every);
  Shape shape{n};
  if (specs.empty())
    for (int64_t d : drop_leading_one(out_shape)) shape.push_back(d);
  else
    shape.push_back(k);
  return py::make_tuple(to_numpy(shape, std::move(lower)), to_numpy(shape, std::move(upper)));
}

}  // namespace denote::python
