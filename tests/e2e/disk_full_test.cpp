// A full disk for real: the repository (store, worktrees, logs) on a size-limited tmpfs in a
// private mount namespace of this test process (root only; the test skips where it cannot make
// one). Below limits.min_free_space no iteration starts: the loop pauses with `disk full: N MiB
// free in DIR`, `daemon status` and `doctor` say so, and the loop resumes by itself once there is
// space. A model command that fills the disk: the writes that fail (checkpoint, store) lose
// nothing stored, the daemon keeps serving, and once space is freed the tree finishes, `git fsck`
// is clean and the store opens with every iteration record written before.
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <loopr/core/disk.hpp>

#include "e2e/cli_fixture.hpp"

using namespace loopr::testing;
using nlohmann::json;

namespace {

// The e2e tree, each code loop's first iteration filling the disk with its one command.
std::string filling_script() {
  std::string y = CliScript{}.yaml();
  const std::string rules = "rules:\n";
  const std::string fill =
      "  - name: fill-the-disk\n    match: {loop_type: code, turn: 1}\n    times: 1\n"
      "    per_loop: true\n    reply:\n      tool_use:\n        - name: run_command\n"
      "          input: {command: \"head -c 2000M /dev/zero > fill.bin; echo filled\"}\n";
  return y.insert(y.find(rules) + rules.size(), fill);
}

}  // namespace

class DiskFullE2E : public CliE2E {
 protected:
  void SetUp() override {
    // Skipped only where the capability is missing (not root, or a container without
    // CAP_SYS_ADMIN); a tmpfs that cannot be mounted once the namespace exists is a failure.
    if (::geteuid() != 0) GTEST_SKIP() << "a tmpfs of its own needs root (CI runs as root)";
    // Namespaces are per thread; the test's commands (and the daemon they start) are children
    // of this thread, so they see the tmpfs and nobody else does.
    if (::unshare(CLONE_NEWNS) != 0)
      GTEST_SKIP() << "no private mount namespace: unshare(CLONE_NEWNS): " << std::strerror(errno);
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      GTEST_SKIP() << "cannot make the mounts private: " << std::strerror(errno);
  }

  void TearDown() override {
    CliE2E::TearDown();
    if (mounted_) ::umount2(dir.str().c_str(), MNT_DETACH);
  }

  // The repository's folder on a tmpfs of `size`; false (with why) when it cannot be mounted.
  ::testing::AssertionResult mount_tmpfs(const std::string& size) {
    mounted_ = ::mount("tmpfs", dir.str().c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted_)
      return ::testing::AssertionFailure()
             << "mount tmpfs on " << dir.str() << ": " << std::strerror(errno);
    return ::testing::AssertionSuccess();
  }

  json health() {
    CliRun r = loopr("--json daemon status");
    auto j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }

  json show(const std::string& id) {
    CliRun r = loopr("--json show " + id);
    auto j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }

  // The status changes of `id` into `paused` for want of space, from the event log.
  std::vector<std::string> disk_pauses(const std::string& id) {
    std::vector<std::string> out;
    auto j = json::parse(loopr("--json logs").out, nullptr, false);
    if (j.is_discarded()) return out;
    for (const auto& e : j["events"])
      if (e["loop_id"] == id && e["type"] == "status_changed" && e["data"]["to"] == "paused" &&
          e["data"].value("end_reason", "") == "disk_full")
        out.push_back(e["data"].value("reason", ""));
    return out;
  }

  bool mounted_ = false;
};

