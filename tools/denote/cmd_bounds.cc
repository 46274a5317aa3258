// denote bounds MODEL (--center T --eps E | --box LO HI) [--method ibp|crown|alpha-crown] [--spec C] [--arith A] [--json]:
// interval bound propagation (this file) and linear bounds (cmd_bounds_linear.cc); one box per node
// (none where no sound rule applies).
#include <charconv>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli_bounds.h"
#include "denote/bounds/crown.h"
#include "denote/scalar/arith.h"

namespace denote::cli {

void add_box_options(CLI::App* sub, BoxOptions& o) {
  sub->add_option("model", o.path, "model file (.json torchlean.ir.v1 or .onnx)")->required();
  sub->add_option("--center", o.center, "center of the input box: JSON array, @file.npy or ID=T; repeat per input")
      ->allow_extra_args(false);
  sub->add_option("--eps", o.eps_text, "l-infinity radius around --center (a finite number >= 0)")
      ->each([&o](const std::string&) { o.eps_given = true; });
  sub->add_option("--norm", o.norm,
                  "inf (default), 2 or 1: the ball around --center; crown and alpha-crown bound an L2 / L1 ball itself "
                  "(every CROWN pass minimised over it), ibp its bounding box");
  sub->add_option("--box", o.box, "LO HI: the input box's corners (JSON arrays or @file.npy); repeat per input")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)  // repeated: one LO HI pair per input
      ->allow_extra_args(false);
  sub->add_option("--arith", o.arith,
                  "endpoint arithmetic: f64 (default), f32, auto (the ONNX file's: f32 for FLOAT inputs), or a binary "
                  "format name / binary(E,F)");
  add_max_memory_option(sub, o.max_memory);
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

namespace {

Status parse_eps(BoxOptions& o) {
  const std::string& t = o.eps_text;
  const std::string expected = "; expected a finite number >= 0";
  if (!o.eps_given) return error_status("--center needs --eps E (the l-infinity radius, a finite number >= 0)");
  if (t.empty()) return error_status("--eps '': empty" + expected);
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) return error_status("--eps " + t + ": overflows a double" + expected);
  if (ec != std::errc() || end != t.data() + t.size()) return error_status("--eps '" + t + "': not a number" + expected);
  if (std::isnan(v)) return error_status("--eps " + t + ": eps is NaN" + expected);
  if (std::isinf(v)) return error_status("--eps " + t + ": eps is infinite" + expected);
  if (v < 0) return error_status("--eps " + t + ": eps is negative" + expected);
  o.eps = v;
  return ok_status();
}

// Every element of a center is finite; LO and HI are not NaN and LO <= HI.
Status check_corners(const Graph& g, const std::vector<Tensor<double>>& lo, const std::vector<Tensor<double>>& hi) {
  const std::vector<int64_t> ids = g.input_ids();
  for (size_t k = 0; k < lo.size(); ++k)
    for (size_t i = 0; i < lo[k].data.size(); ++i) {
      const double a = lo[k].data[i], b = hi[k].data[i];
      if (std::isnan(a) || std::isnan(b))
        return error_status(fmt::format("--box {} for input node {}: element {} is nan", std::isnan(a) ? "LO" : "HI",
                                        ids[k], i));
      if (a > b)
        return error_status(fmt::format("--box for input node {}: element {} has LO {} > HI {}", ids[k], i, a, b));
    }
  return ok_status();
}

}  // namespace

