#include "support/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace loopr::testing {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

int processes_with(const std::string& marker) {
  namespace fs = std::filesystem;
  int n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::ifstream in(it->path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline.find(marker) != std::string::npos &&
        it->path().filename() != std::to_string(::getpid()))
      ++n;
  }
  return n;
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

namespace {

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::string& output_file) {
  // Everything the child needs is made before fork: a forked copy of a threaded process may only
  // call async-signal-safe functions (no malloc) before exec.
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const char* out = output_file.empty() ? nullptr : output_file.c_str();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test must not leave a process behind
    if (out) {
      int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::optional<int> ChildProcess::poll() {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) exit_code_ = exit_code_of(status);
  return exit_code_;
}

int ChildProcess::signal_and_wait(int sig) {
  if (!exit_code_) ::kill(pid_, sig);
  return wait();
}

int ChildProcess::wait() {
  if (exit_code_) return *exit_code_;
  int status = 0;
  ::waitpid(pid_, &status, 0);
  exit_code_ = exit_code_of(status);
  return *exit_code_;
}

}  // namespace loopr::testing
