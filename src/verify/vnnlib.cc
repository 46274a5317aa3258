// VNN-LIB property parser (include/denote/verify/vnnlib.h; docs/VNNLIB.md describes the subset, the
// normal form and the error messages). One pass over the tokens: declarations are counted, each
// atom is normalised at once to an input bound or an output atom (a "literal"), and each asserted
// formula becomes a DNF over literals that is conjoined into the file's DNF. The DNF keeps the
// literals shared by every disjunct apart ("common"), so a top-level box of 3072 bounds is stored
// once, not once per output disjunct. At the end the disjuncts are grouped by their input box.
#include "denote/verify/vnnlib.h"

#include "denote/base/file.h"

#include "denote/base/deadline.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "vnnlib_lex.h"
#include "vnnlib_parser.h"

namespace denote {
namespace vnnlib_detail {

Status Parser::next_in(Token& t, Pos open) {
  if (has_pending_) {
    t = pending_;
    has_pending_ = false;
    return ok_status();
  }
  DENOTE_RETURN_IF_ERROR(lex_.next(t));
  if (t.kind == Token::kEnd)
    return err(pos_of(t), ErrorCode::kInvalidInput, "unexpected end of file",
               fmt::format("')' closing the '(' at {}:{}", open.line, open.col));
  return ok_status();
}

Status Parser::expect_close(Pos open, std::string_view context) {
  Token t;
  DENOTE_RETURN_IF_ERROR(next_in(t, open));
  if (t.kind == Token::kClose) return ok_status();
  return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(t)),
             fmt::format("')' {} (closing the '(' at {}:{})", context, open.line, open.col));
}

Result<VnnProperty> Parser::run() {
  for (;;) {
    Token t;
    DENOTE_RETURN_IF_ERROR(lex_.next(t));
    if (t.kind == Token::kEnd) {
      end_ = pos_of(t);
      break;
    }
    if (t.kind == Token::kOpen) {
      DENOTE_RETURN_IF_ERROR(command(t));
    } else if (t.kind == Token::kClose) {
      return err(pos_of(t), ErrorCode::kInvalidInput, "unexpected ')' (unbalanced parentheses)",
                 "'(' starting a command, or the end of the file");
    } else {
      return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {} outside a command", describe(t)),
                 "'(' starting a command, or the end of the file");
    }
  }
  return build();
}

Status Parser::command(const Token& open) {
  const Pos at = pos_of(open);
  Token head;
  DENOTE_RETURN_IF_ERROR(next_in(head, at));
  const std::string_view cmd = head.kind == Token::kSymbol ? head.text : std::string_view();
  const bool first = !seen_command_;
  seen_command_ = true;
  if (cmd == "vnnlib-version") {
    if (!first)
      return err(pos_of(head), ErrorCode::kInvalidInput, "(vnnlib-version ...) after another command",
                 "the version line first in the file");
    return version(at);
  }
  if (cmd == "declare-network") return network(at);
  if (v2_ && (cmd == "declare-const" || cmd == "declare-fun"))
    return err(pos_of(head), ErrorCode::kInvalidInput, fmt::format("({} ...) in a VNN-LIB 2.0 file", cmd),
               "the variables declared as tensors in (declare-network N (declare-input X Real [n]) ...)");
  if (cmd == "declare-const" || cmd == "declare-fun") {
    Token name, sort;
    DENOTE_RETURN_IF_ERROR(next_in(name, at));
    if (cmd == "declare-fun") {
      Token a, b;
      DENOTE_RETURN_IF_ERROR(next_in(a, at));
      DENOTE_RETURN_IF_ERROR(next_in(b, at));
      if (a.kind != Token::kOpen || b.kind != Token::kClose)
        return err(pos_of(a.kind != Token::kOpen ? a : b), ErrorCode::kUnsupported,
                   fmt::format("unexpected {} in declare-fun", describe(a.kind != Token::kOpen ? a : b)),
                   "an empty argument list () (only constants are supported)");
    }
    DENOTE_RETURN_IF_ERROR(next_in(sort, at));
    DENOTE_RETURN_IF_ERROR(declare(name, sort));
    return expect_close(at, "after the sort");
  }
  if (cmd == "assert") {
    Token f;
    DENOTE_RETURN_IF_ERROR(next_in(f, at));
    DENOTE_ASSIGN_OR_RETURN(Dnf d, formula(f, 2));
    DENOTE_RETURN_IF_ERROR(expect_close(at, "after the asserted formula"));
    return conjoin(top_, std::move(d), at);
  }
  if (cmd == "set-logic") {
    Token logic;
    DENOTE_RETURN_IF_ERROR(next_in(logic, at));
    if (logic.kind != Token::kSymbol)
      return err(pos_of(logic), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(logic)),
                 "a logic name such as QF_LRA");
    return expect_close(at, "after the logic name");
  }
  if (cmd == "check-sat" || cmd == "get-model" || cmd == "exit") return expect_close(at, "after the command name");
  if (head.kind != Token::kSymbol)
    return err(pos_of(head), ErrorCode::kInvalidInput, fmt::format("unexpected {} after '('", describe(head)),
               "a command: declare-const, declare-fun, assert, set-logic, check-sat, get-model or exit");
  return err(pos_of(head), ErrorCode::kUnsupported, fmt::format("unknown command {}", describe(head)),
             "declare-const, declare-fun, assert, set-logic, check-sat, get-model or exit");
}

