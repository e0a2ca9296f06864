// Each command runs as `bwrap … -- /bin/sh -c COMMAND` (bwrap_args.cpp has the mounts):
//  - bubblewrap itself is started with the allowlisted environment only (its pid 1 inside the
//    sandbox shows its own environment in /proc/1/environ), and with no descriptor of the
//    daemon but the two it is handed (the sanitised git config and its status pipe);
//  - rlimits for open files and file size, RLIMIT_NPROC where it binds (not for root), and a
//    control group per command for processes and memory where the daemon may make one;
//  - bwrap's --json-status-fd tells a sandbox that could not start (no child) from a command
//    that failed, so a broken sandbox is never reported to the model as failing tests.
#include "exec/bwrap_executor.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>

#include <loopr/core/secret_paths.hpp>

#include "exec/bwrap_args.hpp"
#include "exec/cgroups.hpp"
#include "exec/netns_pool.hpp"
#include "exec/probe_cache.hpp"
#include "exec/seccomp_filter.hpp"

extern char** environ;

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::string find_in_path(const std::string& program, const EnvLookup& env) {
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0 ? program : std::string();
  std::string path = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Reads a whole small file (a control group's counters).
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// A memory file holding `text`, positioned at its start (bwrap's --ro-bind-data and --seccomp
// read it).
int memory_file(const std::string& text) {
  int fd = ::memfd_create("loopr-git-config", MFD_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    off += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

// Whether this kernel's Landlock can scope abstract unix sockets (ABI 6, Linux 6.12): what
// ProcessSpec::isolate asks of it.
bool landlock_scopes() {
  constexpr long kCreateRuleset = 444;
  constexpr unsigned long kVersion = 1;  // LANDLOCK_CREATE_RULESET_VERSION
  return ::syscall(kCreateRuleset, nullptr, 0UL, kVersion) >= 6;
}

// Tasks (threads included) the user has now: RLIMIT_NPROC counts them all, in and out of the
// sandbox, so a limit for the sandbox is "what the user has" plus the sandbox's share.
std::uint64_t user_task_count() {
  std::uint64_t count = 0;
  uid_t me = ::getuid();
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0 || st.st_uid != me) continue;
    std::ifstream status(it->path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Threads:", 0) == 0) {
        count += std::strtoull(line.c_str() + 8, nullptr, 10);
        break;
      }
  }
  return count;
}

class BwrapExecutor final : public LocalSandbox {
 public:
  BwrapExecutor(const SandboxConfig& config, ExecutorOptions options)
      : config_(config), options_(std::move(options)) {
    info_.kind = "bubblewrap";
    info_.confined = true;
    bwrap_ = find_in_path(options_.bwrap, options_.env);
    build_layout();
    if (options_.control_groups) groups_ = CommandGroups::open(options_.start_ahead);
    if (options_.start_ahead) netns_ = NetnsPool::open();
    info_.description =
        "bubblewrap: each command in its own user, pid, ipc, uts and network namespaces; "
        "it sees only the system's folders, its worktree (writable), the repository's .git and "
        "sandbox.read_only (read-only), the repository's build caches (.loopr/cache, at "
        "~/.cache/loopr, writable), and a private /tmp and home (`loopr doctor` lists them); "
        "no setuid/setgid bits, no keyring; " +
        std::string(landlock_scopes()
                        ? "abstract sockets of the host out of reach (Landlock); "
                        : "no Landlock scoping here (Linux < 6.12): a runner class with the "
                          "network reaches the host's abstract sockets; ") +
        "network for runner classes [" + join(config_.network) +
        "]; limits: " + (groups_ ? groups_->describe() : std::string("rlimits only")) + ", " +
        std::to_string(config_.limits.processes) + " processes, " +
        format_size(config_.limits.memory) + " memory, files up to " +
        format_size(config_.limits.file_size);
    if (!groups_)
      spdlog::info(
          "sandbox: control groups are not available to this daemon; process and memory limits are "
          "rlimits ({})",
          ::geteuid() == 0 ? "root is not bound by RLIMIT_NPROC" : "per user");
  }

  const ExecutorInfo& info() const override { return info_; }

  std::optional<std::string> unavailable() override {
    return readiness_.get([this]() -> std::optional<std::string> {
      {
        std::lock_guard bl(bwrap_mutex_);
        if (bwrap_.empty()) bwrap_ = find_in_path(options_.bwrap, options_.env);
      }
      if (bwrap_.empty()) return explain_sandbox_failure("bwrap: not found");
      auto tested = self_test(*this, options_.paths.run_dir());
      if (!tested) return tested.error().message;
      return std::nullopt;
    });
  }

  SandboxInvocation invocation(const Command& c, int config_fd, int status_fd) override {
    SandboxInvocation inv;
    bool network = c.network;
    for (const auto& cls : config_.network) network = network || cls == c.runner_class;
    if (!layout_.git_config.empty()) inv.git_config = sanitized_git_config();
    inv.args =
        bwrap_arguments(layout_, c, network, inv.git_config.empty() ? -1 : config_fd, status_fd);
    inv.env = environment();
    apply_env_values(inv.env, config_.env_values, c.workdir);
    for (const auto& [k, v] : c.env) inv.env[k] = v;
    note_checkout_mounts(c.workdir, config_.checkout_paths());
    inv.open_files = config_.limits.open_files;
    return inv;
  }

  ProcessResult run(const Command& c) override {
    ProcessResult failed;
    failed.spawn_failed = true;
    std::string bwrap;
    {
      std::lock_guard lock(bwrap_mutex_);
      bwrap = bwrap_;
    }
    if (bwrap.empty()) {
      failed.output = explain_sandbox_failure("bwrap: not found");
      return failed;
    }
    std::error_code ec;
    if (!fs::is_directory(c.workdir, ec)) {
      failed.output = "the working folder " + c.workdir.string() + " does not exist";
      return failed;
    }
    bool network = c.network;
    for (const auto& cls : config_.network) network = network || cls == c.runner_class;
    ensure_cache_dirs(options_.paths, layout_.caches);  // `loopr gc --caches` may have cleared them

    CommandGroups::Group group =
        groups_ ? groups_->acquire(config_.limits.processes, config_.limits.memory)
                : CommandGroups::Group();
    const std::string& filter = suid_filter_program();
    int seccomp_fd = filter.empty() ? -1 : memory_file(filter);
    int netns_fd = network || !netns_ ? -1 : netns_->take();
    int config_fd = -1;
    if (!layout_.git_config.empty()) config_fd = memory_file(sanitized_git_config());
    int status[2];
    if (::pipe2(status, O_CLOEXEC) != 0) {
      for (int fd : {config_fd, seccomp_fd, netns_fd})
        if (fd >= 0) ::close(fd);
      failed.output = std::string("cannot create a pipe: ") + std::strerror(errno);
      return failed;
    }
    ::fcntl(status[0], F_SETFL, O_NONBLOCK);

    ProcessSpec spec =
        sandbox_spec(c, bwrap, network, config_fd, status[1], seccomp_fd, netns_fd, group);
    ProcessResult r = run_process(spec);
    for (int fd : {status[1], config_fd, seccomp_fd, netns_fd})
      if (fd >= 0) ::close(fd);
    read_sandbox_status(r, status[0], group);
    return r;
  }

 private:
  // bubblewrap's command line and the process around it: the file descriptors it is passed
  // (numbered from 3 in the order bwrap_arguments expects), its environment, its limits.
  ProcessSpec sandbox_spec(const Command& c, const std::string& bwrap, bool network, int config_fd,
                           int status_fd, int seccomp_fd, int netns_fd,
                           const CommandGroups::Group& group) {
    ProcessSpec spec;
    spec.argv = {bwrap};
    std::vector<int> pass;
    int config_number = -1;
    if (config_fd >= 0) {
      pass.push_back(config_fd);
      config_number = 3;
    }
    pass.push_back(status_fd);
    int status_number = 3 + static_cast<int>(pass.size()) - 1;
    int seccomp_number = -1;
    if (seccomp_fd >= 0) {
      pass.push_back(seccomp_fd);
      seccomp_number = 3 + static_cast<int>(pass.size()) - 1;
    }
    // In a namespace of the pool the command's process is there already (netns_fd below):
    // bubblewrap keeps it rather than making one.
    auto args = bwrap_arguments(layout_, c, network || netns_fd >= 0, config_number, status_number,
                                seccomp_number);
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.pass_fds = pass;
    spec.netns_fd = netns_fd;
    // A fresh keyring and Landlock's scope; no_new_privs would break a setuid bubblewrap.
    struct stat bwrap_st {};
    spec.isolate = ::stat(bwrap.c_str(), &bwrap_st) == 0 && !(bwrap_st.st_mode & S_ISUID);
    spec.inherit_env = false;
    spec.env_set = environment();
    apply_env_values(spec.env_set, config_.env_values, c.workdir);
    for (const auto& [k, v] : c.env) spec.env_set[k] = v;
    note_checkout_mounts(c.workdir, config_.checkout_paths());
    spec.cwd = "/";
    take_process_io(c, spec);
    spec.limits.open_files = config_.limits.open_files;
    spec.limits.file_size = config_.limits.file_size;
    spec.cgroup_procs_fds = group.procs_fds();
    if (group.procs_fds().empty()) {
      if (::geteuid() != 0) spec.limits.processes = user_tasks() + config_.limits.processes;
      spec.limits.data = config_.limits.memory;
    } else if (!group.limits_memory()) {
      spec.limits.data = config_.limits.memory;
    }

    return spec;
  }

  // What bubblewrap wrote on its status pipe (read end `status_read`, closed here) says whether
  // it started the command: if not, the failure is the sandbox's, not the command's.
  void read_sandbox_status(ProcessResult& r, int status_read, const CommandGroups::Group& group) {
    std::string status_text;
    char buf[4096];
    for (ssize_t n; (n = ::read(status_read, buf, sizeof buf)) > 0;)
      status_text.append(buf, static_cast<std::size_t>(n));
    ::close(status_read);

    if (!r.spawn_failed && !r.timed_out && !r.cancelled &&
        status_text.find("\"child-pid\"") == std::string::npos) {
      // bwrap gave up before it started the command: the sandbox's failure, not the command's.
      r.spawn_failed = true;
      std::string why = r.output.empty() ? r.error_output : r.output;
      r.output = explain_sandbox_failure(why);
    }
    std::string notes = limit_notes(group);
    if (!notes.empty()) r.output += notes;
  }

  static std::string join(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
  }

  void build_layout() {
    layout_ = make_sandbox_layout(config_, options_);
    home_ = layout_.home.empty() ? fs::path("/tmp") : layout_.home;
  }

  // The allowlisted environment: nothing else of the daemon's reaches a command.
  std::map<std::string, std::string> environment() const {
    const EnvLookup& env = options_.env;
    std::map<std::string, std::string> out;
    out["PATH"] = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
    for (const char* name : {"LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME"})
      if (auto v = env(name)) out[name] = *v;
    for (char** e = environ; e && *e; ++e) {
      std::string_view entry(*e);
      if (!entry.starts_with("LC_")) continue;
      auto eq = entry.find('=');
      if (eq == std::string_view::npos) continue;
      std::string name(entry.substr(0, eq));
      if (auto v = env(name.c_str())) out[name] = *v;
    }
    for (const auto& c : layout_.caches) out[c.env] = c.inside.string();
    for (const auto& name : config_.env)
      if (auto v = env(name.c_str())) out[name] = *v;
    out["HOME"] = home_.string();
    out["TMPDIR"] = "/tmp";
    out["LOOPR_SANDBOX"] = "bubblewrap";
    return out;
  }

  // The repository's git config without credentials; made again only when the file changes.
  std::string sanitized_git_config() {
    std::error_code ec;
    auto mtime = fs::last_write_time(layout_.git_config, ec);
    auto size = fs::file_size(layout_.git_config, ec);
    std::lock_guard lock(config_mutex_);
    if (!config_read_ || mtime != config_mtime_ || size != config_size_) {
      config_text_ = sanitize_git_config(slurp(layout_.git_config));
      config_mtime_ = mtime;
      config_size_ = size;
      config_read_ = true;
    }
    return config_text_;
  }

  std::uint64_t user_tasks() {
    std::lock_guard lock(tasks_mutex_);
    if (Clock::now() - tasks_read_ > std::chrono::seconds(10)) {
      tasks_ = user_task_count();
      tasks_read_ = Clock::now();
    }
    return tasks_;
  }

  // What the kernel refused the command, for its output (the model reads why it was killed).
  std::string limit_notes(const CommandGroups::Group& group) const {
    std::string notes;
    if (group.pids_refused() > 0)
      notes += "\n[loopr sandbox: the command hit the limit of " +
               std::to_string(config_.limits.processes) + " processes (sandbox.limits.processes)]";
    if (group.oom_kills() > 0)
      notes += "\n[loopr sandbox: a process was killed for using more than " +
               format_size(config_.limits.memory) + " of memory (sandbox.limits.memory)]";
    return notes;
  }

  SandboxConfig config_;
  ExecutorOptions options_;
  ExecutorInfo info_;
  std::mutex bwrap_mutex_;
  std::string bwrap_;
  SandboxLayout layout_;
  fs::path home_;
  std::unique_ptr<CommandGroups> groups_;
  std::unique_ptr<NetnsPool> netns_;
  ProbeCache readiness_;
  std::mutex config_mutex_;
  bool config_read_ = false;
  fs::file_time_type config_mtime_{};
  std::uintmax_t config_size_ = 0;
  std::string config_text_;
  std::mutex tasks_mutex_;
  std::uint64_t tasks_ = 0;
  Clock::time_point tasks_read_{};
};

}  // namespace

std::string explain_sandbox_failure(std::string_view bwrap_output) {
  std::string out(bwrap_output);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  const std::string none =
      "or set `sandbox: none` in .loopr/config.yml to run the model's commands unconfined";
  if (out.find("not found") != std::string::npos && out.rfind("bwrap", 0) == 0)
    return "bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: `apt install "
           "bubblewrap`), " +
           none;
  if (out.find("namespace") != std::string::npos || out.find("uid map") != std::string::npos ||
      out.find("Operation not permitted") != std::string::npos ||
      out.find("Permission denied") != std::string::npos)
    return "bubblewrap cannot create its namespaces here (" + out +
           "): unprivileged user namespaces are disabled or restricted (enable them, e.g. `sysctl "
           "kernel.unprivileged_userns_clone=1` or `user.max_user_namespaces`, or an AppArmor "
           "profile that allows "
           "bwrap), " +
           none;
  return "the sandbox could not start the command (" + out +
         "); check that bubblewrap works (`bwrap --ro-bind / / true`), " + none;
}

std::unique_ptr<LocalSandbox> make_bwrap_executor(const SandboxConfig& config,
                                                  ExecutorOptions options) {
  return std::make_unique<BwrapExecutor>(config, std::move(options));
}

}  // namespace loopr::exec
