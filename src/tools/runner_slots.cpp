#include <re2/re2.h>

#include <loopr/tools/runner_slots.hpp>

namespace loopr::tools {

RunnerSlots::RunnerSlots(const ConcurrencyConfig& config) {
  for (const auto& [name, limit] : config.runners) classes_[name].limit = std::max(1, limit);
  classes_.try_emplace("default");
  for (const auto& [name, patterns] : config.runner_patterns) {
    for (const auto& p : patterns) {
      auto re = std::make_unique<re2::RE2>(p, re2::RE2::Quiet);
      if (re->ok()) patterns_.emplace_back(name, std::move(re));
    }
  }
}

RunnerSlots::~RunnerSlots() = default;

std::string RunnerSlots::classify(const std::string& command) const {
  for (const auto& [name, re] : patterns_)
    if (classes_.count(name) && re2::RE2::PartialMatch(command, *re)) return name;
  return "default";
}

RunnerSlots::Lease RunnerSlots::acquire(const std::string& runner_class) {
  std::string cls = classes_.count(runner_class) ? runner_class : "default";
  std::unique_lock lock(mutex_);
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
