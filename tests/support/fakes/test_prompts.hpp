// Prompt templates for engine and manager tests: fixed texts that carry what the engine promises
// (the task, the artifact path in backticks, `## Previous Iteration Feedback`).
#pragma once

#include <map>
#include <string>

#include <loopr/engine/prompt_source.hpp>

namespace loopr::testing {

/// `{{name}}` substitution over fixed templates that carry the parts the engine promises:
/// the task, the artifact path in backticks, and `## Previous Iteration Feedback`.
class TestPrompts : public engine::PromptSource {
 public:
  std::map<std::string, std::string> templates = {
      {"code",
       "# Code loop {{loop-id}}\nTask: {{task}}\nValidation: {{validation-command}}\n\n"
       "## Previous Iteration Feedback\n{{progress}}\n## Git status\n{{git-status}}\n"},
      {"plan",
       "# Plan loop {{loop-id}}\nRequest: {{task}}\nWrite the plan to `{{artifact-path}}`.\n\n"
       "## Previous Iteration Feedback\n{{progress}}\n"},
      {"spec",
       "# Spec loop {{loop-id}}\nWrite `{{artifact-path}}` from:\n{{input}}\n\n## Previous "
       "Iteration Feedback\n{{progress}}\n"},
      {"phase",
       "# Phase loop {{loop-id}}\nWrite `{{artifact-path}}` from:\n{{input}}\n\n## Previous "
       "Iteration Feedback\n{{progress}}\n"},
      {"judge",
       "# Judge\nArtifact `{{artifact-path}}`:\n{{artifact}}\nAnswer PASS or FAIL: reason.\n"},
      {"review",
       "# Review {{loop-id}}\nPhase:\n{{input}}\nDiff:\n{{git-diff}}\nTests:\n"
       "{{validation-output}}\n## Previous Iteration Feedback\n{{progress}}\nPASS or FAIL: reason.\n"},
  };
  Result<std::string> render(const std::string& name,
                             const std::map<std::string, std::string>& vars) const override {
    auto it = templates.find(name);
    if (it == templates.end()) return make_error(ErrorCode::not_found, "no template " + name);
    std::string out = it->second;
    for (const auto& [k, v] : vars) {
      std::string key = "{{" + k + "}}";
      for (std::size_t pos = out.find(key); pos != std::string::npos;
           pos = out.find(key, pos + v.size()))
        out.replace(pos, key.size(), v);
    }
    return out;
  }
};

}  // namespace loopr::testing
