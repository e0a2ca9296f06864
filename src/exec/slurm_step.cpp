// The step script runs under /bin/sh on the node with its arguments: TIMEOUT_S OPEN_FILES then
// the command (`bwrap …`). It hands bwrap the two descriptors the local executor would: the
// sanitised git config (from LOOPR_GIT_CONFIG, which it takes out of the environment first) as
// fd 3 and a status file as fd 4 (bwrap writes `exit-code` there only when the command itself ran
// and ended: a mount that failed in the sandbox's set-up writes `child-pid` but no `exit-code`,
// which tells a sandbox that could not start from a command that failed). The command's time limit
// is enforced on the node by `timeout`, from when it starts: time spent waiting in the queue is
// not the command's.
#include "exec/slurm_step.hpp"

#include <cmath>
#include <sstream>

namespace loopr::exec {
namespace {

constexpr const char* kStepScript = R"SH(t=$1; n=$2; shift 2
echo "@@loopr-slurm started job=${SLURM_JOB_ID:-unknown} node=$(hostname -s 2>/dev/null)@@"
st=$(mktemp 2>/dev/null) || { printf '\n@@loopr-slurm finished started=0 rc=125 timedout=0@@\n'; exit 125; }
cf=/dev/null
if [ -n "${LOOPR_GIT_CONFIG+x}" ]; then cf=$(mktemp) && printf '%s' "$LOOPR_GIT_CONFIG" > "$cf"; fi
unset LOOPR_GIT_CONFIG
[ "$n" -gt 0 ] && ulimit -n "$n" 2>/dev/null
s0=$(date +%s)
if [ "$t" -gt 0 ]; then timeout -k 5 "$t" "$@" 3<"$cf" 4>"$st"; else "$@" 3<"$cf" 4>"$st"; fi
rc=$?
to=0
if [ "$t" -gt 0 ] && [ "$rc" -eq 124 ] && [ $(( $(date +%s) - s0 )) -ge "$t" ]; then to=1; fi
sd=0; if grep -q exit-code "$st" || [ "$to" = 1 ]; then sd=1; fi
rm -f "$st"; [ "$cf" = /dev/null ] || rm -f "$cf"
printf '\n@@loopr-slurm finished started=%s rc=%s timedout=%s@@\n' "$sd" "$rc" "$to"
exit $rc
)SH";

std::string minutes(std::chrono::milliseconds d) {
  auto m = static_cast<long long>(std::ceil(static_cast<double>(d.count()) / 60000.0));
  return std::to_string(m < 1 ? 1 : m);
}

std::string field(std::string_view line, std::string_view key) {
  auto at = line.find(key);
  if (at == std::string_view::npos) return {};
  at += key.size();
  auto end = line.find_first_of(" @", at);
  return std::string(line.substr(at, end == std::string_view::npos ? line.size() - at : end - at));
}

}  // namespace

std::vector<std::string> srun_argv(const SlurmConfig& config, const std::string& srun,
                                   const StepRequest& r) {
  std::string partition = config.partition;
  int cpus = config.cpus;
  std::uint64_t memory = config.memory;
  if (auto it = config.classes.find(r.runner_class); it != config.classes.end()) {
    if (!it->second.partition.empty()) partition = it->second.partition;
    if (it->second.cpus > 0) cpus = it->second.cpus;
    if (it->second.memory > 0) memory = it->second.memory;
  }
  // The job's limit is the command's plus a minute: the node's `timeout` ends the command
  // first, so a Slurm time-limit kill only happens when the step script itself hangs.
  auto limit = r.timeout.count() > 0
                   ? r.timeout + std::chrono::minutes(1)
                   : std::chrono::duration_cast<std::chrono::milliseconds>(config.time_limit);
  auto queue_s = std::chrono::duration_cast<std::chrono::seconds>(config.queue_timeout).count();
  std::vector<std::string> a = {srun,
                                "--job-name=" + r.job_name,
                                "--nodes=1",
                                "--ntasks=1",
                                "--cpus-per-task=" + std::to_string(cpus),
                                "--time=" + minutes(limit),
                                "--immediate=" + std::to_string(queue_s < 1 ? 1 : queue_s),
                                "--kill-on-bad-exit=1",
                                "--quiet",
                                "--chdir=/"};
  if (memory > 0) a.push_back("--mem=" + std::to_string((memory + (1 << 20) - 1) >> 20) + "M");
  if (!partition.empty()) a.push_back("--partition=" + partition);
  if (!config.account.empty()) a.push_back("--account=" + config.account);
  if (!config.qos.empty()) a.push_back("--qos=" + config.qos);
  a.insert(a.end(), config.srun_args.begin(), config.srun_args.end());
  auto timeout_s =
      static_cast<long long>(std::ceil(static_cast<double>(r.timeout.count()) / 1000.0));
  a.insert(a.end(), {"/bin/sh", "-c", kStepScript, "loopr-step", std::to_string(timeout_s),
                     std::to_string(r.open_files)});
  a.insert(a.end(), r.command.begin(), r.command.end());
  return a;
}

bool is_marker_line(std::string_view line) {
  return line.starts_with(kStartedMarker) || line.starts_with(kFinishedMarker);
}

std::optional<std::string> started_job(std::string_view line) {
  if (!line.starts_with(kStartedMarker)) return std::nullopt;
  return field(line, "job=");
}

StepReport read_step_output(const std::string& output) {
  StepReport rep;
  std::string out;
  out.reserve(output.size());
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t nl = output.find('\n', pos);
    std::size_t end = nl == std::string::npos ? output.size() : nl + 1;
    std::string_view line(output.data() + pos, end - pos);
    std::string_view bare = line;
    if (bare.ends_with('\n')) bare.remove_suffix(1);
    if (auto job = started_job(bare)) {
      if (!rep.job_id) rep.job_id = *job;
    } else if (bare.starts_with(kFinishedMarker)) {
      rep.finished = true;
      rep.sandbox_started = field(bare, "started=") == "1";
      try {
        rep.exit_code = std::stoi(field(bare, "rc="));
      } catch (...) {
        rep.exit_code = -1;
      }
      rep.timed_out = field(bare, "timedout=") == "1";
      // The script printed a newline before this line so that it starts a line of its own.
      if (!out.empty() && out.back() == '\n') out.pop_back();
    } else {
      out.append(line);
    }
    pos = end;
  }
  rep.output = std::move(out);
  return rep;
}

}  // namespace loopr::exec
