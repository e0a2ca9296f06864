#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <mock_llm/script.hpp>
#include <mock_llm/template.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include <loopr/core/config.hpp>

namespace loopr::mock_llm {

const char* to_string(Api api) {
  switch (api) {
    case Api::anthropic:
      return "anthropic";
    case Api::openai:
      return "openai";
    case Api::responses:
      return "responses";
    case Api::gemini:
      return "gemini";
  }
  return "anthropic";
}

const char* to_string(Field field) {
  switch (field) {
    case Field::loop_type:
      return "loop_type";
    case Field::loop_id:
      return "loop_id";
    case Field::system:
      return "system";
    case Field::user:
      return "user";
    case Field::first_user:
      return "first_user";
    case Field::tool_result:
      return "tool_result";
    case Field::model:
      return "model";
  }
  return "?";
}

bool is_named_fault_kind(std::string_view kind) {
  return kind == "cut_stream" || kind == "malformed_json" || kind == "error_event" ||
         kind == "hang" || kind == "stall";
}

std::string FaultSpec::kind() const {
  if (hang) return "hang";
  if (status) return std::to_string(*status);
  if (!error_event.empty()) return "error_event";
  if (malformed_json) return "malformed_json";
  if (cut_after_events) return "cut_stream";
  if (stall_after_events) return "stall";
  return "delay";
}

namespace {

/// Thrown inside the parser only; parse_script turns it into an Error value.
struct ScriptError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const std::set<std::string, std::less<>> kStopReasons = {"end_turn",
                                                         "tool_use",
                                                         "max_tokens",
                                                         "stop_sequence",
                                                         "pause_turn",
                                                         "refusal",
                                                         "model_context_window_exceeded"};

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  Script parse(const YAML::Node& root) {
    Script script;
    if (!root || root.IsNull()) fail(root, "the script is empty (it needs `rules:`)");
    if (!root.IsMap()) fail(root, "the script must be a mapping with `rules:`");
    check_keys(root, {"defaults", "faults", "rules"}, "the script");
    if (root["defaults"]) script.defaults = parse_defaults(root["defaults"]);
    if (root["faults"]) script.faults = parse_faults(root["faults"]);
    const YAML::Node rules = root["rules"];
    if (!rules || !rules.IsSequence()) fail(root, "`rules:` must be a list of rules");
    std::set<std::string> names;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      Rule rule = parse_rule(rules[i], i, script.defaults);
      if (!names.insert(rule.name).second)
        fail(rules[i], "two rules are named '" + rule.name + "'");
      script.rules.push_back(std::move(rule));
    }
    return script;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    std::string where = source_;
    if (at.IsDefined()) {
      YAML::Mark mark = at.Mark();
      if (mark.line >= 0)
        where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    throw ScriptError(where + ": " + message);
  }

  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  const std::string& what) const {
    if (!map.IsMap()) fail(map, what + " must be a mapping");
    for (const auto& kv : map) {
      auto key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(kv.first, "unknown key `" + key + "` in " + what + " (known: " + list + ")");
      }
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, what + " must be a single value");
    return n.Scalar();
  }

  std::int64_t integer(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    try {
      std::size_t used = 0;
      long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
    fail(n, what + " must be a whole number, not `" + s + "`");
  }

  double number(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    try {
      std::size_t used = 0;
      double v = std::stod(s, &used);
      if (used == s.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    fail(n, what + " must be a number, not `" + s + "`");
  }

  bool boolean(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    if (s == "true" || s == "True" || s == "TRUE" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "FALSE" || s == "no") return false;
    fail(n, what + " must be true or false, not `" + s + "`");
  }

  Millis duration(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    auto d = parse_duration(s);
    if (!d) fail(n, what + " must be a duration with a unit such as 300ms or 2s, not `" + s + "`");
    return *d;
  }

  /// YAML → JSON, typing plain scalars the YAML 1.2 core way and keeping quoted ones strings
  /// (so `count: 3` is a number and `count: "3"` a string, as a script author expects).
  Json to_json(const YAML::Node& n) const {
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Sequence: {
        Json out = Json::array();
        for (const auto& item : n) out.push_back(to_json(item));
        return out;
      }
      case YAML::NodeType::Map: {
        Json out = Json::object();
        for (const auto& kv : n) out[kv.first.as<std::string>()] = to_json(kv.second);
        return out;
      }
      case YAML::NodeType::Scalar:
        break;
    }
    const std::string& s = n.Scalar();
    if (n.Tag() != "?") return s;  // quoted or block scalar: always a string
    if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    static const RE2 kInt("[-+]?[0-9]+");
    static const RE2 kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
    try {
      if (RE2::FullMatch(s, kInt)) return std::stoll(s);
      if (RE2::FullMatch(s, kFloat)) return std::stod(s);
    } catch (const std::out_of_range&) {
      return s;
    }
    return s;
  }

  UsageSpec parse_usage(const YAML::Node& n) const {
    check_keys(
        n,
        {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"},
        "usage");
    UsageSpec u;
    if (n["input_tokens"]) u.input_tokens = integer(n["input_tokens"], "usage.input_tokens");
    if (n["output_tokens"]) u.output_tokens = integer(n["output_tokens"], "usage.output_tokens");
    if (n["cache_read_input_tokens"])
      u.cache_read_input_tokens =
          integer(n["cache_read_input_tokens"], "usage.cache_read_input_tokens");
    if (n["cache_creation_input_tokens"])
      u.cache_creation_input_tokens =
          integer(n["cache_creation_input_tokens"], "usage.cache_creation_input_tokens");
    return u;
  }

  Defaults parse_defaults(const YAML::Node& n) const {
    check_keys(n,
               {"model", "usage", "thinking", "latency", "event_delay", "prompt_cache",
                "cache_min_tokens"},
               "defaults");
    Defaults d;
    if (n["model"]) d.model = scalar(n["model"], "defaults.model");
    if (n["usage"]) d.usage = parse_usage(n["usage"]);
    if (n["thinking"]) d.thinking = boolean(n["thinking"], "defaults.thinking");
    if (n["latency"]) d.latency = duration(n["latency"], "defaults.latency");
    if (n["event_delay"]) d.event_delay = duration(n["event_delay"], "defaults.event_delay");
    if (n["prompt_cache"]) d.prompt_cache = boolean(n["prompt_cache"], "defaults.prompt_cache");
    if (n["cache_min_tokens"])
      d.cache_min_tokens = integer(n["cache_min_tokens"], "defaults.cache_min_tokens");
    return d;
  }

  RandomFaults parse_faults(const YAML::Node& n) const {
    check_keys(n, {"rate", "seed", "kinds", "retry_after"}, "faults");
    RandomFaults f;
    if (n["rate"]) f.rate = number(n["rate"], "faults.rate");
    if (f.rate < 0 || f.rate > 1) fail(n["rate"], "faults.rate must be between 0 and 1");
    if (n["seed"]) f.seed = static_cast<std::uint64_t>(integer(n["seed"], "faults.seed"));
    if (n["retry_after"]) f.retry_after = scalar(n["retry_after"], "faults.retry_after");
    if (n["kinds"]) {
      if (!n["kinds"].IsSequence()) fail(n["kinds"], "faults.kinds must be a list");
      for (const auto& k : n["kinds"]) {
        std::string kind = scalar(k, "a fault kind");
        if (!is_named_fault_kind(kind)) {
          int status = static_cast<int>(integer(k,
                                                "a fault kind (an HTTP status or cut_stream, "
                                                "malformed_json, error_event, hang, stall)"));
          if (status < 400 || status > 599) fail(k, "a fault status must be 4xx or 5xx");
        }
        f.kinds.push_back(kind);
      }
    } else {
      f.kinds = {"429", "500", "529", "cut_stream", "malformed_json", "error_event"};
    }
    if (f.rate > 0 && f.kinds.empty()) fail(n, "faults.kinds is empty");
    return f;
  }

  std::shared_ptr<const re2::RE2> regex(const YAML::Node& n, const std::string& what) const {
    std::string pattern = scalar(n, what);
    RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_shared<const RE2>(pattern, options);
    if (!re->ok()) fail(n, what + " is not a valid RE2 pattern: " + re->error());
    return re;
  }

  MatchSpec parse_match(const YAML::Node& n) const {
    check_keys(n,
               {"api", "loop_type", "loop_id", "system", "user", "first_user", "tool_result",
                "model", "turn"},
               "match");
    MatchSpec m;
    if (n["api"]) {
      std::string api = scalar(n["api"], "match.api");
      if (api == "anthropic")
        m.api = Api::anthropic;
      else if (api == "openai")
        m.api = Api::openai;
      else if (api == "responses")
        m.api = Api::responses;
      else if (api == "gemini")
        m.api = Api::gemini;
      else
        fail(n["api"], "match.api must be anthropic, openai, responses or gemini");
    }
    for (Field f : kAllFields) {
      std::string key = to_string(f);
      if (n[key]) m.patterns.push_back({f, regex(n[key], "match." + key)});
    }
    if (n["turn"]) m.turn = static_cast<int>(integer(n["turn"], "match.turn"));
    return m;
  }

  FaultSpec parse_fault(const YAML::Node& n) const {
    check_keys(n,
               {"status", "error_type", "error_code", "message", "retry_after", "retry_after_ms",
                "should_retry", "delay", "cut_after_events", "stall_after_events", "error_event",
                "malformed_json", "hang"},
               "fault");
    FaultSpec f;
    if (n["status"]) {
      f.status = static_cast<int>(integer(n["status"], "fault.status"));
      if (*f.status < 100 || *f.status > 599) fail(n["status"], "fault.status must be 100..599");
    }
    if (n["error_type"]) f.error_type = scalar(n["error_type"], "fault.error_type");
    if (n["error_code"]) f.error_code = scalar(n["error_code"], "fault.error_code");
    if (n["message"]) f.message = scalar(n["message"], "fault.message");
    if (n["retry_after"]) f.retry_after = scalar(n["retry_after"], "fault.retry_after");
    if (n["retry_after_ms"])
      f.retry_after_ms = integer(n["retry_after_ms"], "fault.retry_after_ms");
    if (n["should_retry"]) f.should_retry = boolean(n["should_retry"], "fault.should_retry");
    if (n["delay"]) f.delay = duration(n["delay"], "fault.delay");
    if (n["cut_after_events"])
      f.cut_after_events = static_cast<std::size_t>(
          std::max<std::int64_t>(0, integer(n["cut_after_events"], "fault.cut_after_events")));
    if (n["stall_after_events"])
      f.stall_after_events = static_cast<std::size_t>(
          std::max<std::int64_t>(0, integer(n["stall_after_events"], "fault.stall_after_events")));
    if (n["error_event"]) {
      f.error_event = scalar(n["error_event"], "fault.error_event");
      if (f.error_event == "true") f.error_event = "overloaded_error";
    }
    if (n["malformed_json"])
      f.malformed_json = boolean(n["malformed_json"], "fault.malformed_json");
    if (n["hang"]) f.hang = boolean(n["hang"], "fault.hang");
    return f;
  }

  BlockSpec parse_tool_use(const YAML::Node& n) const {
    check_keys(n, {"name", "input", "id"}, "tool_use");
    BlockSpec b;
    b.kind = BlockKind::tool_use;
    if (!n["name"]) fail(n, "a tool_use needs a `name`");
    b.name = scalar(n["name"], "tool_use.name");
    b.input = n["input"] ? to_json(n["input"]) : Json::object();
    if (b.input.is_null()) b.input = Json::object();
    if (!b.input.is_object()) fail(n["input"], "tool_use.input must be a mapping");
    if (n["id"]) b.id = scalar(n["id"], "tool_use.id");
    return b;
  }

  void add_tool_uses(const YAML::Node& n, std::vector<BlockSpec>& blocks) const {
    if (n.IsSequence()) {
      for (const auto& item : n) blocks.push_back(parse_tool_use(item));
    } else {
      blocks.push_back(parse_tool_use(n));
    }
  }

  std::vector<BlockSpec> parse_blocks(const YAML::Node& n) const {
    if (!n.IsSequence()) fail(n, "`blocks` must be a list");
    std::vector<BlockSpec> blocks;
    for (const auto& item : n) {
      check_keys(item, {"thinking", "redacted_thinking", "text", "tool_use", "raw"}, "a block");
      if (item.size() != 1) fail(item, "each block has exactly one key (thinking, text, …)");
      auto kv = *item.begin();
      auto key = kv.first.as<std::string>();
      BlockSpec b;
      if (key == "tool_use") {
        add_tool_uses(kv.second, blocks);
        continue;
      }
      if (key == "raw") {
        b.kind = BlockKind::raw;
        b.input = to_json(kv.second);
        if (!b.input.is_object() || !b.input.contains("type"))
          fail(kv.second, "a raw block must be a mapping with a `type`");
      } else {
        b.kind = key == "thinking"            ? BlockKind::thinking
                 : key == "redacted_thinking" ? BlockKind::redacted_thinking
                                              : BlockKind::text;
        b.text = kv.second.IsNull() ? "" : scalar(kv.second, key);
      }
      blocks.push_back(std::move(b));
    }
    return blocks;
  }

  ReplySpec parse_reply(const YAML::Node& n, const Defaults& defaults) const {
    check_keys(n,
               {"text", "thinking", "redacted_thinking", "tool_use", "blocks", "stop_reason",
                "stop_details", "stop_sequence", "usage", "model", "fault", "event_delay"},
               "a reply");
    ReplySpec r;
    if (n["blocks"]) {
      if (n["text"] || n["thinking"] || n["tool_use"] || n["redacted_thinking"])
        fail(n, "a reply has either `blocks` or text/thinking/tool_use, not both");
      r.blocks = parse_blocks(n["blocks"]);
    } else {
      bool thinking = defaults.thinking;
      std::string thinking_text;
      if (const auto t = n["thinking"]) {
        std::string s = scalar(t, "thinking");
        if (t.Tag() == "?" && (s == "true" || s == "false")) {
          thinking = s == "true";
        } else {
          thinking = true;
          thinking_text = s;
        }
      }
      if (thinking) r.blocks.push_back({BlockKind::thinking, thinking_text, "", nullptr, ""});
      if (n["redacted_thinking"])
        r.blocks.push_back({BlockKind::redacted_thinking,
                            scalar(n["redacted_thinking"], "redacted_thinking"), "", nullptr, ""});
      if (n["text"])
        r.blocks.push_back({BlockKind::text, scalar(n["text"], "text"), "", nullptr, ""});
      if (n["tool_use"]) add_tool_uses(n["tool_use"], r.blocks);
    }
    if (n["stop_reason"]) {
      r.stop_reason = scalar(n["stop_reason"], "stop_reason");
      if (!kStopReasons.count(r.stop_reason)) {
        std::string list;
        for (const auto& s : kStopReasons) list += (list.empty() ? "" : ", ") + s;
        fail(n["stop_reason"], "unknown stop_reason `" + r.stop_reason + "` (known: " + list + ")");
      }
    }
    if (n["stop_details"]) r.stop_details = to_json(n["stop_details"]);
    if (n["stop_sequence"]) r.stop_sequence = scalar(n["stop_sequence"], "stop_sequence");
    if (n["usage"]) r.usage = parse_usage(n["usage"]);
    if (n["model"]) r.model = scalar(n["model"], "model");
    if (n["fault"]) r.fault = parse_fault(n["fault"]);
    if (n["event_delay"]) r.event_delay = duration(n["event_delay"], "event_delay");
    return r;
  }

  /// Rejects `{{…}}` names the rule cannot fill, so a typo fails at load, not in a reply.
  void check_templates(const YAML::Node& at, const Rule& rule, const ReplySpec& reply) const {
    std::set<std::string, std::less<>> known = {"loop_id", "loop_type", "n",
                                                "turn",    "model",     "api"};
    for (const Pattern& p : rule.match.patterns) {
      std::string f = to_string(p.field);
      for (int g = 0; g <= p.regex->NumberOfCapturingGroups(); ++g)
        known.insert(f + "." + std::to_string(g));
      for (const auto& [name, index] : p.regex->NamedCapturingGroups())
        known.insert(f + "." + name);
    }
    auto check = [&](const std::string& text) {
      for (const auto& var : template_variables(text)) {
        if (!known.count(var)) {
          std::string list;
          for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
          fail(at, "rule '" + rule.name + "' uses {{" + var +
                       "}}, which it cannot fill (it has: " + list + ")");
        }
      }
    };
    std::function<void(const Json&)> check_json = [&](const Json& j) {
      if (j.is_string())
        check(j.get<std::string>());
      else if (j.is_structured())
        for (const auto& item : j) check_json(item);
    };
    for (const BlockSpec& b : reply.blocks) {
      check(b.text);
      check(b.name);
      check_json(b.input);
    }
    if (reply.fault) check(reply.fault->message);
  }

  Rule parse_rule(const YAML::Node& n, std::size_t index, const Defaults& defaults) const {
    check_keys(n, {"name", "match", "times", "per_loop", "random_faults", "replies", "reply"},
               "a rule");
    Rule rule;
    rule.name = n["name"] ? scalar(n["name"], "name") : "rule-" + std::to_string(index + 1);
    if (n["match"]) rule.match = parse_match(n["match"]);
    if (n["times"]) {
      rule.times = integer(n["times"], "times");
      if (*rule.times < 1) fail(n["times"], "times must be at least 1");
    }
    if (n["per_loop"]) rule.per_loop = boolean(n["per_loop"], "per_loop");
    if (n["random_faults"]) rule.random_faults = boolean(n["random_faults"], "random_faults");
    if (n["replies"] && n["reply"])
      fail(n, "rule '" + rule.name + "' has both `reply` and `replies`");
    if (n["reply"]) {
      rule.replies.push_back(parse_reply(n["reply"], defaults));
      check_templates(n["reply"], rule, rule.replies.back());
    } else if (n["replies"]) {
      if (!n["replies"].IsSequence() || n["replies"].size() == 0)
        fail(n["replies"], "`replies` must be a non-empty list");
      for (const auto& r : n["replies"]) {
        rule.replies.push_back(parse_reply(r, defaults));
        check_templates(r, rule, rule.replies.back());
      }
    } else {
      fail(n, "rule '" + rule.name + "' needs `reply` or `replies`");
    }
    return rule;
  }

  std::string source_;
};

}  // namespace

Result<Script> parse_script(const std::string& yaml_text, const std::string& source_name) {
  try {
    YAML::Node root = YAML::Load(yaml_text);
    return Parser(source_name).parse(root);
  } catch (const ScriptError& e) {
    return make_error(ErrorCode::invalid_argument, e.what());
  } catch (const YAML::Exception& e) {
    std::string where = source_name;
    if (e.mark.line >= 0)
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    return make_error(ErrorCode::invalid_argument, where + ": " + e.msg);
  }
}

Result<Script> load_script_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot read the script " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_script(text.str(), path);
}

}  // namespace loopr::mock_llm
