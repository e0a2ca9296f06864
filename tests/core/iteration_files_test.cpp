// The iteration files' one reader, writer and transcript parser (core/iteration_files.hpp), on
// real folders: what the model wrote is read capped, as valid UTF-8, never through a symlink or
// from a FIFO, and every line of a conversation becomes a typed entry, never an exception.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/core/iteration_files.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::testing;
using nlohmann::json;

namespace {

const std::string kId = "code-001-001-001";
const std::string kSecret = "SECRET-KEY-do-not-show";

std::string text_of(const IterationRead& r, IterationFile f) { return r[f].text.value_or(""); }

}  // namespace

TEST(IterationFilesTest, TheWriterAndTheReaderUseTheOneTable) {
  TempDir dir;
  RepoPaths paths(dir.path());
  for (const auto& spec : kIterationFiles)
    write_iteration_file(paths, kId, 3, spec.file, std::string("text of ") + spec.name);
  IterationRead r = read_iteration_files(paths, kId, 3, kIterationFilePageBytes);
  EXPECT_EQ(r.dir, paths.iteration_dir(kId, 3));
  for (const auto& spec : kIterationFiles) {
    EXPECT_EQ(file_name(spec.file), std::string(spec.name));
    EXPECT_EQ(read_file(r.dir / spec.name), std::string("text of ") + spec.name);
    EXPECT_EQ(text_of(r, spec.file), std::string("text of ") + spec.name);
    EXPECT_FALSE(r[spec.file].truncated);
  }
  // Written again: replaced, not appended.
  write_iteration_file(paths, kId, 3, IterationFile::validation, "again");
  EXPECT_EQ(read_file(r.dir / "validation.log"), "again");
}

TEST(IterationFilesTest, AMissingFileSaysSoAndALongOneIsCut) {
  TempDir dir;
  RepoPaths paths(dir.path());
  write_iteration_file(paths, kId, 1, IterationFile::conversation, std::string(5000, 'x'));
  IterationRead r = read_iteration_files(paths, kId, 1, 1000);
  EXPECT_FALSE(r[IterationFile::prompt].text);
  EXPECT_EQ(r[IterationFile::prompt].problem, "(no prompt.md)");
  EXPECT_EQ(text_of(r, IterationFile::conversation), std::string(1000, 'x'));
  EXPECT_TRUE(r[IterationFile::conversation].truncated);
  // No folder at all (an iteration that never ran): every file missing.
  IterationRead none = read_iteration_files(paths, kId, 9, 1000);
  for (const auto& f : none.files) EXPECT_EQ(f.problem.substr(0, 4), "(no ");
}

// proves S5.33
TEST(IterationFilesTest, ASymlinkOrFifoInTheFolderIsNeverFollowedNorWaitedOn) {
  TempDir dir;
  RepoPaths paths(dir.path());
  write_file(dir / "secret.txt", kSecret);
  const auto d = paths.iteration_dir(kId, 1);
  std::filesystem::create_directories(d);
  std::filesystem::create_symlink(dir / "secret.txt", d / "prompt.md");
  std::filesystem::create_symlink(dir / "secret.txt", d / "review.md");
  ASSERT_EQ(::mkfifo((d / "conversation.jsonl").c_str(), 0600), 0);  // would block a read
  IterationRead r = read_iteration_files(paths, kId, 1, kIterationFilePageBytes);
  for (const auto& f : r.files) EXPECT_EQ(f.text.value_or("").find(kSecret), std::string::npos);
  EXPECT_EQ(r[IterationFile::prompt].problem, "(prompt.md is not a regular file: not shown)");
  EXPECT_EQ(r[IterationFile::conversation].problem,
            "(conversation.jsonl is not a regular file: not shown)");
  // The iteration's folder itself a symlink to a folder of secrets, or an id that leaves the
  // logs folder: nothing is read.
  const auto secrets = dir / "secrets";
  write_file(secrets / "prompt.md", kSecret);
  std::filesystem::create_symlink(secrets, paths.iteration_dir(kId, 2));
  EXPECT_FALSE(read_iteration_files(paths, kId, 2, 1000)[IterationFile::prompt].text);
  write_file(dir / ".loopr/logs/iterations/001/prompt.md", kSecret);
  EXPECT_FALSE(read_iteration_files(paths, "..", 1, 1000)[IterationFile::prompt].text);
  // The writer replaces a symlink at its name and never writes through it.
  write_iteration_file(paths, kId, 1, IterationFile::prompt, "the prompt");
  write_iteration_file(paths, kId, 1, IterationFile::conversation, "{}\n");
  EXPECT_EQ(read_file(dir / "secret.txt"), kSecret);
  EXPECT_FALSE(std::filesystem::is_symlink(d / "prompt.md"));
  EXPECT_EQ(read_file(d / "prompt.md"), "the prompt");
  EXPECT_EQ(read_file(d / "conversation.jsonl"), "{}\n");
}

