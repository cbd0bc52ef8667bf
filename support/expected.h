#pragma once
/// Expected<T>: a value or an infrastructure error (never a user mistake:
/// those are diagnostics). C++20 has no std::expected; this is the small part
/// of it that policyc uses.

#include <string>
#include <utility>
#include <variant>

namespace policy {

/// An infrastructure failure: what went wrong, in words.
struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Expected;

/// Success or an Error, for operations without a value.
using Status = Expected<std::monostate>;

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

/// The success of a Status.
inline Status Ok() { return Status(std::monostate{}); }

}  // namespace policy
