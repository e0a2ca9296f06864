#include "exec/cgroups.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

bool write_text(const fs::path& file, const std::string& text) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::vector<int> read_pids(const fs::path& procs) {
  std::vector<int> out;
  std::ifstream in(procs);
  for (int pid; in >> pid;) out.push_back(pid);
  return out;
}

bool pid_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or 0.
unsigned long long start_time(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

// A daemon's parent group is named by its pid AND its start time: a process that gets the pid
// of a daemon killed before (pids are reused) never takes over, or counts, that daemon's groups.
std::string parent_name(int pid) {
  return "loopr-" + std::to_string(pid) + "-" + std::to_string(start_time(pid));
}

// Whether the daemon that made group `name` (`loopr-PID-START`, or an older `loopr-PID`) runs.
bool owner_alive(const std::string& name) {
  int pid = std::atoi(name.c_str() + 6);
  if (pid <= 0 || !pid_alive(pid)) return false;
  auto dash = name.find('-', 6);
  if (dash == std::string::npos) return true;
  return std::strtoull(name.c_str() + dash + 1, nullptr, 10) == start_time(pid);
}

// Removes `dir` and its sub-groups, killing their members first. With `wait`, gives dying
// processes up to a few seconds to go; without, tries once and leaves what is still busy for
// the next sweep (a daemon's start must not wait for another's leftovers).
void remove_tree(const fs::path& dir, bool wait = true) {
  std::error_code ec;
  std::vector<fs::path> groups;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) groups.push_back(it->path());
  groups.push_back(dir);
  std::sort(groups.begin(), groups.end(), [](const fs::path& a, const fs::path& b) {
    return a.string().size() > b.string().size();  // deepest first
  });
  for (const auto& g : groups)
    for (int pid : read_pids(g / "cgroup.procs")) ::kill(pid, SIGKILL);
  auto deadline =
      std::chrono::steady_clock::now() + (wait ? std::chrono::seconds(3) : std::chrono::seconds(0));
  for (const auto& g : groups) {
    while (true) {
      auto pids = read_pids(g / "cgroup.procs");
      for (int pid : pids) ::kill(pid, SIGKILL);
      if (::rmdir(g.c_str()) == 0 || errno == ENOENT) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        if (wait)
          spdlog::warn("sandbox: cannot remove the control group {}: {}", g.string(),
                       std::strerror(errno));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(pids.empty() ? 5 : 20));
    }
  }
}

// This daemon's parent group under a controller root; groups of dead daemons there are removed.
fs::path make_parent(const fs::path& root) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with("loopr-") || !it->is_directory(ec)) continue;
    if (name != parent_name(::getpid()) && !owner_alive(name)) {
      spdlog::info("sandbox: removing the control groups of a daemon that is gone ({})",
                   it->path().string());
      remove_tree(it->path());
    }
  }
  fs::path parent = root / parent_name(::getpid());
  fs::create_directory(parent, ec);
  if (ec || ::access(parent.c_str(), W_OK) != 0) return {};
  return parent;
}

}  // namespace

void kill_and_remove_groups(const fs::path& dir) { remove_tree(dir); }

std::unique_ptr<CommandGroups> CommandGroups::open(bool start_ahead) {
  auto g = std::unique_ptr<CommandGroups>(new CommandGroups());
  g->start_ahead_ = start_ahead;
  std::error_code ec;
  const fs::path base = "/sys/fs/cgroup";
  if (fs::exists(base / "cgroup.controllers", ec)) {
    // cgroup v2 mounted at the top: a group beside ours needs the root's subtree control.
    std::ifstream controllers(base / "cgroup.subtree_control");
    std::string text((std::istreambuf_iterator<char>(controllers)), {});
    if (text.find("pids") == std::string::npos)
      write_text(base / "cgroup.subtree_control", "+pids");
    if (text.find("memory") == std::string::npos)
      write_text(base / "cgroup.subtree_control", "+memory");
    fs::path parent = make_parent(base);
    if (parent.empty()) return nullptr;
    if (!write_text(parent / "cgroup.subtree_control", "+pids")) {
      remove_tree(parent);
      return nullptr;
    }
    g->v2_ = true;
    g->pids_root_ = parent;
    if (write_text(parent / "cgroup.subtree_control", "+memory")) g->memory_root_ = parent;
    g->start_reaper();
    return g;
  }
  if (::access((base / "pids").c_str(), W_OK) != 0) return nullptr;
  g->pids_root_ = make_parent(base / "pids");
  if (g->pids_root_.empty()) return nullptr;
  if (::access((base / "memory").c_str(), W_OK) == 0)
    g->memory_root_ = make_parent(base / "memory");
  g->start_reaper();
  return g;
}

