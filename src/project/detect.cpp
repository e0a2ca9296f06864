#include <loopr/project/detect.hpp>

#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include <loopr/core/preflight.hpp>
#include <regex>
#include <sstream>

#include "project/files.hpp"

namespace loopr::project {
namespace {

namespace fs = std::filesystem;

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

// CMake's truth: ON, YES, TRUE, Y or a non-zero number (case-insensitive).
bool cmake_true(std::string v) {
  for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (v == "ON" || v == "YES" || v == "TRUE" || v == "Y") return true;
  return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos &&
         v.find_first_not_of('0') != std::string::npos;
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

// tox.ini's `[testenv] commands = …` (continuation lines indented) as one shell command:
// `{posargs}` dropped (`{posargs:D}`: D), `{toxinidir}` the checkout, a `- ` prefix (ignore the exit code) kept out;
// empty when a line needs another substitution only tox knows.
std::string tox_commands(const std::string& ini) {
  std::istringstream in(ini);
  std::string section, joined;
  bool in_commands = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      in_commands = false;
      continue;
    }
    if (section != "testenv") continue;
    std::string text;
    if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
      if (!in_commands) continue;
      text = line;
    } else {
      auto eq = line.find('=');
      std::string key = line.substr(0, eq);
      key.erase(key.find_last_not_of(" \t") + 1);
      in_commands = eq != std::string::npos && key == "commands";
      if (!in_commands) continue;
      text = line.substr(eq + 1);
    }
    // tox's own substitution: `{posargs:DEFAULT}` is DEFAULT when no arguments are given.
    text = std::regex_replace(text, std::regex(R"([ \t]*\{posargs\})"), "");
    text = std::regex_replace(text, std::regex(R"(\{posargs:([^}]*)\})"), "$1");
    text = std::regex_replace(text, std::regex(R"(\{toxinidir\}/?)"), "./");
    text.erase(0, text.find_first_not_of(" \t"));
    text.erase(text.find_last_not_of(" \t") + 1);
    if (text.rfind("- ", 0) == 0) text.erase(0, 2);
    if (text.empty() || text[0] == '#') continue;
    if (text.find('{') != std::string::npos) return {};
    joined += (joined.empty() ? "" : " && ") + text;
  }
  return joined;
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
    if (std::string commands = tox_commands(read_text(root / "tox.ini")); !commands.empty())
      out.push_back({commands, "tox.ini's [testenv] commands, run without tox", {}});
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

namespace {

// A value as one shell word: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& v) {
  if (!v.empty() && v.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_./:+-=,@%") == std::string::npos)
    return v;
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

fs::path user_cmake_cache(const fs::path& root) {
  std::error_code ec;
  if (is_file(root / "build" / "CMakeCache.txt")) return root / "build" / "CMakeCache.txt";
  // The folders IDEs and people name otherwise: CLion's cmake-build-<type>, _build, build-*,
  // Visual Studio's out/build/<preset>; the most recently configured one.
  std::vector<fs::path> found;
  auto consider = [&](const fs::path& dir) {
    if (is_file(dir / "CMakeCache.txt")) found.push_back(dir / "CMakeCache.txt");
  };
  for (auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec) && (name.rfind("cmake-build-", 0) == 0 || name == "_build" ||
                               name.rfind("build-", 0) == 0))
      consider(e.path());
  }
  for (auto& e : fs::directory_iterator(root / "out" / "build", ec))
    if (e.is_directory(ec)) consider(e.path());
  fs::path newest;
  fs::file_time_type when{};
  for (const auto& f : found) {
    auto t = fs::last_write_time(f, ec);
    if (!ec && (newest.empty() || t > when)) newest = f, when = t;
  }
  return newest;
}

std::string cmake_cache_options(const fs::path& root) {
  // The project's cache variables with their defaults: `option(NAME "help" [ON|OFF])` (OFF when
  // not given) and `set(NAME value CACHE TYPE "help")`.
  std::map<std::string, bool> options;
  std::map<std::string, std::string> strings;
  std::regex option(R"(option\s*\(\s*([A-Za-z0-9_]+)\s+("[^"]*"|\S+)\s*(\$\{[^}]*\}|[A-Za-z0-9_]+)?\s*\))",
                    std::regex::icase);
  std::regex cached(R"re(set\s*\(\s*([A-Za-z0-9_]+)\s+("[^"]*"|[^\s()"]+)\s+CACHE\s+(STRING|PATH|FILEPATH)\b)re",
                    std::regex::icase);
  std::vector<fs::path> files = {root / "CMakeLists.txt"};
  std::error_code ec;
  for (auto& e : fs::directory_iterator(root / "cmake", ec))
    if (e.path().extension() == ".cmake") files.push_back(e.path());
  for (const auto& f : files) {
    std::string text = read_text(f);
    for (std::sregex_iterator it(text.begin(), text.end(), option), end; it != end; ++it)
      options.emplace((*it)[1].str(), cmake_true((*it)[3].str()));
    for (std::sregex_iterator it(text.begin(), text.end(), cached), end; it != end; ++it) {
      std::string v = (*it)[2].str();
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      strings.emplace((*it)[1].str(), v);
    }
  }
  const fs::path file = user_cmake_cache(root);
  if (file.empty()) return {};
  std::ifstream cache(file);
  std::string out;
  for (std::string line; std::getline(cache, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("//", 0) == 0) continue;
    auto colon = line.find(':'), eq = line.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) continue;
    std::string name = line.substr(0, colon), value = line.substr(eq + 1);
    if (name == "CMAKE_BUILD_TYPE" && !value.empty() && value.find(' ') == std::string::npos)
      out += " -DCMAKE_BUILD_TYPE=" + value;
    if (auto d = options.find(name); d != options.end() && cmake_true(value) != d->second)
      out += " -D" + name + "=" + (cmake_true(value) ? "ON" : "OFF");
    if (auto d = strings.find(name); d != strings.end() && value != d->second)
      out += " -D" + name + "=" + shell_word(value);
  }
  return out;
}

std::string not_runnable(const std::string& command, const fs::path& root, const EnvLookup& env) {
  std::string path_env = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  for (const auto& program : command_programs(command)) {
    if (find_program(program, path_env, root)) continue;
    if (program.find('/') != std::string::npos) return "`" + program + "` does not exist";
    return "`" + program + "` is not installed (not on the PATH)";
  }
  return {};
}

std::vector<TestCommandCandidate> detect_test_commands(const fs::path& root) {
  std::vector<TestCommandCandidate> out;
  detect_node(root, out);
  if (is_file(root / "Cargo.toml")) out.push_back({"cargo test", "Cargo.toml", {}});
  if (is_file(root / "go.mod")) out.push_back({"go test ./...", "go.mod", {}});
  detect_python(root, out);
  if (is_file(root / "CMakeLists.txt")) {
    std::string options = cmake_cache_options(root);
    out.push_back({"cmake -S . -B build" + options +
                       " && cmake --build build && ctest --test-dir build "
                       "--output-on-failure --no-tests=error",
                   "CMakeLists.txt, configured, built and tested in build/" +
                       (options.empty() ? std::string()
                                        : ", with your " +
                                              user_cmake_cache(root).lexically_relative(root).string() +
                                              "'s" + options),
                   {"build/"}});
  }
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

}  // namespace loopr::project
