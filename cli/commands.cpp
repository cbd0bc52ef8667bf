// The command table and what is made from it: dispatch, the help, and the
// shell completion scripts.

#include "cli/commands.h"

#include <cstdio>

#include <fmt/format.h>

#include "support/suggest.h"

namespace policy::cli {
namespace {

// `unknown command `chek`; did you mean `check`?`
std::string UnknownCommand(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Command& c : Commands()) names.push_back(c.name);
  std::string_view close = Closest(name, names);
  return fmt::format("unknown command `{}`{}", name, close.empty() ? "" : fmt::format("; did you mean `{}`?", close));
}

std::string GlobalHelp() {
  std::string help =
      "policyc — a compiler and runtime for Kubernetes scheduling policy\n\n"
      "usage: policyc <command> [flags]\n\ncommands:\n";
  for (const Command& c : Commands()) help += fmt::format("  {:<10} {}\n", c.name, c.summary);
  help +=
      "\n`policyc help COMMAND` or `policyc COMMAND --help` describes a command's flags.\n"
      "Exit status: 0 success, 1 a definite no, 2 bad input or bad usage.\n";
  return help;
}

constexpr const char* kHelpUsage = R"(usage: policyc help [COMMAND]

Lists the commands, or prints COMMAND's usage and flags.
)";

int RunHelp(const Args& args) {
  if (args.Positional().empty()) {
    std::fputs(GlobalHelp().c_str(), stdout);
    return kExitOk;
  }
  const Command* command = FindCommand(args.Positional().front());
  if (command == nullptr || args.Positional().size() > 1) {
    fmt::print(stderr, "policyc help: {}\n\n{}",
               command == nullptr ? UnknownCommand(args.Positional().front())
                                  : std::string("give one command"),
               GlobalHelp());
    return kExitBadInput;
  }
  std::fputs(command->usage.c_str(), stdout);
  return kExitOk;
}

constexpr const char* kVersionUsage = "usage: policyc version\n\nPrints policyc's version.\n";

int RunVersion(const Args& args) {
  if (!args.Positional().empty()) {
    fmt::print(stderr, "policyc version: unexpected argument `{}`\n", args.Positional().front());
    return kExitBadInput;
  }
  fmt::print("policyc {}\n", POLICYC_VERSION);
  return kExitOk;
}

constexpr const char* kCompletionUsage = R"(usage: policyc completion bash|zsh|fish

Prints a script that completes policyc's commands and flags in the shell:
  bash   source <(policyc completion bash)          (e.g. in ~/.bashrc)
  zsh    source <(policyc completion zsh)           (e.g. in ~/.zshrc)
  fish   policyc completion fish | source           (e.g. in ~/.config/fish/config.fish)
Both `policyc` and `kubectl-policyc` (`kubectl policyc`, as a kubectl plugin;
kubectl itself completes it through `kubectl_complete-policyc`, a link to
policyc that setup.sh makes)
are completed. Arguments that are not flags complete as file names.
)";

std::vector<std::string> FlagWords(const Command& c) {
  std::vector<std::string> words;
  for (const FlagSpec& f : c.flags) {
    words.push_back("--" + f.name);
    if (f.short_name != 0) words.push_back(std::string("-") + f.short_name);
  }
  words.push_back("--help");
  return words;
}

std::string BashCompletion() {
  std::string names;
  std::string cases;
  for (const Command& c : Commands()) {
    names += std::string(names.empty() ? "" : " ") + std::string(c.name);
    cases += fmt::format("    {}) flags=\"{}\" ;;\n", c.name, fmt::join(FlagWords(c), " "));
  }
  return fmt::format(R"(# policyc completion for bash (policyc completion bash)
_policyc() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{}" -- "$cur"))
    return
  fi
  case "${{COMP_WORDS[1]}}" in
{}  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=()
  fi
}}
complete -o default -F _policyc policyc kubectl-policyc
)",
                     names, cases);
}

std::string ZshCompletion() {
  return "# policyc completion for zsh (policyc completion zsh): the bash completion through bashcompinit\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         BashCompletion();
}

