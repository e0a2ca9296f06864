// Child processes: clone(CLONE_VM|CLONE_VFORK) + exec into a new process group, poll the pipes,
// enforce timeout and cancel by killing the whole group, keep a bounded head+tail of the output.
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <loopr/core/process.hpp>
#include <loopr/core/text.hpp>

extern char** environ;

namespace loopr {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps the first half of the budget verbatim and a rolling window of the last half.
class CappedBuffer {
 public:
  explicit CappedBuffer(std::size_t cap) : head_cap_(cap / 2), tail_cap_(cap - cap / 2) {}

  void append(const char* data, std::size_t n) {
    total_ += n;
    std::size_t to_head = std::min(n, head_cap_ - std::min(head_cap_, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(data, n);
    if (tail_.size() > 2 * tail_cap_ + 4096) tail_.erase(0, tail_.size() - tail_cap_);
  }

  std::size_t total() const { return total_; }

  std::string str() const {
    // Nothing dropped: the text as it came. (A trimmed tail can be exactly `tail_cap_` long, so
    // its size alone does not say whether bytes were dropped.)
    if (total_ == head_.size() + tail_.size() && tail_.size() <= tail_cap_) return head_ + tail_;
    std::string_view kept(tail_);
    if (kept.size() > tail_cap_) kept.remove_prefix(kept.size() - tail_cap_);
    return cap_head_tail_join(head_, kept, total_ - head_.size() - kept.size());
  }

  static std::string cap_head_tail_join(std::string_view head, std::string_view tail,
                                        std::size_t omitted) {
    // Cut on UTF-8 boundaries so the text stays valid for JSON and terminals.
    while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
      tail.remove_prefix(1);
      ++omitted;
    }
    while (!head.empty() && (static_cast<unsigned char>(head.back()) & 0x80)) {
      // Drop a trailing partial multi-byte sequence (at most 3 bytes).
      std::size_t i = head.size();
      std::size_t back = 0;
      while (i > 0 && back < 4 && (static_cast<unsigned char>(head[i - 1]) & 0xC0) == 0x80) {
        --i;
        ++back;
      }
      if (i == 0) break;
      unsigned char lead = static_cast<unsigned char>(head[i - 1]);
      std::size_t need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
      if (need == back) break;  // complete sequence
      omitted += back + 1;
      head.remove_suffix(back + 1);
    }
    std::string out(head);
    out += "\n[… " + std::to_string(omitted) + " bytes omitted …]\n";
    out += tail;
    return out;
  }

 private:
  std::size_t head_cap_, tail_cap_;
  std::string head_, tail_;
  std::size_t total_ = 0;
};

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::vector<std::string> build_env(const ProcessSpec& spec) {
  std::set<std::string> drop(spec.env_unset.begin(), spec.env_unset.end());
  for (const auto& [k, v] : spec.env_set) drop.insert(k);
  std::vector<std::string> env;
  for (char** e = spec.inherit_env ? environ : nullptr; e && *e; ++e) {
    std::string_view entry(*e);
    std::string name(entry.substr(0, entry.find('=')));
    if (!drop.count(name)) env.emplace_back(entry);
  }
  for (const auto& [k, v] : spec.env_set) env.push_back(k + "=" + v);
  return env;
}

void kill_group(pid_t pgid, int sig) {
  if (pgid > 0) ::kill(-pgid, sig);
}

constexpr std::size_t kMaxPassedFds = 8;

void set_limit(int resource, const std::optional<std::uint64_t>& value) {
  if (!value) return;
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(*value);
  // Never raise a hard limit the parent already has lower (that would fail as a whole).
  struct rlimit now;
  if (getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY && now.rlim_max < rl.rlim_max)
    rl.rlim_cur = rl.rlim_max = now.rlim_max;
  setrlimit(resource, &rl);
}

// What the child needs between its start and exec, all prepared by the parent.
struct ChildSetup {
  const ProcessSpec& spec;
  char** argv;
  char** envp;
  const char* cwd;
  pid_t parent;
  int exec_report;  // the write end of the exec pipe: errno when exec (or the setup) failed
  int out, err, in;
  sigset_t parent_mask;  // restored in the child before exec
};

// A sandbox's start (ProcessSpec::isolate): a new anonymous session keyring, so nothing of the
// person's keyring is possessed inside; then a Landlock domain scoped against abstract unix
// sockets and signals of outside (ABI 6; older kernels refuse the ruleset and nothing changes:
// the sandbox's own network namespace keeps the host's abstract sockets out of reach there).
// Raw system calls only: this runs in the child before exec.
void isolate_child() {
  (void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0L, 0L, 0L, 0L);
  struct {
    std::uint64_t handled_access_fs, handled_access_net, scoped;
  } attr = {0, 0, 0x1 /* ABSTRACT_UNIX_SOCKET */ | 0x2 /* SIGNAL */};
  constexpr long kCreateRuleset = 444, kRestrictSelf = 446;
  long fd = syscall(kCreateRuleset, &attr, sizeof attr, 0L);
  if (fd < 0) return;
  // Landlock needs it without CAP_SYS_ADMIN (a container's root has none); bubblewrap sets it
  // anyway for its seccomp filter.
  (void)prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L);
  (void)syscall(kRestrictSelf, fd, 0L);
  close(static_cast<int>(fd));
}

// The child: runs on its own stack in the parent's memory (spawn_child), so only system calls
// that touch nothing of the parent's: no allocation, no locks, no C++ objects made or freed.
int child_main(void* arg) {
  const ChildSetup& c = *static_cast<const ChildSetup*>(arg);
  const ProcessSpec& spec = c.spec;
  // Handlers are the daemon's: a signal before exec must not run one in this half-made child.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction old {};
    if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &old) != 0) continue;
    if (old.sa_handler != SIG_IGN && old.sa_handler != SIG_DFL) sigaction(sig, &dfl, nullptr);
  }
  setpgid(0, 0);
  // A parent that dies (a daemon killed with SIGKILL) takes its commands with it: bubblewrap
  // then ends its sandbox (--die-with-parent), so nothing runs on unwatched.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != c.parent) _exit(127);
  // Out of the way of the numbers the passed descriptors get (3, 4, …) first.
  int report = fcntl(c.exec_report, F_DUPFD_CLOEXEC, 64);
  int moved[kMaxPassedFds];
  for (std::size_t i = 0; i < spec.pass_fds.size(); ++i)
    moved[i] = fcntl(spec.pass_fds[i], F_DUPFD_CLOEXEC, 64);
  // Into its control groups before the passed descriptors take their numbers 3, 4, …, which may
  // be these ones' (a group's file numbered 5 would otherwise get the text written into the
  // sandbox's filter descriptor, and the child would not be in its group). "0" is the writer
  // itself: this child has one thread, so a cgroup v1 `tasks` file moves the whole process, and
  // without the global lock that `cgroup.procs` takes (an RCU grace period, 5-12 ms; issue 32).
  for (int fd : spec.cgroup_procs_fds)
    if (write(fd, "0", 1) != 1) {
      int e = errno;
      (void)!write(report, &e, sizeof e);
      _exit(127);
    }
  if (spec.netns_fd >= 0 && setns(spec.netns_fd, CLONE_NEWNET) != 0) {
    int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  dup2(spec.stdin_data ? c.in : devnull, 0);
  dup2(c.out, 1);
  dup2(spec.merge_stderr ? c.out : c.err, 2);
  for (std::size_t i = 0; i < spec.pass_fds.size(); ++i) dup2(moved[i], static_cast<int>(3 + i));
  // Whatever else is open here (the daemon's sockets, RocksDB's files, other children's
  // pipes) closes at exec.
  close_fds_on_exec(static_cast<int>(3 + spec.pass_fds.size()));
  auto fail = [&] {
    int e = errno;
    (void)!write(report, &e, sizeof e);
    _exit(127);
  };
  set_limit(RLIMIT_NPROC, spec.limits.processes);
  set_limit(RLIMIT_NOFILE, spec.limits.open_files);
  set_limit(RLIMIT_FSIZE, spec.limits.file_size);
  set_limit(RLIMIT_DATA, spec.limits.data);
  set_limit(RLIMIT_CPU, spec.limits.cpu_seconds);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGXFSZ, SIG_DFL);
  if (c.cwd && chdir(c.cwd) != 0) fail();
  if (spec.isolate) isolate_child();
  sigprocmask(SIG_SETMASK, &c.parent_mask, nullptr);
  execvpe(c.argv[0], c.argv, c.envp);
  fail();
  return 127;
}

