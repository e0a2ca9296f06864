// The engine reads artifacts through the one reader (git/artifact.hpp), from the loop's own
// worktree: its input and its plan's artifact for the prompt, its own artifact for the format
// check. The model's commands may leave a symlink to the person's key or a FIFO at any of those
// paths: the secret reaches no prompt, no judge and no feedback, and no read waits. (The state
// read sweeps such entries away first; the reader holds for what a command makes after it.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/store/store_writes.hpp>

#include "support/fakes/engine_kit.hpp"

using namespace loopr;
using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const std::string kSecret = "SECRET-KEY-of-the-person";

// A phase loop's model that writes nothing: the format check judges what is at the path.
const char* kIdlePhase = R"(
rules:
  - name: idle
    match: {loop_type: phase}
    reply: {text: "I read the input."}
)";

// Phase 001-001-001 of plan 001 with its worktree; its input is its spec's artifact. The prompt
// shows the input and the plan's purpose.
struct PhaseKit {
  EngineKit kit{kIdlePhase, {{"README", "a project\n"}}};
  TempDir home{"loopr-home"};
  Loop plan, phase;
  fs::path input, plans_artifact, own;

  PhaseKit() {
    kit.prompts.templates["phase"] += "Purpose:\n{{purpose}}\n";
    write_file(home / ".ssh/id_rsa", "# Plan\n\n## Overview\n" + kSecret + "\n");
    plan = kit.add_loop("001", LoopType::plan, "the plan", 1);
    phase = kit.add_loop("001-001-001", LoopType::phase, "the phase", 1);
    phase.input_artifact = artifact_path(LoopType::spec, "001-001", "the spec");
    phase = update_loop(*kit.store, phase).value();
    input = fs::path(phase.worktree) / phase.input_artifact;
    plans_artifact = fs::path(phase.worktree) / plan.output_artifacts.front();
    own = fs::path(phase.worktree) / phase.output_artifacts.front();
    for (const auto& p : {input, plans_artifact, own}) fs::create_directories(p.parent_path());
  }

  // Everything the model was sent, as one text.
  std::string sent() const {
    std::string out;
    for (const auto& r : kit.requests_of(phase.id)) out += r.dump() + "\n";
    return out;
  }
};

}  // namespace

// proves S1.12
TEST(EngineArtifactReadsTest, ASymlinkToASecretReachesNoPromptNoJudgeAndNoFeedback) {
  PhaseKit k;
  k.kit.config->llm.judge = true;
  for (const auto& p : {k.input, k.plans_artifact, k.own})
    fs::create_symlink(k.home / ".ssh/id_rsa", p);
  Loop done = k.kit.run(k.phase.id);
  EXPECT_EQ(done.status, LoopStatus::failed) << done.status_reason;
  const std::string sent = k.sent();
  ASSERT_FALSE(sent.empty()) << "the loop ran no iteration";
  EXPECT_EQ(sent.find(kSecret), std::string::npos) << sent.substr(0, 3000);
  EXPECT_NE(sent.find("cannot be read from the working tree"), std::string::npos)
      << sent.substr(0, 3000);
  auto iterations = k.kit.iterations(k.phase.id);
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_EQ(iterations[0].summary.find(kSecret), std::string::npos);
  EXPECT_EQ(iterations[0].output_excerpt.find(kSecret), std::string::npos);
  for (const auto& entry : done.run.feedback)
    EXPECT_EQ(entry.text.find(kSecret), std::string::npos) << entry.text;
}

TEST(EngineArtifactReadsTest, AnArtifactThatIsASymlinkIsNotReadEvenToAFileInsideTheWorktree) {
  PhaseKit k;
  write_file(fs::path(k.phase.worktree) / "real.md", "# Phase\n");
  fs::create_symlink(fs::path(k.phase.worktree) / "real.md", k.own);
  k.kit.run(k.phase.id);
  auto iterations = k.kit.iterations(k.phase.id);
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_NE(iterations[0].summary.find("is not a regular file"), std::string::npos)
      << iterations[0].summary;
  EXPECT_NE(iterations[0].output_excerpt.find("symbolic link"), std::string::npos)
      << iterations[0].output_excerpt;
}

// proves S1.12
TEST(EngineArtifactReadsTest, AFifoAtAnArtifactsPathHoldsNoIteration) {
  PhaseKit k;
  for (const auto& p : {k.input, k.plans_artifact, k.own}) ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  // (The state read's sweep removes what it finds of them first; the reader refuses what is
  // made after it: ArtifactReaderTest.AFifoAtTheArtifactsPathIsNeitherReadNorWaitedOn.)
  Loop done = k.kit.run(k.phase.id);  // returns: nothing waited on a FIFO
  EXPECT_EQ(done.status, LoopStatus::failed) << done.status_reason;
  EXPECT_EQ(k.kit.iterations(k.phase.id).size(), 1u);
  EXPECT_NE(k.sent().find("cannot be read from the working tree"), std::string::npos);
}

TEST(EngineArtifactReadsTest, AnInputOverTheLimitIsCutAndSaysSo) {
  PhaseKit k;
  k.kit.config->artifacts.max_bytes = 64;
  write_file(k.input, std::string(100, 'x'));
  k.kit.run(k.phase.id);
  const std::string sent = k.sent();
  EXPECT_NE(sent.find(std::string(64, 'x') + "\\n(the input artifact is cut here: it is larger "
                                             "than 64 bytes)"),
            std::string::npos)
      << sent.substr(0, 3000);
  EXPECT_EQ(sent.find(std::string(65, 'x')), std::string::npos);
}
