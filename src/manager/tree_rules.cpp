#include "manager/tree_rules.hpp"

#include <algorithm>
#include <map>

#include <loopr/api/events.hpp>
#include <loopr/api/transition.hpp>
#include <loopr/core/branch_names.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/repo_paths.hpp>
#include <loopr/core/stable_hash.hpp>
#include <loopr/core/text.hpp>
#include <loopr/markdown/artifacts.hpp>

namespace loopr::manager {

using api::transition;

// ---------------------------------------------------------------- children

Loop make_plan_loop(const std::string& id, const std::string& request, const Config& config) {
  Loop l;
  l.id = id;
  l.type = LoopType::plan;
  l.plan_id = id;
  l.task = request;
  l.output_artifacts = {artifact_path(LoopType::plan, id, request)};
  l.prompt_template = "plan";
  l.max_iterations = config.loop(LoopType::plan).max_iterations;
  l.status = LoopStatus::pending;
  l.tree.base_branch = config.base_branch;
  return l;
}

Result<std::vector<Loop>> children_from_artifact(const Loop& parent, std::string_view text,
                                                 const Config& config) {
  if (parent.output_artifacts.empty())
    return make_error(ErrorCode::invalid_argument, "loop " + parent.id + " has no artifact");
  const std::string& file = parent.output_artifacts.front();
  const int base = parent.tree.children_base;
  std::vector<Loop> out;
  auto child = [&](LoopType type, int index, std::string task, const std::string& title) {
    Loop c;
    c.id = child_id(parent.id, type, base + index);
    c.type = type;
    c.parent_id = parent.id;
    c.plan_id = parent.plan_id;
    c.index = base + index;
    c.task = std::move(task);
    c.input_artifact = file;
    if (type != LoopType::code) c.output_artifacts = {artifact_path(type, c.id, title)};
    c.prompt_template = to_string(type);
    if (type == LoopType::code) c.validation_command = config.loop(LoopType::code).validation;
    c.max_iterations = config.loop(type).max_iterations;
    c.status = LoopStatus::pending;
    return c;
  };
  if (parent.type == LoopType::plan) {
    LOOPR_ASSIGN(markdown::PlanDoc doc, markdown::read_plan(text, file, config.artifacts));
    for (const auto& s : doc.specs) {
      std::string task = "spec-" + s.name + ": " + s.description;
      if (!s.details.empty()) task += "\n" + s.details;
      out.push_back(child(LoopType::spec, s.index, task, s.name));
    }
  } else if (parent.type == LoopType::spec) {
    LOOPR_ASSIGN(markdown::SpecDoc doc, markdown::read_spec(text, file, config.artifacts));
    for (const auto& p : doc.phases) {
      std::string task = p.name + (p.description.empty() ? "" : ": " + p.description);
      if (!p.files.empty()) task += "\nFiles: " + join(p.files, ", ");
      out.push_back(child(LoopType::phase, p.number, task, p.name));
    }
  } else if (parent.type == LoopType::phase) {
    LOOPR_ASSIGN(markdown::PhaseDoc doc, markdown::read_phase(text, file, config.artifacts));
    std::string task = doc.title.text.empty() ? parent.task : doc.title.text;
    out.push_back(child(LoopType::code, 1, task, ""));
  }
  return out;
}

// ---------------------------------------------------------------- what a loop is still owed

bool merged(const Loop& l) { return l.tree.merged_iteration == l.iteration; }

bool spawned(const Loop& l) {
  return l.type == LoopType::code || l.tree.spawned_iteration == l.iteration;
}

bool finished(const Loop& l) { return l.status == LoopStatus::complete && merged(l) && spawned(l); }

bool failure_pending(const Loop& l) {
  return l.status == LoopStatus::failed && !l.tree.rolled_up && !l.tree.user_rejected;
}

// ---------------------------------------------------------------- the tree


namespace {

const Loop* find(std::span<const Loop> tree, std::string_view id) {
  for (const Loop& l : tree)
    if (l.id == id) return &l;
  return nullptr;
}

// Something will still happen to this loop without a person: it runs or waits to, or the
// manager owes it a merge, its children or its failure handling.
bool in_progress(const Loop& l) {
  if (l.status == LoopStatus::complete) return !finished(l);
  if (l.status == LoopStatus::failed) return failure_pending(l);
  return !is_terminal(l.status);
}

}  // namespace

TreeVerdict tree_verdict(std::span<const Loop> tree, std::string_view plan_id, MergeMode mode) {
  const Loop* root = find(tree, plan_id);
  if (!root) return TreeVerdict::running;
  if (gate_blocked(*root)) return TreeVerdict::integration_failed;
  // Not merged automatically (it changes held files: loopr's own, the harness, auto-run files):
  // `loopr merge` decides.
  if (root->status == LoopStatus::blocked && root->tree.tree_complete &&
      !root->tree.merge_error.empty())
    return TreeVerdict::merge_failed;
  // merge: pr: CI still fails (a person acts), or the push, the forge or held files stopped it.
  if (root->status == LoopStatus::blocked && root->end_reason == EndReason::ci_failed)
    return TreeVerdict::integration_failed;
  if (root->status == LoopStatus::blocked && (root->end_reason == EndReason::forge_failed ||
                                              root->end_reason == EndReason::held_for_review))
    return TreeVerdict::merge_failed;
  // Blocked by its baseline check before any code loop: a person acts (fix, resume).
  if (baseline_blocked(*root)) return TreeVerdict::failed;
  bool all_complete = true;
  for (const Loop& l : tree) {
    if (l.status == LoopStatus::invalidated) continue;
    if (in_progress(l)) return TreeVerdict::running;
    all_complete = all_complete && l.status == LoopStatus::complete;
  }
  if (!all_complete) return TreeVerdict::failed;
  if (!root->tree.merged_into_base.empty()) return TreeVerdict::merged;
  if (!root->tree.merge_error.empty()) return TreeVerdict::merge_failed;
  if (!root->tree.tree_complete)  // the gate checks it next, or is checking it (or CI: merge: pr)
    return root->tree.gate_result == GateResult::checking ||
           root->tree.pr_checks == PrChecks::pending
               ? TreeVerdict::validating
               : TreeVerdict::running;
  return mode == MergeMode::automatic ? TreeVerdict::merging : TreeVerdict::complete;
}

TreeStep next_tree_step(std::span<const Loop> tree, std::string_view plan_id, MergeMode mode) {
  for (const OwedStep& o : owed_steps(tree, mode)) {
    if (o.loop_id != plan_id) continue;
    if (o.step == Owed::check_gate) return TreeStep::check_integration;
    if (o.step == Owed::merge_into_base) return TreeStep::merge_into_base;
  }
  return TreeStep::none;
}

// ---------------------------------------------------------------- what is owed

const char* to_string(Owed step) {
  switch (step) {
    case Owed::run:
      return "run";
    case Owed::merge_into_integration:
      return "merge_into_integration";
    case Owed::spawn_children:
      return "spawn_children";
    case Owed::retire_folder:
      return "retire_folder";
    case Owed::end_dry_run:
      return "end_dry_run";
    case Owed::handle_failure:
      return "handle_failure";
    case Owed::archive_folder:
      return "archive_folder";
    case Owed::check_gate:
      return "check_gate";
    case Owed::merge_into_base:
      return "merge_into_base";
  }
  return "unknown";
}

std::vector<OwedStep> owed_steps(std::span<const Loop> loops, MergeMode mode) {
  // A plan's tree is at its end when every loop of it (but the invalidated) is finished.
  std::map<std::string, bool> all_finished;
  for (const Loop& l : loops) {
    if (l.status == LoopStatus::invalidated) continue;
    auto [it, fresh] = all_finished.try_emplace(root_plan_id(l.id), true);
    it->second = it->second && finished(l);
  }
  std::vector<OwedStep> out;
  auto owe = [&out](const Loop& l, Owed step) { out.push_back(OwedStep{l.id, step}); };
  for (const Loop& l : loops) {
    switch (l.status) {
      case LoopStatus::running:
      case LoopStatus::rebasing:
      case LoopStatus::pending:
        owe(l, Owed::run);
        break;
      case LoopStatus::complete: {
        if (!merged(l)) owe(l, Owed::merge_into_integration);
        if (!spawned(l)) owe(l, Owed::spawn_children);
        if (!l.worktree.empty()) owe(l, Owed::retire_folder);
        if (l.type != LoopType::plan || !all_finished[l.id]) break;
        if (!l.tree.tree_complete)
          owe(l, Owed::check_gate);
        else if (mode == MergeMode::automatic && l.tree.merged_into_base.empty() &&
                 l.tree.merge_error.empty())
          owe(l, Owed::merge_into_base);
        break;
      }
      case LoopStatus::awaiting_approval:
        if (l.tree.dry_run) owe(l, Owed::end_dry_run);
        break;
      case LoopStatus::failed:
        if (failure_pending(l)) owe(l, Owed::handle_failure);
        break;
      case LoopStatus::invalidated:
        if (!l.tree.invalidated_worktree.empty()) owe(l, Owed::archive_folder);
        break;
      default:
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------- the integration gate

bool gate_blocked(const Loop& plan) {
  return plan.type == LoopType::plan && plan.status == LoopStatus::blocked &&
         plan.tree.gate_result == GateResult::failed;
}

bool may_make_fix_loop(const Loop& plan) { return plan.tree.gate_fixes < 1; }

int next_fix_number(std::span<const Loop> tree, const std::string& plan_id) {
  int n = 0;
  for (const Loop& l : tree)
    if (is_fix_loop_id(l.id) && l.parent_id == plan_id) n = std::max(n, l.index);
  return n + 1;
}

Loop make_fix_loop(const Loop& plan, int number, const std::string& check_summary,
                   const std::string& check_feedback, const std::vector<std::string>& merged,
                   const Config& config) {
  const std::string command = config.loop(LoopType::code).validation;
  Loop c;
  c.id = fix_loop_id(plan.id, number);
  c.type = LoopType::code;
  c.parent_id = plan.id;
  c.plan_id = plan.plan_id;
  c.index = number;
  c.task = "Make `" + command + "` pass on the integration branch of plan " + plan.id +
           ". Every loop below passed it on its own branch; merged together they fail it.\n"
           "Loops merged: " + (merged.empty() ? std::string("(none)") : join(merged, ", ")) +
           "\nPlan: " + first_line(plan.task, 200);
  c.prompt_template = "integration-fix";
  c.validation_command = command;
  c.max_iterations = config.integration.max_fix_iterations;
  c.status = LoopStatus::pending;
  add_feedback(c.run,
               FeedbackEntry{0, FeedbackSource::integration,
                             "the integration branch fails: " + first_line(check_summary, 100),
                             check_feedback});
  return c;
}

std::string gate_output_tail(const std::string& output) {
  constexpr std::size_t kKeep = 4 * 1024;
  if (output.size() <= kKeep) return output;
  std::size_t from = output.size() - kKeep;
  if (auto nl = output.find('\n', from); nl != std::string::npos && nl + 1 < output.size())
    from = nl + 1;
  return "(the start is cut; the whole output is in the log)\n" + output.substr(from);
}

// ---------------------------------------------------------------- the baseline check

BaselineStep baseline_step(const BaselineState& baseline, BaselineMode mode, bool running) {
  if (mode == BaselineMode::off) return BaselineStep::proceed;
  const BaselineResult r = baseline.result;
  if (r == BaselineResult::passed || r == BaselineResult::unavailable)
    return BaselineStep::proceed;
  if (r == BaselineResult::failed)
    return mode == BaselineMode::block ? BaselineStep::block : BaselineStep::proceed;
  return running ? BaselineStep::wait : BaselineStep::check;
}

bool baseline_blocked(const Loop& plan) {
  return plan.type == LoopType::plan && plan.status == LoopStatus::blocked &&
         plan.end_reason == EndReason::baseline_failed;
}

std::string baseline_block_reason(const BaselineState& b, const std::string& plan_id,
                                  const std::string& base_branch) {
  std::string head = b.output;
  if (head.size() > 1200) head = "…" + head.substr(head.size() - 1200);
  while (!head.empty() && head.back() == '\n') head.pop_back();
  return "the tests fail before any change (baseline check of " + base_branch + " at " +
         b.sha.substr(0, 12) + "): " + b.summary + "\n" + head +
         "\n(no code loop ran. Make the tests pass on " + base_branch + " (or on branch " +
         integration_branch(plan_id) + "), or fix `setup:`/`sandbox:`/`loops.code.validation`" +
         " in .loopr/config.yml, then `loopr resume " + plan_id +
         "`; `baseline: warn` lets code loops run anyway. The whole output: " + b.log + ")";
}

std::string baseline_meta_key(const std::string& sha, const Config& config) {
  std::string all = config.loop(LoopType::code).validation + '\0' + config.sandbox.mode + '\0';
  for (const auto& c : config.setup.commands) all += c + '\0';
  all += config.setup.network ? "network\0" : "\0";
  for (const auto& p : config.sandbox.read_only) all += p + '\0';
  for (const auto& e : config.sandbox.env) all += e + '\0';
  for (const auto& [k, v] : config.sandbox.env_values) all += k + '=' + v + '\0';
  all += to_string(config.executor.kind);
  return "baseline/" + sha + "/" + stable_hash_hex(stable_hash(all));
}

// ---------------------------------------------------------------- after a crash

RecoveryPlan plan_recovery(std::span<const Loop> all, MergeMode mode) {
  RecoveryPlan plan;
  std::map<std::string, std::vector<Owed>> owed;  // loop id → its steps
  for (OwedStep& o : owed_steps(all, mode)) owed[o.loop_id].push_back(o.step);
  for (const Loop& l : all) {
    if (l.status != LoopStatus::complete && l.status != LoopStatus::invalidated)
      plan.may_have_folder.insert(l.id);
    auto it = owed.find(l.id);
    if (it == owed.end()) continue;
    const Owed first = it->second.front();
    if (first == Owed::run)
      plan.run.push_back(l.id);
    else if (first == Owed::archive_folder)
      plan.archive.push_back(l.id);
    else  // its completion, failure or dry run is finished from the record
      plan.finish.push_back(l.id);
    plan.interrupted.push_back(l);
  }
  return plan;
}

// ---------------------------------------------------------------- after a failure

FailureStep after_failure(const Loop& l, const std::string& baseline_failure) {
  if (!failure_pending(l)) return FailureStep::none;
  if (is_fix_loop_id(l.id)) return FailureStep::block_plan;
  // A fresh attempt cannot help a tree whose cost or runtime is used up: it rolls up at once;
  // nor a loop that fails exactly as the base did before any change (`baseline: warn`).
  const bool tree_spent = l.end_reason == EndReason::cost_limit || l.end_reason == EndReason::runtime_limit;
  const bool as_on_base = !baseline_failure.empty() && l.run.last_validation_hash == baseline_failure;
  if (l.type == LoopType::code && l.tree.attempt < 2 && !tree_spent && !as_on_base)
    return FailureStep::retry_fresh;
  return FailureStep::roll_up;
}

Result<void> make_retry(Loop& l, const std::string& kept, int max_iterations,
                        std::vector<Event>& events) {
  Loop fresh = l;
  FeedbackEntry fb{
      l.iteration, FeedbackSource::engine,
      "the first attempt failed: " + first_line(l.status_reason, 100),
      "A first attempt at this phase failed: " + l.status_reason +
          "\nThis is a fresh attempt from the integration branch" +
          (kept.empty() ? std::string(".")
                        : "; the first attempt's commits are on branch " + kept + ".")};
  add_feedback(fresh.run, fb);
  fresh.tree.attempt = 2;
  fresh.tree.based_on.clear();
  fresh.run.no_progress = 0;
  fresh.run.last_validation_hash.clear();
  fresh.run.same_failures = 0;
  fresh.run.last_failing.clear();
  fresh.run.consecutive_errors = 0;
  fresh.worktree.clear();
  fresh.branch.clear();
  fresh.max_iterations = l.iteration + max_iterations;
  std::vector<Event> more = {api::encode(l.id, api::RetryEvent{2, kept})};
  LOOPR_TRY(
      transition(fresh, LoopStatus::pending, EndReason::none,
                 "retrying as a fresh loop (attempt 2 of 2)", more));
  l = std::move(fresh);
  for (auto& e : more) events.push_back(std::move(e));
  return ok();
}

RollUp roll_up(Loop failed, std::span<const Loop> ancestors,
               const std::function<bool(const std::string&)>& has_run, std::vector<Event>& events) {
  RollUp out;
  out.reason = failed.id + " failed: " + first_line(failed.status_reason, 160);
  for (const Loop& a : ancestors) {
    if (a.status == LoopStatus::failed || a.status == LoopStatus::invalidated) continue;
    if (has_run(a.id)) {
      out.stop_runs.push_back(a.id);
      continue;
    }
    Loop up = a;
    if (transition(up, LoopStatus::failed, EndReason::child_failed, out.reason, events)) {
      up.tree.rolled_up = true;  // failed because of a descendant: nothing more is owed to it
      out.updates.push_back(std::move(up));
    }
  }
  failed.tree.rolled_up = true;
  out.updates.push_back(std::move(failed));
  return out;
}

// ---------------------------------------------------------------- invalidation

Result<Invalidation> invalidate_descendants(const std::string& parent_id,
                                            std::span<const Loop> tree, const std::string& feedback,
                                            LoopStatus next) {
  const Loop* found = find(tree, parent_id);
  if (!found) return make_error(ErrorCode::not_found, "no loop " + parent_id);
  Loop parent = *found;
  // Every index any generation of children used, so fresh children get new ids.
  int max_index = 0;
  for (const Loop& l : tree)
    if (l.parent_id == parent_id) max_index = std::max(max_index, l.index);

  Invalidation out;
  std::vector<Event>& events = out.events;
  const std::string why = "invalidated: " + parent_id + " iterates again";
  add_feedback(parent.run,
               FeedbackEntry{0, FeedbackSource::user, first_line(feedback, 100), feedback});
  parent.tree.children_base = std::max(parent.tree.children_base, max_index);
  parent.tree.spawned_iteration.reset();
  parent.tree.tree_complete = false;
  parent.tree.merge_error.clear();
  parent.tree.user_rejected = false;
  parent.tree.rolled_up = false;
  parent.tree.gate_sha.clear();
  parent.tree.gate_result = GateResult::none;
  parent.tree.gate_summary.clear();
  parent.tree.gate_output.clear();
  parent.tree.gate_fixes = 0;
  parent.run.attended_passed = 0;
  parent.run.review_rounds = 0;
  if (parent.type == LoopType::plan) parent.tree.runtime_from = now_ms();
  if (auto moved = transition(parent, next, EndReason::none, "iterating with the user's feedback",
                              events);
      !moved)
    return make_error(ErrorCode::illegal_transition,
                      "loop " + parent_id + " is " + to_string(found->status) + ": cannot iterate");
  events.push_back(api::encode(parent_id, api::ApprovalEvent{"iterate", feedback}));
  if (parent.type == LoopType::plan)
    out.approval = Approval{parent_id, "iterate", feedback, now_ms()};
  out.updates.push_back(std::move(parent));

  for (const Loop& l : tree) {
    if (!is_descendant(l.id, parent_id) || l.status == LoopStatus::invalidated) continue;
    Loop d = l;
    if (!d.worktree.empty()) out.to_archive.push_back(d.id);
    d.tree.invalidated_worktree = d.worktree;
    d.worktree.clear();
    if (transition(d, LoopStatus::invalidated, EndReason::invalidated, why, events))
      out.updates.push_back(std::move(d));
  }
  return out;
}

std::vector<Loop> restore_ancestors(const std::string& id, std::span<const Loop> tree,
                                    std::vector<Event>& events) {
  std::vector<Loop> out;
  const std::string why = "restored: " + id + " iterates again";
  for (auto parent = parent_of_id(id); parent && !parent->empty(); parent = parent_of_id(*parent)) {
    const Loop* a = find(tree, *parent);
    if (!a || a->status != LoopStatus::failed || !a->tree.rolled_up || a->tree.user_rejected)
      continue;
    if (a->tree.merged_iteration != a->iteration ||
        (a->type != LoopType::code && a->tree.spawned_iteration != a->iteration))
      break;  // it failed before its own steps were done: only the person can say
    // Held down by a failure outside `id`'s subtree (the ancestors between, restored nearest
    // first, are not such a failure).
    bool held_down = false;
    for (const Loop& l : tree)
      held_down = held_down || (l.status == LoopStatus::failed && is_descendant(l.id, a->id) &&
                                !in_subtree(l.id, id) && !is_descendant(id, l.id));
    if (held_down) break;  // and so is every ancestor above it
    Loop up = *a;
    up.tree.rolled_up = false;
    if (transition(up, LoopStatus::complete, EndReason::children_complete, why, events))
      out.push_back(std::move(up));
  }
  return out;
}

// ---------------------------------------------------------------- small helpers

bool in_subtree(const std::string& id, const std::string& root) {
  return id == root || is_descendant(id, root);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

}  // namespace loopr::manager
