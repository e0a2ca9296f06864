// What provisioning a worktree costs (issue 27): for N fresh worktrees of a Node-shaped
// repository (an untracked node_modules shown read-only through `sandbox.read_only`), the
// worktree made, one `setup:` command run in it through the bubblewrap executor, and the
// baseline check's whole round (worktree, setup, the test command `node_modules/.bin/t`,
// worktree removed). Prints p50 / p99; asserts nothing.
//
//   provision_bench [runs]    (default 20)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include <loopr/exec/executor.hpp>
#include <loopr/git/loop_worktrees.hpp>

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
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  char tmpl[] = "/tmp/loopr-provision-bench-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  fs::path repo = dir / "repo";
  fs::create_directories(repo);
  if (sh("cd " + repo.string() +
         " && git init -q -b main . && git config user.email b@b && git config user.name b && "
         "printf 'node_modules/\\n.loopr/\\n' > .gitignore && echo x > f && git add -A && "
         "git commit -qm i && mkdir -p node_modules/.bin && printf '#!/bin/sh\\necho 3 passing\\n' "
         "> node_modules/.bin/t && chmod +x node_modules/.bin/t") != 0) {
    std::fprintf(stderr, "provision_bench: cannot make the repository\n");
    return 1;
  }
  SandboxConfig config;
  config.read_only = {"node_modules"};
  auto executor = exec::make_executor(config, {RepoPaths(repo)});
  if (auto problem = executor->unavailable()) {
    std::fprintf(stderr, "provision_bench: the sandbox does not work here: %s\n", problem->c_str());
    return 1;
  }
  git::LoopWorktrees worktrees(repo);
  std::vector<double> made, setup, baseline;
  for (int i = 0; i < runs; ++i) {
    const std::string name = "bench-" + std::to_string(i);
    auto t0 = Clock::now();
    auto wt = worktrees.prepare_scratch(name, "main");
    auto t1 = Clock::now();
    if (!wt) {
      std::fprintf(stderr, "provision_bench: %s\n", wt.error().message.c_str());
      return 1;
    }
    auto s = executor->run(exec::Command::shell("echo generated > gen.txt", wt->worktree));
    auto t2 = Clock::now();
    auto v = executor->run(exec::Command::shell("node_modules/.bin/t", wt->worktree));
    auto removed = worktrees.remove_scratch(name);
    auto t3 = Clock::now();
    if (s.exit_code != 0 || v.exit_code != 0 || !removed) {
      std::fprintf(stderr, "provision_bench: a run failed: %s%s\n", s.output.c_str(),
                   v.output.c_str());
      return 1;
    }
    made.push_back(ms(t1 - t0));
    setup.push_back(ms(t2 - t1));
    baseline.push_back(ms(t3 - t0));
  }
  std::printf(
      "| provisioning per worktree: worktree made / one `setup:` command, p50 / p99 | %.1f / "
      "%.1f ms, %.1f / %.1f ms | provision_bench, %d fresh worktrees, node_modules read-only |\n",
      percentile(made, 0.5), percentile(made, 0.99), percentile(setup, 0.5),
      percentile(setup, 0.99), runs);
  std::printf(
      "| baseline check round (worktree, setup, a trivial test command, removal) p50 / p99 | "
      "%.1f / %.1f ms | provision_bench, same runs; the project's own tests come on top |\n",
      percentile(baseline, 0.5), percentile(baseline, 0.99));
  executor.reset();
  fs::remove_all(dir);
  return 0;
}
