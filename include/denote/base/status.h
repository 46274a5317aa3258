// Status and Result<T>: errors as values. The library never throws or aborts on bad input;
// every fallible function returns one of these and the caller decides what to do.
//
//   Result<int64_t> r = checked_numel(shape);
//   if (!r.ok()) return r.status();
//   int64_t n = *r;
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace denote {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }
  // Returns a copy of this error with `prefix` put in front of the message.
  Status with_prefix(const std::string& prefix) const {
    return ok_ ? *this : error(prefix + message_);
  }

 private:
  bool ok_ = true;
  std::string message_;
};

inline Status ok_status() { return Status(); }
inline Status error_status(std::string message) { return Status::error(std::move(message)); }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}               // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}         // NOLINT: must be an error status
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
