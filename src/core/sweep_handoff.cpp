#include <map>
#include <mutex>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>

namespace loopr {
namespace {

std::mutex g_mutex;
std::map<std::string, SweptListing>& kept() {
  static std::map<std::string, SweptListing> map;
  return map;
}

// One key per worktree however it is spelled (a trailing slash, `a/./b`).
std::string key_of(const std::filesystem::path& worktree) {
  std::string key = worktree.lexically_normal().string();
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

}  // namespace

void SweptListing::add(const std::string& rel, const struct stat* st) {
  Entry e;
  e.rel = rel;
  e.folder = st == nullptr;
  if (st != nullptr) e.st = *st;
  entries.push_back(std::move(e));
}

void SweptListing::replay(const SweepVisitor& visit) const {
  for (const Entry& e : entries) visit(e.rel, e.folder ? nullptr : &e.st);
}

void hand_over_sweep(const std::filesystem::path& worktree, SweptListing listing) {
  std::lock_guard lock(g_mutex);
  kept()[key_of(worktree)] = std::move(listing);
}

std::optional<SweptListing> take_handed_sweep(const std::filesystem::path& worktree) {
  std::lock_guard lock(g_mutex);
  auto it = kept().find(key_of(worktree));
  if (it == kept().end()) return std::nullopt;
  std::optional<SweptListing> out(std::move(it->second));
  kept().erase(it);
  return out;
}

void drop_handed_sweep(const std::filesystem::path& worktree) {
  std::lock_guard lock(g_mutex);
  kept().erase(key_of(worktree));
}

namespace {
std::map<std::string, CleanCheckpoint>& clean_kept() {
  static std::map<std::string, CleanCheckpoint> map;
  return map;
}

// One key per worktree however it is reached (the engine's path, libgit2's resolved one).
std::string clean_key(const std::filesystem::path& worktree) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(worktree, ec);
  return key_of(ec ? worktree : real);
}
}  // namespace

void keep_clean_checkpoint(const std::filesystem::path& worktree, CleanCheckpoint clean) {
  const std::string key = clean_key(worktree);
  std::lock_guard lock(g_mutex);
  clean_kept()[key] = std::move(clean);
}

std::optional<CleanCheckpoint> take_clean_checkpoint(const std::filesystem::path& worktree) {
  const std::string key = clean_key(worktree);
  std::lock_guard lock(g_mutex);
  auto it = clean_kept().find(key);
  if (it == clean_kept().end()) return std::nullopt;
  std::optional<CleanCheckpoint> out(std::move(it->second));
  clean_kept().erase(it);
  return out;
}

void drop_clean_checkpoint(const std::filesystem::path& path) {
  const std::string key = clean_key(path);
  std::lock_guard lock(g_mutex);
  // A command started in a folder of the worktree writes the worktree all the same.
  for (auto it = clean_kept().begin(); it != clean_kept().end();) {
    const std::string& kept = it->first;
    const bool inside = key == kept || kept == "/" ||
                        (key.size() > kept.size() && key.compare(0, kept.size(), kept) == 0 &&
                         key[kept.size()] == '/');
    it = inside ? clean_kept().erase(it) : std::next(it);
  }
}

std::size_t clean_checkpoints() {
  std::lock_guard lock(g_mutex);
  return clean_kept().size();
}

std::size_t handed_sweeps() {
  std::lock_guard lock(g_mutex);
  return kept().size();
}

}  // namespace loopr
