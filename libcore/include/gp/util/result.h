#pragma once
// gp::Result<T>: a value or a gp::Error, the return type of every fallible libcore call.
// (std::expected is C++23; GCC 12 does not ship it.)

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gp {

// What went wrong, as the "<what failed>: <why>" part of a diagnostic line. Tools prefix
// "gp-TOOL: error: ". `partial` marks results that are usable but incomplete (exit status 3).
struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;
inline Status ok_status() { return Ok{}; }

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace gp
