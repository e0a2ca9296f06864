// The LoopManager: the tree of loops above the engine. See loop_manager.hpp for what it does;
// the comments here say how it stays idempotent (every step can be redone after a crash).
//
// Crash safety, step by step:
//  - A child's id is `child_id(parent, type, children_base + item index)`: redoing a spawn
//    creates only the ids that are missing. `children_base` moves on when children are
//    invalidated, so fresh children never reuse an old id.
//  - A completed loop is merged into the integration branch, then its children are created in
//    ONE store write that also records `spawned_iteration`; `merged_iteration` is stored after
//    the merge. Redoing a merge that already happened is `up_to_date`.
//  - Loops that were running when the daemon died are simply run again: the engine continues
//    from the last recorded iteration.
#include <loopr/manager/loop_manager.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include <spdlog/spdlog.h>

#include <loopr/core/ids.hpp>
#include <loopr/core/process.hpp>
#include <loopr/engine/feedback.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>
#include <loopr/markdown/artifacts.hpp>

#include "manager/async.hpp"

namespace loopr::manager {

bool is_descendant(const std::string& id, const std::string& ancestor) {
  if (id == ancestor) return false;
  std::string_view v = id;
  if (v.starts_with("code-")) {
    v.remove_prefix(5);
    if (v == ancestor) return true;  // the code loop of a phase
  }
  return v.size() > ancestor.size() && v.starts_with(ancestor) && v[ancestor.size()] == '-';
}

std::string tree_sort_key(const std::string& id) {
  if (id.starts_with("code-")) return id.substr(5) + "!";
  return id;
}

namespace {

using engine::make_event;

Result<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot read " + path.string());
  std::string text;
  text.resize(max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// A file as committed on `branch` (`git show branch:path`), for when a worktree is gone.
Result<std::string> read_committed_file(const std::filesystem::path& repo, const std::string& branch,
                                        const std::string& path, std::size_t max_bytes) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", repo.string(), "show", branch + ":" + path};
  spec.merge_stderr = false;
  spec.output_cap = max_bytes + 2;
  spec.timeout = std::chrono::seconds(30);
  auto r = run_process(spec);
  if (!r.succeeded())
    return make_error(ErrorCode::not_found, "cannot read " + path + " on branch " + branch + ": " +
                                                engine::first_line(r.error_output + r.output));
  return r.output;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

int ctx_int(const Loop& loop, const char* key, int fallback = 0) {
  auto it = loop.context.find(key);
  return it != loop.context.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

std::string ctx_str(const Loop& loop, const char* key) {
  auto it = loop.context.find(key);
  return it != loop.context.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Event status_event(const Loop& loop, LoopStatus from, LoopStatus to, const std::string& reason) {
  return make_event(loop.id, "status_changed", {{"from", to_string(from)}, {"to", to_string(to)}, {"reason", reason}});
}

// Moves `loop` to `to` and appends the event; false (nothing changed) if the table forbids it.
bool move_to(Loop& loop, LoopStatus to, const std::string& reason, std::vector<Event>& events) {
  LoopStatus from = loop.status;
  if (!loop.transition_to(to, reason)) return false;
  events.push_back(status_event(loop, from, to, reason));
  return true;
}

Error not_allowed(const Loop& loop, const std::string& what) {
  return Error{ErrorCode::illegal_transition,
               "loop " + loop.id + " is " + to_string(loop.status) + ": " + what};
}

}  // namespace

struct LoopManager::Impl : std::enable_shared_from_this<LoopManager::Impl> {
  struct Run {
    std::string id;
    std::shared_ptr<engine::LoopControl> control = std::make_shared<engine::LoopControl>();
    std::shared_ptr<Waiter> slot;
    bool finished = false;
    std::shared_ptr<net::steady_timer> done;
  };

  engine::EngineContext& ctx;
  AsyncSemaphore slots;
  AsyncMutex tree_lock;
  std::map<std::string, std::shared_ptr<Run>> runs;
  bool stopping = false;
  int bus_subscription = -1;
  /// Loops the user paused: children spawned under them meanwhile start paused too.
  std::set<std::string> paused_roots;
  /// on_complete calls under way (waiting for the tree lock or holding it), per plan.
  std::map<std::string, int> completions;

  bool under_paused_root(const std::string& id) const {
    for (const auto& root : paused_roots)
      if (id == root || is_descendant(id, root)) return true;
    return false;
  }

  mutable std::mutex cost_mu;
  std::map<std::string, double> tree_costs;

  explicit Impl(engine::EngineContext& c)
      : ctx(c),
        slots(c.io.get_executor(), std::max(1, c.config->concurrency.max_loops)),
        tree_lock(c.io.get_executor()) {}

  // ------------------------------------------------------------------ store helpers

  awaitable<Result<Loop>> load(std::string id) {
    auto get = [this, &id] { return ctx.store.get_loop(id); };
    co_return co_await run_blocking(ctx.pool, get);
  }

  awaitable<Result<std::vector<Loop>>> plan_loops(std::string plan) {
    auto get = [this, &plan] { return ctx.store.loops_of_plan(plan); };
    co_return co_await run_blocking(ctx.pool, get);
  }

  awaitable<Result<WriteResult>> write(WriteSet set) {
    auto apply = [this, &set] { return ctx.store.apply(std::move(set)); };
    auto stored = co_await run_blocking(ctx.pool, apply);
    if (stored) ctx.bus.publish(stored->events);
    co_return stored;
  }

  // Loads `id`, lets `change` edit it (and add events), stores it; retries when a run wrote the
  // loop in between (compare-and-set). `change` returns an Error to give up without writing.
  template <typename Change>
  awaitable<Result<Loop>> update(std::string id, Change change) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      auto loaded = co_await load(id);
      if (!loaded) co_return loaded.take_error();
      Loop loop = std::move(*loaded);
      std::vector<Event> events;
      std::optional<Error> refused = change(loop, events);
      if (refused) co_return *refused;
      WriteSet set;
      set.updates.push_back(loop);
      set.events = std::move(events);
      auto stored = co_await write(std::move(set));
      if (stored) co_return stored->loops.front();
      if (stored.error().code != ErrorCode::conflict) co_return stored.take_error();
    }
    co_return make_error(ErrorCode::conflict, "loop " + id + " kept changing; try again");
  }

  // ------------------------------------------------------------------ git helpers (pool)

  Result<git::Repository> repo() const { return git::Repository::open(ctx.paths.root); }

  // A folder in `.loopr/worktrees/` that git does not know as a worktree (a crash between
  // creating and registering it, or between unregistering and deleting it) is moved to
  // `.loopr/archive/` so nothing in it is lost and the loop's worktree can be made again.
  void set_aside_stray_folder(const git::Repository& r, const std::string& id) const {
    auto folder = ctx.paths.worktree(id);
    std::error_code ec;
    if (!std::filesystem::exists(folder, ec) || r.worktree(id)) return;
    std::filesystem::create_directories(ctx.paths.archive_dir(), ec);
    auto target = ctx.paths.archive_dir() / (id + "-stray-" + std::to_string(now_ms()));
    std::filesystem::rename(folder, target, ec);
    if (ec) spdlog::warn("loop {}: cannot move the stray folder {} aside: {}", id, folder.string(), ec.message());
    else spdlog::warn("loop {}: moved a folder git did not know as a worktree to {}", id, target.string());
  }

  // The loop's worktree, made (with its branch from the integration tip) when it has none.
  // Runs on the pool: `config` is the snapshot the io thread took (a reload swaps ctx.config).
  Result<Loop> prepare_worktree(Loop loop, std::shared_ptr<const Config> config) {
    if (!loop.worktree.empty() && std::filesystem::exists(loop.worktree)) return loop;
    LOOPR_ASSIGN(git::Repository r, repo());
    std::string integration = git::integration_branch(loop.plan_id);
    LOOPR_ASSIGN(bool has_integration, r.has_branch(integration));
    if (!has_integration) {
      // Two loops of the plan preparing at once may both find it missing: the second one's
      // already_exists is the branch the first one made, which is what it wanted.
      auto made = r.create_branch(integration, config->base_branch);
      if (!made && made.error().code != ErrorCode::already_exists) return made.take_error();
    }
    std::string branch = loop.branch.empty() ? git::loop_branch(loop.plan_id, loop.id) : loop.branch;
    LOOPR_ASSIGN(bool has, r.has_branch(branch));
    // The integration tip the branch starts from, as create_branch made it. Not read again
    // later: a merge landing meanwhile would make it name a tip the branch does not have, and
    // the rebase at the loop's next iteration boundary would be skipped.
    std::string based_on;
    if (!has) {
      LOOPR_ASSIGN(based_on, r.create_branch(branch, integration));
    }
    set_aside_stray_folder(r, loop.id);
    // A registered worktree the record does not name was being made when a daemon died: its
    // checkout may be half done, and nothing of the loop's work is in it yet. Make it again.
    if (loop.worktree.empty() && r.worktree(loop.id)) {
      auto removed = r.remove_worktree(loop.id, git::RemoveMode::force);
      if (!removed) return removed.take_error();
      spdlog::warn("loop {}: remade the worktree an interrupted start left behind", loop.id);
    }
    auto existing = r.worktree(loop.id);
    Result<git::Worktree> wt = existing ? std::move(existing) : r.add_worktree(loop.id, branch);
    if (!wt) {
      // A registration a killed daemon left half made (`.git/worktrees/<id>` without what git
      // needs to open it) blocks the name: drop it and try once more.
      std::error_code ec;
      auto admin = r.git_dir() / "worktrees" / loop.id;
      if (std::filesystem::exists(admin, ec) && !r.worktree(loop.id)) {
        spdlog::warn("loop {}: removing the half-made worktree registration {}", loop.id, admin.string());
        std::filesystem::remove_all(admin, ec);
        set_aside_stray_folder(r, loop.id);
        wt = r.add_worktree(loop.id, branch);
      }
    }
    if (!wt) return wt.take_error();
    loop.worktree = wt->path().string();
    loop.branch = branch;
    if (!has && loop.type != LoopType::plan) loop.context["based_on"] = based_on;
    return loop;
  }

  // ------------------------------------------------------------------ runs

  void spawn_run(const std::string& id) {
    if (stopping || runs.count(id)) return;
    auto run = std::make_shared<Run>();
    run->id = id;
    run->slot = slots.make_waiter();
    run->done = std::make_shared<net::steady_timer>(ctx.io, net::steady_timer::time_point::max());
    runs[id] = run;
    net::co_spawn(ctx.io, run_loop(shared_from_this(), run), net::detached);
  }

  static awaitable<void> run_loop(std::shared_ptr<Impl> self, std::shared_ptr<Run> run) {
    try {
      co_await self->run_loop_body(run);
    } catch (const std::exception& e) {
      spdlog::error("loop {}: its run ended with an exception: {}", run->id, e.what());
    }
    run->finished = true;
    run->done->cancel();
    if (auto it = self->runs.find(run->id); it != self->runs.end() && it->second == run) self->runs.erase(it);
    try {
      if (!self->stopping) co_await self->after_run(run->id);
    } catch (const std::exception& e) {
      spdlog::error("loop {}: after its run: {}", run->id, e.what());
    }
  }

  awaitable<void> run_loop_body(std::shared_ptr<Run> run) {
    bool granted = co_await slots.acquire(run->slot);
    if (!granted) co_return;
    struct Release {
      AsyncSemaphore& s;
      ~Release() { s.release(); }
    } release{slots};
    if (run->control->stop_requested() || run->control->pause_requested()) co_return;

    auto loaded = co_await load(run->id);
    if (!loaded) co_return;
    Loop loop = std::move(*loaded);
    if (is_terminal(loop.status) || loop.status == LoopStatus::awaiting_approval ||
        loop.status == LoopStatus::paused || loop.status == LoopStatus::blocked)
      co_return;

    if (loop.worktree.empty() || !std::filesystem::exists(loop.worktree)) {
      auto make = [this, loop, config = ctx.config] { return prepare_worktree(loop, config); };
      auto prepared = co_await run_blocking(ctx.pool, make);
      if (!prepared) {
        std::string why = "its worktree could not be made: " + prepared.error().message;
        spdlog::error("loop {}: {}", loop.id, why);
        co_await engine::store_status(ctx, loop, LoopStatus::failed, why);
        co_return;
      }
      auto stored = co_await update(loop.id, [&](Loop& l, std::vector<Event>&) -> std::optional<Error> {
        l.worktree = prepared->worktree;
        l.branch = prepared->branch;
        if (prepared->context.contains("based_on")) l.context["based_on"] = prepared->context["based_on"];
        return std::nullopt;
      });
      if (!stored) co_return;
    }

    engine::LoopRunner runner(ctx);
    engine::LoopHooks hooks;
    hooks.before_iteration = [self = shared_from_this(), run](Loop& l) { return self->before_iteration(run, l); };
    co_await runner.run(run->id, run->control, hooks);
  }

  // At each iteration boundary: if the plan's integration branch moved since this loop last
  // based its work on it, rebase onto it (status `rebasing`); a conflict blocks the loop with
  // its work intact. Plans never rebase: their branch IS the start of the integration branch.
  awaitable<bool> before_iteration(std::shared_ptr<Run> run, Loop& loop) {
    if (loop.type == LoopType::plan) co_return true;
    run->control->take_integration_updated();
    std::string integration = git::integration_branch(loop.plan_id);
    auto tip_of = [this, integration]() -> Result<std::string> {
      LOOPR_ASSIGN(git::Repository r, repo());
      return r.branch_sha(integration);
    };
    auto tip = co_await run_blocking(ctx.pool, tip_of);
    if (!tip || ctx_str(loop, "based_on") == *tip) co_return true;

    auto rebasing = co_await engine::store_status(ctx, loop, LoopStatus::rebasing, "the integration branch moved: rebasing onto " + integration);
    if (!rebasing) co_return false;
    loop = std::move(*rebasing);
    std::string id = loop.id;
    std::string worktree = loop.worktree;
    auto rebase = [worktree, integration, id]() -> Result<git::RebaseOutcome> {
      LOOPR_ASSIGN(git::Worktree wt, git::Worktree::open(worktree));
      auto out = wt.rebase_onto(integration);
      if (out && out->kind == git::RebaseOutcome::Kind::local_changes) {
        // Edits an interrupted iteration left behind: commit them, then rebase.
        LOOPR_TRY(wt.checkpoint("loopr(" + id + "): work in progress before a rebase"));
        out = wt.rebase_onto(integration);
      }
      return out;
    };
    auto outcome = co_await run_blocking(ctx.pool, rebase);
    if (!outcome) {
      std::string why = "rebase onto " + integration + " failed: " + outcome.error().message;
      co_await engine::store_status(ctx, loop, LoopStatus::blocked, why);
      co_return false;
    }
    using K = git::RebaseOutcome::Kind;
    if (outcome->kind == K::conflict || outcome->kind == K::local_changes) {
      loop.context["conflicts"] = outcome->conflicts;
      std::string why = "rebasing onto " + integration + " conflicts in " + join(outcome->conflicts, ", ") +
                        " (resolve it in " + loop.worktree + ", commit, then `loopr resume " + loop.id + "`)";
      std::vector<Event> events = {make_event(loop.id, "rebase_conflict",
                                              {{"onto", integration}, {"paths", outcome->conflicts}})};
      co_await engine::store_status(ctx, loop, LoopStatus::blocked, why, std::move(events));
      co_return false;
    }
    loop.context["based_on"] = *tip;
    loop.context.erase("conflicts");
    std::vector<Event> events = {make_event(loop.id, "rebased", {{"onto", integration},
                                                                 {"sha", outcome->sha},
                                                                 {"kind", git::to_string(outcome->kind)}})};
    auto running = co_await engine::store_status(ctx, loop, LoopStatus::running, "", std::move(events));
    if (!running) co_return false;
    loop = std::move(*running);
    co_return true;
  }

  awaitable<void> wait_for_runs(std::vector<std::shared_ptr<Run>> waiting, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (auto& run : waiting) {
      while (!run->finished && std::chrono::steady_clock::now() < deadline) {
        run->done->expires_at(deadline);
        boost::system::error_code ec;
        co_await run->done->async_wait(net::redirect_error(net::use_awaitable, ec));
      }
    }
  }

  // ------------------------------------------------------------------ after a run

  awaitable<void> after_run(std::string id) {
    auto loaded = co_await load(id);
    if (!loaded) co_return;
    if (loaded->status == LoopStatus::complete) co_await on_complete(id);
    else if (loaded->status == LoopStatus::failed) co_await on_failed(id);
  }

  // Merge into the integration branch, spawn the children, tell the plan's other loops, and
  // merge the tree into the base branch when it is all complete. Each step checks the store
  // first, so calling it again (after a crash, twice) does nothing twice.
  awaitable<void> on_complete(std::string id) {
    // Counted before the lock: completions queued behind this one make check_tree_complete wait
    // for the last of them.
    struct Completing {
      std::map<std::string, int>& count;
      std::string plan;
      ~Completing() {
        if (--count[plan] == 0) count.erase(plan);
      }
    } completing{completions, root_plan_id(id)};
    ++completions[completing.plan];
    auto guard = co_await tree_lock.lock();
    auto loaded = co_await load(id);
    if (!loaded || loaded->status != LoopStatus::complete) co_return;
    Loop loop = std::move(*loaded);
    const std::string integration = git::integration_branch(loop.plan_id);

    if (ctx_int(loop, "merged_iteration", -1) != loop.iteration) {
      bool merged = co_await merge_into_integration(loop, integration);
      if (!merged) co_return;
    }
    if (loop.type != LoopType::code && ctx_int(loop, "spawned_iteration", -1) != loop.iteration) {
      bool spawned = co_await spawn_children(loop);
      if (!spawned) co_return;
    }
    // Its work is in the integration branch now: the folder goes, the branch stays.
    if (!loop.worktree.empty()) {
      std::string wid = loop.id;
      auto remove = [this, wid]() -> Result<void> {
        LOOPR_ASSIGN(git::Repository r, repo());
        auto removed = r.remove_worktree(wid, git::RemoveMode::refuse_if_dirty);
        if (!removed && removed.error().code == ErrorCode::not_found) set_aside_stray_folder(r, wid);
        return removed;
      };
      auto removed = co_await run_blocking(ctx.pool, remove);
      if (removed || removed.error().code == ErrorCode::not_found) {
        co_await update(loop.id, [](Loop& l, std::vector<Event>&) -> std::optional<Error> {
          l.worktree.clear();
          return std::nullopt;
        });
      } else {
        spdlog::warn("loop {}: its worktree stays: {}", loop.id, removed.error().message);
      }
    }
    co_await check_tree_complete(loop.plan_id);
  }

  awaitable<bool> merge_into_integration(Loop& loop, std::string integration) {
    const std::string base = ctx.config->base_branch;
    // A plan merges a new generation of children into a fresh integration branch, so nothing of
    // an invalidated generation reaches the result.
    const int generation = ctx_int(loop, "children_base", 0);
    const bool reset = loop.type == LoopType::plan && ctx_int(loop, "integration_generation", -1) != generation;
    std::string branch = loop.branch.empty() ? git::loop_branch(loop.plan_id, loop.id) : loop.branch;
    std::string worktree = loop.worktree;
    std::string message = "loopr(" + loop.id + "): merge " + to_string(loop.type) + " " + loop.id + " (iteration " +
                          std::to_string(loop.iteration) + ") into " + integration;
    struct Out {
      git::MergeOutcome merge;
      std::vector<std::string> conflicts;
    };
    auto work = [this, reset, base, integration, branch, worktree, message]() -> Result<Out> {
      LOOPR_ASSIGN(git::Repository r, repo());
      if (reset) {
        LOOPR_ASSIGN(bool has, r.has_branch(integration));
        if (has) LOOPR_TRY(r.delete_branch(integration));
        LOOPR_TRY(r.create_branch(integration, base));
      } else if (!*r.has_branch(integration)) {
        LOOPR_TRY(r.create_branch(integration, base));
      }
      LOOPR_ASSIGN(git::MergeOutcome m, r.merge(branch, integration, message));
      if (m.kind == git::MergeOutcome::Kind::conflict && !worktree.empty()) {
        // The integration branch moved under a loop that finished before its next boundary:
        // bring its work onto the new tip, then merge (now a fast-forward).
        LOOPR_ASSIGN(git::Worktree wt, git::Worktree::open(worktree));
        LOOPR_ASSIGN(git::RebaseOutcome rb, wt.rebase_onto(integration));
        if (rb.kind == git::RebaseOutcome::Kind::conflict || rb.kind == git::RebaseOutcome::Kind::local_changes)
          return Out{m, rb.conflicts};
        LOOPR_ASSIGN(m, r.merge(branch, integration, message));
      }
      return Out{m, m.conflicts};
    };
    auto out = co_await run_blocking(ctx.pool, work);
    if (!out) {
      spdlog::error("loop {}: merging into {} failed: {}", loop.id, integration, out.error().message);
      std::vector<Event> events = {make_event(loop.id, "merge_failed", {{"into", integration}, {"message", out.error().message}})};
      co_await write_events(std::move(events));
      co_return false;
    }
    using K = git::MergeOutcome::Kind;
    if (out->merge.kind == K::conflict || out->merge.kind == K::local_changes) {
      std::string why = "its merge into " + integration + " conflicts in " + join(out->conflicts, ", ") +
                        " (resolve it in its worktree, commit, then `loopr resume " + loop.id + "`)";
      co_await update(loop.id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
        l.context["conflicts"] = out->conflicts;
        events.push_back(make_event(l.id, "rebase_conflict", {{"onto", integration}, {"paths", out->conflicts}}));
        if (!move_to(l, LoopStatus::blocked, why, events)) return not_allowed(l, "cannot block");
        return std::nullopt;
      });
      co_return false;
    }
    std::string sha = out->merge.sha;
    auto stored = co_await update(loop.id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
      l.context["merged_iteration"] = l.iteration;
      l.context["merged_sha"] = sha;
      l.context["based_on"] = sha;
      if (reset) l.context["integration_generation"] = generation;
      events.push_back(make_event(l.id, "merged", {{"into", integration}, {"sha", sha},
                                                   {"kind", git::to_string(out->merge.kind)}}));
      return std::nullopt;
    });
    if (!stored) co_return false;
    loop = std::move(*stored);
    // Every other loop of the plan rebases at its next boundary.
    for (auto& [rid, run] : runs)
      if (root_plan_id(rid) == loop.plan_id && rid != loop.id) run->control->notify_integration_updated();
    co_return true;
  }

