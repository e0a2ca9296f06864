#include "support/fakes/fake_executor.hpp"

#include <algorithm>

namespace loopr::testing {

void FakeExecutor::on(std::string text, Handler handler) {
  std::lock_guard lock(mutex_);
  rules_.insert(rules_.begin(), {std::move(text), std::move(handler)});
}

void FakeExecutor::answer(std::string text, int exit_code, std::string output) {
  on(std::move(text), [exit_code, output](const exec::Command&) { return result(exit_code, output); });
}

void FakeExecutor::run_for_real(std::string text) { on(std::move(text), run_unconfined); }

ProcessResult FakeExecutor::run_unconfined(const exec::Command& c) {
  ProcessSpec spec = shell(text_of(c), c.workdir.string());
  for (const auto& [k, v] : c.env) spec.env_set[k] = v;
  spec.timeout = c.timeout;
  spec.output_cap = c.output_cap;
  spec.cancel = c.cancel;
  if (c.stdin_data) spec.stdin_data = *c.stdin_data;
  return run_process(spec);
}

std::vector<std::string> FakeExecutor::commands() const {
  std::lock_guard lock(mutex_);
  return ran_;
}

int FakeExecutor::count(const std::string& text) const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(ran_.begin(), ran_.end(), [&](const std::string& c) {
    return c.find(text) != std::string::npos;
  }));
}

void FakeExecutor::set_unavailable(std::optional<std::string> why) {
  std::lock_guard lock(mutex_);
  unavailable_ = std::move(why);
}

std::optional<std::string> FakeExecutor::unavailable() {
  std::lock_guard lock(mutex_);
  return unavailable_;
}

ProcessResult FakeExecutor::run(const exec::Command& command) {
  const std::string text = text_of(command);
  Handler handler;
  {
    std::lock_guard lock(mutex_);
    ran_.push_back(text);
    for (const auto& [match, h] : rules_)
      if (text.find(match) != std::string::npos) {
        handler = h;
        break;
      }
  }
  if (command.cancel && command.cancel->load()) {
    ProcessResult r = result(-1, "cancelled");
    r.cancelled = true;
    return r;
  }
  ProcessResult r = handler ? handler(command)
                            : result(127, "fake executor: no rule for `" + text + "`");
  if (command.on_line) {
    std::size_t start = 0;
    while (start < r.output.size()) {
      std::size_t end = r.output.find('\n', start);
      if (end == std::string::npos) end = r.output.size();
      command.on_line(std::string_view(r.output).substr(start, end - start));
      start = end + 1;
    }
  }
  return r;
}

ProcessResult FakeExecutor::result(int exit_code, std::string output) {
  ProcessResult r;
  r.exit_code = exit_code;
  r.total_bytes = output.size();
  r.output = std::move(output);
  return r;
}

std::string FakeExecutor::text_of(const exec::Command& command) {
  if (command.argv.size() == 3 && command.argv[1] == "-c") return command.argv[2];
  std::string out;
  for (const auto& a : command.argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace loopr::testing