Result<int64_t> check_box_usage(BoxOptions& o) {
  const bool by_center = !o.center.empty();
  if (by_center == !o.box.empty()) return error_status("give either --center T --eps E or --box LO HI");
  if (by_center) DENOTE_RETURN_IF_ERROR(parse_eps(o));
  else if (o.eps_given) return error_status("--eps goes with --center, not with --box");
  if (o.norm != "inf" && o.norm != "2" && o.norm != "1") return error_status("--norm " + o.norm + ": expected inf, 2 or 1");
  if (o.norm != "inf" && !by_center) return error_status("--norm goes with --center and --eps (a ball), not with --box");
  o.p = o.norm == "inf" ? INFINITY : o.norm == "2" ? 2.0 : 1.0;
  if (o.box.size() % 2 != 0) return error_status("--box takes two values, LO and HI");
  auto spec = parse_arith_name(o.arith, /*allow_real=*/false);
  if (o.arith != "auto" && !spec.ok())
    return error_status(
        fmt::format("--arith {}: expected f64, f32, auto or a binary format ({})", o.arith, spec.message()));
  return max_memory_bytes(o.max_memory);
}

Result<Model> load_box_model(BoxOptions& o) {
  std::vector<int32_t> types;
  auto m = load_checked_model(o.path, &types);
  if (m.ok() && o.arith == "auto") o.arith = arith_of_onnx_inputs(types).value_or(ArithSpec::f64()).name;
  return m;
}

Result<std::vector<DoubleBox>> parse_boxes(const Graph& g, const BoxOptions& o) {
  std::vector<DoubleBox> boxes;
  if (!o.center.empty()) {
    DENOTE_ASSIGN_OR_RETURN(auto centers, parse_inputs(g, o.center, "--center"));
    const std::vector<int64_t> ids = g.input_ids();
    for (size_t k = 0; k < centers.size(); ++k) {
      for (size_t i = 0; i < centers[k].data.size(); ++i)
        if (!std::isfinite(centers[k].data[i]))
          return error_status(fmt::format("--center for input node {}: element {} is {}; expected a finite number",
                                          ids[k], i, json_number(centers[k].data[i])));
      auto b = box_around(centers[k], o.eps);
      if (!b.ok()) return error_status(fmt::format("--center for input node {}: {}", ids[k], b.message()));
      boxes.push_back(std::move(*b));
    }
    return boxes;
  }
  std::vector<std::string> los, his;
  for (size_t i = 0; i + 1 < o.box.size(); i += 2) {
    los.push_back(o.box[i]);
    his.push_back(o.box[i + 1]);
  }
  DENOTE_ASSIGN_OR_RETURN(auto lo, parse_inputs(g, los, "--box LO"));
  DENOTE_ASSIGN_OR_RETURN(auto hi, parse_inputs(g, his, "--box HI"));
  DENOTE_RETURN_IF_ERROR(check_corners(g, lo, hi));
  for (size_t k = 0; k < lo.size(); ++k) boxes.push_back(DoubleBox{lo[k].shape, lo[k].data, hi[k].data});
  return boxes;
}

std::string six_decimals(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + fmt::format("{:.6f}", v[i]);
  return out + "]";
}

namespace {

std::string json_list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_number(v[i]);
  return out + "]";
}

