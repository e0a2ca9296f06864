// `executor:` in the config: local by default, slurm with its settings; errors name file, line
// and key; a change is one of the keys that need a daemon restart.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>

#include "support/config_errors.hpp"

using namespace loopr;
using namespace std::chrono_literals;

namespace {

std::string error_of(const std::string& yaml) { return loopr::testing::config_error_of(yaml); }

}  // namespace

TEST(ConfigExecutorTest, LocalByDefault) {
  Config c;
  EXPECT_EQ(c.executor.kind, ExecutorKind::local);
  EXPECT_TRUE(c.executor.worktree_root.empty());
  auto local = parse_config("executor: local\n", "c.yml");
  ASSERT_TRUE(local.ok()) << local.error().message;
  EXPECT_EQ(local->executor.kind, ExecutorKind::local);
}

TEST(ConfigExecutorTest, ReadsEverySlurmSetting) {
  auto c = parse_config(
      "executor:\n"
      "  kind: slurm\n"
      "  worktree_root: /shared/wt\n"
      "  slurm:\n"
      "    partition: batch\n"
      "    account: proj-1\n"
      "    qos: normal\n"
      "    cpus: 2\n"
      "    memory: 4G\n"
      "    classes:\n"
      "      heavy: {partition: big, cpus: 8, memory: 16G}\n"
      "    srun_args: [\"--constraint=avx2\"]\n"
      "    time_limit: 2h\n"
      "    queue_timeout: 30s\n"
      "    max_attempts: 5\n"
      "    retry_backoff: 2s\n"
      "    cancel_timeout: 90s\n"
      "    bin_dir: /opt/slurm/bin\n",
      "c.yml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const ExecutorConfig& e = c->executor;
  EXPECT_EQ(e.kind, ExecutorKind::slurm);
  EXPECT_EQ(e.worktree_root, "/shared/wt");
  EXPECT_EQ(e.slurm.partition, "batch");
  EXPECT_EQ(e.slurm.account, "proj-1");
  EXPECT_EQ(e.slurm.qos, "normal");
  EXPECT_EQ(e.slurm.cpus, 2);
  EXPECT_EQ(e.slurm.memory, 4ULL << 30);
  ASSERT_TRUE(e.slurm.classes.count("heavy"));
  EXPECT_EQ(e.slurm.classes.at("heavy").partition, "big");
  EXPECT_EQ(e.slurm.classes.at("heavy").cpus, 8);
  EXPECT_EQ(e.slurm.classes.at("heavy").memory, 16ULL << 30);
  EXPECT_EQ(e.slurm.srun_args, std::vector<std::string>{"--constraint=avx2"});
  EXPECT_EQ(e.slurm.time_limit, 2h);
  EXPECT_EQ(e.slurm.queue_timeout, 30s);
  EXPECT_EQ(e.slurm.max_attempts, 5);
  EXPECT_EQ(e.slurm.retry_backoff, 2s);
  EXPECT_EQ(e.slurm.cancel_timeout, 90s);
  EXPECT_EQ(e.slurm.bin_dir, "/opt/slurm/bin");
}

TEST(ConfigExecutorTest, ErrorsNameFileLineAndKey) {
  std::string e = error_of("executor:\n  kind: slurm\n  slurm:\n    partitoin: batch\n");
  EXPECT_NE(e.find(".loopr/config.yml:4: executor.slurm.partitoin: unknown key"), std::string::npos)
      << e;
  e = error_of("executor:\n  kind: kubernetes\n");
  EXPECT_NE(e.find(":2: executor.kind: must be one of local | slurm"), std::string::npos) << e;
  e = error_of("executor:\n  kind: slurm\n  worktree_root: shared/wt\n");
  EXPECT_NE(e.find(":3: executor.worktree_root"), std::string::npos) << e;
  EXPECT_NE(e.find("absolute path"), std::string::npos) << e;
  e = error_of("executor:\n  slurm: {partition: batch}\n");
  EXPECT_NE(e.find("executor.slurm: is set but executor.kind is \"local\""), std::string::npos)
      << e;
  e = error_of("executor:\n  kind: slurm\n  slurm:\n    partition: \"a b; rm -rf\"\n");
  EXPECT_NE(e.find(":4: executor.slurm.partition"), std::string::npos) << e;
  e = error_of("executor:\n  kind: slurm\n  slurm:\n    cpus: 0\n");
  EXPECT_NE(e.find("executor.slurm.cpus: must be between 1"), std::string::npos) << e;
  e = error_of("executor:\n  kind: slurm\n  slurm:\n    time_limit: 10s\n");
  EXPECT_NE(e.find("executor.slurm.time_limit: must be at least"), std::string::npos) << e;
}

TEST(ConfigExecutorTest, AChangeNeedsARestart) {
  auto a = parse_config("executor: local\n", "c.yml");
  auto b = parse_config("executor: {kind: slurm, slurm: {partition: x}}\n", "c.yml");
  ASSERT_TRUE(a.ok() && b.ok());
  auto changed = restart_keys_changed(*a, *b);
  EXPECT_NE(std::find(changed.begin(), changed.end(), "executor"), changed.end());
  EXPECT_TRUE(restart_keys_changed(*b, *b).empty());
}
