// What confinement costs per command: N runs of `sh -c true` through the bubblewrap executor
// (a real repository and linked worktree, the daemon's layout) against plain `sh -c true`,
// alternating so both see the same machine. Prints p50 / p99 of each; asserts nothing.
//
//   sandbox_bench [runs]    (default 200)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

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
  int runs = argc > 1 ? std::atoi(argv[1]) : 200;
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
  auto executor = exec::make_executor(config, {RepoPaths(repo)});
  exec::ExecutorOptions no_groups{RepoPaths(repo)};
  no_groups.control_groups = false;
  auto rlimits_only = exec::make_executor(config, no_groups);
  if (auto problem = executor->unavailable()) {
    std::fprintf(stderr, "sandbox_bench: the sandbox does not work here: %s\n", problem->c_str());
    return 1;
  }
  std::vector<double> boxed, bare, plain;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto r = executor->run(exec::Command::shell("true", worktree));
    auto t1 = Clock::now();
    auto b = rlimits_only->run(exec::Command::shell("true", worktree));
    auto t2 = Clock::now();
    ProcessSpec spec = shell("true", worktree.string());
    auto p = run_process(spec);
    auto t3 = Clock::now();
    if (r.exit_code != 0 || b.exit_code != 0 || p.exit_code != 0) {
      std::fprintf(stderr, "sandbox_bench: a run failed: %s%s\n", r.output.c_str(),
                   b.output.c_str());
      return 1;
    }
    boxed.push_back(ms(t1 - t0));
    bare.push_back(ms(t2 - t1));
    plain.push_back(ms(t3 - t2));
  }
  // Rows of tools/bench/run.sh's table.
  bool groups = executor->info().description.find("cgroup") != std::string::npos;
  std::printf(
      "| sandbox start per command: bubblewrap%s p50 / p99 vs plain `sh -c` | %.1f / %.1f ms vs "
      "%.1f / %.1f ms | "
      "sandbox_bench, %d runs of `sh -c true`, alternating |\n",
      groups ? " with its control group" : "", percentile(boxed, 0.5), percentile(boxed, 0.99),
      percentile(plain, 0.5), percentile(plain, 0.99), runs);
  if (groups)
    std::printf(
        "| sandbox start per command: bubblewrap, rlimits only, p50 / p99 | %.1f / %.1f ms | "
        "sandbox_bench, same "
        "runs |\n",
        percentile(bare, 0.5), percentile(bare, 0.99));
  executor.reset();
  rlimits_only.reset();
  fs::remove_all(dir);
  return 0;
}
