// Model.run: denotation in f64 / f32 (hardware), a software binary format (exact rounding, IEEE
// flags), MPFR (real), through a kernel plan (provider=...), or typed execution for integer and bool
// arrays (include/denote/typed/interp.h). The GIL is released while the library computes.
#include <type_traits>

#include <fmt/format.h>

#include "common.h"
#include "run_policy.h"
#include "denote/plan/provider_check.h"
#include "denote/eval/eval.h"
#include "denote/plan/registry.h"
#include "denote/scalar/arith.h"

namespace denote::python {

py::dict flags_dict(uint32_t flags) {
  py::dict d;
  for (uint32_t bit = 1; bit <= kFpMappedSpecial; bit <<= 1) {
    std::string name = flags_to_string(bit);
    for (char& c : name) c = c == '-' ? '_' : c;
    d[py::str(name)] = (flags & bit) != 0;
  }
  return d;
}

namespace {

// The values a run hands back, widened to double (float32 kept for f32), and the IEEE flags.
struct Values {
  std::vector<int64_t> ids;  // the nodes whose values are kept (outputs, or all nodes)
  std::vector<Tensor<double>> f64;
  std::vector<Tensor<float>> f32;
  bool has_flags = false;
  uint32_t flags = 0;
};

std::vector<int64_t> all_ids(const Graph& g) {
  std::vector<int64_t> ids(g.nodes.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  return ids;
}

template <class S>
void keep(Values& v, std::vector<Tensor<S>>& table) {
  for (int64_t id : v.ids) {
    Tensor<S>& t = table[static_cast<size_t>(id)];
    if constexpr (std::is_same_v<S, float>) v.f32.push_back(std::move(t));
    else v.f64.push_back(std::move(t));
  }
}

template <class Ctx>
const Payload<typename Ctx::Scalar>* payload_for(Ctx& ctx, const PyModel& m, Payload<typename Ctx::Scalar>& scratch) {
  using S = typename Ctx::Scalar;
  if constexpr (std::is_same_v<S, double>) return &m.model().payload;
  else if constexpr (std::is_same_v<S, float>) return m.f32_payload.get();
  else {
    scratch = convert_payload<S>(m.model().payload, [&](double x) { return ctx.from_double(x); });
    return &scratch;
  }
}

// The inputs of an evaluator run, read under the GIL: f64 and f32 runs take each array as a tensor of
// their scalar (one memcpy for a C-contiguous array of that dtype; numpy converts any other); the
// software formats and MPFR read float64 arrays in place and convert each element once.
struct EvalInputs {
  std::vector<Tensor<double>> f64;
  std::vector<Tensor<float>> f32;
  std::vector<py::array_t<double, py::array::c_style | py::array::forcecast>> arrays;
};

EvalInputs eval_inputs(const py::args& inputs, ArithKind kind) {
  EvalInputs in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Label label{"input", static_cast<int64_t>(k)};
    if (kind == ArithKind::F64) in.f64.push_back(to_tensor_as<double>(inputs[k], label));
    else if (kind == ArithKind::F32) in.f32.push_back(to_tensor_as<float>(inputs[k], label));
    else in.arrays.push_back(float_array<double>(inputs[k], label));
  }
  return in;
}

// The context's input tensors (GIL released: the arrays stay alive in `in`, only their data is read).
template <class Ctx>
std::vector<Tensor<typename Ctx::Scalar>> context_inputs(Ctx& ctx, EvalInputs& in) {
  using S = typename Ctx::Scalar;
  if constexpr (std::is_same_v<S, double>) {
    return std::move(in.f64);
  } else if constexpr (std::is_same_v<S, float>) {
    return std::move(in.f32);
  } else {
    std::vector<Tensor<S>> out;
    out.reserve(in.arrays.size());
    for (const auto& a : in.arrays) {
      std::vector<S> data;
      data.reserve(static_cast<size_t>(a.size()));
      for (py::ssize_t i = 0; i < a.size(); ++i) data.push_back(ctx.from_double(a.data()[i]));
      out.emplace_back(Shape(a.shape(), a.shape() + a.ndim()), std::move(data));
    }
    return out;
  }
}

// Inputs and parameters enter the context through from_double (the inputs move into the value
// table: denote_*_owned); values leave through to_double.
template <class Ctx>
Result<Values> evaluate(Ctx& ctx, const PyModel& m, EvalInputs& inputs, bool all_nodes, const EvalOptions& options) {
  using S = typename Ctx::Scalar;
  const Model& model = m.model();
  std::vector<Tensor<S>> in = context_inputs(ctx, inputs);
  Payload<S> scratch;
  const Payload<S>& payload = *payload_for(ctx, m, scratch);
  DENOTE_ASSIGN_OR_RETURN(
      auto table, all_nodes ? denote_all_owned(model.graph, payload, std::move(in), ctx, options)
                            : denote_outputs_owned(model.graph, payload, std::move(in),
                                                   std::span<const int64_t>(model.output_ids), ctx, options));
  Values v;
  v.ids = all_nodes ? all_ids(model.graph) : model.output_ids;
  if constexpr (std::is_same_v<S, double> || std::is_same_v<S, float>) {
    keep(v, table);
  } else {
    for (int64_t id : v.ids) {
      const Tensor<S>& t = table[static_cast<size_t>(id)];
      std::vector<double> data;
      data.reserve(t.data.size());
      for (const S& x : t.data) data.push_back(ctx.to_double(x));
      v.f64.emplace_back(t.shape, std::move(data));
    }
  }
  if constexpr (requires { ctx.flags(); }) {
    v.has_flags = true;
    v.flags = ctx.flags();
  }
  return v;
}

std::shared_ptr<const BoundPlan> bound_plan(PyModel& m, const std::string& provider) {
  std::lock_guard<std::mutex> lock(m.cache_mutex);
  if (auto it = m.plans.find(provider); it != m.plans.end()) return it->second;
  PlanPolicy policy;
  check(parse_provider_policy(provider, policy).with_field("provider"));
  check(check_provider_present(policy, detect_environment()));
  CapsuleRegistry registered = unwrap(standard_registry());
  GraphKernelPlan plan = unwrap(plan_graph(m.model().graph, registered.available(detect_environment()), policy));
  auto bound = std::make_shared<const BoundPlan>(unwrap(bind_plan(plan, standard_handlers())));
  m.plans[provider] = bound;
  return bound;
}

template <class S>
Result<Values> execute(const BoundPlan& bound, const PyModel& m, std::vector<Tensor<double>>& inputs, bool all_nodes,
                       const EvalOptions& options) {
  std::vector<Tensor<S>> in;
  if constexpr (std::is_same_v<S, double>) {
    in = std::move(inputs);
  } else {
    for (auto& t : inputs) in.emplace_back(std::move(t.shape), std::vector<S>(t.data.begin(), t.data.end()));
  }
  const Payload<S>* payload = nullptr;
  if constexpr (std::is_same_v<S, double>) payload = &m.model().payload;
  else payload = m.f32_payload.get();
  DENOTE_ASSIGN_OR_RETURN(auto table,
                          execute_plan<S>(bound, m.model().graph, *payload, std::span<const Tensor<S>>(in), options));
  Values v;
  v.ids = all_nodes ? all_ids(m.model().graph) : m.model().output_ids;
  keep(v, table);
  return v;
}


// One array, a tuple (several outputs) or {id: array} (all_nodes), with the flags on request.
py::object package(std::vector<int64_t> ids, std::vector<py::object> arrays, bool all_nodes, bool return_flags,
                   uint32_t flags) {
  py::object result;
  if (all_nodes) {
    py::dict d;
    for (size_t k = 0; k < ids.size(); ++k) d[py::int_(ids[k])] = arrays[k];
    result = std::move(d);
  } else if (arrays.size() == 1) {
    result = arrays[0];
  } else {
    py::tuple t(arrays.size());
    for (size_t k = 0; k < arrays.size(); ++k) t[k] = arrays[k];
    result = std::move(t);
  }
  if (!return_flags) return result;
  return py::make_tuple(result, flags_dict(flags));
}

template <class S>
std::map<std::string, std::shared_ptr<CompiledHolder<S>>>& compiled_cache(PyModel& m) {
  if constexpr (std::is_same_v<S, double>) return m.compiled64;
  else return m.compiled32;
}

// The model's compiled plan under `provider` for S, compiled on the first call (GIL held).
template <class S>
std::shared_ptr<CompiledHolder<S>> compiled_plan(PyModel& m, const std::string& provider, const EvalOptions& options) {
  std::shared_ptr<const BoundPlan> bound = bound_plan(m, provider);
  const std::string key = fmt::format("{}|{}", provider, options.max_bytes);
  std::lock_guard<std::mutex> lock(m.cache_mutex);
  auto& cache = compiled_cache<S>(m);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Payload<S>* payload = nullptr;
  if constexpr (std::is_same_v<S, double>) payload = &m.model().payload;
  else payload = m.f32_payload.get();
  auto holder = std::make_shared<CompiledHolder<S>>();
  holder->plan = unwrap(compile_plan<S>(*bound, m.model().graph, *payload,
                                        std::span<const int64_t>(m.model().output_ids), CompileOptions{}, options));
  cache[key] = holder;
  return holder;
}

// The inputs of a compiled run: a C-contiguous array of the run's dtype is read in place (no copy);
// any other array is converted once into `owned`.
template <class S>
struct PlanInputs {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<Tensor<S>> owned;
  std::vector<InputView<S>> views;
};

template <class S>
void gather_inputs(const py::args& inputs, PlanInputs<S>& in) {
  in.owned.reserve(inputs.size());  // views point into owned: no reallocation
  in.shapes.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (py::isinstance<py::array_t<S, py::array::c_style>>(inputs[k])) {
      auto a = py::reinterpret_borrow<py::array_t<S, py::array::c_style>>(inputs[k]);
      in.shapes.emplace_back(a.shape(), a.shape() + a.ndim());
      in.views.push_back({in.shapes.back(), std::span<const S>(a.data(), static_cast<size_t>(a.size()))});
      continue;
    }
    Tensor<double> t = to_tensor(inputs[k], {"input", static_cast<int64_t>(k)});
    in.owned.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
    in.views.push_back({in.owned.back().shape, in.owned.back().data});
  }
}

// model.run(..., provider=P) for the outputs: the compiled plan on the inputs in place.
template <class S>
py::object run_compiled(PyModel& self, const py::args& inputs, const std::string& provider, const EvalOptions& options) {
  std::shared_ptr<CompiledHolder<S>> holder = compiled_plan<S>(self, provider, options);
  PlanInputs<S> in;
  gather_inputs(inputs, in);
  Status s = ok_status();
  std::vector<Tensor<S>> out;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(holder->run_mutex);
    s = holder->plan.run(std::span<const InputView<S>>(in.views));
    if (s.ok()) out = holder->plan.outputs();  // the plan's buffers are reused by the next call
  }
  check(s);
  std::vector<py::object> arrays;
  for (auto& t : out) arrays.push_back(to_numpy(std::move(t)));
  return package(self.model().output_ids, std::move(arrays), false, false, 0);
}

