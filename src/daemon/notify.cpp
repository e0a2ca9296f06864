#include "daemon/notify.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <set>

#include <cstdlib>
#include <filesystem>

#include <loopr/core/host_command.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/text.hpp>
#include <loopr/manager/tree_verdict.hpp>

namespace loopr::daemon {

namespace {

template <typename... F>
struct Overload : F... {
  using F::operator()...;
};
template <typename... F>
Overload(F...) -> Overload<F...>;

}  // namespace

std::optional<std::string> direct_notify_event(const api::EventBody& body) {
  return std::visit(
      Overload{
          [](const api::TreeComplete&) -> std::optional<std::string> { return "tree_complete"; },
          [](const api::StatusChanged& c) -> std::optional<std::string> {
            if (c.to == LoopStatus::awaiting_approval || c.to == LoopStatus::awaiting_answer ||
                c.to == LoopStatus::blocked)
              return std::string(to_string(c.to));
            return std::nullopt;
          },
          [](const auto&) -> std::optional<std::string> { return std::nullopt; }},
      body);
}

struct Notifier::State {
  engine::EngineContext& ctx;
  std::mutex mu;
  std::set<std::string> cost_notified;    ///< plans whose cost_threshold was notified
  std::set<std::string> failed_notified;  ///< plans whose tree_failed was notified (until it runs)
  std::set<std::string> limit_notified;   ///< plans whose cost_limit was notified (until resumed)

  explicit State(engine::EngineContext& c) : ctx(c) {}

  // Runs every command that wants `name` (blocking; on the pool).
  void run_commands(const Config& config, const std::string& name, const nlohmann::json& payload) {
    for (const auto& n : config.notify) {
      if (!n.events.empty() && std::find(n.events.begin(), n.events.end(), name) == n.events.end())
        continue;
      // Never a file the model can change (the start refused such a config; a file made since
      // is caught here), never the daemon's environment, never in the checkout.
      const char* home = std::getenv("HOME");
      std::string inside = repo_path_in_command(n.command, ctx.paths.root, home ? home : "");
      if (!inside.empty()) {
        spdlog::error("notify: `{}` is not run: it runs {}, a file inside the repository the "
                      "model can change (move it out of the repository)",
                      n.command, inside);
        continue;
      }
      std::error_code ec;
      ProcessSpec spec =
          shell(n.command, home && std::filesystem::is_directory(home, ec) ? home : "/");
      spec.stdin_data = json_text(payload) + "\n";
      spec.timeout = n.timeout;
      spec.output_cap = 4096;
      spec.inherit_env = false;
      spec.env_set = minimal_host_env();
      spec.env_set["LOOPR_EVENT"] = name;
      spec.env_set["LOOPR_LOOP_ID"] = payload.value("loop_id", "");
      spec.env_set["LOOPR_PLAN_ID"] = payload.value("plan_id", "");
      spec.env_set["LOOPR_REPO"] = ctx.paths.root.string();
      ProcessResult r = run_process(spec);
      if (r.succeeded()) continue;
      std::string why = r.spawn_failed ? "could not start: " + r.output
                        : r.timed_out  ? "timed out after " + format_duration(n.timeout)
                                       : "exit code " + std::to_string(r.exit_code);
      spdlog::warn("notify: `{}` on {} for {}: {} ({})", n.command, name,
                   payload.value("loop_id", ""), why, cap_head_tail(r.output, 400));
    }
  }

  // What happened, decided on the pool (some of it reads the store), then the commands.
  void handle(std::shared_ptr<const Config> config, const Event& e, const api::EventBody& body) {
    const std::string plan = root_plan_id(e.loop_id);
    nlohmann::json payload{{"loop_id", e.loop_id},
                           {"plan_id", plan},
                           {"time", format_timestamp(e.time)},
                           {"repo", ctx.paths.root.string()},
                           {"source_event", to_json(e)}};
    if (auto name = direct_notify_event(body)) {
      const auto* changed = std::get_if<api::StatusChanged>(&body);
      payload["event"] = *name;
      payload["reason"] = changed ? changed->reason : std::string();
      if (changed && changed->to == LoopStatus::awaiting_answer) {
        payload["question"] = changed->reason;
        payload["answer_with"] = "loopr answer " + e.loop_id + " \"...\"";
      }
      run_commands(*config, *name, payload);
      return;
    }
    std::visit(Overload{[&](const api::CostEvent&) { on_cost(*config, plan, payload); },
                        [&](const api::CostLimitEvent& c) { on_limit(*config, plan, c, payload); },
                        [&](const api::StatusChanged& c) { on_status(*config, plan, c, payload); },
                        [](const auto&) {}},
               body);
  }

