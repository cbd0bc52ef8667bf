// policyc: the command-line entry point. The commands are rows of one table
// (commands.h).

#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) { return policy::cli::Main(std::vector<std::string>(argv + 1, argv + argc)); }
