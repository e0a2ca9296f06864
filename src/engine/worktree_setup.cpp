// The stamp lives in the worktree's git admin folder (`.git/worktrees/<id>/loopr-setup`), not in
// the worktree: the model cannot forge it, a checkpoint never commits it, and it goes with the
// worktree (a fresh retry's new worktree runs the setup again).
#include <cstdio>
#include <fstream>

#include <loopr/core/process.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/test_output.hpp>
#include <loopr/engine/worktree_setup.hpp>

namespace loopr::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kOutputCap = 64 * 1024;  // per command
constexpr const char* kStampFile = "loopr-setup";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

// The git admin folder a linked worktree's `.git` file names; empty for anything else.
fs::path admin_dir(const fs::path& workdir) {
  std::error_code ec;
  if (!fs::is_regular_file(workdir / ".git", ec)) return {};
  std::ifstream in(workdir / ".git");
  std::string line;
  std::getline(in, line);
  if (line.rfind("gitdir:", 0) != 0) return {};
  fs::path p = trim(line.substr(7));
  return p.is_absolute() ? p : (workdir / p).lexically_normal();
}

// What the stamp says: the commands (and whether they had the network) that passed.
std::string stamp_text(const SetupConfig& setup) {
  std::string all = setup.network ? "network\n" : "no network\n";
  for (const auto& c : setup.commands) all += c + '\0';
  return output_fingerprint(all) + "\n";
}

bool stamped(const fs::path& admin, const std::string& text) {
  if (admin.empty()) return false;
  std::ifstream in(admin / kStampFile, std::ios::binary);
  std::string have((std::istreambuf_iterator<char>(in)), {});
  return have == text;
}

void write_log(const fs::path& file, const SetupRun& run) {
  if (file.empty()) return;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << run.output << "# " << run.summary << "\n";
}

}  // namespace

awaitable<SetupRun> run_setup(EngineContext& ctx, SetupRequest request) {
  std::shared_ptr<const Config> config = ctx.config;
  const SetupConfig& setup = config->setup;
  SetupRun run;
  if (setup.commands.empty()) co_return run;
  const std::string stamp = stamp_text(setup);
  const fs::path admin = admin_dir(request.workdir);
  bool done = co_await run_blocking(ctx.pool, [&] { return stamped(admin, stamp); });
  if (done) co_return run;

  run.ran = true;
  auto started = std::chrono::steady_clock::now();
  for (const auto& text : setup.commands) {
    exec::Command cmd = exec::Command::shell(text, request.workdir);
    cmd.timeout = setup.timeout;
    cmd.output_cap = kOutputCap;
    cmd.env = request.env;
    cmd.env["LOOPR_SETUP"] = "1";
    cmd.cancel = request.cancel;
    cmd.network = setup.network;
    cmd.runner_class = ctx.runners.classify(text);
    ProcessResult r = co_await run_blocking(ctx.pool, [&ctx, &cmd] {
      auto lease = ctx.runners.acquire(cmd.runner_class);
      return ctx.executor.run(cmd);
    });
    run.output += "$ " + text + "\n" + r.output;
    if (!r.output.empty() && r.output.back() != '\n') run.output += "\n";
    if (r.succeeded()) continue;
    run.passed = false;
    run.command = text;
    if (r.cancelled) {
      run.stopped = true;
      run.summary = "the setup `" + text + "` was interrupted by a stop";
    } else if (r.spawn_failed) {
      run.could_not_start = true;
      run.summary = "the setup `" + text + "` could not start: " + first_line(r.output, 200);
    } else if (r.timed_out) {
      run.summary = "the setup `" + text + "` timed out after " + format_duration(setup.timeout) +
                    " (setup.timeout)";
    } else if (r.term_signal) {
      run.summary =
          "the setup `" + text + "` was killed by signal " + std::to_string(r.term_signal);
    } else {
      run.summary = "the setup `" + text + "` failed with exit code " + std::to_string(r.exit_code);
    }
    break;
  }
  run.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
  if (run.passed) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", static_cast<double>(run.duration_ms) / 1000);
    run.summary = std::to_string(setup.commands.size()) + " setup command" +
                  (setup.commands.size() == 1 ? "" : "s") + " passed in " + took;
  }
  co_await run_blocking(ctx.pool, [&] {
    write_log(request.log_file, run);
    if (run.passed && !admin.empty()) {
      std::ofstream out(admin / kStampFile, std::ios::binary | std::ios::trunc);
      out << stamp;
    }
  });
  co_return run;
}

std::string setup_failure_text(const SetupRun& run, std::size_t tail_bytes) {
  std::string tail = run.output.size() > tail_bytes
                         ? "…" + run.output.substr(run.output.size() - tail_bytes)
                         : run.output;
  while (!tail.empty() && tail.back() == '\n') tail.pop_back();
  return run.summary + ":\n" + tail;
}

}  // namespace loopr::engine
