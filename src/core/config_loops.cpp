// `loops:` each loop type's settings (`loops.plan` … `loops.code`: tools, iterations, validation,
// model) and the reviewer (`loops.review`), with the types' defaults.
#include <set>

#include <loopr/core/config.hpp>

#include "core/config_sections.hpp"

namespace loopr {

std::map<LoopType, LoopTypeConfig> Config::default_loops() {
  LoopTypeConfig doc;  // plan, spec, phase: format check
  LoopTypeConfig code;
  code.max_iterations = 20;
  code.validation = "make test";
  return {
      {LoopType::plan, doc}, {LoopType::spec, doc}, {LoopType::phase, doc}, {LoopType::code, code}};
}

namespace config_detail {

namespace {

// `loops.<type>.tools`: known names, no repeats, and only a narrowing of what the type has.
std::vector<std::string> read_tools(const Walker& w, const YAML::Node& v, const std::string& k,
                                    LoopType type) {
  std::vector<std::string> out = w.strings(v, k);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& name = out[i];
    bool known = false;
    std::string list;
    for (const char* t : kToolNames) {
      known = known || name == t;
      list += (list.empty() ? "" : ", ") + std::string(t);
    }
    const YAML::Node item = v[i];
    if (!known) w.fail(item, k, "unknown tool \"" + name + "\" (the tools are " + list + ")");
    if (!seen.insert(name).second) w.fail(item, k, "\"" + name + "\" is listed twice");
    if (name == "share_note" && type == LoopType::plan)
      w.fail(item, k,
             "share_note is not available to plan loops (a plan has no siblings; its artifact is "
             "what its children read)");
    if (name == "run_command" && type != LoopType::code)
      w.fail(item, k,
             std::string("run_command is not available to ") + to_string(type) +
                 " loops (they only write their markdown artifact; only code loops run commands)");
  }
  return out;
}

void read_loop_type(const Walker& w, const YAML::Node& node, const std::string& path,
                    LoopTypeConfig& c, LoopType type) {
  w.map(
      node, path,
      {
          {"tools",
           [&](const YAML::Node& v, const std::string& k) { c.tools = read_tools(w, v, k, type); }},
          {"max_iterations",
           [&](const YAML::Node& v, const std::string& k) {
             c.max_iterations = static_cast<int>(w.integer(v, k, 1, 10000));
           }},
          {"validation",
           [&](const YAML::Node& v, const std::string& k) {
             // Plan, spec and phase loops are checked by the built-in format check: a command
             // here would be accepted and never run.
             if (type != LoopType::code)
               w.fail(v, k,
                      std::string("a ") + to_string(type) +
                          " loop is checked by the built-in format check "
                          "(and the judge, llm.judge); only loops.code.validation runs a command");
             c.validation = w.str(v, k);
           }},
          {"iteration_timeout",
           [&](const YAML::Node& v, const std::string& k) {
             c.iteration_timeout = w.duration(v, k);
           }},
          {"max_turns_per_iteration",
           [&](const YAML::Node& v, const std::string& k) {
             c.max_turns_per_iteration = static_cast<int>(w.integer(v, k, 1, 10000));
           }},
          {"iteration_max_runtime",
           [&](const YAML::Node& v, const std::string& k) {
             // `none` (or 0, or nothing): no limit, the default.
             const bool none = v.IsNull() || (v.IsScalar() && v.Scalar() == "none");
             c.iteration_max_runtime = none ? Duration::zero() : w.duration(v, k);
           }},
          {"model", [&](const YAML::Node& v, const std::string& k) { c.model = w.str(v, k); }},
          {"provider", [&](const YAML::Node& v,
                           const std::string& k) { c.provider = w.choice(v, k, kProviders); }},
      });
}

// `loops.review`: the reviewer of a code loop that passed its validation.
void read_review(const Walker& w, const YAML::Node& v, const std::string& k, ReviewConfig& r) {
  w.map(
      v, k,
      {
          {"enabled",
           [&](const YAML::Node& n, const std::string& key) { r.enabled = w.boolean(n, key); }},
          {"model", [&](const YAML::Node& n, const std::string& key) { r.model = w.str(n, key); }},
          {"provider", [&](const YAML::Node& n,
                           const std::string& key) { r.provider = w.choice(n, key, kProviders); }},
          {"max_rounds",
           [&](const YAML::Node& n, const std::string& key) {
             r.max_rounds = static_cast<int>(w.integer(n, key, 1, 100));
           }},
          {"max_attempts",
           [&](const YAML::Node& n, const std::string& key) {
             r.max_attempts = static_cast<int>(w.integer(n, key, 1, 20));
           }},
      });
}

}  // namespace

// `loops:` a mapping of loop type (or `review`) to its settings
void read_loops(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  std::map<std::string, H> hs;
  for (LoopType t : kAllLoopTypes) {
    LoopTypeConfig* slot = &c.loops[t];
    hs[to_string(t)] = [&w, slot, t](const YAML::Node& v2, const std::string& k2) {
      read_loop_type(w, v2, k2, *slot, t);
    };
  }
  hs["review"] = [&w, &c](const YAML::Node& v2, const std::string& k2) {
    read_review(w, v2, k2, c.review);
  };
  w.map(v, k, hs);
}

}  // namespace config_detail
}  // namespace loopr
