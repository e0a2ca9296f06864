// The prerequisite checks of loopr/core/preflight.hpp: which programs a validation command line
// runs, PATH lookup, loopback URLs, and each provider's needs (env through a fake lookup).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <loopr/core/preflight.hpp>

#include "support/temp_dir.hpp"

namespace loopr {
namespace {

using testing::TempDir;
using testing::write_file;
using Programs = std::vector<std::string>;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(PreflightTest, ProgramsOfACommandLine) {
  EXPECT_EQ(command_programs("make test"), Programs{"make"});
  EXPECT_EQ(
      command_programs("cmake -S . -B build && cmake --build build && ctest --test-dir build"),
      (Programs{"cmake", "cmake", "ctest"}));
  EXPECT_EQ(command_programs("CI=1 FOO='a b' npm test -- --watch=false"), Programs{"npm"});
  EXPECT_EQ(command_programs("env -i PATH=/bin pytest -q; ./run.sh | tee log 2>&1"),
            (Programs{"pytest", "./run.sh", "tee"}));
  EXPECT_EQ(command_programs("(test -d build || meson setup build) && meson test -C build"),
            (Programs{"meson", "meson"}));
  EXPECT_EQ(command_programs("cd sub && 'my tool' \"arg\" >out.txt"), Programs{"my tool"});
  EXPECT_EQ(command_programs("> log make check"), Programs{"make"});
  EXPECT_EQ(command_programs("time nice cargo test &> out"), Programs{"cargo"});
  // What only the shell knows is not judged.
  EXPECT_EQ(command_programs("$RUNNER test"), Programs{});
  EXPECT_EQ(command_programs("for t in tests/*.sh; do sh $t; done"), Programs{"sh"});
  EXPECT_EQ(command_programs("true"), Programs{});
  EXPECT_EQ(command_programs(""), Programs{});
}

TEST(PreflightTest, FindProgramLikeTheShell) {
  TempDir dir;
  write_file(dir / "bin/tool", "#!/bin/sh\n");
  ::chmod((dir / "bin/tool").c_str(), 0755);
  write_file(dir / "bin/plain", "not executable\n");
  std::string path = "/nonexistent:" + (dir / "bin").string();
  EXPECT_EQ(find_program("tool", path, "/"), dir / "bin/tool");
  EXPECT_FALSE(find_program("plain", path, "/"));
  EXPECT_FALSE(find_program("missing", path, "/"));
  EXPECT_EQ(find_program("./bin/tool", "", dir.path()), dir / "bin/tool");
  EXPECT_FALSE(find_program("bin/plain", "", dir.path()));
}

TEST(PreflightTest, LoopbackUrls) {
  for (const char* url :
       {"http://127.0.0.1:8080", "http://localhost", "http://[::1]:9/v1", "http://127.1.2.3/x"})
    EXPECT_TRUE(is_loopback_url(url)) << url;
  for (const char* url : {"https://api.anthropic.com", "http://10.0.0.1:8080",
                          "https://localhost.example.com", "https://127.evil.com.example"})
    EXPECT_FALSE(is_loopback_url(url)) << url;
}

TEST(PreflightTest, ProviderNeeds) {
  Config c;
  auto missing = check_provider(c, env_of({}));
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->what.find("ANTHROPIC_API_KEY is not set"), std::string::npos);
  EXPECT_TRUE(missing->forceable);
  EXPECT_TRUE(check_provider(c, env_of({{"ANTHROPIC_API_KEY", ""}})));
  EXPECT_FALSE(check_provider(c, env_of({{"ANTHROPIC_API_KEY", "k"}})));
  c.llm.base_url = "http://127.0.0.1:8080";
  EXPECT_FALSE(check_provider(c, env_of({})));
  c.llm.provider = "openai";
  c.llm.base_url.clear();
  auto openai = check_provider(c, env_of({{"ANTHROPIC_API_KEY", "k"}}));
  ASSERT_TRUE(openai);
  EXPECT_NE(openai->what.find("OPENAI_API_KEY"), std::string::npos);
  EXPECT_NE(openai->what.find("https://api.openai.com"), std::string::npos);

  TempDir dir;
  write_file(dir / "claude", "#!/bin/sh\n");
  ::chmod((dir / "claude").c_str(), 0755);
  c.llm.provider = "claude-code";
  EXPECT_TRUE(check_provider(c, env_of({{"PATH", "/nonexistent"}})));
  EXPECT_FALSE(check_provider(c, env_of({{"PATH", dir.str()}})));
}

TEST(PreflightTest, ALoopTypesOwnProviderIsCheckedToo) {
  Config c;  // anthropic, its key set
  c.loops[LoopType::code].provider = "codex";
  auto cli = check_provider(c, env_of({{"ANTHROPIC_API_KEY", "k"}, {"PATH", "/nonexistent"}}));
  ASSERT_TRUE(cli);
  EXPECT_NE(cli->what.find("loops.code.provider codex"), std::string::npos) << cli->what;
  TempDir dir;
  write_file(dir / "codex", "#!/bin/sh\n");
  ::chmod((dir / "codex").c_str(), 0755);
  EXPECT_FALSE(check_provider(c, env_of({{"ANTHROPIC_API_KEY", "k"}, {"PATH", dir.str()}})));
  // An API provider of a type needs its own key (a local server of its own does not).
  c.loops[LoopType::code].provider.clear();
  c.review.provider = "openai";
  auto key = check_provider(c, env_of({{"ANTHROPIC_API_KEY", "k"}}));
  ASSERT_TRUE(key);
  EXPECT_NE(key->what.find("OPENAI_API_KEY is not set, and loops.review.provider openai"),
            std::string::npos)
      << key->what;
  EXPECT_FALSE(check_provider(
      c, env_of({{"ANTHROPIC_API_KEY", "k"}, {"OPENAI_BASE_URL", "http://127.0.0.1:9"}})));
}

TEST(PreflightTest, ValidationCommand) {
  TempDir repo;
  Config c;
  c.loops[LoopType::code].validation = "";
  auto empty = check_validation_command(c, repo.path(), env_of({{"PATH", "/usr/bin:/bin"}}));
  ASSERT_TRUE(empty);
  EXPECT_NE(empty->what.find("loops.code.validation is not set"), std::string::npos);
  c.loops[LoopType::code].validation = "sh tests/run.sh && ./check";
  auto script = check_validation_command(c, repo.path(), env_of({{"PATH", "/usr/bin:/bin"}}));
  ASSERT_TRUE(script);
  EXPECT_NE(script->what.find("runs `./check`, which is not an executable file in"),
            std::string::npos)
      << script->what;
  write_file(repo / "check", "#!/bin/sh\n");
  ::chmod((repo / "check").c_str(), 0755);
  EXPECT_FALSE(check_validation_command(c, repo.path(), env_of({{"PATH", "/usr/bin:/bin"}})));
  EXPECT_TRUE(check_validation_command(c, repo.path(), env_of({{"PATH", "/nonexistent"}})));
}

}  // namespace
}  // namespace loopr
