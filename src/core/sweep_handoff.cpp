#include <map>
#include <mutex>

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

std::size_t handed_sweeps() {
  std::lock_guard lock(g_mutex);
  return kept().size();
}

}  // namespace loopr
