// Toolchains found, not guessed (issue 41 item 1): what a test command runs is followed through
// symlinks, a venv's pyvenv.cfg, a version manager's shim, a script's interpreter and `make -n`
// to the folders under a (test-made) home that the sandbox hides; never a home or a secret.
#include <gtest/gtest.h>

#include <loopr/project/toolchains.hpp>

#include "support/temp_dir.hpp"

using namespace loopr;
using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

class Toolchains : public ::testing::Test {
 protected:
  TempDir tmp{"loopr-toolchains"};
  fs::path home = fs::canonical(tmp.path()) / "home";
  fs::path repo = fs::canonical(tmp.path()) / "repo";
  std::string path_env = "/usr/bin:/bin";

  void SetUp() override {
    fs::create_directories(home);
    fs::create_directories(repo);
  }

  EnvLookup env() const {
    return [this](const char* name) -> std::optional<std::string> {
      if (std::string(name) == "PATH") return path_env;
      if (std::string(name) == "HOME") return home.string();
      return std::nullopt;
    };
  }

  void executable(const fs::path& p, const std::string& text) {
    write_file(p, text);
    fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  }

  // A Python "installed" under the home as pyenv lays it out, and a venv made from it.
  fs::path pyenv_python() {
    fs::path prefix = home / ".pyenv/versions/3.11.9";
    executable(prefix / "bin/python3.11", "\x7f" "ELF");
    fs::create_symlink("python3.11", prefix / "bin/python3");
    return prefix;
  }

  void venv(const fs::path& at, const fs::path& python) {
    fs::create_directories(at / "bin");
    write_file(at / "pyvenv.cfg", "home = " + python.parent_path().string() +
                                      "\ninclude-system-site-packages = false\n");
    fs::create_symlink(python, at / "bin/python");
  }

  std::vector<std::string> paths(const std::string& command) {
    std::vector<std::string> out;
    for (const auto& t : project::resolve_toolchains(repo, command, env())) out.push_back(t.path);
    return out;
  }
};

TEST_F(Toolchains, AVenvOfTheCheckoutMadeFromAnInterpreterUnderTheHomeShowsThatInstallation) {
  fs::path prefix = pyenv_python();
  venv(repo / ".venv", prefix / "bin/python3");
  EXPECT_EQ(paths(".venv/bin/python -m pytest"), std::vector<std::string>{prefix.string()});
  auto found = project::resolve_toolchains(repo, ".venv/bin/python -m pytest", env());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].why.find(".venv/bin/python"), std::string::npos) << found[0].why;
  EXPECT_NE(found[0].why.find(prefix.string()), std::string::npos) << found[0].why;
}

TEST_F(Toolchains, AVenvMadeWithCopiesIsFollowedThroughPyvenvCfg) {
  fs::path prefix = pyenv_python();
  fs::create_directories(repo / "venv/bin");
  write_file(repo / "venv/pyvenv.cfg", "home = " + (prefix / "bin").string() + "\n");
  executable(repo / "venv/bin/python", "\x7f" "ELF");
  EXPECT_EQ(paths("venv/bin/python -m unittest"), std::vector<std::string>{prefix.string()});
}

TEST_F(Toolchains, APyenvShimShowsThePyenvRootThatRunsIt) {
  fs::path prefix = pyenv_python();
  executable(home / ".pyenv/shims/python3",
             "#!/usr/bin/env bash\nexec \"" + (home / ".pyenv/libexec/pyenv").string() +
                 "\" exec \"$0\" \"$@\"\n");
  executable(home / ".pyenv/bin/pyenv",
             "#!/bin/sh\n[ \"$1\" = which ] && echo " + (prefix / "bin" / "$2").string() + "\n");
  path_env = (home / ".pyenv/shims").string() + ":/usr/bin:/bin";
  EXPECT_EQ(paths("python3 -m pytest"), std::vector<std::string>{(home / ".pyenv").string()});
}

