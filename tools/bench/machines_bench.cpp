// Warm build caches (issue 41): a Go module's test command in a loop's worktree, through the
// bubblewrap executor with the repository's caches, at the loop's second iteration (a file edited
// since the first), against the same edit and run in the checkout with the person's own warm
// cache; and, for scale, the same worktree run with an empty cache (what every command got before
// the caches: a new private home each time). Goal: worktree ≤ 1.3× checkout. Asserts nothing.
//
//   machines_bench [runs]    (default 5; needs go: tools/install-deps.sh installs golang-go)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <loopr/exec/executor.hpp>

using namespace loopr;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int sh(const std::string& command) { return std::system(command.c_str()); }

// A module of three packages using a little of the standard library (fmt, strings, sort,
// encoding/json, net/url), each with tests.
void write_module(const fs::path& repo) {
  auto put = [&](const std::string& rel, const std::string& text) {
    fs::create_directories((repo / rel).parent_path());
    std::ofstream(repo / rel) << text;
  };
  put("go.mod", "module example.com/bench\n\ngo 1.19\n");
  put(".gitignore", ".loopr/\n");
  const char* pkgs[] = {"calc", "text", "codec"};
  const char* imports[] = {"\"sort\"", "\"strings\"", "\"encoding/json\"\n\t\"net/url\""};
  for (int i = 0; i < 3; ++i) {
    std::string p = pkgs[i];
    put(p + "/" + p + ".go", "package " + p + "\n\nimport (\n\t\"fmt\"\n\t" + imports[i] +
                                 "\n)\n\nvar _ = fmt.Sprint\n\nfunc Run(xs []string) string {\n" +
                                 (i == 0   ? "\tsort.Strings(xs)\n\treturn fmt.Sprint(xs)\n"
                                  : i == 1 ? "\treturn strings.Join(xs, \",\")\n"
                                           : "\tb, _ := json.Marshal(xs)\n\treturn "
                                             "url.QueryEscape(string(b))\n") +
                                 "}\n");
    put(p + "/" + p + "_test.go",
        "package " + p + "\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) {\n\tif Run("
        "[]string{\"b\", \"a\"}) == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n");
  }
}

// An edit that changes the package's build (as a loop's iteration does).
void edit(const fs::path& repo, int n) {
  std::ofstream(repo / "calc/calc.go", std::ios::app) << "\n// edit " << n << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  if (sh("command -v go >/dev/null") != 0) {
    std::fprintf(stderr, "machines_bench: go is not installed (tools/install-deps.sh)\n");
    return 1;
  }
  char tmpl[] = "/tmp/loopr-machines-bench-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  fs::path repo = dir / "repo", home = dir / "home";
  fs::create_directories(home);
  write_module(repo);
  if (sh("cd " + repo.string() +
         " && git init -q -b main . && git config user.email b@b && git config user.name b && "
         "git add -A && git commit -qm i && git worktree add -q .loopr/worktrees/code-001 -b l") !=
      0) {
    std::fprintf(stderr, "machines_bench: cannot make the repository\n");
    return 1;
  }
  fs::path worktree = repo / ".loopr/worktrees/code-001";
  // The checkout: the person's own go with its own (warm) cache, edited and run again.
  const std::string host_env = "cd " + repo.string() + " && HOME=" + home.string() +
                               " GOCACHE=" + (home / "go-build").string() + " GOFLAGS= ";
  sh(host_env + "go test ./... >/dev/null");
  std::vector<double> checkout, worktree_warm, worktree_cold;
  for (int i = 0; i < runs; ++i) {
    edit(repo, i);
    auto t0 = Clock::now();
    if (sh(host_env + "go test ./... >/dev/null") != 0) return 1;
    checkout.push_back(ms(Clock::now() - t0));
  }
  exec::ExecutorOptions options{RepoPaths(repo)};
  options.env = [home](const char* name) -> std::optional<std::string> {
    if (std::string(name) == "PATH") return "/usr/local/bin:/usr/bin:/bin";
    if (std::string(name) == "HOME") return home.string();
    return std::nullopt;
  };
  auto executor = exec::make_executor(SandboxConfig{}, options);
  if (auto problem = executor->unavailable()) {
    std::fprintf(stderr, "machines_bench: the sandbox does not work here: %s\n", problem->c_str());
    return 1;
  }
  auto run = [&](const std::string& command) {
    exec::Command c = exec::Command::shell(command, worktree);
    c.timeout = std::chrono::minutes(10);
    auto t0 = Clock::now();
    auto r = executor->run(c);
    if (r.exit_code != 0) std::fprintf(stderr, "machines_bench: %s\n", r.output.c_str());
    return ms(Clock::now() - t0);
  };
  run("go test ./...");  // the loop's first iteration
  for (int i = 0; i < runs; ++i) {
    edit(worktree, i);
    worktree_warm.push_back(run("go test ./..."));
    edit(worktree, 100 + i);
    worktree_cold.push_back(run("GOCACHE=$(mktemp -d) go test ./..."));
  }
  double c = median(checkout), w = median(worktree_warm), k = median(worktree_cold);
  std::printf(
      "| Go module's `go test ./...` after an edit: checkout (warm) / loop worktree 2nd "
      "iteration (repository cache) / worktree with an empty cache | %.0f / %.0f / %.0f ms; "
      "worktree %.2fx the checkout (goal <= 1.3x), %.2fx without the cache | machines_bench, "
      "median of %d, 3 packages |\n",
      c, w, k, w / c, k / c, runs);
  executor.reset();
  fs::remove_all(dir);
  return 0;
}
