#include "daemon/notify.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <set>

#include <loopr/core/ids.hpp>
#include <loopr/core/process.hpp>
#include <loopr/core/text.hpp>
#include <loopr/manager/tree_verdict.hpp>

namespace loopr::daemon {

namespace {

// A string field of an event's data ("" when the data is not an object or lacks it).
std::string data_str(const Event& e, const char* key) {
  if (!e.data.is_object()) return {};
  auto it = e.data.find(key);
  return it != e.data.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<std::string> direct_notify_event(const Event& e) {
  if (e.type == "tree_complete") return "tree_complete";
  if (e.type != "status_changed") return std::nullopt;
  std::string to = data_str(e, "to");
  if (to == "awaiting_approval" || to == "awaiting_answer" || to == "blocked") return to;
  return std::nullopt;
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
      ProcessSpec spec = shell(n.command, ctx.paths.root.string());
      spec.stdin_data = json_text(payload) + "\n";
      spec.timeout = n.timeout;
      spec.output_cap = 4096;
      spec.env_set = {{"LOOPR_EVENT", name},
                      {"LOOPR_LOOP_ID", payload.value("loop_id", "")},
                      {"LOOPR_PLAN_ID", payload.value("plan_id", "")}};
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
  void handle(std::shared_ptr<const Config> config, Event e) {
    const std::string plan = root_plan_id(e.loop_id);
    nlohmann::json payload{{"loop_id", e.loop_id},
                           {"plan_id", plan},
                           {"time", format_timestamp(e.time)},
                           {"repo", ctx.paths.root.string()},
                           {"source_event", to_json(e)}};
    if (auto name = direct_notify_event(e)) {
      payload["event"] = *name;
      payload["reason"] = data_str(e, "reason");
      if (*name == "awaiting_answer") {
        payload["question"] = data_str(e, "reason");
        payload["answer_with"] = "loopr answer " + e.loop_id + " \"...\"";
      }
      run_commands(*config, *name, payload);
      return;
    }
    if (e.type == "cost_limit") {
      // Every loop of the tree pauses at the cap with its own event: the person hears it once.
      {
        std::lock_guard lock(mu);
        if (!limit_notified.insert(plan).second) return;
      }
      for (const char* key : {"limit", "reason"}) payload[key] = data_str(e, key);
      for (const char* key : {"spent_usd", "max_cost_usd", "input_tokens", "max_input_tokens"})
        if (e.data.contains(key)) payload[key] = e.data[key];
      payload["event"] = "cost_limit";
      payload["resume_with"] = "loopr resume " + plan + " --max-cost USD";
      run_commands(*config, "cost_limit", payload);
      return;
    }
    if (e.type == "cost" && config->limits.max_cost_usd > 0) {
      double spent = ctx.costs.total(plan);
      double at = config->limits.notify_cost_fraction * config->limits.max_cost_usd;
      {
        std::lock_guard lock(mu);
        if (spent < at || !cost_notified.insert(plan).second) return;
      }
      payload["event"] = "cost_threshold";
      payload["cost_usd"] = spent;
      payload["max_cost_usd"] = config->limits.max_cost_usd;
      payload["fraction"] = config->limits.notify_cost_fraction;
      run_commands(*config, "cost_threshold", payload);
      return;
    }
    if (e.type != "status_changed") return;
    std::string to = data_str(e, "to");
    if (to == "running" || to == "pending") {
      std::lock_guard lock(mu);
      failed_notified.erase(plan);  // it runs again: a later failure is news
      // Resumed by the person (a raised cap): the next cap reached is news too.
      if (data_str(e, "reason").rfind("resumed by the user", 0) == 0) limit_notified.erase(plan);
      return;
    }
    if (to != "failed" && to != "stopped") return;
    auto tree = ctx.journal.store().loops_of_plan(plan);
    if (!tree) return;
    if (manager::tree_verdict(*tree, plan, config->merge) != manager::TreeVerdict::failed) return;
    {
      std::lock_guard lock(mu);
      if (!failed_notified.insert(plan).second) return;
    }
    payload["event"] = "tree_failed";
    payload["reason"] = data_str(e, "reason");
    run_commands(*config, "tree_failed", payload);
  }
};

Notifier::Notifier(engine::EngineContext& ctx) : state_(std::make_shared<State>(ctx)) {
  std::weak_ptr<State> weak = state_;
  subscription_ = ctx.journal.bus().subscribe([weak](const Event& e) {
    auto s = weak.lock();
    if (!s) return;
    std::shared_ptr<const Config> config = s->ctx.config;
    if (config->notify.empty() || e.loop_id.empty()) return;
    if (e.type != "status_changed" && e.type != "tree_complete" && e.type != "cost") return;
    net::post(s->ctx.pool, [s, config, e] {
      try {
        s->handle(config, e);
      } catch (const std::exception& ex) {
        spdlog::warn("notify: {}", ex.what());  // never fatal
      }
    });
  });
}

Notifier::~Notifier() { state_->ctx.journal.bus().unsubscribe(subscription_); }

}  // namespace loopr::daemon
