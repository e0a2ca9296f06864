#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <loopr/exec/secrets.hpp>

extern char** environ;

namespace loopr::exec {
namespace {

// The initial environment block [env_start, env_end) from /proc/self/stat (fields 50 and 51).
std::pair<char*, char*> environment_block() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto close = text.rfind(')');
  if (close == std::string::npos) return {nullptr, nullptr};
  std::istringstream fields(text.substr(close + 1));
  std::vector<std::string> f;
  for (std::string x; fields >> x;) f.push_back(x);
  // f[0] is field 3 (state): field N is f[N - 3].
  if (f.size() < 49) return {nullptr, nullptr};
  auto start = std::strtoull(f[50 - 3].c_str(), nullptr, 10);
  auto end = std::strtoull(f[51 - 3].c_str(), nullptr, 10);
  if (start == 0 || end <= start) return {nullptr, nullptr};
  return {reinterpret_cast<char*>(start), reinterpret_cast<char*>(end)};
}

void wipe(char* p, std::size_t n) {
  volatile char* v = p;
  for (std::size_t i = 0; i < n; ++i) v[i] = '\0';
}

// Overwrites the value of every `NAME=value` in [begin, end).
void wipe_in(char* begin, char* end, const std::string& name) {
  std::string prefix = name + "=";
  for (char* p = begin; p < end;) {
    std::size_t len = strnlen(p, static_cast<std::size_t>(end - p));
    if (len >= prefix.size() && std::memcmp(p, prefix.data(), prefix.size()) == 0)
      wipe(p + prefix.size(), len - prefix.size());
    p += len + 1;
  }
}

}  // namespace

SecretEnv SecretEnv::take(const std::vector<std::string>& names) {
  SecretEnv s;
  auto [begin, end] = environment_block();
  for (const auto& name : names) {
    const char* v = std::getenv(name.c_str());
    if (v && *v) s.values_[name] = v;
    if (begin) wipe_in(begin, end, name);
    // Strings set later (setenv) live outside the block.
    for (char** e = environ; e && *e; ++e) {
      std::size_t len = std::strlen(*e);
      if (len > name.size() && std::strncmp(*e, name.c_str(), name.size()) == 0 &&
          (*e)[name.size()] == '=')
        wipe(*e + name.size() + 1, len - name.size() - 1);
    }
    ::unsetenv(name.c_str());
  }
  return s;
}

std::optional<std::string> SecretEnv::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

EnvLookup SecretEnv::lookup() const {
  auto values = values_;
  return [values](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it != values.end()) return it->second;
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

}  // namespace loopr::exec