namespace {

// The reaper's script: $1 the pids group, $2 the memory group (or $1 again). Its standard input
// is the pipe whose other end only the daemon holds (close-on-exec, so no command inherits it).
// Every member is killed until a pass finds none (a process forking as it is killed shows up in
// the next pass), then the emptied groups are removed (the next daemon removes any left).
constexpr const char* kReaperScript = R"(trap '' INT TERM HUP QUIT
while read -r _; do :; done
i=0
while [ $i -lt 200 ]; do
  pids=
  for f in "$1"/*/cgroup.procs "$1"/cgroup.procs "$2"/*/cgroup.procs "$2"/cgroup.procs; do
    [ -r "$f" ] && while read -r p; do pids="$pids $p"; done < "$f"
  done
  [ -z "$pids" ] && break
  kill -9 $pids 2>/dev/null
  sleep 0.02
  i=$((i + 1))
done
rmdir "$1"/*/ "$2"/*/ 2>/dev/null
rmdir "$1" "$2" 2>/dev/null
exit 0
)";

}  // namespace

void CommandGroups::start_reaper() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    spdlog::warn("sandbox: no reaper for a killed daemon's commands (pipe: {})",
                 std::strerror(errno));
    return;
  }
  const std::string pids = pids_root_.string();
  const std::string memory = memory_root_.empty() ? pids : memory_root_.string();
  const char* argv[] = {"/bin/sh", "-c", kReaperScript, "loopr-reaper", pids.c_str(),
                        memory.c_str(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);  // out of the terminal's Ctrl-C
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  // Nothing of the daemon's environment (keys, tokens): the script needs only `sleep` and `rmdir`.
  const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
  int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char* const*>(argv),
                         const_cast<char* const*>(envp));
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    spdlog::warn("sandbox: no reaper for a killed daemon's commands (/bin/sh: {})",
                 std::strerror(rc));
    return;
  }
  reaper_pipe_ = fds[1];
  reaper_pid_ = pid;
}

