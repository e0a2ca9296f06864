#include "support/mock_forge.hpp"

#include <cstdlib>
#include <stdexcept>

#include "support/loopback_tool.hpp"

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
  std::vector<std::string> args = {
      bin,     "--script", (dir_ / "script.json").string(), "--port-file", (dir_ / "port").string(),
      "--log", log_path()};
  if (!token.empty()) args.insert(args.end(), {"--token", token});
  if (!git_dir.empty()) args.insert(args.end(), {"--git-dir", git_dir});
  process_ = std::make_unique<ChildProcess>(std::move(args), (dir_ / "forge.out").string());
  port_ = wait_for_port(*process_, dir_ / "port", "loopr-mock-forge",
                        "loopr-mock-forge exited at start", [this] { return output(); });
}

MockForge::~MockForge() {
  if (process_) stop_tool(*process_);
}

std::vector<nlohmann::json> MockForge::requests() const { return read_json_lines(log_path()); }

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