struct RunArgs {
  std::string arith, rounding;
  std::optional<std::string> accumulate;
  std::string policy;  // a policy file's text (policy=)
  long precision = 256;
  std::optional<std::string> provider;
  bool all_nodes = false, return_flags = false;
  EvalOptions options;
};

py::object run_typed(PyModel& self, const py::args& inputs, const RunArgs& a) {
  if (a.arith != "f64" || a.provider)
    raise_invalid("typed execution (integer or bool arrays, or a typed model) takes each value's dtype: leave arith "
                  "and provider unset", a.provider ? "provider" : "arith");
  const std::optional<Rounding> mode = parse_rounding(a.rounding);
  if (!mode) raise_invalid(fmt::format("rounding {}: expected nearest-even, toward-zero, upward, downward (or "
                                       "nearest-away)", a.rounding), "rounding");
  TypedModel tm = self.typed() || !self.typed_onnx ? self.tm : *self.typed_onnx;
  const std::vector<int64_t> ids = tm.model.graph.input_ids();
  if (inputs.size() != ids.size())
    raise_invalid(fmt::format("run: the model has {} input(s), got {}", ids.size(), inputs.size()), "inputs");
  std::vector<typed::TypedTensor> in;
  for (size_t k = 0; k < ids.size(); ++k) {
    auto declared = tm.input_dtypes.find(ids[k]);
    std::optional<typed::DType> d;
    if (declared != tm.input_dtypes.end()) d = declared->second;
    in.push_back(to_typed(inputs[k], d, tm.model.graph.nodes[static_cast<size_t>(ids[k])].out_shape,
                          fmt::format("input {} (node {})", k, ids[k])));
    tm.input_dtypes[ids[k]] = in.back().dtype;
  }
  typed::TypedOptions o;
  o.rounding = *mode;
  o.max_bytes = a.options.max_bytes;
  Result<typed::TypedRun> r = Status::error(ErrorCode::kInternal, "internal: typed run did not run");
  {
    py::gil_scoped_release release;
    r = typed::eval_typed(tm, in, o);
  }
  typed::TypedRun run = unwrap(std::move(r));
  std::vector<int64_t> keep_ids = a.all_nodes ? all_ids(tm.model.graph) : tm.model.output_ids;
  std::vector<py::object> arrays;
  for (int64_t id : keep_ids) arrays.push_back(typed_to_numpy(run.table[static_cast<size_t>(id)]));
  return package(keep_ids, std::move(arrays), a.all_nodes, a.return_flags, run.flags);
}