// The nodes to print: the model's outputs, or every node with --all-nodes.
std::vector<int64_t> shown_nodes(const Model& m, const DoubleIbp& r, bool all) {
  if (!all) return m.output_ids;
  std::vector<int64_t> ids(r.boxes.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  return ids;
}

void print_bounds(const Model& m, const DoubleIbp& r, const BoxOptions& o) {
  const std::vector<int64_t> ids = shown_nodes(m, r, o.all_nodes);
  if (!o.json) {
    std::cout << "method: ibp, arith: " << o.arith << (o.all_nodes ? "" : ", output nodes (--all-nodes for every node)")
              << "\n";
    for (int64_t i : ids) {
      if (r.boxes[i])
        std::cout << fmt::format("node {}: {} .. {}\n", i, six_decimals(r.boxes[i]->lo), six_decimals(r.boxes[i]->hi));
      else
        std::cout << fmt::format("node {}: none\n  why: {}\n", i, r.notes[i]);
    }
    return;
  }
  std::string out = fmt::format("{{\"method\": \"ibp\", \"arith\": \"{}\", \"nodes\": \"{}\", \"boxes\": [", o.arith,
                                o.all_nodes ? "all" : "outputs");
  for (size_t k = 0; k < ids.size(); ++k) {
    const int64_t i = ids[k];
    out += k ? ", " : "";
    if (r.boxes[i])
      out += fmt::format("{{\"id\": {}, \"shape\": [{}], \"lo\": {}, \"hi\": {}}}", i, join_ints(r.boxes[i]->shape),
                         json_list(r.boxes[i]->lo), json_list(r.boxes[i]->hi));
    else
      out += fmt::format("{{\"id\": {}, \"box\": null, \"why\": \"{}\"}}", i, json_escape(r.notes[i]));
  }
  std::cout << out << "]}\n";
}

int run_bounds(BoxOptions& o, const std::string& method, const LinearBoundOptions& lb) {
  const auto m_kind = parse_bound_method(method);
  if (!m_kind) return usage_error("--method " + method + ": expected ibp, crown or alpha-crown");
  if (*m_kind != BoundMethod::Ibp || !lb.spec.empty()) return run_linear_bounds(o, *m_kind, lb);
  if (lb.alpha_iters_given) return usage_error("--alpha-iters goes with --method alpha-crown");
  auto budget = check_box_usage(o);
  if (!budget.ok()) return usage_error(budget.message());
  auto m = load_box_model(o);
  if (!m.ok()) return fail(m.message());
  auto boxes = parse_boxes(m->graph, o);
  if (!boxes.ok()) return fail(boxes.message());
  EvalOptions options;
  set_max_bytes(options, *budget);
  auto r = run_ibp_double(m->graph, m->payload, *boxes, o.arith, options);
  if (!r.ok()) return fail(r.message());
  print_bounds(*m, *r, o);
  return kExitOk;
}

}  // namespace

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out += c;
  }
  return out;
}

void add_bounds(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("bounds", "per-node boxes and specification bounds over an input box (IBP, CROWN, alpha-CROWN)");
  auto o = std::make_shared<BoxOptions>();
  auto method = std::make_shared<std::string>("ibp");
  auto lb = std::make_shared<LinearBoundOptions>();
  add_box_options(sub, *o);
  sub->add_option("--method", *method, "bounding method: ibp (default), crown or alpha-crown (linear bounds)");
  auto spec_given = std::make_shared<bool>(false);
  sub->add_option("--spec", lb->spec, "matrix C (JSON [[...], ...] or @file.npy, one row per linear function of the output): bound C y")
      ->each([spec_given](const std::string&) { *spec_given = true; });
  sub->add_option("--alpha-iters", lb->alpha_iters, "alpha-crown: bound evaluations of the slope optimisation (default 20)")
      ->each([lb](const std::string&) { lb->alpha_iters_given = true; });
  sub->add_flag("--all-nodes", o->all_nodes, "print every node's box, not only the output nodes'");
  sub->add_flag("--lirpa-compatible", lb->lirpa_compatible,
                 "crown/alpha-crown: auto_LiRPA's intermediate-bound choices (equal bounds) instead of the tightest");
  sub->add_option("--intermediate", lb->intermediate,
                  "crown/alpha-crown: intermediate bounds by crown (default), forward (forward linear bounds in the "
                  "input, for inputs of at most 64 elements), forward+crown (both) or ibp");
  sub->add_flag("--outputs-only", lb->outputs_only, "print the output nodes' boxes only (the default)");
  sub->callback([&cmd, o, method, lb, spec_given] {
    cmd.run = [o, method, lb, spec_given] {
      if (lb->outputs_only && o->all_nodes) return usage_error("--outputs-only and --all-nodes exclude each other");
      if (*spec_given && lb->spec.empty()) return usage_error("--spec '': expected a matrix (JSON [[...], ...] or @file.npy)");
      return run_bounds(*o, *method, *lb);
    };
  });
}

}  // namespace denote::cli
