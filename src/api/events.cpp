// The events' one codec. Each type: its wire name, how its data reads (missing fields take
// their defaults, as every reader did before) and how it is written (the emitters' exact shape).
#include <loopr/api/events.hpp>

#include <string_view>
#include <type_traits>

namespace loopr::api {
namespace {

using json = nlohmann::json;

json or_null(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
std::optional<int> int_or_null(const json& d, const char* key) {
  auto it = d.find(key);
  if (it == d.end() || it->is_null()) return std::nullopt;
  return it->get<int>();
}
std::string str(const json& d, const char* key) { return d.value(key, std::string()); }
std::vector<std::string> strs(const json& d, const char* key) {
  return d.value(key, std::vector<std::string>{});
}

// One entry per known type: its name, a reader and a writer.
template <typename T>
struct Codec;

#define LOOPR_EVENT(T, NAME)                                                \
  template <>                                                              \
  struct Codec<T> {                                                        \
    static constexpr std::string_view name = NAME;                         \
    static T read(const json& d);                                          \
    static json write(const T& e);                                         \
  };

LOOPR_EVENT(LoopCreated, "loop_created")
LOOPR_EVENT(StatusChanged, "status_changed")
LOOPR_EVENT(IterationStarted, "iteration_started")
LOOPR_EVENT(ToolCalled, "tool_called")
LOOPR_EVENT(ValidationFinished, "validation_finished")
LOOPR_EVENT(ExecutorRetry, "executor_retry")
LOOPR_EVENT(CostEvent, "cost")
LOOPR_EVENT(IterationFinished, "iteration_finished")
LOOPR_EVENT(LlmErrorEvent, "llm_error")
LOOPR_EVENT(LlmRetry, "llm_retry")
LOOPR_EVENT(Merged, "merged")
LOOPR_EVENT(Rebased, "rebased")
LOOPR_EVENT(RebaseConflict, "rebase_conflict")
LOOPR_EVENT(MergeFailed, "merge_failed")
LOOPR_EVENT(RetryEvent, "retry")
LOOPR_EVENT(TreeComplete, "tree_complete")
LOOPR_EVENT(ApprovalEvent, "approval")
LOOPR_EVENT(DaemonStarted, "daemon_started")
LOOPR_EVENT(DaemonStopping, "daemon_stopping")
LOOPR_EVENT(IntegrationCheckStarted, "integration_check_started")
LOOPR_EVENT(IntegrationCheck, "integration_check")
LOOPR_EVENT(IntegrationFix, "integration_fix")
LOOPR_EVENT(Revalidated, "revalidated")
LOOPR_EVENT(SetupFinished, "setup_finished")
LOOPR_EVENT(BaselineCheck, "baseline_check")
LOOPR_EVENT(NoteShared, "note_shared")
LOOPR_EVENT(QuestionAsked, "question_asked")
LOOPR_EVENT(QuestionAnswered, "question_answered")
LOOPR_EVENT(ForecastMade, "forecast")
LOOPR_EVENT(GcDone, "gc")
LOOPR_EVENT(ReviewFinished, "review_finished")
LOOPR_EVENT(PeerRefused, "peer_refused")
LOOPR_EVENT(CostLimitEvent, "cost_limit")
LOOPR_EVENT(PrPublished, "pr_published")
LOOPR_EVENT(CiChecked, "ci_checked")
LOOPR_EVENT(CiFix, "ci_fix")
LOOPR_EVENT(ForgeFailed, "forge_failed")
LOOPR_EVENT(PrState, "pr_state")
#undef LOOPR_EVENT

LoopCreated Codec<LoopCreated>::read(const json& d) {
  LoopCreated e;
  e.type = parse_loop_type(str(d, "type")).value_or(LoopType::plan);
  e.parent_id = str(d, "parent_id");
  e.task = str(d, "task");
  e.fix = d.value("fix", false);
  e.dry_run = d.value("dry_run", false);
  return e;
}
json Codec<LoopCreated>::write(const LoopCreated& e) {
  json d = {{"type", to_string(e.type)}, {"task", e.task}};
  if (!e.parent_id.empty()) d["parent_id"] = e.parent_id;
  if (e.fix) d["fix"] = true;
  if (e.type == LoopType::plan) d["dry_run"] = e.dry_run;
  return d;
}

StatusChanged Codec<StatusChanged>::read(const json& d) {
  StatusChanged e;
  e.from = parse_loop_status(str(d, "from")).value_or(LoopStatus::pending);
  e.to = parse_loop_status(str(d, "to")).value_or(LoopStatus::pending);
  e.reason = str(d, "reason");
  if (d.contains("end_reason"))
    e.end_reason = parse_end_reason(str(d, "end_reason")).value_or(EndReason::unknown);
  return e;
}
json Codec<StatusChanged>::write(const StatusChanged& e) {
  json d = {{"from", to_string(e.from)}, {"to", to_string(e.to)}, {"reason", e.reason}};
  if (e.end_reason != EndReason::none) d["end_reason"] = to_string(e.end_reason);
  return d;
}

IterationStarted Codec<IterationStarted>::read(const json& d) { return {d.value("n", 0)}; }
json Codec<IterationStarted>::write(const IterationStarted& e) { return {{"n", e.n}}; }

ToolCalled Codec<ToolCalled>::read(const json& d) {
  return {str(d, "tool"), d.value("input", json()), d.value("turn", 0)};
}
json Codec<ToolCalled>::write(const ToolCalled& e) {
  return {{"tool", e.tool}, {"input", e.input}, {"turn", e.turn}};
}

ValidationFinished Codec<ValidationFinished>::read(const json& d) {
  return {d.value("n", 0), d.value("passed", false), str(d, "summary"),
          int_or_null(d, "exit_code"), strs(d, "jobs")};
}
json Codec<ValidationFinished>::write(const ValidationFinished& e) {
  return {{"n", e.n},
          {"passed", e.passed},
          {"summary", e.summary},
          {"exit_code", or_null(e.exit_code)},
          {"jobs", e.jobs}};
}

ExecutorRetry Codec<ExecutorRetry>::read(const json& d) {
  return {d.value("n", 0), str(d, "reason"), strs(d, "jobs")};
}
json Codec<ExecutorRetry>::write(const ExecutorRetry& e) {
  return {{"n", e.n}, {"reason", e.reason}, {"jobs", e.jobs}};
}

CostEvent Codec<CostEvent>::read(const json& d) {
  return {d.value("n", 0),
          d.value("cost_usd", 0.0),
          d.value("input_tokens", std::int64_t{0}),
          d.value("output_tokens", std::int64_t{0}),
          d.value("loop_cost_usd", 0.0),
          d.value("cache_read_tokens", std::int64_t{0}),
          d.value("cache_write_tokens", std::int64_t{0})};
}
json Codec<CostEvent>::write(const CostEvent& e) {
  json d = {{"n", e.n},
            {"cost_usd", e.cost_usd},
            {"input_tokens", e.input_tokens},
            {"output_tokens", e.output_tokens},
            {"loop_cost_usd", e.loop_cost_usd}};
  // The prompt cache's part, when it had one (events stored before it read back the same).
  if (e.cache_read_tokens || e.cache_write_tokens) {
    d["cache_read_tokens"] = e.cache_read_tokens;
    d["cache_write_tokens"] = e.cache_write_tokens;
  }
  return d;
}

// An unknown cap (a newer daemon's) reads as the cost: its `reason` still names it.
CapKind cap_kind_of(const std::string& text) {
  if (text == "runtime") return CapKind::runtime;
  if (text == "input_tokens") return CapKind::input_tokens;
  return CapKind::cost;
}

CostLimitEvent Codec<CostLimitEvent>::read(const json& d) {
  return {str(d, "plan_id"),
          cap_kind_of(str(d, "limit")),
          d.value("spent_usd", 0.0),
          d.value("max_cost_usd", 0.0),
          d.value("input_tokens", std::int64_t{0}),
          d.value("max_input_tokens", std::int64_t{0}),
          str(d, "reason")};
}
json Codec<CostLimitEvent>::write(const CostLimitEvent& e) {
  return {{"plan_id", e.plan_id},
          {"limit", to_string(e.limit)},
          {"spent_usd", e.spent_usd},
          {"max_cost_usd", e.max_cost_usd},
          {"input_tokens", e.input_tokens},
          {"max_input_tokens", e.max_input_tokens},
          {"reason", e.reason}};
}

IterationFinished Codec<IterationFinished>::read(const json& d) {
  return {d.value("n", 0), parse_iteration_outcome(str(d, "status")), str(d, "summary"),
          d.value("duration_ms", std::int64_t{0})};
}
json Codec<IterationFinished>::write(const IterationFinished& e) {
  return {{"n", e.n},
          {"status", to_string(e.status)},
          {"summary", e.summary},
          {"duration_ms", e.duration_ms}};
}

LlmErrorEvent Codec<LlmErrorEvent>::read(const json& d) {
  return {str(d, "kind"), d.value("retryable", false), d.value("status", 0), str(d, "message"),
          d.value("consecutive", 0)};
}
json Codec<LlmErrorEvent>::write(const LlmErrorEvent& e) {
  return {{"kind", e.kind},
          {"retryable", e.retryable},
          {"status", e.status},
          {"message", e.message},
          {"consecutive", e.consecutive}};
}

LlmRetry Codec<LlmRetry>::read(const json& d) {
  return {d.value("attempt", 0), d.value("wait_ms", std::int64_t{0}), str(d, "kind"),
          d.value("status", 0), str(d, "message")};
}
json Codec<LlmRetry>::write(const LlmRetry& e) {
  return {{"attempt", e.attempt},
          {"wait_ms", e.wait_ms},
          {"kind", e.kind},
          {"status", e.status},
          {"message", e.message}};
}

Merged Codec<Merged>::read(const json& d) { return {str(d, "into"), str(d, "sha"), str(d, "kind")}; }
json Codec<Merged>::write(const Merged& e) {
  return {{"into", e.into}, {"sha", e.sha}, {"kind", e.kind}};
}

Rebased Codec<Rebased>::read(const json& d) { return {str(d, "onto"), str(d, "sha"), str(d, "kind")}; }
json Codec<Rebased>::write(const Rebased& e) {
  return {{"onto", e.onto}, {"sha", e.sha}, {"kind", e.kind}};
}

RebaseConflict Codec<RebaseConflict>::read(const json& d) {
  return {str(d, "onto"), strs(d, "paths")};
}
json Codec<RebaseConflict>::write(const RebaseConflict& e) {
  return {{"onto", e.onto}, {"paths", e.paths}};
}

MergeFailed Codec<MergeFailed>::read(const json& d) { return {str(d, "into"), str(d, "message")}; }
json Codec<MergeFailed>::write(const MergeFailed& e) {
  return {{"into", e.into}, {"message", e.message}};
}

RetryEvent Codec<RetryEvent>::read(const json& d) {
  return {d.value("attempt", 0), str(d, "archived_branch")};
}
json Codec<RetryEvent>::write(const RetryEvent& e) {
  return {{"attempt", e.attempt}, {"archived_branch", e.archived_branch}};
}

TreeComplete Codec<TreeComplete>::read(const json&) { return {}; }
// The emitters have always written no data here: JSON null.
json Codec<TreeComplete>::write(const TreeComplete&) { return nullptr; }

ApprovalEvent Codec<ApprovalEvent>::read(const json& d) {
  return {str(d, "decision"), str(d, "text")};
}
json Codec<ApprovalEvent>::write(const ApprovalEvent& e) {
  return {{"decision", e.decision}, {"text", e.text}};
}

PeerRefused Codec<PeerRefused>::read(const json& d) {
  return {str(d, "listener"), d.value("pid", 0), str(d, "why")};
}
json Codec<PeerRefused>::write(const PeerRefused& e) {
  return {{"listener", e.listener}, {"pid", e.pid}, {"why", e.why}};
}

DaemonStarted Codec<DaemonStarted>::read(const json& d) { return {d.value("pid", 0)}; }
json Codec<DaemonStarted>::write(const DaemonStarted& e) { return {{"pid", e.pid}}; }
DaemonStopping Codec<DaemonStopping>::read(const json& d) {
  return {d.value("pid", 0), d.value("drain_ms", std::int64_t{0})};
}
json Codec<DaemonStopping>::write(const DaemonStopping& e) {
  return {{"pid", e.pid}, {"drain_ms", e.drain_ms}};
}

IntegrationCheckStarted Codec<IntegrationCheckStarted>::read(const json& d) {
  return {str(d, "sha"), str(d, "command")};
}
json Codec<IntegrationCheckStarted>::write(const IntegrationCheckStarted& e) {
  return {{"sha", e.sha}, {"command", e.command}};
}

IntegrationCheck Codec<IntegrationCheck>::read(const json& d) {
  return {str(d, "sha"),     d.value("passed", false),
          str(d, "command"), int_or_null(d, "exit_code"),
          str(d, "summary"), d.value("duration_ms", std::int64_t{0}),
          str(d, "log")};
}
json Codec<IntegrationCheck>::write(const IntegrationCheck& e) {
  return {{"sha", e.sha},
          {"passed", e.passed},
          {"command", e.command},
          {"exit_code", or_null(e.exit_code)},
          {"summary", e.summary},
          {"duration_ms", e.duration_ms},
          {"log", e.log}};
}

PrPublished Codec<PrPublished>::read(const json& d) {
  return {d.value("number", 0), str(d, "url"), str(d, "sha"), str(d, "remote"),
          d.value("created", false)};
}
json Codec<PrPublished>::write(const PrPublished& e) {
  return {{"number", e.number}, {"url", e.url}, {"sha", e.sha}, {"remote", e.remote},
          {"created", e.created}};
}
CiChecked Codec<CiChecked>::read(const json& d) {
  return {str(d, "sha"), str(d, "state"), strs(d, "failing"), str(d, "summary")};
}
json Codec<CiChecked>::write(const CiChecked& e) {
  return {{"sha", e.sha}, {"state", e.state}, {"failing", e.failing}, {"summary", e.summary}};
}
CiFix Codec<CiFix>::read(const json& d) {
  return {str(d, "loop_id"), str(d, "source"), d.value("count", 0)};
}
json Codec<CiFix>::write(const CiFix& e) {
  return {{"loop_id", e.loop_id}, {"source", e.source}, {"count", e.count}};
}
ForgeFailed Codec<ForgeFailed>::read(const json& d) {
  return {str(d, "step"), d.value("status", 0), str(d, "message"), str(d, "retry")};
}
json Codec<ForgeFailed>::write(const ForgeFailed& e) {
  return {{"step", e.step}, {"status", e.status}, {"message", e.message}, {"retry", e.retry}};
}
PrState Codec<PrState>::read(const json& d) { return {d.value("number", 0), str(d, "state")}; }
json Codec<PrState>::write(const PrState& e) { return {{"number", e.number}, {"state", e.state}}; }

IntegrationFix Codec<IntegrationFix>::read(const json& d) { return {str(d, "loop_id")}; }
json Codec<IntegrationFix>::write(const IntegrationFix& e) { return {{"loop_id", e.loop_id}}; }

Revalidated Codec<Revalidated>::read(const json& d) {
  return {d.value("passed", false), str(d, "summary")};
}
json Codec<Revalidated>::write(const Revalidated& e) {
  return {{"passed", e.passed}, {"summary", e.summary}};
}

SetupFinished Codec<SetupFinished>::read(const json& d) {
  return {d.value("passed", false), str(d, "summary"), d.value("duration_ms", std::int64_t{0}),
          str(d, "log")};
}
json Codec<SetupFinished>::write(const SetupFinished& e) {
  return {{"passed", e.passed},
          {"summary", e.summary},
          {"duration_ms", e.duration_ms},
          {"log", e.log}};
}

BaselineCheck Codec<BaselineCheck>::read(const json& d) {
  return {str(d, "sha"),
          d.value("passed", false),
          str(d, "summary"),
          d.value("duration_ms", std::int64_t{0}),
          d.value("setup_ms", std::int64_t{0}),
          str(d, "log"),
          d.value("reused", false)};
}
json Codec<BaselineCheck>::write(const BaselineCheck& e) {
  return {{"sha", e.sha},
          {"passed", e.passed},
          {"summary", e.summary},
          {"duration_ms", e.duration_ms},
          {"setup_ms", e.setup_ms},
          {"log", e.log},
          {"reused", e.reused}};
}

NoteShared Codec<NoteShared>::read(const json& d) { return {d.value("n", 0), str(d, "text")}; }
json Codec<NoteShared>::write(const NoteShared& e) { return {{"n", e.n}, {"text", e.text}}; }

QuestionAsked Codec<QuestionAsked>::read(const json& d) {
  return {d.value("n", 0), str(d, "question")};
}
json Codec<QuestionAsked>::write(const QuestionAsked& e) {
  return {{"n", e.n}, {"question", e.question}};
}

QuestionAnswered Codec<QuestionAnswered>::read(const json& d) {
  return {str(d, "question"), str(d, "answer")};
}
json Codec<QuestionAnswered>::write(const QuestionAnswered& e) {
  return {{"question", e.question}, {"answer", e.answer}};
}

constexpr const char* kForecastNamed[] = {"cost_usd", "low",          "high",      "loops",
                                          "basis",    "max_cost_usd", "over_limit"};
ForecastMade Codec<ForecastMade>::read(const json& d) {
  ForecastMade e;
  e.cost_usd = d.value("cost_usd", 0.0);
  e.low = d.value("low", 0.0);
  e.high = d.value("high", 0.0);
  e.loops = d.value("loops", 0);
  e.basis = str(d, "basis");
  e.max_cost_usd = d.value("max_cost_usd", 0.0);
  e.over_limit = d.value("over_limit", false);
  e.rest = d.is_object() ? d : json::object();
  for (const char* k : kForecastNamed) e.rest.erase(k);
  return e;
}
json Codec<ForecastMade>::write(const ForecastMade& e) {
  json d = e.rest.is_object() ? e.rest : json::object();
  d["cost_usd"] = e.cost_usd;
  d["low"] = e.low;
  d["high"] = e.high;
  d["loops"] = e.loops;
  d["basis"] = e.basis;
  d["max_cost_usd"] = e.max_cost_usd;
  d["over_limit"] = e.over_limit;
  return d;
}

GcDone Codec<GcDone>::read(const json& d) {
  return {strs(d, "removed"), d.value("bytes_freed", std::uint64_t{0})};
}
json Codec<GcDone>::write(const GcDone& e) {
  return {{"removed", e.removed}, {"bytes_freed", e.bytes_freed}};
}

ReviewFinished Codec<ReviewFinished>::read(const json& d) {
  return {d.value("n", 0),
          str(d, "verdict"),
          str(d, "summary"),
          str(d, "feedback"),
          str(d, "model"),
          d.value("attempts", 0),
          d.value("cost_usd", 0.0),
          d.value("input_tokens", std::int64_t{0}),
          d.value("output_tokens", std::int64_t{0})};
}
json Codec<ReviewFinished>::write(const ReviewFinished& e) {
  return {{"n", e.n},
          {"verdict", e.verdict},
          {"summary", e.summary},
          {"feedback", e.feedback},
          {"model", e.model},
          {"attempts", e.attempts},
          {"cost_usd", e.cost_usd},
          {"input_tokens", e.input_tokens},
          {"output_tokens", e.output_tokens}};
}

// The variant's alternatives but the last (OtherEvent), tried by name.
template <std::size_t I = 0>
EventBody read_known(const std::string& type, const json& data) {
  if constexpr (I + 1 < std::variant_size_v<EventBody>) {
    using T = std::variant_alternative_t<I, EventBody>;
    if (type == Codec<T>::name) return Codec<T>::read(data);
    return read_known<I + 1>(type, data);
  } else {
    return OtherEvent{type, data};
  }
}

}  // namespace

std::string type_name(const EventBody& body) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, OtherEvent>)
          return e.type;
        else
          return std::string(Codec<T>::name);
      },
      body);
}

EventBody decode_body(const std::string& type, const nlohmann::json& data) {
  const json& d = data.is_object() ? data : json::object();
  try {
    return read_known(type, d);
  } catch (const nlohmann::json::exception&) {
    return OtherEvent{type, data};  // a field of the wrong type: shown as it came
  }
}

nlohmann::json encode_body(const EventBody& body) {
  return std::visit(
      [](const auto& e) -> json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, OtherEvent>)
          return e.data;
        else
          return Codec<T>::write(e);
      },
      body);
}

TypedEvent decode(const Event& event) {
  return {event.seq, event.time, event.loop_id, decode_body(event.type, event.data)};
}

Event encode(const std::string& loop_id, const EventBody& body) {
  Event e;
  e.loop_id = loop_id;
  e.type = type_name(body);
  e.data = encode_body(body);
  return e;
}

std::string_view to_string(CapKind kind) {
  switch (kind) {
    case CapKind::runtime:
      return "runtime";
    case CapKind::input_tokens:
      return "input_tokens";
    case CapKind::cost:
      break;
  }
  return "cost";
}

}  // namespace loopr::api
