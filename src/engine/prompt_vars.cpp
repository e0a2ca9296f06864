// Step 1 and 2 of an iteration: what the loop's prompt shows. The worktree's state is the loop's
// own work since it started (not just since the last checkpoint, which a fresh-context model
// would almost always see as "(clean)"), and a code loop is told what its phase serves.
#include <loopr/core/process.hpp>
#include <loopr/core/text.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/engine/prompt_vars.hpp>
#include <loopr/git/artifact.hpp>
#include <loopr/git/worktree.hpp>
#include <loopr/markdown/artifacts.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::engine {

namespace {

constexpr std::size_t kPurposeSectionBytes = 2000;
constexpr std::size_t kLastChangedPaths = 20;

std::string cut(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // UTF-8
  text.resize(end);
  return text + "\n(cut here)";
}

// The loop's own worktree only (the iteration reads what is there now, never an older commit),
// through the one artifact reader: a symlink or FIFO the model's commands made there is not read.
git::ArtifactText read_from_worktree(const Loop& loop, const std::string& rel,
                                     std::size_t max_bytes) {
  return git::read_loop_artifact({{}, loop.worktree, rel, {}}, max_bytes);
}

std::string read_input(const Loop& loop, const Config& config) {
  auto text = read_from_worktree(loop, loop.input_artifact, config.artifacts.max_bytes);
  if (!text.bytes)
    return "(the input artifact " + loop.input_artifact +
           " cannot be read from the working tree: " + text.problem + ")";
  if (!text.truncated) return std::move(*text.bytes);
  return *text.bytes + "\n(the input artifact is cut here: it is larger than " +
         std::to_string(config.artifacts.max_bytes) + " bytes)";
}

// An ancestor's artifact as the loop's worktree has it (the integration branch carries every
// artifact of the tree); nullopt when it is not there or cannot be read.
std::optional<std::string> ancestor_artifact(const Loop& loop, const Loop& ancestor,
                                             const Config& config) {
  if (ancestor.output_artifacts.empty()) return std::nullopt;
  // One byte past the limit: the format check then names the artifact too large, as before.
  auto text =
      read_from_worktree(loop, ancestor.output_artifacts.front(), config.artifacts.max_bytes + 1);
  return std::move(text.bytes);
}

// The plan's title and success criteria, and (code loops) the overview of the spec their phase
// belongs to: what the work is for, briefly. Nothing for a plan, or when the input says it all.
std::string read_purpose(const Loop& loop, const Config& config, const TaskStore* store) {
  if (!store || loop.type == LoopType::plan) return {};
  std::string out;
  if (loop.type == LoopType::code || loop.type == LoopType::phase) {
    auto plan = store->get_loop(loop.plan_id);
    std::optional<std::string> text;
    if (plan) text = ancestor_artifact(loop, *plan, config);
    if (text) {
      auto doc = markdown::check_plan(*text, config.artifacts).doc;
      out += "The plan (`" + plan->output_artifacts.front() +
             "`): " + (doc.title.text.empty() ? first_line(plan->task, 200) : doc.title.text) +
             "\n";
      if (!doc.success_criteria.text.empty())
        out += "\nIts success criteria:\n\n" +
               cut(doc.success_criteria.text, kPurposeSectionBytes) + "\n";
    }
  }
  if (loop.type == LoopType::code && !loop.parent_id.empty()) {
    auto phase = store->get_loop(loop.parent_id);
    if (phase && phase->type == LoopType::phase && !phase->parent_id.empty()) {
      auto spec = store->get_loop(phase->parent_id);
      std::optional<std::string> text;
      if (spec) text = ancestor_artifact(loop, *spec, config);
      if (text) {
        auto doc = markdown::check_spec(*text, config.artifacts).doc;
        if (!doc.overview.text.empty())
          out += std::string(out.empty() ? "" : "\n") + "The spec your phase belongs to (`" +
                 spec->output_artifacts.front() + "`), its overview:\n\n" +
                 cut(doc.overview.text, kPurposeSectionBytes) + "\n";
      }
    }
  }
  return out;
}

std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& line : items) out += line + "\n";
  return out;
}

}  // namespace

std::string work_start(const Loop& loop) {
  if (!loop.tree.based_on.empty()) return loop.tree.based_on;
  if (loop.type == LoopType::plan) return loop.tree.base_branch;
  return {};
}

