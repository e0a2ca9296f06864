// `executor:` in the config: `local` (the default) or a mapping with `kind: slurm` and the
// cluster's settings. Checked here at load, with file and line, like every other key.
#include "core/config_walker.hpp"

namespace loopr::config_detail {
namespace {

std::uint64_t read_size(const Walker& w, const YAML::Node& n, const std::string& key) {
  std::string text = w.scalar(n, key, "a size such as 512M or 4G");
  auto parsed = parse_size(text);
  if (!parsed) w.fail(n, key, "bad size \"" + text + "\" (write e.g. 512M or 4G)");
  if (*parsed < (1ULL << 20)) w.fail(n, key, "must be at least 1M, got " + text);
  return *parsed;
}

// A Slurm name (partition, account, QoS): what sbatch accepts, and nothing a shell or srun
// could read as another option.
std::string read_name(const Walker& w, const YAML::Node& n, const std::string& key) {
  std::string s = w.str(n, key);
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
      w.fail(n, key, "\"" + s + "\" is not a Slurm name (letters, digits, _ - . only)");
  return s;
}

void read_slurm(const Walker& w, const YAML::Node& v, const std::string& k, SlurmConfig& s) {
  auto duration = [&w](Duration& field, Duration min) -> Walker::Handler {
    return [&w, &field, min](const YAML::Node& n, const std::string& key) {
      field = w.duration(n, key);
      if (field < min) w.fail(n, key, "must be at least " + format_duration(min));
    };
  };
  w.map(
      v, k,
      {
          {"partition", [&](const YAML::Node& n,
                            const std::string& key) { s.partition = read_name(w, n, key); }},
          {"account",
           [&](const YAML::Node& n, const std::string& key) { s.account = read_name(w, n, key); }},
          {"qos",
           [&](const YAML::Node& n, const std::string& key) { s.qos = read_name(w, n, key); }},
          {"cpus",
           [&](const YAML::Node& n, const std::string& key) {
             s.cpus = static_cast<int>(w.integer(n, key, 1, 4096));
           }},
          {"memory",
           [&](const YAML::Node& n, const std::string& key) { s.memory = read_size(w, n, key); }},
          {"srun_args",
           [&](const YAML::Node& n, const std::string& key) { s.srun_args = w.strings(n, key); }},
          {"time_limit", duration(s.time_limit, std::chrono::minutes(1))},
          {"queue_timeout", duration(s.queue_timeout, std::chrono::seconds(1))},
          {"max_attempts",
           [&](const YAML::Node& n, const std::string& key) {
             s.max_attempts = static_cast<int>(w.integer(n, key, 1, 100));
           }},
          {"retry_backoff", duration(s.retry_backoff, Duration::zero())},
          {"cancel_timeout", duration(s.cancel_timeout, std::chrono::seconds(1))},
          {"bin_dir",
           [&](const YAML::Node& n, const std::string& key) {
             s.bin_dir = w.str(n, key);
             if (!s.bin_dir.empty() && s.bin_dir[0] != '/')
               w.fail(n, key, "must be an absolute path");
           }},
          {"classes",
           [&](const YAML::Node& n, const std::string& key) {
             if (n.IsNull()) return;
             if (!n.IsMap())
               w.fail(n, key, "expected a mapping of runner class to {partition, cpus, memory}");
             for (const auto& kv : n) {
               std::string cls = kv.first.as<std::string>();
               SlurmClassConfig c;
               w.map(
                   kv.second, key + "." + cls,
                   {
                       {"partition",
                        [&](const YAML::Node& n2, const std::string& k2) {
                          c.partition = read_name(w, n2, k2);
                        }},
                       {"cpus",
                        [&](const YAML::Node& n2, const std::string& k2) {
                          c.cpus = static_cast<int>(w.integer(n2, k2, 1, 4096));
                        }},
                       {"memory", [&](const YAML::Node& n2,
                                      const std::string& k2) { c.memory = read_size(w, n2, k2); }},
                   });
               s.classes[cls] = c;
             }
           }},
      });
}

ExecutorKind executor_kind(const Walker& w, const YAML::Node& n, const std::string& key) {
  return w.choice(n, key, {"local", "slurm"}) == "slurm" ? ExecutorKind::slurm
                                                         : ExecutorKind::local;
}

}  // namespace

void read_executor(const Walker& w, const YAML::Node& v, const std::string& k, ExecutorConfig& e) {
  if (v.IsScalar()) {
    e.kind = executor_kind(w, v, k);
    return;
  }
  bool has_slurm = false;
  w.map(v, k,
        {
            {"kind", [&](const YAML::Node& n,
                         const std::string& key) { e.kind = executor_kind(w, n, key); }},
            {"worktree_root",
             [&](const YAML::Node& n, const std::string& key) {
               e.worktree_root = w.str(n, key);
               if (!e.worktree_root.empty() && e.worktree_root[0] != '/')
                 w.fail(n, key,
                        "\"" + e.worktree_root +
                            "\" must be an absolute path (a folder the cluster's nodes see at the "
                            "same path)");
             }},
            {"slurm",
             [&](const YAML::Node& n, const std::string& key) {
               has_slurm = true;
               read_slurm(w, n, key, e.slurm);
             }},
        });
  if (has_slurm && e.kind != ExecutorKind::slurm)
    w.fail(v["slurm"], k + ".slurm",
           std::string("is set but executor.kind is \"") + to_string(e.kind) +
               "\" (write `kind: slurm` to use it)");
}

bool same_executor(const ExecutorConfig& a, const ExecutorConfig& b) {
  auto same_classes = [](const auto& x, const auto& y) {
    if (x.size() != y.size()) return false;
    for (const auto& [name, c] : x) {
      auto it = y.find(name);
      if (it == y.end() || it->second.partition != c.partition || it->second.cpus != c.cpus ||
          it->second.memory != c.memory)
        return false;
    }
    return true;
  };
  const SlurmConfig &s = a.slurm, &t = b.slurm;
  return a.kind == b.kind && a.worktree_root == b.worktree_root && s.partition == t.partition &&
         s.account == t.account && s.qos == t.qos && s.cpus == t.cpus && s.memory == t.memory &&
         same_classes(s.classes, t.classes) && s.srun_args == t.srun_args &&
         s.time_limit == t.time_limit && s.queue_timeout == t.queue_timeout &&
         s.max_attempts == t.max_attempts && s.retry_backoff == t.retry_backoff &&
         s.cancel_timeout == t.cancel_timeout && s.bin_dir == t.bin_dir;
}

}  // namespace loopr::config_detail