  awaitable<void> write_events(std::vector<Event> events) {
    WriteSet set;
    set.events = std::move(events);
    co_await write(std::move(set));
  }

  // The artifact of a completed plan/spec/phase, read from its worktree or (if that is gone)
  // from its branch.
  Result<std::string> read_artifact(const Loop& loop, const Config& config) const {
    if (loop.output_artifacts.empty()) return make_error(ErrorCode::invalid_argument, "loop " + loop.id + " has no artifact");
    const std::string& rel = loop.output_artifacts.front();
    std::size_t max = config.artifacts.max_bytes;
    if (!loop.worktree.empty()) {
      auto text = read_text_file(std::filesystem::path(loop.worktree) / rel, max);
      if (text) return text;
    }
    std::string branch = loop.branch.empty() ? git::loop_branch(loop.plan_id, loop.id) : loop.branch;
    return read_committed_file(ctx.paths.root, branch, rel, max);
  }

  // The children a completed loop's artifact asks for (not yet stored).
  Result<std::vector<Loop>> children_of(const Loop& parent, const Config& config) const {
    LOOPR_ASSIGN(std::string text, read_artifact(parent, config));
    const std::string& file = parent.output_artifacts.front();
    const int base = ctx_int(parent, "children_base", 0);
    std::vector<Loop> out;
    auto child = [&](LoopType type, int index, std::string task, std::string title) {
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

  awaitable<bool> spawn_children(Loop& parent) {
    auto read = [this, parent, config = ctx.config] { return children_of(parent, *config); };
    auto wanted = co_await run_blocking(ctx.pool, read);
    if (!wanted) {
      // The artifact passed validation when the loop completed, so this is the file system or
      // git failing; the loop fails with the reason rather than sit complete without children.
      std::string why = "its children could not be spawned: " + wanted.error().message;
      spdlog::error("loop {}: {}", parent.id, why);
      co_await update(parent.id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
        if (!move_to(l, LoopStatus::failed, why, events)) return not_allowed(l, "cannot fail");
        return std::nullopt;
      });
      co_return false;
    }
    std::set<std::string> existing;
    for (const auto& c : *wanted) {
      auto have = co_await load(c.id);
      if (have) existing.insert(c.id);
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
      auto fresh = co_await load(parent.id);
      if (!fresh) co_return false;
      WriteSet set;
      for (const auto& c : *wanted) {
        if (existing.count(c.id)) continue;
        set.creates.push_back(c);
        set.events.push_back(make_event(c.id, "loop_created", {{"type", to_string(c.type)},
                                                               {"parent_id", c.parent_id},
                                                               {"task", engine::first_line(c.task, 200)}}));
      }
      Loop p = std::move(*fresh);
      p.context["spawned_iteration"] = p.iteration;
      set.updates.push_back(p);
      auto stored = co_await write(std::move(set));
      if (stored) {
        parent = stored->loops.back();
        break;
      }
      if (stored.error().code != ErrorCode::conflict) {
        spdlog::error("loop {}: storing its children failed: {}", parent.id, stored.error().message);
        co_return false;
      }
    }
    for (const auto& c : *wanted) {
      auto have = co_await load(c.id);
      if (!have || (have->status != LoopStatus::pending && have->status != LoopStatus::running)) continue;
      if (under_paused_root(c.id)) {
        co_await update(c.id, [](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
          if (!move_to(l, LoopStatus::paused, "paused by the user (its ancestor is paused)", events))
            return not_allowed(l, "cannot pause");
          return std::nullopt;
        });
        continue;
      }
      spawn_run(c.id);
    }
    co_return true;
  }

  // Every loop of the tree complete (and every parent's children spawned): merge into the base
  // branch (`merge: auto`) or wait for `loopr merge` (`merge: manual`).
  awaitable<void> check_tree_complete(std::string plan) {
    // A loop of this tree still has a run: the tree is not complete, and that run's own
    // after_run checks again when it ends. Skipping the store read here keeps a tree of 1,000
    // code loops from decoding the whole tree at each of its 1,000 completions (quadratic).
    for (const auto& [rid, run] : runs)
      if (root_plan_id(rid) == plan) co_return;
    // Another completion of this tree waits for the tree lock: it checks after its own merge.
    if (auto it = completions.find(plan); it != completions.end() && it->second > 1) co_return;
    auto loops = co_await plan_loops(plan);
    if (!loops) co_return;
    const Loop* root = nullptr;
    for (const auto& l : *loops) {
      if (l.status == LoopStatus::invalidated) continue;
      if (l.status != LoopStatus::complete) co_return;
      if (ctx_int(l, "merged_iteration", -1) != l.iteration) co_return;
      if (l.type != LoopType::code && ctx_int(l, "spawned_iteration", -1) != l.iteration) co_return;
      if (l.id == plan) root = &l;
    }
    if (!root || root->context.value("tree_complete", false)) {
      if (root && ctx.config->merge == "auto" && ctx_str(*root, "merged_into_base").empty() &&
          ctx_str(*root, "merge_error").empty())
        co_await merge_into_base(plan);
      co_return;
    }
    auto stored = co_await update(plan, [](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
      l.context["tree_complete"] = true;
      events.push_back(make_event(l.id, "tree_complete", {}));
      return std::nullopt;
    });
    if (stored && ctx.config->merge == "auto") co_await merge_into_base(plan);
  }

  awaitable<Result<MergeInfo>> merge_into_base(std::string plan) {
    auto loaded = co_await load(plan);
    if (!loaded) co_return loaded.take_error();
    const std::string base = ctx.config->base_branch;
    const std::string integration = git::integration_branch(plan);
    std::string message = "loopr(" + plan + "): merge plan " + plan + ": " + engine::first_line(loaded->task, 60);
    auto work = [this, base, integration, message]() -> Result<git::MergeOutcome> {
      LOOPR_ASSIGN(git::Repository r, repo());
      return r.merge(integration, base, message);
    };
    auto out = co_await run_blocking(ctx.pool, work);
    using K = git::MergeOutcome::Kind;
    std::string problem;
    if (!out) problem = out.error().message;
    else if (out->kind == K::conflict) problem = "it conflicts with " + base + " in " + join(out->conflicts, ", ");
    else if (out->kind == K::local_changes)
      problem = "uncommitted changes in your work tree would be overwritten: " + join(out->conflicts, ", ");
    if (!problem.empty()) {
      std::string msg = "plan " + plan + " cannot be merged into " + base + ": " + problem;
      co_await update(plan, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
        l.context["merge_error"] = problem;
        events.push_back(make_event(l.id, "merge_failed", {{"into", base}, {"message", problem}}));
        return std::nullopt;
      });
      co_return make_error(ErrorCode::conflict, msg + " (resolve it, then `loopr merge " + plan + "`)");
    }
    std::string sha = out->sha;
    co_await update(plan, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
      l.context["merged_into_base"] = sha;
      l.context.erase("merge_error");
      events.push_back(make_event(l.id, "merged", {{"into", base}, {"sha", sha}, {"kind", git::to_string(out->kind)}}));
      return std::nullopt;
    });
    co_return MergeInfo{plan, base, sha};
  }

  // A failed code loop gets one fresh attempt (a new worktree from the integration tip, a new
  // iteration budget, its feedback carried). After that, or for any other loop type, the
  // failure rolls up: its ancestors fail; siblings finish or are stopped (`on_failure`).
  awaitable<void> on_failed(std::string id) {
    auto guard = co_await tree_lock.lock();
    auto loaded = co_await load(id);
    if (!loaded || loaded->status != LoopStatus::failed) co_return;
    Loop loop = std::move(*loaded);
    if (loop.context.value("user_rejected", false)) co_return;
    const Config& config = *ctx.config;

    if (loop.type == LoopType::code && ctx_int(loop, "attempt", 1) < 2 && !loop.context.value("rolled_up", false)) {
      std::string wid = loop.id;
      bool had_worktree = !loop.worktree.empty();
      std::string archive_msg = "loopr(" + loop.id + "): attempt 1 failed: " + engine::first_line(loop.status_reason, 60);
      auto archive = [this, wid, had_worktree, archive_msg]() -> Result<std::string> {
        LOOPR_ASSIGN(git::Repository r, repo());
        if (had_worktree) {
          auto a = r.archive_worktree(wid, archive_msg);
          if (a) return a->branch;
          if (a.error().code != ErrorCode::not_found) return a.take_error();
        }
        return std::string();
      };
      auto archived = co_await run_blocking(ctx.pool, archive);
      if (!archived) {
        spdlog::error("loop {}: cannot archive its worktree for a retry: {}", id, archived.error().message);
      } else {
        std::string kept = *archived;
        int max = config.loop(LoopType::code).max_iterations;
        auto stored = co_await update(id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
          engine::FeedbackEntry fb{l.iteration, "engine", "the first attempt failed: " + engine::first_line(l.status_reason, 100),
                                   "A first attempt at this phase failed: " + l.status_reason +
                                       "\nThis is a fresh attempt from the integration branch" +
                                       (kept.empty() ? std::string(".") : "; the first attempt's commits are on branch " + kept + ".")};
          engine::add_feedback(l.context, fb);
          l.context["attempt"] = 2;
          l.context.erase("based_on");
          l.context.erase("no_progress");
          l.context.erase("last_validation_hash");
          l.context["consecutive_errors"] = 0;
          l.worktree.clear();
          l.branch.clear();
          l.max_iterations = l.iteration + max;
          events.push_back(make_event(l.id, "retry", {{"attempt", 2}, {"archived_branch", kept}}));
          if (!move_to(l, LoopStatus::pending, "retrying as a fresh loop (attempt 2 of 2)", events))
            return not_allowed(l, "cannot retry");
          return std::nullopt;
        });
        if (stored) {
          spawn_run(id);
          co_return;
        }
      }
    }

    // Roll up: every ancestor fails with the reason.
    std::string reason = loop.id + " failed: " + engine::first_line(loop.status_reason, 160);
    WriteSet set;
    for (auto parent = parent_of_id(loop.id); parent && !parent->empty(); parent = parent_of_id(*parent)) {
      auto p = co_await load(*parent);
      if (!p || p->status == LoopStatus::failed || p->status == LoopStatus::invalidated) continue;
      Loop pl = std::move(*p);
      auto run = runs.find(pl.id);
      if (run != runs.end()) {
        run->second->control->request_stop(reason);
        continue;
      }
      if (move_to(pl, LoopStatus::failed, reason, set.events)) set.updates.push_back(pl);
    }
    loop.context["rolled_up"] = true;
    set.updates.push_back(loop);
    auto stored = co_await write(std::move(set));
    if (!stored) spdlog::error("loop {}: rolling up its failure: {}", id, stored.error().message);

    if (config.on_failure == "stop_siblings") {
      std::string why = "stopped: " + reason + " (on_failure: stop_siblings)";
      co_await stop_tree(loop.plan_id, loop.plan_id, why, false);
    }
  }

  // ------------------------------------------------------------------ user actions

  // Stops `root` and its descendants (or, with `include_root` false, only the descendants of
  // the plan). Running loops are interrupted; waiting ones are stored `stopped` at once.
  awaitable<std::size_t> stop_tree(std::string plan, std::string root, std::string why, bool include_root) {
    auto loops = co_await plan_loops(plan);
    if (!loops) co_return 0;
    std::size_t acted = 0;
    WriteSet set;
    for (auto& l : *loops) {
      if (!(is_descendant(l.id, root) || (include_root && l.id == root))) continue;
      if (is_terminal(l.status)) continue;
      auto run = runs.find(l.id);
      if (run != runs.end() && run->second->slot->granted) {
        run->second->control->request_stop(why);
        ++acted;
        continue;
      }
      if (run != runs.end()) {
        run->second->control->request_stop(why);
        slots.cancel(run->second->slot);
      }
      if (move_to(l, LoopStatus::stopped, why, set.events)) {
        set.updates.push_back(l);
        ++acted;
      }
    }
    if (!set.updates.empty()) co_await write(std::move(set));
    co_return acted;
  }

  awaitable<ActionResult> submit(std::string request) {
    while (!request.empty() && std::isspace(static_cast<unsigned char>(request.back()))) request.pop_back();
    if (request.empty()) co_return make_error(ErrorCode::invalid_argument, "the request is empty (say what to build)");
    if (stopping) co_return make_error(ErrorCode::unsupported, "the daemon is shutting down (start it again)");
    auto guard = co_await tree_lock.lock();
    std::shared_ptr<const Config> config_ptr = ctx.config;
    auto make = [this, request, config_ptr]() -> Result<Loop> {
      const Config& config = *config_ptr;
      LOOPR_ASSIGN(git::Repository r, repo());
      LOOPR_ASSIGN(bool has_base, r.has_branch(config.base_branch));
      if (!has_base)
        return make_error(ErrorCode::invalid_argument,
                          "the base branch " + config.base_branch + " does not exist (set base_branch in .loopr/config.yml)");
      // A plan number whose branches exist already (a store deleted by hand) is skipped.
      std::string id;
      for (int tries = 0; tries < 1000; ++tries) {
        LOOPR_ASSIGN(int n, ctx.store.next_plan_number());
        id = plan_id(n);
        LOOPR_ASSIGN(bool taken, r.has_branch(git::integration_branch(id)));
        if (!taken && !ctx.store.get_loop(id)) break;
        id.clear();
      }
      if (id.empty()) return make_error(ErrorCode::internal, "no free plan number");
      Loop l;
      l.id = id;
      l.type = LoopType::plan;
      l.plan_id = id;
      l.task = request;
      l.output_artifacts = {artifact_path(LoopType::plan, id, request)};
      l.prompt_template = "plan";
      l.max_iterations = config.loop(LoopType::plan).max_iterations;
      l.status = LoopStatus::pending;
      l.context["base_branch"] = config.base_branch;
      LOOPR_TRY(r.create_branch(git::integration_branch(id), config.base_branch));
      return prepare_worktree(l, config_ptr);
    };
    auto made = co_await run_blocking(ctx.pool, make);
    if (!made) co_return made.take_error();
    WriteSet set;
    set.creates.push_back(*made);
    set.events.push_back(make_event(made->id, "loop_created", {{"type", "plan"}, {"task", engine::first_line(request, 200)}}));
    auto stored = co_await write(std::move(set));
    if (!stored) co_return stored.take_error();
    spawn_run(made->id);
    co_return stored->loops.front();
  }

  awaitable<ActionResult> decide(std::string id, std::string decision, std::string text) {
    auto loaded = co_await load(id);
    if (!loaded) co_return loaded.take_error();
    if (loaded->type != LoopType::plan)
      co_return make_error(ErrorCode::illegal_transition, "loop " + id + " is a " + to_string(loaded->type) +
                                                              " loop: only plans wait for approval");
    if (loaded->status != LoopStatus::awaiting_approval)
      co_return not_allowed(*loaded, "only a plan awaiting approval can be " + decision + "d");
    bool approve = decision == "approve";
    std::string reason = approve ? "approved by the user" : "rejected by the user" + (text.empty() ? "" : ": " + text);
    for (int attempt = 0; attempt < 8; ++attempt) {
      auto fresh = co_await load(id);
      if (!fresh) co_return fresh.take_error();
      Loop l = std::move(*fresh);
      WriteSet set;
      if (!move_to(l, approve ? LoopStatus::complete : LoopStatus::failed, reason, set.events))
        co_return not_allowed(l, "only a plan awaiting approval can be " + decision + "d");
      if (!approve) l.context["user_rejected"] = true;
      set.events.push_back(make_event(id, "approval", {{"decision", decision}, {"text", text}}));
      set.approvals.push_back(Approval{id, decision, text, now_ms()});
      set.updates.push_back(l);
      auto stored = co_await write(std::move(set));
      if (stored) {
        if (approve) net::co_spawn(ctx.io, after_run(id), net::detached);
        co_return stored->loops.front();
      }
      if (stored.error().code != ErrorCode::conflict) co_return stored.take_error();
    }
    co_return make_error(ErrorCode::conflict, "loop " + id + " kept changing; try again");
  }

  // Invalidates every descendant of `parent`: runs stopped and waited for, records
  // `invalidated` (with `parent`'s new state in the same write), then worktrees archived.
  awaitable<ActionResult> invalidate_and_iterate(Loop parent, std::string feedback, LoopStatus next) {
    auto loops = co_await plan_loops(parent.plan_id);
    if (!loops) co_return loops.take_error();
    std::string why = "invalidated: " + parent.id + " iterates again";
    std::vector<std::shared_ptr<Run>> stopping_runs;
    int max_index = 0;
    for (const auto& l : *loops) {
      if (!is_descendant(l.id, parent.id)) continue;
      if (l.parent_id == parent.id) max_index = std::max(max_index, l.index);
      auto run = runs.find(l.id);
      if (run != runs.end()) {
        run->second->control->request_stop(why);
        slots.cancel(run->second->slot);
        stopping_runs.push_back(run->second);
      }
    }
    co_await wait_for_runs(stopping_runs, std::chrono::seconds(30));

    std::vector<std::string> to_archive;
    for (int attempt = 0; attempt < 8; ++attempt) {
      auto fresh_loops = co_await plan_loops(parent.plan_id);
      if (!fresh_loops) co_return fresh_loops.take_error();
      WriteSet set;
      to_archive.clear();
      for (auto l : *fresh_loops) {
        if (l.id == parent.id) {
          engine::add_feedback(l.context, engine::FeedbackEntry{0, "user", engine::first_line(feedback, 100), feedback});
          l.context["children_base"] = std::max(ctx_int(l, "children_base", 0), max_index);
          l.context.erase("spawned_iteration");
          l.context.erase("tree_complete");
          l.context.erase("merge_error");
          l.context.erase("user_rejected");
          l.context.erase("rolled_up");
          if (!move_to(l, next, "iterating with the user's feedback", set.events)) co_return not_allowed(l, "cannot iterate");
          set.events.push_back(make_event(l.id, "approval", {{"decision", "iterate"}, {"text", feedback}}));
          if (l.type == LoopType::plan) set.approvals.push_back(Approval{l.id, "iterate", feedback, now_ms()});
          set.updates.push_back(l);
          continue;
        }
        if (!is_descendant(l.id, parent.id) || l.status == LoopStatus::invalidated) continue;
        if (!l.worktree.empty()) to_archive.push_back(l.id);
        l.context["invalidated_worktree"] = l.worktree;
        l.worktree.clear();
        if (move_to(l, LoopStatus::invalidated, why, set.events)) set.updates.push_back(l);
      }
      auto stored = co_await write(std::move(set));
      if (stored) {
        Loop result;
        for (auto& l : stored->loops)
          if (l.id == parent.id) result = l;
        for (const auto& wid : to_archive) co_await archive_worktree(wid, "loopr(" + wid + "): " + why);
        co_return result;
      }
      if (stored.error().code != ErrorCode::conflict) co_return stored.take_error();
    }
    co_return make_error(ErrorCode::conflict, "the tree of " + parent.id + " kept changing; try again");
  }

  awaitable<void> archive_worktree(std::string id, std::string message) {
    auto archive = [this, id, message]() -> Result<void> {
      LOOPR_ASSIGN(git::Repository r, repo());
      auto a = r.archive_worktree(id, message);
      if (!a && a.error().code != ErrorCode::not_found) return a.take_error();
      return ok();
    };
    auto done = co_await run_blocking(ctx.pool, archive);
    if (!done) spdlog::warn("loop {}: archiving its worktree: {}", id, done.error().message);
  }

  awaitable<ActionResult> iterate(std::string id, std::string feedback) {
    while (!feedback.empty() && std::isspace(static_cast<unsigned char>(feedback.back()))) feedback.pop_back();
    if (feedback.empty()) co_return make_error(ErrorCode::invalid_argument, "the feedback is empty (say what to change)");
    auto guard = co_await tree_lock.lock();
    auto loaded = co_await load(id);
    if (!loaded) co_return loaded.take_error();
    Loop loop = std::move(*loaded);
    if (runs.count(id)) co_return not_allowed(loop, "it is running (pause or stop it first)");
    ActionResult result = loop;
    if (loop.type == LoopType::plan && loop.status == LoopStatus::awaiting_approval) {
      result = co_await update(id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
        if (!move_to(l, LoopStatus::running, "iterating with the user's feedback", events))
          return not_allowed(l, "cannot iterate");
        engine::add_feedback(l.context, engine::FeedbackEntry{0, "user", engine::first_line(feedback, 100), feedback});
        events.push_back(make_event(l.id, "approval", {{"decision", "iterate"}, {"text", feedback}}));
        return std::nullopt;
      });
      if (result) co_await put_approval(id, "iterate", feedback);
    } else if (loop.type == LoopType::plan && (loop.status == LoopStatus::complete || loop.status == LoopStatus::failed)) {
      LoopStatus next = loop.status == LoopStatus::complete ? LoopStatus::running : LoopStatus::pending;
      result = co_await invalidate_and_iterate(loop, feedback, next);
    } else if (loop.status == LoopStatus::failed || loop.status == LoopStatus::stopped ||
               loop.status == LoopStatus::paused || loop.status == LoopStatus::blocked) {
      result = co_await update(id, [&](Loop& l, std::vector<Event>& events) -> std::optional<Error> {
        if (l.status == LoopStatus::failed && l.iteration >= l.max_iterations)
          l.max_iterations = l.iteration + ctx.config->loop(l.type).max_iterations;
        l.context.erase("rolled_up");
        l.context["no_progress"] = 0;
        if (!move_to(l, LoopStatus::pending, "iterating with the user's feedback", events)) return not_allowed(l, "cannot iterate");
        engine::add_feedback(l.context, engine::FeedbackEntry{0, "user", engine::first_line(feedback, 100), feedback});
        return std::nullopt;
      });
    } else {
      co_return not_allowed(loop, loop.status == LoopStatus::complete
                                      ? "a completed " + std::string(to_string(loop.type)) +
                                            " loop cannot iterate on its own (iterate its plan)"
                                      : "it cannot take feedback now");
    }
    if (result) spawn_run(id);
    co_return result;
  }

  awaitable<void> put_approval(std::string id, std::string decision, std::string text) {
    WriteSet set;
    set.approvals.push_back(Approval{id, decision, text, now_ms()});
    co_await write(std::move(set));
  }

  awaitable<ActionResult> pause(std::string id) {
    auto loaded = co_await load(id);
    if (!loaded) co_return loaded.take_error();
    auto loops = co_await plan_loops(loaded->plan_id);
    if (!loops) co_return loops.take_error();
    std::size_t acted = 0;
    WriteSet set;
    for (auto& l : *loops) {
      if (l.id != id && !is_descendant(l.id, id)) continue;
      auto run = runs.find(l.id);
      if (run != runs.end() && run->second->slot->granted) {
        run->second->control->request_pause();
        ++acted;
        continue;
      }
      if (l.status != LoopStatus::pending) continue;
      if (run != runs.end()) {
        run->second->control->request_pause();
        slots.cancel(run->second->slot);
      }
      if (move_to(l, LoopStatus::paused, "paused by the user", set.events)) {
        set.updates.push_back(l);
        ++acted;
      }
    }
    if (acted == 0) co_return not_allowed(*loaded, "neither it nor its descendants are running or waiting to run");
    paused_roots.insert(id);
    if (!set.updates.empty()) {
      auto stored = co_await write(std::move(set));
      if (!stored) co_return stored.take_error();
    }
    co_return co_await load(id);
  }

  awaitable<ActionResult> resume(std::string id) {
    auto loaded = co_await load(id);
    if (!loaded) co_return loaded.take_error();
    if (stopping) co_return make_error(ErrorCode::unsupported, "the daemon is shutting down (start it again)");
    auto loops = co_await plan_loops(loaded->plan_id);
    if (!loops) co_return loops.take_error();
    WriteSet set;
    std::vector<std::string> start;
    for (auto& l : *loops) {
      if (l.id != id && !is_descendant(l.id, id)) continue;
      if (runs.count(l.id)) continue;
      if (l.status == LoopStatus::paused || l.status == LoopStatus::stopped || l.status == LoopStatus::blocked) {
        if (move_to(l, LoopStatus::pending, "resumed by the user", set.events)) {
          set.updates.push_back(l);
          start.push_back(l.id);
        }
      } else if (l.status == LoopStatus::pending || l.status == LoopStatus::running) {
        start.push_back(l.id);
      }
    }
    for (auto it = paused_roots.begin(); it != paused_roots.end();)
      it = (*it == id || is_descendant(*it, id)) ? paused_roots.erase(it) : std::next(it);
    if (start.empty())
      co_return not_allowed(*loaded, "neither it nor its descendants are paused, stopped or blocked");
    if (!set.updates.empty()) {
      auto stored = co_await write(std::move(set));
      if (!stored) co_return stored.take_error();
    }
    for (const auto& s : start) spawn_run(s);
    co_return co_await load(id);
  }

  awaitable<ActionResult> stop(std::string id) {
    auto loaded = co_await load(id);
    if (!loaded) co_return loaded.take_error();
    std::size_t acted = co_await stop_tree(loaded->plan_id, id, "stopped by the user", true);
    if (acted == 0) co_return not_allowed(*loaded, "neither it nor its descendants are active");
    co_return co_await load(id);
  }

  awaitable<Result<MergeInfo>> merge(std::string plan) {
    auto loaded = co_await load(plan);
    if (!loaded) co_return loaded.take_error();
    if (loaded->type != LoopType::plan)
      co_return make_error(ErrorCode::invalid_argument, loaded->id + " is not a plan (give a plan id such as 001)");
    auto guard = co_await tree_lock.lock();
    auto fresh = co_await load(plan);
    if (!fresh) co_return fresh.take_error();
    if (std::string sha = ctx_str(*fresh, "merged_into_base"); !sha.empty())
      co_return make_error(ErrorCode::illegal_transition, "plan " + plan + " is already merged into " +
                                                              ctx.config->base_branch + " at " + sha.substr(0, 12));
    if (!fresh->context.value("tree_complete", false)) {
      auto loops = co_await plan_loops(plan);
      std::size_t total = 0, complete = 0;
      if (loops)
        for (const auto& l : *loops) {
          if (l.status == LoopStatus::invalidated) continue;
          ++total;
          complete += l.status == LoopStatus::complete;
        }
      co_return make_error(ErrorCode::illegal_transition, "plan " + plan + " is not complete yet (" + std::to_string(complete) +
                                                              " of " + std::to_string(total) + " loops complete)");
    }
    co_return co_await merge_into_base(plan);
  }

  // ------------------------------------------------------------------ start / shutdown

  awaitable<Result<void>> start() {
    auto list = [this] { return ctx.store.list_loops(); };
    auto all = co_await run_blocking(ctx.pool, list);
    if (!all) co_return all.take_error();
    {
      std::lock_guard lock(cost_mu);
      tree_costs.clear();
      for (const auto& l : *all) tree_costs[l.plan_id] += l.usage.cost_usd;
    }
    std::vector<std::string> finish, run, archive;
    for (const auto& l : *all) {
      switch (l.status) {
        case LoopStatus::running:
        case LoopStatus::rebasing:
        case LoopStatus::pending: run.push_back(l.id); break;
        case LoopStatus::complete:
          if (ctx_int(l, "merged_iteration", -1) != l.iteration ||
              (l.type != LoopType::code && ctx_int(l, "spawned_iteration", -1) != l.iteration) || !l.worktree.empty() ||
              (l.type == LoopType::plan && !l.context.value("tree_complete", false)) ||
              // Killed between storing tree_complete and storing the merge into the base
              // branch: the merge is still owed (made again it is up to date if it happened).
              (l.type == LoopType::plan && ctx.config->merge == "auto" &&
               ctx_str(l, "merged_into_base").empty() && ctx_str(l, "merge_error").empty()))
            finish.push_back(l.id);
          break;
        case LoopStatus::failed:
          if (!l.context.value("rolled_up", false) && !l.context.value("user_rejected", false)) finish.push_back(l.id);
          break;
        case LoopStatus::invalidated: {
          std::string was = ctx_str(l, "invalidated_worktree");
          if (!was.empty() && std::filesystem::exists(was)) archive.push_back(l.id);
          break;
        }
        default: break;
      }
    }
    // Folders git does not know as worktrees, of loops that need none now.
    std::map<std::string, LoopStatus> status_of;
    for (const auto& l : *all) status_of[l.id] = l.status;
    auto sweep = [this, status_of]() -> Result<void> {
      LOOPR_ASSIGN(git::Repository r, repo());
      std::error_code ec;
      // Lock files a killed daemon left on loopr's own refs and worktrees: only this daemon
      // writes those (it holds the pid lock), so any lock there now is stale and would fail
      // every later branch or worktree change.
      std::vector<std::filesystem::path> locks;
      for (auto it = std::filesystem::recursive_directory_iterator(r.git_dir() / "refs/heads/loopr", ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->path().extension() == ".lock") locks.push_back(it->path());
      ec.clear();
      for (auto it = std::filesystem::directory_iterator(r.git_dir() / "worktrees", ec);
           !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        if (!type_of_id(it->path().filename().string())) continue;
        std::error_code inner;
        for (auto f = std::filesystem::directory_iterator(it->path(), inner);
             !inner && f != std::filesystem::directory_iterator(); f.increment(inner))
          if (f->path().extension() == ".lock") locks.push_back(f->path());
      }
      for (const auto& lock : locks) {
        std::filesystem::remove(lock, ec);
        spdlog::warn("recovery: removed the stale git lock {}", lock.string());
      }
      ec.clear();
      for (auto it = std::filesystem::directory_iterator(ctx.paths.worktrees_dir(), ec);
           !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        std::string id = it->path().filename().string();
        auto st = status_of.find(id);
        if (st == status_of.end() || st->second == LoopStatus::complete || st->second == LoopStatus::invalidated)
          set_aside_stray_folder(r, id);
      }
      return ok();
    };
    co_await run_blocking(ctx.pool, sweep);
    spdlog::info("recovery: {} loops in the store; {} to run, {} to finish, {} worktrees to archive", all->size(),
                 run.size(), finish.size(), archive.size());
    for (const auto& id : archive) co_await archive_worktree(id, "loopr(" + id + "): invalidated");
    for (const auto& id : finish) co_await after_run(id);
    for (const auto& id : run) spawn_run(id);
    co_return ok();
  }

  awaitable<void> shutdown(std::chrono::milliseconds grace) {
    stopping = true;
    std::vector<std::shared_ptr<Run>> all;
    for (auto& [id, run] : runs) {
      run->control->request_stop("the daemon is stopping");
      slots.cancel(run->slot);
      all.push_back(run);
    }
    auto deadline = std::chrono::steady_clock::now() + grace;
    co_await wait_for_runs(all, grace * 3 / 4);
    // Loops the shutdown stopped run again at the next start. What their interrupted iteration
    // had written is checkpointed first (while time is left; otherwise it stays in the worktree).
    WriteSet set;
    std::vector<std::string> to_checkpoint;
    for (auto& run : all) {
      auto l = co_await load(run->id);
      if (!l || l->status != LoopStatus::stopped || l->status_reason != "the daemon is stopping") continue;
      Loop loop = std::move(*l);
      if (!loop.worktree.empty()) to_checkpoint.push_back(loop.worktree + "\n" + loop.id);
      if (move_to(loop, LoopStatus::pending, "the daemon stopped; it resumes at the next start", set.events))
        set.updates.push_back(loop);
    }
    if (!set.updates.empty()) {
      auto stored = co_await write(std::move(set));
      if (!stored) spdlog::error("shutdown: storing stopped loops as pending: {}", stored.error().message);
    }
    auto checkpoint = [to_checkpoint, deadline] {
      std::size_t done = 0;
      for (const auto& entry : to_checkpoint) {
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::string worktree = entry.substr(0, entry.find('\n')), id = entry.substr(entry.find('\n') + 1);
        auto wt = git::Worktree::open(worktree);
        if (wt && wt->checkpoint("loopr(" + id + "): work in progress when the daemon stopped")) ++done;
      }
      return done;
    };
    std::size_t checkpointed = co_await run_blocking(ctx.pool, checkpoint);
    spdlog::info("shutdown: {} of {} stopped loops checkpointed", checkpointed, to_checkpoint.size());
  }
};

