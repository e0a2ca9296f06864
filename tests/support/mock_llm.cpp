#include "support/mock_llm.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace loopr::testing {

std::string mock_llm_binary() {
  if (const char* env = std::getenv("LOOPR_MOCK_LLM_BIN"); env && *env) return env;
#ifdef LOOPR_MOCK_LLM_BIN
  return LOOPR_MOCK_LLM_BIN;
#else
  return {};
#endif
}

MockLlm::MockLlm(const std::string& script, std::vector<std::string> extra_args) {
  std::string bin = mock_llm_binary();
  if (bin.empty()) throw std::runtime_error("loopr-mock-llm is not built");
  write_file(dir_ / "script.yml", script);
  std::vector<std::string> args = {bin, "--script", (dir_ / "script.yml").string(), "--port", "0",
                                   "--port-file", (dir_ / "port").string(), "--log", log_path()};
  for (auto& a : extra_args) args.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test must not leave a server behind
    execv(argv[0], argv.data());
    _exit(127);
  }
  bool exited = false;
  bool up = wait_until(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) exited = true;
        return exited || std::filesystem::exists(dir_ / "port");
      },
      std::chrono::seconds(20));
  if (exited) {
    pid_ = -1;
    throw std::runtime_error("loopr-mock-llm exited at start (bad script? its message is above)");
  }
  if (!up) throw std::runtime_error("loopr-mock-llm did not start within 20 s");
  std::ifstream in(dir_ / "port");
  in >> port_;
}

MockLlm::~MockLlm() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    if (!wait_until([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, std::chrono::seconds(5))) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
}

std::vector<nlohmann::json> MockLlm::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(log_path());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace loopr::testing
