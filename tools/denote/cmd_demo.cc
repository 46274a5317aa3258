// denote demo: the seed's walkthrough on the built-in six-node graph, with no files.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "cli_bounds.h"
#include "denote/bounds/ibp.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "denote/io/text.h"
#include "run_plan.h"

namespace denote::cli {

namespace {

std::string status_text(const Status& s) { return s.ok() ? "ok" : s.message(); }

// "  name: ok", or "  name: error" with the message on its own line below.
void show_status(const char* name, const Status& s) {
  std::cout << "  " << name << ": " << (s.ok() ? "ok\n" : "error\n    " + s.message() + "\n");
}

void section(const std::string& title) { std::cout << "\n-- " << title << "\n"; }

void show_checks() {
  const Model m = six_node_model();
  section("checks on the good graph");
  show_status("check_well_formed", check_well_formed(m.graph));
  show_status("check_shapes", check_shapes(m.graph));
  auto shapes = infer_shapes(m.graph);
  std::string list;
  for (size_t i = 0; i < shapes->size(); ++i) list += (i ? ", " : "") + to_string((*shapes)[i]);
  std::cout << "  inferred shapes: [" << list << "]\n";

  section("three broken variants, one field each");
  const std::pair<const char*, Graph> variants[] = {
      {"relu declares out=[4]", six_node_bad_shape()},
      {"relu's parent is node 3", six_node_forward_parent()},
      {"nodes[2].id = 7", six_node_bad_id()}};
  for (const auto& [what, g] : variants) {
    std::cout << what << ":\n";
    show_status("check_well_formed", check_well_formed(g));
    show_status("check_shapes", check_shapes(g));
  }
}

template <class Ctx>
void show_value_table(const char* name, Ctx ctx = Ctx()) {
  using S = typename Ctx::Scalar;
  const Model m = six_node_model();
  auto payload = convert_payload<S>(m.payload, [&](double v) { return ctx.from_double(v); });
  std::vector<Tensor<S>> inputs;
  std::vector<S> x0;
  for (double v : six_node_x0()) x0.push_back(ctx.from_double(v));
  inputs.emplace_back(Shape{4}, x0);
  auto table = denote_all(m.graph, payload, std::span<const Tensor<S>>(inputs), ctx);
  std::cout << name << ":\n";
  if (!table.ok()) {
    std::cout << "  " << table.message() << "\n";
    return;
  }
  for (const auto& t : *table) {
    std::vector<double> values;
    for (const S& v : t.data) values.push_back(ctx.to_double(v));
    std::cout << "  " << format_values(Tensor<double>(t.shape, std::move(values))) << "\n";
  }
  if constexpr (requires { ctx.flags(); }) std::cout << "  flags: " << flags_to_string(ctx.flags()) << "\n";
}

void show_payload_mismatch() {
  const Model m = six_node_model();
  section("payload keyed by the wrong node (node 3's linear record stored at key 1)");
  F64Context ctx;
  std::vector<Tensor<double>> inputs = {Tensor<double>({4}, six_node_x0())};
  auto r = denote(m.graph, six_node_swapped_payload(), std::span<const Tensor<double>>(inputs), 5, ctx);
  std::cout << status_text(r.status()) << "\n";
}

// The seed's ir_axis_ops tutorial: interior-axis softmax, layernorm and concat.
void show_axis_ops() {
  section("axis ops on an interior axis (x[i] = ((i mod 7) - 3) / 4, row-major)");
  auto ramp = [](int64_t n) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i % 7 - 3) / 4.0);
    return v;
  };
  struct Case {
    const char* name;
    const char* note;
    Op op;
  };
  const Case cases[] = {{"softmax_middle_axis", "softmax axis=1 on shape [2,3,4]", Op::Softmax},
                        {"layernorm_middle_axis", "layernorm axis=1 on shape [2,3,4]; normalized_shape = [3,4]", Op::Layernorm},
                        {"concat_middle_axis", "concat axis=1: [2,3,4] ++ [2,5,4] -> [2,8,4]", Op::Concat}};
  for (const Case& c : cases) {
    GraphBuilder b;
    const int64_t x = b.input({2, 3, 4});
    std::vector<Tensor<double>> inputs = {Tensor<double>({2, 3, 4}, ramp(24))};
    int64_t y;
    if (c.op == Op::Concat) {
      const int64_t z = b.input({2, 5, 4});
      inputs.emplace_back(Shape{2, 5, 4}, ramp(40));
      y = b.add(Op::Concat, {x, z}, AxisAttrs{1});
    } else {
      y = b.unary(c.op, x, AxisAttrs{1});
    }
    std::cout << c.note << "\n";
    auto m = b.build({y});
    if (!m.ok()) {
      std::cout << "  " << m.message() << "\n";
      continue;
    }
    F64Context ctx;
    auto out = denote(m->graph, m->payload, std::span<const Tensor<double>>(inputs), y, ctx);
    if (!out.ok()) {
      std::cout << "  " << out.message() << "\n";
      continue;
    }
    Tensor<double> lead(Shape{4}, std::vector<double>(out->data.begin(), out->data.begin() + 4));
    std::cout << fmt::format("[{}] output shape: {}\n  leading values: {}\n", c.name, to_string(out->shape),
                             format_values(lead));
  }
}

