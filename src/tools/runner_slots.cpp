#include <re2/re2.h>

#include <loopr/tools/runner_slots.hpp>

namespace loopr::tools {

RunnerSlots::RunnerSlots(const ConcurrencyConfig& config) { reconfigure(config); }

void RunnerSlots::reconfigure(const ConcurrencyConfig& config) {
  std::vector<std::pair<std::string, std::unique_ptr<re2::RE2>>> patterns;
  for (const auto& [name, list] : config.runner_patterns) {
    for (const auto& p : list) {
      auto re = std::make_unique<re2::RE2>(p, re2::RE2::Quiet);
      if (re->ok()) patterns.emplace_back(name, std::move(re));
    }
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, limit] : config.runners) classes_[name].limit = std::max(1, limit);
    classes_.try_emplace("default");
    patterns_ = std::move(patterns);
  }
  freed_.notify_all();
}

RunnerSlots::~RunnerSlots() = default;

std::string RunnerSlots::classify(const std::string& command) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, re] : patterns_)
    if (classes_.count(name) && re2::RE2::PartialMatch(command, *re)) return name;
  return "default";
}

RunnerSlots::Lease RunnerSlots::acquire(const std::string& runner_class) {
  std::unique_lock lock(mutex_);
  std::string cls = classes_.count(runner_class) ? runner_class : "default";
  Class& c = classes_[cls];
  freed_.wait(lock, [&] { return c.used < c.limit; });
  ++c.used;
  c.peak = std::max(c.peak, c.used);
  return Lease(this, cls);
}

void RunnerSlots::release(const std::string& runner_class) {
  {
    std::lock_guard lock(mutex_);
    --classes_[runner_class].used;
  }
  freed_.notify_all();
}

int RunnerSlots::in_use(const std::string& runner_class) const {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(runner_class);
  return it == classes_.end() ? 0 : it->second.used;
}

int RunnerSlots::peak(const std::string& runner_class) const {
  std::lock_guard lock(mutex_);
  auto it = classes_.find(runner_class);
  return it == classes_.end() ? 0 : it->second.peak;
}

RunnerSlots::Lease::~Lease() {
  if (slots_) slots_->release(cls_);
}

}  // namespace loopr::tools
