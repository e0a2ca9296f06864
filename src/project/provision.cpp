#include <loopr/project/provision.hpp>

#include <fstream>

#include <loopr/core/process.hpp>
#include <loopr/git/work_tree_state.hpp>

#include "project/files.hpp"

namespace loopr::project {
namespace {

namespace fs = std::filesystem;

// Not committed: ignored by git, or no file under it tracked.
bool untracked(const fs::path& root, const std::string& rel) {
  auto ignored = git::is_ignored(root, rel + "/");
  if (ignored && *ignored) return true;
  ProcessSpec spec;
  spec.argv = {"git", "-C", root.string(), "ls-files", "--", rel};
  spec.timeout = std::chrono::seconds(30);
  ProcessResult r = run_process(spec);
  return r.succeeded() && r.output.empty();
}

bool is_venv(const fs::path& p) { return is_file(p / "pyvenv.cfg") && is_dir(p / "bin"); }

// `pytest …` (the command init found) run by `python -m pytest …` of `python`.
std::optional<std::string> with_python(const std::string& validation, const std::string& python) {
  if (validation == "pytest" || validation.rfind("pytest ", 0) == 0)
    return python + " -m " + validation;
  return std::nullopt;
}

bool python_project(const fs::path& root) {
  for (const char* f : {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini"})
    if (is_file(root / f)) return true;
  return false;
}

// `src/<package>/__init__.py` or `src/<module>.py`.
bool src_layout(const fs::path& root) {
  std::error_code ec;
  if (!is_dir(root / "src")) return false;
  for (const auto& e : fs::directory_iterator(root / "src", ec)) {
    if (e.is_directory(ec) && is_file(e.path() / "__init__.py")) return true;
    if (e.path().extension() == ".py") return true;
  }
  return false;
}

// A coverage tool named by package.json (c8, nyc, jest/vitest --coverage) writes coverage/.
void node_outputs(const fs::path& root, Provisioning& p) {
  std::ifstream in(root / "package.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  bool coverage = false;
  for (const char* tool : {"\"c8", "\"nyc", " c8 ", " nyc ", "--coverage"})
    coverage = coverage || text.find(tool) != std::string::npos;
  auto ignored = git::is_ignored(root, "coverage/");
  if (coverage && (!ignored || !*ignored)) p.ignores.push_back("coverage/");
}

void node(const fs::path& root, Provisioning& p) {
  if (!is_file(root / "package.json")) return;
  node_outputs(root, p);
  if (is_dir(root / "node_modules")) {
    if (!untracked(root, "node_modules")) return;
    p.read_only.push_back("node_modules");
    p.notes.push_back(
        "node_modules/ is not in git: every worktree sees this checkout's read-only "
        "(sandbox.read_only), so the tests find its packages and node_modules/.bin");
    return;
  }
  p.hints.push_back(
      "package.json but no node_modules/: run your install (`npm install`) and add "
      "`node_modules` to sandbox.read_only, or let every worktree install it: "
      "setup: {commands: [\"npm ci\"], network: true}");
}

void python(const fs::path& root, const std::string& validation, const EnvLookup& env,
            Provisioning& p) {
  if (!python_project(root) && validation.find("pytest") == std::string::npos) return;
  std::optional<std::string> venv;  // relative, or absolute when outside the checkout
  if (auto active = env("VIRTUAL_ENV"); active && !active->empty() && is_venv(*active)) {
    std::error_code ec;
    fs::path abs = fs::weakly_canonical(*active, ec);
    fs::path rel = abs.lexically_relative(fs::weakly_canonical(root, ec));
    if (!rel.empty() && *rel.begin() != "..")
      venv = rel.string();
    else
      venv = abs.string();
  }
  for (const char* name : {".venv", "venv", "env"})
    if (!venv && is_venv(root / name)) venv = name;
  const bool src = src_layout(root);
  if (venv) {
    const bool inside = !fs::path(*venv).is_absolute();
    if (inside && !untracked(root, *venv)) return;
    p.read_only.push_back(*venv);
    p.notes.push_back(inside ? "the virtualenv " + *venv +
                                   "/ is not in git: every worktree sees it read-only "
                                   "at the same place (sandbox.read_only)"
                             : "the active virtualenv " + *venv +
                                   " is outside the repository: visible read-only at its place "
                                   "(sandbox.read_only)");
    if (auto v = with_python(validation, *venv + "/bin/python")) {
      p.validation = *v;
      p.notes.push_back("tests run with the virtualenv's python (`" + *v +
                        "`): its console scripts name this checkout's path, hidden in the sandbox");
    }
  } else if (validation == "pytest" || validation.rfind("pytest ", 0) == 0) {
    const std::pair<const char*, const char*> tools[] = {
        {"uv.lock", "uv run --no-sync "}, {"poetry.lock", "poetry run "}, {"pdm.lock", "pdm run "}};
    for (const auto& [lock, prefix] : tools) {
      if (!is_file(root / lock)) continue;
      p.validation = prefix + validation;
      p.notes.push_back(std::string("tests run the way a user of ") + lock + " does: `" +
                        *p.validation + "`");
      break;
    }
    p.hints.push_back(
        "no virtualenv in the checkout: if the tests need installed packages, make the one you "
        "use visible read-only (sandbox.read_only, e.g. [.venv] or ~/.cache/pypoetry/"
        "virtualenvs) and run its python in loops.code.validation, or install them in setup:");
  }
  if (src) {
    p.env.push_back("PYTHONPATH=$WORKTREE/src");
    p.notes.push_back(
        "src/ layout: PYTHONPATH=$WORKTREE/src (sandbox.env) makes the tests import the "
        "worktree's code, not the checkout's that an editable install points at");
  }
  for (const char* dir : {"__pycache__", ".pytest_cache"}) {
    auto ignored = git::is_ignored(root, std::string(dir) + "/");
    if (!ignored || !*ignored) p.ignores.push_back(std::string(dir) + "/");
  }
}

}  // namespace

Provisioning detect_provisioning(const fs::path& root, const std::string& validation,
                                 const EnvLookup& env) {
  Provisioning p;
  node(root, p);
  python(root, validation, env, p);
  return p;
}

}  // namespace loopr::project