TEST_F(Toolchains, AMakefileVenvUnderTheHomeIsFoundThroughMakeN) {
  venv(home / ".virtualenvs/fx", "/usr/bin/python3");
  write_file(repo / "Makefile",
             "VENV ?= $(HOME)/.virtualenvs/fx\n\ntest:\n\t$(VENV)/bin/python -m pytest -q\n");
  EXPECT_EQ(paths("make test"), std::vector<std::string>{(home / ".virtualenvs/fx").string()});
}

TEST_F(Toolchains, AScriptsInterpreterUnderTheHomeIsShown) {
  fs::path node = home / ".nvm/versions/node/v20.11.0";
  executable(node / "bin/node", "\x7f" "ELF");
  executable(repo / "run-tests", "#!" + (node / "bin/node").string() + "\nrequire('x')\n");
  EXPECT_EQ(paths("./run-tests"), std::vector<std::string>{node.string()});
}

TEST_F(Toolchains, NeverAWholeHomeOrASecretLocation) {
  executable(home / "bin/tool", "\x7f" "ELF");
  executable(home / ".ssh/tool", "\x7f" "ELF");
  executable(home / ".local/bin/other", "\x7f" "ELF");
  path_env = (home / "bin").string() + ":" + (home / ".ssh").string() + ":" +
             (home / ".local/bin").string() + ":/usr/bin:/bin";
  // ~/bin's prefix is the home: its own folder instead; ~/.local holds the keyrings.
  EXPECT_EQ(paths("tool && other"),
            (std::vector<std::string>{(home / "bin").string(), (home / ".local/bin").string()}));
  fs::remove(home / "bin/tool");
  EXPECT_EQ(paths("tool"), std::vector<std::string>{}) << "only ~/.ssh has it: not shown";
}

TEST_F(Toolchains, SystemProgramsNeedNothing) {
  EXPECT_EQ(paths("sh -c true && make --version"), std::vector<std::string>{});
}

TEST_F(Toolchains, ANotFoundOnAHiddenPathIsExplainedWithTheLineToAdd) {
  fs::path prefix = pyenv_python();
  venv(repo / ".venv", prefix / "bin/python3");
  Config config;
  config.sandbox.read_only = {".venv"};
  const std::string output = "/bin/sh: 1: .venv/bin/python: not found\n";
  auto why = project::explain_hidden_path(output, repo, config, env());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find(prefix.string()), std::string::npos) << *why;
  EXPECT_NE(why->find("sandbox.read_only"), std::string::npos) << *why;
  EXPECT_NE(why->find("read_only: [" + prefix.string() + "]"), std::string::npos) << *why;
  // Shown already: nothing to explain.
  config.sandbox.read_only.push_back(prefix.string());
  EXPECT_FALSE(project::explain_hidden_path(output, repo, config, env()));
  // The checkout's own venv, not listed: the relative entry.
  config.sandbox.read_only = {};
  auto rel = project::explain_hidden_path(output, repo, config, env());
  ASSERT_TRUE(rel);
  EXPECT_NE(rel->find("read_only: [.venv]"), std::string::npos) << *rel;
  EXPECT_FALSE(project::explain_hidden_path("3 passed\n", repo, config, env()));
}

TEST_F(Toolchains, ABareNameTheShellDidNotFindIsExplainedThroughTheHostsPath) {
  // pytest installed with `pip install --user`: ~/.local/bin/pytest, found by the host's PATH,
  // hidden in the sandbox (`sh: 1: pytest: not found`).
  fs::path prefix = pyenv_python();
  executable(home / ".local/bin/pytest", "#!" + (prefix / "bin/python3").string() + "\n");
  path_env = (home / ".local/bin").string() + ":/usr/bin:/bin";
  Config config;
  auto why = project::explain_hidden_path("/bin/sh: 1: pytest: not found\n", repo, config, env());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("`pytest`"), std::string::npos) << *why;
  EXPECT_NE(why->find("sandbox.read_only"), std::string::npos) << *why;
  auto bash = project::explain_hidden_path("bash: line 1: pytest: command not found\n", repo,
                                           config, env());
  ASSERT_TRUE(bash);
  // A word of the output that is no program the shell looked for explains nothing.
  EXPECT_FALSE(project::explain_hidden_path("pytest: 3 tests not found in -k filter\n", repo,
                                            config, env()));
}

}  // namespace
