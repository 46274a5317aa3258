// Status and Result<T>: errors as values. The library never throws or aborts on bad input;
// every fallible function returns one of these and the caller decides what to do.
//
// An error carries a code (what kind of failure), the node it concerns (-1: none), the field of
// that node or file it concerns (empty: none), the full message, and the detail (the message as
// the rule that failed wrote it, before any node context was attached). Callers decide by code,
// node and field; they never parse the text.
//
//   Result<int64_t> r = checked_numel(shape);
//   if (!r.ok()) return r.status();
//   int64_t n = *r;
//   Status s = Status::error(ErrorCode::kShape, "relu: shape mismatch").with_field("parents");
//   s.node();   // -1 until a graph walk attaches the node (with_node)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace denote {

enum class ErrorCode : uint8_t {
  kOk = 0,
  kInvalidInput,  // malformed data, file or option (parsers, CLI values)
  kStructure,     // graph structure: ids, arity, parent order, attrs kind, declared shapes
  kShape,         // shape inference, or a declared/produced shape that disagrees
  kEval,          // a rule failed on the values (domain, payload records, bad parameters)
  kUnsupported,   // an op, dtype or feature this pass or context does not provide
  kResource,      // a limit: element count, memory, precision
  kInternal,      // a broken invariant of denote itself
};

std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status success() { return Status(); }
  static Status error(std::string message) { return error(ErrorCode::kInvalidInput, std::move(message)); }
  static Status error(ErrorCode code, std::string message) {
    Status s;
    s.code_ = code == ErrorCode::kOk ? ErrorCode::kInternal : code;
    s.detail_ = message;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  // The full text, with node context once a walk attached it.
  const std::string& message() const { return message_; }
  // The failing rule's own text (no node context).
  const std::string& detail() const { return detail_; }
  int64_t node() const { return node_; }
  bool has_node() const { return node_ >= 0; }
  const std::string& field() const { return field_; }

  // A copy naming `field` (the first field named wins: the innermost, most specific one).
  Status with_field(std::string field) const {
    Status s = *this;
    if (!ok() && s.field_.empty()) s.field_ = std::move(field);
    return s;
  }
  // A copy attributed to node `id`, with `message` as its full text (the walker renders it from
  // detail(), the node and the layer). Keeps code, field and detail.
  Status with_node(int64_t id, std::string message) const {
    Status s = *this;
    if (ok()) return s;
    s.node_ = id;
    s.message_ = std::move(message);
    return s;
  }
  // A copy with `prefix` put in front of the message (and of the detail); keeps code, node, field.
  Status with_prefix(const std::string& prefix) const {
    Status s = *this;
    if (ok()) return s;
    s.message_ = prefix + s.message_;
    s.detail_ = prefix + s.detail_;
    return s;
  }
  // A copy with another code.
  Status with_code(ErrorCode code) const {
    Status s = *this;
    if (!ok() && code != ErrorCode::kOk) s.code_ = code;
    return s;
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  int64_t node_ = -1;
  std::string field_;
  std::string message_;
  std::string detail_;
};

inline Status ok_status() { return Status(); }
inline Status error_status(std::string message) { return Status::error(std::move(message)); }
inline Status error_status(ErrorCode code, std::string message) { return Status::error(code, std::move(message)); }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}               // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {         // NOLINT: must be an error status
    if (std::get<1>(v_).ok()) v_ = Status::error(ErrorCode::kInternal, "internal: a Result built from a success status");
  }
  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  const std::string& message() const { return status().message(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace denote

#define DENOTE_CONCAT_INNER(a, b) a##b
#define DENOTE_CONCAT(a, b) DENOTE_CONCAT_INNER(a, b)

// Returns the error of a Status-valued expression from the enclosing function.
#define DENOTE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::denote::Status denote_status_ = (expr);        \
    if (!denote_status_.ok()) return denote_status_; \
  } while (0)

// `DENOTE_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the error.
#define DENOTE_ASSIGN_OR_RETURN(lhs, expr) \
  DENOTE_ASSIGN_OR_RETURN_IMPL(DENOTE_CONCAT(denote_result_, __LINE__), lhs, expr)
#define DENOTE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