IterationState read_state(const Loop& loop, const Config& config, const TaskStore* store,
                          const std::string& clean_at) {
  IterationState s;
  // One repository open and one diff for the whole state (issue 18: per-iteration work). First,
  // as nothing special may be left where loopr reads (a FIFO `.gitignore` blocks a pool thread
  // for good), it sweeps the worktree, unless nothing wrote there since the checkpoint
  // `clean_at` (then it reads objects only: issue 32).
  git::WorkStateOptions options;
  options.since = work_start(loop);
  options.clean_at = clean_at;
  options.limits.max_bytes = config.git.diff_max_bytes;
  options.max_last_paths = loop.iteration > 0 ? kLastChangedPaths : 0;
  options.log_entries = config.git.log_entries;
  auto work = git::Worktree::read_work_state(loop.worktree, options);
  if (!work) {
    s.error = work.error().message;
    return s;
  }
  if (!loop.input_artifact.empty()) s.input = read_input(loop, config);
  s.status = work->changes.empty() ? "(no changes yet)\n" : lines(work->changes);
  if (loop.iteration > 0)
    s.status +=
        "\nChanged by iteration " + std::to_string(loop.iteration) + ":\n" +
        (work->last_changes.empty() ? std::string("(nothing)\n") : lines(work->last_changes));
  if (!s.status.empty() && s.status.back() == '\n') s.status.pop_back();
  s.diff = work->diff.empty() ? "(no changes yet)" : std::move(work->diff);
  s.log = lines(work->log);
  s.purpose = read_purpose(loop, config, store);
  // Names, diffs and artifacts are the worktree's bytes; the prompt (JSON to the model) is text.
  for (std::string* text : {&s.input, &s.status, &s.diff, &s.log, &s.purpose})
    if (!is_valid_utf8(*text)) *text = valid_utf8(*text);
  return s;
}

std::string progress_text(const Loop& loop, const Config& config) {
  return !loop.run.feedback.empty()
             ? render_feedback(loop.run.feedback, config.limits.feedback_bytes)
             : std::string("None yet: this is the first iteration.");
}

std::map<std::string, std::string> prompt_vars(const Loop& loop, const Config& config,
                                               const IterationState& s, int n) {
  const LoopTypeConfig& lc = config.loop(loop.type);
  std::string validation =
      loop.type == LoopType::code
          ? (loop.validation_command.empty() ? lc.validation : loop.validation_command)
          : std::string("the built-in format check");
  return {
      {"task", loop.task},
      {"input", s.input},
      {"input-path", loop.input_artifact},
      {"progress", progress_text(loop, config)},
      {"git-status", s.status},
      {"git-diff", s.diff},
      {"git-log", s.log},
      {"purpose", s.purpose.empty() ? std::string("(nothing beyond the input above)") : s.purpose},
      {"artifact-path",
       loop.output_artifacts.empty() ? std::string() : loop.output_artifacts.front()},
      {"parent-id", loop.parent_id},
      {"loop-id", loop.id},
      {"plan-id", loop.plan_id},
      {"loop-type", to_string(loop.type)},
      {"iteration", std::to_string(n)},
      {"max-iterations", std::to_string(loop.max_iterations)},
      {"completion-signal", config.limits.completion_signal},
      {"validation-command", validation},
      {"max-items", std::to_string(config.artifacts.max_items)},
  };
}

std::map<std::string, std::string> judge_vars(const Loop& loop, const Config& config,
                                              const std::string& input, const std::string& artifact,
                                              const std::string& artifact_path) {
  return {{"task", loop.task},
          {"input", input},
          {"artifact", artifact},
          {"artifact-path", artifact_path},
          {"loop-id", loop.id},
          {"loop-type", to_string(loop.type)},
          {"parent-id", loop.parent_id},
          {"plan-id", loop.plan_id},
          {"progress", progress_text(loop, config)}};
}

std::map<std::string, std::string> review_vars(const Loop& loop, const Config& config,
                                               const std::string& phase, const std::string& diff,
                                               const std::string& test_output, int n) {
  const std::string& command = loop.validation_command.empty()
                                   ? config.loop(LoopType::code).validation
                                   : loop.validation_command;
  return {{"task", loop.task},
          {"input", phase},
          {"input-path", loop.input_artifact},
          {"git-diff", diff.empty() ? std::string("(no changes)") : diff},
          {"validation-command", command},
          {"validation-output", cap_head_tail(test_output, 16 * 1024)},
          {"loop-id", loop.id},
          {"loop-type", to_string(loop.type)},
          {"parent-id", loop.parent_id},
          {"plan-id", loop.plan_id},
          {"iteration", std::to_string(n)},
          {"max-iterations", std::to_string(loop.max_iterations)},
          {"progress", progress_text(loop, config)}};
}

}  // namespace loopr::engine