TEST(IterationFilesTest, BytesThatAreNotUtf8BecomeText) {
  TempDir dir;
  RepoPaths paths(dir.path());
  write_iteration_file(paths, kId, 1, IterationFile::validation, "bad \xff\xfe end");
  write_iteration_file(paths, kId, 1, IterationFile::conversation,
                       "{\"role\":\"user\",\"content\":\"bad \xc3\x28\"}\n");
  IterationRead r = read_iteration_files(paths, kId, 1, 1000);
  EXPECT_EQ(text_of(r, IterationFile::validation), "bad \xEF\xBF\xBD\xEF\xBF\xBD end");
  auto conv = parse_conversation(text_of(r, IterationFile::conversation));
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0].kind, TranscriptEntry::Kind::message);
  EXPECT_EQ(conv[0].text.value_or(""), "bad \xEF\xBF\xBD(");
}

TEST(IterationFilesTest, EveryLineOfAConversationIsTyped) {
  const std::string jsonl =
      R"({"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hm","signature":"s"},{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"t","name":"bash","input":{"cmd":"ls"}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image"}],"is_error":true},{"type":"server_tool_use"},7]})"
      "\n\n"
      R"({"role":"user","content":"plain"})"
      "\n"
      R"({"receipt":{"stop_reason":"end_turn"}})"
      "\n"
      "not json\n"
      R"([1, 2])";
  auto conv = parse_conversation(jsonl);
  ASSERT_EQ(conv.size(), 5u);
  using B = TranscriptBlock::Kind;
  ASSERT_EQ(conv[0].kind, TranscriptEntry::Kind::message);
  EXPECT_EQ(conv[0].role, "assistant");
  std::vector<B> kinds;
  for (const auto& b : conv[0].blocks) kinds.push_back(b.kind);
  EXPECT_EQ(kinds, (std::vector<B>{B::text, B::thinking, B::redacted_thinking, B::tool_use,
                                   B::tool_result, B::other, B::other}));
  EXPECT_EQ(conv[0].blocks[1].text, "hm");
  EXPECT_EQ(conv[0].blocks[3].name, "bash");
  EXPECT_EQ(conv[0].blocks[3].input, (json{{"cmd", "ls"}}));
  EXPECT_TRUE(conv[0].blocks[4].is_error);
  EXPECT_EQ(tool_result_text(conv[0].blocks[4].content, -1), "a\n{\"type\":\"image\"}\n");
  EXPECT_EQ(conv[1].text.value_or(""), "plain");
  EXPECT_EQ(conv[2].kind, TranscriptEntry::Kind::receipt);
  EXPECT_EQ(conv[2].receipt["stop_reason"], "end_turn");
  EXPECT_EQ(conv[3].kind, TranscriptEntry::Kind::raw);
  EXPECT_EQ(conv[3].value, json("not json"));
  EXPECT_EQ(conv[4].kind, TranscriptEntry::Kind::raw);
  EXPECT_EQ(conv[4].line, "[1, 2]");
}

// A model-written transcript whose fields have other types than the engine writes (the old
// readers threw on each of these): the block is `other`, the line `raw`, nothing throws.
TEST(IterationFilesTest, FieldsOfTheWrongTypeMakeAnOtherBlockNeverAnException) {
  const std::string jsonl =
      R"({"role":"assistant","content":[{"type":5},{"type":"text","text":7},{"type":"text","text":null},)"
      R"({"type":"thinking","thinking":[]},{"type":"tool_use","name":{}},)"
      R"({"type":"tool_result","is_error":"yes"},{"type":"tool_result","content":[{"type":"text","text":1}]}]})"
      "\n"
      R"({"role":42,"content":"x"})"
      "\n" +
      std::string(3 << 20, '{') + "\n";  // a huge line that is not JSON
  std::vector<TranscriptEntry> conv;
  ASSERT_NO_THROW(conv = parse_conversation(jsonl));
  ASSERT_EQ(conv.size(), 3u);
  ASSERT_EQ(conv[0].blocks.size(), 7u);
  for (std::size_t i = 0; i + 1 < conv[0].blocks.size(); ++i)
    EXPECT_EQ(conv[0].blocks[i].kind, TranscriptBlock::Kind::other) << i;
  EXPECT_EQ(conv[0].blocks[6].kind, TranscriptBlock::Kind::tool_result);
  EXPECT_EQ(tool_result_text(conv[0].blocks[6].content, -1), "{\"text\":1,\"type\":\"text\"}\n");
  EXPECT_EQ(conv[1].kind, TranscriptEntry::Kind::raw);
  EXPECT_EQ(conv[2].kind, TranscriptEntry::Kind::raw);
}
