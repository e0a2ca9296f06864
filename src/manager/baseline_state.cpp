#include <loopr/core/enum_texts.hpp>
#include <loopr/manager/baseline_state.hpp>
#include <loopr/store/task_store.hpp>

namespace loopr::manager {

namespace {

constexpr EnumText<BaselineResult> kResults[] = {{BaselineResult::none, ""},
                                                  {BaselineResult::checking, "checking"},
                                                  {BaselineResult::passed, "passed"},
                                                  {BaselineResult::failed, "failed"},
                                                  {BaselineResult::unavailable, "unavailable"}};

}  // namespace

const char* to_string(BaselineResult result) { return text_of(kResults, result); }

BaselineResult parse_baseline_result(std::string_view text) {
  return value_of(kResults, text, BaselineResult::none);
}

std::string baseline_state_key(const std::string& plan_id) { return "baseline-of/" + plan_id; }

nlohmann::json to_json(const BaselineState& s) {
  return {{"result", to_string(s.result)}, {"sha", s.sha},
          {"summary", s.summary},   {"output", s.output},
          {"log", s.log},           {"ms", s.ms},
          {"setup_ms", s.setup_ms}, {"fingerprint", s.fingerprint},
          {"outputs", s.outputs}};
}

BaselineState baseline_state_from_json(const nlohmann::json& j) {
  BaselineState s;
  if (!j.is_object()) return s;
  s.result = parse_baseline_result(j.value("result", ""));
  s.sha = j.value("sha", "");
  s.summary = j.value("summary", "");
  s.output = j.value("output", "");
  s.log = j.value("log", "");
  s.ms = j.value("ms", std::int64_t{0});
  s.setup_ms = j.value("setup_ms", std::int64_t{0});
  s.fingerprint = j.value("fingerprint", "");
  if (auto it = j.find("outputs"); it != j.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_string()) s.outputs.push_back(o.get<std::string>());
  return s;
}

BaselineState baseline_of(const TaskStore& store, const std::string& plan_id) {
  auto text = store.get_meta(baseline_state_key(plan_id));
  if (!text || !*text) return {};
  return baseline_state_from_json(nlohmann::json::parse(**text, nullptr, false));
}

}  // namespace loopr::manager
