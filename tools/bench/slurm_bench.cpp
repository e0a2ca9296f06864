// What running commands on Slurm costs against the local sandbox, on the one-node cluster the
// Slurm tests start (tests/slurm/slurm_cluster.hpp; needs root, slurm-wlm and munge):
//  - `true` through each executor, p50 / p95 (the fixed cost per job);
//  - one validation that burns 2 s of CPU, alone, wall time through each (overhead per job);
//  - 20 such validations, one per worktree of 20 code loops, `workers` at once (the default
//    runners: 8), total wall time through each executor.
// Prints figures; asserts nothing.
//
//   slurm_bench [workers]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <vector>

#include <loopr/exec/executor.hpp>

#include "slurm/slurm_cluster.hpp"

using namespace loopr;
using namespace loopr::testing;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// 2 s of CPU, then exit 0: RLIMIT_CPU ends the busy loop after exactly that much CPU time.
const char* kBurn = "(ulimit -t 2; while :; do :; done) 2>/dev/null; echo burned";

}  // namespace

int main(int argc, char** argv) {
  int workers = argc > 1 ? std::atoi(argv[1]) : 8;
  std::string why;
  auto cluster = SlurmCluster::start(why);
  if (!cluster) {
    std::fprintf(stderr, "slurm_bench: %s\n", why.c_str());
    return 1;
  }
  TempDir dir{"loopr-slurm-bench"};
  fs::path repo = dir.path();
  std::string setup =
      "git init -q -b main . && git config user.email b@b && git config user.name b && "
      "echo x > f && git add f && git commit -qm i";
  for (int i = 1; i <= 20; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "code-%03d", i);
    setup += std::string(" && git worktree add -q .loopr/worktrees/") + id + " -b " + id;
  }
  if (run_command(setup, repo.string()).exit_code != 0) {
    std::fprintf(stderr, "slurm_bench: cannot make the repository\n");
    return 1;
  }
  exec::ExecutorOptions local_options{RepoPaths(repo)};
  exec::ExecutorOptions slurm_options{RepoPaths(repo)};
  std::string conf = cluster->conf();
  slurm_options.env = [conf](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "SLURM_CONF") return conf;
    return process_env()(name);
  };
  slurm_options.executor.kind = ExecutorKind::slurm;
  auto local = exec::make_executor(SandboxConfig{}, local_options);
  auto slurm = exec::make_executor(SandboxConfig{}, slurm_options);
  for (auto* e : {local.get(), slurm.get()})
    if (auto p = e->unavailable()) {
      std::fprintf(stderr, "slurm_bench: %s: %s\n", e->info().kind.c_str(), p->c_str());
      return 1;
    }
  auto worktree = [&](int i) {
    char id[16];
    std::snprintf(id, sizeof id, "code-%03d", i);
    return repo / ".loopr/worktrees" / id;
  };
  auto timed = [&](exec::Executor& e, const std::string& text, const fs::path& wd) {
    exec::Command c = exec::Command::shell(text, wd);
    c.timeout = std::chrono::minutes(5);
    auto t0 = Clock::now();
    ProcessResult r = e.run(c);
    if (!r.succeeded())
      std::fprintf(stderr, "slurm_bench: a command failed: %s\n", r.output.c_str());
    return ms(Clock::now() - t0);
  };

  std::vector<double> true_local, true_slurm, burn_local, burn_slurm;
  for (int i = 0; i < 30; ++i) {
    true_local.push_back(timed(*local, "true", worktree(1)));
    true_slurm.push_back(timed(*slurm, "true", worktree(1)));
  }
  for (int i = 0; i < 5; ++i) {
    burn_local.push_back(timed(*local, kBurn, worktree(1)));
    burn_slurm.push_back(timed(*slurm, kBurn, worktree(1)));
  }
  auto tree = [&](exec::Executor& e) {
    auto t0 = Clock::now();
    std::atomic<int> next{1};
    std::vector<std::future<void>> pool;
    for (int w = 0; w < workers; ++w)
      pool.push_back(std::async(std::launch::async, [&] {
        for (int i; (i = next++) <= 20;) timed(e, kBurn, worktree(i));
      }));
    for (auto& f : pool) f.get();
    return ms(Clock::now() - t0) / 1000.0;
  };
  double tree_local = tree(*local);
  double tree_slurm = tree(*slurm);
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);

  std::printf(
      "| figure | local (bubblewrap) | Slurm (srun + bubblewrap on the node) | Slurm overhead |\n");
  std::printf("|---|---|---|---|\n");
  std::printf(
      "| `true`, p50 / p95 (30 runs each) | %.1f / %.1f ms | %.1f / %.1f ms | %.1f ms per job at "
      "p50 |\n",
      percentile(true_local, 0.5), percentile(true_local, 0.95), percentile(true_slurm, 0.5),
      percentile(true_slurm, 0.95), percentile(true_slurm, 0.5) - percentile(true_local, 0.5));
  std::printf(
      "| one validation burning 2 s of CPU, alone, p50 (5 runs) | %.0f ms | %.0f ms | %.0f ms per "
      "job |\n",
      percentile(burn_local, 0.5), percentile(burn_slurm, 0.5),
      percentile(burn_slurm, 0.5) - percentile(burn_local, 0.5));
  std::printf(
      "| 20 code loops' validations (2 s CPU each), %d at once, %ld cores | %.1f s | %.1f s | %.0f "
      "ms per job |\n",
      workers, cores, tree_local, tree_slurm, (tree_slurm - tree_local) * 1000.0 / 20.0);
  return 0;
}
