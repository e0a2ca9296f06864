// The tools against a real folder and real child processes.
#include <gtest/gtest.h>

#include <thread>

#include <loopr/tools/tool_router.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::tools;
using namespace loopr::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

class ToolRouterTest : public ::testing::Test {
 protected:
  TempDir dir{"loopr-tools"};
  TempDir outside{"loopr-outside"};
  ConcurrencyConfig concurrency;
  RunnerSlots slots{concurrency};
  std::unique_ptr<exec::Executor> executor =
      exec::make_executor(SandboxConfig{}, {RepoPaths(dir.path())});
  ToolRouter router{Sandbox(dir.path()), slots, *executor,
                    policy_for(LoopType::code, Config{}, "")};

  ToolResult call(const std::string& name, nlohmann::json input) {
    return router.call({"toolu_1", name, std::move(input)});
  }
};

TEST_F(ToolRouterTest, DefinitionsAreTheEightSchemasVerbatim) {
  const auto& defs = tool_definitions();
  std::vector<std::string> names;
  for (const auto& d : defs) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ask_user", "edit_file", "list_dir", "read_file",
                                             "run_command", "search", "share_note", "write_file"}));
  for (const auto& d : defs) {
    auto on_disk = nlohmann::json::parse(
        read_file(fs::path(LOOPR_SOURCE_DIR) / "schemas/tools" / (d.name + ".json")));
    EXPECT_EQ(d.input_schema, on_disk["input_schema"]) << d.name;
    EXPECT_EQ(d.description, on_disk["description"]);
  }
  auto& read =
      *std::find_if(defs.begin(), defs.end(), [](auto& d) { return d.name == "read_file"; });
  EXPECT_TRUE(read.input_schema["properties"].contains("offset"));
  EXPECT_EQ(read.input_schema["required"], nlohmann::json::array({"path"}));
}

TEST_F(ToolRouterTest, WriteThenReadThenEdit) {
  auto w = call("write_file", {{"path", "src/greet.sh"}, {"content", "echo hello\necho bye\n"}});
  ASSERT_FALSE(w.is_error) << w.content;
  EXPECT_NE(w.content.find("created src/greet.sh"), std::string::npos);
  EXPECT_EQ(read_file(dir / "src/greet.sh"), "echo hello\necho bye\n");

  auto r = call("read_file", {{"path", "src/greet.sh"}});
  ASSERT_FALSE(r.is_error);
  EXPECT_EQ(r.content, "echo hello\necho bye\n");

  auto e = call("edit_file",
                {{"path", "src/greet.sh"}, {"old_string", "hello"}, {"new_string", "HELLO"}});
  ASSERT_FALSE(e.is_error) << e.content;
  EXPECT_EQ(read_file(dir / "src/greet.sh"), "echo HELLO\necho bye\n");
}

TEST_F(ToolRouterTest, EditNeedsExactlyOneOccurrence) {
  write_file(dir / "f.txt", "x = 1\nx = 1\n");
  auto twice =
      call("edit_file", {{"path", "f.txt"}, {"old_string", "x = 1"}, {"new_string", "x = 2"}});
  EXPECT_TRUE(twice.is_error);
  EXPECT_NE(twice.content.find("occurs 2 times"), std::string::npos) << twice.content;
  auto none = call("edit_file", {{"path", "f.txt"}, {"old_string", "y"}, {"new_string", "z"}});
  EXPECT_TRUE(none.is_error);
  EXPECT_NE(none.content.find("not found"), std::string::npos);
  EXPECT_EQ(read_file(dir / "f.txt"), "x = 1\nx = 1\n");  // unchanged after both failures
}

TEST_F(ToolRouterTest, ReadWithOffsetAndLimit) {
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "line " + std::to_string(i) + "\n";
  write_file(dir / "ten.txt", text);
  auto r = call("read_file", {{"path", "ten.txt"}, {"offset", 3}, {"limit", 2}});
  ASSERT_FALSE(r.is_error);
  EXPECT_EQ(r.content.substr(0, r.content.find("\n[")), "line 3\nline 4\n");
  EXPECT_NE(r.content.find("showing lines 3-4 of 10"), std::string::npos);
  EXPECT_TRUE(call("read_file", {{"path", "ten.txt"}, {"offset", 0}}).is_error);
  EXPECT_TRUE(call("read_file", {{"path", "ten.txt"}, {"offset", 50}}).is_error);
}

