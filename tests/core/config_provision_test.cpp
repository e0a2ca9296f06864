// The keys that make a worktree ready for the project's tests (issue 27): `sandbox.read_only`
// entries relative to the checkout, `sandbox.env` entries with a value, and `setup:`.
#include <gtest/gtest.h>

#include <loopr/core/config.hpp>

#include "support/config_errors.hpp"

using namespace loopr;
using namespace std::chrono_literals;

namespace {

std::string error_of(const std::string& yaml) { return loopr::testing::config_error_of(yaml); }

}  // namespace

TEST(ConfigProvisionTest, RelativeReadOnlyPathsAreTheCheckouts) {
  auto c = parse_config(
      "sandbox:\n  read_only: [node_modules/, .venv, ~/.cargo, /opt/sdk, vendor/lib]\n", "c.yml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->sandbox.read_only, (std::vector<std::string>{"node_modules", ".venv", "~/.cargo",
                                                            "/opt/sdk", "vendor/lib"}));
  EXPECT_EQ(c->sandbox.checkout_paths(),
            (std::vector<std::string>{"node_modules", ".venv", "vendor/lib"}));
  EXPECT_TRUE(Config{}.sandbox.checkout_paths().empty());
  for (const char* bad :
       {"../outside", "a/../../b", ".git", ".git/hooks", ".loopr/state", "a//b"}) {
    std::string e = error_of("sandbox:\n  read_only: [\"" + std::string(bad) + "\"]\n");
    EXPECT_NE(e.find(".loopr/config.yml:2: sandbox.read_only: \"" + std::string(bad) + "\""),
              std::string::npos)
        << e;
  }
}

TEST(ConfigProvisionTest, EnvEntriesCarryAValueOrNameTheDaemons) {
  auto c = parse_config("sandbox:\n  env: [CARGO_HOME, PYTHONPATH=src, \"EMPTY=\", \"X=a=b\"]\n",
                        "c.yml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->sandbox.env, std::vector<std::string>{"CARGO_HOME"});
  EXPECT_EQ(c->sandbox.env_values, (std::map<std::string, std::string>{
                                       {"PYTHONPATH", "src"}, {"EMPTY", ""}, {"X", "a=b"}}));
  auto m =
      parse_config("sandbox:\n  env: {PYTHONPATH: $WORKTREE/src, CARGO_HOME: null}\n", "c.yml");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->sandbox.env, std::vector<std::string>{"CARGO_HOME"});
  EXPECT_EQ(m->sandbox.env_values.at("PYTHONPATH"), "$WORKTREE/src");
  EXPECT_NE(
      error_of("sandbox:\n  env: [\"1X=2\"]\n").find("sandbox.env: \"1X\" is not a variable name"),
      std::string::npos);
  EXPECT_NE(error_of("sandbox:\n  env: {\"A B\": x}\n").find("is not a variable name"),
            std::string::npos);
  // A change of the values needs a restart, like the rest of `sandbox`.
  Config a, b;
  b.sandbox.env_values["PYTHONPATH"] = "src";
  EXPECT_EQ(restart_keys_changed(a, b), std::vector<std::string>{"sandbox"});
}

TEST(ConfigProvisionTest, SetupIsAListOrAMapping) {
  Config defaults;
  EXPECT_TRUE(defaults.setup.commands.empty());
  EXPECT_FALSE(defaults.setup.network);
  EXPECT_EQ(defaults.setup.timeout, 10min);
  auto list = parse_config("setup: [\"make generate\", ./gen.sh]\n", "c.yml");
  ASSERT_TRUE(list) << list.error().message;
  EXPECT_EQ(list->setup.commands, (std::vector<std::string>{"make generate", "./gen.sh"}));
  auto map =
      parse_config("setup:\n  commands: [npm ci]\n  network: true\n  timeout: 2m\n", "c.yml");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->setup.commands, std::vector<std::string>{"npm ci"});
  EXPECT_TRUE(map->setup.network);
  EXPECT_EQ(map->setup.timeout, 2min);
  // Setup is read for each new worktree: a SIGHUP takes it, no restart.
  EXPECT_TRUE(restart_keys_changed(defaults, *map).empty());
  EXPECT_NE(error_of("setup:\n  command: [x]\n").find("setup.command: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("setup:\n  timeout: 0s\n").find("setup.timeout: must be at least 1s"),
            std::string::npos);
  EXPECT_NE(error_of("setup: [\"  \"]\n").find("setup: a setup command is empty"),
            std::string::npos);
  EXPECT_NE(error_of("setup: make\n").find("setup:"), std::string::npos);
}

TEST(ConfigProvisionTest, TheDefaultFileShowsTheKeysAndParses) {
  std::string text = default_config_yaml("main");
  EXPECT_NE(text.find("\nsetup: "), std::string::npos);
  EXPECT_NE(text.find("PYTHONPATH=src"), std::string::npos);
  EXPECT_NE(text.find("[node_modules, .venv]"), std::string::npos);
  auto parsed = parse_config(text, "default");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->setup.commands.empty());
}
