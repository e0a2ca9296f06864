#include "cli/daemon_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include <loopr/daemon/http.hpp>

namespace loopr::cli {

using nlohmann::json;

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(10);

CommandError transport_error(const RepoPaths& paths, const Error& e) {
  if (e.code == ErrorCode::not_found) return daemon_not_running(paths);
  if (e.code == ErrorCode::timeout)
    return CommandError{kDaemonUnreachable, "the daemon did not answer in time: " + e.message,
                        "check `loopr daemon status`; its log is .loopr/logs/daemon.out"};
  return CommandError{
      kDaemonUnreachable, "cannot talk to the daemon: " + e.message,
      "check `loopr daemon status`; restart it with `loopr daemon stop` and `loopr daemon`"};
}

json call_or_throw(const RepoPaths& paths, const std::string& method, const std::string& target,
                   const json& body, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  daemon::Client client(paths.socket());
  auto r = client.call(method, target, body, timeout);
  if (!r) throw transport_error(paths, r.error());
  if (r->status < 200 || r->status >= 300) throw api_error(r->status, r->body);
  return std::move(r->body);
}

// Non-empty lines appended to `file` after byte `from`, the last `count` of them.
std::string tail_since(const std::filesystem::path& file, std::uintmax_t from, std::size_t count) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(from));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(line);
  }
  std::string out;
  std::size_t start = lines.size() > count ? lines.size() - count : 0;
  for (std::size_t i = start; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw CommandError{kFailed, "cannot find the loopr binary (/proc/self/exe)",
                       "run `loopr daemon` by hand"};
  return std::string(buf, static_cast<std::size_t>(n));
}

// Forks twice so the daemon is no child of ours (no zombie while a command waits), in a session
// of its own (no terminal, survives the shell), and returns its pid.
pid_t spawn_detached(const RepoPaths& paths, int out_fd, bool force) {
  std::string exe = self_exe();
  std::string root = paths.root.string();
  std::vector<std::string> args = {exe, "-C", root, "daemon", "--foreground"};
  if (force) args.push_back("--force");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipefd[2];
  if (devnull < 0 || pipe2(pipefd, O_CLOEXEC) != 0)
    throw CommandError{kFailed, std::string("cannot start the daemon: ") + std::strerror(errno),
                       "check the system's limits"};
  std::cout.flush();
  std::cerr.flush();
  pid_t child = fork();
  if (child < 0)
    throw CommandError{kFailed, std::string("cannot fork: ") + std::strerror(errno),
                       "check the system's limits"};
  if (child == 0) {
    setsid();
    pid_t daemon = fork();
    if (daemon != 0) {
      ssize_t ignored = write(pipefd[1], &daemon, sizeof daemon);
      (void)ignored;
      _exit(daemon < 0 ? 1 : 0);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(devnull, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    close_range(3, ~0U, 0);
    if (chdir(root.c_str()) != 0) _exit(126);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  ::close(pipefd[1]);
  ::close(devnull);
  pid_t daemon = -1;
  ssize_t n = read(pipefd[0], &daemon, sizeof daemon);
  ::close(pipefd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (n != static_cast<ssize_t>(sizeof daemon) || daemon <= 0)
    throw CommandError{kFailed, "cannot start the daemon (fork failed)",
                       "run `loopr daemon --foreground` to see why"};
  return daemon;
}

}  // namespace

bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

std::filesystem::path daemon_out_file(const RepoPaths& paths) {
  return paths.logs_dir() / "daemon.out";
}

json DaemonClient::get(const std::string& target) const {
  return call_or_throw(paths_, "GET", target, nullptr);
}

std::string DaemonClient::get_text(const std::string& target) const {
  daemon::Client client(paths_.socket());
  auto r = client.call_raw("GET", target);
  if (!r) throw transport_error(paths_, r.error());
  if (r->status < 200 || r->status >= 300) {
    json body = json::parse(r->body, nullptr, false);
    throw api_error(r->status, body.is_discarded() ? json(nullptr) : body);
  }
  return std::move(r->body);
}

json DaemonClient::post(const std::string& target, const json& body,
                        std::chrono::milliseconds timeout) const {
  return call_or_throw(paths_, "POST", target, body.is_null() ? json::object() : body, timeout);
}

std::optional<api::Health> DaemonClient::health(std::chrono::milliseconds timeout) const {
  daemon::Client client(paths_.socket());
  auto r = client.call("GET", "/v1/health", nullptr, timeout);
  if (!r || r->status != 200 || !r->body.is_object()) return std::nullopt;
  return api::health_from_json(r->body);
}

Result<void> DaemonClient::stream(const std::string& target,
                                  const std::function<bool(const StreamMessage&)>& on_message,
                                  const std::atomic<bool>* cancel) const {
  daemon::Client client(paths_.socket());
  return client.stream(
      target,
      [&](const daemon::SseMessage& m) {
        return on_message(StreamMessage{m.id, m.event, m.data});
      },
      cancel);
}

DaemonClient connect(const RepoPaths& paths) {
  std::error_code ec;
  if (!std::filesystem::exists(paths.socket(), ec)) throw daemon_not_running(paths);
  return DaemonClient(paths);
}

DaemonStart start_daemon(const RepoPaths& paths, bool force) {
  DaemonClient api(paths);
  if (auto h = api.health()) return {h->pid, false};

  std::filesystem::path out = daemon_out_file(paths);
  std::error_code ec;
  std::filesystem::create_directories(out.parent_path(), ec);
  int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd < 0)
    throw CommandError{kFailed, "cannot open " + out.string() + ": " + std::strerror(errno),
                       "check the folder's permissions"};
  struct stat st {};
  std::uintmax_t start_size = fstat(out_fd, &st) == 0 ? static_cast<std::uintmax_t>(st.st_size) : 0;
  pid_t pid;
  try {
    pid = spawn_detached(paths, out_fd, force);
  } catch (...) {
    ::close(out_fd);
    throw;
  }
  ::close(out_fd);

  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto h = api.health(std::chrono::seconds(2)))
      return {h->pid != 0 ? h->pid : static_cast<long>(pid), true};
    if (!process_alive(pid)) {
      // It ended: another daemon may have won a race to start (then that one answers).
      if (auto h = api.health()) return {h->pid, false};
      std::string tail = tail_since(out, start_size, 3);
      throw CommandError{kDaemonUnreachable,
                         "the daemon did not start" + (tail.empty() ? std::string() : ": " + tail),
                         "see " + out.string() + ", or run `loopr daemon --foreground`"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string tail = tail_since(out, start_size, 3);
  throw CommandError{kDaemonUnreachable,
                     "the daemon (pid " + std::to_string(pid) + ") did not answer within 10 s" +
                         (tail.empty() ? std::string() : ": " + tail),
                     "see " + out.string()};
}

DaemonClient connect_or_start(const RepoPaths& paths, const GlobalOptions& opts, bool force) {
  DaemonClient api(paths);
  if (api.health()) return api;
  require_existing_config(paths);  // a bad config is exit 2 here, not a daemon that dies
  DaemonStart s = start_daemon(paths, force);
  if (s.started && !opts.quiet) std::cerr << "started the loopr daemon (pid " << s.pid << ")\n";
  return api;
}

}  // namespace loopr::cli
