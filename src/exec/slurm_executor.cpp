// Why srun and not `sbatch --wait`: srun streams the step's output back as it is printed (the
// live `on_line` view and run_command's output need it) and returns the step's exit code, with
// no output file on the shared filesystem to poll. A job that never runs is bounded by
// `--immediate` (executor.slurm.queue_timeout).
//
// Nothing is left on the cluster: every job has a name of this executor's own
// (`loopr-<repo hash>-<n>`); a command that was cancelled, timed out or lost is `scancel`led by
// that name and waited for until `squeue` no longer lists it (executor.slurm.cancel_timeout at
// most; a job the cluster is slow to clean up is then counted as `cleaning`, never as gone); the
// destructor cancels whatever is still in flight (daemon stop), and the first probe cancels what
// a previous daemon of the same repository left behind (it was killed).
//
// Retries: a try that failed for the cluster's sake (no start line from the node, or the job
// lost while it ran) is tried again after executor.slurm.retry_backoff (doubled each time), up
// to executor.slurm.max_attempts; then the result is `spawn_failed` with the reason, which the
// engine turns into a paused loop, not a failed iteration.
#include "exec/slurm_executor.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "exec/bwrap_executor.hpp"
#include "exec/path_hash.hpp"
#include "exec/probe_cache.hpp"
#include "exec/slurm_step.hpp"

namespace loopr::exec {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// The last few lines of what srun said (its errors), for a failure's reason.
std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  std::size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (std::size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : " / ") + lines[i];
  return out.empty() ? "srun printed nothing" : out;
}

