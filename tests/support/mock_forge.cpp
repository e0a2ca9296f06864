#include "support/mock_forge.hpp"

#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace loopr::testing {

std::string mock_forge_binary() {
  if (const char* env = std::getenv("LOOPR_MOCK_FORGE_BIN"); env && *env) return env;
#ifdef LOOPR_MOCK_FORGE_BIN
  return LOOPR_MOCK_FORGE_BIN;
#else
  return {};
#endif
}

bool MockForge::available() { return !mock_forge_binary().empty(); }

MockForge::MockForge(const nlohmann::json& script, const std::string& token,
                     const std::string& git_dir) {
  std::string bin = mock_forge_binary();
  if (bin.empty()) throw std::runtime_error("loopr-mock-forge is not built");
  write_file(dir_ / "script.json", script.dump(2));
  std::vector<std::string> args = {bin,         "--script", (dir_ / "script.json").string(),
                                   "--port-file", (dir_ / "port").string(), "--log", log_path()};
  if (!token.empty()) args.insert(args.end(), {"--token", token});
  if (!git_dir.empty()) args.insert(args.end(), {"--git-dir", git_dir});
  process_ = std::make_unique<ChildProcess>(std::move(args), (dir_ / "forge.out").string());
  bool up = wait_until([&] { return process_->poll() || std::filesystem::exists(dir_ / "port"); },
                       std::chrono::seconds(20));
  if (process_->poll()) throw std::runtime_error("loopr-mock-forge exited at start: " + output());
  if (!up) throw std::runtime_error("loopr-mock-forge did not start within 20 s: " + output());
  wait_until([&] {
    std::ifstream in(dir_ / "port");
    return static_cast<bool>(in >> port_);
  });
}

MockForge::~MockForge() {
  if (!process_ || process_->poll()) return;
  ::kill(process_->pid(), SIGTERM);
  if (!wait_until([&] { return process_->poll().has_value(); }, std::chrono::seconds(5)))
    process_->signal_and_wait(SIGKILL);
}

std::vector<nlohmann::json> MockForge::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(log_path());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json MockForge::state() const {
  auto r = run_command("curl -s --max-time 10 " + shell_quote(url() + "/_mock/state"));
  return nlohmann::json::parse(r.output, nullptr, false);
}

void MockForge::add_comments(int number, const nlohmann::json& comments) const {
  nlohmann::json body = {{"pull_number", number}, {"comments", comments}};
  run_command("curl -s --max-time 10 -X POST --data-binary " + shell_quote(body.dump()) + " " +
              shell_quote(url() + "/_mock/comments"));
}

void MockForge::set_pull_state(int number, const std::string& state) const {
  nlohmann::json body = {{"state", state}};
  run_command("curl -s --max-time 10 -X POST --data-binary " + shell_quote(body.dump()) + " " +
              shell_quote(url() + "/_mock/pulls/" + std::to_string(number)));
}

void MockForge::add_faults(const nlohmann::json& faults) const {
  nlohmann::json body = {{"faults", faults}};
  run_command("curl -s --max-time 10 -X POST --data-binary " + shell_quote(body.dump()) + " " +
              shell_quote(url() + "/_mock/faults"));
}

std::string MockForge::output() const { return read_file(dir_ / "forge.out"); }

}  // namespace loopr::testing
