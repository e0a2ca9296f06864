// The real daemon with `executor: slurm` against a one-node cluster this test starts: a tree's
// validations run as jobs (the cluster's jobcomp record has them, the iteration logs name
// them), `stop` leaves nothing on the cluster, and a drained node pauses the loop with the
// reason instead of failing it.
#include "daemon/daemon_fixture.hpp"
#include "slurm/slurm_cluster.hpp"

using namespace loopr;
using namespace loopr::testing;

namespace {

TreeScript two_code_loops();

class DaemonSlurmTest : public DaemonFixture {
 protected:
  void SetUp() override {
    std::string why;
    cluster = SlurmCluster::start(why);
    if (!cluster) GTEST_SKIP() << "Slurm tests skipped: " << why;
    env_overrides["SLURM_CONF"] = cluster->conf();
  }

  std::string slurm_config(const std::string& extra = {}) {
    return "executor:\n  kind: slurm\n  worktree_root: " + shared.str() +
           "\n  slurm:\n    partition: debug\n    cpus: 1\n" + extra;
  }

  bool queue_empty() {
    return wait_until([&] { return cluster->queue().find("loopr-") == std::string::npos; },
                      kSlowCluster);
  }

  // A tree whose first code loop's validation runs (`sleep 300`) as a job step on the node, and
  // the step's own first line reached the daemon (squeue says RUNNING a moment before; a stop
  // during the step's launch is Slurm's race to clean up, not what these tests are about).
  void start_a_slow_validation() {
    make_repo(slurm_config() + "baseline: off\n");  // the code loop's validation is the job
    write_file(dir / "check.sh", "echo validating; sleep 300\n");
    run_command("git add check.sh && git commit -qm slow", dir.str());
    base_may_fail = true;
    TreeScript s = two_code_loops();
    s.specs = {"alpha"};
    start_mock(s);
    start_daemon();
    approve_tree("Make the files");
    ASSERT_TRUE(wait_until([&] { return cluster->queue().find("RUNNING") != std::string::npos; },
                           kSlowCluster))
        << dump_loops() << cluster->queue();
    nlohmann::json health;
    EXPECT_TRUE(wait_until(
        [&] {
          health = api("GET", "/v1/health").body;
          return health["sandbox"]["executor"]["jobs_running"] == 1;
        },
        kSlowCluster))
        << health.dump();
  }

  // What a failure needs to tell Slurm's cleanup from ours: the queue, the job as the controller
  // sees it, the step's processes still on the node, the daemons' logs.
  std::string cluster_state() {
    return cluster->queue() + "\n" + run_command("scontrol show job 2>&1 | head -40", "/").output +
           "\nprocesses: " +
           run_command(
               "ps -eo pid,ppid,stat,args | grep -E 'sleep 300|bwrap|slurmstepd' | grep -v grep",
               "/")
               .output +
           "\n" + cluster->logs();
  }

  std::string approve_tree(const std::string& request) {
    std::string plan = submit(request);
    EXPECT_TRUE(wait_status(plan, "awaiting_approval")) << dump_loops();
    api("POST", "/v1/loops/" + plan + "/approve");
    return plan;
  }

