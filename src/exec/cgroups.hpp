// Per-command control groups: a command and everything it starts are counted together, so a
// process limit holds even for root (which RLIMIT_NPROC does not bind), memory is bounded, and
// whatever is left when the command ends is killed as one. Used when the daemon may create
// groups (root, or a delegated cgroup v2 subtree); otherwise commands get rlimits only.
// Each command gets a group no other command was in: the next one is made when a command's
// group is released (off the next command's start, ~0.2 ms), and a used group is removed once
// its processes are gone. The command's process joins it itself ("0"; on cgroup v1 through
// `tasks`, which moves one thread without the global lock `cgroup.procs` takes: 0.03 ms instead
// of an RCU grace period of 5-12 ms; issue 32).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace loopr::exec {

class CommandGroups {
 public:
  /// Finds a writable pids (and memory) controller, makes this daemon's parent group and removes
  /// groups of daemons that are gone. nullptr when control groups cannot be used here.
  /// `start_ahead` false: the start before issue 32 (a group is reused once empty, joined through
  /// `cgroup.procs`), kept for measuring.
  static std::unique_ptr<CommandGroups> open(bool start_ahead = true);
  ~CommandGroups();

  /// One command's group, for the length of the command. When it goes, whatever is still in
  /// it is killed and the group is kept for the next command.
  class Group {
   public:
    Group() = default;
    Group(Group&&) noexcept;
    Group& operator=(Group&&) = delete;
    ~Group();
    /// `cgroup.procs` (cgroup v1: `tasks`) of each controller's group, open for writing
    /// (ProcessSpec::cgroup_procs_fds).
    const std::vector<int>& procs_fds() const { return fds_; }
    bool limits_memory() const { return memory_; }
    /// Processes in the group now.
    std::vector<int> members() const;
    /// How often the process limit refused a fork, and the memory limit killed, during this use.
    long long pids_refused() const;
    long long oom_kills() const;

   private:
    friend class CommandGroups;
    CommandGroups* owner_ = nullptr;
    std::vector<std::filesystem::path> dirs_;
    std::vector<int> fds_;
    bool memory_ = false;
    long long pids_refused_before_ = 0, oom_kills_before_ = 0;
    std::uint64_t processes_ = 0, memory_bytes_ = 0;
  };

  /// A group with these limits (a kept one, or a fresh one); an empty Group (no fds) if none
  /// could be made.
  Group acquire(std::uint64_t max_processes, std::uint64_t max_memory_bytes);

  /// "cgroup v1 (pids, memory)" and the like.
  std::string describe() const;
  bool limits_memory() const { return !memory_root_.empty(); }

 private:
  struct Kept {
    std::vector<std::filesystem::path> dirs;
    bool memory = false;
    std::uint64_t processes = 0, memory_bytes = 0;  ///< the limits written last
  };
  std::optional<Kept> make(std::uint64_t max_processes, std::uint64_t max_memory_bytes);
  void release(Group& group);
  /// Removes the used groups whose processes are gone (the rest stay for a later call). Locked.
  void remove_drained();
  bool set_limits(Kept& k, std::uint64_t max_processes, std::uint64_t max_memory_bytes) const;

  /// Starts the reaper: a host shell, outside every sandbox, that waits for this daemon to go
  /// (its pipe's end of file: an exit or a SIGKILL alike) and then kills whatever is still in
  /// this daemon's groups. Needed because bubblewrap's sandbox init sets its own parent-death
  /// signal only once the sandbox is set up (bubblewrap 0.8 `do_init`), and never checks whether
  /// its parent is already gone: a daemon killed while a command's sandbox is being made would
  /// otherwise leave that command running, unwatched, until the next daemon starts.
  void start_reaper();

  bool v2_ = false;
  bool start_ahead_ = true;
  int reaper_pipe_ = -1;  ///< the write end; closed at the end (or by the kernel at a kill)
  int reaper_pid_ = -1;
  std::filesystem::path pids_root_, memory_root_;  ///< this daemon's parent groups (same dir in v2)
  std::mutex mutex_;
  std::vector<Kept> free_;
  /// Released with processes still dying in them: removed (before issue 32: kept) once they are
  /// empty (checked at the next acquire), so no command waits for the kernel to finish the
  /// previous one's.
  std::vector<Kept> draining_;
};

/// Kills every process in the group at `dir` and its sub-groups, then removes them, deepest
/// first. Used for a dead daemon's groups and at the end.
void kill_and_remove_groups(const std::filesystem::path& dir);

}  // namespace loopr::exec