Status Parser::declare(const Token& name, const Token& sort) {
  char kind = 0;
  int64_t index = 0;
  if (name.kind != Token::kSymbol || !vnnlib::parse_var_name(name.text, kind, index))
    return err(pos_of(name), ErrorCode::kUnsupported, fmt::format("declared name {}", describe(name)),
               "X_<i> (an input) or Y_<j> (an output), i and j without leading zeros");
  if (sort.kind != Token::kSymbol || sort.text != "Real")
    return err(pos_of(sort), ErrorCode::kUnsupported, fmt::format("sort {} of {}", describe(sort), name.text),
               "Real");
  std::vector<Pos>& decl = kind == 'X' ? xdecl_ : ydecl_;
  const auto count = static_cast<int64_t>(decl.size());
  if (index < count)
    return err(pos_of(name), ErrorCode::kInvalidInput,
               fmt::format("duplicate declaration of {} (first declared at {}:{})", name.text, decl[index].line,
                           decl[index].col),
               "each variable declared once");
  if (index != count)
    return err(pos_of(name), ErrorCode::kInvalidInput, fmt::format("{} declared out of order", name.text),
               fmt::format("{}_{} next (declarations count {}_0, {}_1, ... without gaps)", kind, count, kind, kind));
  decl.push_back(pos_of(name));
  return ok_status();
}

Status Parser::variable(const Token& t, int64_t& key) {
  if (v2_) return tensor_variable(t, key);
  char kind = 0;
  int64_t index = 0;
  if (!vnnlib::parse_var_name(t.text, kind, index))
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unknown symbol {}", describe(t)),
               "a number, X_i, Y_j or a parenthesised term");
  const std::vector<Pos>& decl = kind == 'X' ? xdecl_ : ydecl_;
  if (index >= static_cast<int64_t>(decl.size()))
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("undeclared variable {}", describe(t)),
               fmt::format("a declaration (declare-const {} Real) before its first use", t.text));
  key = 2 * index + (kind == 'Y' ? 1 : 0);
  return ok_status();
}

