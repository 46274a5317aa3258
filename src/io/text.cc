#include "denote/io/text.h"

#include <fmt/format.h>

namespace denote {

std::string format_listing(const Graph& g) {
  std::string out;
  for (const Node& n : g.nodes)
    out += fmt::format("{}: {} parents=[{}] out={}\n", n.id, describe(n), join_ints(n.parents), to_string(n.out_shape));
  return out;
}

namespace {

// DOT string literal contents: escape quotes and backslashes.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string format_dot(const Graph& g) {
  std::string out = "digraph IR {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n";
  for (const Node& n : g.nodes)
    out += fmt::format("  n{} [label=\"{}: {}\\nout={}\"];\n", n.id, n.id, dot_escape(describe(n)), to_string(n.out_shape));
  for (const Node& n : g.nodes)
    for (int64_t p : n.parents) out += fmt::format("  n{} -> n{};\n", p, n.id);
  out += "}\n";
  return out;
}

std::string format_values(const Tensor<double>& t, int decimals) {
  auto one = [&](double v) { return fmt::format("{:.{}f}", v, decimals); };
  if (t.shape.empty() && t.data.size() == 1) return one(t.data[0]);
  std::string out = "[";
  for (size_t i = 0; i < t.data.size(); ++i) out += (i ? ", " : "") + one(t.data[i]);
  return out + "]";
}

}  // namespace denote