TEST_F(ToolRouterTest, BadInputIsAReadableErrorResult) {
  EXPECT_NE(call("read_file", nlohmann::json::object()).content.find("needs `path`"),
            std::string::npos);
  EXPECT_NE(call("write_file", {{"path", 5}, {"content", ""}}).content.find("must be a string"),
            std::string::npos);
  EXPECT_TRUE(router.call({"t", "read_file", "not an object"}).is_error);
  auto unknown = call("delete_everything", nlohmann::json::object());
  EXPECT_TRUE(unknown.is_error);
  EXPECT_NE(unknown.content.find("run_command"), std::string::npos);
  write_file(dir / "bin.dat", std::string("\x7f"
                                          "ELF\0\0\0",
                                          7));
  EXPECT_NE(call("read_file", {{"path", "bin.dat"}}).content.find("binary"), std::string::npos);
  EXPECT_NE(call("read_file", {{"path", "nope.txt"}}).content.find("does not exist"),
            std::string::npos);
  EXPECT_NE(call("read_file", {{"path", "."}}).content.find("list_dir"), std::string::npos);
}

TEST_F(ToolRouterTest, EveryToolRefusesPathsOutside) {
  fs::create_directory_symlink(outside.path(), dir / "out");
  write_file(outside / "secret", "s");
  for (auto [name, input] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"read_file", {{"path", "../x"}}},
           {"read_file", {{"path", "out/secret"}}},
           {"write_file", {{"path", "out/new"}, {"content", "x"}}},
           {"write_file", {{"path", "/tmp/x"}, {"content", "x"}}},
           {"edit_file", {{"path", "out/secret"}, {"old_string", "s"}, {"new_string", "t"}}},
           {"list_dir", {{"path", "out"}}},
           {"search", {{"pattern", "s"}, {"path", "out"}}},
           {"write_file", {{"path", ".git/hooks/pre-commit"}, {"content", "x"}}},
       }) {
    auto r = call(name, input);
    EXPECT_TRUE(r.is_error) << name << " " << input.dump();
    EXPECT_NE(r.content.find("refused path"), std::string::npos) << r.content;
  }
  EXPECT_EQ(read_file(outside / "secret"), "s");
  EXPECT_FALSE(fs::exists(outside / "new"));
}

TEST_F(ToolRouterTest, ListDirAndSearch) {
  write_file(dir / "src/a.c", "int main() {\n  return helper();\n}\n");
  write_file(dir / "src/b.c", "int helper() { return 0; }\n");
  write_file(dir / "README", "helper docs\n");
  fs::create_directories(dir / ".git");
  write_file(dir / ".git/config", "helper in git\n");
  auto l = call("list_dir", {{"path", "."}});
  EXPECT_EQ(l.content, "README\nsrc/\n");
  auto s = call("search", {{"pattern", "helper\\("}});
  ASSERT_FALSE(s.is_error) << s.content;
  EXPECT_EQ(s.content, "src/a.c:2:   return helper();\nsrc/b.c:1: int helper() { return 0; }\n");
  EXPECT_EQ(call("search", {{"pattern", "helper"}, {"path", "README"}}).content,
            "README:1: helper docs\n");
  auto bad = call("search", {{"pattern", "(unclosed"}});
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(bad.content.find("bad pattern"), std::string::npos);
  EXPECT_NE(call("search", {{"pattern", "zzz"}}).content.find("no matches"), std::string::npos);
}

TEST_F(ToolRouterTest, SearchResultsAreCapped) {
  std::string many;
  for (int i = 0; i < 500; ++i) many += "hit\n";
  write_file(dir / "many.txt", many);
  auto s = call("search", {{"pattern", "hit"}});
  EXPECT_EQ(std::count(s.content.begin(), s.content.end(), '\n'), 201);
  EXPECT_NE(s.content.find("capped at 200"), std::string::npos);
}