Result<Dnf> Parser::formula(const Token& t, int depth) {
  if (t.kind != Token::kOpen)
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(t)),
               "'(' starting a formula: (and ...), (or ...), (<= a b), (>= a b), (< a b) or (> a b)");
  if (depth > kMaxDepth) return depth_error(t);
  const Pos at = pos_of(t);
  Token head;
  DENOTE_RETURN_IF_ERROR(next_in(head, at));
  const std::string_view op = head.kind == Token::kSymbol ? head.text : std::string_view();
  if (op == "and" || op == "or") {
    Dnf acc;
    int64_t n = 0;
    for (;; ++n) {
      Token c;
      DENOTE_RETURN_IF_ERROR(next_in(c, at));
      if (c.kind == Token::kClose) break;
      DENOTE_ASSIGN_OR_RETURN(Dnf d, formula(c, depth + 1));
      if (op == "and") {
        DENOTE_RETURN_IF_ERROR(conjoin(acc, std::move(d), at));
      } else if (n == 0) {
        acc = std::move(d);
      } else {
        DENOTE_RETURN_IF_ERROR(disjoin(acc, std::move(d), at));
      }
    }
    if (n == 0)
      return err(at, ErrorCode::kInvalidInput, fmt::format("({}) without operands", op), "at least one formula");
    return acc;
  }
  if (op == "<=" || op == ">=" || op == "<" || op == ">") {
    // a <= b as a - b <= 0; a >= b as b - a <= 0.
    const double sa = op[0] == '<' ? 1.0 : -1.0;
    Term tm;
    Token a, b;
    DENOTE_RETURN_IF_ERROR(next_in(a, at));
    if (a.kind == Token::kClose)
      return err(pos_of(a), ErrorCode::kInvalidInput, fmt::format("({}) without operands", op), "two terms");
    DENOTE_RETURN_IF_ERROR(term(a, depth + 1, sa, tm));
    DENOTE_RETURN_IF_ERROR(next_in(b, at));
    if (b.kind == Token::kClose)
      return err(pos_of(b), ErrorCode::kInvalidInput, fmt::format("({} a) with one operand", op), "two terms");
    DENOTE_RETURN_IF_ERROR(term(b, depth + 1, -sa, tm));
    DENOTE_RETURN_IF_ERROR(expect_close(at, fmt::format("after the two operands of '{}'", op)));
    DENOTE_ASSIGN_OR_RETURN(int32_t lit, atom(at, op.size() == 1, std::move(tm)));
    Dnf d;
    d.common.push_back(lit);
    return d;
  }
  if (v2_ && (op == "==" || op == "!=")) return equality(at, op == "==", depth);
  if (head.kind != Token::kSymbol)
    return err(pos_of(head), ErrorCode::kInvalidInput, fmt::format("unexpected {} after '('", describe(head)),
               "a formula operator: and, or, <=, >=, < or >");
  return err(pos_of(head), ErrorCode::kUnsupported, fmt::format("unknown operator {}", describe(head)),
             "and, or, <=, >=, < or >");
}

Status Parser::term(const Token& t, int depth, double scale, Term& out) {
  if (t.kind == Token::kNumber) {
    out.consts.emplace_back(scale < 0 ? vnnlib::negate_dec(t.number) : t.number,
                            scale < 0 ? vnnlib::negate_text(t.text) : std::string(t.text));
    return ok_status();
  }
  if (t.kind == Token::kSymbol) {
    int64_t key = 0;
    DENOTE_RETURN_IF_ERROR(variable(t, key));
    out.vars.emplace_back(key, scale);
    ((key & 1) ? out.has_y : out.has_x) = true;
    return ok_status();
  }
  if (t.kind != Token::kOpen)
    return err(pos_of(t), ErrorCode::kInvalidInput, fmt::format("unexpected {}", describe(t)),
               "a term: a number, X_i, Y_j, (+ ...), (- ...) or (* c V)");
  if (depth > kMaxDepth) return depth_error(t);
  const Pos at = pos_of(t);
  Token head;
  DENOTE_RETURN_IF_ERROR(next_in(head, at));
  const std::string_view op = head.kind == Token::kSymbol ? head.text : std::string_view();
  if (op == "*") {
    Token a, b;
    int64_t key = -1;
    DENOTE_RETURN_IF_ERROR(next_in(a, at));
    if (a.kind == Token::kSymbol) DENOTE_RETURN_IF_ERROR(variable(a, key));  // X[i, j] reads its indices
    if (a.kind != Token::kClose) DENOTE_RETURN_IF_ERROR(next_in(b, at));
    const Token* c = a.kind == Token::kNumber ? &a : &b;
    const Token* v = a.kind == Token::kNumber ? &b : &a;
    if (a.kind == Token::kClose || b.kind == Token::kClose || c->kind != Token::kNumber || v->kind != Token::kSymbol)
      return err(at, ErrorCode::kUnsupported,
                 fmt::format("(* {} {}) is not a constant times a variable", describe(a),
                             a.kind == Token::kClose ? "" : describe(b)),
                 "(* c X_i), (* c Y_j) or (* Y_j c) with c a number");
    if (key < 0) DENOTE_RETURN_IF_ERROR(variable(*v, key));
    double down = 0, up = 0;
    vnnlib::directed_doubles(c->number, down, up);
    if (down != up || !std::isfinite(down))
      return err(pos_of(*c), ErrorCode::kUnsupported, fmt::format("coefficient {} is not exactly a double", describe(*c)),
                 "a coefficient that is a binary floating-point number, e.g. 2, -1 or 0.5");
    DENOTE_RETURN_IF_ERROR(expect_close(at, "after the two operands of '*'"));
    out.vars.emplace_back(key, scale * down);
    ((key & 1) ? out.has_y : out.has_x) = true;
    return ok_status();
  }
  if (op == "+" || op == "-") {
    const size_t vars0 = out.vars.size(), consts0 = out.consts.size();
    int64_t n = 0;
    for (;; ++n) {
      Token c;
      DENOTE_RETURN_IF_ERROR(next_in(c, at));
      if (c.kind == Token::kClose) break;
      DENOTE_RETURN_IF_ERROR(term(c, depth + 1, (op == "-" && n > 0) ? -scale : scale, out));
    }
    if (n == 0)
      return err(at, ErrorCode::kInvalidInput, fmt::format("({}) without operands", op), "at least one term");
    if (op == "-" && n == 1) {  // (- t): the one operand, read with +scale, is negated
      for (size_t i = vars0; i < out.vars.size(); ++i) out.vars[i].second = -out.vars[i].second;
      for (size_t i = consts0; i < out.consts.size(); ++i)
        out.consts[i] = {vnnlib::negate_dec(out.consts[i].first), vnnlib::negate_text(out.consts[i].second)};
    }
    return ok_status();
  }
  if (head.kind != Token::kSymbol)
    return err(pos_of(head), ErrorCode::kInvalidInput, fmt::format("unexpected {} after '('", describe(head)),
               "a term operator: +, - or *");
  return err(pos_of(head), ErrorCode::kUnsupported, fmt::format("unknown term operator {}", describe(head)),
             "+, - or *");
}

