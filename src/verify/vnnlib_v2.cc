// VNN-LIB 2.0 in the VNN-LIB parser (src/verify/vnnlib_parser.h; docs/VNNLIB.md "VNN-LIB 2.0"): the
// version line, the network declaration with its input and output tensors, and tensor variables. The
// grammar is the VNN-LIB standard's (github.com/VNNLIB/VNNLIB-Standard, grammar.cf):
//   (vnnlib-version <2.0>)
//   (declare-network acc (declare-input X Real [3]) (declare-output Y Real []))
//   (assert (<= (* -1.0 X[0]) 0.0))
// One network with one input and one output tensor (what `denote verify` bounds); its elements read as
// the 1.0 variables X_k and Y_k, k the row-major index. Hidden tensors, network equivalences and a second
// network are refused by name.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vnnlib_parser.h"

namespace denote::vnnlib_detail {

namespace {

// "<M.N>": the major version, or -1 when the token is not of that form.
int64_t major_version(std::string_view v) {
  if (v.size() < 5 || v.front() != '<' || v.back() != '>') return -1;
  const std::string_view inner = v.substr(1, v.size() - 2);
  const size_t dot = inner.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == inner.size() || dot > 6) return -1;
  int64_t major = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (i == dot) continue;
    if (inner[i] < '0' || inner[i] > '9') return -1;
    if (i < dot) major = major * 10 + (inner[i] - '0');
  }
  return major;
}

// Token t as an integer in [lo, hi), or -1 (not a number, not an integer, out of range).
int64_t int_in(const Token& t, double lo, double hi) {
  if (t.kind != Token::kNumber) return -1;
  double down = 0, up = 0;
  vnnlib::directed_doubles(t.number, down, up);
  if (down != up || !(down >= lo && down < hi) || down != static_cast<double>(static_cast<int64_t>(down))) return -1;
  return static_cast<int64_t>(down);
}

}  // namespace

Status Parser::version(Pos at) {
  Token v;
  DENOTE_RETURN_IF_ERROR(next_in(v, at));
  const int64_t major = v.kind == Token::kSymbol ? major_version(v.text) : -1;
  if (major < 0)
    return err(pos_of(v), ErrorCode::kInvalidInput, fmt::format("version {}", describe(v)), "<major.minor>, e.g. <2.0>");
  if (major != 2)
    return err(pos_of(v), ErrorCode::kUnsupported, fmt::format("VNN-LIB version {}", v.text),
               "<2.x> (or no version line: VNN-LIB 1.0)");
  v2_ = true;
  lex_.set_v2(true);
  return expect_close(at, "after the version");
}

Status Parser::network(Pos at) {
  if (!v2_)
    return err(at, ErrorCode::kInvalidInput, "(declare-network ...) without a version line",
               "(vnnlib-version <2.0>) first (a VNN-LIB 1.0 file declares X_i and Y_j with declare-const)");
  if (++networks_ > 1)
    return err(at, ErrorCode::kUnsupported, "a second (declare-network ...)", "one network per property");
  Token name;
  DENOTE_RETURN_IF_ERROR(next_in(name, at));
  if (name.kind != Token::kSymbol)
    return err(pos_of(name), ErrorCode::kInvalidInput, fmt::format("network name {}", describe(name)), "a name");
  for (;;) {
    Token t;
    DENOTE_RETURN_IF_ERROR(next_in(t, at));
    if (t.kind == Token::kClose) break;
    if (t.kind != Token::kOpen)
      return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {} in declare-network", describe(t)),
                 "(declare-input ...), (declare-output ...) or ')'");
    DENOTE_RETURN_IF_ERROR(tensor_decl(pos_of(t), name));
  }
  int inputs = 0, outputs = 0;
  for (const Tensor2& d : tensors_) (d.kind == 'X' ? inputs : outputs) += 1;
  if (inputs != 1 || outputs != 1)
    return err(at, ErrorCode::kUnsupported,
               fmt::format("network {} declares {} input and {} output tensors", name.text, inputs, outputs),
               "one input and one output tensor");
  return ok_status();
}