  // Every loop of the tree pauses at the cap with its own event: the person hears it once.
  void on_limit(const Config& config, const std::string& plan, const api::CostLimitEvent& c,
                nlohmann::json& payload) {
    {
      std::lock_guard lock(mu);
      if (!limit_notified.insert(plan).second) return;
    }
    payload["limit"] = api::to_string(c.limit);
    payload["reason"] = c.reason;
    payload["spent_usd"] = c.spent_usd;
    payload["max_cost_usd"] = c.max_cost_usd;
    payload["input_tokens"] = c.input_tokens;
    payload["max_input_tokens"] = c.max_input_tokens;
    payload["event"] = "cost_limit";
    // What raises the cap that was hit: the cost and the runtime by `resume`, the input tokens
    // in the config.
    payload["resume_with"] =
        c.limit == api::CapKind::runtime ? "loopr resume " + plan + " --max-runtime DURATION"
        : c.limit == api::CapKind::input_tokens
            ? "raise limits.max_input_tokens, then loopr resume " + plan
            : "loopr resume " + plan + " --max-cost USD";
    run_commands(config, "cost_limit", payload);
  }

  // The tree's spending passed limits.notify_cost_fraction of its limit: once per plan.
  void on_cost(const Config& config, const std::string& plan, nlohmann::json& payload) {
    if (config.limits.max_cost_usd <= 0) return;
    double spent = ctx.costs.total(plan);
    double at = config.limits.notify_cost_fraction * config.limits.max_cost_usd;
    {
      std::lock_guard lock(mu);
      if (spent < at || !cost_notified.insert(plan).second) return;
    }
    payload["event"] = "cost_threshold";
    payload["cost_usd"] = spent;
    payload["max_cost_usd"] = config.limits.max_cost_usd;
    payload["fraction"] = config.limits.notify_cost_fraction;
    run_commands(config, "cost_threshold", payload);
  }

  // A loop ended failed or stopped: tree_failed once when that fails its whole tree.
  void on_status(const Config& config, const std::string& plan, const api::StatusChanged& c,
                 nlohmann::json& payload) {
    if (c.to == LoopStatus::running || c.to == LoopStatus::pending) {
      std::lock_guard lock(mu);
      failed_notified.erase(plan);  // it runs again: a later failure is news
      // Resumed by the person (a raised cap): the next cap reached is news too.
      if (c.reason.rfind("resumed by the user", 0) == 0) limit_notified.erase(plan);
      return;
    }
    if (c.to != LoopStatus::failed && c.to != LoopStatus::stopped) return;
    auto tree = ctx.journal.store().loops_of_plan(plan);
    if (!tree) return;
    if (manager::tree_verdict(*tree, plan, config.merge) != manager::TreeVerdict::failed) return;
    {
      std::lock_guard lock(mu);
      if (!failed_notified.insert(plan).second) return;
    }
    payload["event"] = "tree_failed";
    payload["reason"] = c.reason;
    run_commands(config, "tree_failed", payload);
  }
};

Notifier::Notifier(engine::EngineContext& ctx) : state_(std::make_shared<State>(ctx)) {
  std::weak_ptr<State> weak = state_;
  subscription_ = ctx.journal.bus().subscribe([weak](const Event& e) {
    auto s = weak.lock();
    if (!s) return;
    std::shared_ptr<const Config> config = s->ctx.config;
    if (config->notify.empty() || e.loop_id.empty()) return;
    api::EventBody body = api::decode(e).body;
    if (!std::holds_alternative<api::StatusChanged>(body) &&
        !std::holds_alternative<api::TreeComplete>(body) &&
        !std::holds_alternative<api::CostEvent>(body) &&
        !std::holds_alternative<api::CostLimitEvent>(body))
      return;
    net::post(s->ctx.pool, [s, config, e, body = std::move(body)] {
      try {
        s->handle(config, e, body);
      } catch (const std::exception& ex) {
        spdlog::warn("notify: {}", ex.what());  // never fatal
      }
    });
  });
}

Notifier::~Notifier() { state_->ctx.journal.bus().unsubscribe(subscription_); }

}  // namespace loopr::daemon
