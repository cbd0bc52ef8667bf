// policyc: the command-line entry point. The commands are rows of one table
// (commands.h).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // Installed (linked) as kubectl_complete-policyc, kubectl's plugin completion.
  std::string_view self = argc > 0 ? argv[0] : "";
  if (self.substr(self.rfind('/') + 1) == "kubectl_complete-policyc") return policy::cli::KubectlComplete(args);
  return policy::cli::Main(std::move(args));
}