// Writes the six-node model and x0 so the other subcommands can be tried on files.
int save_example(const std::string& dir) {
  const std::string model_path = dir + "/six_node.json", x0_path = dir + "/x0.npy";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // mkdir -p
  if (ec) return fail("--save " + dir + ": cannot create the directory (" + ec.message() + ")");
  std::ofstream out(model_path);
  out << write_model_json(six_node_model());
  if (!out) return fail("cannot write " + model_path);
  if (Status s = write_npy_file(x0_path, Tensor<double>({4}, six_node_x0())); !s.ok()) return fail(s.message());
  std::cout << "wrote " << model_path << " and " << x0_path << "\n";
  return kExitOk;
}

// IBP in binary32 over the l-infinity ball of radius eps around x0 (nullopt on an error).
std::optional<DoubleIbp> six_node_ibp(double eps, std::vector<DoubleBox>& inputs) {
  const Model m = six_node_model();
  auto box = box_around(Tensor<double>({4}, six_node_x0()), eps);
  if (!box.ok()) return std::nullopt;
  inputs = {*box};
  auto r = run_ibp_double(m.graph, m.payload, inputs, "binary32");
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
}

// The IBP boxes at eps 0.05 (binary32, outward rounding), the sampled containment check, and the
// radius where node 2's coordinate 1 stops being [0, 0], found by bisection over eps.
void show_ibp() {
  section("IBP boxes, l-infinity radius 0.05 around x0, binary32 endpoints rounded outward");
  std::vector<DoubleBox> inputs;
  const auto r = six_node_ibp(0.05, inputs);
  if (!r) return;
  for (size_t i = 0; i < r->boxes.size(); ++i) {
    if (r->boxes[i])
      std::cout << fmt::format("node {}: {} .. {}\n", i, six_decimals(r->boxes[i]->lo), six_decimals(r->boxes[i]->hi));
    else
      std::cout << fmt::format("node {}: none ({})\n", i, r->notes[i]);
  }
  std::cout << "node 5 uses the monotone tanh rule (the seed's global rule gives [-1, 1])\n";
  const Model m = six_node_model();
  auto s = sample_containment(m.graph, m.payload, inputs, *r, "binary32", 50, 0);
  if (s.ok())
    std::cout << fmt::format("consistency: {}/{} samples (binary32, seed 0) inside every node box\n", s->contained,
                             s->samples);
  double inside = 0, outside = 1;  // node 2 coordinate 1 is [0, 0] at `inside`, not at `outside`
  auto is_zero = [&](double eps) {
    std::vector<DoubleBox> in;
    auto b = six_node_ibp(eps, in);
    return b && b->boxes[2] && b->boxes[2]->hi[1] == 0.0;
  };
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (inside + outside);
    (is_zero(mid) ? inside : outside) = mid;
  }
  std::cout << fmt::format("node 2 coordinate 1 stays [0, 0] up to radius {:.6f} (bisection over eps)\n", inside);
}

// The kernel plan of the reference provider and under prefer:openblas, and the error for a provider
// this build lacks (docs/PLANNING.md). Not `auto`: it takes the fastest provider this CPU has (avx2
// where it runs), and the transcript is the same on every machine.
void show_plan() {
  const Model m = six_node_model();
  for (const char* provider : {"only:reference", "prefer:openblas", "only:cuda"}) {
    section(fmt::format("kernel plan, device=cpu provider={} assurance=checked", provider));
    auto plan = plan_model(m, *policy_from_options("cpu", provider, "checked"));
    std::cout << (plan.ok() ? plan_report(*plan) : "error: " + plan.message() + "\n");
  }
}

int run_demo() {
  const Model m = six_node_model();
  std::cout << "== denote demo: the seed's six-node graph ==\n"
               "G(x) = tanh(sum(W2 relu(W1 x + b1) + b2)), x in R^4, hidden width 5, output width 3\n";
  section("listing");
  std::cout << format_listing(m.graph);
  section("GraphViz (dot -Tpng g.dot -o g.png)");
  std::cout << format_dot(m.graph);
  show_checks();
  show_payload_mismatch();
  section("value table at x0 = [0.3, -0.2, 0.1, 0.4]");
  show_value_table<F64Context>("f64 (hardware double)");
  show_value_table<F32Context>("f32 (hardware float)");
  show_value_table<BinaryContext>("binary32 (software, every operation rounded once to nearest-even)");
  show_ibp();
  show_axis_ops();
  show_plan();
  return kExitOk;
}

}  // namespace

void add_demo(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("demo", "the seed's walkthrough on the built-in six-node graph (no files needed)");
  auto save = std::make_shared<std::string>();
  sub->add_option("--save", *save, "instead, write six_node.json and x0.npy into this directory (created if missing)");
  sub->callback([&cmd, save] { cmd.run = [save] { return save->empty() ? run_demo() : save_example(*save); }; });
}

}  // namespace denote::cli