py::object run_evaluator(PyModel& self, const py::args& inputs, const RunArgs& a, const ArithSpec& spec) {
  Result<Values> r = Status::error(ErrorCode::kInternal, "internal: run did not run");
  {
    EvalInputs in = eval_inputs(inputs, spec.kind);
    py::gil_scoped_release release;
    r = visit_arith(spec, [&](auto& ctx) { return evaluate(ctx, self, in, a.all_nodes, a.options); });
  }
  Values v = unwrap(std::move(r));
  std::vector<py::object> arrays;
  for (auto& t : v.f64) arrays.push_back(to_numpy(std::move(t)));
  for (auto& t : v.f32) arrays.push_back(to_numpy(std::move(t)));
  return package(std::move(v.ids), std::move(arrays), a.all_nodes, a.return_flags, v.flags);
}

py::object run(PyModel& self, const py::args& inputs, RunArgs a) {
  if (a.arith == "auto") {  // the model's own arithmetic: a capture's precision policy, else Model.arith
    if (!self.capture_formats.empty() && !a.accumulate) {
      a.arith.clear();
      a.accumulate = self.capture_accumulate;
    } else {
      a.arith = self.native_arith.empty() ? "f64" : self.native_arith;
    }
  }
  if (a.accumulate || is_mx_spec(a.arith) || !a.policy.empty()) {
    if (a.provider) raise_invalid("provider: a precision policy (accumulate=) runs the typed interpreter", "provider");
    if (!a.policy.empty() && (a.accumulate || a.arith != "f64"))
      raise_invalid("policy: a policy names its own storage and accumulation formats; leave arith and accumulate "
                    "unset", "policy");
    PolicyRun r = run_policy(self, inputs, a.policy.empty() ? a.arith : "", a.accumulate.value_or(""), a.rounding,
                             a.all_nodes, a.options.max_bytes, a.policy);
    return package(std::move(r.ids), std::move(r.arrays), a.all_nodes, a.return_flags, r.flags);
  }
  bool integral = self.typed();
  for (const auto& x : inputs) integral = integral || is_integral_array(x);
  if (integral) return run_typed(self, inputs, a);
  const ArithSpec spec = unwrap(parse_arith(a.arith, a.rounding, a.precision));
  if (spec.kind == ArithKind::F32 && !self.f32_payload) {
    std::lock_guard<std::mutex> lock(self.cache_mutex);
    if (!self.f32_payload)
      self.f32_payload = std::make_shared<const Payload<float>>(
          convert_payload<float>(self.model().payload, [](double x) { return static_cast<float>(x); }));
  }
  if (a.return_flags && spec.kind != ArithKind::Binary)
    raise_invalid(fmt::format("return_flags: the {} context does not track IEEE flags (a binary format such as "
                              "binary64 does)", spec.name), "return_flags");
  // f64 and f32 run on a kernel plan: the one asked for, or by default `auto` (the fastest admissible
  // capsule per op); "evaluator" and every other arithmetic take the evaluator. The default falls back
  // to the evaluator where no plan runs the model (the evaluator's error, if any, is the one raised); a
  // model `auto` cannot plan is not planned again on every call.
  if (a.provider && *a.provider == "evaluator") {
    a.provider.reset();
  } else if (!a.provider && spec.native() && !self.no_auto_plan) {
    try {
      (void)bound_plan(self, "auto");
    } catch (const std::exception&) {
      self.no_auto_plan = true;
      return run_evaluator(self, inputs, a, spec);
    }
    try {
      a.provider = "auto";
      return run(self, inputs, a);
    } catch (const std::exception&) {
      a.provider.reset();
      return run_evaluator(self, inputs, a, spec);
    }
  }
  std::shared_ptr<const BoundPlan> plan;
  if (a.provider) {
    if (!spec.native())
      raise_status(Status::error(ErrorCode::kUnsupported, "provider runs a kernel plan in f64 or f32 only, not arith " +
                                                              spec.name).with_field("arith"));
    if (!a.all_nodes)  // the compiled plan (outputs only); all_nodes needs the plan node by node
      return spec.kind == ArithKind::F32 ? run_compiled<float>(self, inputs, *a.provider, a.options)
                                         : run_compiled<double>(self, inputs, *a.provider, a.options);
    plan = bound_plan(self, *a.provider);
  }
  if (!plan) return run_evaluator(self, inputs, a, spec);
  Result<Values> r = Status::error(ErrorCode::kInternal, "internal: run did not run");
  {
    std::vector<Tensor<double>> in;
    in.reserve(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) in.push_back(to_tensor(inputs[k], {"input", static_cast<int64_t>(k)}));
    py::gil_scoped_release release;
    if (spec.kind == ArithKind::F32) r = execute<float>(*plan, self, in, a.all_nodes, a.options);
    else r = execute<double>(*plan, self, in, a.all_nodes, a.options);
  }
  Values v = unwrap(std::move(r));
  std::vector<py::object> arrays;
  for (auto& t : v.f64) arrays.push_back(to_numpy(std::move(t)));
  for (auto& t : v.f32) arrays.push_back(to_numpy(std::move(t)));
  return package(std::move(v.ids), std::move(arrays), a.all_nodes, a.return_flags, v.flags);
}

}  // namespace

