// The executor factory, the unconfined executor (`sandbox: none`), the sweep after every
// command and the self-test.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>

#include <loopr/core/clean_checkpoint.hpp>
#include <loopr/core/sweep_handoff.hpp>
#include <loopr/core/worktree_sweep.hpp>
#include <loopr/exec/executor.hpp>
#include <loopr/exec/secrets.hpp>

#include "exec/bwrap_args.hpp"
#include "exec/bwrap_executor.hpp"
#include "exec/slurm_executor.hpp"

namespace loopr::exec {
namespace fs = std::filesystem;

Command Command::shell(std::string text, fs::path workdir) {
  Command c;
  c.argv = {"/bin/sh", "-c", std::move(text)};
  c.workdir = std::move(workdir);
  return c;
}

namespace {
// Command and ProcessSpec name these fields alike: one list of them for both directions.
template <typename From, typename To>
void copy_process_io(const From& from, To& to) {
  to.stdin_data = from.stdin_data;
  to.timeout = from.timeout;
  to.output_cap = from.output_cap;
  to.merge_stderr = from.merge_stderr;
  to.on_line = from.on_line;
  to.cancel = from.cancel;
}
}  // namespace

void take_process_io(const Command& c, ProcessSpec& spec) { copy_process_io(c, spec); }
void take_process_io(const ProcessSpec& spec, Command& c) { copy_process_io(spec, c); }

namespace {

// `sandbox: none` has no mounts: the checkout's paths (`sandbox.read_only: [node_modules]`)
// are links in each worktree instead, which git never commits there (note_checkout_mounts).
void link_checkout_paths(const fs::path& workdir, const fs::path& repo_root,
                         const std::vector<std::string>& rels) {
  std::error_code ec;
  if (rels.empty() || !fs::exists(workdir / ".git", ec)) return;
  note_checkout_mounts(workdir, rels);
  for (const auto& rel : rels) {
    fs::path source = repo_root / rel, dest = workdir / rel;
    if (!fs::exists(source, ec) || fs::is_symlink(dest, ec) || !mount_point_free(dest)) continue;
    fs::remove(dest, ec);  // an empty mount point a sandboxed run left
    fs::create_directories(dest.parent_path(), ec);
    fs::create_symlink(source, dest, ec);
  }
}

class UnconfinedExecutor final : public Executor {
 public:
  UnconfinedExecutor(const SandboxConfig& config, ExecutorOptions options)
      : config_(config), options_(std::move(options)) {
    info_.kind = "none";
    info_.confined = false;
    info_.description =
        "sandbox: none — commands run UNCONFINED with the daemon's user, files and network";
  }

  ProcessResult run(const Command& c) override {
    ProcessSpec spec;
    spec.argv = c.argv;
    spec.cwd = c.workdir.string();
    link_checkout_paths(c.workdir, options_.paths.root, config_.checkout_paths());
    if (!config_.env_values.empty()) {
      // Expanded against the daemon's own environment (the command inherits it).
      std::map<std::string, std::string> base;
      for (const char* name : {"PATH", "HOME", "USER", "LANG"})
        if (auto v = options_.env(name)) base[name] = *v;
      apply_env_values(base, config_.env_values, c.workdir);
      for (const auto& [k, v] : config_.env_values) spec.env_set[k] = base[k];
    }
    for (const auto& [k, v] : c.env) spec.env_set[k] = v;
    // The daemon took its provider keys out of its environment at start; should anything have
    // put one back, it still does not reach a command.
    for (const char* key : kSecretVariables)
      if (!c.env.count(key)) spec.env_unset.emplace_back(key);
    take_process_io(c, spec);
    return run_process(spec);
  }

  const ExecutorInfo& info() const override { return info_; }
  std::optional<std::string> unavailable() override { return std::nullopt; }

