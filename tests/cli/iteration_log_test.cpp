// `loopr show ID --iteration N` reads the transcript files the engine writes.
#include "cli/iteration_log.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/core/text.hpp>

#include "support/iteration_folders.hpp"
#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::cli;
using namespace loopr::testing;

TEST(IterationLogTest, ReadsAndRendersPromptConversationAndValidation) {
  TempDir dir;
  RepoPaths paths(dir.path());
  auto d = dir / ".loopr/logs/loops/code-001-001-001/iterations/002";
  EXPECT_EQ(paths.iteration_dir("code-001-001-001", 2), d);
  write_file(d / "prompt.md", "# Task\nMake add.sh add\n");
  write_file(
      d / "conversation.jsonl",
      R"({"role":"user","content":[{"type":"text","text":"Make add.sh add"}]})"
      "\n"
      R"({"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"tool_use","id":"t1","name":"write_file","input":{"path":"add.sh"}}]})"
      "\n"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"wrote 10 bytes","is_error":false}]})"
      "\n"
      R"({"receipt":{"stop_reason":"end_turn"}})"
      "\n"
      "not json\n");
  write_file(d / "validation.log", "ok\n");
  IterationLog log = read_iteration_log(paths, "code-001-001-001", 2);
  ASSERT_EQ(log.conversation.size(), 5u);
  EXPECT_TRUE(log.conversation[4].value.is_string());
  EXPECT_EQ(log.conversation[4].kind, TranscriptEntry::Kind::raw);
  std::string out = render_iteration_log(log, Style{false});
  for (const char* s :
       {"code-001-001-001 iteration 2", "== prompt", "Make add.sh add", "-- assistant",
        "(thinking) hmm", "→ write_file {\"path\":\"add.sh\"}", "← wrote 10 bytes",
        "model call: {\"stop_reason\":\"end_turn\"}", "not json", "== validation", "ok\n"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
  auto j = iteration_log_json(log);
  EXPECT_EQ(j["iteration"], 2);
  EXPECT_EQ(j["prompt"], "# Task\nMake add.sh add\n");
  EXPECT_EQ(j["validation_log"], "ok\n");
  EXPECT_EQ(j["conversation"].size(), 5u);
}

TEST(IterationLogTest, MissingFilesAreNullNotErrors) {
  TempDir dir;
  IterationLog log = read_iteration_log(RepoPaths(dir.path()), "001", 1);
  auto j = iteration_log_json(log);
  EXPECT_TRUE(j["prompt"].is_null());
  EXPECT_TRUE(j["validation_log"].is_null());
  EXPECT_NE(render_iteration_log(log, Style{false}).find("(no prompt.md)"), std::string::npos);
}

// Everything in an iteration's files is the model's or its commands' text, the reviewer's verdict
// too (it quotes the diff): its controls are shown, never sent to the terminal.
TEST(IterationLogTest, EveryPartIsShownWithItsControlsVisible) {
  TempDir dir;
  RepoPaths paths(dir.path());
  auto d = dir / ".loopr/logs/loops/code-001-001-001/iterations/001";
  const std::string hostile = "CLIP\x1b]52;c;cHduZWQ=\x07 CSI\xc2\x9b";
  write_file(d / "prompt.md", "prompt " + hostile + "\n");
  write_file(d / "validation.log", "validation " + hostile + "\n");
  write_file(d / "review.md", "fail: review " + hostile + "\n");
  std::string out =
      render_iteration_log(read_iteration_log(paths, "code-001-001-001", 1), Style{false});
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
  for (const char* part : {"prompt", "validation", "fail: review"})
    EXPECT_NE(out.find(std::string(part) + " CLIP^[]52;c;cHduZWQ=^G CSI<U+009B>"),
              std::string::npos)
        << part << "\n"
        << out;
}

// Every file the engine writes (core/iteration_files.hpp's table; the engine's ReviewTest checks
// a reviewed iteration writes exactly those) is shown, in the text and in --json.
TEST(IterationLogTest, EveryFileTheEngineWritesIsShown) {
  TempDir dir;
  RepoPaths paths(dir.path());
  write_every_iteration_file(paths, "001", 1);
  IterationLog log = read_iteration_log(paths, "001", 1);
  const std::string text = render_iteration_log(log, Style{false});
  const std::string json = iteration_log_json(log).dump();
  for (const auto& spec : kIterationFiles) {
    EXPECT_NE(text.find(std::string("marker of ") + spec.name), std::string::npos) << text;
    EXPECT_NE(json.find(std::string("marker of ") + spec.name), std::string::npos) << json;
  }
}

// proves S5.33
// A hostile iteration folder: files symlinked to a secret, a FIFO, a transcript with fields of
// the wrong types (each threw before), bytes that are not UTF-8, controls, a line past the limit.
TEST(IterationLogTest, AHostileIterationFolderShowsNoSecretAndNeverThrows) {
  TempDir dir;
  RepoPaths paths(dir.path());
  const std::string secret = kIterationSecret;
  write_hostile_iteration(dir.path(), kIterationFileReadBytes);
  IterationLog log;
  ASSERT_NO_THROW(log = read_iteration_log(paths, "code-001-001-001", 1));
  std::string text, json;
  ASSERT_NO_THROW(text = render_iteration_log(log, Style{true}));
  ASSERT_NO_THROW(json = iteration_log_json(log).dump());
  for (const std::string& out : {text, json}) {
    EXPECT_EQ(out.find(secret), std::string::npos);
    EXPECT_TRUE(is_valid_utf8(out));
  }
  EXPECT_EQ(text.find("\x1b]"), std::string::npos);
  EXPECT_EQ(text.find("\x1b[2J"), std::string::npos);
  EXPECT_NE(text.find("(prompt.md is not a regular file: not shown)"), std::string::npos);
  EXPECT_NE(text.find("(validation.log is not a regular file: not shown)"), std::string::npos);
  EXPECT_NE(text.find("{\"text\":7,\"type\":\"text\"}"), std::string::npos);
  EXPECT_NE(text.find("(cut: the file is longer)"), std::string::npos);
  EXPECT_EQ(iteration_log_json(log)["truncated"], nlohmann::json::array({"conversation.jsonl"}));
  EXPECT_TRUE(iteration_log_json(log)["prompt"].is_null());
}