// The atom `sum t.vars + sum t.consts <= 0` (strict: < 0), as an input bound or an output atom.
Result<int32_t> Parser::atom(Pos pos, bool strict, Term&& t) {
  std::stable_sort(t.vars.begin(), t.vars.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<int64_t, double>> vars;
  for (const auto& [key, coef] : t.vars) {
    if (!vars.empty() && vars.back().first == key) {
      double s = 0;
      if (!vnnlib::exact_sum(vars.back().second, coef, s))
        return err(pos, ErrorCode::kUnsupported,
                   fmt::format("the coefficients of {} do not add up to an exact double", var_name(key)),
                   "coefficients whose sum is a double");
      vars.back().second = s;
    } else {
      vars.emplace_back(key, coef);
    }
  }
  if (t.has_x && t.has_y) {
    auto x = std::find_if(vars.begin(), vars.end(), [](const auto& v) { return !(v.first & 1); });
    auto y = std::find_if(vars.begin(), vars.end(), [](const auto& v) { return (v.first & 1) != 0; });
    return err(pos, ErrorCode::kUnsupported,
               fmt::format("atom mixes inputs and outputs ({} and {})", var_name(x->first), var_name(y->first)),
               "an atom over inputs X_i only (a bound) or over outputs Y_j only");
  }
  if (!t.has_x && !t.has_y)
    return err(pos, ErrorCode::kUnsupported, "atom without a variable", "an atom over X_i or Y_j");
  Dec sum;
  for (const auto& c : t.consts) sum = vnnlib::add_dec(sum, c.first);
  if (t.has_y) {
    OutAtom a;
    for (const auto& [key, coef] : vars)
      if (coef != 0) a.coefs.emplace_back(key >> 1, coef);
    for (auto& c : t.consts)
      a.rhs_terms.emplace_back(vnnlib::negate_dec(c.first), vnnlib::negate_text(c.second));
    a.rhs = vnnlib::negate_dec(sum);
    a.strict = strict;
    atoms_.push_back(std::move(a));
    return static_cast<int32_t>(((atoms_.size() - 1) << 1) | 1);
  }
  std::vector<std::pair<int64_t, double>> nonzero;
  for (const auto& v : vars)
    if (v.second != 0) nonzero.push_back(v);
  if (nonzero.empty())
    return err(pos, ErrorCode::kUnsupported, "input atom whose coefficients cancel", "a bound on one input such as (<= X_0 1)");
  if (nonzero.size() > 1)
    return err(pos, ErrorCode::kUnsupported,
               fmt::format("atom over several inputs ({}, {}{}): general input polytopes are not supported",
                           var_name(nonzero[0].first), var_name(nonzero[1].first), nonzero.size() > 2 ? ", ..." : ""),
               "a bound on one input, (<= X_i c) or (>= X_i c)");
  const double coef = nonzero[0].second;
  if (coef != 1 && coef != -1)
    return err(pos, ErrorCode::kUnsupported,
               fmt::format("input bound with coefficient {} on {}", coef, var_name(nonzero[0].first)),
               "coefficient 1 or -1: (<= X_i c) or (>= X_i c)");
  // X + sum <= 0: X <= -sum (an upper bound); -X + sum <= 0: X >= sum (a lower bound).
  Bound b;
  b.var = nonzero[0].first >> 1;
  b.upper = coef > 0;
  b.strict = strict;
  b.pos = pos;
  b.value = b.upper ? vnnlib::negate_dec(sum) : sum;
  if (t.consts.size() == 1) {
    b.text = b.upper ? vnnlib::negate_text(t.consts[0].second) : t.consts[0].second;
  } else {
    b.text = vnnlib::dec_text(b.value);
    Dec check;
    if (vnnlib::parse_decimal(b.text, check) != vnnlib::DecParse::kOk)
      return err(pos, ErrorCode::kResource, fmt::format("the constants of the bound on {} add up to a number too long to write", var_name(nonzero[0].first)),
                 fmt::format("at most {0} digits and an exponent within -{1}..{1}", vnnlib::kMaxNumberChars, vnnlib::kMaxExponentField));
  }
  vnnlib::directed_doubles(b.value, b.down, b.up);
  bounds_.push_back(std::move(b));
  return static_cast<int32_t>((bounds_.size() - 1) << 1);
}

Status Parser::in_time(Pos pos) {
  if ((++ticks_ & 1023) != 0 || !past(lim_.deadline)) return ok_status();
  return err(pos, ErrorCode::kResource, "the deadline passed while reading the property", "a shorter property")
      .with_field("deadline");
}

Status Parser::charge(int64_t copies, Pos pos) {
  DENOTE_RETURN_IF_ERROR(in_time(pos));
  work_ += copies;
  if (work_ > lim_.max_dnf_work)
    return err(pos, ErrorCode::kResource,
               fmt::format("the disjunctive normal form is too large (more than {} atom copies)", lim_.max_dnf_work),
               "a formula with fewer 'or' under 'and'");
  return ok_status();
}

Status Parser::conjoin(Dnf& a, Dnf&& b, Pos pos) {
  a.common.insert(a.common.end(), b.common.begin(), b.common.end());
  if (b.size() == 1) return ok_status();
  if (a.size() == 1) {
    a.flat = std::move(b.flat);
    a.off = std::move(b.off);
    return ok_status();
  }
  const int64_t na = a.size(), nb = b.size();
  if (na * nb > lim_.max_conjunctions)
    return err(pos, ErrorCode::kResource,
               fmt::format("distributing 'and' over 'or' gives {} conjunctions", na * nb),
               fmt::format("at most {} conjunctions", lim_.max_conjunctions));
  DENOTE_RETURN_IF_ERROR(charge(na * static_cast<int64_t>(b.flat.size()) + nb * static_cast<int64_t>(a.flat.size()) + na * nb, pos));
  Dnf r;
  r.common = std::move(a.common);
  r.off.assign(1, 0);
  r.off.reserve(static_cast<size_t>(na * nb + 1));
  for (int64_t i = 0; i < na; ++i)
    for (int64_t j = 0; j < nb; ++j) {
      r.flat.insert(r.flat.end(), a.flat.begin() + a.off[i], a.flat.begin() + a.off[i + 1]);
      r.flat.insert(r.flat.end(), b.flat.begin() + b.off[j], b.flat.begin() + b.off[j + 1]);
      r.off.push_back(static_cast<int64_t>(r.flat.size()));
    }
  a = std::move(r);
  return ok_status();
}

// Moves `common` into every disjunct.
Status Parser::flatten(Dnf& d, Pos pos) {
  if (d.common.empty()) return ok_status();
  DENOTE_RETURN_IF_ERROR(charge(static_cast<int64_t>(d.common.size()) * d.size(), pos));
  Dnf r;
  r.off.assign(1, 0);
  for (int64_t i = 0; i < d.size(); ++i) {
    r.flat.insert(r.flat.end(), d.common.begin(), d.common.end());
    r.flat.insert(r.flat.end(), d.flat.begin() + d.off[i], d.flat.begin() + d.off[i + 1]);
    r.off.push_back(static_cast<int64_t>(r.flat.size()));
  }
  d = std::move(r);
  return ok_status();
}

Status Parser::disjoin(Dnf& acc, Dnf&& b, Pos pos) {
  if (acc.size() + b.size() > lim_.max_conjunctions)
    return err(pos, ErrorCode::kResource, fmt::format("'or' with more than {} disjuncts", lim_.max_conjunctions),
               fmt::format("at most {} conjunctions", lim_.max_conjunctions));
  DENOTE_RETURN_IF_ERROR(flatten(acc, pos));
  DENOTE_RETURN_IF_ERROR(flatten(b, pos));
  const auto base = static_cast<int64_t>(acc.flat.size());
  acc.flat.insert(acc.flat.end(), b.flat.begin(), b.flat.end());
  for (int64_t i = 1; i <= b.size(); ++i) acc.off.push_back(base + b.off[i]);
  return charge(static_cast<int64_t>(b.flat.size()), pos);
}

void Parser::tighten(int32_t& cur, int32_t cand) const {
  if (cur < 0) {
    cur = cand;
    return;
  }
  const Bound& c = bounds_[cand];
  const Bound& o = bounds_[cur];
  int s = vnnlib::compare_dec(c.value, o.value);
  if (c.upper) s = -s;
  if (s > 0 || (s == 0 && c.strict && !o.strict)) cur = cand;
}

Status Parser::check_nonempty(int32_t lo, int32_t hi) const {
  if (lo < 0 || hi < 0) return ok_status();
  const Bound& l = bounds_[lo];
  const Bound& h = bounds_[hi];
  const int s = vnnlib::compare_dec(l.value, h.value);
  if (s < 0 || (s == 0 && !l.strict && !h.strict)) return ok_status();
  const std::string x = var_name(2 * l.var);
  return err(later(l.pos, h.pos) ? l.pos : h.pos, ErrorCode::kInvalidInput,
             fmt::format("empty input box: {} {} {} and {} {} {}", x, l.strict ? ">" : ">=", l.text, x,
                         h.strict ? "<" : "<=", h.text),
             "lower bound <= upper bound (< when a bound is strict)");
}

Result<VnnProperty> Parser::build() {
  const auto nx = static_cast<int64_t>(xdecl_.size());
  const auto ny = static_cast<int64_t>(ydecl_.size());
  std::vector<int32_t> clo(nx, -1), chi(nx, -1), catoms;
  for (int32_t lit : top_.common) {
    if (lit & 1) {
      catoms.push_back(lit >> 1);
    } else {
      const Bound& b = bounds_[lit >> 1];
      tighten(b.upper ? chi[b.var] : clo[b.var], lit >> 1);
    }
  }
  std::vector<int64_t> missing;
  for (int64_t v = 0; v < nx; ++v) {
    DENOTE_RETURN_IF_ERROR(check_nonempty(clo[v], chi[v]));
    if (clo[v] < 0 || chi[v] < 0) missing.push_back(v);
  }
  VnnProperty p;
  p.num_inputs = nx;
  p.num_outputs = ny;
  std::unordered_map<std::string, size_t> case_of;
  std::vector<VnnAtom> dense(atoms_.size());
  std::vector<bool> densed(atoms_.size(), false);
  auto bound_key = [&](int32_t i) {
    const Bound& b = bounds_[i];
    return fmt::format("{}{}e{}{}", b.value.neg ? "-" : "", b.value.digits, b.value.exp, b.strict ? "s" : "");
  };
  // Pass 1: each disjunct's box as its differences from the common box (sorted by input), grouped
  // by value into cases; the limits and the bounded-inputs check come before any box is stored.
  std::vector<int32_t> case_index(static_cast<size_t>(top_.size()));
  std::vector<std::vector<std::tuple<int64_t, int32_t, int32_t>>> deltas;  // per case: (var, lo, hi)
  for (int64_t i = 0; i < top_.size(); ++i) {
    std::vector<int32_t> bl;
    for (int64_t k = top_.off[i]; k < top_.off[i + 1]; ++k)
      if (!(top_.flat[k] & 1)) bl.push_back(top_.flat[k] >> 1);
    std::stable_sort(bl.begin(), bl.end(), [&](int32_t a, int32_t b) { return bounds_[a].var < bounds_[b].var; });
    std::vector<std::tuple<int64_t, int32_t, int32_t>> delta;
    std::string key;
    for (size_t k = 0; k < bl.size();) {
      const int64_t v = bounds_[bl[k]].var;
      int32_t lo = clo[v], hi = chi[v];
      for (; k < bl.size() && bounds_[bl[k]].var == v; ++k) tighten(bounds_[bl[k]].upper ? hi : lo, bl[k]);
      if (lo == clo[v] && hi == chi[v]) continue;
      DENOTE_RETURN_IF_ERROR(check_nonempty(lo, hi));
      delta.emplace_back(v, lo, hi);
      key += fmt::format("{}:{}:{};", v, lo == clo[v] ? "=" : bound_key(lo), hi == chi[v] ? "=" : bound_key(hi));
    }
    DENOTE_RETURN_IF_ERROR(in_time(end_));
    auto [it, fresh] = case_of.emplace(key, deltas.size());
    case_index[i] = static_cast<int32_t>(it->second);
    if (!fresh) continue;
    if (static_cast<int64_t>(deltas.size() + 1) * nx > lim_.max_box_entries)
      return err(end_, ErrorCode::kResource,
                 fmt::format("{} cases of {} inputs would hold more than {} bounds", deltas.size() + 1, nx, lim_.max_box_entries),
                 "fewer distinct input boxes");
    for (int64_t v : missing) {
      auto d = std::lower_bound(delta.begin(), delta.end(), v, [](const auto& e, int64_t x) { return std::get<0>(e) < x; });
      const bool found = d != delta.end() && std::get<0>(*d) == v;
      const bool no_lo = (found ? std::get<1>(*d) : clo[v]) < 0, no_hi = (found ? std::get<2>(*d) : chi[v]) < 0;
      if (!no_lo && !no_hi) continue;
      const std::string where =
          top_.size() > 1 ? fmt::format(" in disjunct {} of the property's disjunctive normal form", i) : "";
      return err(xdecl_[v], ErrorCode::kInvalidInput,
                 fmt::format("input X_{} has no {} bound{}", v, no_lo ? "lower" : "upper", where),
                 fmt::format("every input bounded below and above, e.g. (assert ({} X_{} 0))", no_lo ? ">=" : "<=", v));
    }
    deltas.push_back(std::move(delta));
  }
  // Pass 2: the boxes.
  for (const auto& delta : deltas) {
    DENOTE_RETURN_IF_ERROR(in_time(end_));
    std::vector<int32_t> lo = clo, hi = chi;
    for (const auto& [v, l, h] : delta) lo[v] = l, hi[v] = h;
    VnnCase c;
    for (auto* vec : {&c.lo_out, &c.hi_out, &c.lo_in, &c.hi_in}) vec->resize(nx);
    c.lo_text.resize(nx);
    c.hi_text.resize(nx);
    c.lo_strict.assign(nx, 0);
    c.hi_strict.assign(nx, 0);
    for (int64_t v = 0; v < nx; ++v) {
      const Bound& l = bounds_[lo[v]];
      const Bound& h = bounds_[hi[v]];
      const bool lx = l.down == l.up, hx = h.down == h.up;  // exactly doubles
      c.lo_out[v] = l.down;
      c.lo_in[v] = l.strict && lx ? std::nextafter(l.up, INFINITY) : l.up;
      c.hi_out[v] = h.up;
      c.hi_in[v] = h.strict && hx ? std::nextafter(h.down, -INFINITY) : h.down;
      c.lo_text[v] = VnnDecimal{l.text, l.down, l.up};
      c.hi_text[v] = VnnDecimal{h.text, h.down, h.up};
      c.lo_strict[v] = l.strict ? 1 : 0;
      c.hi_strict[v] = h.strict ? 1 : 0;
    }
    p.cases.push_back(std::move(c));
  }
  // Pass 3: each disjunct's output conjunction joins its case's DNF (its size is checked first).
  auto cost = [&](int32_t a) { return 10 + ny + 6 * static_cast<int64_t>(atoms_[a].rhs_terms.size()); };
  int64_t common_cost = 0;
  for (int32_t a : catoms) common_cost += cost(a);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<bool> always(p.cases.size(), false);  // some conjunction is empty: the output is true
    int64_t words = 0;
    for (int64_t i = 0; i < top_.size(); ++i) {
      DENOTE_RETURN_IF_ERROR(in_time(end_));
      const size_t ci = static_cast<size_t>(case_index[i]);
      if (always[ci]) continue;
      std::vector<int32_t> al;
      for (int64_t k = top_.off[i]; k < top_.off[i + 1]; ++k)
        if (top_.flat[k] & 1) al.push_back(top_.flat[k] >> 1);
      if (catoms.empty() && al.empty()) {
        p.cases[ci].output.clear();
        always[ci] = true;
        continue;
      }
      if (pass == 0) {
        words += common_cost;
        for (int32_t a : al) words += cost(a);
        if (words > lim_.max_output_words)
          return err(end_, ErrorCode::kResource,
                     fmt::format("the output conditions would take more than {} words of memory", lim_.max_output_words),
                     "fewer output atoms times outputs");
        continue;
      }
      std::vector<VnnAtom> conj;
      for (const auto* list : {&catoms, &al})
        for (int32_t a : *list) {
          if (!densed[a]) {
            const OutAtom& o = atoms_[a];
            VnnAtom& d = dense[a];
            d.coef.assign(ny, 0.0);
            for (const auto& [j, coef] : o.coefs) d.coef[j] = coef;
            for (const auto& [dec, text] : o.rhs_terms) {
              VnnDecimal t{text, 0, 0};
              vnnlib::directed_doubles(dec, t.down, t.up);
              d.rhs_terms.push_back(std::move(t));
            }
            vnnlib::directed_doubles(o.rhs, d.rhs_down, d.rhs_up);
            d.strict = o.strict;
            densed[a] = true;
          }
          conj.push_back(dense[a]);
        }
      p.cases[ci].output.push_back(std::move(conj));
    }
  }
  return p;
}

}  // namespace vnnlib_detail