 private:
  SandboxConfig config_;
  ExecutorOptions options_;
  ExecutorInfo info_;
};

// Every executor's commands leave their worktree swept (core/worktree_sweep.hpp): whatever
// ran there — on this machine, unconfined, or on a cluster node — no FIFO, socket, device node
// or setuid bit stays behind, and the command's output says what was taken away.
//
// `contained`: the inner executor ends every process of a command before run returns (a
// bubblewrap sandbox is a PID namespace, whose processes the kernel kills and reaps before its
// init is reaped). Only then may the sweep's listing stand for the worktree after the command
// (core/sweep_handoff.hpp): unconfined, a process that left its process group (setsid) lives
// on; on a cluster's node, the job's processes are the node's to end.
class SweepingExecutor final : public Executor {
 public:
  SweepingExecutor(std::unique_ptr<Executor> inner, bool contained)
      : inner_(std::move(inner)), contained_(contained) {}

  ProcessResult run(const Command& c) override {
    if (!c.workdir.empty()) {  // stale once anything runs there
      drop_handed_sweep(c.workdir);
      drop_clean_checkpoint(c.workdir);
    }
    ProcessResult r = inner_->run(c);
    if (c.workdir.empty()) return r;
    // A command killed from outside (a time limit, a stop) ends its sandbox's init by its
    // parent-death signal, asynchronously: what it started may still be dying. Not handed over.
    const bool hand_over = c.hand_over_sweep && contained_ && !r.timed_out && !r.cancelled &&
                           !r.spawn_failed && r.term_signal == 0;
    SweptListing listing;
    const SweepVisitor keep = [&listing](const std::string& rel, const struct stat* st) {
      listing.add(rel, st);
    };
    SweepReport swept = sweep_worktree(c.workdir, hand_over ? &keep : nullptr);
    if (hand_over && swept.failed.empty()) hand_over_sweep(c.workdir, std::move(listing));
    if (swept.empty()) return r;
    std::string note = describe(swept);
    spdlog::warn("after a command in {}: {}", c.workdir.string(), note);
    if (!r.output.empty() && r.output.back() != '\n') r.output += '\n';
    r.output += note;
    return r;
  }
  const ExecutorInfo& info() const override { return inner_->info(); }
  std::optional<std::string> unavailable() override { return inner_->unavailable(); }
  ExecutorLoad load() const override { return inner_->load(); }
  void cancel_all() override { inner_->cancel_all(); }

 private:
  std::unique_ptr<Executor> inner_;
  bool contained_;
};

std::unique_ptr<Executor> make_unswept_executor(const SandboxConfig& config,
                                                ExecutorOptions options) {
  if (options.executor.kind == ExecutorKind::slurm)
    return make_slurm_executor(config, std::move(options));
  if (!config.confined()) return std::make_unique<UnconfinedExecutor>(config, std::move(options));
  return make_bwrap_executor(config, std::move(options));
}

}  // namespace

std::unique_ptr<Executor> make_executor(const SandboxConfig& config, ExecutorOptions options) {
  const bool contained = options.executor.kind != ExecutorKind::slurm && config.confined();
  return std::make_unique<SweepingExecutor>(make_unswept_executor(config, std::move(options)),
                                            contained);
}

Result<void> self_test(Executor& executor, const fs::path& scratch) {
  std::error_code ec;
  fs::path dir = scratch / ("sandbox-check-" + std::to_string(::getpid()));
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return make_error(ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  Command probe = Command::shell("echo loopr-sandbox-ok > probe && cat probe", dir);
  probe.timeout = std::chrono::seconds(20);
  probe.output_cap = 8192;
  ProcessResult r = executor.run(probe);
  std::ifstream written(dir / "probe");
  std::string line;
  std::getline(written, line);
  fs::remove_all(dir, ec);
  if (r.succeeded() && r.output.find("loopr-sandbox-ok") != std::string::npos &&
      line == "loopr-sandbox-ok")
    return ok();
  std::string why = r.spawn_failed ? r.output
                    : r.timed_out  ? "a trivial command did not finish in 20 s"
                                   : "a trivial command failed (exit " +
                                        std::to_string(r.exit_code) + "): " + r.output;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return make_error(ErrorCode::unsupported, why);
}

}  // namespace loopr::exec
