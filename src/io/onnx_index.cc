// The importer's index-moving helpers (src/io/onnx_index.h): constants are moved on the host, IR
// values through `gather` (one axis, constant indices), `concat` (a fill row), `reshape` and
// `permute` nodes. No arithmetic anywhere: every value is one of the operand's or the fill.
#include "onnx_index.h"

#include <numeric>

#include <fmt/format.h>

namespace denote::onnxio {

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

Result<Val> operand(Importer& im, int i) {
  if (const HostTensor* c = im.const_input(i)) return Val{*c, -1, c->shape};
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(i));
  return Val{std::nullopt, x, im.shape(x)};
}

Status set_val(Importer& im, int out, Val v) {
  if (v.host) return im.set_output_const(out, std::move(*v.host));
  return im.set_output(out, v.id);
}

Result<int64_t> node_of(Importer& im, const Val& v) {
  if (v.host) return im.emit_const(*v.host);
  return v.id;
}

namespace {

// The host tensor whose element j is t's element flat[j] (or the fill for -1).
Result<HostTensor> host_take(Importer& im, const HostTensor& t, const Shape& shape, const std::vector<int64_t>& flat,
                             double fill) {
  if (static_cast<int64_t>(flat.size()) > kMaxSynthesizedElements)
    return im.fail("a folded constant of shape " + to_string(shape) + " is too large");
  HostTensor out;
  out.shape = shape;
  out.dtype = t.dtype;
  const bool ints = !t.ints.empty() || t.is_int();
  out.values.reserve(flat.size());
  for (int64_t f : flat) {
    out.values.push_back(f < 0 ? fill : t.values[static_cast<size_t>(f)]);
    if (ints) out.ints.push_back(f < 0 ? static_cast<int64_t>(fill) : t.ints[static_cast<size_t>(f)]);
  }
  return out;
}

bool any_fill(const std::vector<int64_t>& idx) {
  for (int64_t i : idx)
    if (i < 0) return true;
  return false;
}

}  // namespace

Result<Val> gather_axis(Importer& im, Val v, int64_t axis, std::vector<int64_t> idx, double fill) {
  const Shape& in = v.shape;
  const size_t a = static_cast<size_t>(axis);
  const int64_t extent = in[a];
  std::vector<int64_t> ident(static_cast<size_t>(extent));
  std::iota(ident.begin(), ident.end(), 0);
  if (idx == ident) return v;
  Shape out = in;
  out[a] = static_cast<int64_t>(idx.size());
  if (v.host) {
    const int64_t outer = dims_product(in, 0, a), inner = dims_product(in, a + 1, in.size());
    auto n = checked_numel(out);
    if (!n.ok() || *n > kMaxSynthesizedElements) return im.fail("a folded constant of shape " + to_string(out) + " is too large");
    std::vector<int64_t> flat;
    flat.reserve(static_cast<size_t>(*n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : idx)
        for (int64_t k = 0; k < inner; ++k) flat.push_back(j < 0 ? -1 : (o * extent + j) * inner + k);
    DENOTE_ASSIGN_OR_RETURN(HostTensor t, host_take(im, *v.host, out, flat, fill));
    return Val{std::move(t), -1, out};
  }
  int64_t x = v.id;
  if (any_fill(idx)) {  // one extra row of the fill at index `extent`
    Shape row = in;
    row[a] = 1;
    DENOTE_ASSIGN_OR_RETURN(int64_t c, im.emit_scalar(fill, row));
    if (im.typed) {  // the fill row takes the operand's element type
      DENOTE_ASSIGN_OR_RETURN(int32_t et, typed_value_type(im, x));
      HostTensor& h = im.const_tensors[c];
      h.dtype = et;
      if (h.is_int()) h.ints.assign(h.values.size(), static_cast<int64_t>(fill));
    }
    DENOTE_ASSIGN_OR_RETURN(x, im.emit(Op::Concat, {x, c}, AxisAttrs{axis}));
    for (int64_t& j : idx)
      if (j < 0) j = extent;
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Gather, {x}, GatherAttrs{axis, std::move(idx)}));
  return Val{std::nullopt, y, im.shape(y)};
}

Result<Val> reshape_val(Importer& im, Val v, const Shape& to) {
  if (v.host) {
    v.host->shape = to;
    v.shape = to;
    return v;
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.reshape(v.id, to));
  return Val{std::nullopt, y, to};
}

