// The manager reads a complete plan's artifact to spawn its children (and again for the approved
// plan the merge rules name) through the one artifact reader (git/artifact.hpp): what the model
// left at the artifact's path in the worktree while the plan waited at the gate, a symlink to the
// person's key or a FIFO, is never read; the children come from the plan as committed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include <loopr/core/config.hpp>
#include <loopr/engine/repo_prompts.hpp>

#include "support/fakes/demo_tree.hpp"

using namespace loopr;
using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "SECRET-KEY-of-the-person";

// A valid plan whose one spec carries the secret: what a leak would spawn.
std::string secret_plan() {
  return "# Plan\n\n## Overview\nLeak.\n\n## Phases\n1. Leak it.\n\n## Success Criteria\n- "
         "Leaked.\n\n## Specs to Create\n- spec-leak: " +
         kSecret + "\n";
}

// Submits the demo's plan, waits at the gate, puts `hostile` at the plan artifact's path in its
// worktree, approves, and returns the plan's tree once its children exist or it failed.
std::vector<Loop> approve_with(DemoTree& t, const std::function<void(const fs::path&)>& hostile) {
  manager::LoopManager& m = t.kit.manager();
  auto plan = t.kit.wait(m.submit("Add a --shout flag to greet"));
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_TRUE(t.kit.drive_while_not(
      [&] { return t.kit.loop("001").status == LoopStatus::awaiting_approval; }));
  Loop at_gate = t.kit.loop("001");
  const fs::path artifact = fs::path(at_gate.worktree) / at_gate.output_artifacts.front();
  hostile(artifact);
  auto approved = t.kit.wait(m.approve("001"));
  EXPECT_TRUE(approved.ok()) << approved.error().message;
  const bool spawned = t.kit.drive_while_not([&] {
    Loop p = t.kit.loop("001");
    return p.tree.spawned_iteration == p.iteration || p.status == LoopStatus::failed;
  });
  EXPECT_TRUE(spawned) << "the spawn hangs: " << t.kit.loop("001").status_reason;
  // A read that waits on a FIFO would hold a pool thread for good: let it end so the kit can.
  if (!spawned) ::close(::open(artifact.c_str(), O_WRONLY | O_NONBLOCK));
  return t.kit.store->loops_of_plan("001").value();
}

void expect_the_committed_plans_children(const std::vector<Loop>& tree) {
  std::vector<std::string> specs;
  for (const Loop& l : tree) {
    EXPECT_EQ(l.task.find(kSecret), std::string::npos) << l.id << " was spawned from the secret";
    if (l.type == LoopType::spec) specs.push_back(l.task.substr(0, l.task.find(':')));
  }
  // The demo's plan names two specs.
  EXPECT_EQ(specs, (std::vector<std::string>{"spec-shout-flag", "spec-shout-docs"}));
}

}  // namespace

// proves S1.12
TEST(ArtifactSpawnTest, APlanArtifactSwappedForASymlinkToASecretSpawnsNothingFromTheSecret) {
  DemoTree t(MergeMode::manual);
  TempDir home("loopr-home");
  write_file(home / ".ssh/id_rsa", secret_plan());
  auto tree = approve_with(t, [&](const fs::path& artifact) {
    fs::remove(artifact);
    fs::create_symlink(home / ".ssh/id_rsa", artifact);
  });
  expect_the_committed_plans_children(tree);
}

// The gate's forecast read the plan with an ifstream and held its pool thread on the FIFO for
// good (found by this test timing out in CI); it reads through the one reader now.
// proves S1.12
TEST(ArtifactSpawnTest, APlanArtifactSwappedForAFifoDoesNotHoldTheSpawn) {
  DemoTree t(MergeMode::manual);
  auto tree = approve_with(t, [&](const fs::path& artifact) {
    fs::remove(artifact);
    ASSERT_EQ(::mkfifo(artifact.c_str(), 0600), 0);
  });
  expect_the_committed_plans_children(tree);
}
