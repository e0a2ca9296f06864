// The config file's walker: each key of the YAML checked against a table of handlers, so every
// error names the file, line and key. Private to src/core (config.cpp, config_executor.cpp).
#pragma once

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <loopr/core/config.hpp>

namespace loopr::config_detail {

// Thrown inside the walker only; turned into an Error at the edge of parse_config.
struct ConfigError {
  std::string message;
};

class Walker {
 public:
  explicit Walker(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const {
    std::ostringstream out;
    out << source_;
    if (node.IsDefined() && node.Mark().line >= 0) out << ':' << node.Mark().line + 1;
    out << ": " << key << ": " << what;
    throw ConfigError{out.str()};
  }

  using Handler = std::function<void(const YAML::Node& value, const std::string& key)>;

  // Walks a mapping: every key must be in `handlers`.
  void map(const YAML::Node& node, const std::string& path,
           const std::map<std::string, Handler>& handlers) const {
    if (node.IsNull()) return;
    if (!node.IsMap())
      fail(node, path.empty() ? "(top level)" : path, "expected a mapping of keys");
    std::set<std::string> seen;
    for (const auto& kv : node) {
      std::string name = kv.first.as<std::string>();
      std::string key = path.empty() ? name : path + "." + name;
      auto it = handlers.find(name);
      if (it == handlers.end()) {
        std::string known;
        for (const auto& h : handlers) known += (known.empty() ? "" : ", ") + h.first;
        fail(kv.first, key, "unknown key (known here: " + known + ")");
      }
      if (!seen.insert(name).second) fail(kv.first, key, "key given twice");
      it->second(kv.second, key);
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& key, const char* expected) const {
    if (!n.IsScalar()) fail(n, key, std::string("expected ") + expected);
    return n.Scalar();
  }

  std::string str(const YAML::Node& n, const std::string& key) const {
    if (n.IsNull()) return {};
    return scalar(n, key, "a string");
  }

  long long integer(const YAML::Node& n, const std::string& key, long long min,
                    long long max) const {
    std::string s = scalar(n, key, "a whole number");
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != s.size()) fail(n, key, "expected a whole number, got \"" + s + "\"");
    if (v < min || v > max)
      fail(n, key,
           "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + s);
    return v;
  }

  double number(const YAML::Node& n, const std::string& key, double min) const {
    std::string s = scalar(n, key, "a number");
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != s.size()) fail(n, key, "expected a number, got \"" + s + "\"");
    if (v < min)
      fail(n, key,
           "must be at least " + std::to_string(static_cast<long long>(min)) + ", got " + s);
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key, "true or false");
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    fail(n, key, "expected true or false, got \"" + s + "\"");
  }

  Duration duration(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key, "a duration such as 30s, 10m or 4h");
    auto d = parse_duration(s);
    if (!d) fail(n, key, "bad duration \"" + s + "\" (write e.g. 500ms, 30s, 10m, 4h or 1h30m)");
    return *d;
  }

  std::string choice(const YAML::Node& n, const std::string& key,
                     const std::vector<std::string>& allowed) const {
    std::string s = scalar(n, key, "a string");
    std::string list;
    for (const auto& a : allowed) {
      if (s == a) return s;
      list += (list.empty() ? "" : " | ") + a;
    }
    fail(n, key, "must be one of " + list + ", got \"" + s + "\"");
  }

  std::string choice(const YAML::Node& n, const std::string& key,
                     std::initializer_list<const char*> allowed) const {
    std::string s = scalar(n, key, "a string");
    std::string list;
    for (const char* a : allowed) {
      if (s == a) return s;
      list += (list.empty() ? "" : " | ") + std::string(a);
    }
    fail(n, key, "must be one of " + list + ", got \"" + s + "\"");
  }

  /// A string that must be a valid RE2 pattern (checked here, at load, not where it is used).
  std::string pattern(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key, "an RE2 pattern");
    re2::RE2 re(s, re2::RE2::Quiet);
    if (!re.ok()) fail(n, key, "bad RE2 pattern \"" + s + "\": " + re.error());
    return s;
  }

  std::vector<std::string> patterns(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) fail(n, key, "expected a list of RE2 patterns, e.g. [\"error: .*\"]");
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(pattern(n[i], key + "[" + std::to_string(i) + "]"));
    return out;
  }

  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) fail(n, key, "expected a list of strings, e.g. [\"a\", \"b\"]");
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(scalar(n[i], key + "[" + std::to_string(i) + "]", "a string"));
    return out;
  }

 private:
  std::string source_;
};

/// `executor:` (config_executor.cpp).
void read_executor(const Walker& w, const YAML::Node& v, const std::string& k, ExecutorConfig& e);

/// Whether two `executor:` settings are the same (a change needs a daemon restart).
bool same_executor(const ExecutorConfig& a, const ExecutorConfig& b);

}  // namespace loopr::config_detail