using vnnlib_detail::kMaxFileBytes;
using vnnlib_detail::Parser;

Result<VnnProperty> parse_vnnlib(std::string_view text, std::string_view file, const VnnlibLimits& limits) {
  if (text.size() > kMaxFileBytes)
    return error_status(ErrorCode::kResource,
                        fmt::format("{}:1:1: file of {} bytes is larger than 64 MiB; expected at most {} bytes", file,
                                    text.size(), kMaxFileBytes));
  const VnnlibLimits def;
  const VnnlibLimits lim{std::clamp<int64_t>(limits.max_conjunctions, 1, def.max_conjunctions),
                         std::clamp<int64_t>(limits.max_dnf_work, 1, def.max_dnf_work),
                         std::clamp<int64_t>(limits.max_box_entries, 1, def.max_box_entries),
                         std::clamp<int64_t>(limits.max_output_words, 1, def.max_output_words), limits.deadline};
  Parser parser(text, file, lim);
  return parser.run();
}

Result<VnnProperty> load_vnnlib_file(const std::string& path, const VnnlibLimits& limits) {
  if (is_gzip_path(path)) {  // prop.vnnlib.gz as VNN-COMP publishes it: the 64 MiB bound on the decompressed text
    auto text = read_file_bounded(path, kMaxFileBytes);
    if (!text.ok()) return text.status().with_prefix(path + ":1:1: ");
    return parse_vnnlib(*text, path, limits);
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes)
    return error_status(ErrorCode::kResource,
                        fmt::format("{}:1:1: file of {} bytes is larger than 64 MiB; expected at most {} bytes", path,
                                    size, kMaxFileBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_status("cannot open file '" + path + "'");
  std::string text;
  char buf[1 << 16];
  while (in && text.size() <= kMaxFileBytes) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return error_status("error reading file '" + path + "'");
  return parse_vnnlib(text, path, limits);
}

}  // namespace denote