void register_run(py::module_& m, py::class_<PyModel, ModelPtr>& cls) {
  cls.def(
      "run",
      [](PyModel& self, const py::args& inputs, const std::string& arith, const std::string& rounding, long precision,
         const std::optional<std::string>& provider, bool all_nodes, bool return_flags,
         const std::optional<int64_t>& max_memory, const std::optional<std::string>& accumulate,
         const py::object& policy) {
        std::string policy_text;
        if (py::isinstance<py::dict>(policy)) policy_text = py::module_::import("json").attr("dumps")(policy).cast<std::string>();
        else if (py::isinstance<py::str>(policy)) policy_text = policy.cast<std::string>();
        else if (!policy.is_none()) raise_invalid("policy: expected a dict or a JSON text", "policy");
        return run(self, inputs, RunArgs{arith, rounding, accumulate, std::move(policy_text), precision, provider,
                                         all_nodes, return_flags, eval_options(max_memory)});
      },
      py::arg("arith") = "f64", py::arg("rounding") = "nearest-even", py::arg("precision") = 256,
      py::arg("provider") = py::none(), py::arg("all_nodes") = false, py::arg("return_flags") = false,
      py::arg("max_memory") = py::none(), py::arg("accumulate") = py::none(), py::arg("policy") = py::none(),
      R"doc(Denotes the model at the given inputs (one array per input node, in Model.inputs order).

arith: "f64" (default), "auto" (the model's own: Model.precision's policy, else Model.arith, else f64),
"f32" (hardware), a binary format ("binary16", "bfloat16", "binary32", "binary64",
"e4m3fn", ..., "binary(E,F)": exact software rounding) or "real" (MPFR at `precision` bits).
rounding: nearest-even (default), toward-zero, upward, downward, nearest-away (binary formats).
provider: f64/f32 run on a kernel plan: "auto" (the default when unset: the fastest admissible capsule per op,
avx2 or openblas, falling back to the evaluator where no plan runs the model), "prefer:P", "only:P"
("only:reference": the plan that equals the evaluator bit for bit); or "evaluator" (the generic evaluator,
its fixed summation order; every other arith runs on it).
all_nodes: return {node_id: array} for every node. return_flags: also return the IEEE flags of a binary
format as a dict (invalid, divide_by_zero, overflow, underflow, inexact, saturated, mapped_special).
max_memory: the memory budget of the values alive at once, in bytes (default: half the RAM).
accumulate: a precision policy, as hardware and PyTorch compute: arith names the storage format (inputs,
parameters, every op's result), accumulate the format every op computes in ("binary32" for bfloat16 or
binary16 as torch's CPU kernels do: exact products, binary32 sums, one rounding to storage per op).
An MX arith ("mxfp8_e4m3", "mxfp4_e2m1,weights=mxfp8_e4m3,block=32", ...): linear layers on OCP MX
operands (weights quantized once, activations at each call; exact block sums, binary32 accumulation), the
rest in binary32.
policy: a precision policy as a dict (or its JSON text): {"storage": F, "accumulate": F, "ops": {"softmax":
"binary32"}, "nodes": {"7": "binary32"}} (per op kind and per node overrides of storage; docs/NUMERICS.md).
Integer or bool arrays (or a typed model) run the typed interpreter; results keep their dtypes.
Returns one array (one output), a tuple (several) or a dict (all_nodes); float64 arrays, float32 for f32.)doc");
}

}  // namespace denote::python