  std::unique_ptr<SlurmCluster> cluster;
  TempDir shared{"loopr-slurm-shared"};  ///< the "shared filesystem" of the worktree root
};

TreeScript two_code_loops() {
  TreeScript s;
  s.specs = {"alpha", "beta"};
  s.phases = 1;
  return s;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_F(DaemonSlurmTest, TheTreeCompletesWithEveryValidationAJobOnTheCluster) {
  make_repo(slurm_config());
  start_mock(two_code_loops());
  start_daemon();
  auto health = api("GET", "/v1/health");
  ASSERT_TRUE(health.body["sandbox"].contains("executor")) << health.body.dump();
  EXPECT_EQ(health.body["sandbox"]["executor"]["kind"], "slurm");
  EXPECT_EQ(health.body["sandbox"]["kind"], "slurm");

  std::string plan = approve_tree("Make the files");
  ASSERT_TRUE(wait_loops(
      [](auto& l) {
        for (const auto& [id, loop] : l)
          if (loop["status"] != "complete") return false;
        return l.size() >= 7;
      },
      std::chrono::seconds(240)))
      << dump_loops() << cluster->logs();
  ASSERT_TRUE(
      wait_until([&] { return git("log --format=%s main").find("loopr(") != std::string::npos; },
                 std::chrono::seconds(60)))
      << git("log --oneline -5 main");

  // Worktrees were made under the worktree root, and the link is not an untracked file.
  EXPECT_TRUE(std::filesystem::is_symlink(dir / ".loopr/worktrees"));
  EXPECT_EQ(std::filesystem::read_symlink(dir / ".loopr/worktrees").parent_path(), shared.path());
  EXPECT_EQ(git("status --porcelain").find(".loopr/worktrees"), std::string::npos)
      << git("status --porcelain");

  // Each code loop's validation names its job, and the cluster recorded that job as completed.
  std::string record = cluster->completed_jobs();
  for (const char* id : {"code-001-001-001", "code-001-002-001"}) {
    std::string log = read_file(RepoPaths(dir.path()).iteration_dir(id, 1) / "validation.log");
    auto at = log.find("[loopr: Slurm job ");
    ASSERT_NE(at, std::string::npos) << log;
    std::string job = log.substr(at + 18, log.find(']', at) - at - 18);
    EXPECT_NE(record.find("JobId=" + job + " "), std::string::npos) << job << "\n" << record;
  }
  // The probe, two validations and the integration gate's check at least.
  EXPECT_GE(count(record, "Name=loopr-"), 4u) << record;
  EXPECT_EQ(count(record, "JobState=FAILED"), 0u) << record;
  EXPECT_TRUE(queue_empty()) << cluster->queue();
}

TEST_F(DaemonSlurmTest, StopCancelsTheRunningJobAndLeavesNothingOnTheCluster) {
  ASSERT_NO_FATAL_FAILURE(start_a_slow_validation());
  nlohmann::json health;
  ASSERT_EQ(api("POST", "/v1/loops/code-001-001-001/stop").status, 200);
  ASSERT_TRUE(wait_status("code-001-001-001", "stopped", kSlowCluster)) << dump_loops();
  EXPECT_TRUE(queue_empty()) << cluster_state();
  health = api("GET", "/v1/health").body;
  EXPECT_EQ(health["sandbox"]["executor"]["jobs_running"], 0) << health.dump();
  EXPECT_EQ(health["sandbox"]["executor"]["jobs_queued"], 0) << health.dump();
}

TEST_F(DaemonSlurmTest, ADaemonStopCancelsTheRunningJob) {
  ASSERT_NO_FATAL_FAILURE(start_a_slow_validation());
  ::kill(daemon_pid, SIGTERM);
  bool exited = wait_until([&] { return ::waitpid(daemon_pid, nullptr, WNOHANG) == daemon_pid; },
                           kSlowCluster);
  if (!exited) kill_daemon();
  daemon_pid = -1;
  EXPECT_TRUE(exited) << "the daemon did not stop with a job running; log:\n" << tail_log();
  EXPECT_TRUE(queue_empty()) << cluster_state();
}

TEST_F(DaemonSlurmTest, ADrainedNodePausesTheLoopWithTheReasonAndResumeFinishesIt) {
  make_repo(slurm_config("    queue_timeout: 2s\n    max_attempts: 2\n    retry_backoff: 1s\n"));
  TreeScript s = two_code_loops();
  s.specs = {"alpha"};
  start_mock(s);
  start_daemon();  // the probe job ran: the cluster was up at start
  cluster->drain("loopr-drain-test");
  approve_tree("Make the files");
  ASSERT_TRUE(wait_status("code-001-001-001", "paused", kSlowCluster)) << dump_loops();
  auto l = loops(true);
  const auto& code = l["code-001-001-001"];
  std::string reason = code.value("status_reason", "");
  EXPECT_NE(reason.find("could not run"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr-drain-test"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loopr resume code-001-001-001"), std::string::npos) << reason;
  EXPECT_EQ(code["iteration"], 0) << "a job that never ran is not a failed iteration";
  // The model was never told its tests failed.
  for (const auto& r : mock->requests()) {
    std::string text = r.dump();
    EXPECT_EQ(text.find("could not start"), std::string::npos);
    EXPECT_EQ(text.find("never ran"), std::string::npos);
    EXPECT_EQ(text.find("loopr-drain-test"), std::string::npos);
  }
  // Both lost tries are events.
  std::vector<daemon::SseMessage> events;
  auto history =
      client().stream("/v1/events?since=0&follow=false", [&](const daemon::SseMessage& m) {
        events.push_back(m);
        return true;
      });
  EXPECT_FALSE(history.ok());  // follow=false: the stored events, then the daemon ends the stream
  int retries = 0;
  for (const auto& e : events) retries += e.event == "executor_retry";
  EXPECT_EQ(retries, 2);

  cluster->resume();
  ASSERT_TRUE(wait_until([&] { return cluster->run("sinfo -h -o %t").output.find("idle") == 0; },
                         kSlowCluster));
  ASSERT_EQ(api("POST", "/v1/loops/code-001-001-001/resume").status, 200);
  ASSERT_TRUE(wait_status("code-001-001-001", "complete", kSlowCluster)) << dump_loops();
  EXPECT_EQ(loops(true)["code-001-001-001"]["iteration"], 1);
}

TEST_F(DaemonSlurmTest, TheDaemonRefusesToStartWhenTheProbeJobCannotRun) {
  make_repo(
      slurm_config().replace(slurm_config().find("partition: debug"), 16, "partition: nosuch"));
  start_mock(two_code_loops());
  daemon::DaemonOptions options;
  options.repo = dir.str();
  std::string conf = cluster->conf();
  options.env = [conf](const char* name) -> std::optional<std::string> {
    std::string n = name;
    if (n == "SLURM_CONF") return conf;
    if (n == "ANTHROPIC_API_KEY") return std::string("test-key");
    if (n.rfind("LOOPR_", 0) == 0 || n.rfind("ANTHROPIC_", 0) == 0) return std::nullopt;
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto started = daemon::run_daemon(options);
  ASSERT_FALSE(started.ok());
  const std::string& why = started.error().message;
  EXPECT_NE(why.find("executor: slurm: the Slurm probe job did not run"), std::string::npos) << why;
  EXPECT_NE(why.find("Invalid partition"), std::string::npos) << why;
  EXPECT_NE(why.find("(check that `srun true` works"), std::string::npos) << why;
  EXPECT_TRUE(queue_empty()) << cluster->queue();
}
