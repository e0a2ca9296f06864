// The srun line and the reading of a step's markers, without a cluster.
#include "exec/slurm_step.hpp"

#include <gtest/gtest.h>

using namespace loopr;
using namespace loopr::exec;

TEST(SlurmStep, SrunLineHasTheSettingsAndTheClassOverrides) {
  SlurmConfig c;
  c.partition = "main";
  c.account = "proj";
  c.qos = "short";
  c.cpus = 2;
  c.memory = 4ULL << 30;
  c.classes["heavy"] = {"big", 8, 0};
  c.srun_args = {"--exclusive"};
  StepRequest r;
  r.job_name = "loopr-x-1";
  r.runner_class = "heavy";
  r.timeout = std::chrono::seconds(90);
  r.command = {"bwrap", "--", "true"};
  auto a = srun_argv(c, "srun", r);
  auto has = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); };
  EXPECT_TRUE(has("--partition=big"));
  EXPECT_TRUE(has("--cpus-per-task=8"));
  EXPECT_TRUE(has("--mem=4096M"));
  EXPECT_TRUE(has("--account=proj"));
  EXPECT_TRUE(has("--qos=short"));
  EXPECT_TRUE(has("--time=3"));  // 90 s + a minute, rounded up
  EXPECT_TRUE(has("--exclusive"));
  EXPECT_TRUE(has("--job-name=loopr-x-1"));
  EXPECT_EQ(a.back(), "true");
  r.runner_class = "default";
  a = srun_argv(c, "srun", r);
  EXPECT_TRUE(has("--partition=main"));
  EXPECT_TRUE(has("--cpus-per-task=2"));
}

TEST(SlurmStep, MarkersAreReadAndTakenOut) {
  auto rep = read_step_output(
      "@@loopr-slurm started job=42 node=n1@@\nhello\nworld\n\n@@loopr-slurm finished started=1 "
      "rc=3 timedout=0@@\n");
  ASSERT_TRUE(rep.job_id);
  EXPECT_EQ(*rep.job_id, "42");
  EXPECT_TRUE(rep.finished);
  EXPECT_TRUE(rep.sandbox_started);
  EXPECT_EQ(rep.exit_code, 3);
  EXPECT_FALSE(rep.timed_out);
  EXPECT_EQ(rep.output, "hello\nworld\n");
  auto partial = read_step_output(
      "@@loopr-slurm started job=7 node=n1@@\nno newline\n@@loopr-slurm finished started=1 rc=0 "
      "timedout=1@@\n");
  EXPECT_EQ(partial.output, "no newline");
  EXPECT_TRUE(partial.timed_out);
  auto never =
      read_step_output("srun: error: Unable to allocate resources: Requested nodes are busy\n");
  EXPECT_FALSE(never.job_id);
  EXPECT_FALSE(never.finished);
  EXPECT_EQ(never.output, "srun: error: Unable to allocate resources: Requested nodes are busy\n");
}