LoopManager::LoopManager(engine::EngineContext& ctx) : impl_(std::make_shared<Impl>(ctx)) {
  std::weak_ptr<Impl> weak = impl_;
  impl_->bus_subscription = ctx.bus.subscribe([weak](const Event& e) {
    if (e.type != "cost") return;
    auto self = weak.lock();
    if (!self) return;
    double cost = e.data.value("cost_usd", 0.0);
    std::lock_guard lock(self->cost_mu);
    self->tree_costs[root_plan_id(e.loop_id)] += cost;
  });
  if (!ctx.tree_cost) {
    ctx.tree_cost = [weak](const std::string& plan) {
      auto self = weak.lock();
      if (!self) return 0.0;
      std::lock_guard lock(self->cost_mu);
      auto it = self->tree_costs.find(plan);
      return it == self->tree_costs.end() ? 0.0 : it->second;
    };
  }
}

LoopManager::~LoopManager() {
  impl_->ctx.bus.unsubscribe(impl_->bus_subscription);
  impl_->stopping = true;
}

awaitable<Result<void>> LoopManager::start() { return impl_->start(); }
awaitable<ActionResult> LoopManager::submit(std::string request) { return impl_->submit(std::move(request)); }
awaitable<ActionResult> LoopManager::approve(std::string id) { return impl_->decide(std::move(id), "approve", ""); }
awaitable<ActionResult> LoopManager::reject(std::string id, std::string reason) {
  return impl_->decide(std::move(id), "reject", std::move(reason));
}
awaitable<ActionResult> LoopManager::iterate(std::string id, std::string feedback) {
  return impl_->iterate(std::move(id), std::move(feedback));
}
awaitable<ActionResult> LoopManager::pause(std::string id) { return impl_->pause(std::move(id)); }
awaitable<ActionResult> LoopManager::resume(std::string id) { return impl_->resume(std::move(id)); }
awaitable<ActionResult> LoopManager::stop(std::string id) { return impl_->stop(std::move(id)); }
awaitable<Result<MergeInfo>> LoopManager::merge(std::string plan_id) { return impl_->merge(std::move(plan_id)); }
awaitable<void> LoopManager::shutdown(std::chrono::milliseconds grace) { return impl_->shutdown(grace); }
std::size_t LoopManager::active_runs() const { return impl_->runs.size(); }
double LoopManager::tree_cost(const std::string& plan_id) const {
  std::lock_guard lock(impl_->cost_mu);
  auto it = impl_->tree_costs.find(plan_id);
  return it == impl_->tree_costs.end() ? 0.0 : it->second;
}
void LoopManager::config_changed() { impl_->slots.set_capacity(impl_->ctx.config->concurrency.max_loops); }

}  // namespace loopr::manager
