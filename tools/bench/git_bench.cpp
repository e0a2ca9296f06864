// git_bench: loopr's git layer next to the git CLI on a repository of realistic size.
// Adds 100 worktrees of a 5,000-file repository with loopr and with `git worktree add`, then
// times checkpoint commits of a 1-file and a 1,000-file change. Prints figures; asserts nothing.
//
// Usage: git_bench [worktrees=100] [files=5000] [merges=300] [worktrees-only]
// (worktrees-only: only the worktrees, their time and disk; run.sh's 50,000-file case;
// LOOPR_BENCH_GITATTRIBUTES=1 adds a .gitattributes, which turns libgit2's checkout filters on)
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run(const std::string& command) {
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
}

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A file of ~1 KiB of source-like text, distinct per index and version.
std::string content(int index, int version) {
  std::string s;
  for (int line = 0; line < 24; ++line) {
    s += "int f" + std::to_string(index) + "_" + std::to_string(line) + "() { return " +
         std::to_string(index * 31 + line + version * 1000) + "; }\n";
  }
  return s;
}

fs::path file_path(const fs::path& root, int index) {
  return root / ("src/dir" + std::to_string(index / 100)) /
         ("file" + std::to_string(index) + ".cpp");
}

template <typename T>
T must(loopr::Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// What `du -s` counts: allocated blocks of every file and folder under `path`, not following links.
double disk_mib(const fs::path& path) {
  std::error_code ec;
  std::uint64_t bytes = 0;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (::lstat(it->path().c_str(), &st) == 0)
      bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return static_cast<double>(bytes) / (1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  int worktrees = argc > 1 ? std::atoi(argv[1]) : 100;
  int files = argc > 2 ? std::atoi(argv[2]) : 5000;
  std::string tmpl = (fs::temp_directory_path() / "loopr-git-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  fs::path dir = tmpl;
  fs::path root = dir / "repo";

  std::printf("repository: %d files (~1 KiB each) in %s\n", files, root.c_str());
  std::fflush(stdout);
  fs::create_directories(root);
  for (int i = 0; i < files; ++i) write(file_path(root, i), content(i, 0));
  write(root / ".gitignore", ".loopr/worktrees/\n.loopr/archive/\n.loopr/state/\n");
  // LOOPR_BENCH_GITATTRIBUTES=1: a repository with a .gitattributes (one line that changes no
  // file here), so libgit2's checkout runs its filters and attribute lookups for every file.
  if (const char* a = std::getenv("LOOPR_BENCH_GITATTRIBUTES"); a && std::string(a) == "1")
    write(root / ".gitattributes", "*.bin binary\n");
  run("cd " + root.string() +
      " && git init -q -b trunk && git config user.name bench && git config user.email b@x &&"
      " git add -A && git commit -q -m initial");

  auto repo = must(loopr::git::Repository::open(root), "open");
  must(repo.create_branch(loopr::git::integration_branch("001"), "trunk"), "integration branch");

  // loopr and the CLI take turns, worktree by worktree, so that the state of the file system
  // (ext4's inode allocator after mass deletions) weighs on both alike.
  std::vector<double> loopr_ms;
  std::vector<double> git_ms;
  // Which goes first alternates too: the first checkout after the repository's 50,000 files
  // were written (or after the other side's) meets ext4's allocator at its worst.
  std::vector<double> ratios;
  for (int i = 0; i < worktrees; ++i) {
    std::string id = "001-" + std::to_string(i);
    std::string branch = loopr::git::loop_branch("001", id);
    auto loopr_add = [&] {
      auto start = Clock::now();
      must(repo.create_branch(branch, loopr::git::integration_branch("001")), "create_branch");
      must(repo.add_worktree(id, branch), "add_worktree");
      loopr_ms.push_back(1000 * seconds_since(start));
    };
    auto git_add = [&] {
      auto start = Clock::now();
      run("cd " + root.string() + " && git worktree add -q -b cli/" + std::to_string(i) + " " +
          (dir / "cli" / std::to_string(i)).string() + " trunk");
      git_ms.push_back(1000 * seconds_since(start));
    };
    if (i % 2 == 0) {
      loopr_add();
      git_add();
    } else {
      git_add();
      loopr_add();
    }
    ratios.push_back(loopr_ms.back() / git_ms.back());
  }
  double loopr_s = 0, git_s = 0;
  for (double v : loopr_ms) loopr_s += v / 1000;
  for (double v : git_ms) git_s += v / 1000;

  std::printf("%d worktrees, loopr (branch + add_worktree): %.2f s (%.1f ms each, median %.1f)\n",
              worktrees, loopr_s, 1000 * loopr_s / worktrees, median(loopr_ms));
  std::printf("%d worktrees, git worktree add -b:           %.2f s (%.1f ms each, median %.1f)\n",
              worktrees, git_s, 1000 * git_s / worktrees, median(git_ms));
  std::printf("ratio loopr / git: %.2f (of the sums; median of the pairs' ratios %.2f)\n",
              loopr_s / git_s, median(ratios));
  // Disk: the work tree's files and git's record of it (HEAD, index, …), as du counts them.
  fs::path loopr_wt = must(repo.worktree("001-0"), "worktree").path();
  double loopr_disk = disk_mib(loopr_wt) + disk_mib(root / ".git/worktrees/001-0");
  double git_disk = disk_mib(dir / "cli" / "0") + disk_mib(root / ".git/worktrees/0");
  std::printf("disk per worktree: loopr %.1f MiB, git %.1f MiB (work tree + its .git/worktrees "
              "record; the repository's own .git %.1f MiB)\n",
              loopr_disk, git_disk, disk_mib(root / ".git") - disk_mib(root / ".git/worktrees"));
  std::fflush(stdout);
  if (argc > 4 && std::string(argv[4]) == "worktrees-only") {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return 0;
  }

  // Checkpoints: each size is measured over several rounds (median), loopr and the CLI taking
  // turns, so a busy machine skews both alike; which side goes first alternates by round, so
  // neither always finds the page cache the other just warmed.
  auto wt = must(repo.worktree("001-0"), "worktree");
  fs::path cli_wt = dir / "cli" / "0";
  int version = 1;
  for (int changed : {1, std::min(1000, files)}) {
    std::vector<double> loopr_ms;
    std::vector<double> git_ms;
    for (int round = 0; round < 5; ++round, ++version) {
      for (int i = 0; i < changed; ++i) {
        // Different content on each side: both worktrees share one object store, and git
        // finding loopr's blobs already written would make it look faster than it is.
        write(file_path(wt.path(), i), content(i, version));
        write(file_path(cli_wt, i), content(i, -version));
      }
      auto time_loopr = [&] {
        auto start = Clock::now();
        auto c = must(wt.checkpoint("bench: " + std::to_string(changed) + " files"), "checkpoint");
        loopr_ms.push_back(1000 * seconds_since(start));
        return c.kind == loopr::git::CommitOutcome::Kind::committed;
      };
      auto time_git = [&] {
        auto start = Clock::now();
        run("cd " + cli_wt.string() + " && git add -A && git commit -q -m bench");
        git_ms.push_back(1000 * seconds_since(start));
      };
      if (round % 2 == 1) time_git();
      if (!time_loopr()) return 1;
      if (round % 2 == 0) time_git();
    }
    std::printf(
        "checkpoint of a %4d-file change: loopr %7.1f ms   git add -A && git commit %7.1f ms"
        "   (median of 5)\n",
        changed, median(loopr_ms), median(git_ms));
  }
  std::vector<double> nothing_ms;
  for (int round = 0; round < 5; ++round) {
    auto start = Clock::now();
    auto nothing = must(wt.checkpoint("bench: nothing"), "checkpoint");
    nothing_ms.push_back(1000 * seconds_since(start));
    if (nothing.kind != loopr::git::CommitOutcome::Kind::nothing_to_commit) return 1;
  }
  std::printf("checkpoint with nothing changed:  loopr %7.1f ms (median of 5)\n",
              median(nothing_ms));
  std::fflush(stdout);

  // Merges into a moving integration branch: `merges` loop branches, each one commit (a new
  // file) on the same integration tip, merged one after the other as a plan's code loops are.
  // Each merge walks back through the merge commits made before it to find the merge base.
  int merges = argc > 3 ? std::atoi(argv[3]) : 300;
  if (merges > 0) {
    std::string tip = must(repo.branch_sha(loopr::git::integration_branch("001")), "tip");
    std::string script;
    for (int i = 0; i < merges; ++i) {
      std::string body = "work " + std::to_string(i) + "\n";
      script += "commit refs/heads/merge-bench/" + std::to_string(i) +
                "\ncommitter bench <b@x> 1700000000 +0000\ndata 5\nwork\nfrom " + tip +
                "\nM 100644 inline work/" + std::to_string(i) + ".txt\ndata " +
                std::to_string(body.size()) + "\n" + body + "\n";
    }
    write(dir / "fast-import.txt", script);
    run("cd " + root.string() + " && git fast-import --quiet < " +
        (dir / "fast-import.txt").string());
    std::vector<double> ms;
    for (int i = 0; i < merges; ++i) {
      auto start = Clock::now();
      auto m = must(repo.merge("merge-bench/" + std::to_string(i),
                               loopr::git::integration_branch("001"), "merge " + std::to_string(i)),
                    "merge");
      ms.push_back(1000 * seconds_since(start));
      if (m.kind == loopr::git::MergeOutcome::Kind::conflict) return 1;
    }
    int n = std::max(1, std::min(50, merges / 4));
    auto avg = [&](int from) {
      double s = 0;
      for (int i = from; i < from + n; ++i) s += ms[static_cast<std::size_t>(i)];
      return s / n;
    };
    std::printf(
        "merge %d branches one by one into the integration branch: first %d %.1f ms each, last %d "
        "%.1f ms each\n",
        merges, n, avg(0), n, avg(merges - n));
  }

  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
