#include "support/mock_llm.hpp"

#include <signal.h>

#include <cstdlib>
#include <fstream>
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

bool MockLlm::available() { return !mock_llm_binary().empty(); }

MockLlm::MockLlm(const std::string& script, Options options) {
  std::string bin = mock_llm_binary();
  if (bin.empty()) throw std::runtime_error("loopr-mock-llm is not built");
  write_file(dir_ / "script.yml", script);
  std::vector<std::string> args = {
      bin,       "--script",    (dir_ / "script.yml").string(), "--port",
      "0",       "--port-file", (dir_ / "port").string(),       "--log",
      log_path()};
  if (!options.api_key.empty()) args.insert(args.end(), {"--api-key", options.api_key});
  if (!options.tls_cert.empty())
    args.insert(args.end(), {"--tls-cert", options.tls_cert, "--tls-key", options.tls_key});
  for (auto& a : options.args) args.push_back(a);
  process_ = std::make_unique<ChildProcess>(std::move(args), (dir_ / "mock.out").string());
  bool up = wait_until([&] { return process_->poll() || std::filesystem::exists(dir_ / "port"); },
                       std::chrono::seconds(20));
  if (process_->poll())
    throw std::runtime_error("loopr-mock-llm exited at start (bad script?): " + output());
  if (!up) throw std::runtime_error("loopr-mock-llm did not start within 20 s: " + output());
  // The port file may be seen before its number is written.
  wait_until([&] {
    std::ifstream in(dir_ / "port");
    return static_cast<bool>(in >> port_);
  });
}

MockLlm::~MockLlm() {
  if (!process_ || process_->poll()) return;
  ::kill(process_->pid(), SIGTERM);
  if (!wait_until([&] { return process_->poll().has_value(); }, std::chrono::seconds(5)))
    process_->signal_and_wait(SIGKILL);
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

std::string MockLlm::output() const { return read_file(dir_ / "mock.out"); }

}  // namespace loopr::testing
