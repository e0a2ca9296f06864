#include "support/mock_llm.hpp"

#include <cstdlib>
#include <stdexcept>

#include "support/loopback_tool.hpp"

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
  port_ =
      wait_for_port(*process_, dir_ / "port", "loopr-mock-llm",
                    "loopr-mock-llm exited at start (bad script?)", [this] { return output(); });
}

MockLlm::~MockLlm() {
  if (process_) stop_tool(*process_);
}

std::vector<nlohmann::json> MockLlm::requests() const { return read_json_lines(log_path()); }

std::string MockLlm::output() const { return read_file(dir_ / "mock.out"); }

}  // namespace loopr::testing
