// `loopr init` provisions what the tests need that git does not hold (issue 27): an untracked
// node_modules or virtualenv made visible read-only in every worktree, a `src/` layout imported
// from the worktree, the venv's python for pytest; what it cannot know is a hint naming the key.
// Through the real binary, one fixture repository per layout.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "e2e/tool_stubs.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;

namespace {

struct Fixture {
  TempDir dir{"loopr-init-provision"};

  /// Writes `files`, commits what git does not ignore, runs `loopr init --json`.
  nlohmann::json init(const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, content] : files) {
      write_file(dir / path, content);
      // What is in a bin/ folder is a program (init checks that the test command's can run).
      if (path.find("bin/") != std::string::npos) ::chmod((dir / path).c_str(), 0755);
    }
    auto git = run_command(
        "git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -q "
        "--allow-empty -m init",
        dir.str());
    EXPECT_EQ(git.exit_code, 0) << git.output;
    auto r = run_command(with_tool_stubs() + std::string(LOOPR_BIN) + " -C " + shell_quote(dir.str()) +
                         " --json init 2>" + shell_quote((dir / ".init.err").string()));
    EXPECT_EQ(r.exit_code, 0) << r.output << read_file(dir / ".init.err");
    auto doc = nlohmann::json::parse(r.output, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.output;
    auto check = run_command(std::string(LOOPR_BIN) + " -C " + shell_quote(dir.str()) + " config");
    EXPECT_EQ(check.exit_code, 0) << check.output;
    return doc;
  }

  std::string config() const { return read_file(dir / ".loopr/config.yml"); }
};

const char* kPackageJson = R"({"name":"x","scripts":{"test":"node --test"}})";

}  // namespace

// Provisioning (issue 27): what the tests need that git does not hold.
TEST(InitProvisionTest, PythonVenvInTheCheckoutAndSrcLayoutAreProvisioned) {
  Fixture f;
  auto doc = f.init({{"pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"},
                     {"src/calc/__init__.py", ""},
                     {".gitignore", ".venv/\n"},
                     {".venv/pyvenv.cfg", "home = /usr/bin\n"},
                     {".venv/bin/python", ""}});
  EXPECT_EQ(doc["validation"]["command"], ".venv/bin/python -m pytest") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], nlohmann::json::array({".venv"})) << doc.dump();
  EXPECT_EQ(doc["provisioning"]["env"], nlohmann::json::array({"PYTHONPATH=$WORKTREE/src"}));
  std::string config = f.config();
  EXPECT_NE(config.find("  read_only: [\".venv\"]"), std::string::npos) << config;
  EXPECT_NE(config.find("  env: [\"PYTHONPATH=$WORKTREE/src\"]"), std::string::npos) << config;
  EXPECT_NE(config.find("# loopr init: src/ layout"), std::string::npos) << config;
  EXPECT_NE(read_file(f.dir / ".gitignore").find("__pycache__/"), std::string::npos);
}

TEST(InitProvisionTest, WhatInitCannotKnowIsAHintNamingTheKey) {
  {
    Fixture f;  // package.json without node_modules
    auto doc = f.init({{"package.json", kPackageJson}});
    EXPECT_TRUE(doc["provisioning"]["read_only"].empty()) << doc.dump();
    EXPECT_NE(doc["provisioning"]["hints"].dump().find("npm ci"), std::string::npos) << doc.dump();
    EXPECT_NE(f.config().find("# loopr init could not tell: package.json but no node_modules"),
              std::string::npos)
        << f.config();
  }
  {
    Fixture f;  // uv, its venv elsewhere
    auto doc =
        f.init({{"pyproject.toml", "[tool.pytest.ini_options]\n"}, {"uv.lock", "version = 1\n"}});
    EXPECT_EQ(doc["validation"]["command"], "uv run --no-sync pytest") << doc.dump();
    EXPECT_NE(doc["provisioning"]["hints"].dump().find("sandbox.read_only"), std::string::npos);
  }
  {
    Fixture f;  // a node_modules that is committed (vendored): nothing to mount
    auto doc = f.init({{"package.json", kPackageJson}, {"node_modules/x/index.js", ""}});
    EXPECT_TRUE(doc["provisioning"]["read_only"].empty()) << doc.dump();
  }
}

TEST(InitProvisionTest, AnActiveVirtualenvOutsideTheRepositoryIsMadeVisibleAtItsPlace) {
  TempDir venv{"loopr-venv"};
  write_file(venv / "pyvenv.cfg", "home = /usr/bin\n");
  write_file(venv / "bin/python", "");
  ::chmod((venv / "bin/python").c_str(), 0755);
  ::setenv("VIRTUAL_ENV", venv.str().c_str(), 1);
  Fixture f;
  auto doc = f.init({{"setup.py", "from setuptools import setup\nsetup()\n"}});
  ::unsetenv("VIRTUAL_ENV");
  const std::string abs = std::filesystem::canonical(venv.path()).string();
  EXPECT_EQ(doc["validation"]["command"], abs + "/bin/python -m pytest") << doc.dump();
  EXPECT_EQ(doc["provisioning"]["read_only"], nlohmann::json::array({abs})) << doc.dump();
}
