// CEL's regular expressions on RE2 (regex.h).

#include "compiler/cel/regex.h"

#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <re2/re2.h>

namespace policy::cel {
namespace {

constexpr size_t kKeptPerThread = 64;

// Go's regexp/syntax ErrorCode texts, by RE2's code.
std::string_view GoWords(RE2::ErrorCode code) {
  switch (code) {
    case RE2::ErrorBadEscape: return "invalid escape sequence";
    case RE2::ErrorBadCharClass: return "invalid character class";
    case RE2::ErrorBadCharRange: return "invalid character class range";
    case RE2::ErrorMissingBracket: return "missing closing ]";
    case RE2::ErrorMissingParen: return "missing closing )";
    case RE2::ErrorUnexpectedParen: return "unexpected )";
    case RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize: return "invalid repeat count";
    case RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp: return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8: return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture: return "invalid named capture";
    case RE2::ErrorPatternTooLarge: return "expression too large";
    default: return "internal error";
  }
}

// The compiled pattern, from this thread's few; null with the error set.
const RE2* Compiled(std::string_view pattern, std::string* error) {
  thread_local std::unordered_map<std::string, std::unique_ptr<RE2>> kept;
  auto it = kept.find(std::string(pattern));
  if (it == kept.end()) {
    RE2::Options options;
    options.set_log_errors(false);  // the error is the caller's to say
    auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
    if (kept.size() >= kKeptPerThread) kept.clear();
    it = kept.emplace(std::string(pattern), std::move(re)).first;
  }
  const RE2& re = *it->second;
  if (!re.ok()) {
    *error = fmt::format("error parsing regexp: {}: `{}`", GoWords(re.error_code()), re.error_arg());
    return nullptr;
  }
  return &re;
}

}  // namespace

RegexResult Matches(std::string_view text, std::string_view pattern) {
  RegexResult r;
  const RE2* re = Compiled(pattern, &r.error);
  if (re == nullptr) return r;
  r.ok = true;
  r.matched = RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re);
  return r;
}

RegexResult Find(std::string_view text, std::string_view pattern) { return FindAll(text, pattern, 1); }

RegexResult FindAll(std::string_view text, std::string_view pattern, int64_t limit) {
  RegexResult r;
  const RE2* re = Compiled(pattern, &r.error);
  if (re == nullptr) return r;
  r.ok = true;
  re2::StringPiece input(text.data(), text.size()), match;
  size_t at = 0;
  // As Go's FindAllString: after an empty match the next one starts one
  // character further; an empty match right after a match is skipped.
  size_t previous_end = std::string_view::npos;
  while (at <= text.size() && (limit < 0 || static_cast<int64_t>(r.matches.size()) < limit)) {
    if (!re->Match(input, at, text.size(), RE2::UNANCHORED, &match, 1)) break;
    size_t begin = static_cast<size_t>(match.data() - text.data()), end = begin + match.size();
    if (!(match.empty() && begin == previous_end)) r.matches.emplace_back(match.data(), match.size());
    previous_end = end;
    if (end > at) {
      at = end;
    } else {  // an empty match: step over one UTF-8 character
      at = end + 1;
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    }
  }
  return r;
}

}  // namespace policy::cel