// Sleeps in short steps so a stop is seen at once; false when cancelled.
bool wait_unless_cancelled(std::chrono::milliseconds d, const std::atomic<bool>* cancel) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) {
    if (cancel && cancel->load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !(cancel && cancel->load());
}

class SlurmExecutor final : public Executor {
 public:
  SlurmExecutor(const SandboxConfig& sandbox, ExecutorOptions options)
      : confined_(sandbox.confined()), slurm_(options.executor.slurm), options_(options) {
    std::error_code ec;
    fs::path root = fs::weakly_canonical(options_.paths.root, ec);
    token_ = "loopr-" + path_hash((ec ? options_.paths.root : root).string());
    sandbox_ = make_bwrap_executor(sandbox, std::move(options));
    info_.kind = "slurm";
    info_.confined = true;
    std::string where =
        slurm_.partition.empty() ? "the default partition" : "partition " + slurm_.partition;
    info_.description = "slurm: each command a job step (srun) on " + where + ", " +
                        std::to_string(slurm_.cpus) + " CPU" + (slurm_.cpus == 1 ? "" : "s") +
                        ", inside bubblewrap on the node (" + sandbox_->info().description + ")";
  }

  ~SlurmExecutor() override { cancel_all(); }

  void cancel_all() override {
    stopping_ = true;
    std::vector<std::string> names;
    {
      std::lock_guard lock(mutex_);
      names.assign(active_.begin(), active_.end());
      for (const auto& [name, since] : lingering_) names.push_back(name);
    }
    cancel_jobs(names);
  }

  const ExecutorInfo& info() const override { return info_; }

  ExecutorLoad load() const override {
    std::lock_guard lock(mutex_);
    return {queued_.load(), running_.load(), static_cast<int>(lingering_.size())};
  }

  std::optional<std::string> unavailable() override {
    return readiness_.get([this] { return probe(); });
  }

  ProcessResult run(const Command& c) override {
    // The `claude` CLI is the model's own client, with the daemon's credentials and proxy: it
    // stays on this machine (as does a command given the network regardless of class).
    if (c.stays_local || c.network) return sandbox_->run(c);
    std::vector<std::string> jobs, failures;
    recheck_lingering();
    if (stopping_) {
      ProcessResult stopped;
      stopped.cancelled = true;
      return stopped;
    }
    auto backoff = std::chrono::duration_cast<std::chrono::milliseconds>(slurm_.retry_backoff);
    for (int attempt = 1;; ++attempt) {
      Attempt a = run_once(c);
      if (!a.job.empty()) jobs.push_back(a.job);
      if (!a.infrastructure) {
        a.result.jobs = std::move(jobs);
        a.result.infrastructure_failures = std::move(failures);
        return std::move(a.result);
      }
      failures.push_back("try " + std::to_string(attempt) +
                         (a.job.empty() ? "" : " (job " + a.job + ")") + ": " + a.why);
      spdlog::warn("slurm: {}", failures.back());
      if (attempt >= slurm_.max_attempts || stopping_) break;
      if (!wait_unless_cancelled(backoff, c.cancel)) {
        ProcessResult stopped;
        stopped.cancelled = true;
        stopped.jobs = std::move(jobs);
        stopped.infrastructure_failures = std::move(failures);
        return stopped;
      }
      backoff *= 2;
    }
    ProcessResult failed;
    if (stopping_) {
      failed.cancelled = true;
      return failed;
    }
    failed.spawn_failed = true;
    failed.output =
        "the Slurm job never ran in " + std::to_string(slurm_.max_attempts) +
        (slurm_.max_attempts == 1 ? " try" : " tries") + ": " + failures.back() +
        " (check the cluster with `sinfo` and `squeue`; the loop resumes with `loopr resume`)";
    failed.jobs = std::move(jobs);
    failed.infrastructure_failures = std::move(failures);
    return failed;
  }

 private:
  struct Attempt {
    ProcessResult result;
    bool infrastructure = false;  ///< the cluster's failure: try again
    std::string why;
    std::string job;
  };

  std::string tool(const char* name) const {
    return slurm_.bin_dir.empty() ? std::string(name) : (fs::path(slurm_.bin_dir) / name).string();
  }

  // The environment of srun and the Slurm tools: the sandbox's allowlist, plus where the
  // cluster's configuration is (srun passes its environment to the step; bwrap then starts the
  // command with exactly the allowlist).
  std::map<std::string, std::string> slurm_env(std::map<std::string, std::string> env) const {
    for (const char* name : {"SLURM_CONF", "MUNGE_SOCKET"})  // MUNGE_SOCKET: a non-default munged
      if (auto v = options_.env(name)) env[name] = *v;
    if (!env.count("PATH"))
      env["PATH"] = options_.env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
    return env;
  }

  Attempt run_once(const Command& c) {
    Attempt a;
    std::string name = token_ + "-" + std::to_string(++sequence_);
    SandboxInvocation inv = sandbox_->invocation(c, 3, 4);
    StepRequest req;
    req.job_name = name;
    req.runner_class = c.runner_class;
    req.timeout = c.timeout;
    req.open_files = inv.open_files;
    req.command = {"bwrap"};
    req.command.insert(req.command.end(), inv.args.begin(), inv.args.end());

    ProcessSpec spec = step_spec(c, req, inv);
    bool started = false;
    spec.on_line = [&](std::string_view line) {
      if (auto job = started_job(line)) {
        if (!started) --queued_, ++running_;
        started = true;
        return;
      }
      if (is_marker_line(line)) return;
      if (c.on_line) c.on_line(line);
    };
    {
      std::lock_guard lock(mutex_);
      active_.insert(name);
    }
    if (stopping_) {  // cancel_all may have listed the active jobs before this one was added
      std::lock_guard lock(mutex_);
      active_.erase(name);
      a.result.cancelled = true;
      return a;
    }
    ++queued_;
    ProcessResult r = run_process(spec);
    if (started)
      --running_;
    else
      --queued_;
    StepReport rep = read_step_output(r.output);
    if (rep.job_id) a.job = *rep.job_id;
    bool clean = rep.finished && !r.cancelled && !r.timed_out;
    if (!clean) cancel_jobs({name});
    {
      std::lock_guard lock(mutex_);
      active_.erase(name);
    }

    judge(a, std::move(r), std::move(rep), req.runner_class);
    return a;
  }

  // srun running bubblewrap on a node: the step's environment, input, output and time limit.
  ProcessSpec step_spec(const Command& c, const StepRequest& req, SandboxInvocation& inv) {
    ProcessSpec spec;
    spec.argv = srun_argv(slurm_, tool("srun"), req);
    spec.inherit_env = false;
    spec.env_set = slurm_env(std::move(inv.env));
    if (!inv.git_config.empty()) spec.env_set["LOOPR_GIT_CONFIG"] = inv.git_config;
    spec.cwd = "/";
    spec.stdin_data = c.stdin_data;
    spec.output_cap = c.output_cap + 1024;  // room for the two marker lines
    spec.merge_stderr = c.merge_stderr;
    spec.cancel = c.cancel;
    // A safety net only: the queue wait is bounded by --immediate, the command by the node's
    // `timeout`, the job by --time.
    if (c.timeout.count() > 0)
      spec.timeout = c.timeout +
                     std::chrono::duration_cast<std::chrono::milliseconds>(slurm_.queue_timeout) +
                     std::chrono::minutes(2);
    return spec;
  }

  // What the step's end means (`a` is the attempt, `r` what srun returned, `rep` what the
  // markers said): the command's result, a cancel, or the cluster's failure (`infrastructure`,
  // tried again by run).
  void judge(Attempt& a, ProcessResult r, StepReport rep, const std::string& runner_class) {
    r.output = std::move(rep.output);
    // Cancelled by cancel_all (the daemon stops): neither the command's failure nor the cluster's.
    if (stopping_ && !rep.finished) r.cancelled = true;
    if (r.cancelled) {
      a.result = std::move(r);
      return;
    }
    if (r.spawn_failed) {
      a.infrastructure = true;
      a.why = "srun could not start: " + trim_end(r.output);
      return;
    }
    if (rep.finished) {
      if (!rep.sandbox_started) {
        a.infrastructure = true;
        a.why = "bubblewrap could not start the command on the node: " +
                explain_sandbox_failure(r.output.empty() ? r.error_output : r.output);
        return;
      }
      r.exit_code = rep.timed_out ? -1 : rep.exit_code;
      r.timed_out = rep.timed_out;
      a.result = std::move(r);
      return;
    }
    if (r.timed_out && rep.job_id) {  // the local safety net: the step hung past its limits
      a.result = std::move(r);
      return;
    }
    a.infrastructure = true;
    std::string said = tail_lines(r.output + "\n" + r.error_output, 3);
    if (!rep.job_id)
      a.why = (r.timed_out ? "the job did not start within " +
                                 format_duration(slurm_.queue_timeout) + ": " + said
                           : "the job did not start: " + said) +
              nodes_state(runner_class);
    else
      a.why = "the job was lost while it ran (node failure or preemption): " + said;
  }

  // What sinfo says of the partition's nodes when a job could not start (a drained node's
  // reason is what the person needs), e.g. " (nodes: debug drain: disk full)".
  std::string nodes_state(const std::string& runner_class) {
    std::string partition = slurm_.partition;
    if (auto it = slurm_.classes.find(runner_class);
        it != slurm_.classes.end() && !it->second.partition.empty())
      partition = it->second.partition;
    ProcessSpec q = slurm_tool({tool("sinfo"), "-h", "-o", "%P %t: %E"});
    if (!partition.empty()) q.argv.push_back("--partition=" + partition);
    ProcessResult r = run_process(q);
    if (!r.succeeded() || trim_end(r.output).empty()) return {};
    return " (nodes: " + tail_lines(r.output, 4) + ")";
  }

  // The Slurm tools' process: this executor's environment, `/` as its folder, a short limit.
  ProcessSpec slurm_tool(std::vector<std::string> argv) const {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.inherit_env = false;
    spec.env_set = slurm_env({});
    spec.timeout = std::chrono::seconds(20);
    spec.cwd = "/";
    return spec;
  }

  // Which of `names` squeue still lists (pending, running or COMPLETING); nullopt when squeue
  // could not answer (then nothing is known to be gone).
  std::optional<std::set<std::string>> still_listed(const std::vector<std::string>& names) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
    ProcessResult r = run_process(slurm_tool({tool("squeue"), "-h", "-o", "%j", "--name=" + list}));
    if (!r.succeeded()) return std::nullopt;
    std::set<std::string> out;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);)
      if (!trim_end(line).empty()) out.insert(trim_end(line));
    return out;
  }

  // scancel by name (a job still queued is cancelled too), then wait until squeue no longer
  // lists them, at most executor.slurm.cancel_timeout. A cancelled job stays COMPLETING while
  // the node ends its processes, which a loaded node or a slow controller can stretch well past
  // KillWait; a job still listed then is never taken for gone: it is kept as cleaning up
  // (load().cleaning, `daemon status`) until a later look (the next command, the daemon's stop)
  // no longer finds it.
  void cancel_jobs(const std::vector<std::string>& names) {
    if (names.empty()) return;
    for (const auto& name : names)
      run_process(slurm_tool({tool("scancel"), "--quiet", "--name=" + name}));
    std::set<std::string> left(names.begin(), names.end());
    auto until = Clock::now() + slurm_.cancel_timeout;
    auto pause = std::chrono::milliseconds(200);
    while (true) {
      if (auto listed = still_listed({left.begin(), left.end()})) left = std::move(*listed);
      if (left.empty() || Clock::now() >= until) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(2000));
    }
    std::lock_guard lock(mutex_);
    for (const auto& name : names) {
      if (!left.count(name)) {
        if (lingering_.erase(name)) spdlog::info("slurm: job {} is gone from the queue", name);
        continue;
      }
      if (lingering_.emplace(name, Clock::now()).second)
        spdlog::warn(
            "slurm: job {} is still listed by squeue {} after scancel (the cluster has "
            "not finished ending it); counted as cleaning up until it is gone",
            name, format_duration(slurm_.cancel_timeout));
    }
  }

  // Jobs cancelled earlier that the cluster still listed: looked at again (at most every 10 s),
  // and forgotten once squeue no longer lists them.
  void recheck_lingering() {
    std::vector<std::string> names;
    {
      std::lock_guard lock(mutex_);
      if (lingering_.empty() || Clock::now() - last_linger_check_ < std::chrono::seconds(10))
        return;
      last_linger_check_ = Clock::now();
      for (const auto& [name, since] : lingering_) names.push_back(name);
    }
    auto listed = still_listed(names);
    if (!listed) return;
    std::lock_guard lock(mutex_);
    for (const auto& name : names)
      if (!listed->count(name) && lingering_.erase(name))
        spdlog::info("slurm: job {} is gone from the queue", name);
  }

  // Jobs of this repository that a previous daemon left (it was killed): cancelled.
  void cancel_leftovers() {
    ProcessResult listed = run_process(slurm_tool({tool("squeue"), "-h", "-o", "%j"}));
    if (!listed.succeeded()) return;
    std::vector<std::string> left;
    std::istringstream in(listed.output);
    for (std::string name; std::getline(in, name);) {
      name = trim_end(name);
      if (name.rfind(token_ + "-", 0) == 0) {
        spdlog::warn("slurm: cancelling job {} left by an earlier daemon of this repository", name);
        left.push_back(name);
      }
    }
    cancel_jobs(left);
  }

  // A job that must see a file this daemon just wrote in the worktree root, and write one back.
  std::optional<std::string> probe() {
    if (!confined_)
      return "executor: slurm runs each command in bubblewrap on the node (set `sandbox: "
             "bubblewrap`, "
             "or `executor: local` to run commands unconfined here)";
    cancel_leftovers();
    std::random_device rd;
    std::string nonce = std::to_string(rd()) + std::to_string(::getpid());
    fs::path root = options_.paths.worktrees_dir();
    std::error_code ec;
    fs::create_directories(root, ec);
    fs::path dir = root / (".loopr-probe-" + std::to_string(::getpid()));
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (ec)
      return "cannot create " + dir.string() + ": " + ec.message() +
             " (make the worktree root writable, or set executor.worktree_root)";
    { std::ofstream(dir / "from-daemon") << nonce << "\n"; }
    Command c = Command::shell("cat from-daemon && cat from-daemon > from-node", dir);
    c.timeout = std::chrono::seconds(60);
    c.output_cap = 8192;
    Attempt a = run_once(c);
    std::string back;
    {
      std::ifstream in(dir / "from-node");
      std::getline(in, back);
    }
    fs::remove_all(dir, ec);
    if (a.infrastructure && a.why.find(dir.string()) != std::string::npos)
      return "the cluster's nodes do not see " + root.string() + " (" + a.why +
             ") (set executor.worktree_root to a folder every node mounts at the same path, and "
             "keep "
             "the repository's .git visible to the nodes at " +
             options_.paths.root.string() + ")";
    if (a.infrastructure)
      return "the Slurm probe job did not run: " + a.why +
             " (check that `srun true` works as the daemon's user, and executor.slurm's partition, "
             "account and qos)";
    if (!a.result.succeeded() || a.result.output.find(nonce) == std::string::npos)
      return "the Slurm probe job ran but could not read " + (dir / "from-daemon").string() + ": " +
             trim_end(a.result.output.substr(0, 500)) +
             " (set executor.worktree_root to a folder every node mounts at the same path, and "
             "keep "
             "the repository's .git visible to the nodes at " +
             options_.paths.root.string() + ")";
    if (back != nonce)
      return "the Slurm probe job's file did not appear in " + dir.string() +
             " (the nodes see another filesystem there: set executor.worktree_root to a shared "
             "folder)";
    spdlog::info("slurm: probe job {} ran and saw the worktree root {}", a.job, root.string());
    return std::nullopt;
  }

  bool confined_;
  SlurmConfig slurm_;
  ExecutorOptions options_;
  std::unique_ptr<LocalSandbox> sandbox_;
  ExecutorInfo info_;
  std::string token_;
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<int> queued_{0}, running_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::set<std::string> active_;
  /// Cancelled jobs squeue still listed after cancel_timeout, and since when.
  std::map<std::string, Clock::time_point> lingering_;
  Clock::time_point last_linger_check_{};
  ProbeCache readiness_;
};

}  // namespace

std::unique_ptr<Executor> make_slurm_executor(const SandboxConfig& sandbox,
                                              ExecutorOptions options) {
  return std::make_unique<SlurmExecutor>(sandbox, std::move(options));
}

}  // namespace loopr::exec