std::string FishQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string FishCompletion() {
  std::string out = "# policyc completion for fish (policyc completion fish | source)\n";
  std::string names;
  for (const Command& c : Commands()) names += std::string(names.empty() ? "" : " ") + std::string(c.name);
  for (const char* program : {"policyc", "kubectl-policyc"}) {
    for (const Command& c : Commands()) {
      out += fmt::format("complete -c {} -f -n 'not __fish_seen_subcommand_from {}' -a {} -d {}\n", program, names,
                         c.name, FishQuote(c.summary));
    }
    for (const Command& c : Commands()) {
      for (const FlagSpec& f : c.flags) {
        out += fmt::format("complete -c {} -n '__fish_seen_subcommand_from {}' -l {}{}{}\n", program, c.name, f.name,
                           f.short_name != 0 ? fmt::format(" -s {}", f.short_name) : "", f.takes_value ? " -r" : "");
      }
    }
  }
  return out;
}

int RunCompletion(const Args& args) {
  std::string shell = args.Positional().size() == 1 ? args.Positional().front() : "";
  if (shell == "bash") {
    fmt::print("{}", BashCompletion());
  } else if (shell == "zsh") {
    fmt::print("{}", ZshCompletion());
  } else if (shell == "fish") {
    fmt::print("{}", FishCompletion());
  } else {
    fmt::print(stderr, "policyc completion: give one shell: bash, zsh or fish\n\n{}", kCompletionUsage);
    return kExitBadInput;
  }
  return kExitOk;
}

// Pass, engine and release options may come before the command (`policyc
// --disable-pass=all check ...`, how the conformance runner's command line
// takes them): they are moved after it.
bool LeadingOption(const std::string& a) {
  return a.rfind("--disable-pass", 0) == 0 || a.rfind("--engine", 0) == 0 || a == "--verify-jit" ||
         a == "--verify-incremental" || a == "--no-incremental" || a.rfind("--kubernetes-version", 0) == 0;
}

}  // namespace

// Each command's row, defined in the command's own file.
Command InspectCommand();
Command CheckCommand();
Command ScheduleCommand();
Command ServeCommand();
Command DrainCommand();
Command LintCommand();
Command TestCommand();
Command FmtCommand();
Command CompileCommand();

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      InspectCommand(),
      CheckCommand(),
      ScheduleCommand(),
      ServeCommand(),
      DrainCommand(),
      LintCommand(),
      TestCommand(),
      FmtCommand(),
      CompileCommand(),
      {"completion", "print a shell completion script (bash, zsh, fish)", kCompletionUsage, {}, &RunCompletion},
      {"version", "print the version", kVersionUsage, {}, &RunVersion},
      {"help", "list the commands, or describe one (help COMMAND)", kHelpUsage, {}, &RunHelp},
  };
  return kCommands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int RunCommand(const Command& command, const std::vector<std::string>& argv) {
  std::variant<Args, int> parsed = ParseCommand(command.name, argv, command.flags, command.usage.c_str());
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  return command.run(std::get<Args>(parsed));
}

int RunCommand(std::string_view name, const std::vector<std::string>& argv) {
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    fmt::print(stderr, "policyc: {}\n\n{}", UnknownCommand(name), GlobalHelp());
    return kExitBadInput;
  }
  return RunCommand(*command, argv);
}

int KubectlComplete(const std::vector<std::string>& words) {
  std::string partial = words.empty() ? "" : words.back();
  std::vector<std::string> candidates;
  bool files = false;
  if (words.size() <= 1) {
    for (const Command& c : Commands()) candidates.emplace_back(c.name);
  } else if (const Command* c = FindCommand(words.front()); c != nullptr && partial.starts_with("-")) {
    candidates = FlagWords(*c);
  } else {
    files = true;
  }
  for (const std::string& word : candidates) {
    if (word.starts_with(partial)) fmt::print("{}\n", word);
  }
  fmt::print(":{}\n", files ? 0 : 4);
  return kExitOk;
}

int Main(std::vector<std::string> args) {
  std::vector<std::string> leading;
  while (!args.empty() && LeadingOption(args.front())) {
    leading.push_back(args.front());
    args.erase(args.begin());
    if ((leading.back() == "--disable-pass" || leading.back() == "--engine" ||
         leading.back() == "--kubernetes-version") && !args.empty()) {
      leading.push_back(args.front());
      args.erase(args.begin());
    }
  }
  if (args.empty()) {
    std::fputs(GlobalHelp().c_str(), stderr);
    return kExitBadInput;
  }
  std::string name = args.front();
  args.erase(args.begin());
  args.insert(args.end(), leading.begin(), leading.end());
  if (name == "--help" || name == "-h") name = "help";
  if (name == "--version") name = "version";
  return RunCommand(name, args);
}

}  // namespace policy::cli
