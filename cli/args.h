#pragma once
/// Command-line flags for policyc subcommands: `--name value`,
/// `--name=value`, bare `--flag`, the short forms `-o value` and `-h`, plus
/// positional arguments (`-` alone is one: standard input).

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <variant>
#include <string>
#include <vector>

namespace policy::cli {

/// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitNo = 1;        ///< a definite "no" (e.g. the pod fits nowhere)
inline constexpr int kExitBadInput = 2;  ///< bad input or bad usage

struct FlagSpec {
  std::string name;  ///< without dashes
  bool takes_value = true;
  bool repeatable = false;
  char short_name = 0;  ///< `-x` for `--name`, or 0
};

class Args;

/// A subcommand's command line: its flags (`--help` is added) or, when it
/// asked for help or misused a flag, the exit status after printing usage.
std::variant<Args, int> ParseCommand(std::string_view command, const std::vector<std::string>& argv,
                                     std::vector<FlagSpec> specs, const char* usage);

class Args {
 public:
  /// Parses `argv`; on a usage error returns nullopt and sets `error`.
  static std::optional<Args> Parse(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs,
                                   std::string* error);

  bool Has(const std::string& name) const { return values_.contains(name); }
  /// The flag's (last) value, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  /// The flag's value as an integer in [min, max], or `fallback` when absent;
  /// nullopt (with `error` set) when it is not one.
  std::optional<int64_t> GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max,
                                std::string* error) const;
  const std::vector<std::string>& Positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace policy::cli