Status Parser::dims(Pos at, Shape& out) {
  Token t;
  DENOTE_RETURN_IF_ERROR(next_in(t, at));
  if (t.kind != Token::kLBracket)
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(t)), "a shape such as [3] or []");
  for (size_t n = 0;; ++n) {
    DENOTE_RETURN_IF_ERROR(next_in(t, at));
    if (t.kind == Token::kRBracket && n == 0) return ok_status();
    const int64_t dim = int_in(t, 1, 1e9);
    if (dim < 0)
      return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("dimension {}", describe(t)),
                 "a positive integer below 10^9");
    out.push_back(dim);
    DENOTE_RETURN_IF_ERROR(next_in(t, at));
    if (t.kind == Token::kRBracket) return ok_status();
    if (t.kind != Token::kComma)
      return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {} in a shape", describe(t)), "',' or ']'");
  }
}

Status Parser::tensor_decl(Pos at, const Token& network) {
  Token head, name, type;
  DENOTE_RETURN_IF_ERROR(next_in(head, at));
  const std::string_view what = head.kind == Token::kSymbol ? head.text : std::string_view();
  if (what == "declare-hidden" || what == "isomorphic-to" || what == "equal-to")
    return err(pos_of(head), ErrorCode::kUnsupported, fmt::format("({} ...) in network {}", what, network.text),
               "(declare-input ...) and (declare-output ...) only");
  if (what != "declare-input" && what != "declare-output")
    return err(pos_of(head), ErrorCode::kInvalidInput, fmt::format("unexpected {} in declare-network", describe(head)),
               "declare-input or declare-output");
  DENOTE_RETURN_IF_ERROR(next_in(name, at));
  DENOTE_RETURN_IF_ERROR(next_in(type, at));
  if (name.kind != Token::kSymbol || type.kind != Token::kSymbol)
    return err(pos_of(name.kind != Token::kSymbol ? name : type), ErrorCode::kInvalidInput,
               fmt::format("unexpected {}", describe(name.kind != Token::kSymbol ? name : type)),
               "a tensor name and an element type, e.g. X Real [3]");
  for (const Tensor2& d : tensors_)
    if (d.name == name.text)
      return err(pos_of(name), ErrorCode::kInvalidInput,
                 fmt::format("duplicate tensor {} (first declared at {}:{})", name.text, d.pos.line, d.pos.col),
                 "each tensor declared once");
  Tensor2 d{std::string(name.text), {}, 1, what == "declare-input" ? 'X' : 'Y', pos_of(name)};
  DENOTE_RETURN_IF_ERROR(dims(at, d.dims));
  for (int64_t n : d.dims) {  // every element is a variable: bounded as the box entries are
    if (d.count > lim_.max_box_entries / n)
      return err(pos_of(name), ErrorCode::kResource, fmt::format("tensor {} has too many elements", name.text),
                 fmt::format("at most {} (VnnlibLimits::max_box_entries)", lim_.max_box_entries));
    d.count *= n;
  }
  Token t;
  DENOTE_RETURN_IF_ERROR(next_in(t, at));
  if (t.kind == Token::kString) DENOTE_RETURN_IF_ERROR(next_in(t, at));  // its ONNX name: not needed here
  if (t.kind != Token::kClose)
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(t)),
               fmt::format("')' closing the declaration of {}", name.text));
  std::vector<Pos>& decl = d.kind == 'X' ? xdecl_ : ydecl_;
  decl.assign(static_cast<size_t>(d.count), d.pos);
  tensors_.push_back(std::move(d));
  return ok_status();
}

