#include "cli/project_detect.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace loopr::cli {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_executable(const fs::path& p) { return is_file(p) && ::access(p.c_str(), X_OK) == 0; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const fs::path& p, const std::string& text) {
  return is_file(p) && read_text(p).find(text) != std::string::npos;
}

// npm's placeholder from `npm init`: it fails on purpose and tests nothing.
bool is_npm_placeholder(const std::string& script) {
  return script.find("no test specified") != std::string::npos;
}

void detect_node(const fs::path& root, std::vector<TestCommandCandidate>& out) {
  fs::path manifest = root / "package.json";
  if (!is_file(manifest)) return;
  auto pkg = nlohmann::json::parse(read_text(manifest), nullptr, false);
  if (!pkg.is_object() || !pkg.contains("scripts") || !pkg["scripts"].is_object()) return;
  const auto& scripts = pkg["scripts"];
  if (!scripts.contains("test") || !scripts["test"].is_string()) return;
  if (is_npm_placeholder(scripts["test"].get<std::string>())) return;
  std::string manager = "npm", why;
  if (is_file(root / "pnpm-lock.yaml")) {
    manager = "pnpm", why = "pnpm-lock.yaml";
  } else if (is_file(root / "yarn.lock")) {
    manager = "yarn", why = "yarn.lock";
  } else if (is_file(root / "bun.lockb") || is_file(root / "bun.lock")) {
    manager = "bun", why = is_file(root / "bun.lock") ? "bun.lock" : "bun.lockb";
  } else if (is_file(root / "package-lock.json")) {
    why = "package-lock.json";
  } else if (pkg.contains("packageManager") && pkg["packageManager"].is_string()) {
    // Corepack's field: `pnpm@9.1.0`.
    std::string field = pkg["packageManager"];
    std::string name = field.substr(0, field.find('@'));
    if (name == "pnpm" || name == "yarn" || name == "npm" || name == "bun") {
      manager = name;
      why = "packageManager " + field;
    }
  }
  std::string command = manager == "bun" ? "bun run test" : manager + " test";
  out.push_back({command, "package.json scripts.test" + (why.empty() ? "" : ", with " + why), {}});
}

void detect_python(const fs::path& root, std::vector<TestCommandCandidate>& out) {
  // pytest configured somewhere wins; then tox; then a Python project with pytest assumed.
  const std::pair<const char*, const char*> pytest_configs[] = {
      {"pytest.ini", ""},
      {"pyproject.toml", "[tool.pytest.ini_options]"},
      {"setup.cfg", "[tool:pytest]"},
      {"tox.ini", "[pytest]"},
  };
  for (const auto& [file, marker] : pytest_configs) {
    fs::path p = root / file;
    if (*marker ? contains(p, marker) : is_file(p)) {
      std::string where = *marker ? std::string(file) + " " + marker : std::string(file);
      out.push_back({"pytest", where, {}});
      return;
    }
  }
  if (is_file(root / "tox.ini")) {
    out.push_back({"tox", "tox.ini", {}});
    return;
  }
  for (const char* file : {"pyproject.toml", "setup.cfg", "setup.py"}) {
    if (is_file(root / file)) {
      out.push_back({"pytest", std::string(file) + ", a Python project: pytest assumed", {}});
      return;
    }
  }
}

// The Makefile's `test` (or `check`) target, if it has one.
std::string make_target(const fs::path& root, std::string& file) {
  for (const char* name : {"GNUmakefile", "makefile", "Makefile"}) {
    if (!is_file(root / name)) continue;
    file = name;
    std::string text = read_text(root / name);
    for (const char* target : {"test", "check"}) {
      // `test:`, `test: all`, `check test::`; not `test := x` (a variable).
      std::regex rule(std::string(R"((^|\n)([^\s:#=]+[ \t]+)*)") + target +
                      R"(([ \t]+[^\s:#=]+)*[ \t]*:([^=]|$))");
      if (std::regex_search(text, rule)) return target;
    }
    return {};
  }
  return {};
}

void detect_scripts(const fs::path& root, std::vector<TestCommandCandidate>& out) {
  for (const char* script :
       {"tests/run.sh", "test/run.sh", "tests/run", "test/run", "run_tests.sh", "run-tests.sh",
        "test.sh", "tests.sh", "scripts/test.sh", "scripts/test", "script/test", "bin/test"}) {
    fs::path p = root / script;
    if (!is_file(p)) continue;
    std::string first_line;
    std::ifstream in(p);
    std::getline(in, first_line);
    std::string command;
    if (is_executable(p))
      command = "./" + std::string(script);
    else if (first_line.rfind("#!", 0) == 0 && first_line.find("bash") != std::string::npos)
      command = "bash " + std::string(script);
    else
      command = "sh " + std::string(script);
    out.push_back({command, std::string("the test script ") + script, {}});
    return;  // one script is enough
  }
}

}  // namespace

std::vector<TestCommandCandidate> detect_test_commands(const fs::path& root) {
  std::vector<TestCommandCandidate> out;
  detect_node(root, out);
  if (is_file(root / "Cargo.toml")) out.push_back({"cargo test", "Cargo.toml", {}});
  if (is_file(root / "go.mod")) out.push_back({"go test ./...", "go.mod", {}});
  detect_python(root, out);
  if (is_file(root / "CMakeLists.txt"))
    out.push_back(
        {"cmake -S . -B build && cmake --build build && ctest --test-dir build "
         "--output-on-failure --no-tests=error",
         "CMakeLists.txt, configured, built and tested in build/",
         {"build/"}});
  std::string makefile;
  if (std::string target = make_target(root, makefile); !target.empty())
    out.push_back({"make " + target, makefile + ", its `" + target + "` target", {}});
  if (is_file(root / "meson.build"))
    out.push_back({"(test -d build || meson setup build) && meson test -C build",
                   "meson.build, set up and tested in build/",
                   {"build/"}});
  for (const char* gradle : {"build.gradle", "build.gradle.kts"}) {
    if (!is_file(root / gradle)) continue;
    out.push_back({is_executable(root / "gradlew") ? "./gradlew test" : "gradle test",
                   std::string(gradle) + (is_executable(root / "gradlew") ? ", with gradlew" : ""),
                   {}});
    break;
  }
  if (is_file(root / "pom.xml"))
    out.push_back({is_executable(root / "mvnw") ? "./mvnw test" : "mvn test",
                   std::string("pom.xml") + (is_executable(root / "mvnw") ? ", with mvnw" : ""),
                   {}});
  if (is_file(root / "mix.exs")) out.push_back({"mix test", "mix.exs", {}});
  if (is_file(root / "Gemfile") && is_file(root / "Rakefile"))
    out.push_back({"bundle exec rake test", "Gemfile + Rakefile", {}});
  detect_scripts(root, out);
  return out;
}

}  // namespace loopr::cli