TEST_F(DiskFullE2E, BelowTheFloorNoIterationStartsAndTheLoopResumesItselfWithSpace) {
  ASSERT_TRUE(mount_tmpfs("200m"));
  make_repo_with(CliScript{}.yaml(), "echo ok\n",
                 "limits:\n  min_free_space: 48M\nloops:\n  code: {max_iterations: 2, "
                 "validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  // The daemon first (its store reserves room for its log), then someone else's file leaves
  // 24 MiB, less than the floor.
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  ASSERT_TRUE(
      wait_until([&] { return health().value("running", false); }, std::chrono::seconds(30)));
  auto free = loopr::free_bytes(dir.path());
  ASSERT_TRUE(free && *free > (24u << 20));
  auto filled = run_command(
      "head -c " + std::to_string(*free - (24u << 20)) + " /dev/zero > ballast.bin", dir.str());
  ASSERT_EQ(filled.exit_code, 0) << filled.output;

  ASSERT_EQ(loopr("submit 'Tight disk'").exit_code, 0);
  ASSERT_TRUE(wait_status("001", "paused"));
  json plan = show("001");
  EXPECT_EQ(plan["end_reason"], "disk_full") << plan.dump();
  const std::string why = loopr("show 001").out;  // the reason is in the text, not --json
  EXPECT_NE(why.find("disk full: "), std::string::npos) << why;
  EXPECT_NE(why.find(" MiB free in " + dir.str()), std::string::npos) << why;
  EXPECT_EQ(plan.value("iteration", -1), 0) << "no iteration started";

  // The daemon serves and says so; doctor too.
  ASSERT_TRUE(wait_until(
      [&] { return health().value("disk", json::object()).value("paused_loops", 0) == 1; },
      std::chrono::seconds(30)));
  json h = health();
  EXPECT_TRUE(h["disk"]["full"].get<bool>()) << h.dump();
  EXPECT_EQ(h["disk"]["min_free_mib"], 48);
  CliRun status = loopr("daemon status");
  EXPECT_NE(status.out.find("disk full: "), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("1 loop paused"), std::string::npos) << status.out;
  CliRun doctor = loopr("doctor");
  EXPECT_NE((doctor.out + doctor.err).find("disk full"), std::string::npos)
      << doctor.out << doctor.err;

  // Space back: it goes on by itself and reaches the gate.
  std::filesystem::remove(dir / "ballast.bin");
  ASSERT_TRUE(wait_status("001", "awaiting_approval"));
  EXPECT_FALSE(health()["disk"]["full"].get<bool>());
}

TEST_F(DiskFullE2E, AModelCommandThatFillsTheDiskLosesNothingAndTheTreeFinishesOnceSpaceIsBack) {
  ASSERT_TRUE(mount_tmpfs("256m"));
  make_repo_with(filling_script(), "echo ok\n",
                 "limits:\n  min_free_space: 16M\nloops:\n  code: {max_iterations: 3, "
                 "validation: \"sh check.sh\", iteration_timeout: 1m}\n");
  ASSERT_NO_FATAL_FAILURE(submit_and_approve("'Fill it'"));

  // The code loop's command fills the disk; the daemon notices and keeps serving.
  const std::string code = "code-001-001-001";
  const auto fill = dir / ".loopr/worktrees" / code / "fill.bin";
  ASSERT_TRUE(
      wait_until([&] { return std::filesystem::exists(fill) && health()["disk"]["full"] == true; },
                 std::chrono::seconds(120)))
      << health().dump();
  // The records stored before the disk filled (plan, spec, phase: one iteration each).
  std::map<std::string, std::size_t> before;
  for (const auto& [id, l] : loops())
    if (id != code) before[id] = show(id)["iterations"].size();
  EXPECT_EQ(before.size(), 3u);
  CliRun status = loopr("daemon status");
  EXPECT_NE(status.out.find("disk full: "), std::string::npos) << status.out;

  // Space freed: the loop goes on by itself, the tree finishes and is merged.
  std::filesystem::remove(fill);
  ASSERT_TRUE(wait_status("001", "complete", std::chrono::seconds(180))) << health().dump();
  EXPECT_FALSE(disk_pauses(code).empty()) << "the code loop paused for want of space";
  for (const auto& reason : disk_pauses(code))
    EXPECT_EQ(reason.rfind("disk full: ", 0), 0u) << reason;

  EXPECT_EQ(run_command("git fsck --strict 2>&1", dir.str()).exit_code, 0);
  // The store opens in a process of its own (the daemon stopped and started again) with every
  // record.
  ASSERT_EQ(loopr("daemon stop").exit_code, 0);
  ASSERT_EQ(loopr("daemon").exit_code, 0);
  for (const auto& [id, n] : before) EXPECT_GE(show(id)["iterations"].size(), n) << id;
  json c = show(code);
  EXPECT_EQ(c["status"], "complete") << c.dump();
  EXPECT_GE(c["iterations"].size(), 1u);
}