TEST_F(ToolRouterTest, RunCommandInTheWorktree) {
  write_file(dir / "x.txt", "content");
  auto r = call("run_command", {{"command", "pwd; cat x.txt; exit 4"}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.content.rfind("exit code 4\n", 0), 0u) << r.content;
  EXPECT_NE(r.content.find(fs::canonical(dir.path()).string()), std::string::npos);
  EXPECT_NE(r.content.find("content"), std::string::npos);
  // The worktree is writable (here it is also the repository's root).
  auto w = call("run_command", {{"command", "echo made > made.txt"}});
  EXPECT_FALSE(w.is_error) << w.content;
  EXPECT_EQ(read_file(dir / "made.txt"), "made\n");
  auto okr = call("run_command", {{"command", "echo fine"}});
  EXPECT_FALSE(okr.is_error);
  EXPECT_EQ(okr.content, "exit code 0\nfine\n");
}

TEST_F(ToolRouterTest, RunCommandNeverSeesProviderKeys) {
  setenv("ANTHROPIC_API_KEY", "sk-ant-secret", 1);
  auto r = call("run_command", {{"command", "echo \"[${ANTHROPIC_API_KEY:-none}]\""}});
  unsetenv("ANTHROPIC_API_KEY");
  EXPECT_NE(r.content.find("[none]"), std::string::npos) << r.content;
}

TEST_F(ToolRouterTest, RunCommandTimeoutKillsItsChildren) {
  auto started = std::chrono::steady_clock::now();
  auto r = call("run_command", {{"command", "sleep 100 & sleep 100"}, {"timeout_s", 1}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("killed after 1 s"), std::string::npos) << r.content;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST_F(ToolRouterTest, RunCommandOutputKeepsHeadAndTail) {
  auto r = call("run_command", {{"command", "echo BEGIN; seq 1 200000; echo END"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_LT(r.content.size(), 34u * 1024);
  EXPECT_NE(r.content.find("BEGIN"), std::string::npos);
  EXPECT_NE(r.content.find("END"), std::string::npos);
  EXPECT_NE(r.content.find("bytes omitted"), std::string::npos);
}

TEST_F(ToolRouterTest, RunCommandIsCancelledByStop) {
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    std::this_thread::sleep_for(100ms);  // the user's stop arrives while the command runs
    cancel = true;
  });
  auto started = std::chrono::steady_clock::now();
  auto r = router.call({"t", "run_command", {{"command", "sleep 100"}}}, &cancel);
  t.join();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("stopped"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

// loops.<type>.iteration_max_runtime: a command that would outlast the iteration is killed at
// its deadline (its children too), and none starts after it.
TEST_F(ToolRouterTest, RunCommandEndsAtTheIterationsDeadline) {
  ToolLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + 1s;
  ToolRouter timed{Sandbox(dir.path()), slots, *executor, policy_for(LoopType::code, Config{}, ""),
                   limits};
  auto started = std::chrono::steady_clock::now();
  auto r =
      timed.call({"t", "run_command", {{"command", "sleep 100 & sleep 100"}, {"timeout_s", 600}}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("iteration_max_runtime"), std::string::npos) << r.content;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  auto late = timed.call({"t", "run_command", {{"command", "echo made > late.txt"}}});
  EXPECT_TRUE(late.is_error);
  EXPECT_NE(late.content.find("did not run"), std::string::npos) << late.content;
  EXPECT_FALSE(fs::exists(dir.path() / "late.txt"));
}

TEST(RunnerSlotsTest, ClassifiesAndLimits) {
  ConcurrencyConfig c;
  c.runners = {{"default", 3}, {"net", 2}, {"heavy", 1}};
  RunnerSlots slots(c);
  EXPECT_EQ(slots.classify("make test"), "heavy");
  EXPECT_EQ(slots.classify("cd build && ctest -j2"), "heavy");
  EXPECT_EQ(slots.classify("npm install left-pad"), "net");
  EXPECT_EQ(slots.classify("curl -s http://x"), "net");
  EXPECT_EQ(slots.classify("ls -la"), "default");
  EXPECT_EQ(slots.classify("remake.sh"), "default");  // word boundaries

  std::atomic<int> running{0}, max_seen{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      auto lease = slots.acquire("heavy");
      int now = ++running;
      int prev = max_seen.load();
      while (now > prev && !max_seen.compare_exchange_weak(prev, now)) {
      }
      std::this_thread::sleep_for(10ms);  // hold the slot for a while
      --running;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(max_seen.load(), 1);
  EXPECT_EQ(slots.peak("heavy"), 1);
  EXPECT_EQ(slots.in_use("heavy"), 0);
}

// Least privilege per loop type (DESIGN.md "Trust boundary").
class ToolPolicyTest : public ::testing::Test {
 protected:
  TempDir dir{"loopr-tool-policy"};
  ConcurrencyConfig concurrency;
  RunnerSlots slots{concurrency};
  std::unique_ptr<exec::Executor> executor =
      exec::make_executor(SandboxConfig{}, {RepoPaths(dir.path())});
  const std::string artifact = ".loopr/plans/001-x.plan.md";

  ToolRouter router_for(LoopType type, const Config& config = {}) {
    return ToolRouter(Sandbox(dir.path()), slots, *executor,
                      policy_for(type, config, type == LoopType::code ? "" : artifact));
  }
  static std::vector<std::string> names(const ToolRouter& r) {
    std::vector<std::string> out;
    for (const auto& d : r.definitions()) out.push_back(d.name);
    return out;
  }
};

TEST_F(ToolPolicyTest, CodeLoopsGetAllEightDocumentLoopsNoCommands) {
  EXPECT_EQ(names(router_for(LoopType::code)),
            (std::vector<std::string>{"ask_user", "edit_file", "list_dir", "read_file",
                                      "run_command", "search", "share_note", "write_file"}));
  for (LoopType t : {LoopType::spec, LoopType::phase})
    EXPECT_EQ(names(router_for(t)),
              (std::vector<std::string>{"ask_user", "edit_file", "list_dir", "read_file", "search",
                                        "share_note", "write_file"}))
        << to_string(t);
  // A plan has no siblings to share a note with.
  EXPECT_EQ(names(router_for(LoopType::plan)),
            (std::vector<std::string>{"ask_user", "edit_file", "list_dir", "read_file", "search",
                                      "write_file"}));
  // Called outside a loop's conversation (where the engine answers them), they are refused.
  auto r = router_for(LoopType::code).call({"t", "share_note", {{"text", "x"}}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("only inside a loop's conversation"), std::string::npos) << r.content;
}

TEST_F(ToolPolicyTest, APlanLoopCannotRunACommandAndIsToldWhy) {
  auto router = router_for(LoopType::plan);
  auto r = router.call({"t", "run_command", {{"command", "touch PWNED"}}});
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.content.find("not available to plan loops"), std::string::npos) << r.content;
  EXPECT_FALSE(fs::exists(dir / "PWNED"));
}

TEST_F(ToolPolicyTest, DocumentLoopsWriteOnlyTheirArtifact) {
  auto router = router_for(LoopType::spec);
  auto ok = router.call({"t", "write_file", {{"path", artifact}, {"content", "# x\n"}}});
  EXPECT_FALSE(ok.is_error) << ok.content;
  auto other = router.call({"t", "write_file", {{"path", "src/main.c"}, {"content", "x"}}});
  EXPECT_TRUE(other.is_error);
  EXPECT_NE(other.content.find("writes only its artifact"), std::string::npos) << other.content;
  auto edit = router.call(
      {"t", "edit_file", {{"path", "README"}, {"old_string", "a"}, {"new_string", "b"}}});
  EXPECT_TRUE(edit.is_error);
  EXPECT_FALSE(fs::exists(dir / "src/main.c"));
  // Reading anything in the worktree is fine.
  EXPECT_FALSE(router.call({"t", "read_file", {{"path", artifact}}}).is_error);
}

TEST_F(ToolPolicyTest, CodeLoopsCannotWriteLooprsFolderOrGit) {
  auto router = router_for(LoopType::code);
  for (const char* p : {".loopr/config.yml", ".loopr/prompts/code.md", ".loopr/plans/001-x.plan.md",
                        ".git/config", "a/../.git/hooks/pre-commit"}) {
    auto r = router.call({"t", "write_file", {{"path", p}, {"content", "evil"}}});
    EXPECT_TRUE(r.is_error) << p;
    EXPECT_FALSE(fs::exists(dir / p)) << p;
  }
  write_file(dir / ".loopr/config.yml", "merge: auto\n");
  auto e =
      router.call({"t",
                   "edit_file",
                   {{"path", ".loopr/config.yml"}, {"old_string", "auto"}, {"new_string", "x"}}});
  EXPECT_TRUE(e.is_error);
  EXPECT_NE(e.content.find(".loopr/ belongs to loopr"), std::string::npos) << e.content;
  EXPECT_EQ(read_file(dir / ".loopr/config.yml"), "merge: auto\n");
}

TEST_F(ToolPolicyTest, TheConfigNarrowsATypesTools) {
  Config c;
  c.loops[LoopType::code].tools = {"read_file", "run_command"};
  auto router = router_for(LoopType::code, c);
  EXPECT_EQ(names(router), (std::vector<std::string>{"read_file", "run_command"}));
  auto w = router.call({"t", "write_file", {{"path", "x.txt"}, {"content", "x"}}});
  EXPECT_TRUE(w.is_error);
  EXPECT_NE(w.content.find("not available to code loops"), std::string::npos) << w.content;
}
