// The error channel for domain failures that callers must handle (a value, never an exception).
// `Result<T>` holds a T or an `Error{code, message}`; `LOOPR_TRY` propagates the error.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace loopr {

/// What kind of failure an Error is; callers branch on this, never on the message text.
enum class ErrorCode {
  invalid_argument,   ///< bad input from a user or a file (config, artifact, request)
  not_found,          ///< no such loop, file, branch …
  already_exists,     ///< creating something that is there
  conflict,           ///< a compare-and-set lost, or a git conflict
  illegal_transition, ///< a status change the state machine forbids
  io,                 ///< the file system, RocksDB, a socket
  unsupported,        ///< e.g. a store written by a newer loopr
  timeout,
  cancelled,
  internal,
};

/// Stable lower-case name of an ErrorCode (for logs and JSON).
const char* to_string(ErrorCode code);

/// A failure a caller must handle: a code to branch on and a message a person can read.
struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
};

/// Either a value or an Error. Deliberately small: C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}            // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

/// Result of an operation with no value.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }
  Error&& take_error() { return std::move(err_); }

 private:
  Error err_;
  bool ok_ = true;
};

inline Result<void> ok() { return {}; }

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace loopr

/// Evaluates `expr` (a Result); on error returns the error from the enclosing function.
#define LOOPR_TRY(expr)                              \
  do {                                               \
    auto&& loopr_try_r_ = (expr);                    \
    if (!loopr_try_r_.ok()) return loopr_try_r_.take_error(); \
  } while (0)

#define LOOPR_CONCAT_INNER(a, b) a##b
#define LOOPR_CONCAT(a, b) LOOPR_CONCAT_INNER(a, b)
/// `LOOPR_ASSIGN(auto x, expr)`: declares x from a Result's value or returns its error.
#define LOOPR_ASSIGN(decl, expr) LOOPR_ASSIGN_IMPL(LOOPR_CONCAT(loopr_assign_r_, __LINE__), decl, expr)
#define LOOPR_ASSIGN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                       \
  if (!tmp.ok()) return tmp.take_error();  \
  decl = std::move(tmp).value()
