#include "support/subprocess.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace loopr::testing {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandOutput run_command(const std::string& command, const std::string& cwd) {
  std::string full = cwd.empty() ? command : "cd " + shell_quote(cwd) + " && " + command;
  full = "(" + full + ") 2>&1";
  CommandOutput result;
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace loopr::testing
