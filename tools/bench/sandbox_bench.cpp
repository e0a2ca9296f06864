// What confinement costs per command: N runs of `sh -c true` through the bubblewrap executor
// (a real repository and linked worktree, the daemon's layout) against plain `sh -c true`,
// alternating so all see the same machine, each after a pause (100 ms; a daemon's commands are
// seconds apart: joining a cgroup v1 group through `cgroup.procs` right after another join is
// much cheaper than after a pause, so back-to-back runs would flatter the old start). The
// sandbox's start as it is (a fresh control group joined through `tasks` without the global
// lock, the network namespace made ahead) beside the start before issue 32
// (`ExecutorOptions::start_ahead = false`: the pid written to `cgroup.procs`, groups reused,
// bubblewrap making the network namespace), with and without the control group. Each figure is
// the whole `run` (the group's release included). Prints p50 / p99 of each; asserts nothing.
//
//   sandbox_bench [runs] [pause_ms]    (default 200, 100)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include <loopr/core/process.hpp>
#include <loopr/exec/executor.hpp>

using namespace loopr;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

int sh(const std::string& command) { return std::system(command.c_str()); }

}  // namespace

int main(int argc, char** argv) {
  // The executors' notes (e.g. "control groups are not available" for the rlimits-only variant)
  // would land in the table this prints on stdout.
  spdlog::set_level(spdlog::level::warn);
  int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  int pause_ms = argc > 2 ? std::atoi(argv[2]) : 100;
  char tmpl[] = "/tmp/loopr-sandbox-bench-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  fs::path repo = dir / "repo";
  fs::create_directories(repo);
  if (sh("cd " + repo.string() +
         " && git init -q -b main . && git config user.email b@b && git config user.name b && "
         "echo x > f && git add f && git commit -qm i && git worktree add -q "
         ".loopr/worktrees/code-001 -b l") != 0) {
    std::fprintf(stderr, "sandbox_bench: cannot make the repository\n");
    return 1;
  }
  fs::path worktree = repo / ".loopr/worktrees/code-001";
  SandboxConfig config;
  auto make = [&](bool groups, bool ahead) {
    exec::ExecutorOptions options{RepoPaths(repo)};
    options.control_groups = groups;
    options.start_ahead = ahead;
    return exec::make_executor(config, options);
  };
  // [0] now with groups, [1] before with groups, [2] now rlimits only, [3] before rlimits only.
  std::unique_ptr<exec::Executor> executors[] = {make(true, true), make(true, false),
                                                 make(false, true), make(false, false)};
  auto& executor = executors[0];
  if (auto problem = executor->unavailable()) {
    std::fprintf(stderr, "sandbox_bench: the sandbox does not work here: %s\n", problem->c_str());
    return 1;
  }
  std::vector<double> times[4], plain;
  for (int i = 0; i < runs; ++i) {
    for (int e = 0; e < 4; ++e) {
      usleep(static_cast<useconds_t>(pause_ms) * 1000);
      auto t0 = Clock::now();
      auto r = executors[e]->run(exec::Command::shell("true", worktree));
      times[e].push_back(ms(Clock::now() - t0));
      if (r.exit_code != 0) {
        std::fprintf(stderr, "sandbox_bench: a run failed: %s\n", r.output.c_str());
        return 1;
      }
    }
    usleep(static_cast<useconds_t>(pause_ms) * 1000);
    auto t0 = Clock::now();
    ProcessSpec spec = shell("true", worktree.string());
    auto p = run_process(spec);
    plain.push_back(ms(Clock::now() - t0));
    if (p.exit_code != 0) {
      std::fprintf(stderr, "sandbox_bench: plain sh failed\n");
      return 1;
    }
  }
  // Rows of tools/bench/run.sh's table.
  bool groups = executor->info().description.find("cgroup") != std::string::npos;
  std::printf(
      "| sandbox start per command: bubblewrap%s p50 / p99 (before issue 32) vs plain `sh -c` | "
      "%.1f / %.1f ms (%.1f / %.1f ms) vs %.1f / %.1f ms | sandbox_bench, %d runs of `sh -c true`, "
      "alternating, %d ms apart |\n",
      groups ? " with its control group" : "", percentile(times[0], 0.5),
      percentile(times[0], 0.99), percentile(times[1], 0.5), percentile(times[1], 0.99),
      percentile(plain, 0.5), percentile(plain, 0.99), runs, pause_ms);
  if (groups)
    std::printf(
        "| sandbox start per command: bubblewrap, rlimits only, p50 / p99 (before issue 32) | "
        "%.1f / %.1f ms (%.1f / %.1f ms) | sandbox_bench, same runs |\n",
        percentile(times[2], 0.5), percentile(times[2], 0.99), percentile(times[3], 0.5),
        percentile(times[3], 0.99));
  for (auto& e : executors) e.reset();
  fs::remove_all(dir);
  return 0;
}
