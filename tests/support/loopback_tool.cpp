#include "support/loopback_tool.hpp"

#include <signal.h>

#include <fstream>
#include <stdexcept>

#include "support/temp_dir.hpp"

namespace loopr::testing {

int wait_for_port(ChildProcess& process, const std::filesystem::path& port_file,
                  const std::string& name, const std::string& exited,
                  const std::function<std::string()>& output) {
  bool up = wait_until([&] { return process.poll() || std::filesystem::exists(port_file); },
                       std::chrono::seconds(20));
  if (process.poll()) throw std::runtime_error(exited + ": " + output());
  if (!up) throw std::runtime_error(name + " did not start within 20 s: " + output());
  // The port file may be seen before its number is written.
  int port = 0;
  wait_until([&] {
    std::ifstream in(port_file);
    return static_cast<bool>(in >> port);
  });
  return port;
}

void stop_tool(ChildProcess& process) {
  if (process.poll()) return;
  ::kill(process.pid(), SIGTERM);
  if (!wait_until([&] { return process.poll().has_value(); }, std::chrono::seconds(5)))
    process.signal_and_wait(SIGKILL);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace loopr::testing
