// policyc: the command-line entry point. Dispatches to subcommands.

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"

namespace {

constexpr const char* kHelp = R"(policyc — a compiler and runtime for Kubernetes scheduling policy

usage: policyc <command> [flags]

commands:
  inspect   load a cluster snapshot or a pod and summarise what policyc reads
  check     place a pod on a cluster snapshot and explain, or lint policy files
  schedule  place a queue of pods one after another, as kube-scheduler would
  serve     answer kube-scheduler as an extender (filter, prioritize, preempt)
  drain     which nodes could go, their pods placed elsewhere (cluster compression)
  lint      scheduling lints of manifests and policies against a snapshot
  test      run policy tests (cases of pods and what must come of them)
  fmt       lay out policy files one canonical way (--check, --diff, --write)
  compile   compile a policy file and print a compiler stage (--emit=ast|ir)
  version   print the version
  help      print this help

`policyc <command> --help` describes a command's flags.
Exit status: 0 success, 1 a definite no, 2 bad input or bad usage.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace policy::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kHelp, stderr);
    return kExitBadInput;
  }
  // Pass and engine options may come before the command (`policyc
  // --disable-pass=all check ...`, how the conformance runner's command line
  // takes them).
  std::vector<std::string> leading;
  auto leading_option = [](const std::string& a) {
    return a.rfind("--disable-pass", 0) == 0 || a.rfind("--engine", 0) == 0 || a == "--verify-jit" || a == "--verify-incremental" ||
           a == "--no-incremental";
  };
  while (!args.empty() && leading_option(args.front())) {
    leading.push_back(args.front());
    args.erase(args.begin());
    if ((leading.back() == "--disable-pass" || leading.back() == "--engine") && !args.empty()) {
      leading.push_back(args.front());
      args.erase(args.begin());
    }
  }
  if (args.empty()) {
    std::fputs(kHelp, stderr);
    return kExitBadInput;
  }
  std::string command = args.front();
  args.erase(args.begin());
  args.insert(args.end(), leading.begin(), leading.end());
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (command == "version" || command == "--version") {
    fmt::print("policyc {}\n", POLICYC_VERSION);
    return kExitOk;
  }
  if (command == "inspect") return RunInspect(args);
  if (command == "compile") return RunCompile(args);
  if (command == "check") return RunCheck(args);
  if (command == "schedule") return RunSchedule(args);
  if (command == "drain") return RunDrain(args);
  if (command == "lint") return RunLint(args);
  if (command == "test") return RunTest(args);
  if (command == "fmt") return RunFmt(args);
  if (command == "serve") return RunServe(args);
  fmt::print(stderr, "policyc: unknown command `{}`\n\n{}", command, kHelp);
  return kExitBadInput;
}
