// denote bounds MODEL (--center T --eps E | --box LO HI) [--method ibp] [--arith A] [--json]:
// interval bound propagation; one box per node (none where no sound rule applies).
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli_bounds.h"
#include "denote/check/check.h"

namespace denote::cli {

void add_box_options(CLI::App* sub, BoxOptions& o) {
  sub->add_option("model", o.path, "model file (.json torchlean.ir.v1)")->required();
  sub->add_option("--center", o.center, "center of the input box: JSON array, @file.npy or ID=T; repeat per input")
      ->allow_extra_args(false);
  sub->add_option("--eps", o.eps, "l-infinity radius around --center (>= 0)");
  sub->add_option("--box", o.box, "LO HI: the input box's corners (JSON arrays or @file.npy); repeat per input")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)  // repeated: one LO HI pair per input
      ->allow_extra_args(false);
  sub->add_option("--arith", o.arith, "endpoint arithmetic: f64 (default), f32, or a binary format name / binary(E,F)");
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

Result<std::vector<DoubleBox>> parse_boxes(const Graph& g, const BoxOptions& o) {
  const bool by_center = !o.center.empty();
  if (by_center == !o.box.empty()) return error_status("give either --center T --eps E or --box LO HI");
  std::vector<DoubleBox> boxes;
  if (by_center) {
    if (std::isnan(o.eps)) return error_status("--center needs --eps E");
    if (!(o.eps >= 0) || !std::isfinite(o.eps)) return error_status(fmt::format("--eps {}: expected a finite number >= 0", o.eps));
    DENOTE_ASSIGN_OR_RETURN(auto centers, parse_inputs(g, o.center));
    for (const auto& c : centers) {
      DENOTE_ASSIGN_OR_RETURN(auto b, box_around(c, o.eps));
      boxes.push_back(std::move(b));
    }
    return boxes;
  }
  if (o.box.size() % 2 != 0) return error_status("--box takes two values, LO and HI");
  std::vector<std::string> los, his;
  for (size_t i = 0; i < o.box.size(); i += 2) {
    los.push_back(o.box[i]);
    his.push_back(o.box[i + 1]);
  }
  DENOTE_ASSIGN_OR_RETURN(auto lo, parse_inputs(g, los));
  DENOTE_ASSIGN_OR_RETURN(auto hi, parse_inputs(g, his));
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

void print_bounds(const DoubleIbp& r, const BoxOptions& o) {
  if (!o.json) {
    std::cout << "method: ibp, arith: " << o.arith << "\n";
    for (size_t i = 0; i < r.boxes.size(); ++i) {
      if (r.boxes[i])
        std::cout << fmt::format("node {}: {} .. {}\n", i, six_decimals(r.boxes[i]->lo), six_decimals(r.boxes[i]->hi));
      else
        std::cout << fmt::format("node {}: none\n  why: {}\n", i, r.notes[i]);
    }
    return;
  }
  std::string out = fmt::format("{{\"method\": \"ibp\", \"arith\": \"{}\", \"boxes\": [", o.arith);
  for (size_t i = 0; i < r.boxes.size(); ++i) {
    out += i ? ", " : "";
    if (r.boxes[i])
      out += fmt::format("{{\"id\": {}, \"shape\": [{}], \"lo\": {}, \"hi\": {}}}", i, join_ints(r.boxes[i]->shape),
                         json_list(r.boxes[i]->lo), json_list(r.boxes[i]->hi));
    else
      out += fmt::format("{{\"id\": {}, \"box\": null, \"why\": \"{}\"}}", i, json_escape(r.notes[i]));
  }
  std::cout << out << "]}\n";
}

int run_bounds(const BoxOptions& o, const std::string& method) {
  if (method != "ibp") {
    std::cerr << "error: --method " << method << ": only ibp is available\n";
    return kExitUsage;
  }
  auto m = load_model(o.path);
  if (!m.ok()) return fail(m.message());
  if (Status s = check_shapes(m->graph); !s.ok()) return fail(s.message());
  auto boxes = parse_boxes(m->graph, o);
  if (!boxes.ok()) return fail(boxes.message());
  auto r = run_ibp_double(m->graph, m->payload, *boxes, o.arith);
  if (!r.ok()) return fail(r.message());
  print_bounds(*r, o);
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
  auto* sub = app.add_subcommand("bounds", "per-node boxes over an input box (interval bound propagation)");
  auto o = std::make_shared<BoxOptions>();
  auto method = std::make_shared<std::string>("ibp");
  add_box_options(sub, *o);
  sub->add_option("--method", *method, "bounding method: ibp (default; the only one so far)");
  sub->callback([&cmd, o, method] { cmd.run = [o, method] { return run_bounds(*o, *method); }; });
}

}  // namespace denote::cli
