// loopr-mock-llm: parses the command line, loads the script, and serves until SIGTERM/SIGINT.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mock_llm/engine.hpp>
#include <mock_llm/request_log.hpp>
#include <mock_llm/script.hpp>
#include <mock_llm/server.hpp>
#include <optional>
#include <string>

#include <loopr/core/config.hpp>

namespace {

using namespace loopr::mock_llm;

/// Writes the port next to `path` and renames it in place, so a test polling the file never
/// reads a half-written number.
void write_port_file(const std::string& path, std::uint16_t port) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write the port file " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

/// A thousand concurrent loops need a thousand sockets; the default soft limit is often 1024.
void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "loopr-mock-llm: a scripted server speaking the Anthropic Messages API, OpenAI chat "
      "completions, the OpenAI Responses API and the Gemini API on 127.0.0.1, with fault "
      "injection (see tools/mock-llm/README.md)"};
  std::string script_path, port_file, log_path, latency_text, api_key, tls_cert, tls_key;
  std::string host = "127.0.0.1";
  int port = 0;
  std::optional<std::uint64_t> seed;
  bool check_only = false;
  app.add_option("--script", script_path, "the YAML script of rules and replies")->required();
  app.add_option("--port", port, "TCP port; 0 picks a free one")->check(CLI::Range(0, 65535));
  app.add_option("--port-file", port_file, "write the port here once listening (atomically)");
  app.add_option("--log", log_path, "append one JSON line per request received");
  app.add_option("--latency", latency_text, "delay before every answer, e.g. 200ms");
  app.add_option("--api-key", api_key, "accept only this key (default: any non-empty key)");
  app.add_option("--tls-cert", tls_cert, "PEM certificate chain: serve HTTPS");
  app.add_option("--tls-key", tls_key, "PEM private key for --tls-cert");
  app.add_option("--seed", seed, "seed for ids and random faults (overrides faults.seed)");
  app.add_option("--host", host, "address to listen on");
  app.add_flag("--check", check_only, "only load and check the script, then exit");
  CLI11_PARSE(app, argc, argv);

  auto script = load_script_file(script_path);
  if (!script) {
    std::fprintf(stderr, "loopr-mock-llm: %s\n", script.error().message.c_str());
    return 2;
  }
  if (check_only) {
    std::printf("%s: %zu rules, ok\n", script_path.c_str(), script->rules.size());
    return 0;
  }
  EngineOptions options;
  options.api_key = api_key;
  options.seed = seed;
  if (!latency_text.empty()) {
    auto latency = loopr::parse_duration(latency_text);
    if (!latency) {
      std::fprintf(stderr, "loopr-mock-llm: --latency %s is not a duration (write e.g. 200ms)\n",
                   latency_text.c_str());
      return 2;
    }
    options.latency = *latency;
  }
  try {
    std::signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    std::optional<RequestLog> log;
    if (!log_path.empty()) log.emplace(log_path);
    Engine engine(std::move(*script), options, log ? &*log : nullptr);
    Server server(engine, {host, static_cast<std::uint16_t>(port), tls_cert, tls_key});
    server.stop_on_signals();
    if (!port_file.empty()) write_port_file(port_file, server.port());
    std::fprintf(stderr, "loopr-mock-llm: listening on %s://%s:%u (script %s)\n",
                 server.tls() ? "https" : "http", host.c_str(), server.port(), script_path.c_str());
    server.run();
    std::fprintf(stderr, "loopr-mock-llm: stopped\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loopr-mock-llm: %s\n", e.what());
    return 1;
  }
}
