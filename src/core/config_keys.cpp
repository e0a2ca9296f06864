// The config file's top-level keys, one handler each (the bigger sections live in their own
// files: config_llm, config_loops, config_sandbox, config_executor), and the sections that are
// only a table of keys: concurrency, limits, pricing, artifacts, notify, integration, forge,
// daemon, gc, git.
#include <loopr/core/config.hpp>

#include "core/config_sections.hpp"

namespace loopr::config_detail {

H Fields::int_field(int& field, long long min, long long max) const {
  return [&w = w, &field, min, max](const YAML::Node& v, const std::string& k) {
    field = static_cast<int>(w.integer(v, k, min, max));
  };
}

H Fields::str_field(std::string& field) const {
  return [&w = w, &field](const YAML::Node& v, const std::string& k) { field = w.str(v, k); };
}

H Fields::dur_field(Duration& field) const {
  return [&w = w, &field](const YAML::Node& v, const std::string& k) { field = w.duration(v, k); };
}

H Fields::bool_field(bool& field) const {
  return [&w = w, &field](const YAML::Node& v, const std::string& k) { field = w.boolean(v, k); };
}

H Fields::size_field(std::size_t& field, long long min, long long max) const {
  return [&w = w, &field, min, max](const YAML::Node& v, const std::string& k) {
    field = static_cast<std::size_t>(w.integer(v, k, min, max));
  };
}

H Fields::byte_size(std::uint64_t& field, std::uint64_t min) const {
  return [&w = w, &field, min](const YAML::Node& v, const std::string& k) {
    std::string text = w.scalar(v, k, "a size such as 50M or 1G");
    auto parsed = parse_size(text);
    if (!parsed) w.fail(v, k, "bad size \"" + text + "\" (write e.g. 4096, 512K, 64M or 1G)");
    if (*parsed < min) w.fail(v, k, "must be at least " + format_size(min) + ", got " + text);
    field = *parsed;
  };
}

H Fields::named_ints(std::map<std::string, int>& field, long long min) const {
  return [&w = w, &field, min](const YAML::Node& v, const std::string& k) {
    std::map<std::string, H> hs;
    for (auto& [name, value] : field) {
      int* slot = &value;
      hs[name] = [&w, slot, min](const YAML::Node& v2, const std::string& k2) {
        *slot = static_cast<int>(w.integer(v2, k2, min, 1'000'000));
      };
    }
    w.map(v, k, hs);
  };
}

namespace {

// `concurrency:` how many loops, model calls and runners at once
void read_concurrency(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  ConcurrencyConfig& cc = c.concurrency;
  w.map(v, k,
        {
            {"max_loops", f.int_field(cc.max_loops, 1, 1'000'000)},
            {"llm_slots", f.int_field(cc.llm_slots, 1, 10'000)},
            {"requests_per_minute", f.int_field(cc.requests_per_minute, 1, 1'000'000)},
            {"runners", f.named_ints(cc.runners, 1)},
            {"priority", f.named_ints(cc.priority, 0)},
            {"runner_patterns",
             [&](const YAML::Node& v2, const std::string& k2) {
               std::map<std::string, H> hs;
               for (auto& [name, value] : cc.runner_patterns) {
                 auto* slot = &value;
                 hs[name] = [&w, slot](const YAML::Node& v3, const std::string& k3) {
                   *slot = w.patterns(v3, k3);
                 };
               }
               w.map(v2, k2, hs);
             }},
        });
}

// `limits:` what a loop or a tree may spend, and when a loop stops
void read_limits(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  LimitsConfig& l = c.limits;
  w.map(v, k,
        {
            {"max_cost_usd", [&](const YAML::Node& v2,
                                 const std::string& k2) { l.max_cost_usd = w.number(v2, k2, 0); }},
            {"max_loop_cost_usd",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.max_loop_cost_usd = w.number(v2, k2, 0);
             }},
            {"max_runtime", f.dur_field(l.max_runtime)},
            {"circuit_breaker", f.int_field(l.circuit_breaker, 1, 10000)},
            {"no_progress_iterations", f.int_field(l.no_progress_iterations, 1, 10000)},
            {"max_same_failures", f.int_field(l.max_same_failures, 0, 10000)},
            {"stop_on_patterns",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.stop_on_patterns = w.patterns(v2, k2);
             }},
            {"stop_scripts", [&](const YAML::Node& v2,
                                 const std::string& k2) { l.stop_scripts = w.strings(v2, k2); }},
            {"cooldown", f.dur_field(l.cooldown)},
            {"completion_signal",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.completion_signal = v2.IsNull() ? std::string() : w.pattern(v2, k2);
             }},
            {"feedback_bytes", f.size_field(l.feedback_bytes, 256, 10'000'000)},
            {"notes_bytes", f.size_field(l.notes_bytes, 0, 10'000'000)},
            {"min_free_space",
             [&](const YAML::Node& v2, const std::string& k2) {
               std::string text = w.scalar(v2, k2, "a size such as 256M or 1G");
               auto parsed = parse_size(text);
               if (!parsed) w.fail(v2, k2, "bad size \"" + text + "\" (write e.g. 0, 256M or 1G)");
               l.min_free_space = *parsed;
             }},
            {"at_cost_limit",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.pause_at_limit = w.choice(v2, k2, {"pause", "fail"}) == "pause";
             }},
            {"max_input_tokens",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.max_input_tokens = w.integer(v2, k2, 0, 1'000'000'000'000LL);
             }},
            {"count_subscription_cost",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.count_subscription_cost = w.boolean(v2, k2);
             }},
            {"notify_cost_fraction",
             [&](const YAML::Node& v2, const std::string& k2) {
               l.notify_cost_fraction = w.number(v2, k2, 0);
               if (l.notify_cost_fraction > 1) w.fail(v2, k2, "must be a fraction between 0 and 1");
             }},
        });
}