// Starts `child_main` the way posix_spawn does: in the parent's memory (CLONE_VM), the parent's
// thread waiting until it has exec'd (CLONE_VFORK), with every signal blocked meanwhile. A fork
// would copy the page tables of a daemon of 100+ MiB and make every page it writes afterwards
// fault and flush the other cores' TLBs: most of the daemon's CPU per command (issue 18).
// The pid, or -errno.
pid_t spawn_child(ChildSetup& setup) {
  constexpr std::size_t kStack = 256 * 1024;  // execvpe builds PATH candidates on the stack
  void* stack =
      mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -errno;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &setup.parent_mask);
  pid_t pid = clone(child_main, static_cast<char*>(stack) + kStack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
  const int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &setup.parent_mask, nullptr);
  munmap(stack, kStack);
  return pid < 0 ? -clone_errno : pid;
}

}  // namespace

void close_fds_on_exec(int first) {
  if (::close_range(static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  // Kernels before 5.11: every descriptor the limit allows.
  struct rlimit rl;
  long max = 65536;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    max = static_cast<long>(rl.rlim_cur);
  if (max > (1L << 20)) max = 1L << 20;
  for (long fd = first; fd < max; ++fd) {
    int flags = fcntl(static_cast<int>(fd), F_GETFD);
    if (flags >= 0) fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
  }
}

std::string cap_head_tail(std::string_view text, std::size_t cap) {
  if (text.size() <= cap) return std::string(text);
  std::size_t head = cap / 2, tail = cap - head;
  return CappedBuffer::cap_head_tail_join(text.substr(0, head), text.substr(text.size() - tail),
                                          text.size() - head - tail);
}

namespace {

ProcessResult spawn_failure(std::string why) {
  ProcessResult result;
  result.spawn_failed = true;
  result.output = std::move(why);
  return result;
}

// The child's stdout, stderr (unless merged), stdin (with stdin_data) and exec report pipes.
struct Pipes {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, exec[2] = {-1, -1};
};

// Every end still open: what a failed start gives back (a daemon that ran out of descriptors
// must not lose more to each command it could not start).
void close_all(Pipes& p) {
  for (int* pair : {p.out, p.err, p.in, p.exec})
    for (int k = 0; k < 2; ++k)
      if (pair[k] >= 0) {
        close(pair[k]);
        pair[k] = -1;
      }
}

bool open_pipes(const ProcessSpec& spec, Pipes& p) {
  const bool opened = pipe2(p.out, O_CLOEXEC) == 0 && pipe2(p.exec, O_CLOEXEC) == 0 &&
                      (spec.merge_stderr || pipe2(p.err, O_CLOEXEC) == 0) &&
                      (!spec.stdin_data || pipe2(p.in, O_CLOEXEC) == 0);
  if (!opened) {
    const int why = errno;
    close_all(p);
    errno = why;
  }
  return opened;
}

// The parent's copies of the child's ends: the child holds its own until it exits.
void close_child_ends(const Pipes& p) {
  close(p.out[1]);
  close(p.exec[1]);
  if (p.err[1] >= 0) close(p.err[1]);
  if (p.in[0] >= 0) close(p.in[0]);
}

// Whether the child wrote an errno on its report pipe (it failed before or at exec; a
// successful exec closes the pipe empty). Then every pipe is closed and the child reaped.
bool exec_failed(pid_t pid, const Pipes& p, int& exec_errno) {
  if (read(p.exec[0], &exec_errno, sizeof exec_errno) != sizeof exec_errno) {
    close(p.exec[0]);
    return false;
  }
  close(p.exec[0]);
  close(p.out[0]);
  if (p.err[0] >= 0) close(p.err[0]);
  if (p.in[1] >= 0) close(p.in[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  return true;
}

// Hands stdout to `spec.on_line` line by line (without the CR of a CRLF).
class LineSplitter {
 public:
  explicit LineSplitter(const ProcessSpec& spec) : spec_(spec) {}

  void feed(const char* data, std::size_t n) {
    if (!spec_.on_line) return;
    for (std::size_t i = 0; i < n; ++i) {
      if (data[i] == '\n') {
        if (!line_.empty() && line_.back() == '\r') line_.pop_back();
        spec_.on_line(valid_utf8(line_));
        line_.clear();
      } else if (line_.size() < kMaxLine) {
        line_ += data[i];
      }  // else: an absurdly long line is cut, not buffered without bound
    }
  }

  // The last line, when the output does not end with a newline.
  void finish() {
    if (!line_.empty() && spec_.on_line) spec_.on_line(valid_utf8(line_));
  }

 private:
  static constexpr std::size_t kMaxLine = 1 << 20;
  const ProcessSpec& spec_;
  std::string line_;
};

// What the parent reads from and writes to while the child runs; -1 once closed.
struct Streams {
  explicit Streams(const ProcessSpec& spec)
      : out_text(spec.output_cap), err_text(spec.output_cap), lines(spec) {}

  int out = -1, err = -1, in = -1;
  std::size_t in_off = 0;  ///< how much of stdin_data is written
  CappedBuffer out_text, err_text;
  LineSplitter lines;
};

void start_streams(const ProcessSpec& spec, const Pipes& p, Streams& s) {
  s.out = p.out[0];
  s.err = p.err[0];
  s.in = p.in[1];
  set_nonblocking(s.out);
  if (s.err >= 0) set_nonblocking(s.err);
  if (s.in >= 0) {
    set_nonblocking(s.in);
    if (spec.stdin_data->empty()) {
      close(s.in);
      s.in = -1;
    }
  }
}

void close_streams(Streams& s) {
  if (s.out >= 0) close(s.out);
  if (s.err >= 0) close(s.err);
  if (s.in >= 0) close(s.in);
}

void write_stdin(const ProcessSpec& spec, Streams& s) {
  ssize_t w = write(s.in, spec.stdin_data->data() + s.in_off, spec.stdin_data->size() - s.in_off);
  if (w > 0) s.in_off += static_cast<std::size_t>(w);
  if (w < 0 && errno != EAGAIN) s.in_off = spec.stdin_data->size();
  if (s.in_off >= spec.stdin_data->size()) {
    close(s.in);
    s.in = -1;
  }
}

// Reads what is ready on stdout or stderr `fd`; at its end (or an error) closes it.
void read_stream(int fd, Streams& s) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    if (fd == s.out) {
      s.out_text.append(buf, static_cast<std::size_t>(n));
      s.lines.feed(buf, static_cast<std::size_t>(n));
    } else {
      s.err_text.append(buf, static_cast<std::size_t>(n));
    }
  } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    if (fd == s.out) {
      close(s.out);
      s.out = -1;
    } else {
      close(s.err);
      s.err = -1;
    }
  }
}

// One poll of the open streams (at most 50 ms, less near the deadline), then what is ready
// moves. False when poll fails.
bool pump(const ProcessSpec& spec, Streams& s, Clock::time_point deadline, Clock::time_point now) {
  pollfd fds[3];
  int nfds = 0;
  if (s.out >= 0) fds[nfds++] = {s.out, POLLIN, 0};
  if (s.err >= 0) fds[nfds++] = {s.err, POLLIN, 0};
  if (s.in >= 0) fds[nfds++] = {s.in, POLLOUT, 0};
  int wait_ms = 50;
  if (deadline != Clock::time_point::max())
    wait_ms = static_cast<int>(std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count(), 0, 50));
  int ready = poll(fds, static_cast<nfds_t>(nfds), wait_ms);
  if (ready < 0 && errno != EINTR) return false;
  for (int i = 0; i < nfds && ready > 0; ++i) {
    if (!fds[i].revents) continue;
    if (fds[i].fd == s.in)
      write_stdin(spec, s);
    else
      read_stream(fds[i].fd, s);
  }
  return true;
}

// Past the deadline or cancelled: the command's group is killed, and what is still in the
// pipes is read for at most half a second more.
void stop_when_due(const ProcessSpec& spec, pid_t pid, Clock::time_point now,
                   Clock::time_point deadline, ProcessResult& result,
                   Clock::time_point& drain_deadline) {
  if (result.timed_out || result.cancelled) return;
  if (now >= deadline) {
    result.timed_out = true;
  } else if (spec.cancel && spec.cancel->load()) {
    result.cancelled = true;
  }
  if (result.timed_out || result.cancelled) {
    kill_group(pid, SIGKILL);
    drain_deadline = now + std::chrono::milliseconds(500);
  }
}

// Reads the child's output until both pipes close (or the drain after its end or a kill runs
// out); `exited` and `status` tell whether it was reaped meanwhile.
void watch_child(const ProcessSpec& spec, pid_t pid, Clock::time_point started, Streams& s,
                 ProcessResult& result, bool& exited, int& status) {
  auto deadline = spec.timeout.count() > 0 ? started + spec.timeout : Clock::time_point::max();
  Clock::time_point drain_deadline = Clock::time_point::max();
  while (s.out >= 0 || s.err >= 0) {
    auto now = Clock::now();
    stop_when_due(spec, pid, now, deadline, result, drain_deadline);
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      // Descendants that outlive the command would keep the pipe open forever: end the group.
      kill_group(pid, SIGKILL);
      if (drain_deadline == Clock::time_point::max())
        drain_deadline = now + std::chrono::milliseconds(500);
    }
    if (now >= drain_deadline) break;
    if (!pump(spec, s, deadline, now)) break;
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  auto started = Clock::now();
  if (spec.argv.empty()) return spawn_failure("no command given");
  if (spec.pass_fds.size() > kMaxPassedFds)
    return spawn_failure("too many descriptors to pass to a child");
  Pipes pipes;
  if (!open_pipes(spec, pipes))
    return spawn_failure(std::string("cannot create pipes: ") + std::strerror(errno));

  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<std::string> env = build_env(spec);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  ChildSetup setup{spec,          argv.data(),  envp.data(),  cwd,         getpid(),
                   pipes.exec[1], pipes.out[1], pipes.err[1], pipes.in[0], {}};
  pid_t pid = spawn_child(setup);
  if (pid < 0) {
    close_all(pipes);
    return spawn_failure(std::string("cannot start a process: ") + std::strerror(-pid));
  }
  setpgid(pid, pid);  // also from the parent: no race with an early kill
  close_child_ends(pipes);
  if (int exec_errno = 0; exec_failed(pid, pipes, exec_errno))
    return spawn_failure(std::string("cannot start ") + spec.argv[0] +
                         (spec.cwd.empty() ? "" : " in " + spec.cwd) + ": " +
                         std::strerror(exec_errno));

  ProcessResult result;
  Streams s(spec);
  start_streams(spec, pipes, s);
  bool exited = false;
  int status = 0;
  watch_child(spec, pid, started, s, result, exited, status);
  close_streams(s);
  s.lines.finish();

  if (!exited) {
    kill_group(pid, SIGKILL);
    waitpid(pid, &status, 0);
  } else {
    // Whatever the command left running in its group (`cmd &`, a daemonised server) goes with
    // it: nothing a validation or tool command starts outlives the call.
    kill_group(pid, SIGKILL);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  if (result.timed_out || result.cancelled) result.exit_code = -1;
  // A command prints bytes; everything after this (the model, the store, a terminal) gets text.
  result.output = valid_utf8(s.out_text.str());
  result.error_output = valid_utf8(s.err_text.str());
  result.total_bytes = s.out_text.total();
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

}  // namespace loopr
