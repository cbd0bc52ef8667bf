#pragma once
/// The command table: every policyc command as one row (name, summary,
/// usage, flags, run). Dispatch, `policyc help`, and `policyc completion`
/// are made from it. A command is a file in cli/ defining its row
/// (`Command XCommand()`) and its line in commands.cpp's table.

#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"

namespace policy::cli {

struct Command {
  std::string_view name;
  std::string_view summary;  ///< one line, in the help's list
  std::string usage;         ///< `policyc NAME --help`
  std::vector<FlagSpec> flags;
  /// Runs with the flags parsed; returns the exit status (args.h).
  int (*run)(const Args& args);
};

/// Every command, in the order the help lists them.
const std::vector<Command>& Commands();
const Command* FindCommand(std::string_view name);

/// Parses `argv` with the command's flags and runs it (help and usage
/// errors as the flags parser prints them).
int RunCommand(const Command& command, const std::vector<std::string>& argv);
/// The same, by name (for tests and fuzzers); 2 for an unknown command.
int RunCommand(std::string_view name, const std::vector<std::string>& argv);

/// The process: `policyc ARGS...`.
int Main(std::vector<std::string> args);

/// kubectl's plugin completion (`kubectl policyc <TAB>`, kubectl 1.26+):
/// run as `kubectl_complete-policyc WORDS...` (the words after `kubectl
/// policyc`, the last the one being completed), prints the candidates one a
/// line, then cobra's directive: `:4` (no file names) for commands and
/// flags, `:0` (file names) for anything else.
int KubectlComplete(const std::vector<std::string>& words);

}  // namespace policy::cli
