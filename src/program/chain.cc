// Chains (program/chain.h): lowering through IrBuilder and the one-line description.
#include "denote/program/chain.h"

#include <fmt/format.h>

#include "denote/program/ir_builder.h"

namespace denote {

Result<Model> lower_chain(const Chain& c) {
  return lower([&](auto& in, auto x) { return apply_chain(in, c, std::move(x)); }, c.input);
}

namespace {

struct Describe {
  std::string operator()(const layer::Linear& a) const { return fmt::format("linear({})", a.out); }
  std::string operator()(const layer::Activation& a) const { return std::string(op_tag(a.op)); }
  std::string operator()(const layer::Conv& a) const {
    return fmt::format("conv({})", describe_attrs(Attrs{a.config}));
  }
  std::string operator()(const layer::Flatten&) const { return "flatten"; }
  std::string operator()(const layer::Reshape& a) const { return "reshape(" + to_string(a.shape) + ")"; }
  std::string operator()(const layer::MaxPool& a) const { return fmt::format("max_pool({})", describe_attrs(Attrs{a.window})); }
  std::string operator()(const layer::AvgPool& a) const { return fmt::format("avg_pool({})", describe_attrs(Attrs{a.window})); }
  std::string operator()(const layer::BatchNorm& a) const {
    return fmt::format("batch_norm(channel_axis={}, channels={})", a.channel_axis, a.gamma.size());
  }
  std::string operator()(const layer::LayerNorm& a) const { return fmt::format("layernorm(axis={})", a.axis); }
  std::string operator()(const layer::Softmax& a) const { return fmt::format("softmax(axis={})", a.axis); }
  std::string operator()(const layer::LogSoftmax& a) const { return fmt::format("log_softmax(axis={})", a.axis); }
};

}  // namespace

std::string describe(const Chain& c) {
  std::string out = to_string(c.input);
  for (const Layer& l : c.layers) out += " -> " + std::visit(Describe{}, l);
  return out;
}

}  // namespace denote