// `pricing:` model name to its prices (per million tokens)
void read_pricing(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  if (v.IsNull()) return;
  if (!v.IsMap()) w.fail(v, k, "expected a mapping of model name to prices");
  for (const auto& kv : v) {
    std::string model = kv.first.as<std::string>();
    Price p = c.pricing.count(model) ? c.pricing[model] : Price{};
    auto price = [&w](double& field) -> H {
      return [&w, &field](const YAML::Node& v3, const std::string& k3) {
        field = w.number(v3, k3, 0);
      };
    };
    w.map(kv.second, k + "." + model,
          {{"input", price(p.input)},
           {"output", price(p.output)},
           {"cache_write", price(p.cache_write)},
           {"cache_read", price(p.cache_read)}});
    c.pricing[model] = p;
  }
}

// `artifacts:` the size of a loop's markdown artifact
void read_artifacts(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(v, k,
        {
            {"max_items", f.int_field(c.artifacts.max_items, 1, 1000)},
            {"max_bytes", f.size_field(c.artifacts.max_bytes, 1024, 1'000'000'000)},
        });
}

// `notify:` a list of {command, events, timeout}.
void read_notify(const Walker& w, const YAML::Node& v, const std::string& k,
                 std::vector<NotifyCommand>& out) {
  out.clear();
  if (v.IsNull()) return;
  if (!v.IsSequence()) w.fail(v, k, "expected a list of {command, events, timeout} entries");
  for (std::size_t i = 0; i < v.size(); ++i) {
    NotifyCommand n;
    const std::string key = k + "[" + std::to_string(i) + "]";
    w.map(v[i], key,
          {
              {"command",
               [&](const YAML::Node& n2, const std::string& k2) { n.command = w.str(n2, k2); }},
              {"events",
               [&](const YAML::Node& n2, const std::string& k2) {
                 n.events = w.strings(n2, k2);
                 for (std::size_t j = 0; j < n.events.size(); ++j) {
                   bool known = false;
                   std::string list;
                   for (const char* e : kNotifyEvents) {
                     known = known || n.events[j] == e;
                     list += (list.empty() ? "" : ", ") + std::string(e);
                   }
                   if (!known)
                     w.fail(n2[j], k2,
                            "unknown event \"" + n.events[j] + "\" (the events are " + list + ")");
                 }
               }},
              {"timeout", [&](const YAML::Node& n2,
                              const std::string& k2) { n.timeout = w.duration(n2, k2); }},
          });
    if (n.command.empty()) w.fail(v[i], key, "needs a `command` (the shell command to run)");
    out.push_back(std::move(n));
  }
}

// `integration:` the integration gate's fix loop
void read_integration(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(v, k,
        {{"max_fix_iterations", f.int_field(c.integration.max_fix_iterations, 1, 1000)},
         {"model", f.str_field(c.integration.model)},
         {"provider", [&](const YAML::Node& v2, const std::string& k2) {
            c.integration.provider = w.choice(v2, k2, kProviders);
          }}});
}

// `forge:` (merge: pr). A gitlab forge whose api_url / token_env are not given takes GitLab's.
void read_forge(const Walker& w, const YAML::Node& v, const std::string& k, ForgeConfig& f) {
  bool api_given = false, token_given = false;
  auto text = [&w](std::string& field, bool* given) -> H {
    return [&w, &field, given](const YAML::Node& n, const std::string& key) {
      field = w.str(n, key);
      if (given) *given = true;
    };
  };
  w.map(v, k,
        {
            {"kind",
             [&](const YAML::Node& n, const std::string& key) {
               f.kind = w.choice(n, key, {"github", "gitlab"}) == "gitlab" ? ForgeKind::gitlab
                                                                           : ForgeKind::github;
             }},
            {"api_url", text(f.api_url, &api_given)},
            {"repo", text(f.repo, nullptr)},
            {"remote", text(f.remote, nullptr)},
            {"token_env", text(f.token_env, &token_given)},
            {"ci",
             [&](const YAML::Node& n, const std::string& key) {
               w.map(n, key,
                     {
                         {"wait", [&](const YAML::Node& m,
                                      const std::string& k2) { f.ci.wait = w.boolean(m, k2); }},
                         {"timeout",
                          [&](const YAML::Node& m, const std::string& k2) {
                            f.ci.timeout = w.duration(m, k2);
                          }},
                         {"fix_iterations",
                          [&](const YAML::Node& m, const std::string& k2) {
                            f.ci.fix_iterations = static_cast<int>(w.integer(m, k2, 0, 1000));
                          }},
                         {"poll_max",
                          [&](const YAML::Node& m, const std::string& k2) {
                            f.ci.poll_max = w.duration(m, k2);
                          }},
                     });
             }},
        });
  if (f.kind == ForgeKind::gitlab && !api_given) f.api_url = "https://gitlab.com/api/v4";
  if (f.kind == ForgeKind::gitlab && !token_given) f.token_env = "GITLAB_TOKEN";
  if (f.ci.poll_max.count() <= 0) f.ci.poll_max = std::chrono::seconds(1);
}

// `daemon:` the daemon's own settings
void read_daemon(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(v, k, {{"sigterm_drain", f.dur_field(c.daemon.sigterm_drain)}});
}

// `gc:` what `loopr gc` removes, and how often the daemon runs it
void read_gc(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(v, k,
        {
            {"older_than", f.dur_field(c.gc.older_than)},
            {"keep_archived", f.dur_field(c.gc.keep_archived)},
            {"every", f.dur_field(c.gc.every)},
        });
}

// `git:` how much of a diff and of the log a loop is shown
void read_git(const Fields& f, const YAML::Node& v, const std::string& k, Config& c) {
  const Walker& w = f.w;
  w.map(v, k,
        {
            {"diff_max_bytes", f.size_field(c.git.diff_max_bytes, 256, 1'000'000'000)},
            {"log_entries", f.int_field(c.git.log_entries, 0, 1000)},
        });
}

}  // namespace

void read_config(const Walker& w, const YAML::Node& root, Config& c) {
  const Fields f{w};
  // A section's handler: `read(f, value, key, c)` of the section's own file.
  auto section =
      [&f, &c](void (*read)(const Fields&, const YAML::Node&, const std::string&, Config&)) -> H {
    return [&f, &c, read](const YAML::Node& v, const std::string& k) { read(f, v, k, c); };
  };
  w.map(
      root, "",
      {
          {"base_branch", f.str_field(c.base_branch)},
          {"merge",
           [&](const YAML::Node& v, const std::string& k) {
             std::string m = w.choice(v, k, {"auto", "manual", "pr"});
             c.merge = m == "manual" ? MergeMode::manual
                       : m == "pr"   ? MergeMode::pr
                                     : MergeMode::automatic;
           }},
          {"attended", f.bool_field(c.attended)},
          {"baseline",
           [&](const YAML::Node& v, const std::string& k) {
             std::string m = w.choice(v, k, {"block", "warn", "off"});
             c.baseline = m == "warn"  ? BaselineMode::warn
                          : m == "off" ? BaselineMode::off
                                       : BaselineMode::block;
           }},
          {"on_failure",
           [&](const YAML::Node& v, const std::string& k) {
             c.on_failure = w.choice(v, k, {"finish_siblings", "stop_siblings"}) == "stop_siblings"
                                ? FailurePolicy::stop_siblings
                                : FailurePolicy::finish_siblings;
           }},
          {"llm", section(read_llm)},
          {"concurrency", section(read_concurrency)},
          {"limits", section(read_limits)},
          {"loops", section(read_loops)},
          {"pricing", section(read_pricing)},
          {"artifacts", section(read_artifacts)},
          {"sandbox",
           [&](const YAML::Node& v, const std::string& k) { read_sandbox(w, v, k, c.sandbox); }},
          {"setup",
           [&](const YAML::Node& v, const std::string& k) { read_setup(w, v, k, c.setup); }},
          {"executor",
           [&](const YAML::Node& v, const std::string& k) { read_executor(w, v, k, c.executor); }},
          {"notify",
           [&](const YAML::Node& v, const std::string& k) { read_notify(w, v, k, c.notify); }},
          {"protect", section(read_protect)},
          {"integration", section(read_integration)},
          {"forge",
           [&](const YAML::Node& v, const std::string& k) { read_forge(w, v, k, c.forge); }},
          {"daemon", section(read_daemon)},
          {"gc", section(read_gc)},
          {"git", section(read_git)},
      });
}

}  // namespace loopr::config_detail