Result<Val> take_flat(Importer& im, Val v, const Shape& shape, std::vector<int64_t> flat, double fill) {
  if (v.host) {
    DENOTE_ASSIGN_OR_RETURN(HostTensor t, host_take(im, *v.host, shape, flat, fill));
    return Val{std::move(t), -1, shape};
  }
  DENOTE_ASSIGN_OR_RETURN(v, reshape_val(im, std::move(v), Shape{numel(v.shape)}));
  DENOTE_ASSIGN_OR_RETURN(v, gather_axis(im, std::move(v), 0, std::move(flat), fill));
  return reshape_val(im, std::move(v), shape);
}

Result<Val> permute_val(Importer& im, Val v, const std::vector<int64_t>& perm) {
  std::vector<int64_t> ident(perm.size());
  std::iota(ident.begin(), ident.end(), 0);
  if (perm == ident) return v;
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = v.shape[static_cast<size_t>(perm[i])];
  if (v.host) {
    const std::vector<int64_t> st = strides_of(v.shape);
    const int64_t n = numel(out);
    std::vector<int64_t> flat(static_cast<size_t>(n)), idx(out.size(), 0);
    for (int64_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (size_t i = 0; i < out.size(); ++i) off += idx[i] * st[static_cast<size_t>(perm[i])];
      flat[static_cast<size_t>(j)] = off;
      for (size_t i = out.size(); i-- > 0;) {
        if (++idx[i] < out[i]) break;
        idx[i] = 0;
      }
    }
    return take_flat(im, std::move(v), out, std::move(flat));
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Permute, {v.id}, PermAttrs{perm}));
  return Val{std::nullopt, y, out};
}

Result<Val> broadcast_val(Importer& im, Val v, const Shape& to) {
  if (v.shape == to) return v;
  if (v.host) {
    const Shape& in = v.shape;
    const size_t lead = to.size() - in.size();
    const std::vector<int64_t> st = strides_of(in);
    const int64_t n = numel(to);
    std::vector<int64_t> flat(static_cast<size_t>(n)), idx(to.size(), 0);
    for (int64_t j = 0; j < n; ++j) {
      int64_t off = 0;
      for (size_t i = lead; i < to.size(); ++i)
        if (in[i - lead] != 1) off += idx[i] * st[i - lead];
      flat[static_cast<size_t>(j)] = off;
      for (size_t i = to.size(); i-- > 0;) {
        if (++idx[i] < to[i]) break;
        idx[i] = 0;
      }
    }
    return take_flat(im, std::move(v), to, std::move(flat));
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.broadcast(v.id, to));
  return Val{std::nullopt, y, to};
}

Result<std::optional<std::vector<int64_t>>> const_int_list(Importer& im, int i, std::string_view what) {
  if (!im.has_input(i)) return std::optional<std::vector<int64_t>>{};
  const HostTensor* c = im.const_input(i);
  if (!c || !c->is_int() || c->shape.size() > 1)
    return im.fail(fmt::format("{} must be a constant 1-D integer tensor (a computed one is not supported)", what));
  return std::optional<std::vector<int64_t>>(c->ints);
}

Result<bool> fold_int_binary(Importer& im, char op) {
  const HostTensor* a = im.const_input(0);
  const HostTensor* b = im.const_input(1);
  if (!a || !b || !a->is_int() || !b->is_int() || a->dtype == onnx::TensorProto::BOOL) return false;
  auto to = broadcast_shapes(a->shape, b->shape);
  if (!to) return im.fail("operand shapes do not broadcast");
  DENOTE_ASSIGN_OR_RETURN(Val va, broadcast_val(im, Val{*a, -1, a->shape}, *to));
  DENOTE_ASSIGN_OR_RETURN(Val vb, broadcast_val(im, Val{*b, -1, b->shape}, *to));
  HostTensor out = *va.host;
  for (size_t j = 0; j < out.ints.size(); ++j) {
    const uint64_t x = static_cast<uint64_t>(va.host->ints[j]), y = static_cast<uint64_t>(vb.host->ints[j]);
    int64_t r = 0;
    if (op == '+') r = static_cast<int64_t>(x + y);
    else if (op == '-') r = static_cast<int64_t>(x - y);
    else if (op == '*') r = static_cast<int64_t>(x * y);
    else {
      const int64_t p = va.host->ints[j], q = vb.host->ints[j];
      if (q == 0) return im.fail("integer division by zero in constant operands");
      r = (p == INT64_MIN && q == -1) ? p : p / q;
    }
    out.ints[j] = r;
    out.values[j] = static_cast<double>(r);
  }
  DENOTE_RETURN_IF_ERROR(im.set_output_const(0, std::move(out)));
  return true;
}

}  // namespace denote::onnxio
