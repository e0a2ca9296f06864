// LLM client throughput against loopr-mock-llm with zero delay: 64 concurrent calls on one
// io_context, requests/s, p50/p99 latency, and the client's CPU time per call (the mock runs
// in its own process, so getrusage(RUSAGE_SELF) is the client alone). Prints figures.
// Run: `build/tools/bench/llm_bench [path/to/loopr-mock-llm] [calls-per-stream]`; without a
// path the mock is looked for next to this binary and in ../mock-llm/.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <loopr/llm/client.hpp>

extern char** environ;

using namespace loopr;
using namespace loopr::llm;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kConcurrency = 64;

const char* kScript = R"(rules:
  - name: any
    reply:
      text: "The plan is written to .loopr/plans/001-add-oauth.plan.md; validation should pass now. Next, the spec loops take over, one per item under Specs to Create."
      usage: {input_tokens: 1200, output_tokens: 40}
)";

/// The mock server for the run; SIGTERM on destruction.
class Mock {
 public:
  Mock(const std::string& binary, const fs::path& dir) {
    std::ofstream(dir / "script.yml") << kScript;
    std::vector<std::string> args = {binary, "--script",    (dir / "script.yml").string(), "--port",
                                     "0",    "--port-file", (dir / "port").string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The mock's own messages go to a file, not between the figures.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = (dir / "mock.out").string();
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      return;
    }
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::ifstream in(dir / "port");
      if (in >> port_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling the port file
    }
  }
  ~Mock() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

struct Figures {
  int calls = 0, failures = 0;
  double seconds = 0, cpu = 0;
  std::vector<double> latencies_ms;
};

Figures run(const std::string& provider, bool stream, int port, int calls_per_stream) {
  Config config;
  config.llm.provider = provider;
  config.llm.model = provider == "openai" ? "gpt-9" : "claude-opus-5-5";
  config.llm.base_url = "http://127.0.0.1:" + std::to_string(port);
  config.llm.stream = stream;
  config.pricing["gpt-9"] = Price{1.25, 10.0, 0.0, 0.125};  // a made-up model: priced, no warning
  EnvLookup env = [](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "ANTHROPIC_API_KEY" || std::string(name) == "OPENAI_API_KEY")
      return std::string("bench-key");
    return std::nullopt;
  };
  net::io_context io;
  net::thread_pool pool(1);
  auto client = std::move(make_client(config, env, io, pool).value());

  Figures f;
  f.latencies_ms.reserve(static_cast<std::size_t>(kConcurrency * calls_per_stream));
  auto one_stream = [&]() -> awaitable<void> {
    Request req;
    req.system = "You are loopr's plan loop.";
    req.messages = {Message::user_text("Write the plan for: add OAuth login.")};
    req.loop_id = "001";
    req.loop_type = "plan";
    for (int i = 0; i < calls_per_stream; ++i) {
      auto t = Clock::now();
      Outcome o = co_await client->complete(req);
      f.latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      ++f.calls;
      if (!o.ok()) {
        if (++f.failures == 1)
          std::fprintf(stderr, "first failure: %s\n", o.error().describe().c_str());
      }
    }
  };
  // Warm-up: open the connections once, as a running daemon would have them.
  for (int i = 0; i < kConcurrency; ++i) net::co_spawn(io, one_stream, net::detached);
  io.run();
  f = Figures{};
  f.latencies_ms.reserve(static_cast<std::size_t>(kConcurrency * calls_per_stream));

  double cpu0 = cpu_seconds();
  auto t0 = Clock::now();
  for (int i = 0; i < kConcurrency; ++i) net::co_spawn(io, one_stream, net::detached);
  io.restart();
  io.run();
  f.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  f.cpu = cpu_seconds() - cpu0;
  pool.join();
  return f;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

std::string find_mock(const char* argv0) {
  fs::path self = fs::absolute(argv0).parent_path();
  for (auto p : {self / "loopr-mock-llm", self / ".." / "mock-llm" / "loopr-mock-llm"})
    if (fs::exists(p)) return fs::canonical(p).string();
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::string mock_bin = argc > 1 ? argv[1] : find_mock(argv[0]);
  int calls_per_stream = argc > 2 ? std::max(1, std::atoi(argv[2])) : 50;
  if (mock_bin.empty() || !fs::exists(mock_bin)) {
    std::fprintf(stderr,
                 "llm_bench: loopr-mock-llm not found; pass its path as the first argument\n");
    return 2;
  }
  fs::path dir = fs::temp_directory_path() / ("loopr-llm-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  int status = 0;
  {
    Mock mock(mock_bin, dir);
    if (mock.port() == 0) {
      std::fprintf(stderr, "llm_bench: the mock did not start\n");
      status = 1;
    } else {
      std::printf("llm_bench: %d concurrent calls x %d each, mock-llm with zero delay, loopback\n",
                  kConcurrency, calls_per_stream);
      std::printf("%-22s %9s %10s %9s %9s %14s %8s\n", "client", "calls", "req/s", "p50 ms",
                  "p99 ms", "client CPU/call", "failed");
      for (auto [provider, stream] : {std::pair{"anthropic", true}, std::pair{"anthropic", false},
                                      std::pair{"openai", true}, std::pair{"openai", false}}) {
        Figures f = run(provider, stream, mock.port(), calls_per_stream);
        std::string name = std::string(provider) + (stream ? " stream" : " plain");
        std::printf("%-22s %9d %10.0f %9.2f %9.2f %11.1f us %8d\n", name.c_str(), f.calls,
                    f.calls / f.seconds, percentile(f.latencies_ms, 0.50),
                    percentile(f.latencies_ms, 0.99), 1e6 * f.cpu / f.calls, f.failures);
        if (f.failures) status = 1;
      }
    }
  }
  fs::remove_all(dir);
  return status;
}
