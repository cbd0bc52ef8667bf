// A plain JSON syntax checker (RFC 8259) that stops at the first error and
// says what was expected there. Only the error path of the JSON reader uses
// it, so it favours clear messages over speed.

#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "k8s/object_reader.h"

namespace policy::k8s {

namespace {

class Checker {
 public:
  explicit Checker(std::string_view text) : s_(text) {}

  bool Check() {
    SkipSpace();
    if (!Value()) return false;
    SkipSpace();
    if (i_ < s_.size()) return Fail("expected the end of the document after the top-level value");
    return true;
  }
  uint32_t offset() const { return static_cast<uint32_t>(i_); }
  const std::string& message() const { return message_; }

 private:
  bool Fail(std::string what) {
    message_ = fmt::format("{}, found {}", what, Found());
    return false;
  }

  std::string Found() const {
    if (i_ >= s_.size()) return "the end of the file";
    char c = s_[i_];
    if (static_cast<unsigned char>(c) < 0x20) return fmt::format("control character 0x{:02x}", c);
    return fmt::format("`{}`", c);
  }

  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  bool Literal(std::string_view word) {
    for (char c : word) {
      if (i_ >= s_.size() || s_[i_] != c) return Fail(fmt::format("expected `{}`", word));
      ++i_;
    }
    return true;
  }

  bool String() {
    ++i_;  // opening quote
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return Fail("expected a closing `\"` (control characters must be escaped)");
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) break;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            ++i_;
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
              return Fail("expected four hex digits after `\\u`");
            }
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return Fail("expected an escape (`\\n`, `\\\"`, `\\u00e9`, ...) after `\\`");
        }
      }
      ++i_;
    }
    return Fail("expected a closing `\"`");
  }

  bool Number() {
    size_t start = i_;
    if (s_[i_] == '-') ++i_;
    auto digits = [&] {
      size_t b = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - b;
    };
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      return Fail("expected a digit");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) return Fail("expected a digit after `.`");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) return Fail("expected a digit in the exponent");
    }
    (void)start;
    return true;
  }

  // Iterative over containers so deep nesting cannot exhaust the stack.
  bool Value() {
    std::vector<char> stack;  // '{' or '['
    for (;;) {
      // Parse one value start.
      if (i_ >= s_.size()) return Fail("expected a value");
      char c = s_[i_];
      bool opened = false;
      if (c == '{' || c == '[') {
        stack.push_back(c);
        ++i_;
        SkipSpace();
        if (i_ < s_.size() && s_[i_] == (c == '{' ? '}' : ']')) {
          ++i_;
          stack.pop_back();
        } else {
          opened = true;
          if (c == '{') {
            if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a member name in quotes");
            if (!String()) return false;
            SkipSpace();
            if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected `:` after the member name");
            ++i_;
            SkipSpace();
          }
        }
      } else if (c == '"') {
        if (!String()) return false;
      } else if (c == 't') {
        if (!Literal("true")) return false;
      } else if (c == 'f') {
        if (!Literal("false")) return false;
      } else if (c == 'n') {
        if (!Literal("null")) return false;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!Number()) return false;
      } else {
        return Fail("expected a value (object, array, string, number, `true`, `false` or `null`)");
      }
      if (opened) continue;
      // After a value: close containers or move to the next element.
      for (;;) {
        if (stack.empty()) return true;
        SkipSpace();
        char close = stack.back() == '{' ? '}' : ']';
        if (i_ < s_.size() && s_[i_] == close) {
          ++i_;
          stack.pop_back();
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          SkipSpace();
          if (stack.back() == '{') {
            if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a member name in quotes after `,`");
            if (!String()) return false;
            SkipSpace();
            if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected `:` after the member name");
            ++i_;
            SkipSpace();
          }
          break;
        }
        return Fail(stack.back() == '{' ? "expected `,` or `}` after an object member"
                                        : "expected `,` or `]` after an array element");
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string message_;
};

}  // namespace

bool FindJsonError(std::string_view text, uint32_t* offset, std::string* message) {
  Checker checker(text);
  if (checker.Check()) return true;
  *offset = checker.offset();
  *message = checker.message();
  return false;
}

}  // namespace policy::k8s
