// loopr installed like any other tool (issue #20): `cmake --install` into a temp prefix, and
// the Debian package CPack builds, extracted into a temp root with `dpkg-deb -x`. The installed
// binaries run with the source and build trees hidden (a bubblewrap mount namespace puts empty
// folders over them), a clean environment and a temp working folder, so nothing they need can
// come from the tree they were built in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace loopr::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kBuild = LOOPR_BUILD_DIR;
const fs::path kSource = LOOPR_SOURCE_TREE;

bool inside(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

/// `sh -c command` in `cwd`, with the source and build trees hidden and only PATH=/usr/bin:/bin,
/// HOME and the `env` given (e.g. `ANTHROPIC_API_KEY=test`).
CommandOutput hidden_run(const std::string& command, const fs::path& cwd,
                         const std::string& env = "") {
  std::string hide = "--tmpfs " + shell_quote(kSource.string());
  if (!inside(kBuild, kSource)) hide += " --tmpfs " + shell_quote(kBuild.string());
  return run_command("bwrap --dev-bind / / " + hide + " --chdir " + shell_quote(cwd.string()) +
                     " env -i PATH=/usr/bin:/bin HOME=" + shell_quote(cwd.string()) +
                     " LANG=C.UTF-8 " + env + " sh -c " + shell_quote(command) + " 2>&1");
}

/// The JSON document at the end of `output` (after the lines a command printed on stderr).
nlohmann::json last_json(const std::string& output) {
  auto p = output.rfind("\n{");
  auto doc =
      nlohmann::json::parse(output.substr(p == std::string::npos ? 0 : p + 1), nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << output;
  return doc;
}

/// A git repository with one commit in `dir`.
void make_repo(const fs::path& dir) {
  fs::create_directories(dir);
  auto r = run_command(
      "git init -q -b main . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m "
      "init",
      dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

/// The installed `loopr` (under `prefix`) runs: --version, init + doctor in a new repository,
/// and the whole demo, with the trees it was built from hidden.
void expect_installed_loopr_works(const fs::path& prefix, const fs::path& work) {
  std::string loopr = shell_quote((prefix / "bin/loopr").string());
  auto version = hidden_run(loopr + " --version", work);
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_EQ(version.output, std::string("loopr ") + LOOPR_VERSION + "\n");

  fs::path repo = work / "repo";
  make_repo(repo);
  auto doctor = hidden_run(
      loopr + " init --validation true >/dev/null && " + loopr + " --json doctor --offline", repo,
      "ANTHROPIC_API_KEY=test");
  EXPECT_EQ(doctor.exit_code, 0) << doctor.output;
  auto d = last_json(doctor.output);
  EXPECT_EQ(d["ready"], true) << doctor.output;
  for (const auto& c : d["checks"]) EXPECT_NE(c["status"], "fail") << c.dump();

  auto demo = hidden_run(loopr + " --json demo --yes", work);
  ASSERT_EQ(demo.exit_code, 0) << demo.output;
  auto result = last_json(demo.output);
  EXPECT_EQ(result["completed"], true) << demo.output;
  EXPECT_EQ(result["plan_id"], "001");
  // The demo's repository holds the merged work: greet learned --shout.
  std::string demo_repo = result["repo"];
  auto shout = run_command("sh greet --shout World", demo_repo);
  EXPECT_EQ(shout.output, "HELLO, WORLD!\n") << shout.output;
  fs::remove_all(fs::path(demo_repo).parent_path());
}

/// bash-completion and zsh's compinit find the installed completions in `share` (the folders
/// under /usr/share or ~/.local/share they look in), with nothing else on their search paths.
void expect_completions_load(const fs::path& share, const std::string& zsh_dir) {
  auto bash = run_command(
      "XDG_DATA_DIRS=" + shell_quote(share.string()) + " XDG_DATA_HOME=/nonexistent bash -c " +
      shell_quote("source /usr/share/bash-completion/bash_completion && __load_completion loopr "
                  "&& complete -p loopr") +
      " 2>&1");
  EXPECT_EQ(bash.output, "complete -F _loopr loopr\n") << bash.output;
  TempDir home{"loopr-zsh-home"};
  auto zsh = run_command("HOME=" + home.str() + " zsh -f -c " +
                         shell_quote("fpath=(" + (share / zsh_dir).string() +
                                     " $fpath); autoload -Uz compinit && compinit -u -d " +
                                     home.str() + "/dump && echo ${_comps[loopr]}") +
                         " 2>&1");
  EXPECT_EQ(zsh.output, "_loopr\n") << zsh.output;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(PackageTest, CMakeInstallPutsEverythingUnderThePrefixAndItRuns) {
  TempDir t{"loopr-install"};
  fs::path prefix = t / "prefix";
  auto install =
      run_command(std::string(LOOPR_CMAKE) + " --install " + shell_quote(kBuild.string()) +
                  " --prefix " + shell_quote(prefix.string()) + " 2>&1");
  ASSERT_EQ(install.exit_code, 0) << install.output;
  // Nothing outside the prefix: what an ordinary user with --prefix ~/.local can install.
  auto manifest = lines_of(read_file(kBuild / "install_manifest.txt"));
  ASSERT_FALSE(manifest.empty());
  for (const auto& file : manifest) EXPECT_TRUE(inside(file, prefix)) << file;
  for (const char* file :
       {"bin/loopr", "bin/loopr-mock-llm", "share/loopr/example/mock-model.yml",
        "share/loopr/example/config.yml", "share/loopr/example/project/tests/run.sh",
        "share/man/man1/loopr.1.gz", "share/bash-completion/completions/loopr",
        "share/zsh/site-functions/_loopr", "share/doc/loopr/copyright",
        "share/doc/loopr/README.md", "share/doc/loopr/docs/guide.md",
        "share/doc/loopr/docs/security.md"})
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  EXPECT_EQ(read_file(prefix / "share/bash-completion/completions/loopr"),
            read_file(kBuild / "docs/loopr.bash"));
  auto man = run_command("MANWIDTH=80 man -l " +
                         shell_quote((prefix / "share/man/man1/loopr.1.gz").string()));
  EXPECT_NE(man.output.find("loopr doctor [--offline]"), std::string::npos) << man.output;
  expect_completions_load(prefix / "share", "zsh/site-functions");
  fs::path work = t / "work";
  fs::create_directories(work);
  expect_installed_loopr_works(prefix, work);
}

TEST(PackageTest, DebianPackageInstallsIntoARootAndRuns) {
  TempDir t{"loopr-deb"};
  auto pack = run_command("cd " + shell_quote(kBuild.string()) + " && " + LOOPR_CPACK +
                          " -G DEB -B " + shell_quote((t / "pkg").string()) + " 2>&1");
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  fs::path deb = t / "pkg" / (std::string("loopr_") + LOOPR_VERSION + "-1_amd64.deb");
  if (!fs::exists(deb)) {  // another architecture
    for (const auto& e : fs::directory_iterator(t / "pkg"))
      if (e.path().extension() == ".deb") deb = e.path();
  }
  ASSERT_TRUE(fs::exists(deb)) << pack.output;
  std::string q = shell_quote(deb.string());

  auto field = [&](const char* name) {
    auto r = run_command("dpkg-deb -f " + q + " " + name);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.output.substr(0, r.output.find_last_not_of('\n') + 1);
  };
  EXPECT_EQ(field("Package"), "loopr");
  EXPECT_EQ(field("Version"), std::string(LOOPR_VERSION) + "-1");
  // Depends: the packages of the libraries the binaries link, bubblewrap and git; every one a
  // real package (installed here, or provided by one, since the build linked against them).
  std::string depends = field("Depends");
  for (const char* needed : {"bubblewrap", "git", "libgit2-", "libre2-", "libcmark-gfm0",
                             "libcmark-gfm-extensions", "libyaml-cpp", "libspdlog", "libssl3"})
    EXPECT_NE(depends.find(needed), std::string::npos) << needed << " in " << depends;
  // RocksDB: linked statically into `loopr` (cmake/static_deps.cmake), so the package needs its
  // compression libraries instead; librocksdb itself with -DLOOPR_STATIC_DEPS=OFF.
  EXPECT_TRUE(depends.find("librocksdb") != std::string::npos ||
              depends.find("libsnappy") != std::string::npos)
      << depends;
  std::set<std::string> installed;
  std::istringstream all(
      run_command("dpkg-query -W -f='${db:Status-Abbrev},${Package},${Provides}\\n'").output);
  for (std::string line; std::getline(all, line);) {
    if (line.rfind("ii", 0) != 0) continue;
    std::istringstream names(line.substr(line.find(',') + 1));
    for (std::string name; std::getline(names, name, ',');) {
      name = name.substr(
          name.find_first_not_of(' ') == std::string::npos ? 0 : name.find_first_not_of(' '));
      installed.insert(name.substr(0, name.find_first_of(" (")));
    }
  }
  ASSERT_TRUE(installed.count("dpkg"));
  std::istringstream deps(depends);
  for (std::string dep; std::getline(deps, dep, ',');) {
    std::string name = dep.substr(dep.find_first_not_of(' '));
    name = name.substr(0, name.find_first_of(" ("));
    EXPECT_TRUE(installed.count(name)) << name << " is no installed or provided package";
  }
  auto contents = run_command("dpkg-deb -c " + q).output;
  for (const char* file :
       {"./usr/bin/loopr", "./usr/bin/loopr-mock-llm", "./usr/share/loopr/example/mock-model.yml",
        "./usr/share/man/man1/loopr.1.gz", "./usr/share/man/man1/loopr-mock-llm.1.gz",
        "./usr/share/bash-completion/completions/loopr",
        "./usr/share/zsh/vendor-completions/_loopr", "./usr/share/doc/loopr/copyright",
        "./usr/share/doc/loopr/changelog.Debian.gz", "./usr/share/doc/loopr/docs/guide.md"})
    EXPECT_NE(contents.find(std::string(file) + "\n"), std::string::npos) << file;
  EXPECT_EQ(contents.find(kSource.string()), std::string::npos);

  // lintian, where installed: no errors.
  if (run_command("command -v lintian").exit_code == 0) {
    auto lint = run_command("lintian --suppress-tags initial-upload-closes-no-bugs " + q + " 2>&1");
    for (const auto& line : lines_of(lint.output)) EXPECT_NE(line.rfind("E:", 0), 0u) << line;
  }

  fs::path root = t / "root";
  auto extract = run_command("dpkg-deb -x " + q + " " + shell_quote(root.string()));
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  expect_completions_load(root / "usr/share", "zsh/vendor-completions");
  fs::path work = t / "work";
  fs::create_directories(work);
  expect_installed_loopr_works(root / "usr", work);
}