Status Parser::tensor_variable(const Token& name, int64_t& key) {
  const Tensor2* d = nullptr;
  for (const Tensor2& c : tensors_)
    if (name.kind == Token::kSymbol && c.name == name.text) d = &c;
  if (!d)
    return err(pos_of(name), ErrorCode::kInvalidInput, fmt::format("unknown symbol {}", describe(name)),
               "a number, a declared tensor's element (X[0]) or a parenthesised term");
  Token t;
  DENOTE_RETURN_IF_ERROR(next_in(t, pos_of(name)));
  if (t.kind != Token::kLBracket) {  // NAME alone: a scalar tensor
    pending_ = t, has_pending_ = true;
    if (!d->dims.empty())
      return err(pos_of(name), ErrorCode::kInvalidInput, fmt::format("{} without indices", name.text),
                 fmt::format("one index per dimension of its shape [{}], e.g. {}[0{}]", fmt::join(d->dims, ", "),
                             name.text, std::string(d->dims.size() - 1, ',')));
    key = d->kind == 'Y' ? 1 : 0;
    return ok_status();
  }
  int64_t flat = 0;
  for (size_t axis = 0;; ++axis) {
    DENOTE_RETURN_IF_ERROR(next_in(t, pos_of(name)));
    const int64_t index = axis < d->dims.size() ? int_in(t, 0, static_cast<double>(d->dims[axis])) : -1;
    if (index < 0)
      return err(pos_of(t), ErrorCode::kInvalidInput,
                 fmt::format("index {} of {} (shape [{}])", describe(t), name.text, fmt::join(d->dims, ", ")),
                 fmt::format("{} integer indices, each below its dimension", d->dims.size()));
    flat = flat * d->dims[axis] + index;
    DENOTE_RETURN_IF_ERROR(next_in(t, pos_of(name)));
    if (t.kind == Token::kRBracket) {
      if (axis + 1 != d->dims.size())
        return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("{} of {} indices for {}", axis + 1, d->dims.size(), name.text),
                   "one index per dimension");
      break;
    }
    if (t.kind != Token::kComma)
      return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {} in the indices", describe(t)), "',' or ']'");
  }
  key = 2 * flat + (d->kind == 'Y' ? 1 : 0);
  return ok_status();
}

Result<Dnf> Parser::equality(Pos at, bool equal, int depth) {
  const char* op = equal ? "==" : "!=";
  Term tm;
  Token a, b;
  DENOTE_RETURN_IF_ERROR(next_in(a, at));
  if (a.kind == Token::kClose)
    return err(pos_of(a), ErrorCode::kInvalidInput, fmt::format("({}) without operands", op), "two terms");
  DENOTE_RETURN_IF_ERROR(term(a, depth + 1, 1.0, tm));
  DENOTE_RETURN_IF_ERROR(next_in(b, at));
  if (b.kind == Token::kClose)
    return err(pos_of(b), ErrorCode::kInvalidInput, fmt::format("({} a) with one operand", op), "two terms");
  DENOTE_RETURN_IF_ERROR(term(b, depth + 1, -1.0, tm));
  DENOTE_RETURN_IF_ERROR(expect_close(at, fmt::format("after the two operands of '{}'", op)));
  Term neg = tm;  // b - a
  for (auto& [key, coef] : neg.vars) coef = -coef;
  for (auto& [value, text] : neg.consts) value = vnnlib::negate_dec(value), text = vnnlib::negate_text(text);
  DENOTE_ASSIGN_OR_RETURN(int32_t first, atom(at, !equal, std::move(tm)));
  DENOTE_ASSIGN_OR_RETURN(int32_t second, atom(at, !equal, std::move(neg)));
  Dnf d, other;
  d.common.push_back(first);
  other.common.push_back(second);
  if (equal)
    DENOTE_RETURN_IF_ERROR(conjoin(d, std::move(other), at));
  else
    DENOTE_RETURN_IF_ERROR(disjoin(d, std::move(other), at));
  return d;
}

}  // namespace denote::vnnlib_detail