CommandGroups::~CommandGroups() {
  if (!pids_root_.empty()) remove_tree(pids_root_);
  if (!memory_root_.empty() && memory_root_ != pids_root_) remove_tree(memory_root_);
  if (reaper_pipe_ >= 0) ::close(reaper_pipe_);  // the reaper finds nothing left and ends
  if (reaper_pid_ > 0)
    while (::waitpid(reaper_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

std::string CommandGroups::describe() const {
  std::string s = v2_ ? "cgroup v2 (pids" : "cgroup v1 (pids";
  if (!memory_root_.empty()) s += ", memory";
  return s + ")";
}

namespace {

long long counter(const fs::path& file, const std::string& name) {
  std::ifstream in(file);
  for (std::string key; in >> key;) {
    long long v = 0;
    if (!(in >> v)) break;
    if (key == name) return v;
  }
  return 0;
}

}  // namespace

bool CommandGroups::set_limits(Kept& k, std::uint64_t max_processes,
                               std::uint64_t max_memory_bytes) const {
  if (k.dirs.empty()) return false;
  if (k.processes != max_processes) {
    if (!write_text(k.dirs.front() / "pids.max", std::to_string(max_processes))) return false;
    k.processes = max_processes;
  }
  if (!k.memory || k.memory_bytes == max_memory_bytes) return true;
  const fs::path& memory = v2_ ? k.dirs.front() : k.dirs.back();
  bool set = v2_ ? write_text(memory / "memory.max", std::to_string(max_memory_bytes))
                 : write_text(memory / "memory.limit_in_bytes", std::to_string(max_memory_bytes));
  if (set) k.memory_bytes = max_memory_bytes;
  return set;
}

std::optional<CommandGroups::Kept> CommandGroups::make(std::uint64_t max_processes,
                                                       std::uint64_t max_memory_bytes) {
  // Numbered for the whole process: two executors of one daemon share its parent group.
  static std::atomic<std::uint64_t> next{0};
  std::string name = "cmd-" + std::to_string(++next);
  Kept k;
  auto add = [&](const fs::path& root) -> fs::path {
    fs::path dir = root / name;
    if (::mkdir(dir.c_str(), 0755) != 0) return {};
    k.dirs.push_back(dir);
    return dir;
  };
  if (add(pids_root_).empty()) return std::nullopt;
  if (!memory_root_.empty()) k.memory = v2_ || !add(memory_root_).empty();
  if (v2_ && k.memory) write_text(k.dirs.front() / "memory.swap.max", "0");
  if (!set_limits(k, max_processes, max_memory_bytes)) {
    for (const auto& d : k.dirs) remove_tree(d);
    return std::nullopt;
  }
  return k;
}

void CommandGroups::remove_drained() {
  for (auto it = draining_.begin(); it != draining_.end();) {
    bool gone = true;
    for (const auto& dir : it->dirs) {
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) continue;
      gone = false;
      for (int pid : read_pids(dir / "cgroup.procs")) ::kill(pid, SIGKILL);
    }
    it = gone ? draining_.erase(it) : std::next(it);
  }
}

CommandGroups::Group CommandGroups::acquire(std::uint64_t max_processes,
                                            std::uint64_t max_memory_bytes) {
  std::optional<Kept> kept;
  {
    std::lock_guard lock(mutex_);
    if (start_ahead_) {
      remove_drained();
    } else {
      for (auto it = draining_.begin(); it != draining_.end();) {
        bool empty = true;
        for (const auto& dir : it->dirs) empty = empty && read_pids(dir / "cgroup.procs").empty();
        if (empty) {
          free_.push_back(std::move(*it));
          it = draining_.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (!free_.empty()) {
      kept = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (kept && !set_limits(*kept, max_processes, max_memory_bytes)) {
    for (const auto& d : kept->dirs) remove_tree(d);
    kept.reset();
  }
  if (!kept) kept = make(max_processes, max_memory_bytes);
  Group group;
  if (!kept) return group;
  group.dirs_ = kept->dirs;
  group.memory_ = kept->memory;
  group.processes_ = kept->processes;
  group.memory_bytes_ = kept->memory_bytes;
  // The process joins by writing "0" (core/process.cpp): on cgroup v1 to `tasks`, no global lock.
  const char* join = start_ahead_ && !v2_ ? "tasks" : "cgroup.procs";
  for (const auto& dir : group.dirs_) {
    int fd = ::open((dir / join).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) group.fds_.push_back(fd);
  }
  group.owner_ = this;
  if (group.fds_.size() != group.dirs_.size()) {
    for (int fd : group.fds_) ::close(fd);
    group.fds_.clear();
  }
  // A fresh group's counters are zero; a reused one's count from here.
  if (!start_ahead_) {
    group.pids_refused_before_ = group.pids_refused();
    group.oom_kills_before_ = group.oom_kills();
  }
  return group;
}

void CommandGroups::release(Group& group) {
  for (int fd : group.fds_) ::close(fd);
  group.fds_.clear();
  if (group.dirs_.empty()) return;
  // Whatever the command left (normally its pid namespace is gone already) dies now.
  auto pids = group.members();
  for (int pid : pids) ::kill(pid, SIGKILL);
  Kept k{group.dirs_, group.memory_, group.processes_, group.memory_bytes_};
  group.dirs_.clear();
  if (!start_ahead_) {
    std::lock_guard lock(mutex_);
    (pids.empty() ? free_ : draining_).push_back(std::move(k));
    return;
  }
  // Never used again: removed now if its processes are gone, else once they are; the next
  // command's group is made here, not on its start.
  auto next = make(k.processes, k.memory_bytes);
  std::lock_guard lock(mutex_);
  draining_.push_back(std::move(k));
  remove_drained();
  if (next) free_.push_back(std::move(*next));
}

CommandGroups::Group::Group(Group&& other) noexcept
    : owner_(other.owner_),
      dirs_(std::move(other.dirs_)),
      fds_(std::move(other.fds_)),
      memory_(other.memory_),
      pids_refused_before_(other.pids_refused_before_),
      oom_kills_before_(other.oom_kills_before_),
      processes_(other.processes_),
      memory_bytes_(other.memory_bytes_) {
  other.owner_ = nullptr;
  other.dirs_.clear();
  other.fds_.clear();
}

CommandGroups::Group::~Group() {
  if (owner_) {
    owner_->release(*this);
  } else {
    for (int fd : fds_) ::close(fd);
    for (const auto& dir : dirs_) remove_tree(dir);
  }
}

std::vector<int> CommandGroups::Group::members() const {
  std::set<int> all;
  for (const auto& dir : dirs_)
    for (int pid : read_pids(dir / "cgroup.procs")) all.insert(pid);
  return {all.begin(), all.end()};
}

long long CommandGroups::Group::pids_refused() const {
  return dirs_.empty() ? 0 : counter(dirs_.front() / "pids.events", "max") - pids_refused_before_;
}

long long CommandGroups::Group::oom_kills() const {
  long long n = 0;
  for (const auto& dir : dirs_)
    n += counter(dir / "memory.events", "oom_kill") +
         counter(dir / "memory.oom_control", "oom_kill");
  return n - oom_kills_before_;
}

}  // namespace loopr::exec
