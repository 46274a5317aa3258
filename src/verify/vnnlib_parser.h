// Internal: the VNN-LIB parser's state and its pieces (src/verify/vnnlib.cc: VNN-LIB 1.0 commands,
// formulas, terms and the normal form; src/verify/vnnlib_v2.cc: VNN-LIB 2.0's version line, network
// declaration and indexed tensor variables).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "denote/tensor/shape.h"
#include "denote/verify/vnnlib.h"
#include "vnnlib_lex.h"

namespace denote::vnnlib_detail {

using vnnlib::Dec;
using vnnlib::describe;
using vnnlib::Token;

inline constexpr size_t kMaxFileBytes = size_t{64} << 20;
inline constexpr int kMaxDepth = 256;                      // nested parentheses, commands included
// The other limits are VnnlibLimits (vnnlib.h); output words over the stored atom copies, in 8-byte
// words, roughly: 10 + num_outputs + 6 per rhs term each.

struct Pos {
  int64_t line = 1, col = 1;
};
inline Pos pos_of(const Token& t) { return Pos{t.line, t.col}; }
inline bool later(Pos a, Pos b) { return a.line != b.line ? a.line > b.line : a.col > b.col; }

struct Bound {  // X_var <= value (upper) or X_var >= value; strict: < or >
  int64_t var = 0;
  bool upper = false, strict = false;
  Dec value;
  std::string text;
  double down = 0, up = 0;
  Pos pos;
};

struct OutAtom {  // sum coef * Y <= rhs (strict: <), rhs = sum of rhs_terms
  std::vector<std::pair<int64_t, double>> coefs;
  std::vector<std::pair<Dec, std::string>> rhs_terms;
  Dec rhs;
  bool strict = false;
};

// A linear term being read: variables (key 2i for X_i, 2j+1 for Y_j) with coefficients, constants.
struct Term {
  std::vector<std::pair<int64_t, double>> vars;
  std::vector<std::pair<Dec, std::string>> consts;
  bool has_x = false, has_y = false;
};

// A DNF over literals (index << 1 for bounds_[index], index << 1 | 1 for atoms_[index]): the
// conjunction of `common` with the disjunction of the disjuncts flat[off[i] .. off[i+1]).
// Invariant outside disjoin: a DNF of one disjunct has that disjunct empty (all in common).
struct Dnf {
  std::vector<int32_t> common, flat;
  std::vector<int64_t> off{0, 0};
  int64_t size() const { return static_cast<int64_t>(off.size()) - 1; }
};

inline std::string var_name(int64_t key) { return fmt::format("{}_{}", (key & 1) ? 'Y' : 'X', key >> 1); }

class Parser {
 public:
  Parser(std::string_view text, std::string_view file, const VnnlibLimits& limits) : lex_(text, file), lim_(limits) {}
  Result<VnnProperty> run();

 private:
  Status err(Pos p, ErrorCode code, std::string_view what, std::string_view expected) const {
    return lex_.error_at(p.line, p.col, code, what, expected);
  }
  // The next token inside the parenthesis opened at `open` (end of file is an error).
  Status next_in(Token& t, Pos open);
  Status expect_close(Pos open, std::string_view context);
  Status depth_error(const Token& t) const {
    return err(pos_of(t), ErrorCode::kResource, fmt::format("nesting deeper than {} levels", kMaxDepth),
               fmt::format("at most {} nested parentheses", kMaxDepth));
  }
  Status command(const Token& open);
  Status declare(const Token& name, const Token& sort);
  Status variable(const Token& t, int64_t& key);
  Result<Dnf> formula(const Token& t, int depth);
  Status term(const Token& t, int depth, double scale, Term& out);
  Result<int32_t> atom(Pos pos, bool strict, Term&& t);
  Status conjoin(Dnf& a, Dnf&& b, Pos pos);
  Status disjoin(Dnf& acc, Dnf&& b, Pos pos);
  Status flatten(Dnf& d, Pos pos);
  Status charge(int64_t copies, Pos pos);
  Status in_time(Pos pos);  // every 1024th call: whether VnnlibLimits::deadline has passed
  Status check_nonempty(int32_t lo, int32_t hi) const;
  void tighten(int32_t& cur, int32_t cand) const;
  Result<VnnProperty> build();

  // VNN-LIB 2.0 (vnnlib_v2.cc): the version line, one network's input and output tensors, variables
  // NAME (a tensor of shape []) and NAME[i, j, ...] (row-major: X_k / Y_k of the 1.0 reading).
  struct Tensor2 {
    std::string name;
    Shape dims;
    int64_t count = 1;
    char kind = 'X';
    Pos pos;
  };
  Status version(Pos at);
  Status network(Pos at);
  Status tensor_decl(Pos at, const Token& head);
  Status tensor_variable(const Token& name, int64_t& key);
  Status dims(Pos at, Shape& out);
  // (== a b): a - b <= 0 and b - a <= 0; (!= a b): a - b < 0 or b - a < 0.
  Result<Dnf> equality(Pos at, bool equal, int depth);
  bool v2_ = false;             // a (vnnlib-version <2.x>) line came first
  bool seen_command_ = false;   // some command was read (the version line must be the first)
  int networks_ = 0;
  std::vector<Tensor2> tensors_;
  Token pending_;               // one token read ahead and handed back (next_in returns it first)
  bool has_pending_ = false;

  vnnlib::Lexer lex_;
  VnnlibLimits lim_;
  std::vector<Pos> xdecl_, ydecl_;
  std::vector<Bound> bounds_;
  std::vector<OutAtom> atoms_;
  Dnf top_;
  int64_t work_ = 0;
  int64_t ticks_ = 0;
  Pos end_;
};

}  // namespace denote::vnnlib_detail
